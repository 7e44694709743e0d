"""The results file: JSON lines, one experiment per file.

The first line is a header (``{"c4lab_arena": 1, "config": {...}}``, and
``"engines": {SPEC: ID_NAME}``, what each engine program said it is, and
``"stand_ins": [NOTE, ...]``, each agent that plays another's moves), every
other line one game (``Game.to_dict``).  Games are appended a pair at a time
and flushed to disk, so an interrupted run loses at most the pairs in
flight; started again with the same file, it plays only what is missing.
A last line cut short by the interruption (no newline at its end) is
dropped and its pair played again; any other bad line (not UTF-8, not JSON,
not a record, a value of the wrong type, a forfeit its result contradicts,
a game outside the experiment's schedule or not from its pair's start) is
an error that names the file and line, and nothing is written.
An empty file (0 bytes: a run killed before it wrote the header) is
started anew; bytes with no whole line are refused as any bad line is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from c4lab.arena.games import Game
from c4lab.arena.schedule import ArenaConfig, ArenaError
from c4lab.arena.sprt import SPRT, UntestableHypothesis
from c4lab.atomic import replacing

try:
    import fcntl
except ImportError:  # pragma: no cover  (not POSIX: runs are not kept apart)
    fcntl = None  # type: ignore[assignment]

FORMAT = 1
HEADER_KEY = "c4lab_arena"


class ResultsError(ValueError):
    """A results file that cannot be read, or that holds another experiment."""


#: What reading a record that is not one may raise: JSON's own errors, a
#: number too large for an integer, arrays nested too deep, wrong types.
BAD_RECORD = (ValueError, KeyError, TypeError, AttributeError, OverflowError, RecursionError)


@dataclass(frozen=True)
class Results:
    """What a results file holds: the experiment and its games so far."""

    config: ArenaConfig
    games: tuple[Game, ...]
    cut_line: bool = False  # a last line was cut short (and ignored)
    sprt: str | None = None  # the sequential test the run stopped by, if any (``SPRT.text``)
    engines: dict[str, str] = field(default_factory=dict)  # each engine spec's ``id name`` when the file was made
    #: Each agent that plays another's moves on some of the run's boards, as the arena said it before the games
    #: (``ArenaConfig.checked_agents``): every report repeats it.
    stand_ins: tuple[str, ...] = ()

    def done_pairs(self) -> set[tuple[int, int]]:
        """``(pairing, pair)`` of every pair whose two games are saved."""
        seen: dict[tuple[int, int], set[int]] = {}
        for game in self.games:
            seen.setdefault((game.pairing, game.pair), set()).add(game.game)
        return {key for key, games in seen.items() if games == {0, 1}}

    def whole_pairs(self) -> tuple[Game, ...]:
        """The games of the pairs played to the end (a lone game of a pair
        cut short is played again, with its partner)."""
        done = self.done_pairs()
        return tuple(g for g in self.games if (g.pairing, g.pair) in done)


def read_results(path: str | Path) -> Results:
    """Read and check a results file."""
    path = Path(path)
    if path.exists() and not path.is_file() and not path.is_dir():  # a pipe: reading it waited for ever for a writer
        raise ResultsError(f"{path} is a pipe or a device, not an arena results file (one is read from a file on disk)")
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ResultsError(f"cannot read {path}: {err.strerror or err}") from None
    chunks = raw.split(b"\n")  # lines of bytes: a cut last line may end inside a character
    cut = False
    if chunks and chunks[-1] == b"":
        chunks.pop()
    elif chunks:
        cut = True  # no newline at the end: the last write was interrupted
        chunks.pop()
    if not raw:  # what a run killed between creating the file and writing its header leaves
        raise ResultsError(f"{path} is empty (0 bytes): no arena results yet (a run stopped before it wrote its "
                           "first line; an arena run that writes to it starts it anew)")
    if not chunks:  # bytes with no newline: "empty" said of a file of text was false
        raise ResultsError(f"{path} holds no whole line ({len(raw):,} bytes, no newline): not an arena results "
                           "file, or one whose header was cut short")
    lines = []
    for number, chunk in enumerate(chunks, 1):
        try:
            lines.append(chunk.decode("utf-8"))
        except UnicodeDecodeError as err:
            raise ResultsError(f"{path}:{number}: not UTF-8 text (byte {err.start} of the line)") from None
    try:
        header = json.loads(lines[0])
        config = ArenaConfig.from_dict(header["config"])
        if header.get(HEADER_KEY) != FORMAT:
            raise ValueError(f"format {header.get(HEADER_KEY)!r}, expected {FORMAT}")
    except (*BAD_RECORD, ArenaError) as err:
        raise ResultsError(f"{path}:1: not an arena results header ({type(err).__name__}: {err})") from None
    sprt = header.get("sprt")
    if sprt is not None:  # the test the run stopped by: the report reads it again
        try:
            if not isinstance(sprt, str):
                raise TypeError(f"not a string: {_shown(sprt)}")
            if len(config.specs) != 2:
                raise ValueError(f"a sequential test in a run of {len(config.specs)} agents")
            SPRT.parse(sprt)
        except UntestableHypothesis:  # written by a c4lab that took it: the games load, the report says why not it
            pass
        except (TypeError, ValueError) as err:
            raise ResultsError(f"{path}:1: the header's \"sprt\" is not a test ({err})") from None
    engines = header.get("engines", {})  # none in a file of an earlier c4lab
    if not (isinstance(engines, dict) and all(isinstance(k, str) and k in config.specs and isinstance(v, str)
                                              for k, v in engines.items())):
        raise ResultsError(f"{path}:1: the header's \"engines\" is not a name for each engine spec of the run "
                           f"({_shown(engines)})")
    stand_ins = header.get("stand_ins", [])  # none in a file of an earlier c4lab
    if not (isinstance(stand_ins, list) and all(isinstance(note, str) for note in stand_ins)):
        raise ResultsError(f"{path}:1: the header's \"stand_ins\" is not a list of notes ({_shown(stand_ins)})")
    pairings = config.pairings()
    starts: dict[int, str] = {}  # each pair's start in the header's schedule
    games: list[Game] = []
    keys: set[tuple[int, int, int]] = set()
    for number, line in enumerate(lines[1:], 2):
        if not line.strip():  # a blank line (an edit by hand): no record, and nothing wrong
            continue
        try:
            game = Game.from_dict(json.loads(line))
        except BAD_RECORD as err:
            raise ResultsError(f"{path}:{number}: not a game record ({type(err).__name__}: {err}); remove the line, "
                               "and the same arena run on this file plays its pair again") from None
        if game.pairing >= len(pairings) or game.pair >= config.pairs_per_pairing or game.game > 1:
            raise ResultsError(
                f"{path}:{number}: game {(game.pairing, game.pair, game.game)} is not in this experiment's schedule"
            )
        first, second = pairings[game.pairing]
        if (game.a, game.b) != ((first, second) if game.game == 0 else (second, first)):
            raise ResultsError(
                f"{path}:{number}: game {(game.pairing, game.pair, game.game)} is not played by "
                f"{game.a!r} and {game.b!r} in this experiment"
            )
        if game.pair not in starts:
            try:
                starts[game.pair] = config.start(game.pair).notation
            except ArenaError as err:  # opening moves that end every game on the header's board
                raise ResultsError(f"{path}:1: not an arena results header ({err})") from None
        if game.start != starts[game.pair]:  # a game of another run (files joined), or a header edited
            raise ResultsError(
                f"{path}:{number}: game {(game.pairing, game.pair, game.game)} starts from {game.start}, where pair "
                f"{game.pair + 1} of this experiment starts from {starts[game.pair]}: the file holds games of "
                "another run, or its header was edited"
            )
        key = (game.pairing, game.pair, game.game)
        if key in keys:
            raise ResultsError(f"{path}:{number}: game {key} is recorded twice")
        keys.add(key)
        games.append(game)
    return Results(config, tuple(games), cut, sprt, engines, tuple(stand_ins))


def _hold(file: IO[str], path: Path) -> None:
    """Hold the results file ``file`` (open on ``path``) for this run alone,
    as long as it is open (an exclusive ``flock``): a second run of the same
    command, started by mistake, would append the same pairs again and
    leave a file that no longer reads ("recorded twice").  A ResultsError
    if another run holds it; a file system without locks is used unlocked."""
    if fcntl is None:  # pragma: no cover
        return
    try:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        file.close()
        raise ResultsError(
            f"{path} is being written by another arena run: wait for it to end, or write to another file"
        ) from None
    except OSError:  # pragma: no cover  (no locks on this file system)
        pass


class ResultsWriter:
    """Appends games to a results file, creating it (with its header) or
    continuing it after ``read_results`` has checked it."""

    def __init__(
        self, path: str | Path, config: ArenaConfig, *, resume: Results | None = None, sprt: str | None = None,
        held: IO[str] | None = None, engines: dict[str, str] | None = None, stand_ins: Sequence[str] = (),
    ) -> None:
        """``held``: the file opened for appending and held (``open_results``
        holds it before reading it): with ``resume``, the file continued;
        without, an empty file (0 bytes) started anew in place.  ``engines``:
        what each engine program of the run said it is, kept in the header, as
        are ``stand_ins``, the notes of agents that play another's moves."""
        self.path = Path(path)
        self._file: IO[str]
        # the header: the experiment, the sequential test that may stop it early (for the report to say so), and
        # the engine programs' names (a run resumed after one changed is refused: ``open_results``)
        engines = {**(resume.engines if resume else {}), **(engines or {})}
        stand_ins = list(resume.stand_ins if resume and resume.stand_ins else stand_ins)
        header = {HEADER_KEY: FORMAT, "config": config.to_dict(), **({"sprt": sprt} if sprt else {}),
                  **({"engines": engines} if engines else {}), **({"stand_ins": stand_ins} if stand_ins else {})}
        if resume is None:
            if held is not None:  # an empty file, held: the header goes at its start
                self._file = held
            else:
                # no folder made: a mistyped path made folders from the API (the command line refused it)
                if not self.path.parent.is_dir():
                    raise ResultsError(f"cannot write {self.path}: the folder {str(self.path.parent)!r} does not exist")
                self._file = self.path.open("x", encoding="utf-8")
                _hold(self._file, self.path)
            self._write([header])
        else:
            whole = resume.whole_pairs()
            if (resume.cut_line or len(whole) != len(resume.games) or resume.sprt != sprt
                    or resume.config.games != config.games or resume.engines != engines
                    or list(resume.stand_ins) != stand_ins):
                # Drop a cut last line and the lone game of an unfinished
                # pair (that pair is played again), and keep in the header
                # the test of this run, the one that may stop it (or none),
                # and its number of games (a run extended by more): rewrite
                # the file with what stays, then swap it in, so a crash
                # here loses nothing.
                with replacing(self.path, "w", encoding="utf-8") as file:
                    self._file = file
                    self._write([header, *(g.to_dict() for g in whole)])
                self._file = self.path.open("a", encoding="utf-8")
                _hold(self._file, self.path)  # the new file: the one held so far is replaced
                if held is not None:
                    held.close()
            elif held is not None:
                self._file = held
            else:
                self._file = self.path.open("a", encoding="utf-8")
                _hold(self._file, self.path)

    def _write(self, records: Iterable[dict[str, Any]]) -> None:
        self._file.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
        self._file.flush()
        os.fsync(self._file.fileno())

    def add(self, games: Iterable[dict[str, Any]]) -> None:
        """Append the games of one pair, together.  A write that fails (a
        full disk) or a file no longer at its path (it, or its folder, was
        removed during the run: the games would go to a file nobody can
        read) is a ResultsError: the run stops rather than play games it
        cannot keep; a pair half written is a cut last line, played again
        when the run is resumed."""
        try:
            self._write(games)
            here = os.fstat(self._file.fileno())
            there = os.stat(self.path)
        except FileNotFoundError:
            raise ResultsError(
                f"{self.path} was removed during the run (or its folder was): the games played cannot be saved "
                "in it, so the run stops (the same command starts it again)"
            ) from None
        except OSError as err:
            raise ResultsError(
                f"cannot write the games to {self.path}: {err.strerror or err}; the run stops (the games saved "
                "so far are kept: the same command resumes it)"
            ) from None
        if (here.st_dev, here.st_ino) != (there.st_dev, there.st_ino):
            raise ResultsError(
                f"{self.path} was replaced by another file during the run: the games played cannot be saved in "
                "it, so the run stops (the same command resumes what the file now holds)"
            )

    def close(self) -> None:
        with suppress(OSError):  # every game was flushed when added: a failed write is said by ``add``
            self._file.close()


def _shown(value: Any) -> str:
    """A setting as the refusal quotes it: short, on one line."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def differing(config: ArenaConfig, other: ArenaConfig) -> list[str]:
    """The settings, as the header names them, in which ``config`` and
    ``other`` differ (``["games"]``: the same experiment, longer or
    shorter)."""
    ours, theirs = config.to_dict(), other.to_dict()
    return [k for k in ours if ours[k] != theirs.get(k)]


def open_results(
    path: str | Path, config: ArenaConfig, sprt: str | None = None, on_note: Callable[[str], None] | None = None,
    *, engines: dict[str, str] | None = None, stand_ins: Sequence[str] = (),
) -> tuple[ResultsWriter, Results | None]:
    """Start ``path`` for ``config`` (``sprt``: the test that may stop it,
    kept in the header), or continue it if it holds the same experiment, or
    the same with fewer games (extended to ``config.games``; an error if it
    holds another one).  A run continued under another test, or
    none, has the header say so: the report must not tell of a test that
    did not stop the run.  An empty file (0 bytes: a run killed between
    creating it and writing its header) holds nothing to lose: it is
    started anew, and ``on_note`` told so; it was refused until removed by
    hand.  The file is held by this run until the writer is closed: a
    second run on it is a ResultsError at once.  ``engines``: what each
    engine program of the run says it is (its ``id name``, by spec); a
    file whose games were played by a program that said otherwise is
    refused: one run does not mix two versions of a program.  ``stand_ins``:
    the notes of agents that play another's moves, kept in a new header."""
    path = Path(path)
    if not path.exists():
        return ResultsWriter(path, config, sprt=sprt, engines=engines, stand_ins=stand_ins), None
    try:
        held = path.open("a", encoding="utf-8")
    except OSError as err:
        raise ResultsError(f"cannot write {path}: {err.strerror or err}") from None
    try:
        _hold(held, path)  # before reading it: what it holds stays so until this run ends
        if os.fstat(held.fileno()).st_size == 0:
            if on_note is not None:
                on_note(f"{path} was empty (0 bytes): starting it anew")
            return ResultsWriter(path, config, sprt=sprt, held=held, engines=engines, stand_ins=stand_ins), None
        previous = read_results(path)
        differ = differing(config, previous.config)
        # More games of the same experiment extend it: pair k starts from the same position whatever the
        # number of games, so the pairs played stay pairs of the longer run (and fewer would drop some).
        longer = differ == ["games"] and config.games >= previous.config.games
        if differ and not longer:
            ours, theirs = config.to_dict(), previous.config.to_dict()  # (what is shown of each setting)
            shown = ", ".join(f"{k}: {_shown(theirs.get(k))} in the file, {_shown(ours[k])} asked" for k in differ)
            more = " (more games extend it)" if differ == ["games"] else ""
            raise ResultsError(
                f"{path} holds another experiment (different {shown}): "
                f"write to another file, or give the same settings to resume it{more}"
            )
        for spec, said in (engines or {}).items():
            if previous.engines.get(spec, said) != said:
                raise ResultsError(
                    f"{path}: its games are by the engine of {spec!r} when it said it was "
                    f"{previous.engines[spec]!r}, and it now says {said!r}: one run does not mix the games of two "
                    "versions of a program (write to another file, or resume it with the program of those games)"
                )
        return ResultsWriter(path, config, resume=previous, sprt=sprt, held=held, engines=engines), previous
    except BaseException:
        held.close()
        raise
