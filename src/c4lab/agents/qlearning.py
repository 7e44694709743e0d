"""``qlearning``: plays the best move of a Q-table learnt by self-play.

The table comes from ``c4lab train qlearning --out FILE`` and is named by the
spec: ``qlearning:table=FILE``.  The agent is greedy: the legal move with the
highest learnt value, ties broken at random (``seed=``).  A position that
training never met has no values; the agent then wins at once if it can,
else blocks the opponent's immediate win, else plays a random legal move,
and says so in its analysis note, with how many of the positions it was asked
so far were unknown.  A table covers the board it was trained on and nothing
else (see ``c4lab.learning.qlearning`` for which boards a table can cover).
"""

from __future__ import annotations

import random

from c4lab.agents.base import Agent, Analysis, Budget, MoveStats, Param, SpecError, register, seed_value
from c4lab.agents.qtable import QTable
from c4lab.rules import Move, Position, Variant
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error


class QLearningAgent(Agent):
    """Greedy play from a ``QTable``; counts the positions it had to guess."""

    def __init__(self, table: QTable, seed: int | None = None) -> None:
        self.table = table
        self._rng = random.Random(seed_value(seed, type(self).__name__))
        self.asked = 0  # positions asked about since the agent was made
        self.unknown = 0  # ... of which the table did not know

    @property
    def source(self) -> str:
        """The table's name in the agent's messages: its file (a server's
        room: the name the server offers it by, never its path there)."""
        return self.table.path

    @source.setter
    def source(self, name: str) -> None:
        self.table.path = name

    def check_board(self, variant: Variant) -> None:
        """``TableError`` unless ``variant`` is the table's board."""
        self.table.check_board(variant)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """The move, and the learnt value of every legal move (or a note that
        the position is unknown and how the move was picked instead)."""
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        values = self.table.values(position)
        self.asked += 1
        if values is None:
            self.unknown += 1
            move, how = self._fallback(position)
            note = (
                f"position not in the Q-table ({how}); {self.unknown} of {self.asked} "
                "positions asked so far were not in it"
            )
            return move, Analysis(note=note)
        best = max(values.values())
        move = self._rng.choice([m for m, v in values.items() if v >= best - 1e-6])
        r_win, _, r_loss = self.table.rewards
        scale = r_win - r_loss

        def norm(v: float) -> float:
            return min(1.0, max(0.0, (v - r_loss) / scale))

        stats = tuple(MoveStats(m, value=norm(v)) for m, v in values.items())
        return move, Analysis(moves=stats, value=norm(best), pv=(move,), note="Q-table")

    def _fallback(self, position: Position) -> tuple[Move, str]:
        """A move for a position the table does not know: win, block, or random."""
        geo, st = position.kernel_arrays()
        me = 0 if position.to_move == "A" else 1
        for side, how in ((me, "won at once"), (1 - me, "blocked an immediate win")):
            columns = int(K.winning_columns(geo, st, side))
            if columns:
                options = [c for c in range(position.variant.width) if columns >> c & 1]
                return Move(self._rng.choice(options)), how
        return self._rng.choice(position.legal_moves()), "random legal move"


@register(
    "qlearning",
    "greedy play from a tabular Q-learning table (train one with `c4lab train qlearning`); "
    "unknown positions: win, block or a random move",
    [
        Param("table", str, None, "the table file written by `c4lab train qlearning --out FILE` (required)"),
        Param("seed", int, None, "random seed for ties and unknown positions (default: fresh each run)"),
    ],
)
def make_qlearning_agent(table: str | None = None, seed: int | None = None) -> QLearningAgent:
    """The ``qlearning`` spec: load ``table`` (``TableError`` if it is missing,
    damaged or not a Q-table)."""
    if table is None:
        raise SpecError(
            "agent 'qlearning' needs a table: train one with `c4lab train qlearning --board 4x4 --out q.npz`, "
            "then use qlearning:table=q.npz"
        )
    return QLearningAgent(QTable.load(table), seed)


__all__ = ["QLearningAgent", "make_qlearning_agent"]
