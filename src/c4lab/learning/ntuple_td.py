"""The self-play TD kernel of the n-tuple learner (see ``c4lab.learning.ntuple``
for the why of each choice and its figures).

One call plays ``games`` games of self-play on one board and updates the
weights in place, without the GIL: several threads may run it at once on
the same weights (lock-free, as Jaskowski's optimistic parallel updates;
an update lost to a race costs a little learning, nothing else).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents.ntuple_net import (
    afterstate_values,
    copy_into,
    encode,
    outcome_value,
    play_move,
    threat_slots,
    weight_sum,
)
from c4lab.rules import kernels as K

# Counters returned by ``train_games`` (float64 array).
C_GAMES = 0
C_WIN_A = 1
C_WIN_B = 2
C_DRAW = 3
C_CELLS = 4  # cells filled (pieces and ban pieces)
C_UPDATES = 5
C_ABS_ERROR = 6  # sum of |target - value| over the updates
N_COUNTERS = 7


@njit(inline="always")
def add_step(weights, side, rows, step):
    """Add ``step`` to each of ``side``'s weights active at the instance
    indices ``rows``."""
    for i in range(rows.shape[0]):
        weights[side, rows[i]] += step


@njit(inline="always")
def td_update(weights, side, rows, target, rate, tcl, beta):
    """Move ``side``'s value of the afterstate whose instance indices are
    ``rows`` toward ``target``: the gradient of ``tanh`` of the sum, the same
    step for every active weight.  Returns the error, ``target - value``.

    With ``beta > 0``, temporal coherence (TCL-EXP, Bagheri et al.): each
    weight keeps in ``tcl`` the sum ``N`` and the sum of magnitudes ``A`` of
    the changes recommended to it, and takes its step times
    ``exp(beta * (|N| / A - 1))``: full steps while the recommendations
    agree, smaller ones (down to ``exp(-beta)``) while they cancel out."""
    v = math.tanh(weight_sum(weights, side, rows))
    delta = target - v
    grad = delta * (1.0 - v * v)
    if beta > 0.0:
        for i in range(rows.shape[0]):
            j = rows[i]
            n = tcl[0, side, j]
            a = tcl[1, side, j]
            factor = math.exp(beta * (abs(n) / a - 1.0)) if a > 0.0 else 1.0
            weights[side, j] += np.float32(rate * grad * factor)
            tcl[0, side, j] = n + grad
            tcl[1, side, j] = a + abs(grad)
    else:
        add_step(weights, side, rows, np.float32(rate * grad))
    return delta


@njit(inline="always")
def learn_step(weights, side, rows, target, rate, tcl, beta, counters):
    """One update of ``side``'s afterstate ``rows`` toward ``target``
    (``td_update``), and the counters."""
    delta = td_update(weights, side, rows, target, rate, tcl, beta)
    counters[C_ABS_ERROR] += abs(delta)
    counters[C_UPDATES] += 1


@njit(inline="always")
def lambda_returns(nextv, has, n, lam, out):
    """The lambda-return of each of a side's ``n`` afterstates of a game, in
    ``out``: ``nextv[i]`` is the value of its next afterstate as it was when
    chosen (the exact result after the last), ``has[i]`` whether afterstate
    ``i`` learns at all (not when the side's next move was an exploratory
    one that did not end the game).  ``G[i] = (1 - lam) * nextv[i] + lam *
    G[i + 1]``, cut to ``nextv[i]`` where ``i + 1`` does not learn or is the
    last: TD(0)'s target at ``lam = 0``, the game's result at 1."""
    g = 0.0
    for i in range(n - 1, -1, -1):
        if not has[i]:
            continue
        if i + 1 < n and has[i + 1]:
            g = (1.0 - lam) * nextv[i] + lam * g
        else:
            g = nextv[i]
        out[i] = g


#: The ``tcl`` argument of ``train_games`` without temporal coherence (never read).
NO_TCL = np.zeros((2, 1, 1), dtype=np.float32)


@njit(cache=True, nogil=True)
def train_games(geo, start, weights, inst_cells, ptr, inst, pw, drop_ptr, drop, states, thr,
                games, rng, alpha, epsilon, learn_from_random, tcl, beta, lam, opening, early_plies, early_epsilon,
                counters):
    """Play ``games`` self-play games from ``start`` and learn from them.

    Each side moves greedily on its afterstate values (ties broken at
    random), or with probability ``epsilon`` uniformly at random (at
    least ``early_epsilon`` in the game's first ``early_plies`` moves, its
    random opening's included).  An exploratory move's afterstate learns
    from the side's next one as any other does: more exploration early
    values more of the early replies that greedy play never picks.  After a
    side's move, its previous afterstate moves toward the value of its new
    one (TD(0) between the same side's afterstates, so no sign flips);
    after an exploratory move only if ``learn_from_random`` or the move ends
    the game.  When the game ends, the mover's last afterstate moves toward
    the result and so does the other side's (the loser learns from the
    winning move: final adaptation).  The step is ``alpha`` divided by the
    number of instances, so that ``alpha = 1`` would move a value all the
    way to its target in the linear regime; ``beta > 0`` adapts it per
    weight (``td_update``; ``tcl`` is ``(2, *weights.shape)``, else
    ``NO_TCL``).  With ``lam > 0`` each side's afterstates learn at the end
    of the game instead, each toward its lambda-return
    (``lambda_returns``), cut by an exploratory move nobody learns from:
    one update an afterstate, as TD(0).  ``rng`` is the random state
    (``K.seed_rng``); returns the next one.
    ``counters`` (``N_COUNTERS``) accumulates what happened.
    """
    n_inst = inst_cells.shape[0]
    rate = alpha / n_inst
    s = K.U(rng)
    st = start.copy()
    saved = start.copy()
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(n_inst + thr.shape[0], dtype=np.int64)  # the instances' indices, then the threat tables'
    forward = lam > 0.0  # the lambda-return at the end of the game
    rows = K.NCELLS // 2 + 2 if forward else 1
    hist = np.zeros((2, rows, idx.shape[0]), dtype=np.int64)  # a side's afterstates (forward: in order; else the latest)
    nextv = np.zeros((2, rows))  # forward: the value of the side's next afterstate (or the result)
    has = np.zeros((2, rows), dtype=np.bool_)  # forward: whether that afterstate learns
    returns = np.zeros(rows)
    kept = np.zeros(2, dtype=np.int64)  # how many of hist[side] are this game's
    moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    values = np.empty(K.MAX_LEGAL, dtype=np.float64)
    results = np.empty(K.MAX_LEGAL, dtype=np.int64)
    log = np.zeros((4, 2), dtype=np.int64)
    played = 0
    while played < games:
        copy_into(st, start)
        encode(geo, st, codes, idx, ptr, inst, pw, thr)
        kept[:] = 0
        ply = 0
        if opening > 0:
            s, x = K.next_random(s)
            randoms = np.int64(K.random_below(x, K.U(opening + 1)))
            ended = False
            for _ in range(randoms):
                n = K.legal_codes(geo, st, moves)
                s, x = K.next_random(s)
                k = np.int64(K.random_below(x, K.U(n)))
                result, _ = play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
                ply += 1
                if result != K.ONGOING:
                    ended = True
                    break
            if ended:
                continue
        played += 1
        while True:
            side = np.int64(K.to_move(st))
            n = K.legal_codes(geo, st, moves)
            K.restore(geo, saved, st)
            afterstate_values(geo, st, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                              weights, drop_ptr, drop, thr)
            s, x = K.next_random(s)
            chance = max(epsilon, early_epsilon) if ply < early_plies else epsilon
            explore = np.float64(x >> K.U(11)) * (1.0 / 9007199254740992.0) < chance
            if explore:
                s, x = K.next_random(s)
                k = np.int64(K.random_below(x, K.U(n)))
            else:
                k = 0
                ties = 1
                for j in range(1, n):
                    if values[j] > values[k]:
                        k = j
                        ties = 1
                    elif values[j] == values[k]:
                        ties += 1
                        s, x = K.next_random(s)
                        if K.random_below(x, K.U(ties)) == K.U0:
                            k = j
            result = results[k]
            learn = kept[side] > 0 and (learn_from_random or not explore or result != K.ONGOING)
            if forward:
                if kept[side] > 0:
                    nextv[side, kept[side] - 1] = values[k]
                    has[side, kept[side] - 1] = learn
            elif learn:
                learn_step(weights, side, hist[side, 0], values[k], rate, tcl, beta, counters)
            play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
            ply += 1
            if result != K.ONGOING:
                other = 1 - side
                if forward:
                    if kept[other] > 0:
                        nextv[other, kept[other] - 1] = outcome_value(result, other)
                        has[other, kept[other] - 1] = True
                    for p in range(2):
                        lambda_returns(nextv[p], has[p], kept[p], lam, returns)
                        for i in range(kept[p]):
                            if has[p, i]:
                                learn_step(weights, p, hist[p, i], returns[i], rate, tcl, beta, counters)
                elif kept[other] > 0:
                    learn_step(weights, other, hist[other, 0], outcome_value(result, other), rate, tcl, beta,
                               counters)
                counters[C_GAMES] += 1
                counters[C_CELLS] += np.float64(K.empty_cells(start)) - np.float64(K.empty_cells(st))
                if result == K.DRAW:
                    counters[C_DRAW] += 1
                elif result == K.WIN_A:
                    counters[C_WIN_A] += 1
                else:
                    counters[C_WIN_B] += 1
                break
            threat_slots(geo, st, thr, idx)
            if forward:
                copy_into(hist[side, kept[side]], idx)
                kept[side] += 1
            else:
                copy_into(hist[side, 0], idx)
                kept[side] = 1
    return s
