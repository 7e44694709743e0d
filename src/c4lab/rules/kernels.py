"""The rules engine: numba-compiled kernels over two small flat arrays.

This module is the one place where the rules of ``RULES.md`` are written down
as code.  ``Position``, the agents, the server and the learners call these
kernels (compiled searches through the public surface that
``docs/architecture.md`` lists).  The exact solver alone keeps a board of its
own, bitboards for its search (``solver/bitboard.py``, ``solver/words.py``),
built from a ``Position``; its tests check its scores against exhaustive
searches over ``Position``.

Data model
----------
``geo`` (``uint8``, read-only, one per :class:`~c4lab.rules.variant.Variant`)
    The board's shape: width, height, bonus cell, number of playable cells and
    the *gravity table* ``next[c*16 + r]``: the lowest row ``>= r`` of column
    ``c`` that is not forbidden, or ``H`` if there is none.  With that table a
    forbidden cell is skipped in O(1) and costs nothing in the hot loop.

``state`` (``uint16``, one per position; the kernels mutate it in place,
``Position`` copies before it calls them)
    A header (tokens played, side to move, result, empty cells, last piece,
    number of non-full columns), the landing row of every column, the list of
    non-full columns (so a random move is one array read), the board (one code
    per cell), and the players' pieces in the board's *win-test encoding*:

    * a one-word bitboard per player (bit ``c * (H + 1) + r``, an always-empty
      guard bit on top of every column) when the board fits in 64 bits,
      ``W * (H + 1) <= 64`` (7x6 among them): a move sets one bit and wins iff
      ``m & m >> d`` then ``& >> 2d`` leaves a bit for one of the four
      directions ``d`` (1, H + 1, H, H + 2);
    * otherwise, for each player one 12-bit mask per line of the board (every
      row, column, diagonal and anti-diagonal): a move sets one bit in four
      masks and wins iff one of them holds four adjacent bits.

    Forbidden cells and ban pieces set no bit in either, so they break lines
    for free.  Only ``_drop``, ``would_win`` and ``winning_columns`` know the
    encodings; a test forces the line masks on small boards and checks both
    agree move by move.

Cells are numbered ``col * 16 + row`` (0-based).  A *move code* packs a whole
move token into one integer: ``col + 16 * (ban + 1)``, no ban being ``ban =
-1`` (a plain move, or a declined bonus); ``Move.code`` and ``Move.from_code``
convert.

All arithmetic in the kernels is unsigned 64-bit (``U(...)``): numba compiles
signed arithmetic assuming it never overflows (wrong for random numbers),
signed indices carry negative-index wrap-around code, and mixing signed with
unsigned integers gives floats in numba.  Hence the ``U(...)`` everywhere.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from llvmlite import ir as llvm_ir
from numba import carray, njit, types
from numba.core import event as numba_event
from numba.core import sigutils
from numba.extending import intrinsic

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)

U = np.uint64
U0 = U(0)
U1 = U(1)
U2 = U(2)
U3 = U(3)

MAX_SIDE = 12
STRIDE = U(16)
NCELLS = 12 * 16
NO_CELL = 255  # "no bonus cell" in the geometry
NO_LAST = 0xFFFF  # "no piece yet" in the state

# Board cell codes.
EMPTY = 0
PIECE_A = 1
PIECE_B = 2
BAN = 3
FORBIDDEN = 4

# Results.
ONGOING = 0
WIN_A = 1
WIN_B = 2
DRAW = 3

# Geometry layout (np.uint8).
G_W = U(0)
G_H = U(1)
G_BONUS = U(2)
G_PLAYABLE = U(3)
G_BITBOARD = U(4)  # 1: the board fits a one-word bitboard (W * (H + 1) <= 64)
G_NEXT = U(8)
GEO_LEN = 8 + NCELLS

# Line masks, per player: rows, columns, diagonals (index c - r + 11) and
# anti-diagonals (index c + r); bit c (bit r for columns) marks a piece.
L_ROW = U(0)
L_COL = U(12)
L_DIAG = U(24)
L_ANTI = U(47)
LINES_PER_SIDE = U(70)

# State layout (np.uint16).
S_PLY = U(0)
S_TURN = U(1)
S_RESULT = U(2)
S_EMPTY = U(3)
S_LAST = U(4)
S_NAVAIL = U(5)
S_HEIGHT = U(8)
S_AVAIL = U(20)
S_BITBOARDS = U(32)  # two uint64 bitboards, four uint16 lanes each
S_LINES = U(40)
S_BOARD = U(40 + 2 * 70)
STATE_LEN = 40 + 2 * 70 + NCELLS

# Error codes of check() / play(); OK means legal.
OK = 0
ERR_GAME_OVER = 1
ERR_COLUMN_RANGE = 2
ERR_COLUMN_FULL = 3
ERR_BAN_RANGE = 4
ERR_BAN_NOT_BONUS = 5
ERR_BAN_AFTER_WIN = 6
ERR_BAN_BOARD_FULL = 7
ERR_BAN_COLUMN_FULL = 8

MAX_LEGAL = 2 * MAX_SIDE  # legal move codes: one per column, plus the bans of one bonus landing


# --------------------------------------------------------------------------
# Reading a board and a state.  Code outside ``rules/`` reads them through
# these (inlined: free in a compiled loop), never through the layout
# constants above, so that the layout can change here alone.
# --------------------------------------------------------------------------


@njit(inline="always")
def board_width(geo):
    return geo[G_W]


@njit(inline="always")
def board_height(geo):
    return geo[G_H]


@njit(inline="always")
def bonus_cell(geo):
    """The bonus cell's index, ``NO_CELL`` if the board has none."""
    return geo[G_BONUS]


@njit(inline="always")
def playable_cells(geo):
    """The cells that are not forbidden."""
    return geo[G_PLAYABLE]


@njit(inline="always")
def fits_one_word(geo):
    """Whether the board's win test uses one-word bitboards."""
    return geo[G_BITBOARD] != 0


@njit(inline="always")
def to_move(st):
    """The side to move: 0 for A, 1 for B."""
    return st[S_TURN]


@njit(inline="always")
def result_of(st):
    """``ONGOING``, ``WIN_A``, ``WIN_B`` or ``DRAW``."""
    return st[S_RESULT]


@njit(inline="always")
def empty_cells(st):
    """The empty playable cells."""
    return st[S_EMPTY]


@njit(inline="always")
def cell_code(st, cell):
    """What lies on ``cell``: ``EMPTY``, ``PIECE_A``, ``PIECE_B``, ``BAN`` or ``FORBIDDEN``."""
    return st[S_BOARD + cell]


@njit(inline="always")
def landing_row(st, c):
    """The row where a piece dropped in column ``c`` lands (``H`` when full)."""
    return st[S_HEIGHT + c]


@njit(inline="always")
def open_count(st):
    """How many columns are not full."""
    return st[S_NAVAIL]


@njit(inline="always")
def open_column(st, k):
    """The ``k``-th column that is not full (``k < open_count(st)``)."""
    return st[S_AVAIL + k]


@njit(inline="always")
def restore(geo, st, saved):
    """Copy back into ``st`` the part of ``saved`` (an earlier copy of it, on
    the same board) that moves change and searches read: a search that
    plays moves on ``st`` undoes them all at once with this.  On one-word
    boards the cell codes are not copied (no kernel a search calls reads
    them there)."""
    n = S_LINES if geo[G_BITBOARD] != 0 else S_BOARD
    for i in range(n):
        st[i] = saved[i]
    geo, st, saved = geo, st, saved  # noqa: PLW0127  (see "Inlined helpers" below)


def board_grid(geo: np.ndarray, st: np.ndarray) -> np.ndarray:
    """The cell codes as a ``(W, H)`` array (a view: column, then row from
    the bottom)."""
    cells = st[S_BOARD : S_BOARD + NCELLS].reshape(MAX_SIDE, int(STRIDE))
    return cells[: int(geo[G_W]), : int(geo[G_H])]


# --------------------------------------------------------------------------
# Construction
# --------------------------------------------------------------------------


# Built once per board, in plain Python and numpy: compiling them cost more
# than a first move's worth of time with an empty cache.


def new_geometry(width: int, height: int, forbidden: np.ndarray, bonus: int) -> np.ndarray:
    """The geometry of a ``width`` x ``height`` board.

    ``forbidden`` holds cell indices (``col * 16 + row``); ``bonus`` is a cell
    index or ``NO_CELL``.
    """
    geo = np.zeros(GEO_LEN, dtype=np.uint8)
    geo[G_W] = width
    geo[G_H] = height
    geo[G_BONUS] = bonus
    geo[G_PLAYABLE] = width * height - len(forbidden)
    geo[G_BITBOARD] = 1 if width * (height + 1) <= 64 else 0
    blocked = {int(f) for f in forbidden}
    table = geo[int(G_NEXT) :].reshape(MAX_SIDE, int(STRIDE))
    for c in range(MAX_SIDE):
        nxt = height
        table[c, height:] = height
        for r in range(height - 1, -1, -1):
            if c * 16 + r not in blocked:
                nxt = r
            table[c, r] = nxt
    return geo


def new_state(geo: np.ndarray, forbidden: np.ndarray) -> np.ndarray:
    """The state of the empty board of ``geo``."""
    st = np.zeros(STATE_LEN, dtype=np.uint16)
    width = int(geo[G_W])
    height = int(geo[G_H])
    st[S_EMPTY] = geo[G_PLAYABLE]
    st[S_LAST] = NO_LAST
    for f in forbidden:
        st[int(S_BOARD) + int(f)] = FORBIDDEN
    n = 0
    for c in range(MAX_SIDE):
        h = int(geo[int(G_NEXT) + c * int(STRIDE)]) if c < width else height
        st[int(S_HEIGHT) + c] = h
        if h < height:
            st[int(S_AVAIL) + n] = c
            n += 1
    st[S_NAVAIL] = n
    if st[S_EMPTY] == 0:
        st[S_RESULT] = DRAW
    return st


# --------------------------------------------------------------------------
# The rules, as inlined helpers shared by every kernel below.  Arguments
# named c, r, side are uint64.
#
# Inlined helpers: numba inlines them at the IR level and gives each array
# argument an extra reference for the helper's body.  When an array's last use
# is inside a branch, the matching release lands in several blocks, numba's
# reference-count pruning gives up, and every call pays two atomic operations
# (measured: 10x slower playouts).  A helper that branches on array contents
# therefore ends with ``geo, st = geo, st``, which keeps both arrays alive to
# its single exit so the pair is pruned.
# --------------------------------------------------------------------------


@njit(inline="always")
def _four(m):
    """Does the uint64 mask ``m`` hold four adjacent bits?"""
    return (m & (m >> U1) & (m >> U2) & (m >> U3)) != U0


@njit(inline="always")
def _lines_through(st, side, c, r):
    """The four lines of ``side`` through (c, r): their indices in ``st`` and
    their masks with (c, r) added."""
    base = S_LINES + side * LINES_PER_SIDE
    bc = U1 << c
    i0 = base + L_ROW + r
    i1 = base + L_COL + c
    i2 = base + L_DIAG + U(11) + c - r
    i3 = base + L_ANTI + c + r
    m0 = U(st[i0]) | bc
    m1 = U(st[i1]) | (U1 << r)
    m2 = U(st[i2]) | bc
    m3 = U(st[i3]) | bc
    return i0, i1, i2, i3, m0, m1, m2, m3


@njit(inline="always")
def _any_four(m0, m1, m2, m3):
    """Does one of four line masks hold four adjacent bits?  Each holds at
    most 12 bits: packed in 16-bit lanes, one test covers the four lines (no
    run of bits can cross a lane's empty top)."""
    return _four(m0 | (m1 << U(16)) | (m2 << U(32)) | (m3 << U(48)))


@njit(inline="always")
def _bb_four(m, stride):
    """Does the one-word bitboard ``m`` (bit ``c * stride + r``; ``stride`` is
    H + 1, so every column has an always-empty guard bit on top) hold four
    in a line: vertical, horizontal, or either diagonal?"""
    y0 = m & (m >> U1)
    y1 = m & (m >> stride)
    y2 = m & (m >> (stride - U1))
    y3 = m & (m >> (stride + U1))
    return (
        (y0 & (y0 >> U2))
        | (y1 & (y1 >> (stride + stride)))
        | (y2 & (y2 >> (stride + stride - U2)))
        | (y3 & (y3 >> (stride + stride + U2)))
    ) != U0


@njit(inline="always")
def _load_bb(st, side):
    """The bitboard of ``side`` from its four 16-bit lanes in the state."""
    i = S_BITBOARDS + U(4) * side
    return U(st[i]) | (U(st[i + U1]) << U(16)) | (U(st[i + U2]) << U(32)) | (U(st[i + U3]) << U(48))


@njit(inline="always")
def _store_bb(st, side, bb):
    i = S_BITBOARDS + U(4) * side
    st[i] = bb & U(0xFFFF)
    st[i + U1] = (bb >> U(16)) & U(0xFFFF)
    st[i + U2] = (bb >> U(32)) & U(0xFFFF)
    st[i + U3] = bb >> U(48)


@njit(inline="always")
def would_win(geo, st, side, c, r):
    """Would a piece of ``side`` at (c, r) complete four in a line?"""
    if geo[G_BITBOARD]:
        stride = U(geo[G_H]) + U1
        won = _bb_four(_load_bb(st, side) | (U1 << (c * stride + r)), stride)
    else:
        _, _, _, _, m0, m1, m2, m3 = _lines_through(st, side, c, r)
        won = _any_four(m0, m1, m2, m3)
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return won


@njit(inline="always")
def completing_cells(p, stride):
    """The cells (bits) of a one-word bitboard where one more piece of the
    player whose pieces are ``p`` would complete four in a line.  Occupied
    cells and cells off the board are not removed: callers intersect."""
    # Vertical: three pieces right below.
    r = (p << U1) & (p << U2) & (p << U3)
    for d in (stride, stride - U1, stride + U1):
        a = (p << d) & (p << (d + d))
        r |= a & (p << (d + d + d))  # the three pieces on one side
        r |= a & (p >> d)  # two on one side, one on the other
        b = (p >> d) & (p >> (d + d))
        r |= b & (p << d)
        r |= b & (p >> (d + d + d))
    return r


@njit(inline="always")
def threat_windows(geo, st, reach, out):
    """Each column's *threats*: ``out[c]`` gets bit ``k`` (``k < reach``)
    where a piece of A on the empty cell ``k`` rows above the column's
    landing row would complete four in a line, whether or not it can be
    played there now, and bit ``reach + k`` where one of B would (a full
    column: 0).  Above the landing row
    every cell is empty but a forbidden one (the gravity table tells it:
    the cell codes are not read, as ``restore`` leaves them behind), which
    is never a threat.  On bitboard boards both sides' completing cells
    come from a few shifts; elsewhere each cell of the window is tested
    through its lines."""
    width = np.int64(geo[G_W])
    height = np.int64(geo[G_H])
    if geo[G_BITBOARD]:
        stride = U(height) + U1
        ca = completing_cells(_load_bb(st, U0), stride)
        cb = completing_cells(_load_bb(st, U1), stride)
        for c in range(width):
            land = np.int64(st[S_HEIGHT + c])
            n = min(reach, height - land)
            wa = U0
            wb = U0
            if n > 0:
                sh = U(c) * stride + U(land)
                m = (U1 << U(n)) - U1
                wa = (ca >> sh) & m
                wb = (cb >> sh) & m
                if wa | wb:
                    for k in range(n):
                        if geo[G_NEXT + U(c * 16 + land + k)] != land + k:  # forbidden
                            wa &= ~(U1 << U(k))
                            wb &= ~(U1 << U(k))
            out[c] = np.int64(wa | (wb << U(reach)))
    else:
        for c in range(width):
            land = np.int64(st[S_HEIGHT + c])
            wa = U0
            wb = U0
            for k in range(min(reach, height - land)):
                r = land + k
                if geo[G_NEXT + U(c * 16 + r)] == r:  # not forbidden
                    if would_win(geo, st, U0, U(c), U(r)):
                        wa |= U1 << U(k)
                    if would_win(geo, st, U1, U(c), U(r)):
                        wb |= U1 << U(k)
            out[c] = np.int64(wa | (wb << U(reach)))
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)


@njit(inline="always", cache=True)
def winning_columns(geo, st, side):
    """The columns (a bit per column) where a piece of ``side`` dropped now
    would win.  On bitboard boards all landing cells are tested at once."""
    return winning_columns_encoded(geo, st, side, geo[G_BITBOARD] != 0)


@njit(inline="always")
def winning_columns_encoded(geo, st, side, bitboard):
    """``winning_columns`` for a kernel specialised to one kind of board
    (``bitboard`` a compile-time constant there, as in ``apply_encoded``)."""
    side = U(side)
    columns = U0
    if bitboard:
        stride = U(geo[G_H]) + U1
        wins = completing_cells(_load_bb(st, side), stride)
        if wins != U0:
            for k in range(U(st[S_NAVAIL])):
                c = U(st[S_AVAIL + k])
                if wins & (U1 << (c * stride + U(st[S_HEIGHT + c]))):
                    columns |= U1 << c
    else:  # the line masks (``would_win``'s test, without its second look at the encoding)
        for k in range(U(st[S_NAVAIL])):
            c = U(st[S_AVAIL + k])
            _, _, _, _, m0, m1, m2, m3 = _lines_through(st, side, c, U(st[S_HEIGHT + c]))
            if _any_four(m0, m1, m2, m3):
                columns |= U1 << c
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return columns


@njit(inline="always")
def _fill(geo, st, c, k, r, code, empty, navail):
    """Occupy (c, r) with ``code``: the board, the column's landing row and
    the list of non-full columns (``k`` is the index of ``c`` in that list).
    Returns the cell and the updated counts of empty cells and non-full
    columns."""
    cell = c * STRIDE + r
    st[S_BOARD + cell] = code
    h = U(geo[G_NEXT + cell + U1])
    st[S_HEIGHT + c] = h
    if h >= U(geo[G_H]):
        navail -= U1
        st[S_AVAIL + k] = st[S_AVAIL + navail]
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return cell, empty - U1, navail


@njit(inline="always")
def _drop(geo, st, side, c, k, empty, navail, bb, stride, bitboard):
    """Drop a piece of ``side`` in column ``c`` (assumed legal; ``k`` is its
    index in the list of non-full columns).

    ``bitboard`` (a compile-time constant in the playout loops) selects the
    win-test encoding: the side's one-word bitboard ``bb`` with column stride
    ``stride`` (kept in a register by the caller), or the line masks in
    ``st``.  Returns ``(cell, won, empty, navail, bb)``.
    """
    r = U(st[S_HEIGHT + c])
    cell, empty, navail = _fill(geo, st, c, k, r, U(PIECE_A) + side, empty, navail)
    if bitboard:
        bb = bb | (U1 << (c * stride + r))
        won = _bb_four(bb, stride)
    else:
        i0, i1, i2, i3, m0, m1, m2, m3 = _lines_through(st, side, c, r)
        st[i0] = m0
        st[i1] = m1
        st[i2] = m2
        st[i3] = m3
        won = _any_four(m0, m1, m2, m3)
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return cell, won, empty, navail, bb


@njit(inline="always")
def _ban(geo, st, c, k, empty, navail):
    """Drop a neutral ban piece in column ``c`` (assumed not full; ``k`` is its
    index in the list of non-full columns).

    Returns ``(cell, empty, navail)``.
    """
    return _fill(geo, st, c, k, U(st[S_HEIGHT + c]), U(BAN), empty, navail)


@njit(inline="always")
def _avail_index(st, c):
    """The index of column ``c`` in the list of non-full columns."""
    k = U0
    while U(st[S_AVAIL + k]) != c:
        k += U1
    return k


@njit(inline="always")
def _outcome(side, won, empty):
    """The result after a token of ``side``: a win, a full board, or neither."""
    if won:
        return U(WIN_A) + side
    if empty == U0:
        return U(DRAW)
    return U(ONGOING)


@njit(inline="always")
def _store_header(st, side, cell, empty, navail, result, tokens):
    """Write back the scalars a token changed (``side`` is the side that moved)."""
    st[S_TURN] = U1 - side
    st[S_LAST] = cell
    st[S_EMPTY] = empty
    st[S_NAVAIL] = navail
    st[S_RESULT] = result
    st[S_PLY] += tokens


@njit(inline="always")
def ban_error(geo, st, side, c, ban):
    """Why a ban in column ``ban`` after a piece in column ``c`` is illegal."""
    height = U(geo[G_H])
    if ban >= U(geo[G_W]):
        return ERR_BAN_RANGE
    r = U(st[S_HEIGHT + c])
    cell = c * STRIDE + r
    if cell != U(geo[G_BONUS]):
        return ERR_BAN_NOT_BONUS
    if would_win(geo, st, side, c, r):
        return ERR_BAN_AFTER_WIN
    if st[S_EMPTY] == 1:
        return ERR_BAN_BOARD_FULL
    h = U(st[S_HEIGHT + ban])
    if ban == c:
        h = U(geo[G_NEXT + cell + U1])
    if h >= height:
        return ERR_BAN_COLUMN_FULL
    return OK


# --------------------------------------------------------------------------
# Kernels used by Position and by the agents
# --------------------------------------------------------------------------


@njit(cache=True)
def check(geo, st, code):
    """Why move ``code`` is illegal in ``st`` (an ``ERR_*`` code), or ``OK``."""
    if st[S_RESULT] != ONGOING:
        return ERR_GAME_OVER
    code = U(code)
    c = code & U(15)
    if c >= U(geo[G_W]):
        return ERR_COLUMN_RANGE
    if U(st[S_HEIGHT + c]) >= U(geo[G_H]):
        return ERR_COLUMN_FULL
    if code >= STRIDE:
        return ban_error(geo, st, U(st[S_TURN]), c, (code >> U(4)) - U1)
    return OK


@njit(inline="always")
def apply_encoded(geo, st, code, bitboard):
    """``apply`` for a kernel specialised to one kind of board: ``bitboard``
    (``fits_one_word(geo)``, see ``board_kind``) is a compile-time constant
    there, so only one win-test encoding is compiled in."""
    code = U(code)
    side = U(st[S_TURN])
    empty = U(st[S_EMPTY])
    navail = U(st[S_NAVAIL])
    c = code & U(15)
    cell, won, empty, navail, bb = _drop(
        geo, st, side, c, _avail_index(st, c), empty, navail,
        _load_bb(st, side), U(geo[G_H]) + U1, bitboard,
    )
    _store_bb(st, side, bb)
    ban_cell = U(NO_CELL)
    if code >= STRIDE:
        b = (code >> U(4)) - U1
        ban_cell, empty, navail = _ban(geo, st, b, _avail_index(st, b), empty, navail)
    result = _outcome(side, won, empty)
    _store_header(st, side, cell, empty, navail, result, U1)
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return cell, ban_cell, result


@njit(inline="always", cache=True)
def apply(geo, st, code):
    """Apply move ``code``, assumed legal, to ``st`` in place.

    Returns ``(piece cell, ban cell or NO_CELL, result)``: what a search needs
    to update its own keys (see ``ZOBRIST``) without reading the board.
    """
    return apply_encoded(geo, st, code, geo[G_BITBOARD] != 0)


@njit(cache=True)
def play(geo, st, code):
    """Apply move ``code`` to ``st`` in place if it is legal.

    Returns ``OK`` or the ``ERR_*`` code; on an error ``st`` is untouched.
    """
    err = check(geo, st, code)
    if err == OK:
        apply(geo, st, code)
    return err


@njit(cache=True)
def play_all(geo, st, codes):
    """Apply ``codes`` in order; stop at the first illegal one.

    Returns ``(number applied, error code of the next one or OK)``.
    """
    for i in range(codes.shape[0]):
        err = play(geo, st, codes[i])
        if err != OK:
            return i, err
    return codes.shape[0], OK


@njit(cache=True)
def legal_codes(geo, st, out):
    """Write the legal move codes into ``out``; return how many.

    Order: by column; a move that lands on the bonus cell (when it neither
    wins nor fills the board) comes as the plain code (the decline) followed by
    one code per ban column, by column.
    """
    if st[S_RESULT] != ONGOING:
        return 0
    width = U(geo[G_W])
    height = U(geo[G_H])
    side = U(st[S_TURN])
    bonus = U(geo[G_BONUS])
    n = 0
    for c in range(width):
        r = U(st[S_HEIGHT + c])
        if r >= height:
            continue
        out[n] = c
        n += 1
        if c * STRIDE + r == bonus:
            for b in range(width):
                if ban_error(geo, st, side, c, b) == OK:
                    out[n] = c + STRIDE * (b + U1)
                    n += 1
    return n


@njit(cache=True)
def win_runs(geo, st, out):
    """The ends of every line of four or more through the winning piece.

    For line ``k`` (in the order horizontal, vertical, diagonal,
    anti-diagonal) writes its two end cells into ``out[2k]`` and
    ``out[2k + 1]``, the one with the smaller column first (the lower one
    for a vertical line), and returns how many lines (0 when nobody has
    won; up to 4, so ``out`` holds 8).  A move that completes two lines at
    once (a double win) has two.
    """
    result = st[S_RESULT]
    if result != WIN_A and result != WIN_B:
        return 0
    last = np.int64(st[S_LAST])
    code = PIECE_A if result == WIN_A else PIECE_B
    width = np.int64(geo[G_W])
    height = np.int64(geo[G_H])
    c0 = last // 16
    r0 = last % 16
    n = 0
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = [0, 0]
        for k, sign in enumerate((-1, 1)):
            while True:
                c = c0 + sign * (run[k] + 1) * dc
                r = r0 + sign * (run[k] + 1) * dr
                if c < 0 or c >= width or r < 0 or r >= height:
                    break
                if st[S_BOARD + U(c * 16 + r)] != code:
                    break
                run[k] += 1
        if run[0] + run[1] + 1 >= 4:
            out[2 * n] = (c0 - run[0] * dc) * 16 + r0 - run[0] * dr
            out[2 * n + 1] = (c0 + run[1] * dc) * 16 + r0 + run[1] * dr
            n += 1
    return n


@njit(cache=True)
def win_cells(geo, st, out):
    """Cells of every line of four or more through the winning piece.

    Writes the distinct cells, sorted by column then row, into ``out`` and
    returns how many (0 when nobody has won).
    """
    ends = np.empty(8, dtype=np.int64)
    lines = win_runs(geo, st, ends)
    mark = np.zeros(NCELLS, dtype=np.bool_)
    for k in range(lines):
        a = ends[2 * k]
        b = ends[2 * k + 1]
        dc = np.sign(b // 16 - a // 16)
        dr = np.sign(b % 16 - a % 16)
        steps = max(abs(b // 16 - a // 16), abs(b % 16 - a % 16))
        for s in range(steps + 1):
            mark[a + s * (dc * 16 + dr)] = True
    n = 0
    for cell in range(NCELLS):
        if mark[cell]:
            out[n] = cell
            n += 1
    return n


# --------------------------------------------------------------------------
# Position keys
# --------------------------------------------------------------------------


def _zobrist_table() -> np.ndarray:
    """Fixed pseudo-random keys ``[piece code][cell]`` (splitmix64 from a
    constant seed, so keys are the same in every process)."""
    table = np.zeros((4, NCELLS), dtype=np.uint64)
    x = 0x243F6A8885A308D3
    mask = (1 << 64) - 1
    for piece in (PIECE_A, PIECE_B, BAN):
        for cell in range(NCELLS):
            x = (x + 0x9E3779B97F4A7C15) & mask
            z = x
            z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
            z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
            table[piece, cell] = z ^ (z >> 31)
    return table


#: Zobrist keys: the key of a position is the XOR of ``ZOBRIST[piece][cell]``
#: over its occupied cells.  The board alone fixes the side to move (A has
#: as many pieces as B, or one more) and whether the bonus is still to take,
#: so this key identifies the whole position.  A search updates it with the
#: cells ``apply`` returns: ``key ^= ZOBRIST[piece][cell]``.
ZOBRIST = _zobrist_table()


def board_key(geo: np.ndarray, st: np.ndarray) -> np.uint64:
    """The Zobrist key of ``st``, computed from its board (O(cells); plain
    numpy: called once per search, not worth a compilation)."""
    grid = board_grid(geo, st)
    key = np.uint64(0)
    for piece in (PIECE_A, PIECE_B, BAN):
        cols, rows = np.nonzero(grid == piece)
        if len(cols):
            key ^= np.bitwise_xor.reduce(ZOBRIST[piece, cols * int(STRIDE) + rows])
    return key


# --------------------------------------------------------------------------
# Random playouts
# --------------------------------------------------------------------------


@njit(inline="always")
def next_random(s):
    """xorshift64*: the next state and a 64-bit output (all unsigned)."""
    s ^= s >> U(12)
    s ^= s << U(25)
    s ^= s >> U(27)
    return s, s * U(0x2545F4914F6CDD1D)


@njit(inline="always")
def random_below(x, n):
    """A uniform integer in [0, n) from the high 32 bits of ``x`` (no division)."""
    return ((x >> U(32)) * n) >> U(32)


@njit(cache=True)
def seed_rng(seed):
    """A non-zero xorshift state from any integer seed (splitmix64 finaliser)."""
    z = U(seed) + U(0x9E3779B97F4A7C15)
    z = (z ^ (z >> U(30))) * U(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> U(27))) * U(0x94D049BB133111EB)
    z = z ^ (z >> U(31))
    if z == U0:
        z = U(0x2545F4914F6CDD1D)
    return z


def seed_state(seed: int) -> np.uint64:
    """``seed_rng(seed)`` computed in Python with the kernel's own source
    (``py_func``), from any integer: the same state, without compiling the
    kernel where nothing compiled needs it (0.07-0.1 s of a search agent's
    first start).  Python code seeds a kernel's generator with this."""
    with np.errstate(over="ignore"):  # the wrap-around is the arithmetic's
        return U(seed_rng.py_func(U(seed % 2**64)))


#: The types of ``check``'s arguments from a compiled caller (writeable
#: arrays; ``Position``'s are read-only, a compilation of their own).
CHECK_IN_KERNELS = (types.Array(types.uint8, 1, "C"), types.Array(types.uint16, 1, "C"), types.int64)


def compile_check() -> None:
    """``check`` compiled (or loaded from numba's cache) for the writeable
    arrays of a compiled caller (``CHECK_IN_KERNELS``): what ``master``'s
    child compiles first (``c4lab.compile_aside``), for the policy playouts
    its parent compiles meanwhile (they call it, and load it from the cache
    once the child has saved it)."""
    check.compile(CHECK_IN_KERNELS)


@njit(inline="always")
def _random_token(geo, st, r32, s, side, empty, navail, bb, stride, has_bonus, bitboard):
    """Play one random token of ``side`` in place.

    The column is uniform among the non-full ones (drawn from ``r32``, 32
    random bits); after a bonus landing (that neither won nor filled the
    board) the choice between declining and each ban column is uniform.
    ``has_bonus`` and ``bitboard`` are compile-time constants: the first is
    False when the board has no bonus cell, which removes the bonus test from
    the loop; the second selects the win-test encoding (see ``_drop``).  Returns ``(rng, cell, won, banned, empty, navail, bb)``.
    """
    k = (r32 * navail) >> U(32)
    cell, won, empty, navail, bb = _drop(
        geo, st, side, U(st[S_AVAIL + k]), k, empty, navail, bb, stride, bitboard
    )
    banned = False
    if has_bonus and cell == U(geo[G_BONUS]) and not won and empty != U0:
        s, x = next_random(s)
        k = random_below(x, navail + U1)
        if k < navail:
            _, empty, navail = _ban(geo, st, U(st[S_AVAIL + k]), k, empty, navail)
            banned = True
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above)
    return s, cell, won, banned, empty, navail, bb


@njit(inline="always")
def _playout_loop(geo, st, s, side, empty, navail, bb0, bb1, stride, has_bonus, bitboard):
    """The playout loop.

    Two tokens per pass, so that the side to move (and its bitboard) is a
    constant in each half, and one 64-bit random number serves both column
    choices: the high half for A, the low half for B (xorshift64*'s 32-bit
    halves are both good in their top bits, which the multiply-shift mapping
    uses).  Returns ``(rng, result, side, cell, empty, navail, bans, bb0, bb1)``.
    """
    bans = U0
    while True:
        s, x = next_random(s)
        if side == U0:
            s, cell, won, banned, empty, navail, bb0 = _random_token(
                geo, st, x >> U(32), s, U0, empty, navail, bb0, stride, has_bonus, bitboard
            )
            bans += U(banned)
            result = _outcome(U0, won, empty)
            if result != U(ONGOING):
                break
            side = U1
        s, cell, won, banned, empty, navail, bb1 = _random_token(
            geo, st, x & U(0xFFFFFFFF), s, U1, empty, navail, bb1, stride, has_bonus, bitboard
        )
        bans += U(banned)
        result = _outcome(U1, won, empty)
        if result != U(ONGOING):
            break
        side = U0
    return s, result, side, cell, empty, navail, bans, bb0, bb1


@njit(inline="always")
def _playout(geo, st, s, has_bonus, bitboard):
    """Random tokens in place until the game ends; returns ``(result, rng)``.

    ``has_bonus`` (the board has a bonus cell) and ``bitboard`` (the board's
    win-test encoding) are compile-time constants: callers choose the
    specialisation once per board, not once per playout.  (A bonus cell that
    is already taken only costs a needless test.)  The header scalars and the
    bitboards live in registers during the loop (the compiler cannot keep
    them there across stores into the same array) and are written back once
    at the end; tokens are counted from the empty cells used (minus the ban
    pieces) rather than by a counter.
    """
    result = U(st[S_RESULT])
    if result == U(ONGOING):
        side = U(st[S_TURN])
        empty = U(st[S_EMPTY])
        s, result, side, cell, empty_after, navail, bans, bb0, bb1 = _playout_loop(
            geo, st, s, side, empty, U(st[S_NAVAIL]), _load_bb(st, U0), _load_bb(st, U1),
            U(geo[G_H]) + U1, has_bonus, bitboard,
        )
        _store_bb(st, U0, bb0)
        _store_bb(st, U1, bb1)
        _store_header(st, side, cell, empty_after, navail, result, empty - empty_after - bans)
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" above: one exit)
    return result, s


def board_kind(geo: np.ndarray) -> tuple[bool, bool]:
    """``(has_bonus, bitboard)``: whether the board has a bonus cell and
    whether its win test uses one-word bitboards.  The kernels whose inner
    loop depends on these are compiled once per kind (see ``random_playout``)
    and the caller, in Python, picks the one for its board."""
    return bool(geo[G_BONUS] != NO_CELL), bool(geo[G_BITBOARD] != 0)


def random_playout(geo: np.ndarray, st: np.ndarray, s: int | np.uint64) -> tuple[int, int]:
    """Play random tokens in place until the game ends.

    Returns ``(result, rng state)``.  Runs the compiled playout of the
    board's kind (``board_kind``): only the kinds a process plays on are
    compiled, and the loop tests neither the encoding nor, without a bonus
    cell, the bonus.
    """
    return _PLAYOUT_KERNELS[board_kind(geo)][0](geo, st, s)


@njit(cache=True)
def random_code(geo, st, s):
    """A random legal move code for ``st`` (not applied), and the rng state.

    Same distribution as one token of a random playout: a column uniformly
    among the non-full ones, then, if that piece earns the bonus, declining
    or each ban column uniformly.
    """
    s = U(s)
    codes = np.empty(MAX_LEGAL, dtype=np.uint8)
    n = legal_codes(geo, st, codes)
    s, x = next_random(s)
    col = st[S_AVAIL + random_below(x, U(st[S_NAVAIL]))]
    first = 0
    while codes[first] != col:
        first += 1
    last = first + 1
    while last < n and (codes[last] & 15) == col:
        last += 1
    s, x = next_random(s)
    return codes[first + np.int64(random_below(x, U(last - first)))], s


@njit(inline="always")
def _playout_batch(geo, start, st, n, s, has_bonus, bitboard):
    """``n`` playouts from ``start`` in the scratch state ``st``; returns
    ``(rng, counts by result, tokens played)``."""
    counts = np.zeros(4, dtype=np.int64)
    tokens = 0
    # A playout reads and writes only the state before the board (it writes
    # the board too, but never reads it), and before the line masks when the
    # board uses bitboards: each playout copies only that prefix.
    prefix = S_LINES if bitboard else S_BOARD
    for _ in range(n):
        for i in range(prefix):
            st[i] = start[i]
        result, s = _playout(geo, st, s, has_bonus, bitboard)
        counts[result] += 1
        tokens += np.int64(st[S_PLY]) - np.int64(start[S_PLY])
    return s, counts, tokens


def playout_batch(geo: np.ndarray, start: np.ndarray, n: int, seed: int) -> tuple[int, int, int, int]:
    """Run ``n`` random playouts from ``start``: the benchmark's inner loop.

    Returns ``(wins of A, wins of B, draws, tokens played)``.  Compiled per
    kind of board, like ``random_playout``.
    """
    return _PLAYOUT_KERNELS[board_kind(geo)][1](geo, start, n, seed)


def _playout_kernels(has_bonus: bool, bitboard: bool) -> tuple[Any, Any]:
    """The compiled ``random_playout`` and ``playout_batch`` of one kind of
    board.  ``has_bonus`` and ``bitboard`` are constants of the closures, so
    each kind is its own small compilation (numba caches each one under a
    key that includes them), made on first use only: compiling the four
    kinds in one function took four times as long, mostly in numba's
    inlining, and the first move paid for all of them."""

    @njit(cache=True, nogil=True)
    def random_playout_kernel(geo, st, s):
        return _playout(geo, st, U(s), has_bonus, bitboard)

    @njit(cache=True)
    def playout_batch_kernel(geo, start, n, seed):
        st = start.copy()
        _, counts, tokens = _playout_batch(geo, start, st, n, seed_rng(seed), has_bonus, bitboard)
        return counts[WIN_A], counts[WIN_B], counts[DRAW], tokens

    return random_playout_kernel, playout_batch_kernel


_random_playout_bb, _playout_batch_bb = _playout_kernels(False, True)
_random_playout_bb_bonus, _playout_batch_bb_bonus = _playout_kernels(True, True)
_random_playout_lines, _playout_batch_lines = _playout_kernels(False, False)
_random_playout_lines_bonus, _playout_batch_lines_bonus = _playout_kernels(True, False)
_PLAYOUT_KERNELS = {
    (False, True): (_random_playout_bb, _playout_batch_bb),
    (True, True): (_random_playout_bb_bonus, _playout_batch_bb_bonus),
    (False, False): (_random_playout_lines, _playout_batch_lines),
    (True, False): (_random_playout_lines_bonus, _playout_batch_lines_bonus),
}


# A search that runs playouts on every kind of board (``uct_search``) calls
# them through a C function pointer: the search is compiled once for every
# board, and only the playout of each kind a process meets is compiled (or
# loaded from the cache), about a second instead of the whole search again.
# The call costs a few nanoseconds a playout.

#: The C signature of a playout function: (geometry, state, rng) -> rng; the
#: result is the state's (``result_of``).
PLAYOUT_SIGNATURE = types.uint64(types.CPointer(types.uint8), types.CPointer(types.uint16), types.uint64)


def playout_address(has_bonus: bool, bitboard: bool) -> int:
    """The address of the C function that plays a random playout on a board
    of that kind (``board_kind``) in place, compiled (or loaded from numba's
    cache) the first time a process asks for that kind.  The function lives
    as long as the process (``_playout_function`` keeps it)."""
    address = _playout_function(has_bonus, bitboard).address
    assert address is not None  # compiled, or loaded from the cache
    return int(address)


def compile_playouts() -> None:
    """Compile (or load from numba's cache) the playout function of every
    kind of board (``playout_address``): a child compiling ahead runs it
    (``c4lab.compile_aside``, after a level's first move: the next board
    a person picks is often of another kind, whose playout was 1.9-2.3 s
    of that board's first move).  Boards of more than 64 bits (9x8 and
    larger) first, then those with a bonus cell."""
    for has_bonus, bitboard in ((False, False), (False, True), (True, True), (True, False)):
        _playout_function(has_bonus, bitboard)


@functools.cache
def _playout_function(has_bonus: bool, bitboard: bool) -> Any:
    """The compiled playout function of one kind of board, kept here (its
    machine code must outlive every search that calls its address)."""

    def playout_function(geo_p, st_p, s):  # type: ignore[no-untyped-def]
        geo = carray(geo_p, GEO_LEN)
        st = carray(st_p, STATE_LEN)
        _, s = _playout(geo, st, s, has_bonus, bitboard)
        return s

    return cached_cfunc(playout_function, PLAYOUT_SIGNATURE)


def cached_cfunc(pyfunc: Any, sig: Any) -> Any:
    """``cfunc(sig, cache=True)(pyfunc)``, whose compilation (not a load from
    the cache) raises numba's ``numba:compile`` event as a jit function's
    does: numba's ``cfunc`` raises none, and the notice "preparing the engine"
    (``ui.preparing``, the server's ``warmup.COMPILING``) listens to it."""
    from numba.core.ccallback import CFunc  # numba's class behind ``cfunc``

    function: Any = CFunc(pyfunc, sigutils.normalize_signature(sig), locals={}, options={})
    function.enable_caching()
    uncached = getattr(function, "_compile_uncached", None)  # numba's private step (0.68): without it, no event

    def compile_uncached() -> Any:
        data = {"dispatcher": function, "args": str(sig.args), "return_type": str(sig.return_type)}
        with numba_event.trigger_event("numba:compile", data=data):
            return uncached()  # type: ignore[misc]

    if uncached is not None:
        function._compile_uncached = compile_uncached
    function.compile()
    return function


@intrinsic
def call_playout(typingctx, address, geo, st, s):  # type: ignore[no-untyped-def]
    """Run the playout function at ``address`` (``playout_address``) on
    ``geo`` and ``st`` with rng state ``s``; returns the new rng state."""
    sig = types.uint64(types.uint64, geo, st, types.uint64)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        fn_address, geo_v, st_v, s_v = args
        geo_p = context.make_array(signature.args[1])(context, builder, geo_v).data
        st_p = context.make_array(signature.args[2])(context, builder, st_v).data
        i64 = llvm_ir.IntType(64)
        fn_type = llvm_ir.FunctionType(i64, [geo_p.type, st_p.type, i64])
        return builder.call(builder.inttoptr(fn_address, fn_type.as_pointer()), [geo_p, st_p, s_v])

    return sig, codegen
