"""A position as the solver sees it: a few bitboards.

Bit ``c * (H + 1) + r`` is cell (column ``c``, row ``r``); the bit on top of
each column (row ``H``) is a guard that is never set.  A position is

* ``cur``: the pieces of the side to move,
* ``mask``: every filled cell (both players' pieces, bans, forbidden cells),
* ``neutral``: the filled cells that belong to nobody (forbidden cells and
  bans),

and ``empty``, the number of empty playable cells (``E`` of RULES.md).  The
board's constants (``bottom``: row 0 of every column; ``playable``: the cells
of the board that are not forbidden; each column's cells; the bonus cell
while it is empty) make the landing cells of all columns one addition:
``(mask + bottom) & playable & ~mask`` (the carry steps over filled and
forbidden cells).

Boards with ``W * (H + 1) <= 64`` (7x6 among them) fit one 64-bit word; larger
ones (up to 12x12: 156 bits) use three words (:mod:`c4lab.solver.negamax`
compiles one instance of its search per width).  This module turns a
:class:`~c4lab.rules.position.Position` into those numbers, as Python integers
first (any width) and then as the words the kernels take.
"""

from __future__ import annotations

from dataclasses import dataclass

from c4lab.rules import kernels as K
from c4lab.rules.position import Position
from c4lab.rules.sides import game_over_error
from c4lab.rules.variant import Variant

#: Words of a wide board (12 x 13 bits = 156 <= 192).
WIDE_WORDS = 3


def is_wide(variant: Variant) -> bool:
    """Whether ``variant``'s board needs more than one 64-bit word."""
    return variant.width * (variant.height + 1) > 64


def order_centre_first(width: int) -> list[int]:
    """Columns from the centre out (left of centre first on ties): the
    solver's default move order."""
    return sorted(range(width), key=lambda c: (abs(2 * c - (width - 1)), c))


@dataclass(frozen=True)
class Bitboards:
    """A position's bitboards as Python integers (any board size)."""

    width: int
    height: int
    cur: int
    mask: int
    neutral: int
    empty: int
    bottom: int
    playable: int
    bonus: int  # the empty bonus cell's bit, 0 if none (or already taken)
    columns: tuple[int, ...]
    variant: Variant  # the board (a table's entries are only valid for one)

    @property
    def stride(self) -> int:
        return self.height + 1

    @property
    def wide(self) -> bool:
        """Whether the board needs more than one 64-bit word."""
        return is_wide(self.variant)

    @classmethod
    def of(cls, position: Position) -> Bitboards:
        """The bitboards of an unfinished ``position``."""
        if position.is_over:
            raise game_over_error(position.notation, position.result, "nothing to solve")
        variant = position.variant
        width, height = variant.width, variant.height
        stride = height + 1
        board = K.board_grid(*position.kernel_arrays())
        to_move = K.PIECE_A if position.to_move == "A" else K.PIECE_B
        cur = mask = neutral = playable = bottom = 0
        columns = []
        for c in range(width):
            bottom |= 1 << (c * stride)
            columns.append(((1 << height) - 1) << (c * stride))
            for r in range(height):
                bit = 1 << (c * stride + r)
                code = int(board[c, r])
                if code != K.FORBIDDEN:
                    playable |= bit
                if code != K.EMPTY:
                    mask |= bit
                if code in (K.FORBIDDEN, K.BAN):
                    neutral |= bit
                if code == to_move:
                    cur |= bit
        bonus = 0
        if variant.bonus is not None and not (mask >> (variant.bonus.col * stride + variant.bonus.row)) & 1:
            bonus = 1 << (variant.bonus.col * stride + variant.bonus.row)
        return cls(width, height, cur, mask, neutral, position.empty_cells, bottom, playable, bonus, tuple(columns), variant)


def words(value: int, count: int = WIDE_WORDS) -> tuple[int, ...]:
    """``value`` split into ``count`` 64-bit words, lowest first."""
    return tuple((value >> (64 * i)) & 0xFFFF_FFFF_FFFF_FFFF for i in range(count))
