"""The UCT search core: one compiled loop over a tree kept in flat arrays.

UCT as the classic pseudo-code (``../shared/reference/rules-and-uct.md``):

* TREEPOLICY: from the root, while the node is not terminal: if it has an
  untried action, EXPAND it (untried actions are taken in a random order,
  shuffled when the node is first reached); otherwise descend to
  BESTCHILD(v, c) = argmax Q(v')/N(v') + c * sqrt(2 ln N(v) / N(v')).
* DEFAULTPOLICY: uniformly random moves from the new node to the end.
* BACKUP: every node on the path gains a visit and the reward, seen from the
  player who made the move into that node: win 1, draw 0.5, loss 0; going
  up one level the reward becomes 1 - reward (the [0, 1] form of the
  pseudo-code's negation).

Variants on the same loop, switched by flags:

* ``tt``: nodes are positions, found through a transposition table (Zobrist
  keys), so every path to a position shares its statistics (UCT on a graph;
  BESTCHILD reads the child position's N and Q and the parent's N);
* ``solver`` (MCTS-Solver): terminal wins and draws are proven and proofs
  are backed up (a move to a proven win proves the parent lost for the
  player who moved into it; a node whose moves all lose is a proven win,
  all lose or draw a proven draw); BESTCHILD skips moves proven to lose and a
  proven node is a leaf that returns its value without a playout;
* ``policy``: random playouts, or "smart" ones that take an immediate win and
  block the opponent's immediate win;
* ``leaf``: a learnt value at the leaves (an n-tuple network,
  ``c4lab.agents.ntuple_net``): the leaf's value for the player who moved
  into it is the network's value of that afterstate, or a mix of it and the
  playout's result (``mix`` of the network, ``1 - mix`` of the playout);
* ``lgr`` 1 or 2: Last-Good-Reply with forgetting: after a won playout, each
  move of the winner becomes the stored reply to the move before it (lgr=1)
  or to the two moves before it (lgr=2, with the lgr=1 table as fallback);
  a stored reply that the loser played is forgotten; playouts try the stored
  reply first when it is legal.

Data layout (all preallocated by the caller, see ``Tree`` in ``uct.py``):

``nf`` float64 [nodes, 4]: visits, reward sum, mean, 1/sqrt(visits) -- the
    mean and the inverse square root are kept up to date by BACKUP so that
    BESTCHILD is one multiply-add per child.
``ni`` int32 [nodes, 6]: first edge, number of edges (-1 until the node is
    first reached), edges expanded so far, side to move, result of the
    position (kernel result code), proven value.
``nkey`` uint64 [nodes]: the position key (transposition table).
``emove`` uint8 / ``echild`` int32 [edges]: an edge's move code and child.
``meta`` int64: counters (nodes, edges, root, iterations run, ...).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
from llvmlite import ir as llvm_ir
from numba import carray, njit, types
from numba.extending import intrinsic

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents.ntuple_net import encode, weight_sum
from c4lab.compile_aside import on_disk as cached
from c4lab.rules import kernels as K
from c4lab.rules.kernels import U0, U1, U

# Node float fields.
F_VISITS = 0
F_QSUM = 1
F_MEAN = 2
F_INVSQRT = 3
NF_FIELDS = 4

# Node int fields.
I_FIRST_EDGE = 0
I_N_EDGES = 1
I_EXPANDED = 2
I_TURN = 3
I_RESULT = 4
I_PROVEN = 5
NI_FIELDS = 6

# Proven values, for the player who made the move into the node.
UNPROVEN = 0
PROVEN_WIN = 1
PROVEN_LOSS = 2
PROVEN_DRAW = 3

# meta fields.
M_NODES = 0
M_EDGES = 1
M_ROOT = 2
M_ITERATIONS = 3  # iterations run since the tree was made
M_FULL = 4  # 1 once a node or an edge could not be allocated
M_TT_USED = 5
META_LEN = 8

# Flags (an int64 array).
FL_TT = 0
FL_SOLVER = 1
FL_SMART = 2
FL_LGR = 3
FLAGS_LEN = 4

NO_MOVE = 255
MAX_PATH = 160  # longer than any game: 144 cells, one token each


# ---------------------------------------------------------------------------
# Allocation
# ---------------------------------------------------------------------------


@njit(inline="always")
def _new_node(nf, ni, nkey, meta, turn, result, key):
    """A fresh node (or -1 if the arrays are full)."""
    n = meta[M_NODES]
    if n >= ni.shape[0]:
        meta[M_FULL] = 1
        return -1
    meta[M_NODES] = n + 1
    nf[n, F_VISITS] = 0.0
    nf[n, F_QSUM] = 0.0
    nf[n, F_MEAN] = 0.0
    nf[n, F_INVSQRT] = 0.0
    ni[n, I_FIRST_EDGE] = 0
    ni[n, I_N_EDGES] = -1
    ni[n, I_EXPANDED] = 0
    ni[n, I_TURN] = turn
    ni[n, I_RESULT] = result
    proven = UNPROVEN
    if result == K.DRAW:
        proven = PROVEN_DRAW
    elif result != K.ONGOING:
        proven = PROVEN_WIN  # only the move's own side can win by it
    ni[n, I_PROVEN] = proven
    nkey[n] = key
    return n


def new_root(
    nf: np.ndarray, ni: np.ndarray, nkey: np.ndarray, meta: np.ndarray, tt_keys: np.ndarray, tt_nodes: np.ndarray,
    turn: int, result: int, key: np.uint64, use_tt: bool,
) -> int:
    """Start a tree: a root node for a position (returns its index).  Run
    in Python, with the compiled helpers' own source (``py_func``): compiled
    for one node a search, it was 0.17 s of every UCT agent's first start."""
    meta[:] = 0
    tt_keys[:] = U0
    tt_nodes[:] = -1
    root = int(_new_node.py_func(nf, ni, nkey, meta, turn, result, U(key)))
    if use_tt:
        _tt_insert.py_func(tt_keys, tt_nodes, meta, U(key), root)
    meta[M_ROOT] = root
    return root


@njit(inline="always")
def _tt_find(tt_keys, tt_nodes, key):
    """The node of ``key``, or -1 (open addressing, linear probing)."""
    mask = U(tt_keys.shape[0] - 1)
    i = key & mask
    while True:
        node = tt_nodes[i]
        if node < 0:
            return -1
        if tt_keys[i] == key:
            return node
        i = (i + U1) & mask


@njit(inline="always")
def _tt_insert(tt_keys, tt_nodes, meta, key, node):
    """Add ``key -> node``; False if the table is too full (over 3/4)."""
    size = tt_keys.shape[0]
    if 4 * (meta[M_TT_USED] + 1) > 3 * size:
        meta[M_FULL] = 1
        return False
    mask = U(size - 1)
    i = key & mask
    while tt_nodes[i] >= 0:
        i = (i + U1) & mask
    tt_keys[i] = key
    tt_nodes[i] = node
    meta[M_TT_USED] += 1
    return True


@njit(cache=True)
def tt_lookup(tt_keys, tt_nodes, key):
    """``_tt_find`` as a kernel (tree reuse looks positions up by key)."""
    return _tt_find(tt_keys, tt_nodes, U(key))


@njit(cache=True, nogil=True)
def compact(nf, ni, nkey, emove, echild, root, dnf, dni, dnkey, demove, dechild, dmeta,
            dtt_keys, dtt_nodes, use_tt, remap):
    """Copy the part of a tree below ``root`` into fresh arrays (``d...``),
    so that a tree kept between moves drops the branches the game left and
    starts again with room to grow.  ``remap`` (one entry per source node)
    maps source nodes to copies; in a graph (``use_tt``) a shared node is
    copied once.  The copy's root is node 0."""
    dmeta[:] = 0
    dtt_keys[:] = U0
    dtt_nodes[:] = -1
    remap[:] = -1
    stack = np.empty(ni.shape[0], dtype=np.int64)
    top = 0
    remap[root] = 0
    dmeta[M_NODES] = 1
    stack[top] = root
    top += 1
    while top > 0:
        top -= 1
        v = stack[top]
        nv = remap[v]
        dnf[nv, :] = nf[v, :]
        dni[nv, :] = ni[v, :]
        dnkey[nv] = nkey[v]
        if use_tt:
            _tt_insert(dtt_keys, dtt_nodes, dmeta, nkey[v], nv)
        n = ni[v, I_N_EDGES]
        if n < 0:
            continue
        first = ni[v, I_FIRST_EDGE]
        dfirst = dmeta[M_EDGES]
        dmeta[M_EDGES] = dfirst + n
        dni[nv, I_FIRST_EDGE] = dfirst
        for i in range(n):
            demove[dfirst + i] = emove[first + i]
            dechild[dfirst + i] = -1
            if i < ni[v, I_EXPANDED]:
                child = echild[first + i]
                if remap[child] < 0:
                    remap[child] = dmeta[M_NODES]
                    dmeta[M_NODES] += 1
                    stack[top] = child
                    top += 1
                dechild[dfirst + i] = remap[child]
    dmeta[M_ROOT] = 0
    return dmeta[M_NODES]


@njit(inline="always")
def _init_edges(geo, st, ni, emove, echild, meta, node, s, legal):
    """Give ``node`` one edge per legal move, in a random order (the order in
    which EXPAND tries them).  False if the edge arrays are full."""
    n = K.legal_codes(geo, st, legal)
    first = meta[M_EDGES]
    if first + n > emove.shape[0]:
        meta[M_FULL] = 1
        return False, s
    meta[M_EDGES] = first + n
    for i in range(n):
        emove[first + i] = legal[i]
        echild[first + i] = -1
    for i in range(n - 1, 0, -1):  # Fisher-Yates
        s, x = K.next_random(s)
        j = np.int64(K.random_below(x, U(i + 1)))
        tmp = emove[first + i]
        emove[first + i] = emove[first + j]
        emove[first + j] = tmp
    ni[node, I_FIRST_EDGE] = first
    ni[node, I_N_EDGES] = n
    return True, s


# ---------------------------------------------------------------------------
# Playouts with a policy (smart and/or Last-Good-Reply)
# ---------------------------------------------------------------------------


@njit(inline="always")
def _random_move_code(geo, st, s):
    """A random legal move code, drawn like a random playout's token: a
    column uniformly among the non-full ones; after a bonus landing,
    declining or each legal ban column uniformly.  The ban's legality is
    asked of ``K.check`` (called, not inlined: the rare bonus landing no
    longer brings two inlined copies of ``K.ban_error`` and its win test
    into the policy playout, 0.45 s of its 2.3 s compile, 2026-12-05)."""
    s, x = K.next_random(s)
    c = U(K.open_column(st, K.random_below(x, U(K.open_count(st)))))
    code = c
    if c * K.STRIDE + U(K.landing_row(st, c)) == U(K.bonus_cell(geo)):
        n = U0
        for b in range(U(K.board_width(geo))):
            n += U(K.check(geo, st, np.int64(c + K.STRIDE * (b + U1))) == K.OK)
        s, x = K.next_random(s)
        k = K.random_below(x, n + U1)  # 0: decline; k: the k-th legal ban column
        if k > U0:
            for b in range(U(K.board_width(geo))):
                if K.check(geo, st, np.int64(c + K.STRIDE * (b + U1))) == K.OK:
                    k -= U1
                    if k == U0:
                        code = c + K.STRIDE * (b + U1)
                        break
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" in kernels.py)
    return code, s


@njit(inline="always")
def _lowest_column(columns):
    """The lowest set bit of a column mask, as a column."""
    c = U0
    while not (columns >> c) & U1:
        c += U1
    return c


@njit(inline="always")
def _tactical_code(geo, st, bitboard):
    """A column that wins now for the side to move, else one that blocks the
    opponent's immediate win, else ``NO_MOVE``.  (One loop over the two
    sides: one inlined copy of the win test, not two, to compile.)"""
    side = U(K.to_move(st))
    code = U(NO_MOVE)
    for other in range(2):
        columns = K.winning_columns_encoded(geo, st, side ^ U(other), bitboard)
        if columns != U0:
            code = _lowest_column(columns)
            break
    geo, st = geo, st  # noqa: PLW0127  (see "Inlined helpers" in kernels.py)
    return code


@njit(inline="always")
def policy_playout(geo, st, s, smart, lgr, lgr1, lgr2, moves, nmoves, bitboard):
    """A playout that records its moves in ``moves`` (after the ``nmoves``
    moves of the tree path).  Each move: with ``smart``, an immediate win,
    else a block of the opponent's immediate win; with ``lgr``, the stored
    reply to the last two moves (lgr=2) or the last move, when legal; else
    random.  ``bitboard`` is the board's encoding (``K.fits_one_word``, see
    ``K.apply_encoded``).  Returns ``(result, rng, nmoves)``."""
    result = U(K.result_of(st))
    while result == U(K.ONGOING):
        code = U(NO_MOVE)
        if smart:
            code = _tactical_code(geo, st, bitboard)
        side = np.int64(K.to_move(st))
        # (``check`` is given an int64 and writeable arrays, the types
        # ``K.compile_check`` compiles: ``master``'s child has it on disk.)
        if code == U(NO_MOVE) and lgr >= 2 and nmoves >= 2:
            reply = lgr2[side, moves[nmoves - 2], moves[nmoves - 1]]
            if reply != NO_MOVE and K.check(geo, st, np.int64(reply)) == K.OK:
                code = U(reply)
        if code == U(NO_MOVE) and lgr >= 1 and nmoves >= 1:
            reply = lgr1[side, moves[nmoves - 1]]
            if reply != NO_MOVE and K.check(geo, st, np.int64(reply)) == K.OK:
                code = U(reply)
        if code == U(NO_MOVE):
            code, s = _random_move_code(geo, st, s)
        _, _, result = K.apply_encoded(geo, st, code, bitboard)
        if nmoves < moves.shape[0]:
            moves[nmoves] = code
            nmoves += 1
    return result, s, nmoves


#: The C signature of the policy playout (``_policy_function``): geometry,
#: state, rng, smart (0 or 1), lgr, the two reply tables, the move record,
#: two int64s (the number of moves recorded, read and updated in place, and
#: the side that made the first of them) -> rng.
POLICY_SIGNATURE = types.uint64(
    types.CPointer(types.uint8), types.CPointer(types.uint16), types.uint64, types.int64, types.int64,
    types.CPointer(types.uint8), types.CPointer(types.uint8), types.CPointer(types.uint8), types.CPointer(types.int64),
)


def _policy_source(bitboard: bool) -> Any:
    """``policy_playout`` as a C function of one win-test encoding
    (``bitboard``, a constant of the closure: ``K.board_kind``), called at
    its address by the search (``policy_address``), not linked in: a search
    that linked it optimised and compiled it a second time (0.4 s of a first
    ``master`` move's CPU).  One per encoding, not one for every board that
    reads the encoding at each move: each compiles only its own win test
    (1.5-1.6 s against 1.8 s, 2026-12-05).  The arrays come as raw pointers
    (``Tree``'s shapes), with no reference counts to keep.  With ``lgr`` it
    also learns the replies of the simulated game (tree path and playout):
    here, not in the search, which then has nothing of Last-Good-Reply to
    compile (the levels' search shares its compilation with ``master``'s)."""

    def policy_playout_function(geo_p, st_p, s, smart, lgr, lgr1_p, lgr2_p, moves_p, nmoves_p):  # type: ignore[no-untyped-def]
        geo = carray(geo_p, K.GEO_LEN)
        st = carray(st_p, K.STATE_LEN)
        lgr1 = carray(lgr1_p, (2, 256))
        lgr2 = carray(lgr2_p, (2, 256, 256))
        moves = carray(moves_p, MAX_PATH)
        nmoves = carray(nmoves_p, 2)
        _, s, recorded = policy_playout(geo, st, s, smart != 0, lgr, lgr1, lgr2, moves, nmoves[0], bitboard)
        if lgr > 0:
            _learn_replies(lgr, lgr1, lgr2, moves, recorded, nmoves[1], U(K.result_of(st)))
        nmoves[0] = recorded
        return s

    return policy_playout_function


@cache
def _policy_function(bitboard: bool) -> Any:
    """The compiled policy playout of one encoding (``_policy_source``),
    kept here: its machine code must outlive every search that calls its
    address."""
    return K.cached_cfunc(_policy_source(bitboard), POLICY_SIGNATURE)


def search_on_disk(valued: bool = False) -> bool:
    """Whether numba's cache on disk holds the search (no table; with a
    learnt value at the leaves or not): the levels' UCT compiles it too."""
    return cached(_search_kernel(False, valued).py_func)


def on_disk(bitboard: bool, valued: bool = False) -> bool:
    """Whether numba's cache on disk holds the search (``search_on_disk``)
    and the policy playouts of the win-test encoding ``bitboard``
    (``K.board_kind``): what ``master``'s UCT compiles on a first start
    (``c4lab.compile_aside``)."""
    return search_on_disk(valued) and cached(_policy_source(bitboard))


def policy_address(bitboard: bool) -> int:
    """The address of the policy playout's C function, compiled (or loaded
    from numba's cache) the first time a process asks."""
    address = _policy_function(bitboard).address
    assert address is not None  # compiled, or loaded from the cache
    return int(address)


@intrinsic
def _call_policy(typingctx, address, geo, st, s, smart, lgr, lgr1, lgr2, moves, nmoves):  # type: ignore[no-untyped-def]
    """Run the policy playout at ``address`` (``policy_address``) on these
    arrays (``nmoves``: two int64s, the moves recorded, updated, and the
    side that made the first); returns the new rng state (the result is the
    state's)."""
    sig = types.uint64(types.uint64, geo, st, s, smart, lgr, lgr1, lgr2, moves, nmoves)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        fn_address, geo_v, st_v, s_v, smart_v, lgr_v, lgr1_v, lgr2_v, moves_v, nmoves_v = args
        pointers = [
            context.make_array(t)(context, builder, v).data
            for t, v in zip(signature.args[1:], (geo_v, st_v, s_v, smart_v, lgr_v, lgr1_v, lgr2_v, moves_v, nmoves_v))
            if isinstance(t, types.Array)
        ]
        geo_p, st_p, lgr1_p, lgr2_p, moves_p, nmoves_p = pointers
        i64 = llvm_ir.IntType(64)
        smart_i = builder.zext(smart_v, i64)
        fn_type = llvm_ir.FunctionType(
            i64, [geo_p.type, st_p.type, i64, i64, i64, lgr1_p.type, lgr2_p.type, moves_p.type, nmoves_p.type]
        )
        return builder.call(
            builder.inttoptr(fn_address, fn_type.as_pointer()),
            [geo_p, st_p, s_v, smart_i, lgr_v, lgr1_p, lgr2_p, moves_p, nmoves_p],
        )

    return sig, codegen


@njit(inline="always")
def _learn_replies(lgr, lgr1, lgr2, moves, nmoves, first_side, result):
    """Last-Good-Reply with forgetting, after one simulated game whose moves
    (tree path and playout) are ``moves[:nmoves]``, the first made by
    ``first_side``."""
    if result != U(K.WIN_A) and result != U(K.WIN_B):
        return
    winner = np.int64(result - U(K.WIN_A))
    for t in range(1, nmoves):
        side = (first_side + t) % 2
        prev = moves[t - 1]
        move = moves[t]
        if side == winner:
            lgr1[side, prev] = move
            if lgr >= 2 and t >= 2:
                lgr2[side, moves[t - 2], prev] = move
        else:
            if lgr1[side, prev] == move:
                lgr1[side, prev] = NO_MOVE
            if lgr >= 2 and t >= 2 and lgr2[side, moves[t - 2], prev] == move:
                lgr2[side, moves[t - 2], prev] = NO_MOVE


# ---------------------------------------------------------------------------
# The search loop
# ---------------------------------------------------------------------------


@njit(inline="always")
def _reward(result, turn):
    """The reward of a finished game for the player who moved into a node
    whose side to move is ``turn``: win 1, draw 0.5, loss 0."""
    if result == U(K.DRAW):
        return 0.5
    mover = U1 - U(turn)
    return 1.0 if result == U(K.WIN_A) + mover else 0.0


@njit(inline="always")
def _step(geo, st, code, moves, nmoves, key, use_tt, bitboard):
    """Play ``code`` on the way down: apply it, record it for the playout's
    replies, and update the position key.  Returns ``(result, nmoves, key)``."""
    piece = K.PIECE_A + np.int64(K.to_move(st))
    cell, ban_cell, result = K.apply_encoded(geo, st, code, bitboard)
    if nmoves < moves.shape[0]:
        moves[nmoves] = code
        nmoves += 1
    if use_tt:
        key ^= K.ZOBRIST[piece, cell]
        if ban_cell != U(K.NO_CELL):
            key ^= K.ZOBRIST[K.BAN, ban_cell]
    geo, st, moves = geo, st, moves  # noqa: PLW0127  (see "Inlined helpers" in kernels.py)
    return result, nmoves, key


@njit(inline="always")
def _best_child(nf, ni, echild, node, c, solver):
    """BESTCHILD(node, c): the edge maximising mean + c * sqrt(2 ln N / n)
    over the expanded children; with the solver, never a child proven lost
    for the mover.  -1 if there is none."""
    first = ni[node, I_FIRST_EDGE]
    k = c * np.sqrt(2.0 * np.log(nf[node, F_VISITS]))
    best = -1
    best_score = -np.inf
    for e in range(first, first + ni[node, I_EXPANDED]):
        child = echild[e]
        if solver and ni[child, I_PROVEN] == PROVEN_LOSS:
            continue
        score = nf[child, F_MEAN] + k * nf[child, F_INVSQRT]
        if score > best_score:
            best_score = score
            best = e
    return best


@njit(inline="always")
def _prove(ni, emove, echild, node):
    """MCTS-Solver: the proven value of ``node`` from its children, if any
    (for the player who moved into ``node``)."""
    n = ni[node, I_N_EDGES]
    if n < 0:
        return UNPROVEN
    first = ni[node, I_FIRST_EDGE]
    all_proven = ni[node, I_EXPANDED] == n
    any_draw = False
    for e in range(first, first + ni[node, I_EXPANDED]):
        p = ni[echild[e], I_PROVEN]
        if p == PROVEN_WIN:
            return PROVEN_LOSS  # the side to move here has a winning move
        if p == PROVEN_DRAW:
            any_draw = True
        elif p == UNPROVEN:
            all_proven = False
    if not all_proven:
        return UNPROVEN
    return PROVEN_DRAW if any_draw else PROVEN_WIN


def search(
    geo: np.ndarray, root_state: np.ndarray, nf: np.ndarray, ni: np.ndarray, nkey: np.ndarray,
    emove: np.ndarray, echild: np.ndarray, meta: np.ndarray, tt_keys: np.ndarray, tt_nodes: np.ndarray,
    lgr1: np.ndarray, lgr2: np.ndarray, st: np.ndarray, path: np.ndarray, moves: np.ndarray,
    rng: np.ndarray, iterations: int, c: float, flags: np.ndarray, leaf: Leaf | None = None,
) -> int:
    """Run up to ``iterations`` UCT iterations from ``meta[M_ROOT]`` (whose
    position is ``root_state``); returns how many ran (fewer only when the
    solver has proven the root).  ``rng[0]`` carries the random state.

    Runs the search compiled for the playouts (random, or with a policy) and
    the agent's flags, the same on every board; random playouts go through
    the playout function of the board's kind (``K.playout_address``): a new
    kind of board compiles that playout only, not the search again.
    ``leaf``: a learnt value for the leaves (see the module).
    """
    plain = flags[FL_SMART] == 0 and flags[FL_LGR] == 0
    kernel = _search_kernel(bool(flags[FL_TT]), leaf is not None)
    if plain:
        playout = K.playout_address(*K.board_kind(geo))
    else:  # the shapes the policy playout's C function reads them with
        assert lgr1.shape == (2, 256) and lgr2.shape == (2, 256, 256) and moves.shape == (MAX_PATH,)
        playout = policy_address(K.board_kind(geo)[1])
    v = leaf or NO_LEAF
    return int(kernel(
        geo, root_state, nf, ni, nkey, emove, echild, meta, tt_keys, tt_nodes,
        lgr1, lgr2, st, path, moves, rng, iterations, c, flags,
        v.weights, v.ptr, v.inst, v.pw, v.thr, v.mix, v.codes, v.idx, np.uint64(playout),
    ))


class Leaf:
    """A network's arrays for the search's leaves, with the scratch the
    features are computed in, and the share ``mix`` of its value in a
    leaf's (the rest is the playout's)."""

    def __init__(self, weights: np.ndarray, ptr: np.ndarray, inst: np.ndarray, pw: np.ndarray, thr: np.ndarray,
                 instances: int, mix: float) -> None:
        """``weights`` and the layout's ``cell_ptr``, ``cell_inst``,
        ``cell_add`` and ``threat_base`` for ``instances`` tuple instances
        (``c4lab.agents.ntuple_net``)."""
        self.weights, self.ptr, self.inst, self.pw, self.thr = weights, ptr, inst, pw, thr
        self.mix = float(mix)
        self.codes = np.zeros(K.NCELLS, dtype=np.int64)
        self.idx = np.zeros(instances + thr.shape[0], dtype=np.int64)


NO_LEAF = Leaf(np.zeros((2, 1), dtype=np.float32), np.zeros(K.NCELLS + 1, dtype=np.int64),
               np.zeros(1, dtype=np.int64), np.zeros((1, 4), dtype=np.int64), np.zeros(0, dtype=np.int64), 1, 0.0)


@cache
def _search_kernel(use_tt: bool, valued: bool) -> Any:
    """The search loop compiled for one kind of search: ``use_tt``, ``valued``
    (a learnt value at the leaves, the arrays after ``flags``).  They are
    constants of the closure: numba compiles (and caches) each combination
    on its own and drops the branches of the others (table, network) before
    it types anything.  The playouts (random, or a policy's) and the solver
    are not: they are read from ``flags`` as the search runs, so the levels
    (random playouts), ``master`` (a policy and the solver), ``uct-smart``
    and ``mcts-solver`` share one compilation (``master`` after a level
    compiled 1.6-1.9 s less; its warm rates within this machine's noise).
    The board is not one of them either:
    the win-test encoding of the moves down the tree is read from ``geo``
    (``K.apply``), and a random playout is a call of the function whose
    address is ``playout`` (``K.playout_address``, compiled per kind of
    board), so one compilation serves every board (it was compiled per kind
    of board too, and a second kind of board cost a whole second search).
    With a policy, ``playout`` is the policy playout's address
    (``policy_address``), one for each win-test encoding."""

    @njit(cache=True, nogil=True)
    def search_kernel(
        geo, root_state, nf, ni, nkey, emove, echild, meta, tt_keys, tt_nodes,
        lgr1, lgr2, st, path, moves, rng, iterations, c, flags,
        lweights, lptr, linst, lpw, lthr, mix, lcodes, lidx, playout,
    ):
        s = U(rng[0])
        bitboard = K.fits_one_word(geo)
        legal = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        recorded = np.empty(2, dtype=np.int64)  # the policy playout's count of moves, and who made the first
        smart = flags[FL_SMART] != 0
        lgr = flags[FL_LGR]
        plain = not smart and lgr == 0
        solver = flags[FL_SOLVER] != 0
        root = meta[M_ROOT]
        root_key = nkey[root]
        recorded[1] = np.int64(K.to_move(root_state))  # the side that makes the first move of each simulation
        done = 0
        for _ in range(iterations):
            if solver and ni[root, I_PROVEN] != UNPROVEN:
                break  # the root is solved: nothing left to learn
            if valued:
                st[:] = root_state  # every cell: the leaf's features read them (``restore`` may skip them)
            else:
                K.restore(geo, st, root_state)
            node = root
            key = root_key
            depth = 0
            path[0] = root
            nmoves = 0
            # TREEPOLICY
            while ni[node, I_RESULT] == K.ONGOING and not (solver and ni[node, I_PROVEN] != UNPROVEN):
                if ni[node, I_N_EDGES] < 0:
                    ok, s = _init_edges(geo, st, ni, emove, echild, meta, node, s, legal)
                    if not ok:
                        break  # no room: this node stays a leaf
                first = ni[node, I_FIRST_EDGE]
                expanded = ni[node, I_EXPANDED]
                expanding = expanded < ni[node, I_N_EDGES]
                if expanding:
                    # EXPAND the next untried action (unless the tree is full:
                    # then this node is the leaf the playout starts from).
                    if meta[M_NODES] >= ni.shape[0]:
                        meta[M_FULL] = 1
                        break
                    e = first + expanded
                else:
                    e = _best_child(nf, ni, echild, node, c, solver)
                    if e < 0:
                        # Every move loses (reached through another path of the
                        # graph before this node was re-proven): prove it now.
                        ni[node, I_PROVEN] = _prove(ni, emove, echild, node)
                        break
                # One call site for both (each inlined copy of a move costs
                # compilation time).
                result, nmoves, key = _step(geo, st, emove[e], moves, nmoves, key, use_tt, bitboard)
                if not expanding:
                    node = echild[e]
                    depth += 1
                    path[depth] = node
                    continue
                child = -1
                if use_tt:
                    child = _tt_find(tt_keys, tt_nodes, key)
                if child < 0:
                    child = _new_node(nf, ni, nkey, meta, np.int32(K.to_move(st)), np.int32(result), key)
                    if use_tt:
                        # A full table leaves the node unreachable by its
                        # key, which only costs sharing.
                        _tt_insert(tt_keys, tt_nodes, meta, key, child)
                echild[e] = child
                ni[node, I_EXPANDED] = expanded + 1
                depth += 1
                path[depth] = child
                node = child
                break
            # DEFAULTPOLICY
            proven = ni[node, I_PROVEN] if solver else UNPROVEN
            turn = ni[node, I_TURN]
            if ni[node, I_RESULT] != K.ONGOING:
                result = U(ni[node, I_RESULT])
                reward = _reward(result, turn)
            elif proven != UNPROVEN:
                result = U(K.ONGOING)
                reward = 1.0 if proven == PROVEN_WIN else (0.0 if proven == PROVEN_LOSS else 0.5)
            else:
                learnt = 0.0
                if valued:  # the afterstate's value for the player who moved into the leaf, in [0, 1]
                    encode(geo, st, lcodes, lidx, lptr, linst, lpw, lthr)
                    learnt = 0.5 + 0.5 * np.tanh(weight_sum(lweights, 1 - turn, lidx))
                if valued and mix >= 1.0:
                    reward = learnt
                elif plain:
                    s = K.call_playout(playout, geo, st, s)
                    reward = _reward(U(K.result_of(st)), turn)
                else:
                    recorded[0] = nmoves
                    s = _call_policy(playout, geo, st, s, smart, lgr, lgr1, lgr2, moves, recorded)
                    nmoves = recorded[0]
                    reward = _reward(U(K.result_of(st)), turn)
                if valued and mix < 1.0:
                    reward = mix * learnt + (1.0 - mix) * reward
            # BACKUP
            for d in range(depth, -1, -1):
                v = path[d]
                visits = nf[v, F_VISITS] + 1.0
                qsum = nf[v, F_QSUM] + reward
                nf[v, F_VISITS] = visits
                nf[v, F_QSUM] = qsum
                nf[v, F_MEAN] = qsum / visits
                nf[v, F_INVSQRT] = 1.0 / np.sqrt(visits)
                reward = 1.0 - reward
            if solver:
                for d in range(depth - 1, -1, -1):
                    v = path[d]
                    if ni[v, I_PROVEN] != UNPROVEN:
                        break
                    p = _prove(ni, emove, echild, v)
                    if p == UNPROVEN:
                        break
                    ni[v, I_PROVEN] = p
            done += 1
        meta[M_ITERATIONS] += done
        rng[0] = s
        return done

    return search_kernel
