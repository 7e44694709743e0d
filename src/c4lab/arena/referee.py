"""One refereed game: the agents move in turn, the referee checks and times
every move.

An agent loses the game (a *forfeit*) when it raises an error, returns a
move that is not legal, or takes longer than the enforced limit plus its
margin.  The limit is measured, not imposed: the referee cannot interrupt a
compiled search in the middle, so a slow move is played out and then
judged.  (Engines in other processes have their own hard timeout: see
``c4lab.engine``.)
"""

from __future__ import annotations

import time
import traceback
from dataclasses import dataclass, field
from typing import Any

from c4lab.agents import Agent
from c4lab.rules import IllegalMoveError, Move, Position

RESULTS = ("A", "B", "draw")


@dataclass(frozen=True)
class Forfeit:
    """Who lost the game without finishing it, and why."""

    side: str  # "A" or "B"
    reason: str  # "crash", "illegal", "time"
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"side": self.side, "reason": self.reason, "detail": self.detail}


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
    times: dict[str, list[float]] = field(default_factory=dict)  # seconds per move, by side
    forfeit: Forfeit | None = None

    def to_dict(self) -> dict[str, Any]:
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
        position = Position.parse(data["position"])  # PositionError is a ValueError
        forfeit = data.get("forfeit")
        if forfeit is None and position.result != result:
            raise ValueError(f"result {result!r} does not match the position {data['position']!r}")
        return cls(
            position=position.notation,
            result=result,
            a=str(data["A"]),
            b=str(data["B"]),
            start=str(data["start"]),
            pairing=int(data["pairing"]),
            pair=int(data["pair"]),
            game=int(data["game"]),
            times={str(k): [float(t) for t in v] for k, v in dict(data.get("times", {})).items()},
            forfeit=Forfeit(str(forfeit["side"]), str(forfeit["reason"]), str(forfeit["detail"])) if forfeit else None,
        )

    @property
    def width(self) -> int:
        return Position.parse(self.start).variant.width

    @property
    def height(self) -> int:
        return Position.parse(self.start).variant.height

    def score_of(self, spec: str) -> float:
        """1, 0.5 or 0 for ``spec`` (which played A or B in this game)."""
        side = "A" if spec == self.a else "B" if spec == self.b else None
        if side is None:
            raise ValueError(f"{spec!r} did not play this game")
        return 0.5 if self.result == "draw" else 1.0 if self.result == side else 0.0


def referee_game(
    a: Agent,
    b: Agent,
    start: Position,
    *,
    limit: float,
    margin: float,
    a_spec: str = "",
    b_spec: str = "",
    pairing: int = 0,
    pair: int = 0,
    game: int = 0,
) -> Game:
    """Play ``start`` to the end, ``a`` moving for A and ``b`` for B, and
    judge every move."""
    for agent in (a, b):
        agent.new_game()
    position = start
    times: dict[str, list[float]] = {"A": [], "B": []}
    forfeit: Forfeit | None = None
    while not position.is_over:
        side = position.to_move
        assert side is not None
        agent = a if side == "A" else b
        began = time.perf_counter()
        try:
            move = agent.choose(position)
        except Exception as err:  # noqa: BLE001  (any failure of the agent loses its game)
            last = traceback.extract_tb(err.__traceback__)[-1:]
            where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
            forfeit = Forfeit(side, "crash", f"{type(err).__name__}: {err}{where}")
            break
        elapsed = time.perf_counter() - began
        times[side].append(round(elapsed, 5))  # 10 µs: as saved, so a record reads back equal
        if elapsed > limit + margin:
            forfeit = Forfeit(side, "time", f"move {position.ply + 1} took {elapsed:.2f} s (limit {limit:g} s + {margin:g} s)")
            break
        try:
            if not isinstance(move, Move | str):
                raise IllegalMoveError(f"{move!r} is not a move")
            position = position.play(move)
        except (IllegalMoveError, ValueError) as err:
            forfeit = Forfeit(side, "illegal", f"move {position.ply + 1}: {move!s}: {err}")
            break
    if forfeit is not None:
        result = "B" if forfeit.side == "A" else "A"
    else:
        result = position.result or "draw"
    return Game(
        position=position.notation,
        result=result,
        a=a_spec or a.spec,
        b=b_spec or b.spec,
        start=start.notation,
        pairing=pairing,
        pair=pair,
        game=game,
        times=times,
        forfeit=forfeit,
    )
