"""The exact solver's search: negamax with alpha-beta over one-word bitboards.

In the spirit of the best known classic-board solvers (Pascal Pons'), for
every variant whose board fits a 64-bit word (``W * (H + 1) <= 64``; larger
boards are solved by ``wide.py``):

* a position is three words: ``cur`` (the side to move's pieces), ``mask``
  (every filled cell: pieces, bans and forbidden cells) and ``neutral``
  (forbidden cells and bans), plus ``E``, the empty playable cells;
* the landing cells of all columns at once are ``(mask + bottom) & ~mask``
  on the playable cells (a carry steps over a forbidden cell); wins are
  found with the kernels' bitboard tests (``K.completing_cells``);
* a win now is scored at once; moves that hand the opponent an immediate win
  are pruned, two opponent threats mean a loss; the score is bounded by what
  the number of empty cells still allows;
* moves are tried in the order of the threats they create (then centre
  first); a transposition table keeps upper and lower bounds;
* ``solve`` narrows the score with null-window searches (iterative
  deepening on the score, not on depth).

The bonus: when a move can land on the (empty) bonus cell, the node is
searched without the pruning shortcuts (a ban can block a threat, and a ban
changes the scores), with the decline and every ban as separate moves.  The
score is RULES.md's: a win is worth ``(E + 1) // 2`` to the player who makes
it, ``E`` counted before the move.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from c4lab.rules import kernels as K
from c4lab.rules.kernels import U0, U1, U
from c4lab.solver.bitboard import Bitboards, order_centre_first

# The context array (uint64): the board's constants, the counters and the
# move-ordering scratch rows, in one array so that a recursive call passes
# few arguments.
X_W = 0
X_H = 1
X_STRIDE = 2
X_BOTTOM = 3
X_PLAYABLE = 4  # playable cells: on the board, not forbidden
X_BONUS = 5  # the empty bonus cell's bit, 0 if none
X_NODES = 6
X_LIMIT = 7  # give up (ABORTED) after this many nodes; set to 0 to stop a search
X_ABORTED = 8
X_WEAK = 9  # the root decides only win, draw or loss
X_GEN = 10  # the table's generation: entries of older ones count as empty
X_ORDER = 16  # columns, centre first (12 entries)
X_COLUMN = 28  # each column's cells (12 entries)
X_BUF = 40  # scratch rows, one per ply: 12 moves, then 12 scores
MAX_DEPTH = 160
X_LEN = X_BUF + 24 * MAX_DEPTH

# Transposition table: one row of four words per entry (32 bytes: one cache
# line holds two): cur, mask, neutral, and ``flag | (value + 128) << 8 |
# generation << 16``.  Clearing the table is starting a new generation
# (``X[X_GEN]``), which costs nothing and leaves the caches alone.
UPPER = 1
LOWER = 2

ABORTED = -10_000  # returned (and propagated) when the search is stopped


def new_table(size: int) -> np.ndarray:
    """An empty transposition table of ``size`` entries (a power of two)."""
    if size <= 0 or size & (size - 1):
        raise ValueError(f"the table size must be a power of two, not {size}")
    return np.zeros((size, 4), dtype=np.uint64)


@njit(inline="always")
def _popcount(x):
    x = x - ((x >> U1) & U(0x5555555555555555))
    x = (x & U(0x3333333333333333)) + ((x >> U(2)) & U(0x3333333333333333))
    x = (x + (x >> U(4))) & U(0x0F0F0F0F0F0F0F0F)
    return (x * U(0x0101010101010101)) >> U(56)


@njit(inline="always")
def _landings(mask, X):
    """The cell where a piece dropped in each column lands (one bit a column)."""
    return (mask + X[X_BOTTOM]) & X[X_PLAYABLE] & ~mask


@njit(inline="always")
def _threats(stones, mask, X):
    """Empty playable cells where ``stones``' owner would complete four."""
    return K.completing_cells(stones, X[X_STRIDE]) & X[X_PLAYABLE] & ~mask


@njit(inline="always")
def _slot(cur, mask, size):
    h = cur * U(0x9E3779B97F4A7C15) ^ (mask + U(0x632BE59BD9B4E019)) * U(0xC2B2AE3D27D4EB4F)
    return (h ^ (h >> U(29))) & U(size - 1)


# With bans, a cell of ``mask`` outside ``cur`` may be a ban or an opponent's
# piece, so ``neutral`` is part of the key.  Keys are stored whole: a table
# hit is never a different position.


@njit(inline="always")
def _tt_get(tt, cur, mask, neutral, generation):
    """(flag, value) stored for this position, flag 0 if none."""
    slot = _slot(cur, mask, tt.shape[0])
    meta = tt[slot, 3]
    if meta >> U(16) == generation and tt[slot, 0] == cur and tt[slot, 1] == mask and tt[slot, 2] == neutral:
        return np.int64(meta & U(0xFF)), np.int64((meta >> U(8)) & U(0xFF)) - 128
    return np.int64(0), np.int64(0)


@njit(inline="always")
def _tt_put(tt, cur, mask, neutral, flag, value, generation):
    slot = _slot(cur, mask, tt.shape[0])
    tt[slot, 0] = cur
    tt[slot, 1] = mask
    tt[slot, 2] = neutral
    tt[slot, 3] = U(flag) | (U(value + 128) << U(8)) | (generation << U(16))
    tt = tt  # noqa: PLW0127  (keep-alive: see kernels.py)


@njit(inline="always")
def _next_probe(low, high):
    """The next null window of the root loop: the middle, pulled towards 0."""
    mid = low + (high - low) // 2
    if mid <= 0 and low // 2 < mid:
        mid = low // 2
    elif mid >= 0 and high // 2 > mid:
        mid = high // 2
    return mid


# One explicit signature, and no literal constant as an argument of a
# recursive call (numba types ``False`` as ``Literal[bool]``): a recursion
# whose calls infer other argument types compiles several versions, and numba
# cannot reload those from its cache (the process crashes).
_SIGNATURE = "int64(uint64, uint64, uint64, int64, int64, int64, int64, boolean, uint64[::1], uint64[:, ::1])"


@njit(_SIGNATURE, cache=True, nogil=True)
def negamax(cur, mask, neutral, empty, alpha, beta, depth, check, X, tt):
    """The score of the position for the side to move if it lies in
    (alpha, beta); else a bound on the right side of the window.
    ``ABORTED`` if the search was stopped.

    ``check``: whether the side to move may have an immediate win.  A parent
    never plays a move that hands one over, so only the children of bonus
    nodes (which prune nothing) need the test.

    (Every recursive call is written in this function's body: numba cannot
    load from its cache a recursion that goes through an inlined helper.)"""
    if depth < 0:
        # The root: narrow the score with null windows.  Weak: stop as soon
        # as the sign is known; after two probes of the strong sequence
        # (which settle the quick wins and losses cheaply) test 0 directly.
        # Measured on the classic sets, this beats both the strong sequence
        # and a first window at 0 (slow on positions with a quick win).
        low, high = -(empty // 2), (empty + 1) // 2
        if empty == 0:
            return 0
        if _threats(cur, mask, X) & _landings(mask, X):
            return 1 if X[X_WEAK] else (empty + 1) // 2
        probes = 0
        while low < high and not (X[X_WEAK] and (low > 0 or high < 0)):
            mid = _next_probe(low, high)
            if X[X_WEAK] and probes >= 2:
                mid = -1 if high <= 0 else 0
            probes += 1
            value = negamax(cur, mask, neutral, empty, mid, mid + 1, np.int64(0), np.bool_(False), X, tt)
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
        if _threats(cur, mask, X) & possible:
            return (empty + 1) // 2
    next_cur = (mask & ~neutral) ^ cur  # the opponent's stones: the side to move next
    bonus = X[X_BONUS]
    if bonus != U0 and possible & bonus:
        # A move can take the bonus: every move token (the decline and each
        # ban) is searched, without the pruning shortcuts below (a ban can
        # block a threat).
        if _threats(cur, mask, X) & possible:
            return (empty + 1) // 2
        best = np.int64(-1000)
        for k in range(np.int64(X[X_W])):
            move = possible & X[X_COLUMN + np.int64(X[X_ORDER + k])]
            if move == U0:
                continue
            after = mask | move
            bans = U0
            tokens = 1
            if move == bonus and empty > 1:
                bans = _landings(after, X)
                tokens = 1 + np.int64(X[X_W])
            for t in range(tokens):
                ban = U0  # t == 0: no ban (at the bonus cell: the decline)
                if t > 0:
                    ban = bans & X[X_COLUMN + np.int64(X[X_ORDER + t - 1])]
                    if ban == U0:
                        continue
                left = empty - 1 - (1 if ban else 0)
                value = np.int64(0)
                if left > 0:
                    value = -negamax(next_cur, after | ban, neutral | ban, left, -beta, -max(alpha, best),
                                     depth + 1, np.bool_(True), X, tt)
                    if X[X_ABORTED]:
                        return ABORTED
                if value > best:
                    best = value
                    if best >= beta:
                        return best
        return best

    # Moves that do not hand the opponent a win at once.
    opponent = mask & ~cur & ~neutral
    opp_wins = _threats(opponent, mask, X)
    forced = possible & opp_wins
    moves = possible
    if forced:
        if forced & (forced - U1):
            return -(empty // 2)  # two threats: the opponent wins next move
        moves = forced
    above = _landings(mask | possible, X)  # where the next piece of each column would land
    danger = above & opp_wins
    if danger:  # not below an opponent's winning cell (forbidden cells may lie between)
        for k in range(np.int64(X[X_W])):
            column = X[X_COLUMN + k]
            if danger & column:
                moves &= ~column
    if moves == U0:
        return -(empty // 2)
    if empty <= 2:
        return 0  # no win now, none for the opponent after our move: the board fills up

    low = -((empty - 2) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (empty - 1) // 2
    flag, stored = _tt_get(tt, cur, mask, neutral, X[X_GEN])
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
    for k in range(np.int64(X[X_W])):
        move = moves & X[X_COLUMN + np.int64(X[X_ORDER + k])]
        if move:
            score = _popcount(_threats(cur | move, mask | move, X))
            i = n
            while i > 0 and X[row + 12 + i - 1] < score:
                X[row + i] = X[row + i - 1]
                X[row + 12 + i] = X[row + 12 + i - 1]
                i -= 1
            X[row + i] = move
            X[row + 12 + i] = score
            n += 1
    for i in range(n):
        value = -negamax(next_cur, mask | X[row + i], neutral, empty - 1, -beta, -alpha, depth + 1, np.bool_(False), X, tt)
        if X[X_ABORTED]:
            return ABORTED
        if value >= beta:
            _tt_put(tt, cur, mask, neutral, LOWER, value, X[X_GEN])
            return value
        alpha = max(alpha, value)
    _tt_put(tt, cur, mask, neutral, UPPER, alpha, X[X_GEN])
    return alpha


def context(b: Bitboards) -> np.ndarray:
    """The context array of the position ``b`` (its node limit unset: 0)."""
    if b.wide:
        raise ValueError(f"a {b.width}x{b.height} board needs the wide solver")
    X = np.zeros(X_LEN, dtype=np.uint64)
    X[X_W] = b.width
    X[X_H] = b.height
    X[X_STRIDE] = b.stride
    X[X_BOTTOM] = b.bottom
    X[X_PLAYABLE] = b.playable
    X[X_BONUS] = b.bonus
    for k, c in enumerate(order_centre_first(b.width)):
        X[X_ORDER + k] = c
    for c, column in enumerate(b.columns):
        X[X_COLUMN + c] = column
    return X


def solve(b: Bitboards, weak: bool, X: np.ndarray, tt: np.ndarray) -> int:
    """The exact score (``weak``: only its sign: 1, 0 or -1) of the position
    ``b``, narrowed by null-window searches; ``ABORTED`` if the search was
    stopped.  (The root loop runs inside ``negamax``, at ``depth = -1``.)"""
    X[X_WEAK] = 1 if weak else 0
    return int(negamax(U(b.cur), U(b.mask), U(b.neutral), b.empty, 0, 0, -1, True, X, tt))


def window(b: Bitboards, alpha: int, beta: int, X: np.ndarray, tt: np.ndarray) -> int:
    """The score of ``b`` if it lies in (alpha, beta), else a bound on the
    right side of the window; ``ABORTED`` if the search was stopped."""
    if b.empty == 0:
        return 0
    return int(negamax(U(b.cur), U(b.mask), U(b.neutral), b.empty, alpha, beta, 0, True, X, tt))
