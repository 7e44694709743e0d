"""Ratings fitted to a whole tournament at once: one Elo number an agent,
on one scale, whoever met whom.

The ranking's "Elo vs field" (``standings.rank``) is a performance: an
agent's score against the opponents it happened to meet.  It depends on
the field (everybody's rises with a ``random`` that they all beat), and
the difference of two agents' figures is not their Elo difference.  A
fitted rating is: the Bradley-Terry model on the logistic Elo scale,

    expected score of i against j = 1 / (1 + 10 ** ((r_j - r_i) / 400)),

with the ratings ``r`` that make the games played most likely (maximum
likelihood, a win 1, a draw ½, a loss 0 of a point), their mean fixed at
0.  It is what BayesElo and Ordo compute; it joins what the pairings say
(a beats b by 191 Elo and b beats c by 191 Elo: a is about 382 above c,
even if the two never met), and in a gauntlet it ranks the opponents on
one scale.

Choices, each stated in the report:

* **Plain maximum likelihood, a prior only where it has no answer**:
  the games alone are fitted, so two agents' difference is the Elo of
  their score, the pairing's figure (39-1: 636 Elo).  Where some agents
  won (or lost) every game they played against the rest, no finite
  ratings fit those games (as a sweep has no finite Elo in ``stats``);
  then, and only then, one virtual draw is added to each pairing
  (``PRIOR_DRAWS``; ``Rating.prior`` says which), and the report says so.
  The prior was always added until this version: it pulled near-sweeps
  in, 39-1 to 568 Elo (the score 39.5 of 41), 9-1 from 382 to 321, and
  in simulated round robins of agents at -300/-100/0/+100/+300 with 10
  games a pairing the outermost by about 40 Elo, where the plain fit is
  off by about 19, outwards (``benchmarks/stats_coverage.py``).  A sweep
  is still read through the prior: 40-0 is 763 Elo apart (40.5 of 41),
  10-0 529, a figure the prior makes.
* **Intervals** from the curvature of the likelihood at its maximum (the
  inverse of the Fisher information, in the space of ratings with mean 0),
  each an agent's rating against the mean of the field, at the normal
  approximation's level: good for dozens of games, not a handful.  The
  information is the binomial one (a draw counted as a coin toss's half),
  so with many draws an interval is wider than the pairings' trinomial
  ones: conservative.  (Scaling it by the games' observed variance, as a
  quasi-likelihood would, made a sweep's interval shrink to a few Elo.)
* **Only a connected tournament is rated**: if the agents fall into
  groups that never met, no games say how the groups compare, and there
  are no fitted ratings (``None``); the arena's schedules (round robin,
  gauntlet) are always connected.

numpy does the linear algebra (a Newton iteration on the log-likelihood,
a few dozen agents at most).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

#: Virtual draws added to each pairing where the games alone fit no finite ratings (see the module's docstring).
PRIOR_DRAWS = 1.0
#: Elo per natural unit of the logistic: ``r = ELO_UNIT * theta``.
ELO_UNIT = 400 / math.log(10)
_SCORE = {"A": 1.0, "draw": 0.5, "B": 0.0}


@dataclass(frozen=True)
class Rating:
    """An agent's fitted rating (its field's mean is 0) and its interval."""

    agent: str
    elo: float
    low: float
    high: float
    #: The virtual draws this fit added to each pairing: 0, or ``PRIOR_DRAWS``
    #: where the games alone have no finite maximum (a sweep).
    prior: float = 0.0


def fit_ratings(outcomes: Iterable[tuple[str, str, str]], level: float = 0.95, prior: float = PRIOR_DRAWS) -> tuple[Rating, ...] | None:
    """The fitted ratings of every agent in ``outcomes`` (``(first, second,
    result)``, result ``"A"``, ``"B"`` or ``"draw"``: the ``standings.rank``
    outcomes), best first (equal ratings by name); ``None`` when the agents
    do not all meet, directly or through others, or when no finite
    ratings fit (only without a prior).  The games alone are fitted where
    they have a finite maximum; ``prior`` is the virtual draws each pairing
    gets where they have none (0: no ratings then)."""
    agents: dict[str, int] = {}
    counts: dict[tuple[int, int], list[int]] = {}  # (i, j), i < j -> i's wins, draws, losses
    for first, second, result in outcomes:
        if result not in _SCORE:
            raise ValueError(f"a result is 'A', 'B' or 'draw', not {result!r}")
        if first == second:
            raise ValueError(f"an agent does not play itself: {first!r}")
        i, j = (agents.setdefault(name, len(agents)) for name in (first, second))
        score = _SCORE[result]
        if i > j:
            i, j, score = j, i, 1.0 - score
        counts.setdefault((i, j), [0, 0, 0])[(1.0, 0.5, 0.0).index(score)] += 1
    n = len(agents)
    if n == 0:
        return ()
    fitted = _fit(n, counts, 0.0)
    used = 0.0
    if fitted is None and prior > 0:  # a sweep: no finite maximum without the prior
        fitted, used = _fit(n, counts, prior), prior
    if fitted is None:
        return None
    theta, covariance = fitted
    z = NormalDist().inv_cdf(0.5 + level / 2)
    ratings = []
    for k, name in enumerate(agents):
        half = z * math.sqrt(max(float(covariance[k, k]), 0.0)) * ELO_UNIT
        elo = float(theta[k]) * ELO_UNIT + 0.0  # + 0.0: no -0.0
        ratings.append(Rating(name, elo, elo - half, elo + half, used))
    ratings.sort(key=lambda r: (-round(r.elo, 9), r.agent))
    return tuple(ratings)


def _fit(n: int, counts: dict[tuple[int, int], list[int]], prior: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The ratings (natural units, mean 0) and their covariance that make
    ``counts`` (``(i, j)``: i's wins, draws and losses against j) most
    likely, ``prior`` virtual draws added to each pairing; ``None`` where
    the agents do not all meet or no finite ratings fit."""
    games = np.zeros((n, n))  # games[i, j]: games between i and j, the prior's included
    points = np.zeros((n, n))  # points[i, j]: i's points against j, the prior's included
    for (i, j), (w, d, lost) in counts.items():
        played = w + d + lost + prior
        games[i, j] = games[j, i] = played
        points[i, j] = w + 0.5 * d + 0.5 * prior
        points[j, i] = lost + 0.5 * d + 0.5 * prior
    if not _connected(games > 0):
        return None
    if not (_connected(points > 0) and _connected(points.T > 0)):  # Ford's condition: see _connected
        return None
    theta = _maximise(games, points)
    if theta is None:  # it did not settle
        return None
    return theta, np.linalg.pinv(_information(games, theta))


def _connected(met: np.ndarray) -> bool:
    """Whether every agent is reached from the first along ``met``
    (``met[i, j]``: a step from i to j).  With the games played, whether
    the agents all meet, directly or through others.  With the points
    scored, in both directions (``points > 0`` and its transpose), Ford's
    condition for a finite maximum of the likelihood: however the agents
    are split in two, each side scored against the other.  Without it some
    group won every game it played against the rest, and its ratings run
    off to infinity; Newton's steps there shrink with the information
    (``p·(1-p)`` underflows) and looked settled, so a sweep among three
    agents without the prior was rated 4183 Elo with an interval of zero
    width."""
    seen = {0}
    todo = [0]
    while todo:
        i = todo.pop()
        for j in np.flatnonzero(met[i]):
            if int(j) not in seen:
                seen.add(int(j))
                todo.append(int(j))
    return len(seen) == met.shape[0]


def _expected(theta: np.ndarray) -> np.ndarray:
    """``p[i, j]``: i's expected score against j."""
    return 1.0 / (1.0 + np.exp(theta[None, :] - theta[:, None]))


def _information(games: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """The Fisher information of the ratings (a graph Laplacian: positive
    semi-definite, its null space the constant shift)."""
    p = _expected(theta)
    weights = games * p * (1.0 - p)
    return np.diag(weights.sum(axis=1)) - weights


def _maximise(games: np.ndarray, points: np.ndarray) -> np.ndarray | None:
    """Newton's method on the log-likelihood, the ratings' mean kept at 0;
    None if it does not settle (ratings running off to infinity)."""
    theta = np.zeros(games.shape[0])
    for _ in range(200):
        gradient = (points - games * _expected(theta)).sum(axis=1)
        step = np.linalg.pinv(_information(games, theta)) @ gradient
        step -= step.mean()
        theta = theta + np.clip(step, -2.0, 2.0)  # at most about 350 Elo a step: no overshoot from far away
        if float(np.abs(step).max()) < 1e-10:
            return theta - theta.mean()
        if float(np.abs(theta).max()) > 50:  # beyond 8,000 Elo: no finite maximum
            return None
    return None
