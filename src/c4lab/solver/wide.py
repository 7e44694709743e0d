"""The exact solver's search for boards of up to three 64-bit words.

The same negamax as :mod:`c4lab.solver.search` (root loop of null windows,
node limit, bonus nodes searched token by token, forced moves, pruning,
score bounds, transposition table, move order: same scores) for boards with
``W * (H + 1) <= 192`` (12x12 is 156 bits).  Every bitboard is a tuple of
three ``uint64`` words, lowest first, with the same bit numbering
(``c * (H + 1) + r``); a column may straddle two words, so the landing
cells' addition carries across words and the shifts of the win test move
bits between words.  It works on small boards too (the tests compare it with
the one-word search there).

Where it differs from ``search.py``:

* a table entry is four words, as there: the position's key
  ``cur | (mask + bottom)`` (three words: in each column, the side to move's
  pieces below a marker bit on the landing cell, the guard bit when the
  column is full, and the forbidden cells above it; with the board's
  forbidden cells that gives ``cur`` and ``mask`` back, so it is unique on
  one board) and the flag / value / generation word, which also holds the
  cell of the ban piece (a game has at most one: the bonus is earned once).
  As with ``search.py``, one table generation must hold positions of one
  board only (the API starts a new generation for each board);
* the moves under an opponent's winning cell are found by walking down
  from that cell past the forbidden cells (``search.py`` loops over the
  columns);
* the recursion takes raw pointers to the context and the table (numba
  reference-counts array arguments with atomic operations on every call:
  about 7% of the time), and a node asks the CPU to fetch its children's
  table entries while it orders the moves (the table is far larger than the
  caches: about 1.5x faster on big tables);
* the move order computes no threat counts when there is only one move.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic

from c4lab.rules.kernels import U0, U1, U
from c4lab.solver.bitboard import Bitboards, order_centre_first, words
from c4lab.solver.search import ABORTED, LOWER, UPPER

__all__ = [
    "ABORTED",
    "X_ABORTED",
    "X_GEN",
    "X_LEN",
    "X_LIMIT",
    "X_NODES",
    "X_WEAK",
    "context",
    "new_table",
    "solve",
    "window",
]

WORDS = 3
MAX_BITS = 64 * WORDS

# The context array (uint64).  The counters sit at the same indices as in
# search.py (the API reads and writes them on either backend); a bitboard
# constant takes three words.
X_W = 0
X_H = 1
X_STRIDE = 2
X_NODES = 6
X_LIMIT = 7  # give up (ABORTED) after this many nodes; set to 0 to stop a search
X_ABORTED = 8
X_WEAK = 9  # the root decides only win, draw or loss
X_GEN = 10  # the table's generation: entries of older ones count as empty
X_BOTTOM = 16  # 3 words
X_PLAYABLE = 19  # 3 words: the cells of the board that are not forbidden
X_BONUS = 22  # 3 words: the empty bonus cell's bit, 0 if none
X_ORDER = 25  # columns, centre first (12 entries)
X_COLUMN = 40  # each column's cells (12 x 3 words)
X_BUF = 80  # scratch rows, one per ply: 12 columns, then 12 scores
MAX_DEPTH = 160
X_LEN = X_BUF + 24 * MAX_DEPTH

# Table entries: key (3 words), then ``flag | (value + 128) << 8 |
# ban << 16 | generation << 24`` with ``ban`` the ban piece's bit index + 1
# (0: none) and the generation taken modulo 2**40.
GEN_MASK = U((1 << 40) - 1)


def new_table(size: int) -> np.ndarray:
    """An empty transposition table of ``size`` entries (a power of two)."""
    if size <= 0 or size & (size - 1):
        raise ValueError(f"the table size must be a power of two, not {size}")
    return np.zeros((size, 4), dtype=np.uint64)


# --------------------------------------------------------------------------
# Three-word bitboards: tuples (w0, w1, w2), lowest word first.
# --------------------------------------------------------------------------

U64 = U(64)


@njit(inline="always")
def _and(a, b):
    return (a[0] & b[0], a[1] & b[1], a[2] & b[2])


@njit(inline="always")
def _or(a, b):
    return (a[0] | b[0], a[1] | b[1], a[2] | b[2])


@njit(inline="always")
def _xor(a, b):
    return (a[0] ^ b[0], a[1] ^ b[1], a[2] ^ b[2])


@njit(inline="always")
def _andnot(a, b):
    """``a & ~b``."""
    return (a[0] & ~b[0], a[1] & ~b[1], a[2] & ~b[2])


@njit(inline="always")
def _nonzero(a):
    return (a[0] | a[1] | a[2]) != U0


@njit(inline="always")
def _equal(a, b):
    return ((a[0] ^ b[0]) | (a[1] ^ b[1]) | (a[2] ^ b[2])) == U0


@njit(inline="always")
def _shl(a, s):
    """``a << s`` for 0 < s < 64."""
    t = U64 - s
    return (a[0] << s, (a[1] << s) | (a[0] >> t), (a[2] << s) | (a[1] >> t))


@njit(inline="always")
def _shr(a, s):
    """``a >> s`` for 0 < s < 64."""
    t = U64 - s
    return ((a[0] >> s) | (a[1] << t), (a[1] >> s) | (a[2] << t), a[2] >> s)


@njit(inline="always")
def _add(a, b):
    """``a + b`` (carries cross the words; the top carry is dropped)."""
    r0 = a[0] + b[0]
    c0 = U1 if r0 < a[0] else U0
    t1 = a[1] + b[1]
    r1 = t1 + c0
    c1 = U1 if (t1 < a[1]) | (r1 < t1) else U0
    return (r0, r1, a[2] + b[2] + c1)


@njit(inline="always")
def _popcount1(x):
    x = x - ((x >> U1) & U(0x5555555555555555))
    x = (x & U(0x3333333333333333)) + ((x >> U(2)) & U(0x3333333333333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F0F0F0F0F)
    return (x * U(0x0101010101010101)) >> U(56)


@njit(inline="always")
def _popcount(a):
    return _popcount1(a[0]) + _popcount1(a[1]) + _popcount1(a[2])


@njit(inline="always")
def _several(a):
    """Does ``a`` hold two bits or more?"""
    return _popcount(a) > U1


@njit(inline="always")
def _low_index(a):
    """The index of the lowest bit of ``a`` plus one, 0 if ``a`` is 0."""
    index = U0
    if a[0]:
        index = _popcount1((a[0] & (~a[0] + U1)) - U1) + U1
    elif a[1]:
        index = _popcount1((a[1] & (~a[1] + U1)) - U1) + U(65)
    elif a[2]:
        index = _popcount1((a[2] & (~a[2] + U1)) - U1) + U(129)
    return index


@njit(inline="always")
def _load(X, i):
    return (X[i], X[i + 1], X[i + 2])


@njit(inline="always")
def _completing(p, stride):
    """``K.completing_cells`` on three words: the cells where one more piece
    of ``p``'s owner would complete four (occupied and off-board cells not
    removed)."""
    r = _and(_and(_shl(p, U1), _shl(p, U(2))), _shl(p, U(3)))
    for d in (stride, stride - U1, stride + U1):
        l1 = _shl(p, d)
        l2 = _shl(p, d + d)
        l3 = _shl(p, d + d + d)
        r1 = _shr(p, d)
        r2 = _shr(p, d + d)
        r3 = _shr(p, d + d + d)
        # three on one side, or two on one side and one on the other
        r = _or(r, _and(_and(l1, l2), _or(l3, r1)))
        r = _or(r, _and(_and(r1, r2), _or(r3, l1)))
    return r


@njit(inline="always")
def _landings(mask, X):
    """The cell where a piece dropped in each column lands (one bit a column)."""
    return _andnot(_and(_add(mask, _load(X, X_BOTTOM)), _load(X, X_PLAYABLE)), mask)


@njit(inline="always")
def _threats(stones, mask, X):
    """Empty playable cells where ``stones``' owner would complete four."""
    return _andnot(_and(_completing(stones, X[X_STRIDE]), _load(X, X_PLAYABLE)), mask)


@njit(inline="always")
def _below_danger(danger, mask):
    """The landing cells right below the cells of ``danger`` (each a cell
    where the next piece of its column lands after the current landing,
    past any forbidden cells in between)."""
    below = (U0, U0, U0)
    x = _shr(danger, U1)
    while _nonzero(x):
        below = _or(below, _andnot(x, mask))
        x = _shr(_and(x, mask), U1)  # a forbidden cell: one more down
    return below


@njit(inline="always")
def _key(cur, mask, X):
    """Unique on a board: each column's pieces of the side to move below a
    marker bit at its landing cell (the guard bit when it is full), plus the
    forbidden cells above the marker."""
    return _or(cur, _add(mask, _load(X, X_BOTTOM)))


@njit(inline="always")
def _tag(neutral, X):
    """The ban piece's bit index + 1 (0: none) and the generation: the
    entry's last word without the flag and the value."""
    return _low_index(_and(neutral, _load(X, X_PLAYABLE))) | ((X[X_GEN] & GEN_MASK) << U(8))


@njit(inline="always")
def _slot(key, tag, size):
    h = key[0] * U(0x9E3779B97F4A7C15) ^ (key[1] + U(0x632BE59BD9B4E019)) * U(0xC2B2AE3D27D4EB4F)
    h ^= (key[2] + tag) * U(0x165667B19E3779F9)
    h ^= h >> U(32)
    h *= U(0xD6E8FEB86659FD93)
    h ^= h >> U(29)
    return h & U(size - 1)


@njit(inline="always")
def _tt_get(tt, key, tag):
    """(flag, value) stored for this position, flag 0 if none."""
    slot = _slot(key, tag, tt.shape[0])
    meta = tt[slot, 3]
    flag = np.int64(0)
    value = np.int64(0)
    if meta >> U(16) == tag and tt[slot, 0] == key[0] and tt[slot, 1] == key[1] and tt[slot, 2] == key[2]:
        flag = np.int64(meta & U(0xFF))
        value = np.int64((meta >> U(8)) & U(0xFF)) - 128
    return flag, value


@njit(inline="always")
def _tt_put(tt, key, tag, flag, value):
    slot = _slot(key, tag, tt.shape[0])
    tt[slot, 0] = key[0]
    tt[slot, 1] = key[1]
    tt[slot, 2] = key[2]
    tt[slot, 3] = U(flag) | (U(value + 128) << U(8)) | (tag << U(16))


@njit(inline="always")
def _next_probe(low, high):
    """The next null window of the root loop: the middle, pulled towards 0."""
    mid = low + (high - low) // 2
    if mid <= 0 and low // 2 < mid:
        mid = low // 2
    elif mid >= 0 and high // 2 > mid:
        mid = high // 2
    return mid


# One explicit signature, every recursive call in negamax's own body, and no
# literal constant as an argument of a recursive call: otherwise numba
# compiles several versions of the recursion and cannot reload them from its
# cache (the process crashes).  See search.py.
_SIGNATURE = (
    "int64(UniTuple(uint64, 3), UniTuple(uint64, 3), UniTuple(uint64, 3), int64, int64, int64, int64, boolean,"
    " CPointer(uint64), CPointer(uint64), int64)"
)


@intrinsic
def _data(typingctx, arr):
    """The address of an array's first element (a raw pointer: no reference count)."""
    sig = types.CPointer(arr.dtype)(arr)

    def codegen(context, builder, signature, args):
        return context.make_array(signature.args[0])(context, builder, args[0]).data

    return sig, codegen


@intrinsic
def _prefetch(typingctx, ptr, index):
    """Ask the CPU to load ``ptr[index]``'s cache line."""
    sig = types.void(ptr, index)

    def codegen(context, builder, signature, args):
        address = builder.gep(args[0], [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fn = builder.module.declare_intrinsic("llvm.prefetch", [i8p], ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]))
        builder.call(fn, [builder.bitcast(address, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(_SIGNATURE, cache=True, nogil=True)
def negamax(cur, mask, neutral, empty, alpha, beta, depth, check, Xp, ttp, size):
    """The score of the position for the side to move if it lies in
    (alpha, beta); else a bound on the right side of the window.
    ``ABORTED`` if the search was stopped.  ``depth < 0``: the root, which
    narrows the exact score with null windows.  See search.negamax."""
    X = carray(Xp, (X_LEN,))
    tt = carray(ttp, (size, 4))
    if depth < 0:
        # Weak: stop as soon as the sign is known; after two probes of the
        # strong sequence, test 0 directly (see search.negamax).
        low, high = -(empty // 2), (empty + 1) // 2
        if empty == 0:
            return 0
        if _nonzero(_and(_threats(cur, mask, X), _landings(mask, X))):
            return 1 if X[X_WEAK] else (empty + 1) // 2
        probes = 0
        while low < high and not (X[X_WEAK] and (low > 0 or high < 0)):
            mid = _next_probe(low, high)
            if X[X_WEAK] and probes >= 2:
                mid = -1 if high <= 0 else 0
            probes += 1
            value = negamax(cur, mask, neutral, empty, mid, mid + 1, np.int64(0), np.bool_(False), Xp, ttp, size)
            if value == ABORTED:
                return ABORTED
            if value <= mid:
                high = value
            else:
                low = value
        if X[X_WEAK]:
            return 1 if low > 0 else (-1 if low < 0 else 0)
        return low
    X[X_NODES] += U1
    if X[X_NODES] > X[X_LIMIT]:
        X[X_ABORTED] = U1
        return ABORTED
    possible = _landings(mask, X)
    if check:
        if empty == 0:
            return 0
        if _nonzero(_and(_threats(cur, mask, X), possible)):
            return (empty + 1) // 2
    next_cur = _xor(_andnot(mask, neutral), cur)  # the opponent's stones: the side to move next
    bonus = _load(X, X_BONUS)
    width = np.int64(X[X_W])
    if _nonzero(_and(possible, bonus)):
        # A move can take the bonus: every move token (the decline and each
        # ban) is searched, without the pruning shortcuts below.
        if _nonzero(_and(_threats(cur, mask, X), possible)):
            return (empty + 1) // 2
        best = np.int64(-1000)
        for k in range(width):
            move = _and(possible, _load(X, X_COLUMN + 3 * np.int64(X[X_ORDER + k])))
            if not _nonzero(move):
                continue
            after = _or(mask, move)
            bans = (U0, U0, U0)
            tokens = 1
            if _equal(move, bonus) and empty > 1:
                bans = _landings(after, X)
                tokens = 1 + width
            for t in range(tokens):
                ban = (U0, U0, U0)  # t == 0: no ban (at the bonus cell: the decline)
                if t > 0:
                    ban = _and(bans, _load(X, X_COLUMN + 3 * np.int64(X[X_ORDER + t - 1])))
                    if not _nonzero(ban):
                        continue
                left = empty - 1 - (1 if _nonzero(ban) else 0)
                value = np.int64(0)
                if left > 0:
                    value = -negamax(next_cur, _or(after, ban), _or(neutral, ban), left, -beta, -max(alpha, best),
                                     depth + 1, np.bool_(True), Xp, ttp, size)
                    if X[X_ABORTED]:
                        return ABORTED
                if value > best:
                    best = value
                    if best >= beta:
                        return best
        return best

    # Moves that do not hand the opponent a win at once.
    opponent = _andnot(_andnot(mask, cur), neutral)
    opp_wins = _threats(opponent, mask, X)
    forced = _and(possible, opp_wins)
    moves = possible
    if _nonzero(forced):
        if _several(forced):
            return -(empty // 2)  # two threats: the opponent wins next move
        moves = forced
    above = _landings(_or(mask, possible), X)  # where the next piece of each column would land
    danger = _and(above, opp_wins)
    if _nonzero(danger):
        moves = _andnot(moves, _below_danger(danger, mask))
    if not _nonzero(moves):
        return -(empty // 2)
    if empty <= 2:
        return 0  # no win now, none for the opponent after our move: the board fills up

    low = -((empty - 2) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (empty - 1) // 2
    key = _key(cur, mask, X)
    tag = _tag(neutral, X)
    flag, stored = _tt_get(tt, key, tag)
    if flag == UPPER and stored < high:
        high = stored
    elif flag == LOWER and stored > alpha:
        alpha = stored
    beta = min(beta, high)
    if alpha >= beta:
        return alpha if flag == LOWER else beta

    # Order: the moves that create the most threats first, centre first on ties.
    row = X_BUF + 24 * depth
    n = 0
    several = _several(moves)
    for k in range(width):
        c = X[X_ORDER + k]
        move = _and(moves, _load(X, X_COLUMN + 3 * np.int64(c)))
        if _nonzero(move):
            ckey = _key(next_cur, _or(mask, move), X)
            _prefetch(ttp, 4 * np.int64(_slot(ckey, tag, size)))
            score = U0
            if several:
                score = _popcount(_threats(_or(cur, move), _or(mask, move), X))
            i = n
            while i > 0 and X[row + 12 + i - 1] < score:
                X[row + i] = X[row + i - 1]
                X[row + 12 + i] = X[row + 12 + i - 1]
                i -= 1
            X[row + i] = c
            X[row + 12 + i] = score
            n += 1
    for i in range(n):
        move = _and(moves, _load(X, X_COLUMN + 3 * np.int64(X[row + i])))
        value = -negamax(next_cur, _or(mask, move), neutral, empty - 1, -beta, -alpha, depth + 1, np.bool_(False),
                         Xp, ttp, size)
        if X[X_ABORTED]:
            return ABORTED
        if value >= beta:
            _tt_put(tt, key, tag, LOWER, value)
            return value
        alpha = max(alpha, value)
    _tt_put(tt, key, tag, UPPER, alpha)
    return alpha


_ROOT_SIGNATURE = (
    "int64(UniTuple(uint64, 3), UniTuple(uint64, 3), UniTuple(uint64, 3), int64, int64, int64, int64, boolean,"
    " uint64[::1], uint64[:, ::1])"
)


@njit(_ROOT_SIGNATURE, cache=True, nogil=True)
def _search(cur, mask, neutral, empty, alpha, beta, depth, check, X, tt):
    return negamax(cur, mask, neutral, empty, alpha, beta, depth, check, _data(X), _data(tt), tt.shape[0])


def context(b: Bitboards) -> np.ndarray:
    """The context array of the position ``b`` (its node limit unset: 0).

    Any board with ``W * (H + 1) <= 192`` (small ones too)."""
    if b.width > 12 or b.width * b.stride > MAX_BITS or 3 * (b.stride + 1) >= 64:
        raise ValueError(f"a {b.width}x{b.height} board does not fit the wide solver")
    if (b.neutral & b.playable).bit_count() > 1:
        raise ValueError("more than one ban piece: a game has at most one")
    X = np.zeros(X_LEN, dtype=np.uint64)
    X[X_W] = b.width
    X[X_H] = b.height
    X[X_STRIDE] = b.stride
    X[X_BOTTOM : X_BOTTOM + 3] = words(b.bottom)
    X[X_PLAYABLE : X_PLAYABLE + 3] = words(b.playable)
    X[X_BONUS : X_BONUS + 3] = words(b.bonus)
    for k, c in enumerate(order_centre_first(b.width)):
        X[X_ORDER + k] = c
    for c, column in enumerate(b.columns):
        X[X_COLUMN + 3 * c : X_COLUMN + 3 * c + 3] = words(column)
    return X


def _args(b: Bitboards) -> tuple[Any, Any, Any]:
    """The position's three bitboards as the kernel takes them."""
    cur, mask, neutral = (tuple(U(w) for w in words(x)) for x in (b.cur, b.mask, b.neutral))
    return cur, mask, neutral


def solve(b: Bitboards, weak: bool, X: np.ndarray, tt: np.ndarray) -> int:
    """The exact score (``weak``: only its sign: 1, 0 or -1) of the position
    ``b``, narrowed by null-window searches; ``ABORTED`` if the search was
    stopped.  (The root loop runs inside ``negamax``, at ``depth = -1``.)"""
    X[X_WEAK] = 1 if weak else 0
    cur, mask, neutral = _args(b)
    return int(_search(cur, mask, neutral, b.empty, 0, 0, -1, True, X, tt))


def window(b: Bitboards, alpha: int, beta: int, X: np.ndarray, tt: np.ndarray) -> int:
    """The score of ``b`` if it lies in (alpha, beta), else a bound on the
    right side of the window; ``ABORTED`` if the search was stopped."""
    if b.empty == 0:
        return 0
    cur, mask, neutral = _args(b)
    return int(_search(cur, mask, neutral, b.empty, alpha, beta, 0, True, X, tt))
