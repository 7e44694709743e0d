"""PUCT on a learnt n-tuple value: the test-time search of ``ntuple:search=puct``.

Scheiermann and Konen ("AlphaZero-inspired game learning: faster training
by using MCTS only at test time", 2022) wrap a network trained by TD
self-play, with no search in training, in the tree search of AlphaZero at
test time: PUCT, with the network as the prior of every move and as the
value of every leaf, and no random playouts.  This module is that search
in one compiled kernel over flat arrays (no Python object per node).

* **A node is an afterstate**: the position after a move, valued from the
  view of the player who made it.  The network values afterstates, so
  expanding a node (its side to move has ``n`` moves) values all ``n``
  children at once, through the incremental features of
  ``c4lab.agents.ntuple_net`` (a move changes at most four cells).
* **Priors** are the softmax of the children's values over a temperature
  (``temp``); **first play**: a child not yet visited counts with its own
  network value, so the search starts exactly where the greedy network
  would, and only the tree's evidence moves it away.
* **Exact where it can be**: a move that ends the game is worth its result;
  a node whose side to move can win at once is a proven loss for the
  player who moved into it (one ply of look-ahead that every expansion
  computes anyway).  Proven values are backed up as they are.
* **A leaf looks one ply ahead**: the value a new leaf backs up is
  ``(1 - look) * v + look * (-max w)``, ``v`` the network's value of the
  leaf and ``w`` its children's, which its expansion has just computed (no
  extra lookups).  A one-ply negamax on the network is a better estimate
  than the network alone where the next move is sharp; averaged with it,
  it keeps the network's steadiness where it is not.
* **Selection**: ``Q + c * P * sqrt(N) / (1 + n)``; the move played is the
  most visited one.
* **Threads** (``run``'s ``shared``): several threads can search one tree
  at once, with atomic updates (``c4lab.agents.atomics``), a leaf claimed
  by the thread that expands it, and a virtual loss on the nodes of a walk
  until it backs up; 1.9 times the iterations a second on two cores.

Figures (the classic board's 400 probe positions, the shipped network,
``c4lab.learning.probes``) are in ``c4lab.agents.ntuple``'s docstring.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents.atomics import compare_swap, fetch_add, load_acquire, store_release
from c4lab.agents.ntuple_net import afterstate_values, copy_into, encode, largest, play_move
from c4lab.rules import kernels as K

#: Node kinds: still to be expanded, expanded, proven (its value is exact),
#: being expanded by one of the threads that share the tree.
OPEN, INNER, PROVEN, CLAIMED = 0, 1, 2, 3
#: The virtual loss of a shared tree: a thread that walks through a node
#: counts a lost visit there until it backs up the real value, so that the
#: other thread tends to walk elsewhere.
VIRTUAL_LOSS = 1.0
#: ``meta`` slots: nodes used, iterations done, deepest path.
M_USED, M_ITER, M_DEPTH = 0, 1, 2


class Tree:
    """The arrays of a PUCT tree of at most ``capacity`` nodes (node 0 is the
    root; the children of a node are consecutive)."""

    def __init__(self, capacity: int) -> None:
        self.first = np.full(capacity, -1, dtype=np.int64)  # index of the first child
        self.count = np.zeros(capacity, dtype=np.int64)  # how many children
        self.move = np.zeros(capacity, dtype=np.uint8)  # the move into the node
        self.kind = np.zeros(capacity, dtype=np.int8)
        self.prior = np.zeros(capacity, dtype=np.float64)
        self.net = np.zeros(capacity, dtype=np.float64)  # network (or exact) value for the mover into it
        self.visits = np.zeros(capacity, dtype=np.float64)
        self.total = np.zeros(capacity, dtype=np.float64)  # sum of backed-up values, mover's view
        self.meta = np.zeros(3, dtype=np.int64)
        self.meta[M_USED] = 1

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The arguments of ``run`` that hold the tree."""
        return (self.first, self.count, self.move, self.kind, self.prior, self.net, self.visits, self.total,
                self.meta)


#: The root's index, typed as a node index (``np.int64``), not as the
#: literal ``0``: numba compiles a function once per argument type, and a
#: literal is a type of its own (``_expand`` was compiled twice, 1.5 s).
ROOT = np.int64(0)


@njit(cache=True, nogil=True)
def _expand(geo, st, node, first, count, move, kind, prior, net, visits, total, meta, codes, idx, weights, ptr, inst,
            pw, drop_ptr, drop, thr, temp, moves, values, results, saved, log, shared):
    """Give ``node`` (whose position is ``st``, features ``codes``/``idx``) its
    children, each valued for the side to move of ``st`` (``afterstate_values``;
    ``st`` and the features are as they were after it); returns ``False``
    when the tree is full.  A child that wins at once makes ``node`` a proven
    loss for whoever moved into it.  ``shared``: other threads search the
    tree (the children's nodes are taken atomically, and ``node`` is marked
    expanded only once they are written)."""
    n = K.legal_codes(geo, st, moves)
    if shared:
        base = fetch_add(meta, M_USED, n)
    else:
        base = meta[M_USED]
    if base + n > first.shape[0]:
        return False
    copy_into(saved, st)
    afterstate_values(geo, st, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log, weights, drop_ptr,
                      drop, thr)
    top = largest(values, n)
    mass = 0.0
    wins = False
    for k in range(n):
        c = base + k
        move[c] = moves[k]
        first[c] = -1
        count[c] = 0
        visits[c] = 0.0
        total[c] = 0.0
        net[c] = values[k]
        kind[c] = OPEN if results[k] == K.ONGOING else PROVEN
        wins = wins or (kind[c] == PROVEN and values[k] > 0.0)
        prior[c] = math.exp((values[k] - top) / temp)
        mass += prior[c]
    for k in range(n):
        prior[base + k] /= mass
    first[node] = base
    count[node] = n
    if not shared:
        meta[M_USED] = base + n
    state = INNER
    if wins and node != 0:
        state = PROVEN
        net[node] = -1.0
    if shared:
        store_release(kind, node, state)
    else:
        kind[node] = state
    return True


@njit(cache=True, nogil=True)
def run(geo, root, iterations, c, temp, look, first, count, move, kind, prior, net, visits, total, meta, weights,
        inst_cells, ptr, inst, pw, drop_ptr, drop, states, thr, shared):
    """``iterations`` more iterations of PUCT from ``root`` on the tree (its
    arrays, filled by earlier calls on the same root); stops early when the
    tree is full or the root is settled.  ``look`` is the weight of a new
    leaf's one-ply look-ahead in the value it backs up.  Returns the
    iterations done.

    ``shared``: other threads run on the same tree at the same time (its
    root already expanded).  Then every update of the tree is atomic, a
    thread claims a leaf before it expands it (a leaf another thread is
    expanding backs up its network value), and a walk puts a virtual loss
    on its nodes until it backs up (``VIRTUAL_LOSS``): the lock-free tree
    parallelism of Enzenberger and Mueller (2010).  Without it the search
    is the single-threaded one, step for step."""
    st = root.copy()
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(inst_cells.shape[0] + thr.shape[0], dtype=np.int64)
    encode(geo, st, codes, idx, ptr, inst, pw, thr)
    root_codes = codes.copy()
    root_idx = idx.copy()
    saved = root.copy()
    moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    values = np.empty(K.MAX_LEGAL, dtype=np.float64)
    results = np.empty(K.MAX_LEGAL, dtype=np.int64)
    log = np.zeros((4, 2), dtype=np.int64)
    path = np.zeros(K.NCELLS * 2 + 2, dtype=np.int64)
    done = 0
    for _ in range(iterations):
        if kind[0] == OPEN and not _expand(geo, st, ROOT, first, count, move, kind, prior, net, visits, total,
                                               meta, codes, idx, weights, ptr, inst, pw, drop_ptr, drop, thr, temp,
                                               moves, values, results, saved, log, shared):
            break
        copy_into(st, root)
        copy_into(codes, root_codes)
        copy_into(idx, root_idx)
        node = 0
        depth = 0
        path[0] = 0
        while (load_acquire(kind, node) if shared else kind[node]) == INNER:
            base = first[node]
            scale = c * math.sqrt(visits[node] + 1.0)
            best = -1e18
            pick = base
            for k in range(base, base + count[node]):
                q = total[k] / visits[k] if visits[k] > 0.0 else net[k]
                if kind[k] == PROVEN:
                    q = net[k]
                u = q + scale * prior[k] / (1.0 + visits[k])
                if u > best:
                    best = u
                    pick = k
            if shared:
                fetch_add(visits, pick, 1.0)
                fetch_add(total, pick, -VIRTUAL_LOSS)
            play_move(geo, st, move[pick], codes, idx, ptr, inst, pw, log)
            node = pick
            depth += 1
            path[depth] = node
        expanded = False
        if kind[node] == OPEN and (not shared or compare_swap(kind, node, np.int8(OPEN), np.int8(CLAIMED))):
            if not _expand(geo, st, node, first, count, move, kind, prior, net, visits, total, meta, codes, idx,
                           weights, ptr, inst, pw, drop_ptr, drop, thr, temp, moves, values, results, saved, log,
                           shared):
                if shared:  # take the walk back: the tree is full
                    store_release(kind, node, np.int8(OPEN))
                    for d in range(depth, 0, -1):
                        fetch_add(visits, path[d], -1.0)
                        fetch_add(total, path[d], VIRTUAL_LOSS)
                break
            expanded = kind[node] == INNER
        value = net[node]
        if expanded:  # ``values`` still holds its children's values
            value = (1.0 - look) * value - look * largest(values, count[node])
        for d in range(depth, 0, -1):
            if shared:
                fetch_add(total, path[d], value + VIRTUAL_LOSS)
            else:
                visits[path[d]] += 1.0
                total[path[d]] += value
            value = -value
            if d > 1 and kind[path[d]] == PROVEN:
                _prove(path[d - 1], first, count, kind, net)
        if shared:
            fetch_add(visits, ROOT, 1.0)
        else:
            visits[0] += 1.0
        done += 1
        meta[M_DEPTH] = max(meta[M_DEPTH], depth)
        if _settled(first[0], count[0], kind, net):
            break
    if shared:
        fetch_add(meta, M_ITER, done)
    else:
        meta[M_ITER] += done
    return done


@njit(cache=True)
def _prove(node, first, count, kind, net):
    """MCTS-Solver's step: ``node`` is proven when one of its children is a
    proven win for the side to move there (then ``node`` is lost for whoever
    moved into it) or when all of them are proven (then it is worth the
    negation of the best)."""
    if kind[node] != INNER:
        return
    best = -2.0
    every = True
    for k in range(first[node], first[node] + count[node]):
        if kind[k] == PROVEN:
            best = max(best, net[k])
        else:
            every = False
    if best > 0.0 or every:
        kind[node] = PROVEN
        net[node] = -best


@njit(cache=True)
def _settled(base, n, kind, net):
    """Whether the root has a proven win, or every move is proven."""
    every = True
    for k in range(base, base + n):
        if kind[k] == PROVEN and net[k] > 0.0:
            return True
        if kind[k] != PROVEN:
            every = False
    return every


__all__ = ["Tree", "run"]
