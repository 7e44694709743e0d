"""``random``: a uniformly random legal move (the baseline of every experiment)."""

from __future__ import annotations

import numpy as np

from c4lab.agents.base import Agent, Analysis, Budget, Param, register, seed_value
from c4lab.rules import Move, Position
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error


@register(
    "random",
    "uniformly random: a column among the non-full ones, then, at a bonus "
    "landing, declining or each ban column with equal chance",
    [Param("seed", int, None, "random seed (default: fresh each run)")],
)
class RandomAgent(Agent):
    """Plays like one step of a random playout (the same kernel draws it)."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = K.seed_state(seed_value(seed, type(self).__name__))

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        geo, state = position.kernel_arrays()
        code, rng = K.random_code(geo, state, self._rng)
        self._rng = np.uint64(rng)
        return Move.from_code(code), Analysis()
