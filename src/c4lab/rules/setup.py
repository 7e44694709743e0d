"""Where a game starts: the board a person or a program asked for.

Shared by every interface (terminal game, server, arena) so that "7x6",
"random" and "a position string" mean the same everywhere.
"""

from __future__ import annotations

import random

from c4lab.rules.position import Position
from c4lab.rules.variant import Variant


def starting_position(board: str, bonus: bool, rng: random.Random) -> Position:
    """The position a game starts from: ``random`` draws the enhanced setup;
    anything else is a position string (``7x6``, ``9x8/Xd3:dd``); ``bonus``
    adds a random bonus cell to a board that has none and no moves yet.

    Raises ``ValueError`` (a ``PositionError`` for a bad string)."""
    if board == "random":
        return Position(Variant.enhanced(rng, bonus=bonus))
    position = Position.parse(board)
    variant = position.variant
    if bonus and variant.bonus is None:
        if position.ply:
            raise ValueError("a bonus cell can only be added to an empty board")
        free = [c for c in variant.cells() if c not in variant.forbidden]
        variant = Variant(variant.width, variant.height, variant.forbidden, rng.choice(free))
        position = Position(variant)
    return position
