"""The arena's games: a task's two games, played and judged, and the record of each.

Every game is played by the one game loop (``c4lab.game.play_game``) under
the ``"judge"`` policy: an agent loses the game (a *forfeit*) when it raises
an error, answers something that is not a legal move, or takes longer than
the enforced limit plus its margin.  ``Game`` is the record the arena keeps:
one JSON line of the results file.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any

from c4lab.agents import Agent, agent_infos, make_agent, parse_spec
from c4lab.agents.spec_names import canonical_spec
from c4lab.arena.schedule import PairTask
from c4lab.game import Forfeit, GameRecord, MoveTimes, NotReadyError, play_game, unready_forfeit
from c4lab.rules import Position

RESULTS = ("A", "B", "draw")
FORFEIT_REASONS = ("crash", "illegal", "time")


def _count(data: dict[str, Any], key: str) -> int:
    """``data[key]``, a whole number >= 0 (JSON's 1.5, true or 1e999 are not)."""
    value = data[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{key} must be a whole number >= 0, not {value!r}")
    return value


def _forfeit(data: Any, result: str, position: Position, start: Position) -> Forfeit | None:
    """A record's ``forfeit`` (``None`` for none), checked against the game:
    the side that forfeits is A or B and loses (``result`` is the other
    side), for a reason the arena gives, in a game that had not ended, and
    once a move is played it is the side to move (its answer lost).  A
    record that said A forfeited a game it won was counted as A's win while
    the report listed it among A's lost games."""
    if data is None:
        return None
    if not isinstance(data, dict):
        raise TypeError(f"forfeit must be null or an object, not {data!r}")
    side, reason = data["side"], data["reason"]
    if side not in ("A", "B"):
        raise ValueError(f"forfeit side must be A or B, not {side!r}")
    if reason not in FORFEIT_REASONS:
        raise ValueError(f"forfeit reason must be one of {', '.join(FORFEIT_REASONS)}, not {reason!r}")
    winner = "B" if side == "A" else "A"
    if result != winner:
        raise ValueError(f"side {side} forfeits, so the result is {winner!r}, not {result!r}")
    if position.is_over:
        raise ValueError(f"a forfeit in a finished game ({position.notation})")
    if position.moves != start.moves and side != position.to_move:  # after a move: the next answer lost
        raise ValueError(f"side {side} forfeits where {position.to_move} is to move ({position.notation})")
    return Forfeit(side, reason, str(data["detail"]))


def _times(data: Any) -> MoveTimes:
    """A record's ``times``: for A and B, the seconds of each move (finite,
    >= 0: they make the report's mean time a move)."""
    if not isinstance(data, dict):
        raise TypeError(f"times must be an object of A and B, not {data!r}")
    times: dict[str, list[float]] = {}
    for side, seconds in data.items():
        if side not in ("A", "B") or not isinstance(seconds, list):
            raise ValueError(f"times must map A and B to lists of seconds, not {side!r}: {seconds!r}")
        for t in seconds:
            if isinstance(t, bool) or not isinstance(t, int | float) or not 0 <= t < math.inf:
                raise ValueError(f"a move of {side} took {t!r} seconds: not a time")
        times[side] = [float(t) for t in seconds]
    return MoveTimes(times)


#: The forfeits whose losing answer ``play_game`` times: it came, too late or illegal.
TIMED_FORFEITS = ("time", "illegal")


def _check_times(times: MoveTimes, start: Position, position: Position, forfeit: Forfeit | None) -> None:
    """The move times of a record read back against its moves, as
    ``play_game`` and ``play_pair`` write them: one for each move a side
    played from the start, and one more for the side whose answer lost on
    time or as an illegal move (``Game.unplayed``).  A crash times no
    answer, nor does a forfeit before the first move (an agent that would
    not start, or was not ready in time: no clock had run).  An edited
    count skewed the report's mean s/move."""
    if set(times) != {"A", "B"}:
        raise ValueError(f"times must give A and B, not {', '.join(times) or 'nothing'}")
    plies = len(position.moves) - len(start.moves)
    first = start.to_move or "A"  # the moves alternate (a bonus's ban piece is part of its move)
    played = {first: (plies + 1) // 2, ("B" if first == "A" else "A"): plies // 2}
    for side in ("A", "B"):
        count, moves = len(times[side]), played[side]
        how = ""
        if forfeit is not None and forfeit.side == side and forfeit.reason in TIMED_FORFEITS:
            if count == 0 and plies == 0 and forfeit.reason == "time":  # not ready in time: before any clock ran
                continue
            how = f" and lost {'on time' if forfeit.reason == 'time' else 'as an illegal move'} with one more answer"
        expected = moves + 1 if how else moves
        if count != expected:
            raise ValueError(f"times has {count} for {side}, which played {moves} move{'' if moves == 1 else 's'}"
                             + (f"{how}: {expected}" if how else ""))


@dataclass(frozen=True)
class Game:
    """A finished game as the arena records it: one JSON line of the
    results file.  ``position`` is the whole game as one position string
    (variant and moves); ``result`` is "A", "B" or "draw" (a forfeit gives
    the game to the other side, and ``forfeit`` says who and why)."""

    position: str
    result: str
    a: str
    b: str
    start: str
    pairing: int
    pair: int
    game: int  # 0: the pairing's first spec plays A; 1: sides swapped
    times: MoveTimes = field(default_factory=MoveTimes)  # seconds per move, by side (a dict of lists is kept as this)
    forfeit: Forfeit | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.times, MoveTimes):
            object.__setattr__(self, "times", MoveTimes(self.times))

    def to_dict(self) -> dict[str, Any]:
        """The game as the JSON object of its line in the results file."""
        return {
            "position": self.position,
            "result": self.result,
            "A": self.a,
            "B": self.b,
            "forfeit": self.forfeit.to_dict() if self.forfeit else None,
            "start": self.start,
            "pairing": self.pairing,
            "pair": self.pair,
            "game": self.game,
            "plies": len(Position.parse(self.position).moves) - len(Position.parse(self.start).moves),
            "times": {side: list(ts) for side, ts in self.times.items()},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Game:
        """The inverse of ``to_dict``; raises ``KeyError``/``TypeError``/
        ``ValueError`` on a record that is not a game."""
        result = data["result"]
        if result not in RESULTS:
            raise ValueError(f"result must be one of {', '.join(RESULTS)}, not {result!r}")
        if not isinstance(data["position"], str) or not isinstance(data["start"], str):
            raise TypeError("position and start must be position strings")
        position = Position.parse(data["position"])  # PositionError is a ValueError
        start = Position.parse(data["start"])
        if position.variant != start.variant or position.moves[: len(start.moves)] != start.moves:
            raise ValueError(f"the position {data['position']!r} is not a game from its start {data['start']!r}")
        plies = len(position.moves) - len(start.moves)
        if "plies" in data and (type(data["plies"]) is not int or data["plies"] != plies):
            # written for a reader's convenience (jq, pandas): it must say what the moves say
            raise ValueError(f"plies is {data['plies']!r}, but {plies} moves lead from the start to the position")
        forfeit = _forfeit(data.get("forfeit"), result, position, start)
        if forfeit is None and position.result != result:
            raise ValueError(f"result {result!r} does not match the position {data['position']!r}")
        times = _times(data.get("times", {}))
        if "times" in data:  # a record without them (written by hand) has none to count
            _check_times(times, start, position, forfeit)
        return cls(
            position=position.notation,
            result=result,
            a=canonical_spec(str(data["A"])),  # a file may spell an agent otherwise (schedule: _name_agents)
            b=canonical_spec(str(data["B"])),
            start=start.notation,
            pairing=_count(data, "pairing"),
            pair=_count(data, "pair"),
            game=_count(data, "game"),
            times=times,
            forfeit=forfeit,
        )

    @classmethod
    def of(cls, record: GameRecord, pairing: int = 0, pair: int = 0, game: int = 0) -> Game:
        """The arena's record of a game the loop played, placed in the
        schedule (``pairing``, ``pair``, ``game``)."""
        return cls(
            position=record.final.notation,
            result=record.result,
            a=record.a,
            b=record.b,
            start=record.start.notation,
            pairing=pairing,
            pair=pair,
            game=game,
            times=record.times,
            forfeit=record.forfeit,
        )

    @property
    def width(self) -> int:
        """The board's number of columns."""
        return Position.parse(self.start).variant.width

    @property
    def height(self) -> int:
        """The board's number of rows."""
        return Position.parse(self.start).variant.height

    @property
    def unplayed(self) -> str | None:
        """The side (``"A"``/``"B"``) whose last timed answer was never played,
        or ``None``: a forfeit on time or for an illegal answer keeps that
        answer's seconds in ``times`` (for a hung engine, the wait until the
        limit plus margin), one more time than the moves played.  A crash,
        or a forfeit before the first move, times no answer."""
        if self.forfeit is None or not self.times.get(self.forfeit.side):
            return None
        plies = len(Position.parse(self.position).moves) - len(Position.parse(self.start).moves)
        return self.forfeit.side if sum(len(t) for t in self.times.values()) == plies + 1 else None

    def played_times(self, side: str) -> list[float]:
        """The seconds of each move ``side`` played (``times`` without the
        answer that lost the game, ``unplayed``)."""
        seconds = list(self.times.get(side, ()))
        return seconds[:-1] if self.unplayed == side else seconds

    def score_of(self, spec: str) -> float:
        """1, 0.5 or 0 for ``spec`` (which played A or B in this game), in
        any spelling of it (``canonical_spec``), as ``MatchResult.score``
        reads it: ``uct:iterations=0200`` played a game of
        ``uct:iterations=200``."""
        named = canonical_spec(spec)
        side = "A" if named == canonical_spec(self.a) else "B" if named == canonical_spec(self.b) else None
        if side is None:
            raise ValueError(f"{spec!r} did not play this game")
        return 0.5 if self.result == "draw" else 1.0 if self.result == side else 0.0


def seeded(spec: str, seed: int, start: str, a: str, b: str, side: str, repeat: int = 0) -> str:
    """The spec to build for ``side`` of the game ``a`` against ``b`` from
    ``start`` in an experiment of ``seed``: ``spec`` itself, with ``seed=N``
    added when its agent takes a seed and the spec gives none.  N follows
    from those alone, so a game depends only on its specs, start and seed --
    not on the process or machine (local or Ray) that plays it: unseeded
    agents (``heuristic``'s tie-breaks) would draw from a fresh generator.
    ``repeat`` counts the pairs of the pairing that started from ``start``
    before this one: each repeat of a start gets seeds of its own, so a
    seeded agent does not replay the same game there (the first time keeps
    the seeds it always had).  The results keep the spec without it."""
    name, values = parse_spec(spec)
    info = next((i for i in agent_infos() if i.name == name), None)
    takes_seed = info is not None and any(p.name == "seed" for p in info.params) and "seed" not in info.defaults
    if not takes_seed or "seed" in values:
        return spec
    again = f"/{repeat}" if repeat else ""
    derived = random.Random(f"c4lab-arena/{seed}/{start}/{a}/{b}/{side}{again}").randrange(2**31)
    return f"{spec}{',' if values else ':'}seed={derived}"


def play_pair(task: PairTask) -> tuple[PairTask, list[dict[str, Any]]]:
    """The two games of ``task`` (as JSON-ready dicts), judged: ``first``
    plays A, then the sides are swapped.  Every game gets freshly built
    agents, so a game depends only on the two specs, the start and the
    seed, not on which worker played what before: every agent that takes a
    seed gets one (``seeded``), so agents on a fixed budget replay it
    exactly.  Building an agent costs well under a millisecond: the
    compiled kernels are loaded once per process, and each agent gets ready
    (compiles, loads) before its first move is timed.  An agent that cannot
    be built this time (an engine program that fails its handshake) loses
    that game.  The executors run this in their workers."""
    start = Position.parse(task.start)
    games = []
    for game, (a, b) in enumerate(((task.first, task.second), (task.second, task.first))):
        agents: list[Agent] = []
        try:
            for side, spec in (("A", a), ("B", b)):
                try:
                    agents.append(make_agent(seeded(spec, task.seed, task.start, a, b, side, task.repeat)))
                except Exception as err:  # noqa: BLE001  (an engine that would not start this time)
                    forfeit = (  # not ready in its time (``readyok``): on time, as before a game's first move
                        unready_forfeit(side, f"player {side} ({spec})", err) if isinstance(err, NotReadyError)
                        else Forfeit(side, "crash", f"player {side} ({spec}) could not start: {err}"))
                    record = GameRecord(a, b, start, start, MoveTimes({"A": [], "B": []}), forfeit)
                    break
            else:
                record = play_game(
                    agents[0], agents[1], start, a_spec=a, b_spec=b,
                    policy="judge", limit=task.limit, margin=task.margin,
                )
        finally:
            for agent in agents:
                agent.close()
        games.append(Game.of(record, task.pairing, task.pair, game).to_dict())
    return task, games
