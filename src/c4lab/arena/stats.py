"""Match statistics: how much a set of games says about who is stronger.

* ``Trinomial``: one agent's wins, draws and losses against another; its
  score, Elo difference with a confidence interval, likelihood of
  superiority (LOS) and the p-value of "the two are equal".
* ``Pentanomial``: the same games read as pairs (one opening, sides
  swapped).  Pairing cancels most of the luck of the opening and of moving
  first, so its interval is the honest one for a paired match.
* ``sign_test``, ``sweep_bound``, ``elo_bound``: what a handful of games
  or a sweep says, exactly.

Two neighbours build on these and have modules of their own:
``c4lab.arena.sprt`` (``SPRT``: the sequential test fishtest runs, to stop
a match as soon as it has decided between two Elo hypotheses) and
``c4lab.arena.standings`` (``rank``: a whole tournament's totals, cross
table, ranking and each agent's Elo against the field).  Their names are
still read from here (``from c4lab.arena.stats import SPRT``), loaded on
first use.

Elo is the logistic scale throughout: an expected score ``s`` is
``-400·log10(1/s - 1)`` Elo, and ``score_from_elo`` is its inverse.  The
intervals and tests use the normal approximation of a mean score, as
cutechess and fishtest do; they are good for dozens of games and more, not
for a handful.  The SPRT maximises the exact multinomial likelihood, as
fishtest does today.  Beside them, ``sign_test`` is exact at every sample size
(a few games, a sweep): the two-sided sign test on the decisive games (or
on the pairs won and lost).  Standard library only (``math``,
``statistics.NormalDist``).

Edges, chosen so that a report never shows an invented number:

* A score of exactly 1 is ``+inf`` Elo (0 is ``-inf``), never clamped to
  some finite value: a sweep shows no finite difference to report.  An
  interval end whose score falls outside [0, 1] is likewise infinite.
  What a sweep does say is a bound (``sweep_bound``): the end of the exact
  (Clopper-Pearson) interval of the score, at least that many Elo.
* No games at all: the score, Elo and interval are ``nan``; the LOS is 0.5
  and the p-value 1 (no evidence either way).
* The normal approximation has nothing to say when every game ended the
  same way (zero variance): the interval shrinks to the point and the
  p-value is 0 (1 when that outcome is a draw).  The LOS and the SPRT do
  not have this flaw (see ``los`` and ``SPRT.llr``); the SPRT has no LLR
  without a game (0) and refuses a hypothesis more than 6381.8359 Elo
  from 0 either way (a score of 1 to double precision, for one side).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist

from c4lab.lazy import lazy_dir, lazy_names

__all__ = [
    "Pentanomial",
    "Record",
    "Trinomial",
    "elo",
    "elo_bound",
    "elo_from_score",
    "elo_interval",
    "los",
    "p_value",
    "pentanomial_counts",
    "pentanomial_elo_interval",
    "score_from_elo",
    "sign_test",
    "sweep_bound",
]

#: The names of the two neighbour modules that were this module's once, read from here on first use.
_MOVED = {
    "SPRT": "c4lab.arena.sprt",
    "UntestableHypothesis": "c4lab.arena.sprt",
    "Cell": "c4lab.arena.standings",
    "Standing": "c4lab.arena.standings",
    "Table": "c4lab.arena.standings",
    "rank": "c4lab.arena.standings",
}
__getattr__ = lazy_names(__name__, _MOVED)
__dir__ = lazy_dir(__name__, _MOVED)

_NORMAL = NormalDist()

#: Per-game scores of a win, a draw and a loss, in the order of the counts.
GAME_SCORES = (1.0, 0.5, 0.0)
#: A pair's mean score for pair totals 0, 0.5, 1, 1.5 and 2, in the order of the counts.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


# -- the Elo scale ---------------------------------------------------------------------


def elo_from_score(score: float) -> float:
    """The Elo difference whose expected score is ``score`` (a fraction in
    [0, 1]): ``-400·log10(1/s - 1)``; ``±inf`` at 1 and 0, ``nan`` for ``nan``."""
    if math.isnan(score):
        return math.nan
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"a score fraction is between 0 and 1, not {score}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """The expected score of a player ``elo`` points stronger: ``1 / (1 + 10^(-elo/400))``."""
    if math.isnan(elo):
        return math.nan
    exponent = -elo / 400.0
    if exponent > 300:  # 10**exponent would overflow; the score is 0 to double precision
        return 0.0
    return 1.0 / (1.0 + 10.0**exponent)


def _z(level: float) -> float:
    """The two-sided normal quantile of a confidence level (1.96 for 0.95)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"a confidence level is between 0 and 1 (exclusive), not {level}")
    return _NORMAL.inv_cdf(0.5 + level / 2.0)


def _moments(values: Sequence[float], counts: Sequence[float]) -> tuple[float, float, float]:
    """Size, mean and (population) variance of a sample given as counts of values."""
    n = float(sum(counts))
    if n == 0:
        return 0.0, math.nan, math.nan
    mean = sum(v * c for v, c in zip(values, counts, strict=True)) / n
    variance = sum(c * (v - mean) ** 2 for v, c in zip(values, counts, strict=True)) / n
    return n, mean, variance


def _z_of_equal(n: float, mean: float, variance: float) -> float:
    """The Wald statistic of "expected score 0.5" for a sample's size, mean
    and variance (``_moments``): ``(mean - 0.5) / sqrt(variance / n)``;
    ``±inf`` with zero variance and a mean off 0.5, ``nan`` with no sample
    or every score exactly 0.5 (no evidence either way)."""
    if n == 0:
        return math.nan
    if variance == 0:
        return math.nan if mean == 0.5 else math.copysign(math.inf, mean - 0.5)
    return (mean - 0.5) / math.sqrt(variance / n)


def _elo_interval(n: float, mean: float, variance: float, level: float) -> tuple[float, float]:
    """``mean ± z·sqrt(variance/n)`` on the score, each end mapped to Elo."""
    z = _z(level)
    if n == 0:
        return math.nan, math.nan
    half = z * math.sqrt(variance / n)
    return elo_from_score(max(0.0, mean - half)), elo_from_score(min(1.0, mean + half))


def sweep_bound(games: int, level: float = 0.95) -> float:
    """The Elo that ``games`` games all won show at least, at ``level``: the
    lower end of the exact (Clopper-Pearson) interval of the score, which for
    a sweep is ``((1 - level) / 2) ** (1 / games)`` (the normal approximation
    has no interval there: every game ended alike).  ``nan`` for no games;
    the bound of a score of 0 is its negative.

        >>> round(sweep_bound(10))
        140
    """
    if games <= 0:
        return math.nan
    return elo_from_score(((1.0 - level) / 2.0) ** (1.0 / games))


def sign_test(wins: int, losses: int) -> float:
    """The exact two-sided p-value of "equal strength" from the decisive
    results alone: under it a decisive game (or pair) goes either way with
    chance ½, so ``wins`` is Binomial(wins + losses, ½), and
    ``p = min(1, 2·P(X <= min(wins, losses)))``.  1 without a decisive result.

    Why this test: it needs no normal approximation, so it is honest for a
    handful of games and for a sweep (9-1-0 gives 0.0039 where the Wald
    test gives below 1e-15; 10-0-0 gives 0.002 where the Wald test has no
    variance to work with); and leaving the draws out is the assumption the
    LOS already makes (a draw says nothing about which side is stronger),
    with no model of the draw rate to get wrong.  It is conservative (a
    p-value of a discrete test) and spends the draws' information, so in a
    long match with many draws the Wald test on the scores is the sharper
    one, and fine there.

        >>> round(sign_test(9, 0), 4), sign_test(3, 3)
        (0.0039, 1.0)
    """
    wins, losses = check_counts((wins, losses), 2, "win/loss")
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    # The tail sum(C(n, i), i <= k) / 2^n, term by term in logs from i = k down (the terms shrink as i
    # falls, for k <= n/2), stopped once they no longer count: exact enough, and quick for a run's million games.
    log_half = n * math.log(0.5)
    tail = 0.0
    for i in range(k, -1, -1):
        term = math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + log_half)
        tail += term
        if term < tail * 1e-17:
            break
    return min(1.0, 2.0 * tail)


def elo_bound(wins: int, draws: int, losses: int, level: float = 0.95) -> tuple[str, float] | None:
    """For a score of exactly 1 or 0 (no finite Elo), the bound the exact
    interval gives: ``("at_least", sweep_bound(games))`` for a sweep,
    ``("at_most", -sweep_bound(games))`` for no point at all (a few games
    bound little: 4 wins in 4 say only "at least -72"); ``None`` for any
    other score."""
    games = wins + draws + losses
    if games and wins == games:
        return "at_least", sweep_bound(games, level)
    if games and losses == games:
        return "at_most", -sweep_bound(games, level)
    return None


def check_counts(counts: Sequence[object], size: int, what: str) -> tuple[int, ...]:
    """``counts`` as ``size`` plain ints, each 0 or more: any integer,
    NumPy's too (what ``np.bincount`` or a sum of an array gives, which
    was refused as not a whole number), but not a bool or a float;
    ``ValueError`` naming ``what`` they count otherwise."""
    if len(counts) != size:
        raise ValueError(f"{what} counts are {size} numbers, not {len(counts)}: {tuple(counts)}")
    checked: list[int] = []
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 0:
            raise ValueError(f"{what} counts are whole numbers >= 0, not {c!r}")
        checked.append(int(c))
    return tuple(checked)


# -- one agent against another: wins, draws, losses ----------------------------------------


class Record:
    """Wins, draws and losses, and what they add up to: the base of
    ``Trinomial`` (one agent against another) and of
    ``standings.Standing`` (one agent's whole tournament)."""

    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        """Wins, draws and losses together."""
        return self.wins + self.draws + self.losses

    @property
    def score(self) -> float:
        """Points: a win 1, a draw a half."""
        return self.wins + 0.5 * self.draws

    @property
    def fraction(self) -> float:
        """The score fraction ``s`` (``nan`` without games)."""
        return self.score / self.games if self.games else math.nan


@dataclass(frozen=True)
class Trinomial(Record):
    """One agent's wins, draws and losses against another, and what they say.

    The games are taken as independent: each scores 1, 0.5 or 0, and the
    mean score has the standard error ``sqrt(variance/n)``, where
    ``variance`` is that of the per-game scores."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        counts = check_counts((self.wins, self.draws, self.losses), 3, "win/draw/loss")
        for name, count in zip(("wins", "draws", "losses"), counts, strict=True):
            object.__setattr__(self, name, count)

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """Count per-game scores (1 a win, 0.5 a draw, 0 a loss)."""
        counts = [0, 0, 0]
        for score in scores:
            if score not in GAME_SCORES:
                raise ValueError(f"a game scores 1, 0.5 or 0, not {score!r}")
            counts[GAME_SCORES.index(score)] += 1
        return cls(*counts)

    @property
    def counts(self) -> tuple[int, int, int]:
        """``(wins, draws, losses)``."""
        return (self.wins, self.draws, self.losses)

    @property
    def variance(self) -> float:
        """The variance of one game's score (``nan`` without games)."""
        return _moments(GAME_SCORES, self.counts)[2]

    @property
    def elo(self) -> float:
        """The Elo difference of the score fraction (``±inf`` for a sweep)."""
        return elo_from_score(self.fraction)

    def elo_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` confidence interval of the Elo difference: the normal
        interval ``s ± z·sd/sqrt(n)`` of the score, both ends mapped to Elo
        (so it is not symmetric around ``elo``).  A sweep has no spread:
        ``(inf, inf)`` (or ``(-inf, -inf)``, all lost); no games ``(nan,
        nan)``.  The report prints both as n/a."""
        return _elo_interval(*_moments(GAME_SCORES, self.counts), level)

    @property
    def los(self) -> float:
        """Likelihood of superiority, cutechess's formula ``Phi((W-L)/sqrt(W+L))``:
        draws carry no information about which side is stronger.  0.5 when
        no game was decisive."""
        decisive = self.wins + self.losses
        if decisive == 0:
            return 0.5
        return _NORMAL.cdf((self.wins - self.losses) / math.sqrt(decisive))

    @property
    def p_value(self) -> float:
        """Two-sided p-value of "equal strength" (expected score 0.5).

        A Wald z-test on the mean score: ``z = (s - 0.5) / (sd/sqrt(n))``
        with the observed per-game standard deviation ``sd``, and
        ``p = 2·Phi(-|z|)``.  It is the test dual to ``elo_interval``: p is
        below ``1 - level`` exactly when the interval excludes 0 Elo.  With
        zero variance it degenerates to 0 (1 if every game was drawn); 1
        without games."""
        z = _z_of_equal(*_moments(GAME_SCORES, self.counts))
        return 1.0 if math.isnan(z) else 2.0 * _NORMAL.cdf(-abs(z))

    @property
    def sign_p_value(self) -> float:
        """Exact two-sided p-value of "equal strength" from the wins and
        losses, the draws left out: ``sign_test(wins, losses)``.  Unlike
        ``p_value`` it holds for a few games and for a sweep."""
        return sign_test(self.wins, self.losses)

    def swapped(self) -> Trinomial:
        """The same games from the opponent's side."""
        return Trinomial(self.losses, self.draws, self.wins)


def elo(wins: int, draws: int, losses: int) -> float:
    """``Trinomial(wins, draws, losses).elo``."""
    return Trinomial(wins, draws, losses).elo


def elo_interval(wins: int, draws: int, losses: int, level: float = 0.95) -> tuple[float, float]:
    """``Trinomial(wins, draws, losses).elo_interval(level)``."""
    return Trinomial(wins, draws, losses).elo_interval(level)


def los(wins: int, draws: int, losses: int) -> float:
    """``Trinomial(wins, draws, losses).los``."""
    return Trinomial(wins, draws, losses).los


def p_value(wins: int, draws: int, losses: int) -> float:
    """``Trinomial(wins, draws, losses).p_value``."""
    return Trinomial(wins, draws, losses).p_value


# -- game pairs ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pentanomial:
    """A paired match: how many pairs the agent scored 0, 0.5, 1, 1.5 and 2
    points in (``counts``, in that order; a pair is two games on one opening
    with the sides swapped).

    The pairs, not the games, are the independent samples: the variance is
    that of a pair's mean score and the standard error is
    ``sqrt(variance/pairs)``.  When the opening or the first move decides a
    lot, the two games of a pair are correlated and this interval is
    narrower (truer) than the trinomial one on the same games."""

    counts: tuple[int, int, int, int, int]

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", check_counts(tuple(self.counts), 5, "pentanomial"))

    @classmethod
    def from_pairs(cls, pairs: Iterable[Sequence[float]]) -> Pentanomial:
        """Count pairs given as two per-game scores each (1, 0.5 or 0)."""
        return cls(pentanomial_counts(pairs))

    @property
    def pairs(self) -> int:
        """The pairs counted."""
        return sum(self.counts)

    @property
    def games(self) -> int:
        """The games of the pairs: two a pair."""
        return 2 * self.pairs

    @property
    def score(self) -> float:
        """Points over all the games."""
        return sum(0.5 * i * c for i, c in enumerate(self.counts))

    @property
    def fraction(self) -> float:
        """The score fraction (the same as the games' trinomial one)."""
        return self.score / self.games if self.pairs else math.nan

    @property
    def variance(self) -> float:
        """The variance of one pair's mean score (``nan`` without pairs)."""
        return _moments(PAIR_SCORES, self.counts)[2]

    @property
    def elo(self) -> float:
        """The Elo difference of the score fraction (``±inf`` for a sweep)."""
        return elo_from_score(self.fraction)

    def elo_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` confidence interval of the Elo difference from the
        pentanomial variance: ``s ± z·sd_pair/sqrt(pairs)``, mapped to Elo;
        ``(±inf, ±inf)`` for pairs all won (lost), ``(nan, nan)`` with none,
        as ``Trinomial.elo_interval``."""
        return _elo_interval(*_moments(PAIR_SCORES, self.counts), level)

    @property
    def los(self) -> float:
        """Likelihood of superiority from the pairs: ``Phi(z)`` with the
        pairs' ``z = (s - 0.5) / (sd_pair/sqrt(pairs))``, the normal model
        fishtest reads a paired match with (every pair informs it, a drawn
        pair and a pair split one game each alike).  0.5 without pairs;
        with zero variance 1 or 0 by the side of 0.5 the score falls on
        (0.5 when it is 0.5)."""
        z = _z_of_equal(*_moments(PAIR_SCORES, self.counts))
        return 0.5 if math.isnan(z) else _NORMAL.cdf(z)

    @property
    def p_value(self) -> float:
        """Two-sided p-value of "equal strength" from the pairs: ``2·Phi(-|z|)``
        with the pairs' ``z`` (see ``los``), the test dual to ``elo_interval``.
        Where the opening or the first move decides much, it is smaller than
        the games' (``Trinomial.p_value``) on the same games.  1 without
        pairs; with zero variance 0 (1 when every pair scored 1)."""
        z = _z_of_equal(*_moments(PAIR_SCORES, self.counts))
        return 1.0 if math.isnan(z) else 2.0 * _NORMAL.cdf(-abs(z))

    @property
    def sign_p_value(self) -> float:
        """Exact two-sided p-value of "equal strength" from the pairs: the
        sign test (``sign_test``) on the pairs won (1½ or 2 points) and lost
        (0 or ½), the even pairs (1 point) left out."""
        c = self.counts
        return sign_test(c[3] + c[4], c[0] + c[1])

    def swapped(self) -> Pentanomial:
        """The same pairs from the opponent's side."""
        c = self.counts
        return Pentanomial((c[4], c[3], c[2], c[1], c[0]))


def pentanomial_counts(pairs: Iterable[Sequence[float]]) -> tuple[int, int, int, int, int]:
    """How many pairs total 0, 0.5, 1, 1.5 and 2 points; each pair is the
    agent's two per-game scores (1, 0.5 or 0)."""
    counts = [0, 0, 0, 0, 0]
    for pair in pairs:
        if len(pair) != 2:
            raise ValueError(f"a pair is two game scores, not {tuple(pair)!r}")
        for score in pair:
            if score not in GAME_SCORES:
                raise ValueError(f"a game scores 1, 0.5 or 0, not {score!r} (pair {tuple(pair)!r})")
        counts[round(2 * (pair[0] + pair[1]))] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def pentanomial_elo_interval(
    counts: Sequence[int], level: float = 0.95
) -> tuple[float, float]:
    """``Pentanomial(counts).elo_interval(level)``."""
    return Pentanomial(tuple(counts)).elo_interval(level)  # type: ignore[arg-type]
