"""The sequential probability ratio test (SPRT) of a match, as fishtest
runs it: stop a match as soon as its games have decided between two Elo
hypotheses, "``elo0`` stronger" and "``elo1`` stronger", with the error
rates asked for.

It reads the counts of ``c4lab.arena.stats`` (``Trinomial`` for games,
``Pentanomial`` for pairs of games with the sides swapped) and maximises
their exact multinomial likelihood under each hypothesis (``SPRT.llr``), as
fishtest does today.  ``c4lab arena --sprt`` stops on its verdict and a
results file keeps its settings (``SPRT.text``, read back by
``SPRT.parse`` to the last bit).  It has no LLR without a game (0) and
refuses a hypothesis more than 6381.8359 Elo from 0 either way
(``UntestableHypothesis``: a score of 1 to double precision, for one
side).  Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from c4lab.arena.stats import GAME_SCORES, PAIR_SCORES, Pentanomial, Trinomial, check_counts, score_from_elo

__all__ = ["SPRT", "Counts", "UntestableHypothesis", "Verdict"]

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
        return GAME_SCORES, check_counts(counts, 3, "win/draw/loss")
    if len(counts) == 5:
        return PAIR_SCORES, check_counts(counts, 5, "pentanomial")
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
