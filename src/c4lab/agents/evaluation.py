"""Static evaluation of a position: open windows of four, and the centre.

A *window* is four cells in a line (horizontal, vertical, either diagonal).
A window that holds a forbidden cell can never be completed, so it is left
out of the tables altogether; one that holds a ban piece, or pieces of both
players, is dead.  Every other window is worth ``WEIGHTS[n]`` to the player
who owns its ``n`` pieces.  A piece also earns ``centre[cell]``, larger near
the middle column(s), because central cells lie in more windows.

The evaluation is kept *incrementally* by searches: each window has a small
code ``pieces of A * INC[A] + pieces of B * INC[B] + bans * INC[BAN]``, and
``SCORE[code]`` is the window's worth for A.  Dropping a piece or a ban
touches only the (at most 16) windows through its cell: ``_add`` returns the
change of A's score in O(16), ``_remove`` undoes it.  Scores are from A's
point of view inside the tables; ``evaluate`` turns them to the side to move.

Nothing here knows the rules: the cells come from the kernels' state (its
board codes), and no win or gravity test is made.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.rules import Position
from c4lab.rules import kernels as K
from c4lab.rules.variant import lines_of_four

#: Worth of an open window holding 0, 1, 2, 3 (or 4) pieces of one player.
WEIGHTS = (0, 1, 5, 50, 50)
#: Window-code increments per cell code (EMPTY, PIECE_A, PIECE_B, BAN).
INC = np.array([0, 1, 5, 25], dtype=np.uint8)
#: Centre weight of a piece in the middle column (one less per column away).
CENTRE = 4
#: At most this many windows pass through one cell (four directions, four offsets).
MAX_PER_CELL = 16


def _score_table() -> np.ndarray:
    """``SCORE[code]``: A's worth of a window with window code ``code``."""
    table = np.zeros(125, dtype=np.int32)
    for code in range(125):
        bans, rest = divmod(code, 25)
        b, a = divmod(rest, 5)
        if bans or (a and b):
            continue
        table[code] = WEIGHTS[a] - WEIGHTS[b]
    return table


SCORE = _score_table()


@dataclass(frozen=True)
class Windows:
    """The windows of one board (shape and forbidden cells).

    ``cells[w]`` are the four cell indices (``col * 16 + row``) of window
    ``w``; ``through[cell, :count[cell]]`` the windows through ``cell``;
    ``centre[cell]`` the centre weight of a piece on ``cell``.
    """

    cells: np.ndarray  # (n, 4) int16
    through: np.ndarray  # (NCELLS, MAX_PER_CELL) int16
    count: np.ndarray  # (NCELLS,) uint8
    centre: np.ndarray  # (NCELLS,) int32


def windows(geo: np.ndarray, st: np.ndarray) -> Windows:
    """The windows of the board of ``geo``; ``st`` is any state of that board
    (its forbidden cells are read from it)."""
    grid = K.board_grid(geo, st)
    forbidden = tuple(int(c * K.STRIDE + r) for c, r in zip(*np.nonzero(grid == K.FORBIDDEN), strict=True))
    width, height = grid.shape
    return _build(width, height, forbidden)


@lru_cache(maxsize=512)
def _build(width: int, height: int, forbidden: tuple[int, ...]) -> Windows:
    """The windows of a ``width`` x ``height`` board with ``forbidden`` cells
    (cell indices), cached per board."""
    blocked = [(cell // 16, cell % 16) for cell in forbidden]
    cells = [[c * 16 + r for c, r in line] for line in lines_of_four(width, height, blocked)]
    through = np.zeros((K.NCELLS, MAX_PER_CELL), dtype=np.int16)
    count = np.zeros(K.NCELLS, dtype=np.uint8)
    for w, window in enumerate(cells):
        for cell in window:
            through[cell, count[cell]] = w
            count[cell] += 1
    centre = np.zeros(K.NCELLS, dtype=np.int32)
    for c in range(width):
        centre[c * 16 : c * 16 + height] = max(0, 2 * CENTRE - abs(2 * c - (width - 1))) // 2
    return Windows(np.array(cells, dtype=np.int16).reshape(-1, 4), through, count, centre)


@njit(cache=True)
def load_codes(st, cells, centre, codes):
    """Fill ``codes`` (one per window) from the board of ``st``; return A's score."""
    score = np.int64(0)
    for w in range(cells.shape[0]):
        code = 0
        for k in range(4):
            piece = K.cell_code(st, K.U(cells[w, k]))
            if piece != K.FORBIDDEN:
                code += INC[piece]
        codes[w] = code
        score += SCORE[code]
    for cell in range(K.NCELLS):
        piece = K.cell_code(st, K.U(cell))
        if piece == K.PIECE_A:
            score += centre[cell]
        elif piece == K.PIECE_B:
            score -= centre[cell]
    return score


@njit(inline="always")
def _add(codes, through, count, cell, inc):
    """Put a piece with code increment ``inc`` on ``cell``: update the codes of
    the windows through it and return the change of A's window score."""
    delta = np.int64(0)
    for k in range(count[cell]):
        w = through[cell, k]
        old = codes[w]
        codes[w] = old + inc
        delta += SCORE[old + inc] - SCORE[old]
    return delta


@njit(inline="always")
def _remove(codes, through, count, cell, inc):
    """Undo ``_add(codes, through, count, cell, inc)``."""
    for k in range(count[cell]):
        w = through[cell, k]
        codes[w] -= inc


def evaluate(position: Position) -> int:
    """The static evaluation of ``position`` for its side to move (for A when
    the game is over): positive is good for that side."""
    geo, st = position.kernel_arrays()
    table = windows(geo, st)
    codes = np.zeros(len(table.cells), dtype=np.uint8)
    score = int(load_codes(st, table.cells, table.centre, codes))
    return -score if position.to_move == "B" else score
