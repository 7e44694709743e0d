"""The exact solver's search: negamax with alpha-beta over bitboards, written once.

In the spirit of the best known classic-board solvers (Pascal Pons'), for
every variant:

* a position is three bitboards -- ``cur`` (the side to move's pieces),
  ``mask`` (every filled cell: pieces, bans and forbidden cells) and
  ``neutral`` (forbidden cells and bans) -- plus ``empty``, the number of
  empty playable cells (``E`` of RULES.md);
* the landing cells of all columns at once are ``(mask + bottom) & playable
  & ~mask`` (the carry steps over a forbidden cell); wins are found with the
  shifts of the win test (:func:`~c4lab.solver.words.completing`);
* a win now is scored at once; moves that hand the opponent an immediate win
  are pruned, two opponent threats mean a loss; the score is bounded by what
  the number of empty cells still allows;
* moves are tried in the order of the threats they create, then those that
  do not fill the cell below one of the mover's own threats (which would
  let the opponent block it), then by the lines of four through their cell
  (classic board, high in the tree) or centre first; a safe move below two
  of the mover's threats stacked one on the other wins at once (the
  opponent can block only the lower); a transposition table keeps upper
  and lower bounds;
* near the leaves (at most 8 empty cells) a node neither counts threats
  to order its moves nor, on one-word boards, uses the table: there the
  work saved is less than what it costs (the table is far bigger than the
  caches: an access is a cache miss);
* the root (``_search``, which calls negamax) narrows the score with
  null-window searches, MTD(f) from 0: each probe starts from the bound the
  previous one returned (iterative deepening on the score, not on depth); a
  weak solve bisects towards 0.

The bonus: when a move can land on the (empty) bonus cell, the node is
searched without the pruning shortcuts (a ban can block a threat, and a ban
changes the scores), with the decline and every ban as separate moves.  The
score is RULES.md's: a win is worth ``(E + 1) // 2`` to the player who makes
it, ``E`` counted before the move.

The search is generic over the bitboard's type: one ``uint64`` for boards
with ``W * (H + 1) <= 64`` (7x6 among them), a tuple of three for larger
ones (up to 12x12).  :mod:`c4lab.solver.words` holds the operations that
differ by width; numba compiles one instance of :func:`negamax` per width
(its two signatures), each with the operations inlined.  Either instance
solves a board that fits it (the tests solve small boards with both and
compare the scores and node counts).

The recursion takes raw pointers to the context array and the table (numba
reference-counts array arguments with atomic operations on every call), and
a node asks the CPU to fetch its children's table entries while it orders
the moves (the table is far larger than the caches).
"""

from __future__ import annotations

import functools
import mmap
from typing import Any

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.extending import intrinsic, overload

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.rules.kernels import U0, U1, U, cached_cfunc
from c4lab.rules.variant import Variant, lines_of_four
from c4lab.solver.bitboard import WIDE_WORDS, Bitboards, order_centre_first, words
from c4lab.solver.database import NOT_FOUND, Database, find, score_at
from c4lab.solver.words import (
    INTERNAL,
    add,
    and_,
    andnot,
    canonical_slot,
    completing,
    data_pointer,
    equal,
    int8_at,
    int32_at,
    load,
    low_index,
    nonzero,
    or_,
    popcount,
    prefetch,
    several,
    shr,
    store,
    table_get,
    table_put,
    table_slot,
    xor,
    zero,
)

# The context array (uint64): the board's constants, the counters and the
# move-ordering scratch rows, in one array so that a recursive call passes
# few arguments.  A bitboard constant takes three words (one-word boards use
# the first), so that one context serves both widths.
X_W = 0
X_H = 1
X_STRIDE = 2
X_TT_SKIP = 3  # positions with at most this many empty cells skip the table
X_ORDER_SKIP = 4  # nodes with at most this many empty cells do not count threats
X_MIRROR = 5  # positions with more empty cells share an entry with their mirror image
X_NODES = 6
X_LIMIT = 7  # give up (ABORTED) after this many nodes; set to 0 to stop a search
X_ABORTED = 8
X_WEAK = 9  # the root decides only win, draw or loss
X_GEN = 10  # the table's generation: entries of older ones count as empty
X_BOOK_EMPTY = 11  # the empty cells of the database's positions (NO_BOOK: none)
X_BOOK_KEYS = 12  # the database's keys (address of int32s)
X_BOOK_VALUES = 13  # and values (address of int8s)
X_BOOK_SIZE = 14  # its number of entries
X_WINDOW = 15  # the root's bounds on the score and its current probe (see _search)
X_BOTTOM = 16  # 3 words: row 0 of every column
X_PLAYABLE = 19  # 3 words: the cells of the board that are not forbidden
X_BONUS = 22  # 3 words: the empty bonus cell's bit, 0 if none
X_ORDER = 25  # columns, centre first (12 entries)
X_MIRROR_AFTER = 37  # ... once the search has visited this many nodes
X_LINES_FROM = 38  # nodes with at least this many empty cells break ties by lines of four
X_BOOK_SCORE = 39  # the address of the database's lookup (a C function, see _book_address)
X_COLUMN = 40  # each column's cells (12 x 3 words)
X_BUF = 80  # scratch rows, one per ply (X_ROW words), see below
MAX_DEPTH = 160
# A ply's row: its moves' columns in the order they are searched, their
# scores, the threats each move makes (by column, three words each), and the
# threats of the side that has just moved, written by the parent: a child's
# opponent threats are the ones its parent computed to order that move.
X_ROW = 64
R_SCORES = 12
R_THREATS = 24
R_IN = 60
X_LINES = X_BUF + X_ROW * MAX_DEPTH  # each cell's bit (up to 192): the lines of four through it
X_LEN = X_LINES + 64 * WIDE_WORDS

#: The largest board the search takes, in bits (``W * (H + 1)``).
MAX_BITS = 64 * WIDE_WORDS

# Transposition table: rows of four words (32 bytes: one cache line holds
# two), laid out by :mod:`c4lab.solver.words` (two entries a row on one
# word, one on three).  Clearing the table is starting a new generation
# (``X[X_GEN]``), which costs nothing and leaves the caches alone.
UPPER = 1
LOWER = 2

#: Positions with at most this many empty cells are not looked up in the
#: table nor stored there: they are many and their searches are small, so a
#: table access (a cache miss, more often than not) costs more than it
#: saves; the table keeps the bigger searches.  On 7x6:ddddd: 17.0 -> 14.5 s
#: (178 -> 242 M nodes at 10.4 -> 16.7 M nodes/s).
TT_MAX_SKIPPED = 8
#: The same on boards of three words: there a node costs more than a cache
#: miss, and the table is used everywhere (9x8 near the end: three times
#: the nodes and twice the time with the limit at 8).
TT_MAX_SKIPPED_THREE = 0
#: Nodes with at most this many empty cells try their moves centre first,
#: without counting the threats each move makes (the parent's count is an
#: ordering that pays in the big searches; near the leaves most nodes cut at
#: their first move); their children then compute their opponent's threats.
ORDER_MAX_SKIPPED = 8

#: Nodes with at least this many empty cells look up their children in the
#: table for a cut before searching any (enhanced transposition cutoff).
ETC_EMPTY = 18
#: ... once the search has visited this many nodes.
ETC_AFTER = 1 << 20

#: On a symmetric board of one word, positions with more than this many
#: empty cells share their table entry with their mirror image (the key is
#: the smaller of the two), once the search has visited ``MIRROR_AFTER``
#: nodes: in a deep search from a symmetric start the two halves of the
#: tree meet (7x6:dddd 19.6 -> 13 s, 255 -> 219 M nodes at 24 empty cells;
#: at 16 the benchmark sets' node counts grew by 2 %, at 24 by 0.4 %).  The
#: two may share at any time: a position and its mirror image have one score.
MIRROR_EMPTY = 24
MIRROR_AFTER = ETC_AFTER
#: ``X[X_MIRROR]`` on boards that are not symmetric (or are of three words).
NO_MIRROR = 255

#: The size of a huge page (x86-64 and most arm64 kernels).
HUGE_PAGE = 2 << 20

#: On the classic board, nodes with at least this many empty cells break
#: ties in the move order by the lines of four through each move's cell, the
#: others centre first (7x6:dddd 156 -> 93 M nodes; everywhere, 102 M: near
#: the leaves the columns' order does better).  On the variant boards
#: measured (6x5 to 10x7 with forbidden and bonus cells, 22 to 34 empty
#: cells) it cost 15-30 %, so they keep centre first.
LINES_EMPTY = 24
#: ``X[X_LINES_FROM]`` where no node breaks ties by lines.
NO_LINES = 255

ABORTED = -10_000  # returned (and propagated) when the search is stopped

#: ``X[X_BOOK_EMPTY]`` when no database is used (no position has so many
#: empty cells).
NO_BOOK = 255


def new_table(size: int) -> np.ndarray:
    """An empty transposition table of ``size`` entries (a power of two)."""
    if size <= 0 or size & (size - 1):
        raise ValueError(f"the table size must be a power of two, not {size}")
    nbytes = size * 4 * 8
    if nbytes < HUGE_PAGE or not hasattr(mmap, "MADV_HUGEPAGE"):
        return np.zeros((size, 4), dtype=np.uint64)
    # Anonymous memory (zero-filled), aligned to a huge page, which the kernel
    # is asked to back with huge pages: every table access is a random one,
    # and with 4 KiB pages most of them also miss the TLB.
    region = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    start = -np.frombuffer(region, dtype=np.uint8, count=1).ctypes.data % HUGE_PAGE
    try:
        region.madvise(mmap.MADV_HUGEPAGE, start, nbytes)
    except OSError:
        pass  # no transparent huge pages here: 4 KiB pages, as np.zeros would give
    return np.frombuffer(region, dtype=np.uint64, count=size * 4, offset=start).reshape(size, 4)


@njit(inline="always")
def _landings(mask, bottom, playable):
    """The cell where a piece dropped in each column lands (one bit a column)."""
    return andnot(and_(add(mask, bottom), playable), mask)


@njit(inline="always")
def _threats(stones, mask, playable, stride):
    """Empty playable cells where ``stones``' owner would complete four."""
    return andnot(and_(completing(stones, stride), playable), mask)


@njit(inline="always")
def _below(danger, mask):
    """The landing cells right below the cells of ``danger`` (each a cell
    where the next piece of its column lands after the current landing,
    past any forbidden cells in between)."""
    below = zero(danger)
    x = shr(danger, U1)
    while nonzero(x):
        below = or_(below, andnot(x, mask))
        x = shr(and_(x, mask), U1)  # a forbidden cell: one more down
    return below


def _book_score(cur, mask, empty, X):  # type: ignore[no-untyped-def]
    """The exact score of a position of the classic database, from the
    database; :data:`~c4lab.solver.database.NOT_FOUND` if it does not hold it
    (never on three words: the database is for 7x6)."""


@overload(_book_score, jit_options=INTERNAL)
def _book_score_impl(cur, mask, empty, X):  # type: ignore[no-untyped-def]
    def one(cur, mask, empty, X):  # type: ignore[no-untyped-def]
        return _call_book(X[X_BOOK_SCORE], cur, mask, empty, data_pointer(X))

    def three(cur, mask, empty, X):  # type: ignore[no-untyped-def]
        return np.int64(NOT_FOUND)

    return one if isinstance(cur, types.Integer) else three


def _book_lookup(cur, mask, empty, Xp):  # type: ignore[no-untyped-def]
    """``_book_score`` on one word, compiled on its own as a C function
    (``_book_address``) that the search calls through ``X[X_BOOK_SCORE]``:
    a search without the database (every board but 7x6, and ``--no-book``)
    never compiles it, and the search's own compilation leaves it out (it
    was 0.4 s of a first solve's CPU on any board)."""
    X = carray(Xp, (X_LEN,))
    size = np.int64(X[X_BOOK_SIZE])
    keys = carray(int32_at(X[X_BOOK_KEYS]), (size,))
    values = carray(int8_at(X[X_BOOK_VALUES]), (size,))
    # The database's positions have an even number of pieces: the side to
    # move is the first player, whose values it stores.
    value = find(keys, values, cur, mask)
    return value if value == NOT_FOUND else score_at(value, empty)


#: The C signature of the database lookup: (cur, mask, empty, context) -> score.
BOOK_SIGNATURE = types.int64(types.uint64, types.uint64, types.int64, types.CPointer(types.uint64))


@functools.cache
def _book_function() -> Any:
    """The database lookup, compiled (or loaded from numba's cache) the first
    time a search uses the database, and kept for the process (its machine
    code must outlive every search that calls its address)."""
    return cached_cfunc(_book_lookup, BOOK_SIGNATURE)


def _book_address() -> int:
    """The address of the database lookup's C function (``X[X_BOOK_SCORE]``)."""
    address = _book_function().address
    assert address is not None  # compiled, or loaded from the cache
    return int(address)


@intrinsic
def _call_book(typingctx, address, cur, mask, empty, Xp):  # type: ignore[no-untyped-def]
    """The database lookup at ``address`` (``_book_address``)."""
    sig = types.int64(types.uint64, cur, mask, empty, Xp)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        fn_type = ir.FunctionType(context.get_value_type(types.int64),
                                  [context.get_value_type(t) for t in signature.args[1:]])
        return builder.call(builder.inttoptr(args[0], fn_type.as_pointer()), args[1:])

    return sig, codegen


@njit(inline="always")
def _slot(cur, mask, neutral, empty, bottom, playable, X, size):
    """The table slot of a position (shared with its mirror image on a
    symmetric board when it has many empty cells)."""
    if empty > np.int64(X[X_MIRROR]) and X[X_NODES] > X[X_MIRROR_AFTER]:
        return canonical_slot(cur, mask, neutral, bottom, playable, X[X_GEN], size, X[X_W], X[X_STRIDE])
    return table_slot(cur, mask, neutral, bottom, playable, X[X_GEN], size)


@njit(inline="always")
def _next_probe(low, high):
    """The next null window of the root loop: the middle, pulled towards 0."""
    mid = low + (high - low) // 2
    if mid <= 0 and low // 2 < mid:
        mid = low // 2
    elif mid >= 0 and high // 2 > mid:
        mid = high // 2
    return mid


# One explicit signature per width, every recursive call in negamax's own
# body, and no literal constant as an argument of a recursive call (numba
# types ``False`` as ``Literal[bool]``): a recursion whose calls infer other
# argument types compiles more versions, and numba cannot reload those from
# its cache (the process crashes).
# Each width's signature is compiled (or loaded from the cache) on its first
# use (:func:`_instance`), so that a 7x6 game never waits for the three-word
# instance.
_ARGS = "int64, int64, int64, int64, boolean, CPointer(uint64), CPointer(uint64), int64"
_ROOT_ARGS = "int64, int64, int64, int64, boolean, uint64[::1], uint64[:, ::1]"
_WORD = {False: "uint64", True: "UniTuple(uint64, 3)"}


@njit(cache=True, nogil=True)
def negamax(cur, mask, neutral, empty, alpha, beta, depth, check, Xp, ttp, size):
    """The score of the position for the side to move if it lies in
    (alpha, beta); else a bound on the right side of the window.
    ``ABORTED`` if the search was stopped.  ``depth``: the ply below the
    root (its scratch row in the context).

    ``check``: whether the side to move may have an immediate win.  A parent
    never plays a move that hands one over, so only the children of bonus
    nodes (which prune nothing) need the test."""
    X = carray(Xp, (X_LEN,))
    tt = carray(ttp, (size, 4))
    bottom = load(X, X_BOTTOM, cur)
    playable = load(X, X_PLAYABLE, cur)
    stride = X[X_STRIDE]
    X[X_NODES] += U1
    if X[X_NODES] > X[X_LIMIT]:
        X[X_ABORTED] = U1
        return ABORTED
    possible = _landings(mask, bottom, playable)
    if check:
        if empty == 0:
            return 0
        if nonzero(and_(_threats(cur, mask, playable, stride), possible)):
            return (empty + 1) // 2
    if empty == np.int64(X[X_BOOK_EMPTY]):
        # The database's frontier: its score is exact (a position it does not
        # hold, if any, is searched).
        known = _book_score(cur, mask, empty, X)
        if known != NOT_FOUND:
            return known
    next_cur = xor(andnot(mask, neutral), cur)  # the opponent's stones: the side to move next
    bonus = load(X, X_BONUS, cur)
    width = np.int64(X[X_W])
    if nonzero(and_(possible, bonus)):
        # A move can take the bonus: every move token (the decline and each
        # ban) is searched, without the pruning shortcuts below (a ban can
        # block a threat).
        if nonzero(and_(_threats(cur, mask, playable, stride), possible)):
            return (empty + 1) // 2
        best = np.int64(-1000)
        for k in range(width):
            move = and_(possible, load(X, X_COLUMN + 3 * np.int64(X[X_ORDER + k]), cur))
            if not nonzero(move):
                continue
            after = or_(mask, move)
            bans = zero(cur)
            tokens = 1
            if equal(move, bonus) and empty > 1:
                bans = _landings(after, bottom, playable)
                tokens = 1 + width
            for t in range(tokens):
                ban = zero(cur)  # t == 0: no ban (at the bonus cell: the decline)
                if t > 0:
                    ban = and_(bans, load(X, X_COLUMN + 3 * np.int64(X[X_ORDER + t - 1]), cur))
                    if not nonzero(ban):
                        continue
                left = empty - 1 - (1 if nonzero(ban) else 0)
                value = np.int64(0)
                if left > 0:
                    value = -negamax(next_cur, or_(after, ban), or_(neutral, ban), left, -beta, -max(alpha, best),
                                     depth + 1, np.bool_(True), Xp, ttp, size)
                    if X[X_ABORTED]:
                        return ABORTED
                if value > best:
                    best = value
                    if best >= beta:
                        return best
        return best

    # Moves that do not hand the opponent a win at once.
    row = X_BUF + X_ROW * depth
    if not check and depth > 0 and empty + 1 > np.int64(X[X_ORDER_SKIP]):  # the parent computed them to order its moves
        opp_wins = load(X, row + R_IN, cur)
    else:
        opp_wins = _threats(andnot(andnot(mask, cur), neutral), mask, playable, stride)
    forced = and_(possible, opp_wins)
    moves = possible
    if nonzero(forced):
        if several(forced):
            return -(empty // 2)  # two threats: the opponent wins next move
        moves = forced
    above = _landings(or_(mask, possible), bottom, playable)  # where the next piece of each column would land
    danger = and_(above, opp_wins)
    if nonzero(danger):  # not below an opponent's winning cell (forbidden cells may lie between)
        moves = andnot(moves, _below(danger, mask))
    if not nonzero(moves):
        return -(empty // 2)
    if empty <= 2:
        return 0  # no win now, none for the opponent after our move: the board fills up
    counted = empty > np.int64(X[X_ORDER_SKIP])
    spoil = zero(cur)
    if counted:
        # Our own threats right above a landing: playing below one lets the
        # opponent block it (such moves go last among equals); two of them
        # stacked above a safe move win (the opponent blocks the first, we
        # take the second), the best score there is, found without a search
        # (not when the lower one is the bonus cell: its taker could ban the
        # upper one).
        own = _threats(cur, mask, playable, stride)
        mine_above = and_(above, own)
        if nonzero(mine_above):
            spoil = _below(mine_above, mask)
            second = and_(_landings(or_(or_(mask, possible), above), bottom, playable), own)
            stacked = and_(andnot(mine_above, bonus), _below(second, or_(mask, possible)))
            if nonzero(and_(moves, _below(stacked, mask))):
                return (empty - 1) // 2

    low = -((empty - 2) // 2)
    if alpha < low:
        alpha = low
        if alpha >= beta:
            return alpha
    high = (empty - 1) // 2
    stored_here = empty > np.int64(X[X_TT_SKIP])
    slot, key, tag = _slot(cur, mask, neutral, empty, bottom, playable, X, size)
    flag, stored = np.int64(0), np.int64(0)
    if stored_here:
        flag, stored = table_get(tt, slot, key, tag)
    if flag == UPPER and stored < high:
        high = stored
    elif flag == LOWER and stored > alpha:
        alpha = stored
    beta = min(beta, high)
    if alpha >= beta:
        return alpha if flag == LOWER else beta

    # Order: the moves that create the most threats first, centre first on
    # ties (with one move there is nothing to order; near the leaves, centre
    # first only).
    n = 0
    ordered = counted and several(moves)
    for k in range(width):
        c = np.int64(X[X_ORDER + k])
        move = and_(moves, load(X, X_COLUMN + 3 * c, cur))
        if nonzero(move):
            if empty - 1 > np.int64(X[X_TT_SKIP]):
                child = _slot(next_cur, or_(mask, move), neutral, empty - 1, bottom, playable, X, size)
                prefetch(ttp, 4 * np.int64(child[0]))
            score = U0
            if counted:
                made = _threats(or_(cur, move), or_(mask, move), playable, stride)
                store(X, row + R_THREATS + 3 * c, made)
                if ordered:
                    # The threats it makes; among equals, one that does not
                    # spoil one of ours; then, high in the tree, the most
                    # lines of four through its cell (at most 16).
                    score = (U(2) * popcount(made) + (U0 if nonzero(and_(move, spoil)) else U1)) << U(5)
                    if empty >= np.int64(X[X_LINES_FROM]):
                        score += X[X_LINES + low_index(move) - U1]
            i = n
            while i > 0 and X[row + R_SCORES + i - 1] < score:
                X[row + i] = X[row + i - 1]
                X[row + R_SCORES + i] = X[row + R_SCORES + i - 1]
                i -= 1
            X[row + i] = c
            X[row + R_SCORES + i] = score
            n += 1
    if empty >= ETC_EMPTY and n > 1 and X[X_NODES] > U(ETC_AFTER):
        # Enhanced transposition cutoff: a child whose stored upper bound
        # already refutes it proves this node's cut before any child is
        # searched (its entry was prefetched above).  Only in a big search
        # (a quarter fewer nodes on 7x6:dddd): in a small one the children's
        # entries are mostly misses on a cold table, and cost more than they save.
        for i in range(n):
            c = np.int64(X[row + i])
            move = and_(moves, load(X, X_COLUMN + 3 * c, cur))
            cslot, ckey, ctag = _slot(next_cur, or_(mask, move), neutral, empty - 1, bottom, playable, X, size)
            cflag, cstored = table_get(tt, cslot, ckey, ctag)
            if cflag == UPPER and -cstored >= beta:
                table_put(tt, slot, key, tag, LOWER, -cstored, empty)
                return -cstored
    for i in range(n):
        c = np.int64(X[row + i])
        move = and_(moves, load(X, X_COLUMN + 3 * c, cur))
        if counted:
            store(X, row + X_ROW + R_IN, load(X, row + R_THREATS + 3 * c, cur))
        value = -negamax(next_cur, or_(mask, move), neutral, empty - 1, -beta, -alpha, depth + 1, np.bool_(False),
                         Xp, ttp, size)
        if X[X_ABORTED]:
            return ABORTED
        if value >= beta:
            if stored_here:
                table_put(tt, slot, key, tag, LOWER, value, empty)
            return value
        alpha = max(alpha, value)
    if stored_here:
        table_put(tt, slot, key, tag, UPPER, alpha, empty)
    return alpha


@intrinsic
def _call_negamax(typingctx, address, cur, mask, neutral, empty, alpha, beta, depth, check, Xp, ttp, size):  # type: ignore[no-untyped-def]
    """:func:`negamax` of these argument types through its C entry point at
    ``address`` (see ``_instance``)."""
    argtypes = (cur, mask, neutral, empty, alpha, beta, depth, check, Xp, ttp, size)
    sig = types.int64(types.uint64, *argtypes)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        fn_type = ir.FunctionType(context.get_value_type(types.int64), [context.get_value_type(t) for t in argtypes])
        return builder.call(builder.inttoptr(args[0], fn_type.as_pointer()), args[1:])

    return sig, codegen


@njit(cache=True, nogil=True)
def _search(cur, mask, neutral, empty, alpha, beta, depth, check, X, tt, address):
    """:func:`negamax` on arrays (the recursion takes raw pointers), called
    at ``address``, its C entry point: linked in, its code was optimised and
    compiled a second time here (0.3 s of a first solve's CPU).

    ``depth < 0``: the root of a solve (``empty > 0``), which narrows the
    exact score with null windows.  It runs here, not in negamax: there it
    made negamax's first compilation about 0.35 s of CPU longer (2.8 s),
    here it makes this function's 0.15 s longer (0.06 -> 0.22 s); in Python
    the calls of its probes cost 8 microseconds a solve (4 % of the mean of
    ``Test_L1_R1``).

    Two probes bisecting towards 0 first (at about -E/4 and E/4): cheap, and
    they settle the quick wins and losses.  Then, if the score may still be
    0, strong: MTD(f) from 0, each probe where the last one's bound points
    (at least 0? then at least the value found + 1, ...): the expensive
    probes are the ones next to the score, and most such scores lie near 0
    (against bisecting on: 7x6:dddd 10.1 -> 8.5 s, the 20 random positions
    8.1 -> 7.0 s; those whose score is 3 or more take longer, the others
    less); weak: test 0 directly and stop as soon as the sign is known.
    Otherwise bisect on.  Every probe tests for a win now (``check``), which
    ends the loop at once where the side to move has one."""
    Xp, ttp, size = data_pointer(X), data_pointer(tt), tt.shape[0]
    if depth >= 0:
        return _call_negamax(address, cur, mask, neutral, empty, alpha, beta, depth, check, Xp, ttp, size)
    low, high = -(empty // 2), (empty + 1) // 2
    probes = 0
    guess = np.int64(0)
    near = False  # whether the score may be 0 after the first two probes
    while low < high and not (X[X_WEAK] and (low > 0 or high < 0)):
        if probes == 2:
            near = low <= 0 <= high
            guess = np.int64(-1)
        if not near:
            mid = _next_probe(low, high)
        elif X[X_WEAK]:
            mid = -1 if high <= 0 else 0
        else:
            mid = min(max(guess, low), high - 1)
        probes += 1
        # What is known so far, for a progress display: low, high and the
        # probe, each + 128, a byte each.
        X[X_WINDOW] = U(low + 128) | (U(high + 128) << U(8)) | (U(mid + 128) << U(16))
        value = _call_negamax(address, cur, mask, neutral, empty, mid, mid + 1, np.int64(0), np.bool_(True),
                              Xp, ttp, size)
        if value == ABORTED:
            return ABORTED
        if value <= mid:
            high = value
            guess = value - 1
        else:
            low = value
            guess = value
    if X[X_WEAK]:
        return 1 if low > 0 else (-1 if low < 0 else 0)
    return low


_compiled: dict[bool, tuple[Any, int]] = {}


def _overload(function: Any, signature: str, three: bool) -> Any:
    """``function`` compiled (or loaded from numba's cache) with its explicit
    ``signature`` the first time it is needed: its overload of one width."""
    word = types.UniTuple(types.uint64, 3) if three else types.uint64
    function.compile(signature)
    (compiled,) = (c for args, c in function.overloads.items() if args[0] == word)
    return compiled


def _root_search(three: bool) -> Any:
    """The root search of one width (:func:`_overload`)."""
    w = _WORD[three]
    return _overload(_search, f"int64({w}, {w}, {w}, {_ROOT_ARGS}, uint64)", three)


def _recursion(three: bool) -> Any:
    """:func:`negamax` of one width (:func:`_overload`)."""
    w = _WORD[three]
    return _overload(negamax, f"int64({w}, {w}, {w}, {_ARGS})", three)


def compile_recursion() -> None:
    """Compile the one-word :func:`negamax` into numba's cache: what a
    child of ``c4lab.compile_aside`` runs (``api._recursion_aside``)."""
    _recursion(False)


def compile_recursion_wide() -> None:
    """:func:`compile_recursion` for three words."""
    _recursion(True)


#: The ``c4lab.compile_aside`` target that compiles negamax of each width.
RECURSION_TARGET = {False: f"{__name__}:compile_recursion", True: f"{__name__}:compile_recursion_wide"}


def _instance(three: bool) -> tuple[Any, int]:
    """The root search of one width and the address of the :func:`negamax`
    it calls, each compiled (or loaded from numba's cache) with its explicit
    signature the first time it is needed.  The root search is called
    through its compiled entry point: with two signatures, the dispatcher's
    choice by argument types costs microseconds, as much as a small search.
    (The dispatcher keeps the machine code at the address for the process.)"""
    if three not in _compiled:
        searched = _recursion(three)
        address = int(searched.library.get_pointer_to_function(searched.fndesc.llvm_cfunc_wrapper_name))  # type: ignore[attr-defined]
        _compiled[three] = _root_search(three).entry_point, address  # type: ignore[attr-defined]
    return _compiled[three]


def ready(three: bool) -> bool:
    """Whether this process has compiled (or loaded) the search of one
    width."""
    return three in _compiled


def window_of(X: np.ndarray) -> tuple[int, int, int] | None:
    """What the root of a running search knows: ``(low, high, probe)`` (the
    score lies in ``[low, high]``; it is testing ``probe``), ``None`` before
    its first probe."""
    packed = int(X[X_WINDOW])
    if packed == 0:
        return None
    return (packed & 0xFF) - 128, ((packed >> 8) & 0xFF) - 128, ((packed >> 16) & 0xFF) - 128


def prepare(b: Bitboards, book: bool = False, recursion: bool = True) -> None:
    """Compile (or load from the cache) the instance that will search ``b``
    now, and with ``book`` the database lookup it will call, so that a timed
    search measures the search alone.  Without ``recursion``, all of it but
    :func:`negamax` itself (which a child process compiles meanwhile)."""
    if recursion:
        _instance(b.wide)
    else:
        _root_search(b.wide)
    if book:
        _book_function()


def context(b: Bitboards, book: Database | None = None) -> np.ndarray:
    """The context array of the position ``b`` (its node limit unset: 0).
    With ``book`` (the classic database; the caller keeps it alive), a
    classic position with at most its number of pieces is searched down to
    the database's positions and scored there."""
    if b.width > 12 or b.width * b.stride > MAX_BITS or 3 * (b.stride + 1) >= 64:
        raise ValueError(f"a {b.width}x{b.height} board does not fit the solver")
    if (b.neutral & b.playable).bit_count() > 1:
        raise ValueError("more than one ban piece: a game has at most one")
    X = np.zeros(X_LEN, dtype=np.uint64)
    X[X_W] = b.width
    X[X_H] = b.height
    X[X_STRIDE] = b.stride
    X[X_TT_SKIP] = TT_MAX_SKIPPED_THREE if b.wide else TT_MAX_SKIPPED
    X[X_ORDER_SKIP] = ORDER_MAX_SKIPPED
    X[X_MIRROR] = MIRROR_EMPTY if b.variant.is_mirror_symmetric and not b.wide else NO_MIRROR
    X[X_MIRROR_AFTER] = MIRROR_AFTER
    X[X_LINES_FROM] = LINES_EMPTY if b.variant == Variant.classic() else NO_LINES
    X[X_BOTTOM : X_BOTTOM + 3] = words(b.bottom)
    X[X_PLAYABLE : X_PLAYABLE + 3] = words(b.playable)
    X[X_BONUS : X_BONUS + 3] = words(b.bonus)
    for k, c in enumerate(order_centre_first(b.width)):
        X[X_ORDER + k] = c
    for c, column in enumerate(b.columns):
        X[X_COLUMN + 3 * c : X_COLUMN + 3 * c + 3] = words(column)
    X[X_LINES : X_LINES + MAX_BITS] = _lines_through(b.width, b.height, b.playable)
    X[X_BOOK_EMPTY] = NO_BOOK
    if book is not None and book.covers(b.variant, b.empty):
        X[X_BOOK_EMPTY] = book.empty
        X[X_BOOK_KEYS] = book.keys.ctypes.data
        X[X_BOOK_VALUES] = book.values.ctypes.data
        X[X_BOOK_SIZE] = book.keys.size
        X[X_BOOK_SCORE] = _book_address()
    return X


@functools.lru_cache(maxsize=64)
def _lines_through(width: int, height: int, playable: int) -> np.ndarray:
    """How many lines of four cells (none of them forbidden) pass through
    each cell, by bit: the classic tie-break of move ordering (the centre
    lies on the most lines).  Computed once a board."""
    count = np.zeros(MAX_BITS, dtype=np.uint64)
    stride = height + 1
    forbidden = [(c, r) for c in range(width) for r in range(height) if not playable >> (c * stride + r) & 1]
    for line in lines_of_four(width, height, forbidden):
        count[[c * stride + r for c, r in line]] += 1
    count.setflags(write=False)
    return count


def _args(b: Bitboards, three: bool) -> tuple[Any, Any, Any]:
    """The position's bitboards as the instance of that width takes them."""
    if three:
        cur, mask, neutral = (tuple(U(w) for w in words(x)) for x in (b.cur, b.mask, b.neutral))
        return cur, mask, neutral
    return U(b.cur), U(b.mask), U(b.neutral)


def _three(b: Bitboards, three_words: bool | None) -> bool:
    """Whether to search ``b`` with three words (forced by ``three_words``,
    else when the board needs them)."""
    if three_words is None:
        return b.wide
    if not three_words and b.wide:
        raise ValueError(f"a {b.width}x{b.height} board does not fit one word")
    return three_words


def solve(b: Bitboards, weak: bool, X: np.ndarray, tt: np.ndarray, *, three_words: bool | None = None) -> int:
    """The exact score (``weak``: only its sign: 1, 0 or -1) of the position
    ``b``, narrowed by null-window searches; ``ABORTED`` if the search was
    stopped.  (The root loop runs in ``_search``, at ``depth = -1``.)
    ``three_words`` forces a width (the default: the narrowest that fits)."""
    X[X_WEAK] = 1 if weak else 0
    if b.empty == 0:
        return 0
    three = _three(b, three_words)
    cur, mask, neutral = _args(b, three)
    search, address = _instance(three)
    return int(search(cur, mask, neutral, b.empty, 0, 0, -1, True, X, tt, address))


def window(
    b: Bitboards, alpha: int, beta: int, X: np.ndarray, tt: np.ndarray, *, three_words: bool | None = None
) -> int:
    """The score of ``b`` if it lies in (alpha, beta), else a bound on the
    right side of the window; ``ABORTED`` if the search was stopped."""
    if b.empty == 0:
        return 0
    three = _three(b, three_words)
    cur, mask, neutral = _args(b, three)
    search, address = _instance(three)
    return int(search(cur, mask, neutral, b.empty, alpha, beta, 0, True, X, tt, address))
