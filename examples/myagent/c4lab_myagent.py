"""``myagent``: a complete c4lab agent in a package of its own.

It wins when it can, never plays a move after which the opponent wins at
once (unless every move does), and otherwise plays nearest the centre.
"""

from __future__ import annotations

import random

from c4lab import Move, Position
from c4lab.agents import Agent, Analysis, Budget, Param, register


@register("myagent", "wins when it can, hands over no immediate win, else plays near the centre",
          [Param("seed", int, None, "random seed for ties (default: fresh each game)")])
class MyAgent(Agent):
    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        me, centre = position.to_move, (position.variant.width - 1) / 2

        def rank(move: Move) -> tuple[float, ...]:
            after = position.play(move)
            if after.result == me:
                return (0,)  # it wins: nothing is better
            loses = any(after.play(reply).result == after.to_move for reply in after.legal_moves())
            return (1 + loses, abs(move.column - centre), self.rng.random())

        best = min(position.legal_moves(), key=rank)
        return best, Analysis(note="a win, else no immediate loss, else the centre")
