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
from c4lab.agents.ntuple_net import afterstate_values, copy_into, encode, outcome_value, play_move, weight_sum
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
    step for every active weight.  Returns ``(target - value, 1 - value**2)``:
    the error and the slope of ``tanh`` there (what an eligibility trace
    keeps of this afterstate).

    With ``beta > 0``, temporal coherence (TCL-EXP, Bagheri et al.): each
    weight keeps in ``tcl`` the sum ``N`` and the sum of magnitudes ``A`` of
    the changes recommended to it, and takes its step times
    ``exp(beta * (|N| / A - 1))``: full steps while the recommendations
    agree, smaller ones (down to ``exp(-beta)``) while they cancel out."""
    v = math.tanh(weight_sum(weights, side, rows))
    delta = target - v
    slope = 1.0 - v * v
    grad = delta * slope
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
    return delta, slope


@njit(inline="always")
def trace_update(weights, side, hist, slopes, length, delta, rate, lam):
    """The eligibility trace's share of an update: the error ``delta`` just
    measured at ``side``'s latest afterstate (``hist[side, 0]``, already
    updated) also moves the ``length - 1`` afterstates before it, the k-th
    by ``lam ** k`` times its own slope of ``tanh`` (kept in ``slopes`` when
    it was updated): TD(lambda) with the trace cut after ``length``
    afterstates (Jaskowski's horizon, as GBG)."""
    decay = 1.0
    for k in range(1, length):
        decay *= lam
        add_step(weights, side, hist[side, k], np.float32(rate * delta * decay * slopes[side, k]))


@njit(inline="always")
def learn_step(weights, side, hist, slopes, kept, target, rate, tcl, beta, lam, counters):
    """One update of ``side``'s latest afterstate toward ``target``
    (``td_update``, keeping its slope for the trace), the trace's share for
    the ``kept - 1`` before it (``trace_update``), and the counters."""
    delta, slopes[side, 0] = td_update(weights, side, hist[side, 0], target, rate, tcl, beta)
    trace_update(weights, side, hist, slopes, kept, delta, rate, lam)
    counters[C_ABS_ERROR] += abs(delta)
    counters[C_UPDATES] += 1


#: The ``tcl`` argument of ``train_games`` without temporal coherence (never read).
NO_TCL = np.zeros((2, 1, 1), dtype=np.float32)

#: The longest trace (lambda 0.75 and above).
MAX_HORIZON = 16


def horizon(lam: float) -> int:
    """How many of a side's afterstates the trace reaches: those whose
    weight ``lam ** k`` is still at least 1 %, at most ``MAX_HORIZON``."""
    if lam <= 0.0:
        return 1
    if lam >= 1.0:
        return MAX_HORIZON
    return min(MAX_HORIZON, 1 + math.floor(math.log(0.01) / math.log(lam)))


@njit(cache=True, nogil=True)
def train_games(geo, start, weights, inst_cells, ptr, inst, pw, drop_ptr, drop, states,
                games, rng, alpha, epsilon, learn_from_random, tcl, beta, lam, length, opening, counters):
    """Play ``games`` self-play games from ``start`` and learn from them.

    Each side moves greedily on its afterstate values (ties broken at
    random), or with probability ``epsilon`` uniformly at random.  After a
    side's move, its previous afterstate moves toward the value of its new
    one (TD(0) between the same side's afterstates, so no sign flips);
    after an exploratory move only if ``learn_from_random`` or the move ends
    the game.  When the game ends, the mover's last afterstate moves toward
    the result and so does the other side's (the loser learns from the
    winning move: final adaptation).  The step is ``alpha`` divided by the
    number of instances, so that ``alpha = 1`` would move a value all the
    way to its target in the linear regime; ``beta > 0`` adapts it per
    weight (``td_update``; ``tcl`` is ``(2, *weights.shape)``, else
    ``NO_TCL``).  ``lam > 0`` adds an eligibility
    trace over each side's last ``length`` afterstates (``trace_update``;
    ``length`` 1 and ``lam`` 0: TD(0)), cut by an exploratory move nobody
    learns from.  ``rng`` is the random state
    (``K.seed_rng``); returns the next one.
    ``counters`` (``N_COUNTERS``) accumulates what happened.
    """
    n_inst = inst_cells.shape[0]
    rate = alpha / n_inst
    s = K.U(rng)
    st = start.copy()
    saved = start.copy()
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(n_inst, dtype=np.int64)
    hist = np.zeros((2, max(length, 1), n_inst), dtype=np.int64)  # a side's afterstates, latest first
    slopes = np.zeros((2, max(length, 1)))
    kept = np.zeros(2, dtype=np.int64)  # how many of hist[side] are this game's
    moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    values = np.empty(K.MAX_LEGAL, dtype=np.float64)
    results = np.empty(K.MAX_LEGAL, dtype=np.int64)
    log = np.zeros((4, 2), dtype=np.int64)
    played = 0
    while played < games:
        copy_into(st, start)
        encode(geo, st, codes, idx, ptr, inst, pw)
        kept[:] = 0
        if opening > 0:
            s, x = K.next_random(s)
            randoms = np.int64(K.random_below(x, K.U(opening + 1)))
            ended = False
            for _ in range(randoms):
                n = K.legal_codes(geo, st, moves)
                s, x = K.next_random(s)
                k = np.int64(K.random_below(x, K.U(n)))
                result, _ = play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
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
                              weights, drop_ptr, drop)
            s, x = K.next_random(s)
            explore = np.float64(x >> K.U(11)) * (1.0 / 9007199254740992.0) < epsilon
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
            if learn:
                learn_step(weights, side, hist, slopes, kept[side], values[k], rate, tcl, beta, lam,
                           counters)
            play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
            if result != K.ONGOING:
                other = 1 - side
                if kept[other] > 0:
                    learn_step(weights, other, hist, slopes, kept[other], outcome_value(result, other),
                               rate, tcl, beta, lam, counters)
                counters[C_GAMES] += 1
                counters[C_CELLS] += np.float64(K.empty_cells(start)) - np.float64(K.empty_cells(st))
                if result == K.DRAW:
                    counters[C_DRAW] += 1
                elif result == K.WIN_A:
                    counters[C_WIN_A] += 1
                else:
                    counters[C_WIN_B] += 1
                break
            if not learn:  # an exploratory move nobody learns from cuts the trace
                kept[side] = 0
            m = min(kept[side] + 1, hist.shape[1])
            for j in range(m - 1, 0, -1):
                copy_into(hist[side, j], hist[side, j - 1])
                slopes[side, j] = slopes[side, j - 1]
            copy_into(hist[side, 0], idx)
            kept[side] = m
    return s
