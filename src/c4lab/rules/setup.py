"""Where a game starts: the board a person or a program asked for.

One vocabulary for every front end -- the terminal game, the server's
rooms, the arena, the environment -- so that ``classic``, ``random``, a
position string and ``bonus`` mean the same everywhere.
"""

from __future__ import annotations

import random

from c4lab.rules.errors import SecondBonusCellError
from c4lab.rules.position import Position
from c4lab.rules.variant import Variant

#: The board names that are not position strings.
CLASSIC = "classic"
RANDOM = "random"


def starting_position(board: str, bonus: bool, rng: random.Random) -> Position:
    """The position a game starts from: ``random`` draws the enhanced setup;
    ``classic`` is the 7x6 board; anything else is a position string
    (``7x6``, ``9x8/Xd3:dd``); ``bonus`` adds a random bonus cell to a board
    that has none and no moves yet (drawn from ``rng``).

    Raises ``ValueError``: a ``PositionError`` for a bad string, a
    ``SecondBonusCellError`` for ``bonus`` with a board that names its own
    bonus cell (one of the two would be dropped: every front end refuses
    it here, each in its own words)."""
    if board == RANDOM:
        return Position(Variant.enhanced(rng, bonus=bonus))
    if board == CLASSIC:
        board = Variant.classic().notation
    position = Position.parse(board)
    variant = position.variant
    if bonus and variant.bonus is not None:
        raise SecondBonusCellError(board, variant.bonus.name)
    if bonus:
        if position.ply:
            raise ValueError(f"a bonus cell can only be added to an empty board, not to {position.notation}, "
                             f"which has moves (a position string names its own: 8x7/Bd1:dd)")
        free = [c for c in variant.cells() if c not in variant.forbidden]
        variant = Variant(variant.width, variant.height, variant.forbidden, rng.choice(free))
        position = Position(variant)
    return position


def one_board(board: str) -> Position:
    """The start ``board`` names for a learner, which learns one board:
    ``classic`` or a position string, as everywhere; ``random``, a new
    board for each game, refused with ``ValueError`` saying so."""
    if board == RANDOM:
        raise ValueError(f"{RANDOM!r} draws a new board for each game, and a learner learns one board: name it "
                         "(classic, 7x6, 9x8/Xd3)")
    return starting_position(board, False, random.Random(0))


def check_start(board: str, bonus: bool, *, finished: bool = False, rng: random.Random | None = None) -> Position:
    """What :func:`starting_position` makes of ``board`` (with ``rng``'s
    draw; any draw without one), refused with ``ValueError`` where it is
    bad or (unless ``finished``: the analysis board steps back through a
    finished game) its game is over: the check of a game's options before
    it starts, in the terminal, the commands and the server's rooms, one
    sentence for them all."""
    start = starting_position(board, bonus, rng if rng is not None else random.Random(0))
    if start.is_over and not finished:
        raise ValueError(f"the game is over in {start.notation}: start from a position with a move to play")
    return start
