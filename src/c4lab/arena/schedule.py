"""What an arena run plays: the pairings, the boards and the openings.

Everything here is a pure function of the ``ArenaConfig``: the same config
(and seed) always gives the same list of ``PairTask``s, the same boards and
the same opening moves, which is what makes a run reproducible and
resumable.  Games come in pairs: one start position, played twice with the
sides swapped, so that neither agent profits from a lucky board or from
moving first.  Pair ``k`` of every pairing starts from the same position, so
all agents meet the same boards.
"""

from __future__ import annotations

import functools
import json
import numbers
import random
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...': the arena is local, programs may play)
from c4lab.agents import SpecError, make_agent
from c4lab.agents.base import parse_spec, refuse_a_person
from c4lab.agents.spec_names import canonical_spec, same_agent
from c4lab.arena.frozen_json import freeze, thaw
from c4lab.arena.match import random_moves
from c4lab.rules import Position, PositionError, SecondBonusCellError, Variant
from c4lab.rules.setup import CLASSIC, RANDOM, starting_position
from c4lab.rules.variant import integer


class ArenaError(ValueError):
    """A bad arena setting: an unknown agent spec, an odd number of games,
    a broken openings file."""


class AgentRefused(ArenaError):
    """An agent spec of the run that names no agent, takes no such option,
    cannot start, or cannot play the run's boards: ``c4lab arena`` names
    its SPEC argument as ``c4lab move`` names ``--agent``."""


class SettingError(ArenaError):
    """A bad value of an ``ArenaConfig`` field.  The message names each
    setting it speaks of as a field (``ArenaConfig.games must be a positive
    even number ...``), for a caller of the Python API; ``field`` is the
    setting at fault, and ``worded`` gives the message with the settings
    named otherwise: ``c4lab arena`` names its options (``--games``).
    ``template`` holds ``{games}``-style places for the names (a value in
    it has its braces doubled)."""

    def __init__(self, field: str, template: str) -> None:
        self.field = field
        self.template = template
        super().__init__(self.worded({}))

    def worded(self, names: Mapping[str, str]) -> str:
        """The message with each setting called by ``names`` (a field not
        in it: ``ArenaConfig.FIELD``)."""
        return self.template.format_map(_Names(names))

    def __reduce__(self) -> tuple[Any, ...]:
        return (SettingError, (self.field, self.template))


class ArenaTypeError(ArenaError, TypeError):
    """An ``ArenaConfig`` field of the wrong type (``specs=(None, "random")``,
    ``seed="1"``): a ``TypeError``, as a wrong type is everywhere in the
    API (``make_agent(None)``, ``Position.parse(None)``), and still an
    ``ArenaError``, which is what a caller of the arena catches.  ``field``
    is the setting at fault (None where no field is: ``extra``'s values),
    and the message names it as ``SettingError``'s do (``ArenaConfig.seed
    must be an integer, not '1'``)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (ArenaTypeError, (str(self), self.field))


class _Names(dict[str, str]):
    """What a ``SettingError`` calls a setting it was not given a name for."""

    def __missing__(self, key: str) -> str:
        return f"ArenaConfig.{key}"


def _literal(value: object) -> str:
    """``str(value)`` to put into a ``SettingError``'s template as it is."""
    return str(value).replace("{", "{{").replace("}", "}}")


#: The most games one run schedules: its starts are drawn before the first
#: game (200,000 games took 25 s), so a slip of the finger (``--games
#: 100000000000``) sat there without a word.
MAX_GAMES = 1_000_000


@functools.cache
def agent_labels(specs: tuple[str, ...]) -> Mapping[str, str]:
    """The specs of a run that go by a name in its tables, plots and
    progress line, each with that name: the ``name=`` it gives (an
    engine's display name: ``engine:cmd=./my-engine,name=mine`` is
    ``mine``); the others are shown as they are.  A name that two specs
    give, or that another spec is, names neither (their specs are shown):
    a table where two rows read alike says nothing.  (The tables showed the
    whole spec, ``name=`` and all: an engine's command line made a column
    of 45 characters.)"""
    wanted: dict[str, str] = {}
    for spec in specs:
        try:
            name = parse_spec(spec)[1].get("name", "")
        except ValueError:  # not a spec (the run refused it already): shown as it is
            continue
        if name:
            wanted[spec] = name
    taken = [*wanted.values(), *specs]
    # read-only: the cache hands the same mapping to every caller
    return MappingProxyType({spec: name for spec, name in wanted.items() if taken.count(name) == 1})


@dataclass(frozen=True)
class ArenaConfig:
    """One experiment.  ``games`` counts the games of each pairing (an even
    number: two per start position).  ``board`` and ``bonus`` mean what they
    mean everywhere (``rules.setup.starting_position``): ``"classic"``,
    ``"random"`` (the enhanced setup: a new size and forbidden cell for each
    pair) or a position string (``"9x8"``, ``"9x8/Xd3"``), kept in its
    canonical notation (``"7x6"`` is ``"classic"``); ``bonus`` adds a
    random bonus cell, a new one for each pair, to a board that has none
    (with one that names its own, ``"9x8/Xd3/Bb2"``: a ``SettingError``).
    ``plies`` random opening moves are played from each
    start (2, as ``c4lab arena --opening-moves``: with 0 on one board every
    pair starts from the same position, and deterministic agents play the
    same two games again and again); ``openings`` (position strings) replace the board and those
    moves, used in turn.  ``limit`` is the enforced time per move: a move
    that takes more than ``limit + margin`` seconds loses the game.
    ``extra`` (free-form JSON, saved with the results) is kept as a
    read-only copy (``arena.frozen_json.freeze``: its objects are
    mappings, its arrays tuples): it is out of the hash, and a config
    whose ``extra`` changed in place would no longer be the experiment its
    results file holds; ``to_dict()["extra"]`` is plain JSON again."""

    specs: tuple[str, ...]
    games: int = 2
    gauntlet: bool = False
    board: str = CLASSIC
    bonus: bool = False
    plies: int = 2
    openings: tuple[str, ...] = ()
    seed: int = 0
    limit: float = 30.0
    margin: float = 1.0
    extra: Mapping[str, Any] = field(default_factory=dict, hash=False)  # free-form JSON, saved with the results

    def __post_init__(self) -> None:
        self._check_types()
        if len(self.specs) < 2:
            raise ArenaError("an arena needs at least two agent specs")
        if len(set(self.specs)) != len(self.specs):
            raise ArenaError(f"an agent spec is given twice: {', '.join(self.specs)}")
        if self.games < 2 or self.games % 2:
            raise SettingError("games", f"{{games}} must be a positive even number (games come in pairs), not {self.games}")
        if self.total_games > MAX_GAMES:
            raise SettingError(
                "games",
                f"{{games}} {self.games} makes {self.total_games:,} games in {len(self.pairings())} pairing(s): a run "
                f"schedules at most {MAX_GAMES:,} (each pair's start is drawn before the first game); "
                "split it into runs with other seeds")
        if self.plies < 0:
            raise SettingError("plies", f"{{plies}} (the random opening moves) must be 0 or more, not {self.plies}")
        if not self.limit > 0:
            raise SettingError("limit", f"{{limit}} (the seconds a move may take) must be positive, not {self.limit:g}")
        if not self.margin >= 0:
            raise SettingError("margin", f"{{margin}} (the seconds allowed past {{limit}}) must be 0 or more, "
                                         f"not {self.margin:g}")
        if self.board != RANDOM:
            try:
                start = starting_position(self.board, self.bonus, random.Random(0))
            except SecondBonusCellError as err:  # a board that parsed has no braces to double
                raise SettingError("bonus", err.worded("{board}", "{bonus}")) from None
            except ValueError as err:
                raise SettingError("board", f"{{board}} {_literal(repr(self.board))}: {_literal(err)}") from None
            if start.is_over:
                raise SettingError("board", f"{{board}} {_literal(repr(self.board))} is a finished game")
            # in its canonical notation, as the specs and the openings are: `--board 7x6` resumes a run of
            # `--board classic` (the same games) and `9x8/Xe2/Xd3` one of `9x8/Xd3/Xe2`; they were refused as
            # another experiment
            notation = Position.parse(Variant.classic().notation if self.board == CLASSIC else self.board).notation
            object.__setattr__(self, "board", CLASSIC if notation == Variant.classic().notation else notation)
        self._check_openings()

    def _check_openings(self) -> None:
        """Each opening a position where a game goes on, kept in its
        canonical notation (as ``read_openings`` reads a file), or a
        ``SettingError`` naming it: a results file's header whose openings
        were edited (``"zzz"``, a finished game) was read without a word,
        and its report told of starts no game was played from."""
        if self.openings:  # they are the starts: a board or random moves given with them would be ignored
            given = [name for name, default in (("board", CLASSIC), ("bonus", False), ("plies", 2))
                     if getattr(self, name) != default]
            if given:
                raise SettingError(given[0], f"{{openings}} give the start positions; {{{given[0]}}} cannot be "
                                             "given with them")
        named = []
        for number, opening in enumerate(self.openings, 1):
            try:
                position = Position.parse(opening)
            except PositionError as err:
                raise SettingError("openings", f"{{openings}}: opening {number}, {_literal(repr(opening))}, is "
                                               f"not a position ({_literal(err)})") from None
            if position.is_over:
                raise SettingError("openings", f"{{openings}}: opening {number}, {_literal(repr(opening))}, is "
                                               "a finished game")
            named.append(position.notation)
        object.__setattr__(self, "openings", tuple(named))

    def _check_types(self) -> None:
        """Each field of the type it must have, or an ``ArenaTypeError`` naming
        it: a config built in Python has no command line to check it, and a
        seed of the wrong type (``"1"``, ``1.5``, ``None``) would give a
        reproducible run of another seed, not an error.  ``specs`` and
        ``openings`` given as lists are kept as tuples (as the results
        file's header reads back), an integer from NumPy as an ``int``."""
        for name in ("specs", "openings"):
            value = getattr(self, name)
            what = "agent specs like ('uct', 'random')" if name == "specs" else "position strings"
            if isinstance(value, str) or not isinstance(value, tuple | list) or not all(
                    isinstance(item, str) for item in value):
                raise ArenaTypeError(f"ArenaConfig.{name} must be a tuple of {what}, not {value!r}", name)
            object.__setattr__(self, name, tuple(value))
        self._name_agents()
        for name in ("games", "plies", "seed"):
            try:
                object.__setattr__(self, name, integer(getattr(self, name), f"ArenaConfig.{name}"))
            except ValueError as exc:
                raise ArenaTypeError(str(exc), name) from None
        for name in ("limit", "margin"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                raise ArenaTypeError(f"ArenaConfig.{name} must be a number of seconds, not {value!r}", name)
        if not isinstance(self.board, str):
            raise ArenaTypeError(
                f"ArenaConfig.board must be 'classic', 'random' or a position string, not {self.board!r}", "board")
        for name in ("gauntlet", "bonus"):
            if not isinstance(getattr(self, name), bool):
                raise ArenaTypeError(f"ArenaConfig.{name} must be True or False, not {getattr(self, name)!r}", name)
        object.__setattr__(self, "extra", freeze(_json_copy(self.extra)))

    def _name_agents(self) -> None:
        """Each spec in its canonical form (``canonical_spec``): the same agent
        written two ways (``uct:iterations=0200``, ``master:time=0.50``) has
        one name in the run, its results file and its report, and a results
        file that wrote another form reads as the same experiment.  Two
        specs of one agent are an ``ArenaError`` naming both."""
        named: dict[str, str] = {}
        for spec in self.specs:
            canonical = canonical_spec(spec)
            if canonical in named and named[canonical] != spec:
                raise ArenaError(f"agent specs {named[canonical]!r} and {spec!r} are the same agent ({canonical}): "
                                 "give it once")
            named.setdefault(canonical, spec)
        object.__setattr__(self, "specs", tuple(canonical_spec(spec) for spec in self.specs))

    def boards(self) -> list[Variant]:
        """Every board the run's games are played on, in the order of their
        first pair (each start follows from the seed: ``start``)."""
        return list(dict.fromkeys(self.start(pair).variant for pair in range(self.pairs_per_pairing)))

    def check_agents(self, names: Mapping[str, str] | None = None) -> list[str]:
        """Build each agent once, so that a bad spec fails before any game,
        and one that cannot play on a board of the run (a network learnt for
        another board) fails too, whatever draws the boards.  Returns a note
        for each agent that plays another's moves on some of the run's
        boards (``Agent.plays_instead``), and for one whose own time a move
        is over the run's limit; the settings are called as ``names`` calls
        them (``c4lab arena``: ``--limit``), otherwise as fields (``limit=2``)."""
        return self.checked_agents(names)[0]

    def checked_agents(self, names: Mapping[str, str] | None = None) -> tuple[list[str], dict[str, str], list[str]]:
        """The notes of ``check_agents``, what each engine program of the
        run said it is (its handshake's ``id name``), by spec: the results
        file keeps it, so that a run resumed after the program changed does
        not mix the games of two versions; and the notes of the agents that
        play another's moves (also among the first), which the results
        file keeps and every report repeats: a ranking of ``ntuple`` that
        is one of ``heuristic`` is never read as ntuple's."""
        called = names or {}

        def setting(field: str, value: float) -> str:
            return f"{called[field]} {value:g}" if field in called else f"{field}={value:g}"

        boards = self.boards()
        # one agent under two names (the defaults written out): not refused, as a pairing of an agent with
        # itself is a check some runs want, but said (a results file's names are kept as given, so folding
        # them would make runs written before read as another experiment)
        notes = [f"{first} and {second} are one agent (one spec writes out the other's defaults): "
                 "the run counts its games under both names" for n, first in enumerate(self.specs)
                 for second in self.specs[n + 1:] if same_agent(first, second)]
        engines: dict[str, str] = {}
        stand_ins: list[str] = []
        for spec in self.specs:
            try:
                agent = make_agent(spec)
            except SpecError as err:
                raise AgentRefused(str(err)) from None
            except Exception as err:  # noqa: BLE001  (any agent that cannot start: a missing package, a bad file)
                raise AgentRefused(f"agent {spec!r} cannot start: {err}") from None
            instead: dict[str, list[str]] = {}
            try:
                for variant in boards:
                    try:
                        agent.check_board(variant)
                    except ValueError as err:
                        raise AgentRefused(f"agent {spec!r} cannot play on {variant}, a board of this run: {err}") from None
                    other = agent.plays_instead(variant)
                    if other is not None:
                        instead.setdefault(other, []).append(variant.notation)
                said = getattr(agent, "engine_name", None)  # an engine program's id name
                if isinstance(said, str):
                    engines[spec] = said
            finally:
                agent.close()
            try:
                refuse_a_person(agent, "the arena")
            except SpecError as err:
                raise AgentRefused(str(err)) from None
            seconds = getattr(agent, "time", None)  # the searches' own budget a move (uct, minimax, master, ...)
            if isinstance(seconds, (int, float)) and seconds > self.limit + self.margin:
                over = f"more than {setting('limit', self.limit)} s + {setting('margin', self.margin)} s"
                if getattr(agent, "time_is_asked", False):  # an engine program, which may take its time= or not
                    notes.append(f"{spec} asks its engine for {seconds:g} s a move, {over}: if the engine takes it, "
                                 "each of its games will be lost on time (give it a time= under the limit)")
                else:
                    notes.append(f"{spec} thinks {seconds:g} s a move, {over}: each of its games will be lost on "
                                 "time (give it a time= under the limit)")
            for other, on in instead.items():
                where = "any board of this run" if len(on) == len(boards) else (
                    f"{len(on)} of this run's {len(boards)} boards ({', '.join(on[:3])}"
                    f"{', ...' if len(on) > 3 else ''})")
                stand_ins.append(f"{spec} has nothing learnt for {where}: it plays {other}'s moves there")
        return notes + stand_ins, engines, stand_ins

    def schedule_notes(self, names: Mapping[str, str] | None = None) -> list[str]:
        """What a run of this schedule leaves out that its settings name: the
        openings beyond its pairs (pair ``k`` starts from opening ``k``, so
        with fewer pairs than openings the last ones are never played); and
        pairs that start alike, where agents that play alike from a start
        (deterministic ones, and those whose spec fixes their seed) repeat
        their games; the arena gives the agents it seeds new seeds at each
        repeat of a start (``games.seeded``).  The settings are called as
        ``names`` calls them (``c4lab arena``: its options, ``--games 2``),
        otherwise as fields (``games=2``, ``ArenaConfig.plies``)."""
        names = names or {}

        def said(field: str, value: object = None) -> str:
            if value is None:
                return names.get(field, f"ArenaConfig.{field}")
            return f"{names[field]} {value}" if field in names else f"{field}={value!r}"

        pairs = self.pairs_per_pairing
        if self.openings and pairs < len(self.openings):
            return [(f"{said('games', self.games)} makes {pairs} pair{'s' if pairs != 1 else ''} of games a pairing: "
                     f"only the first {pairs} of the {len(self.openings)} openings are played "
                     f"({said('games', 2 * len(self.openings))} plays each once)")]
        starts = len({self.start(k).notation for k in range(pairs)})
        if starts < pairs:
            how = ("openings used again" if self.openings
                   else f"{said('plies', 0)} on one board" if self.plies == 0 and self.board != RANDOM and not self.bonus
                   else "the same start drawn again")
            return [(f"the {pairs} pairs of each pairing start from only {starts} position{'s' if starts != 1 else ''} "
                     f"({how}): agents that play alike from a start (deterministic ones, and those whose spec "
                     f"gives a seed) repeat their games there, and the statistics count each repeat as a new game "
                     f"(the arena gives the agents it seeds new seeds at each repeat); "
                     + (f"more positions in the file of {said('openings')} give more starts" if self.openings
                        else f"more {said('plies')}, {said('board', RANDOM)} or {said('openings')} give more starts"))]
        return []

    # -- (de)serialisation, for the results file's header -------------------

    def to_dict(self) -> dict[str, Any]:
        """The config as plain JSON values (the results file's header);
        with ``openings``, without ``board``, ``bonus`` and ``plies``, which
        they replace (``c4lab arena --json`` said ``"board": "classic",
        "plies": 2`` of a run on openings of 9x8)."""
        data = {f.name: getattr(self, f.name) for f in fields(self)}
        data["specs"] = list(self.specs)
        data["openings"] = list(self.openings)
        data["extra"] = thaw(self.extra)
        if self.openings:
            for name in ("board", "bonus", "plies"):
                del data[name]
        return data

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (and copied) as its JSON: a read-only mapping cannot be."""
        return (ArenaConfig.from_dict, (self.to_dict(),))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ArenaConfig:
        """The config that ``to_dict`` wrote (a results file's header), checked
        as a new one is: its lists as they are (``tuple()`` of a string,
        ``"openings": "5x4:ab"``, made each character an opening).  With
        openings, a board, bonus or random moves beside them (a header
        written before 2026-12-05, from Python) are dropped, as the run
        ignored them."""
        if data.get("openings"):
            data = {key: value for key, value in data.items() if key not in ("board", "bonus", "plies")}
        return cls(**{"openings": (), **data})

    def label(self, spec: str) -> str:
        """``spec``'s name in the run's tables, plots and progress line
        (``agent_labels``)."""
        return agent_labels(self.specs).get(spec, spec)

    # -- the schedule ------------------------------------------------------

    def pairings(self) -> list[tuple[str, str]]:
        """Who meets whom: every two specs (round robin), or the first
        against each of the others (gauntlet)."""
        s = self.specs
        if self.gauntlet:
            return [(s[0], other) for other in s[1:]]
        return [(s[i], s[j]) for i in range(len(s)) for j in range(i + 1, len(s))]

    @property
    def pairs_per_pairing(self) -> int:
        """The pairs of games (one start, sides swapped) each pairing plays."""
        return self.games // 2

    def start(self, pair: int) -> Position:
        """The start position of pair ``pair`` (the same in every pairing)."""
        rng = random.Random(f"c4lab-arena/{self.seed}/{pair}")
        if self.openings:
            return Position.parse(self.openings[pair % len(self.openings)])
        for _attempt in range(1000):
            position = random_moves(rng, starting_position(self.board, self.bonus, rng), self.plies)
            if not position.is_over:
                return position
        raise SettingError("plies", f"{self.plies} random opening moves ({{plies}}) end every game on "
                                    f"{_literal(repr(self.board))}")

    def tasks(self) -> list[PairTask]:
        """Every pair of games of the run, pair by pair across the pairings
        (so that an early stop leaves every pairing with about as many)."""
        starts = [self.start(k).notation for k in range(self.pairs_per_pairing)]
        seen: Counter[str] = Counter()
        repeats = []
        for start in starts:
            repeats.append(seen[start])
            seen[start] += 1
        return [
            PairTask(index, first, second, k, starts[k], self.limit, self.margin, self.seed, repeats[k])
            for k in range(self.pairs_per_pairing)
            for index, (first, second) in enumerate(self.pairings())
        ]

    @property
    def total_games(self) -> int:
        """The games of the whole match: ``games`` for each pairing."""
        return self.games * len(self.pairings())


def _json_copy(extra: object) -> dict[str, Any]:
    """``extra`` as the results file's header reads it back (its own copy):
    an ``ArenaError`` now for what JSON cannot hold, which failed when the
    run wrote its header (``Object of type PosixPath is not JSON
    serializable``, naming no setting); and a tuple or a number key,
    which JSON turns into a list or a string, made one at once, so that a
    second run with the same config resumes the first (it was refused as
    "another experiment": different extra)."""
    if not isinstance(extra, Mapping):
        raise ArenaTypeError(f"ArenaConfig.extra must be a dict of JSON values, not {extra!r}", "extra")
    try:
        text = json.dumps(thaw(extra), allow_nan=False)
    except (TypeError, ValueError) as err:
        raise ArenaError(f"extra must hold JSON values only (it is saved with the results): {err}") from None
    copied: dict[str, Any] = json.loads(text)
    return copied


@dataclass(frozen=True)
class PairTask:
    """Two games from ``start``: ``first`` plays A in game 0, B in game 1.
    ``seed`` is the experiment's: agents that take a seed and are given
    none get one derived from it (``c4lab.arena.games.seeded``), and from
    ``repeat``, the number of this pairing's earlier pairs from ``start``."""

    pairing: int
    first: str
    second: str
    pair: int
    start: str
    limit: float
    margin: float
    seed: int = 0
    repeat: int = 0

    @property
    def key(self) -> tuple[int, int]:
        return (self.pairing, self.pair)


def read_openings(path: str | Path) -> tuple[str, ...]:
    """Position strings, one per line (blank lines and ``#`` comments
    skipped), each checked: a bad one is reported with its file and line."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():  # a pipe: reading it waited for ever for a writer
        raise ArenaError(f"the openings file {path} is a pipe or a device: give the name of a file on disk")
    try:
        data = path.read_bytes()
    except OSError as err:
        raise ArenaError(f"cannot read the openings file {path}: {err.strerror or err}") from None
    try:
        text = data.decode("utf-8-sig")  # a byte-order mark first (as Windows' Notepad saves) is not a position
    except UnicodeDecodeError as err:
        number = data.count(b"\n", 0, err.start) + 1
        raise ArenaError(f"{path}:{number}: not UTF-8 text (byte {data[err.start]:#04x}): "
                         "the openings file holds position strings, one a line") from None
    openings: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            position = Position.parse(line)
        except PositionError as err:
            raise ArenaError(f"{path}:{number}: {err}") from None
        if position.is_over:
            raise ArenaError(f"{path}:{number}: {line!r} is a finished game")
        openings.append(position.notation)
    if not openings:
        raise ArenaError(f"the openings file {path} holds no position")
    return tuple(openings)

