"""Match statistics: how much a set of games says about who is stronger.

* ``Trinomial``: one agent's wins, draws and losses against another; its
  score, Elo difference with a confidence interval, likelihood of
  superiority (LOS) and the p-value of "the two are equal".
* ``Pentanomial``: the same games read as pairs (one opening, sides
  swapped).  Pairing cancels most of the luck of the opening and of moving
  first, so its interval is the honest one for a paired match.
* ``SPRT``: the sequential test fishtest runs, to stop a match as soon as
  it has decided between two Elo hypotheses.
* ``rank``: a whole tournament: totals, cross table, ranking, and each
  agent's Elo against the field (a performance; the ratings fitted to the
  whole tournament are ``c4lab.arena.ratings``).

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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import ClassVar, Literal

__all__ = [
    "SPRT",
    "Cell",
    "Pentanomial",
    "Standing",
    "Table",
    "Trinomial",
    "UntestableHypothesis",
    "elo",
    "elo_bound",
    "elo_from_score",
    "elo_interval",
    "los",
    "p_value",
    "pentanomial_counts",
    "pentanomial_elo_interval",
    "rank",
    "score_from_elo",
    "sign_test",
    "sweep_bound",
]

_NORMAL = NormalDist()

#: Per-game scores of a win, a draw and a loss, in the order of the counts.
_GAME_SCORES = (1.0, 0.5, 0.0)
#: A pair's mean score for pair totals 0, 0.5, 1, 1.5 and 2, in the order of the counts.
_PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


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
    wins, losses = _check_counts((wins, losses), 2, "win/loss")
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


def _check_counts(counts: Sequence[object], size: int, what: str) -> tuple[int, ...]:
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


@dataclass(frozen=True)
class Trinomial:
    """One agent's wins, draws and losses against another, and what they say.

    The games are taken as independent: each scores 1, 0.5 or 0, and the
    mean score has the standard error ``sqrt(variance/n)``, where
    ``variance`` is that of the per-game scores."""

    wins: int
    draws: int
    losses: int

    def __post_init__(self) -> None:
        counts = _check_counts((self.wins, self.draws, self.losses), 3, "win/draw/loss")
        for name, count in zip(("wins", "draws", "losses"), counts, strict=True):
            object.__setattr__(self, name, count)

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> Trinomial:
        """Count per-game scores (1 a win, 0.5 a draw, 0 a loss)."""
        counts = [0, 0, 0]
        for score in scores:
            if score not in _GAME_SCORES:
                raise ValueError(f"a game scores 1, 0.5 or 0, not {score!r}")
            counts[_GAME_SCORES.index(score)] += 1
        return cls(*counts)

    @property
    def counts(self) -> tuple[int, int, int]:
        """``(wins, draws, losses)``."""
        return (self.wins, self.draws, self.losses)

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

    @property
    def variance(self) -> float:
        """The variance of one game's score (``nan`` without games)."""
        return _moments(_GAME_SCORES, self.counts)[2]

    @property
    def elo(self) -> float:
        """The Elo difference of the score fraction (``±inf`` for a sweep)."""
        return elo_from_score(self.fraction)

    def elo_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` confidence interval of the Elo difference: the normal
        interval ``s ± z·sd/sqrt(n)`` of the score, both ends mapped to Elo
        (so it is not symmetric around ``elo``)."""
        return _elo_interval(*_moments(_GAME_SCORES, self.counts), level)

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
        z = _z_of_equal(*_moments(_GAME_SCORES, self.counts))
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
        object.__setattr__(self, "counts", _check_counts(tuple(self.counts), 5, "pentanomial"))

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
        return _moments(_PAIR_SCORES, self.counts)[2]

    @property
    def elo(self) -> float:
        """The Elo difference of the score fraction (``±inf`` for a sweep)."""
        return elo_from_score(self.fraction)

    def elo_interval(self, level: float = 0.95) -> tuple[float, float]:
        """The ``level`` confidence interval of the Elo difference from the
        pentanomial variance: ``s ± z·sd_pair/sqrt(pairs)``, mapped to Elo."""
        return _elo_interval(*_moments(_PAIR_SCORES, self.counts), level)

    @property
    def los(self) -> float:
        """Likelihood of superiority from the pairs: ``Phi(z)`` with the
        pairs' ``z = (s - 0.5) / (sd_pair/sqrt(pairs))``, the normal model
        fishtest reads a paired match with (every pair informs it, a drawn
        pair and a pair split one game each alike).  0.5 without pairs;
        with zero variance 1 or 0 by the side of 0.5 the score falls on
        (0.5 when it is 0.5)."""
        z = _z_of_equal(*_moments(_PAIR_SCORES, self.counts))
        return 0.5 if math.isnan(z) else _NORMAL.cdf(z)

    @property
    def p_value(self) -> float:
        """Two-sided p-value of "equal strength" from the pairs: ``2·Phi(-|z|)``
        with the pairs' ``z`` (see ``los``), the test dual to ``elo_interval``.
        Where the opening or the first move decides much, it is smaller than
        the games' (``Trinomial.p_value``) on the same games.  1 without
        pairs; with zero variance 0 (1 when every pair scored 1)."""
        z = _z_of_equal(*_moments(_PAIR_SCORES, self.counts))
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
            if score not in _GAME_SCORES:
                raise ValueError(f"a game scores 1, 0.5 or 0, not {score!r} (pair {tuple(pair)!r})")
        counts[round(2 * (pair[0] + pair[1]))] += 1
    return (counts[0], counts[1], counts[2], counts[3], counts[4])


def pentanomial_elo_interval(
    counts: Sequence[int], level: float = 0.95
) -> tuple[float, float]:
    """``Pentanomial(counts).elo_interval(level)``."""
    return Pentanomial(tuple(counts)).elo_interval(level)  # type: ignore[arg-type]


# -- the sequential test --------------------------------------------------------------------

Verdict = Literal["H0", "H1"]
#: What the test reads: W/D/L counts or pentanomial pair counts, as objects or plain numbers.
Counts = Trinomial | Pentanomial | Sequence[int]
_SPRT_KEYS = ("elo0", "elo1", "alpha", "beta")
_SPRT_FORMAT = "elo0=0,elo1=20,alpha=0.05,beta=0.05"
#: The error rates a test takes when it does not give them (fishtest's).
_SPRT_DEFAULTS = {"alpha": 0.05, "beta": 0.05}


class UntestableHypothesis(ValueError):
    """An SPRT hypothesis more than 6381.8359 Elo from 0, either way, where
    the stronger side's expected score is 1 to double precision: well
    formed, but no match can tell it from a slightly smaller gap.
    ``c4lab arena`` refuses it; a results file whose header holds one
    (written by a c4lab that took it) still loads, and its report says the
    test cannot be read."""


def _number(value: float) -> str:
    """``value`` as ``SPRT.text`` writes it: short (``%g``: ``20``, ``0.05``)
    where that reads back as the same float, else every digit it takes
    (``repr``), so that a results file's test is the run's, to the last
    bit (``%g`` alone wrote ``elo1=6381.8359`` as ``6381.84``, a hypothesis
    the file's reader refused, and ``elo0=1.0000001,elo1=1.0000002`` as
    ``elo0=1,elo1=1``)."""
    short = f"{value:g}"
    return short if float(short) == value else repr(value)


@dataclass(frozen=True)
class SPRT:
    """Wald's sequential probability ratio test between two Elo differences,
    after fishtest (its logistic model; see ``llr``): H0 "the agent is ``elo0`` stronger" against H1
    "``elo1`` stronger" (logistic Elo), with false-positive rate ``alpha``
    and false-negative rate ``beta``.

    After each game (or pair) the log-likelihood ratio ``llr`` is compared
    with Wald's bounds ``log(beta/(1-alpha))`` and ``log((1-beta)/alpha)``:
    below the first accepts H0, above the second accepts H1, in between the
    match goes on."""

    elo0: float
    elo1: float
    alpha: float
    beta: float

    #: Games (or pairs) added to every count before the LLR: none, the exact
    #: likelihood needs none (see ``llr``).  Half a pair, measured, pulls
    #: the score towards ½: a sweep then accepts elo0=0 against elo1=1000.
    PRIOR: ClassVar[float] = 0.0

    def __post_init__(self) -> None:
        for key in _SPRT_KEYS:
            if not math.isfinite(getattr(self, key)):
                raise ValueError(f"SPRT: {key} must be a finite number, not {getattr(self, key)}")
        for key, value in (("alpha", self.alpha), ("beta", self.beta)):
            if not 0.0 < value < 1.0:
                raise ValueError(f"SPRT: {key} is a probability strictly between 0 and 1, not {value:g}")
        if self.alpha + self.beta >= 1.0:
            raise ValueError(f"SPRT: alpha + beta must be below 1 (got {self.alpha:g} + {self.beta:g})")
        if self.elo1 <= self.elo0:
            raise ValueError(f"SPRT: elo1 must be above elo0 (got elo0={self.elo0:g}, elo1={self.elo1:g})")
        for key in ("elo0", "elo1"):
            _testable_score(getattr(self, key), key)

    def text(self) -> str:
        """The settings as ``parse`` reads them back, the same test to the
        last bit (kept in a results file): each number short where that is
        exact (``elo0=0,elo1=20,alpha=0.05,beta=0.05``), else with every
        digit it takes."""
        return ",".join(f"{key}={_number(getattr(self, key))}" for key in _SPRT_KEYS)

    @classmethod
    def parse(cls, text: str) -> SPRT:
        """Read ``elo0=0,elo1=20,alpha=0.05,beta=0.05``: the four keys once
        each, in any order, ``alpha`` and ``beta`` 0.05 where not given
        (``elo0=0,elo1=20`` is the same test); anything else is a
        ``ValueError`` that says what is wrong, and what is not a string a
        ``TypeError``."""
        if not isinstance(text, str):
            raise TypeError(f"SPRT.parse takes a str like 'elo0=0,elo1=20', not {text!r:.60} "
                            f"(type {type(text).__name__})")
        values: dict[str, float] = {}
        for item in text.split(","):
            key, sep, value = (part.strip() for part in item.partition("="))
            if not sep or not key:
                raise ValueError(f"SPRT: {item.strip()!r} is not key=value (expected {_SPRT_FORMAT})")
            if key not in _SPRT_KEYS:
                raise ValueError(f"SPRT: unknown key {key!r} (the keys are {', '.join(_SPRT_KEYS)})")
            if key in values:
                raise ValueError(f"SPRT: {key} is given twice")
            try:
                number = float(value)
            except ValueError:
                raise ValueError(f"SPRT: {key}={value!r} is not a number") from None
            values[key] = number
        values = {**_SPRT_DEFAULTS, **values}
        missing = [key for key in _SPRT_KEYS if key not in values]
        if missing:
            raise ValueError(f"SPRT: missing {', '.join(missing)} (expected {_SPRT_FORMAT})")
        return cls(**values)

    def __str__(self) -> str:
        return self.text()

    @property
    def lower(self) -> float:
        """Accept H0 at or below this LLR: ``log(beta / (1 - alpha))``."""
        return math.log(self.beta / (1.0 - self.alpha))

    @property
    def upper(self) -> float:
        """Accept H1 at or above this LLR: ``log((1 - beta) / alpha)``."""
        return math.log((1.0 - self.beta) / self.alpha)

    def llr(self, counts: Counts) -> float:
        """The log-likelihood ratio of H1 against H0 given the results so far:
        3 counts (wins, draws, losses: games) or 5 (pentanomial: pairs).

        The generalized SPRT on the exact multinomial likelihood, as
        fishtest computes it (``LLR_logistic`` with ``MLE_expected`` in its
        ``LLRcalc.py``; M. Van den Bergh's note on the multinomial MLE,
        http://hardy.uhasselt.be/Fishtest/support_MLE_multinomial.pdf,
        Proposition 1.1).  Each hypothesis is the distribution over the
        outcomes (games, or pair totals) that makes the counts most likely
        among all whose expected score is ``s0`` (the score of ``elo0``),
        or ``s1`` (``fitted``), and

            LLR = sum over the outcomes of n_i · log(q1_i / q0_i).

        It is 0 without a game.  An outcome never seen adds nothing, and a
        hypothesis gives it a chance only where the outcomes seen cannot
        reach its score (a sweep of pairs read under ``s0``: ``s0`` of them
        won, the rest lost), so no prior is needed (``PRIOR`` is 0): a
        sweep accepts H1 after ``log((1-beta)/alpha) / log(s1/s0)`` pairs
        (53 for ``elo0=0,elo1=20``, 23 for 50, 8 for 200).  It replaced the
        normal approximation ``(s1 - s0)(2s - s0 - s1)/(2 var/n)`` with half
        a sample of prior in each cell (fishtest's ``LLR_alt2``), which
        took 13 pairs won for ``elo1=20`` and, over a gap of 100 Elo or
        more, favoured the hypothesis nearer 0 Elo (11.8% wrong verdicts
        at 200 Elo for ``elo0=0,elo1=200``, 3.3% now): see
        ``docs/experiments.md``."""
        values, raw = _sprt_sample(counts)
        if sum(raw) == 0:
            return 0.0
        weights = [c + self.PRIOR for c in raw]
        q0 = _fit_score(values, weights, score_from_elo(self.elo0))
        q1 = _fit_score(values, weights, score_from_elo(self.elo1))
        return math.fsum(n * (math.log(b) - math.log(a)) for n, a, b in zip(weights, q0, q1, strict=True) if n > 0)

    def fitted(self, counts: Counts, elo: float) -> tuple[float, ...]:
        """The hypothesis "``elo`` stronger" as ``llr`` reads it on these
        counts: the chances of the outcomes, in the counts' order, that make
        the counts most likely among all whose expected score is
        ``score_from_elo(elo)``.  A ``ValueError`` without a game (every
        such distribution is then as likely) and for an ``elo`` whose score
        is 0 or 1 to double precision."""
        values, raw = _sprt_sample(counts)
        if sum(raw) == 0:
            raise ValueError("SPRT.fitted needs a game: without one every distribution of a score is as likely")
        return _fit_score(values, [c + self.PRIOR for c in raw], _testable_score(elo, "elo"))

    def decide(self, counts: Counts) -> Verdict | None:
        """``"H1"`` (accept elo1), ``"H0"`` (accept elo0) or ``None`` (play
        on).  Never a verdict without a single game."""
        if sum(_sprt_sample(counts)[1]) == 0:
            return None
        llr = self.llr(counts)
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


def _sprt_sample(counts: Counts) -> tuple[tuple[float, ...], tuple[int, ...]]:
    """The values and checked counts of an SPRT sample: games or pairs."""
    if isinstance(counts, Trinomial | Pentanomial):
        counts = counts.counts
    if len(counts) == 3:
        return _GAME_SCORES, _check_counts(counts, 3, "win/draw/loss")
    if len(counts) == 5:
        return _PAIR_SCORES, _check_counts(counts, 5, "pentanomial")
    raise ValueError(f"SPRT counts are 3 (wins, draws, losses) or 5 (pentanomial), not {len(counts)}")


#: The largest gap an SPRT takes, either way: beyond it the stronger side's expected score is 1 to double precision.
_TESTABLE_REACH = "6381.8359"


def _testable_score(elo: float, key: str) -> float:
    """The expected score of ``elo``, refused (``UntestableHypothesis``
    naming ``key`` and the bound) where the stronger side's is 1 to double
    precision: no match can tell that hypothesis from a slightly smaller
    gap.  The range is the same either way, -6381.8359 to 6381.8359 Elo,
    so a test of A against B is taken exactly when the same test of B
    against A (``elo0, elo1`` as ``-elo1, -elo0``) is; a score near 0 is
    representable far further (down to -120000), which made ``elo0=-7000``
    a test and ``elo1=7000`` none."""
    if score_from_elo(abs(elo)) == 1.0:
        whose, reach = ("its", f"above {_TESTABLE_REACH}") if elo > 0 else ("its opponent's", f"below -{_TESTABLE_REACH}")
        raise UntestableHypothesis(f"SPRT: {key}={_number(elo)} is too far from 0 to test: {whose} expected score is "
                                   f"1 to double precision ({reach})")
    return score_from_elo(elo)


def _fit_score(values: Sequence[float], counts: Sequence[float], score: float) -> tuple[float, ...]:
    """The chances ``q`` of ``values`` that maximise ``sum(n_i · log q_i)``
    for the ``counts`` (some may be 0, not all) subject to
    ``sum(q_i · values_i) = score``, with ``score`` strictly between the
    smallest and the largest value.

    The Lagrange conditions give ``q_i = p_i / (1 + t·d_i)`` for the observed
    frequencies ``p_i`` and ``d_i = values_i - score``, where ``t`` is the
    root of ``f(t) = sum p_i·d_i / (1 + t·d_i)`` (then the ``q_i`` add up to 1
    and have the score): ``f`` decreases from ``f(0)``, the observed mean
    score less ``score``, towards the pole ``-1/d`` of the value farthest
    below the score (``t > 0``) or above it (``t < 0``), where it tends to
    ``-inf`` (or ``+inf``) if that value was observed.  If it was not,
    ``f`` is finite there, and where it has not reached 0 the maximum is
    at that end, the chance the observed outcomes leave going to that
    unseen value (a sweep of wins under a score of ½: half wins, half
    losses)."""
    total = math.fsum(counts)
    p = [c / total for c in counts]
    d = [v - score for v in values]
    seen = [(pi, di) for pi, di in zip(p, d, strict=True) if pi > 0]

    def f(t: float) -> tuple[float, float]:
        """``f(t)`` and its derivative ``-sum p_i·d_i² / (1 + t·d_i)²``."""
        value = slope = 0.0
        for pi, di in seen:
            term = pi * di / (1.0 + t * di)
            value += term
            slope -= term * term / pi
        return value, slope

    gap = f(0.0)[0]
    t, end = 0.0, None
    if gap != 0.0:
        far = d.index(min(d)) if gap > 0 else d.index(max(d))
        edge = -1.0 / d[far]
        if p[far] == 0 and f(edge)[0] * gap >= 0:
            t, end = edge, far
        else:
            t = _root_of_decreasing(f, (0.0, edge) if gap > 0 else (edge, 0.0))
    q = [pi / (1.0 + t * di) if pi > 0 else 0.0 for pi, di in zip(p, d, strict=True)]
    if end is not None:
        q[end] = max(0.0, 1.0 - math.fsum(q))
    return tuple(q)


def _root_of_decreasing(f: Callable[[float], tuple[float, float]], bracket: tuple[float, float]) -> float:
    """The root of a decreasing ``f`` (which gives its value and slope)
    inside the open ``bracket``, one of whose ends is 0: Newton steps from
    0, a bisection wherever a step would leave the bracket, until a step
    moves the point by less than 1e-12 of it (Newton's last step then
    leaves an error of the order of its square).  Rounding makes ``f``
    noisy by some 1e-17 near the root, which a bracket alone would chase
    down to the last bit."""
    low, high = bracket
    t = 0.0
    for _ in range(200):  # Newton takes a few steps; a bisection halves the bracket
        value, slope = f(t)
        if value == 0.0:
            return t
        if value > 0:
            low = t
        else:
            high = t
        newton = t - value / slope
        if abs(newton - t) <= 1e-12 * max(1.0, abs(t)):
            return newton if low < newton < high else t  # a last step past a bracket end is that noise
        t = newton if low < newton < high else 0.5 * (low + high)
    return t


# -- a tournament -------------------------------------------------------------------------

#: ``(agent playing A, agent playing B, result)`` with result "A", "B" or "draw".
Outcome = tuple[str, str, str]


@dataclass(frozen=True)
class Cell:
    """A cell of the cross table: ``row``'s score against ``column``."""

    row: str
    column: str
    score: float
    games: int

    @property
    def fraction(self) -> float:
        """The score over the games (``nan`` without games)."""
        return self.score / self.games if self.games else math.nan


@dataclass(frozen=True)
class Standing:
    """One agent's totals over all its games, and its Elo against the field.

    ``elo`` is the Elo of its overall score fraction: its strength relative
    to the average of the opponents it met (a performance, not a fitted
    rating: in a gauntlet or an unbalanced schedule the fields differ).
    The interval is the trinomial one of its pooled games."""

    agent: str
    wins: int
    draws: int
    losses: int
    elo: float
    elo_low: float
    elo_high: float

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
        """The score over the games (``nan`` without games)."""
        return self.score / self.games if self.games else math.nan


@dataclass(frozen=True)
class Table:
    """A tournament's standings (best first) and its cross table (every
    ordered pair of distinct agents, rows and columns in ranking order;
    pairs that never met have 0 games)."""

    standings: tuple[Standing, ...]
    cells: tuple[Cell, ...]

    @property
    def agents(self) -> tuple[str, ...]:
        """The agents in ranking order."""
        return tuple(s.agent for s in self.standings)

    def standing(self, agent: str) -> Standing:
        """``agent``'s standing; ``KeyError`` for an agent of no game here."""
        for s in self.standings:
            if s.agent == agent:
                return s
        raise KeyError(agent)

    def cell(self, row: str, column: str) -> Cell:
        """``row``'s score against ``column``."""
        for c in self.cells:
            if c.row == row and c.column == column:
                return c
        raise KeyError((row, column))


def rank(outcomes: Iterable[Outcome], *, level: float = 0.95) -> Table:
    """Totals, cross table and ranking of a list of games.

    Agents are ranked by score fraction, highest first; equal fractions by
    name, so the order never depends on the order of the games."""
    records: dict[str, list[int]] = {}  # wins, draws, losses
    cross: dict[tuple[str, str], list[float]] = {}  # score, games
    for outcome in outcomes:
        a, b, result = outcome
        if result not in ("A", "B", "draw"):
            raise ValueError(f"a result is 'A', 'B' or 'draw', not {result!r} in {outcome!r}")
        if a == b:
            raise ValueError(f"an agent does not play itself: {outcome!r}")
        score_a = 1.0 if result == "A" else 0.0 if result == "B" else 0.5
        for me, other, score in ((a, b, score_a), (b, a, 1.0 - score_a)):
            records.setdefault(me, [0, 0, 0])[_GAME_SCORES.index(score)] += 1
            cell = cross.setdefault((me, other), [0.0, 0])
            cell[0] += score
            cell[1] += 1
    standings = []
    for agent, (wins, draws, losses) in records.items():
        record = Trinomial(wins, draws, losses)
        standings.append(Standing(agent, wins, draws, losses, record.elo, *record.elo_interval(level)))
    standings.sort(key=lambda s: (-s.fraction, s.agent))
    order = [s.agent for s in standings]
    cells = []
    for row in order:
        for column in order:
            if row != column:
                score, games = cross.get((row, column), (0.0, 0))
                cells.append(Cell(row, column, score, int(games)))
    return Table(tuple(standings), tuple(cells))
