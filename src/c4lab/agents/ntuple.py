"""``ntuple``: plays from an n-tuple network learnt by self-play.

``ntuple:weights=FILE`` loads a network written by ``c4lab train ntuple``
(``c4lab.agents.ntuple_net``) and plays on that network's board only (on
another board it says which board the file is for).  Without ``weights``
the agent plays the network shipped for the classic board
(``c4lab/data/ntuple-7x6.npz``); on a board with no shipped network it
plays ``heuristic``'s move and says so in its analysis (``fallback``), so
that the agent can be offered on every board of the page.

``depth=0`` (the default) is the greedy network: a move that wins at once
is played; else, among the moves after which the opponent cannot win at
once (all of them if every move allows it), the one whose afterstate the
network values most.  So a threat is blocked with a stone or, on a board
with a bonus cell, with the ban piece of a bonus move (which blocking by
column alone missed: 86 % of the 8x6/Xc3/Bf4 probes kept the value, 88 %
now).

Two test-time searches wrap the network (Scheiermann and Konen's idea:
no search in training, a search when it plays):

* ``search=puct`` (the default with ``time=`` or ``iterations=``) is
  their PUCT (``c4lab.agents.ntuple_puct``): the network as every move's
  prior and every leaf's value (mixed with a one-ply look-ahead,
  ``look=``), no playouts, ``iterations=N`` (1000 by default) or
  ``time=T``; ``threads=2`` searches one tree on two threads (about 1.9
  times the iterations in the same time on this machine's two cores; off
  by default, so that an agent's strength does not depend on what else
  the machine runs).
* ``search=alphabeta`` (the default with ``depth=``) searches ``D`` plies
  with alpha-beta (negamax) and values the leaves with the network (the
  afterstate of the leaf's last move, from its mover's view), finished
  games exactly, with a transposition table (the best move of the last
  depth first) and no allocation below the root; with ``time=T`` it
  deepens for ``T`` seconds a move.

On the classic board's probe positions (three sets of 400) the shipped
network (190 tuples, 86 M games) keeps the value in 95.0 % greedy, 98.0 %
with PUCT at ``time=0.2`` and 97.4 % with PUCT at 1000 iterations (the
150-tuple network shipped before: 94.5, 97.8 and 96.8 %; alpha-beta at
``time=0.2`` 97.5 % on one set against 96.8 %; with an earlier network,
alpha-beta at ``time=1`` kept 89.5 %, PUCT at 300 and 3000 iterations
91.5 and 91.8 %, UCT with the network at its leaves,
``master:weights=...``, 91.5 %).  PUCT's ``c`` and the temperature of
its priors are Scheiermann and Konen's 1 and 1: on 800 other probes
(seeds 21 and 23, never used to pick a network) at 20,000 iterations,
``c`` 0.5, 1, 2 and 4 and temperatures 0.5, 1 and 2 kept 97.9 to 98.5 %
(``c`` 1: 98.1 %, ``c`` 2: 98.5 %, three probes apart): flat within the
noise, so the published values stay.  One change to their PUCT pays: a
new leaf backs up its network value mixed half and half with a one-ply
look-ahead over the children its expansion has just valued (``look=0.5``;
``look=0`` is their PUCT; ``c4lab.agents.ntuple_puct``).  At ``time=0.2``
on the 30-minute 150-tuple network it keeps 97.8 % of the 1,200 probes
against 97.2 %, and 98.0 % of the 800 held-out ones against 97.8 %;
``look`` 0.25 and 0.75 kept 97.4 and 97.7 % of the 1,200.  The shipped
network at 20,000 iterations (no clock, no noise from it): 98.1 against
98.0 % of the 1,200, 98.75 against 98.15 % of the 800, never worse on a
set of 400.  Moving first from the empty board
against ``perfect:ties=random`` (Thill's measure) it wins 275 of 300
games greedy (the networks before it 272 and 265) and 100 of 100 with PUCT at
``time=0.2``.  Ties are broken
at random (``seed=``).
"""

from __future__ import annotations

import math
import random
import threading
import time as _time
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents.base import (
    MAX_SECONDS,
    Agent,
    Analysis,
    Budget,
    MoveStats,
    Param,
    SpecError,
    make_agent,
    register,
    seed_value,
)
from c4lab.agents.ntuple_net import (
    BANNED,
    STONE_A,
    STONE_B,
    Network,
    NetworkError,
    afterstate_values,
    encode,
    largest,
    move_values,
    play_move,
    undo,
)
from c4lab.agents.ntuple_puct import M_ITER, PROVEN, Tree
from c4lab.agents.ntuple_puct import run as puct_run
from c4lab.rules import Move, Position, Variant
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error

#: The network shipped in the package, by board.
SHIPPED = {"7x6": "ntuple-7x6.npz"}
INF = 1e9
#: PUCT's settings (Scheiermann and Konen's; others measured no better: see the docstring).
PUCT_C, PUCT_TEMP = 1.0, 1.0
#: The weight of a new leaf's one-ply look-ahead in PUCT (``ntuple_puct.run``; measured: see the docstring).
PUCT_LOOK = 0.5
PUCT_ITERATIONS = 1000  # a move's iterations when neither ``iterations`` nor ``time`` is given
PUCT_CHUNK = 500  # iterations between two looks at the clock
PUCT_NODES = 1 << 20  # the most nodes of a tree (the search stops when it is full)
MAX_THREADS = 16  # the most threads of one PUCT search


def shipped_path(board: str) -> Path | None:
    """The file of the network shipped for ``board``, ``None`` when none is."""
    name = SHIPPED.get(board)
    if name is None:
        return None
    path = shipped_folder() / name
    return path if path.exists() else None


def shipped_folder() -> Path:
    """The package's folder of shipped networks (never trained over)."""
    return Path(str(resources.files("c4lab") / "data"))


@lru_cache(maxsize=8)
def _load(path: str, stamp: float) -> Network:
    """A network by file (cached by path and modification time: every agent
    of an arena process shares one copy of the tables)."""
    return Network.load(path)


def load_network(path: str | Path) -> Network:
    """``Network.load`` through a per-process cache."""
    if not str(path).strip():
        raise NetworkError("weights= is empty: give the network's file (weights=net.npz)")
    path = Path(path).expanduser()  # weights=~/net.npz, as a shell would read it
    stamp = path.stat().st_mtime if path.exists() else 0.0
    return _load(str(path), stamp)


@njit(cache=True, nogil=True)
def _children(geo, st, saved, moves, n, depth, values, results, codes, idx, weights, ptr, inst, pw, log,
              drop_ptr, drop, thr, nodes):
    """Every child of ``st``: its exact value when the move ends the game (a
    win is worth more than any learnt value, and more the sooner it comes),
    else the network's value of its afterstate (``afterstate_values``, as
    greedy play and PUCT read them).  Returns the index of a move that wins
    at once, or -1."""
    afterstate_values(geo, st, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                      weights, drop_ptr, drop, thr)
    nodes[0] += n
    win = -1
    for k in range(n):
        if results[k] != K.ONGOING:
            values[k] *= 2.0 + 0.01 * depth
            if values[k] > 0.0 and win < 0:
                win = k
    return win


#: Transposition table of the search: entries (a power of two).
TT_SIZE = 1 << 18
TT_EXACT, TT_LOWER, TT_UPPER = 0, 1, 2
#: How often (in nodes entered, a power of two) alpha-beta reads its stop
#: flag: about every 2 ms at the 150,000 nodes a second of the shipped network.
STOP_EVERY = 256
#: The stop flag of a search nothing stops.
_NEVER = np.zeros(1, dtype=np.uint8)


@njit(inline="always")
def _best_first(scores, n, order):
    """``order[:n]``: the indices of ``scores[:n]``, highest score first,
    ties in index order (an insertion sort: a dozen moves at most, and no
    ``np.argsort``, whose quicksort took 1-2 s of a first search to compile)."""
    for j in range(n):
        k = j
        while k > 0 and scores[order[k - 1]] < scores[j]:
            order[k] = order[k - 1]
            k -= 1
        order[k] = j


@njit(inline="always")
def _rekey(key, n, log, codes):
    """The position key after ``play_move`` changed ``n`` cells (``log``):
    pieces and ban pieces that appeared (``K.ZOBRIST``, as UCT's keys)."""
    for k in range(n):
        cell = log[k, 0]
        new = codes[cell]
        if new == STONE_A:
            key ^= K.ZOBRIST[K.PIECE_A, cell]
        elif new == STONE_B:
            key ^= K.ZOBRIST[K.PIECE_B, cell]
        elif new == BANNED:
            key ^= K.ZOBRIST[K.BAN, cell]
    return key


@njit(inline="always")
def _tt_store(tt_key, tt_val, tt_info, slot, key, value, move, depth, alpha, beta):
    """Remember ``value`` of the position ``key`` searched ``depth`` plies
    with the window (``alpha``, ``beta``), and its best ``move``."""
    flag = TT_UPPER if value <= alpha else (TT_LOWER if value >= beta else TT_EXACT)
    tt_key[slot] = key
    tt_val[slot] = value
    tt_info[slot] = (move << 8) | (np.int64(min(depth, 63)) << 2) | flag


@njit(cache=True)
def _negamax(geo, st, depth, alpha, beta, key, codes, idx, weights, ptr, inst, pw, drop_ptr, drop, thr, tt_key,
             tt_val, tt_info, nodes, stop):
    """The value of ``st`` for its side to move, ``depth`` plies deep
    (alpha-beta, fail-soft): a leaf is the afterstate of a move, valued by
    the network for its mover, or exactly when the game ended.  Children are
    searched best first: the transposition table's move, then the order of
    their afterstate values (which the leaves' pass computes anyway).

    A loop over an explicit stack of plies, not a recursion (numba cannot
    load a recursive function from its cache); everything is allocated
    once.  ``nodes[0]`` counts afterstates.  Every ``STOP_EVERY`` nodes it
    reads ``stop[0]`` (set from another thread: the kernel runs without the
    GIL), and once it is set it returns NaN at once: the search is
    abandoned, ``st`` and the features left as they are (the caller's
    copies), the table holding only nodes that were settled."""
    deep = depth + 1
    mv = np.empty((deep, K.MAX_LEGAL), dtype=np.uint8)
    val = np.empty((deep, K.MAX_LEGAL), dtype=np.float64)
    res = np.empty((deep, K.MAX_LEGAL), dtype=np.int64)
    order = np.empty((deep, K.MAX_LEGAL), dtype=np.int64)
    sv = np.empty((deep, st.shape[0]), dtype=st.dtype)
    lg = np.zeros((deep, 4, 2), dtype=np.int64)
    count = np.zeros(deep, dtype=np.int64)  # moves at each ply
    at = np.zeros(deep, dtype=np.int64)  # the next child to search
    best = np.zeros(deep, dtype=np.float64)
    best_move = np.zeros(deep, dtype=np.int64)
    lo = np.zeros(deep, dtype=np.float64)
    hi = np.zeros(deep, dtype=np.float64)
    keys = np.zeros(deep, dtype=np.uint64)
    slots = np.zeros(deep, dtype=np.int64)
    changed = np.zeros(deep, dtype=np.int64)
    mask = np.uint64(tt_key.shape[0] - 1)
    p = 0
    lo[0], hi[0], keys[0] = alpha, beta, key
    ret = 0.0
    entering = True
    entered = 0
    while True:
        if entering:  # a new node at ply p: the table, then its children's afterstates
            entering = False
            entered += 1
            if (entered & (STOP_EVERY - 1)) == 0 and stop[0] != 0:
                return np.nan
            d = depth - p
            slot = np.int64(keys[p] & mask)
            slots[p] = slot
            hint = -1
            cut = False
            if tt_key[slot] == keys[p]:
                info = tt_info[slot]
                hint = np.int64(info >> 8)
                if (info >> 2) & 63 >= d:
                    flag = info & 3
                    v = tt_val[slot]
                    if flag == TT_EXACT or (flag == TT_LOWER and v >= hi[p]) or (flag == TT_UPPER and v <= lo[p]):
                        ret = v
                        cut = True
            if not cut:
                moves, values = mv[p], val[p]
                n = K.legal_codes(geo, st, moves)
                count[p] = n
                K.restore(geo, sv[p], st)
                win = _children(geo, st, sv[p], moves, n, d, values, res[p], codes, idx, weights, ptr,
                                inst, pw, lg[p], drop_ptr, drop, thr, nodes)
                if win >= 0:
                    ret = values[win]
                    cut = True
                elif d <= 1:
                    ret = largest(values, n)
                    cut = True
            if not cut:
                o = order[p]
                _best_first(values, n, o)
                if hint >= 0:  # the table's move first
                    for j in range(n):
                        if moves[o[j]] == hint:
                            first = o[j]
                            for k in range(j, 0, -1):
                                o[k] = o[k - 1]
                            o[0] = first
                            break
                at[p] = 0
                best[p] = -INF
                best_move[p] = np.int64(moves[o[0]])
        else:  # a child of ply p returned ``ret`` (its value, for its side to move)
            undo(changed[p], codes, idx, ptr, inst, pw, lg[p])
            K.restore(geo, st, sv[p])
            v = -ret
            if v > best[p]:
                best[p] = v
                best_move[p] = np.int64(mv[p, order[p, at[p] - 1]])
            cut = False
        # The next child of ply p (unless the node is settled: ``cut``).
        descended = False
        if not cut:
            while at[p] < count[p] and best[p] < hi[p]:
                k = order[p, at[p]]
                at[p] += 1
                if res[p, k] != K.ONGOING:
                    if val[p, k] > best[p]:
                        best[p] = val[p, k]
                        best_move[p] = np.int64(mv[p, k])
                    continue
                _, c = play_move(geo, st, mv[p, k], codes, idx, ptr, inst, pw, lg[p])
                changed[p] = c
                keys[p + 1] = _rekey(keys[p], c, lg[p], codes)
                lo[p + 1] = -hi[p]
                hi[p + 1] = -max(lo[p], best[p])
                p += 1
                entering = True
                descended = True
                break
            if not descended:
                ret = best[p]
                _tt_store(tt_key, tt_val, tt_info, slots[p], keys[p], ret, best_move[p], depth - p, lo[p], hi[p])
        if descended:
            continue
        # Ply p is settled with the value ``ret``: back to its parent.
        if p == 0:
            return ret
        p -= 1


def _search_root(net: Network, geo: np.ndarray, root: np.ndarray, depth: int, moves: np.ndarray,
                 values: np.ndarray, prior: np.ndarray, tt_key: np.ndarray, tt_val: np.ndarray, tt_info: np.ndarray,
                 nodes: np.ndarray, stop: np.ndarray = _NEVER) -> int:
    """Every legal move of ``root`` with its ``depth``-ply value: exact for
    the best move, an upper bound for the others (each is searched with the
    best value so far as its window); moves are tried in the order of
    ``prior`` (the previous depth's values; all equal: the network's).
    The table (``tt_*``, by ``K.board_key``) is kept between the depths of
    one move.  Returns how many moves; ``nodes[1]`` is
    the best move's index (a later move that only ties with it is bounded by
    it, not equal to it).  Returns 0 where ``stop[0]`` was set (a stop
    request, ``StopRequest.flag``) before the depth was done: its values
    are then unfinished (depth 1, the network's own values, always
    completes).

    A loop in Python over the compiled kernels (a dozen moves a depth: a
    few microseconds each), not a kernel of its own: compiled, with the
    move and its features inlined, it took 2.8 s of a first alpha-beta
    move (10.4 s in all after ``hard``).  A child's features are read from
    its board (``encode``), not updated from the root's, and its key
    computed from its board: the same features and key."""
    weights, _, ptr, inst, pw, drop_ptr, drop, _, thr = net.arrays()
    n = int(K.legal_codes(geo, root, moves))
    st, saved = root.copy(), root.copy()  # writable, as every state below (another type for numba)
    codes, idx = _features(geo, st, net)
    log = np.zeros((4, 2), dtype=np.int64)
    leaf = np.empty(n, dtype=np.float64)
    results = np.empty(n, dtype=np.int64)
    _children(geo, st, saved, moves, n, depth, leaf, results, codes, idx, weights, ptr, inst, pw, log,
              drop_ptr, drop, thr, nodes)
    order = prior[:n] + 1e-3 * leaf
    best = -INF
    for k in sorted(range(n), key=lambda k: -order[k]):  # highest first, ties in index order
        if results[k] != K.ONGOING or depth <= 1:
            values[k] = leaf[k]
        else:
            child = root.copy()
            K.play(geo, child, int(moves[k]))  # an int64, as reading a position's moves compiled it
            child_codes, child_idx = _features(geo, child, net)
            value = -_negamax(geo, child, depth - 1, -INF, -best, np.uint64(K.board_key(geo, child)),
                              child_codes, child_idx, weights, ptr, inst, pw, drop_ptr, drop, thr, tt_key, tt_val,
                              tt_info, nodes, stop)
            if math.isnan(value):  # stopped
                return 0
            values[k] = value
        if values[k] > best:
            best = values[k]
            nodes[1] = k
    return n


def _features(geo: np.ndarray, st: np.ndarray, net: Network) -> tuple[np.ndarray, np.ndarray]:
    """The cell states and the tuple instances' table indices of ``st``
    (``encode``): ``(codes, idx)``."""
    lay = net.layout
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(lay.slots, dtype=np.int64)
    encode(geo, st, codes, idx, lay.cell_ptr, lay.cell_inst, lay.cell_add, lay.threat_base)
    return codes, idx


@njit(cache=True)
def _greedy_values(geo, root, weights, inst_cells, ptr, inst, pw, drop_ptr, drop, states, thr, moves, values, results,
                   unsafe):
    """The network's value of every legal move, its result, and whether the
    opponent can then win at once (``unsafe``).  Returns how many moves."""
    n = move_values(geo, root, weights, inst_cells, ptr, inst, pw, drop_ptr, drop, states, thr, moves, values,
                    results)
    st = root.copy()
    saved = root.copy()
    side = K.to_move(root)
    for k in range(n):
        unsafe[k] = False
        if results[k] == K.ONGOING:
            K.apply(geo, st, moves[k])
            unsafe[k] = K.winning_columns(geo, st, 1 - side) != 0
            K.restore(geo, st, saved)
    return n


class NTupleAgent(Agent):
    """Greedy play on a learnt afterstate value, or alpha-beta on it to a
    ``depth`` or, deepening, for ``time`` seconds a move."""

    def __init__(self, network: Network, depth: int = 0, seed: int | None = None,
                 fallback: Agent | None = None, time: float | None = None, search: str = "",
                 iterations: int | None = None, look: float = PUCT_LOOK, threads: int = 1,
                 source: str | None = None) -> None:
        """``search``: ``"puct"``, ``"alphabeta"`` or greedy (anything else;
        with ``depth`` or ``time``, alpha-beta); ``look``: PUCT's leaf
        look-ahead weight; ``threads``: how many threads search PUCT's tree;
        ``source``: the network's file, named when it is for another board."""
        self.network = network
        self.source = source
        self.depth = depth
        self.time = time
        self.search = search
        self.iterations = iterations
        self.look = look
        self.threads = threads
        self.fallback = fallback  # plays on the boards the network was not trained for (None: an error)
        if fallback is not None:
            self.share_stop(fallback)
        self._rng = random.Random(seed_value(seed, type(self).__name__))

    def check_board(self, variant: Variant) -> None:
        """``NetworkError`` where the network is for another board and no
        fallback plays there."""
        if self.fallback is None:
            self.network.check_board(variant, self.source)

    def plays_instead(self, variant: Variant) -> str | None:
        if self.fallback is not None and variant != self.network.variant:
            return self.fallback.spec
        return None

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """The move, and every legal move's value (the network's, or the
        search's at ``depth``), mapped to [0, 1] for the side to move."""
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        if self.fallback is not None and self.plays_instead(position.variant):
            move, analysis = self.fallback.analyse(position, budget)
            name = self.fallback.spec.partition(":")[0]
            note = f"no network for the board {position.variant}: {name}'s move"
            return move, Analysis(analysis.moves, analysis.value, analysis.pv, analysis.iterations,
                                  analysis.seconds, note, fallback=self.fallback.spec)
        self.network.check_board(position.variant, self.source)
        if self.search == "puct" or (self.iterations and self.search != "alphabeta"):
            return self._puct(position, budget)
        if self.depth or self.time:
            return self._search(position, budget)
        geo, st = position.kernel_arrays()
        moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        values = np.empty(K.MAX_LEGAL, dtype=np.float64)
        results = np.empty(K.MAX_LEGAL, dtype=np.int64)
        unsafe = np.empty(K.MAX_LEGAL, dtype=np.bool_)
        n = _greedy_values(geo, st, *self.network.arrays(), moves, values, results, unsafe)  # type: ignore[call-arg]  # numba's Dispatcher type
        side = 0 if position.to_move == "A" else 1
        threats = int(K.winning_columns(geo, st, 1 - side))
        wins = [k for k in range(n) if values[k] >= 1.0 and results[k] != K.ONGOING]
        safe = [k for k in range(n) if not unsafe[k]]
        if wins:
            pool, note = wins, "wins at once"
        else:
            # A safe move blocks every immediate win of the opponent: with a
            # stone, or with the ban piece of a bonus move.
            pool = safe or list(range(n))
            note = "blocks an immediate win" if threats and safe else "greedy on the learnt value"
        scores = values[:n]
        best = max(scores[k] for k in pool)
        k = self._rng.choice([k for k in pool if scores[k] >= best - 1e-9])
        move = Move.from_code(int(moves[k]))
        stats = tuple(MoveStats(Move.from_code(int(moves[j])), value=_unit(scores[j])) for j in range(n))
        return move, Analysis(moves=stats, value=_unit(scores[k]), pv=(move,), note=note)

    def _seconds(self, budget: Budget | None) -> float | None:
        """The time of a move: ``time``, or the budget's when it is shorter."""
        seconds = self.time
        if budget is not None and budget.time is not None:
            seconds = budget.time if seconds is None else min(seconds, budget.time)
        return seconds

    def _puct(self, position: Position, budget: Budget | None) -> tuple[Move, Analysis]:
        """PUCT on the learnt value (``c4lab.agents.ntuple_puct``): ``iterations``
        of it, or as many as fit in the time, or until a stop request
        (``request_stop``: the chunk under way completes).  The move is a
        proven win when there is one, else the most visited."""
        net = self.network
        geo, st = position.kernel_arrays()
        seconds = self._seconds(budget)
        # Iterations to do (none: until the time is up); the threads share them.
        quota = self.iterations
        if budget is not None and budget.iterations is not None:  # the caller's cap (an engine's go iterations)
            quota = budget.iterations if quota is None else min(quota, budget.iterations)
        if quota is None and seconds is None:
            quota = PUCT_ITERATIONS
        # An iteration adds at most one node's children: a small search gets a small tree.
        tree = Tree(PUCT_NODES if quota is None else min(PUCT_NODES, 1 + quota * K.MAX_LEGAL))
        if seconds is not None:
            _before_the_clock(puct_run, geo, st, 1, PUCT_C, PUCT_TEMP, self.look, *Tree(1 + K.MAX_LEGAL).arrays(),
                              *net.arrays(), False)
        began = _time.perf_counter()
        settled = threading.Event()  # the tree is full or the root settled: every thread stops
        stop = self.stop_request  # a stop request: every thread stops after its chunk

        def search(share: int | None, shared: bool) -> None:
            done = 0
            while not settled.is_set() and (share is None or done < share):
                if seconds is not None and _time.perf_counter() - began >= seconds:
                    return
                chunk = PUCT_CHUNK if share is None else min(PUCT_CHUNK, share - done)
                ran = puct_run(geo, st, chunk, PUCT_C, PUCT_TEMP, self.look, *tree.arrays(), *net.arrays(),
                               shared)  # type: ignore[call-arg]  # numba's Dispatcher type
                done += ran
                if ran < chunk:
                    settled.set()
                if stop:
                    return

        if self.threads == 1:
            search(quota, False)
        else:
            search(1, False)  # the root's expansion and first iteration, before the tree is shared
            shares = [None if quota is None else (quota - 1) // self.threads + (t < (quota - 1) % self.threads)
                      for t in range(self.threads)]
            helpers = [threading.Thread(target=search, args=(share, True), daemon=True) for share in shares[1:]]
            for helper in helpers:
                helper.start()
            search(shares[0], True)
            for helper in helpers:
                helper.join()
        base, n = int(tree.first[0]), int(tree.count[0])
        children = range(base, base + n)
        proven_win = [k for k in children if tree.kind[k] == PROVEN and tree.net[k] > 0]
        if proven_win:
            k, note = proven_win[0], "a proven win"
        else:
            most = max(tree.visits[k] for k in children)
            k = self._rng.choice([k for k in children if tree.visits[k] == most])
            note = "PUCT on the learnt value: the most visited move"
            if self.threads > 1:
                note = f"PUCT on the learnt value, {self.threads} threads: the most visited move"

        def value(j: int) -> float:
            if tree.kind[j] == PROVEN or tree.visits[j] == 0:
                return _unit(tree.net[j])
            return _unit(tree.total[j] / tree.visits[j])

        stats = tuple(MoveStats(Move.from_code(int(tree.move[j])), visits=int(tree.visits[j]), value=value(j))
                      for j in children)
        move = Move.from_code(int(tree.move[k]))
        return move, Analysis(moves=stats, value=value(k), pv=_puct_line(tree, k), iterations=int(tree.meta[M_ITER]),
                              seconds=_time.perf_counter() - began, note=note)

    def _search(self, position: Position, budget: Budget | None) -> tuple[Move, Analysis]:
        """Alpha-beta on the learnt value: to ``depth``, or deeper and deeper
        while the next depth is expected to fit in the time (``time``, or
        the budget's when it is shorter; each depth costs about four times
        the one before), never deeper than ``depth`` when both are given.
        A stop request (``request_stop``) ends the depth under way within a
        few milliseconds, and the last depth done answers (depth 1, the
        learnt value's own choice, where the stop came during the first
        depth searched: ``depth`` with no time searches that one only)."""
        net = self.network
        geo, st = position.kernel_arrays()
        moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        values = np.empty(K.MAX_LEGAL, dtype=np.float64)
        prior = np.zeros(K.MAX_LEGAL, dtype=np.float64)
        nodes = np.zeros(2, dtype=np.int64)
        tt_key = np.zeros(TT_SIZE, dtype=np.uint64)
        tt_val = np.zeros(TT_SIZE, dtype=np.float64)
        tt_info = np.zeros(TT_SIZE, dtype=np.int64)
        seconds = self._seconds(budget)
        if seconds is not None and not _negamax.signatures:  # its kernels compiled on throwaway copies
            _search_root(net, geo, st, 2, moves, values, *(a.copy() for a in (prior, tt_key, tt_val, tt_info, nodes)))
        began = _time.perf_counter()
        stop = self.stop_request
        last = max(self.depth, 1) if seconds is None else 1
        depth = 1 if seconds is not None else last
        done = best = n = 0  # the deepest depth completed, its best move's index and its moves
        while True:
            searched = _search_root(net, geo, st, depth, moves, values, prior, tt_key, tt_val, tt_info, nodes,
                                    stop.flag)
            if searched == 0:  # stopped during this depth: the last one done answers
                if done == 0:
                    depth = done = 1
                    n = _search_root(net, geo, st, 1, moves, prior, prior, tt_key, tt_val, tt_info, nodes)
                    best = int(nodes[1])
                depth = done
                values[:n] = prior[:n]
                break
            n, done = searched, depth
            prior[:n] = values[:n]
            best = int(nodes[1])
            spent = _time.perf_counter() - began
            if (seconds is None or depth >= position.empty_cells or spent * 5 > seconds or depth >= 42
                    or depth == self.depth or stop):  # depth= is the deepest, with a time as without
                break
            depth += 1
        move = Move.from_code(int(moves[best]))
        stats = tuple(MoveStats(Move.from_code(int(moves[j])), value=_unit(values[j])) for j in range(n))
        line = _table_line(position, move, tt_key, tt_info, depth)
        return move, Analysis(moves=stats, value=_unit(values[best]), pv=line, iterations=int(nodes[0]),
                              seconds=_time.perf_counter() - began,
                              note=f"alpha-beta to depth {depth} on the learnt value (other moves: bounds)")


def _table_line(position: Position, first: Move, tt_key: np.ndarray, tt_info: np.ndarray,
                length: int) -> tuple[Move, ...]:
    """The principal variation of an alpha-beta search: ``first``, then the
    best move the transposition table holds for each position along the
    line (its key as the search computed it, ``K.board_key``), while the
    table has the position and its move is legal there: at most ``length``
    moves (the depth searched)."""
    line = [first]
    mask = tt_key.shape[0] - 1
    after = position.play(first)
    while len(line) < length and not after.is_over:
        geo, st = after.kernel_arrays()
        key = np.uint64(K.board_key(geo, st))
        slot = int(key) & mask
        if tt_key[slot] != key:
            break
        code = int(tt_info[slot]) >> 8
        legal = {m.code: m for m in after.legal_moves()}
        if code not in legal:
            break
        line.append(legal[code])
        after = after.play(legal[code])
    return tuple(line)


def _puct_line(tree: Tree, chosen: int, length: int = 12) -> tuple[Move, ...]:
    """The principal variation of a PUCT search: the ``chosen`` child of
    the root's move, then below it the most visited child of each node,
    while one was visited (as UCT's line; the chosen move need not be the
    most visited: a proven win ranks first)."""
    line = [Move.from_code(int(tree.move[chosen]))]
    node = chosen
    while len(line) < length and tree.count[node] > 0:
        base = int(tree.first[node])
        children = range(base, base + int(tree.count[node]))
        node = max(children, key=lambda j: tree.visits[j])
        if tree.visits[node] == 0:
            break
        line.append(Move.from_code(int(tree.move[node])))
    return tuple(line)


def _before_the_clock(kernel: Any, *args: Any) -> None:
    """Call ``kernel`` on ``args`` (a throwaway search) if this process has
    not compiled or loaded it yet, so that a timed search starts its clock
    with the kernel ready: inside the clock the compiler took the whole time
    of a cold first move, which then stopped after its first chunk (500 PUCT
    iterations, alpha-beta at depth 1)."""
    if not kernel.signatures:
        kernel(*args)


def _unit(v: float) -> float:
    """A value in [-1, 1] (beyond: an exact result) as an expected score in [0, 1]."""
    return min(1.0, max(0.0, (float(v) + 1.0) / 2.0))


@register(
    "ntuple",
    "an n-tuple network learnt by self-play (TD learning; `c4lab train ntuple`): greedy on the learnt "
    "value after win and block checks, or a search on it: alpha-beta to depth D, or PUCT",
    [
        Param("weights", str, None, "the network file of `c4lab train ntuple --out FILE` "
              "(default: the one shipped for the classic board)"),
        Param("depth", int, 0, "plies of alpha-beta search on the learnt value (0: none; greedy unless time= or "
              "iterations= ask for PUCT); with time=, the deepest a timed alpha-beta goes", minimum=0),
        Param("time", float, None, "seconds a move of the search on the learnt value (PUCT, or deepening "
              "alpha-beta with search=alphabeta; none: greedy)",
              minimum=0, above=True, maximum=MAX_SECONDS),
        Param("seed", int, None, "random seed for ties (default: fresh each run)"),
        Param("search", str, None, "the test-time search: puct (the network as prior and leaf value, as "
              "Scheiermann and Konen: iterations= or time=, 1000 iterations with neither) or alphabeta (depth= or "
              "time=) or greedy (no search); default: puct with time= or iterations=, alphabeta with depth=, "
              "else greedy",
              choices=("puct", "alphabeta", "greedy")),
        Param("iterations", int, None, "PUCT iterations a move (the search also stops when its tree of "
              f"{PUCT_NODES:,} nodes is full: a few hundred thousand iterations)", minimum=1),
        Param("look", float, None, f"PUCT: the weight, 0 to 1, of a new leaf's one-ply look-ahead in the value "
              f"it backs up (default {PUCT_LOOK}; 0: the network's value alone, as Scheiermann and Konen)",
              minimum=0),
        Param("threads", int, 1, f"PUCT: threads that search one tree together (at most {MAX_THREADS}; a "
              "lock-free shared tree with virtual loss: more iterations in the same time on more cores)",
              minimum=1),
    ],
    presets={"ntuple-puct": ("the learnt network with PUCT on it (Scheiermann and Konen), 1000 iterations a move",
                             {"search": "puct"})},
)
def make_ntuple_agent(weights: str | None = None, depth: int = 0, seed: int | None = None,
                      time: float | None = None, search: str | None = None,
                      iterations: int | None = None, look: float | None = None, threads: int = 1) -> NTupleAgent:
    """The ``ntuple`` spec: load ``weights`` (``NetworkError`` if it is missing,
    damaged or not a network), or the shipped classic network."""
    if depth > 12:
        raise SpecError(f"agent 'ntuple': depth must be at most 12, not {depth}")
    if search is None:
        search = "alphabeta" if depth else ("puct" if time or iterations else "greedy")
    if look is not None and look > 1:
        raise SpecError(f"agent 'ntuple': look must be between 0 and 1, not {look}")
    if search == "greedy" and (depth or time is not None or iterations is not None):
        raise SpecError("agent 'ntuple': search=greedy takes no depth=, time= or iterations= (it does not search)")
    if search == "puct" and depth:
        raise SpecError("agent 'ntuple': depth= is alpha-beta's; PUCT (search=puct, as in ntuple-puct) takes "
                        "iterations= or time=")
    if search == "alphabeta" and iterations is not None:
        raise SpecError("agent 'ntuple': iterations= is PUCT's; alpha-beta takes depth= or time=")
    if look is not None and search != "puct":
        raise SpecError("agent 'ntuple': look= is PUCT's: give time= or iterations= with it (ntuple:time=0.2,"
                        f"look={look:g}), or use ntuple-puct")
    look = PUCT_LOOK if look is None else look
    if threads > MAX_THREADS:
        raise SpecError(f"agent 'ntuple': threads must be at most {MAX_THREADS}, not {threads}")
    if threads > 1 and search != "puct":
        raise SpecError("agent 'ntuple': threads= is PUCT's: give time= or iterations= with it "
                        f"(ntuple:time=0.2,threads={threads}), or use ntuple-puct")
    if search == "alphabeta" and not (depth or time):
        raise SpecError("agent 'ntuple': search=alphabeta needs depth= or time=")
    if weights is not None:
        return NTupleAgent(load_network(weights), depth, seed, time=time, search=search, iterations=iterations,
                           look=look, threads=threads, source=weights)
    path = shipped_path("7x6")
    if path is None:
        raise SpecError("agent 'ntuple' needs a network: train one with `c4lab train ntuple --board 7x6 "
                        "--out net.npz`, then use ntuple:weights=net.npz")
    fallback = make_agent("heuristic" if seed is None else f"heuristic:seed={seed}")
    return NTupleAgent(load_network(path), depth, seed, fallback, time, search, iterations, look, threads)


__all__ = ["NTupleAgent", "load_network", "make_ntuple_agent", "shipped_folder", "shipped_path"]
