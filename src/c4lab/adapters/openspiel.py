"""OpenSpiel's C++ MCTS as a c4lab agent: the yardstick of the benchmarks.

OpenSpiel (``pip install open-spiel``, imported as ``pyspiel``) is a test
dependency, not a runtime one: this module imports it only when an agent is
built, and :func:`available` says whether it can be.  Its ``connect_four``
knows plain boards only (no forbidden cell, no bonus).  The bot is
``pyspiel.MCTSBot`` with random rollouts and UCT selection (``uct_c = 2``, as
in OpenSpiel's examples), on a wall-clock time a move.
"""

from __future__ import annotations

import importlib.util
from typing import Any

from c4lab.agents.base import Agent, Analysis, Budget
from c4lab.rules.move import Move
from c4lab.rules.position import Position


def available() -> bool:
    """Whether OpenSpiel is installed."""
    return importlib.util.find_spec("pyspiel") is not None


class OpenSpielMCTS(Agent):
    """OpenSpiel's MCTSBot behind the c4lab Agent protocol (plain boards)."""

    def __init__(self, seconds: float, seed: int = 1) -> None:
        import pyspiel  # lazy: an optional yardstick, slow to import

        self._pyspiel = pyspiel
        self.seconds = seconds
        self.seed = seed
        self.spec = f"openspiel-mcts:time={seconds:g}"
        self._bots: dict[tuple[int, int], tuple[Any, Any]] = {}

    def _bot(self, width: int, height: int) -> tuple[Any, Any]:
        if (width, height) not in self._bots:
            ps = self._pyspiel
            game = ps.load_game(f"connect_four(rows={height},columns={width})")
            bot = ps.MCTSBot(
                game, ps.RandomRolloutEvaluator(1, self.seed), 2.0, 10**9, 1000, False, self.seed, False,
                ps.ChildSelectionPolicy.UCT, self.seconds,
            )
            self._bots[width, height] = (game, bot)
        return self._bots[width, height]

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        variant = position.variant
        if variant.forbidden or variant.bonus is not None:
            raise ValueError(f"OpenSpiel's connect_four has no forbidden or bonus cells: {variant.notation}")
        game, bot = self._bot(variant.width, variant.height)
        state = game.new_initial_state()
        for move in position.moves:
            state.apply_action(move.column)
        return Move(int(bot.step(state))), Analysis()
