"""Ratings fitted to a whole tournament at once: one Elo number an agent,
on one scale, whoever met whom.

The ranking's "Elo vs field" (``stats.rank``) is a performance: an
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

* **A prior of one virtual draw a pairing** (``PRIOR_DRAWS``): an agent
  that won every game would otherwise have no finite rating (as a sweep
  has no finite Elo in ``stats``).  It pulls ratings towards the mean:
  with 100 games at 75 %, 189 instead of 191 Elo apart; in simulated
  round robins of agents at -300/-100/0/+100/+300 the outermost by 8-13
  Elo with 40 games a pairing, by 40-47 with 10, and at -600/0/+600 with
  10 games (mostly sweeps) by about 220 (``benchmarks/stats_coverage.py``).
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

#: Virtual draws added to each pairing that played (see the module's docstring).
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


def fit_ratings(outcomes: Iterable[tuple[str, str, str]], level: float = 0.95, prior: float = PRIOR_DRAWS) -> tuple[Rating, ...] | None:
    """The fitted ratings of every agent in ``outcomes`` (``(first, second,
    result)``, result ``"A"``, ``"B"`` or ``"draw"``: the ``stats.rank``
    outcomes), best first (equal ratings by name); ``None`` when the agents
    do not all meet, directly or through others, or when no finite
    ratings fit (only without a prior).  ``prior``: the virtual draws a
    pairing gets (0: plain maximum likelihood, none for a sweep)."""
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
    covariance = np.linalg.pinv(_information(games, theta))
    z = NormalDist().inv_cdf(0.5 + level / 2)
    names = list(agents)
    ratings = []
    for k, name in enumerate(names):
        half = z * math.sqrt(max(float(covariance[k, k]), 0.0)) * ELO_UNIT
        elo = float(theta[k]) * ELO_UNIT + 0.0  # + 0.0: no -0.0
        ratings.append(Rating(name, elo, elo - half, elo + half))
    ratings.sort(key=lambda r: (-round(r.elo, 9), r.agent))
    return tuple(ratings)


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
