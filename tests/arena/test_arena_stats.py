"""Match statistics (c4lab.arena.stats, .sprt and .standings): every number is checked against one
worked out here, by hand in the comments or with scipy/numpy, never by
calling the module twice."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy.optimize import minimize
from scipy.stats import binomtest, norm

from c4lab.arena import stats
from c4lab.arena.sprt import SPRT, UntestableHypothesis
from c4lab.arena.standings import Cell, rank
from c4lab.arena.stats import Pentanomial, Trinomial, sign_test

Z95 = norm.ppf(0.975)  # 1.959964...


def logistic_elo(score: float) -> float:
    return 400 * math.log10(score / (1 - score))


# -- the Elo scale -------------------------------------------------------------------


def test_elo_of_a_score_fraction_is_the_logistic_formula():
    assert stats.elo_from_score(0.5) == 0
    assert stats.elo_from_score(0.75) == pytest.approx(400 * math.log10(3))  # 190.85
    assert stats.elo_from_score(10 / 11) == pytest.approx(400)  # 10 : 1 odds is 400 Elo
    assert stats.score_from_elo(400) == pytest.approx(10 / 11)
    assert stats.score_from_elo(-400) == pytest.approx(1 / 11)


def test_a_sweep_is_an_infinite_elo_difference_not_a_clamped_one():
    assert stats.elo_from_score(1.0) == math.inf and stats.elo_from_score(0.0) == -math.inf
    assert stats.score_from_elo(math.inf) == 1.0 and stats.score_from_elo(-math.inf) == 0.0
    assert stats.score_from_elo(-1e6) == 0.0  # no overflow
    with pytest.raises(ValueError, match="between 0 and 1"):
        stats.elo_from_score(1.5)


@given(st.floats(-2000, 2000))
def test_score_from_elo_inverts_elo_from_score(elo):
    assert stats.elo_from_score(stats.score_from_elo(elo)) == pytest.approx(elo, abs=1e-6)


# -- wins, draws, losses ----------------------------------------------------------------


def test_60_20_20_by_hand():
    t = Trinomial(60, 20, 20)
    # s = (60 + 20/2) / 100 = 0.7; Elo = 400·log10(0.7/0.3) = 147.19
    assert (t.games, t.score, t.fraction) == (100, 70.0, pytest.approx(0.7))
    assert t.elo == pytest.approx(147.1907, abs=1e-4)
    # per-game variance: 0.6·0.3² + 0.2·0.2² + 0.2·0.7² = 0.054 + 0.008 + 0.098 = 0.16,
    # so sd = 0.4 and the standard error of s is 0.4/sqrt(100) = 0.04
    assert t.variance == pytest.approx(0.16)
    # 95%: 0.7 ± 1.959964·0.04 = [0.621601, 0.778399] -> [86.23, 218.25] Elo
    low, high = t.elo_interval()
    assert low == pytest.approx(logistic_elo(0.7 - Z95 * 0.04)) and low == pytest.approx(86.225, abs=1e-3)
    assert high == pytest.approx(logistic_elo(0.7 + Z95 * 0.04)) and high == pytest.approx(218.252, abs=1e-3)
    # LOS = Phi((60 - 20)/sqrt(60 + 20)) = Phi(4.4721)
    assert t.los == pytest.approx(norm.cdf(40 / math.sqrt(80)))
    # z = (0.7 - 0.5)/0.04 = 5, p = 2·(1 - Phi(5)) = 5.733e-7
    assert t.p_value == pytest.approx(2 * norm.sf(5)) and t.p_value == pytest.approx(5.733e-7, rel=1e-3)


def test_the_interval_is_mean_plus_minus_z_standard_errors_of_the_per_game_scores():
    wins, draws, losses = 37, 41, 22
    games = np.array([1.0] * wins + [0.5] * draws + [0.0] * losses)
    se = games.std() / math.sqrt(len(games))  # population sd, as cutechess and fishtest
    for level in (0.9, 0.95, 0.99):
        z = norm.ppf(0.5 + level / 2)
        low, high = Trinomial(wins, draws, losses).elo_interval(level)
        assert low == pytest.approx(logistic_elo(games.mean() - z * se))
        assert high == pytest.approx(logistic_elo(games.mean() + z * se))
        p = 2 * norm.sf(abs(games.mean() - 0.5) / se)
        assert Trinomial(wins, draws, losses).p_value == pytest.approx(p)
    with pytest.raises(ValueError, match="confidence level"):
        Trinomial(1, 0, 1).elo_interval(1.0)


def test_an_interval_end_past_a_score_of_0_or_1_is_infinite():
    # 9-0-1: s = 0.9, sd = 0.3, se = 0.0949; 0.9 + 1.96·0.0949 = 1.086 > 1
    low, high = Trinomial(9, 0, 1).elo_interval()
    assert high == math.inf and low == pytest.approx(logistic_elo(0.9 - Z95 * 0.3 / math.sqrt(10)))


def test_equal_wins_and_losses_are_even():
    t = Trinomial(30, 40, 30)
    assert t.elo == 0 and t.los == 0.5 and t.p_value == pytest.approx(1.0)
    low, high = t.elo_interval()
    assert low == pytest.approx(-high)


def test_degenerate_samples_say_so_rather_than_invent_a_number():
    sweep = Trinomial(10, 0, 0)
    assert sweep.elo == math.inf and sweep.elo_interval() == (math.inf, math.inf)
    assert sweep.p_value == 0.0  # zero variance: the z-test's limit
    assert sweep.los == pytest.approx(norm.cdf(10 / math.sqrt(10)))  # the LOS still weighs the 10 games
    assert Trinomial(0, 0, 3).elo == -math.inf
    draws = Trinomial(0, 12, 0)
    assert draws.elo == 0 and draws.elo_interval() == (0.0, 0.0) and draws.p_value == 1.0 and draws.los == 0.5
    empty = Trinomial(0, 0, 0)
    assert math.isnan(empty.elo) and all(math.isnan(x) for x in empty.elo_interval())
    assert empty.p_value == 1.0 and empty.los == 0.5


def test_counts_are_whole_numbers():
    for bad in ((-1, 0, 0), (1.5, 0, 0), (True, 0, 0)):
        with pytest.raises(ValueError, match="whole numbers"):
            Trinomial(*bad)


def test_counts_may_be_numpy_integers_and_are_kept_as_ints():
    # what np.bincount or a sum over an array gives: refused as "not a whole number, np.int64(3)"
    games, pairs = np.array([3, 1, 2]), np.bincount([0, 2, 2, 4], minlength=5)
    trinomial = Trinomial(*games)
    assert trinomial == Trinomial(3, 1, 2) and type(trinomial.wins) is int
    assert Pentanomial(pairs) == Pentanomial((1, 0, 2, 0, 1)) and type(Pentanomial(pairs).counts[0]) is int
    assert sign_test(np.int64(9), np.int64(1)) == sign_test(9, 1)
    assert SPRT.parse("elo0=0,elo1=50").llr(pairs) == SPRT.parse("elo0=0,elo1=50").llr((1, 0, 2, 0, 1))


def test_trinomial_from_per_game_scores():
    assert Trinomial.from_scores([1, 0.5, 0, 1, 1]) == Trinomial(3, 1, 1)
    with pytest.raises(ValueError, match="1, 0.5 or 0"):
        Trinomial.from_scores([0.25])


def test_the_module_shortcuts_are_the_trinomial_ones():
    t = Trinomial(12, 5, 7)
    assert stats.elo(12, 5, 7) == t.elo and stats.elo_interval(12, 5, 7) == t.elo_interval()
    assert stats.los(12, 5, 7) == t.los and stats.p_value(12, 5, 7) == t.p_value


counts = st.integers(0, 500)


@given(counts, counts, counts)
def test_the_interval_contains_the_point_estimate(wins, draws, losses):
    assume(wins + draws + losses > 0)
    t = Trinomial(wins, draws, losses)
    low, high = t.elo_interval()
    assert low <= t.elo <= high


@given(counts, counts, counts)
def test_swapping_sides_negates_elo_and_mirrors_everything(wins, draws, losses):
    assume(wins + draws + losses > 0)
    t, u = Trinomial(wins, draws, losses), Trinomial(losses, draws, wins)
    assert u == t.swapped()
    assert u.elo == pytest.approx(-t.elo, abs=1e-9)
    low, high = t.elo_interval()
    assert u.elo_interval() == (pytest.approx(-high, abs=1e-9), pytest.approx(-low, abs=1e-9))
    assert t.los + u.los == pytest.approx(1.0)
    assert t.p_value == pytest.approx(u.p_value)


@given(counts, counts, counts)
def test_the_p_value_is_below_5_percent_exactly_when_the_95_percent_interval_excludes_0(wins, draws, losses):
    assume(wins + draws + losses > 0)
    t = Trinomial(wins, draws, losses)
    assume(abs(t.p_value - 0.05) > 1e-9)
    low, high = t.elo_interval(0.95)
    assert (t.p_value < 0.05) == (low > 0 or high < 0)


# -- game pairs ------------------------------------------------------------------------------


def test_pentanomial_counts_from_pairs():
    pairs = [(1, 1), (1, 0.5), (0.5, 0.5), (0, 1), (0, 0), (1.0, 1.0), (0.5, 0)]
    # pair totals: 2, 1.5, 1, 1, 0, 2, 0.5  ->  0:1  0.5:1  1:2  1.5:1  2:2
    assert stats.pentanomial_counts(pairs) == (1, 1, 2, 1, 2)
    assert Pentanomial.from_pairs(pairs) == Pentanomial((1, 1, 2, 1, 2))
    assert stats.pentanomial_counts([]) == (0, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="two game scores"):
        stats.pentanomial_counts([(1,)])
    with pytest.raises(ValueError, match="1, 0.5 or 0"):
        stats.pentanomial_counts([(1, 0.7)])


def test_pentanomial_interval_by_hand():
    p = Pentanomial((0, 25, 50, 25, 0))
    # pair mean scores 0.25, 0.5, 0.75 with weights 1/4, 1/2, 1/4: s = 0.5,
    # var = 2·0.25·0.25² = 0.03125, se = sqrt(0.03125/100) = 0.0176777
    assert (p.pairs, p.games, p.score, p.fraction) == (100, 200, 100.0, 0.5)
    assert p.variance == pytest.approx(0.03125)
    # 0.5 ± 1.959964·0.0176777 = 0.5 ± 0.0346476 -> ±24.11 Elo
    low, high = p.elo_interval()
    assert high == pytest.approx(logistic_elo(0.5 + Z95 * math.sqrt(0.03125 / 100)))
    assert high == pytest.approx(24.11, abs=0.01) and low == pytest.approx(-high)


def test_pentanomial_interval_against_numpy():
    c = (7, 18, 41, 23, 11)
    pair_means = np.repeat([0, 0.25, 0.5, 0.75, 1], c)
    se = pair_means.std() / math.sqrt(len(pair_means))
    p = Pentanomial(c)
    assert p.elo == pytest.approx(logistic_elo(pair_means.mean()))
    for level in (0.9, 0.95):
        z = norm.ppf(0.5 + level / 2)
        low, high = stats.pentanomial_elo_interval(c, level)
        assert (low, high) == p.elo_interval(level)
        assert low == pytest.approx(logistic_elo(pair_means.mean() - z * se))
        assert high == pytest.approx(logistic_elo(pair_means.mean() + z * se))


def test_pairs_cancel_the_luck_of_moving_first():
    # Whoever moves first always wins: 50-0-50 looks like noise game by game,
    # but every pair is a 1-1 split, so the pairs prove the agents equal.
    pairs = [(1, 0)] * 50
    assert Trinomial.from_scores(s for pair in pairs for s in pair) == Trinomial(50, 0, 50)
    trinomial_low, _ = Trinomial(50, 0, 50).elo_interval()
    assert trinomial_low == pytest.approx(logistic_elo(0.5 - Z95 * 0.5 / 10))  # about -100 Elo
    assert Pentanomial.from_pairs(pairs).elo_interval() == (0.0, 0.0)


def test_the_pairs_p_value_and_los_by_hand():
    # Pairs (1, 0), (½, ½), (1, ½), (½, 1): pair means ½, ½, ¾, ¾ -> mean 0.625,
    # sd 0.125, standard error 0.125/sqrt(4) = 0.0625, z = 0.125/0.0625 = 2.
    pairs = Pentanomial.from_pairs([(1, 0), (0.5, 0.5), (1, 0.5), (0.5, 1)])
    assert pairs.counts == (0, 0, 2, 2, 0)
    assert pairs.p_value == pytest.approx(2 * norm.cdf(-2))  # 0.0455: below 5 %
    assert pairs.los == pytest.approx(norm.cdf(2))  # 0.977
    # The same eight games one by one, W3 D4 L1: mean 0.625, variance 0.5 - 0.625² = 0.109375,
    # z = 0.125 / sqrt(0.109375/8) = 1.069: not significant, as the pairs are.
    games = Trinomial(3, 4, 1)
    assert games.p_value == pytest.approx(2 * norm.cdf(-0.125 / math.sqrt(0.109375 / 8)))
    assert games.p_value > 0.28 and pairs.p_value < 0.05
    # from the other side: the same p, the complementary LOS
    assert pairs.swapped().p_value == pytest.approx(pairs.p_value)
    assert pairs.swapped().los == pytest.approx(1 - pairs.los)


def test_the_pairs_p_value_and_los_at_the_edges():
    assert (Pentanomial((0, 0, 0, 0, 0)).p_value, Pentanomial((0, 0, 0, 0, 0)).los) == (1.0, 0.5)  # no evidence
    assert (Pentanomial((0, 0, 5, 0, 0)).p_value, Pentanomial((0, 0, 5, 0, 0)).los) == (1.0, 0.5)  # every pair split
    assert (Pentanomial((0, 0, 0, 0, 5)).p_value, Pentanomial((0, 0, 0, 0, 5)).los) == (0.0, 1.0)  # zero variance
    assert Pentanomial((5, 0, 0, 0, 0)).los == 0.0
    # whoever moves first wins: game by game p = 1 (50-0-50), every pair 1-1: equal, and nothing else
    first_wins = Pentanomial.from_pairs([(1, 0)] * 50)
    assert (first_wins.p_value, first_wins.los) == (1.0, 0.5)


@given(st.lists(st.tuples(st.sampled_from([0, 0.5, 1]), st.sampled_from([0, 0.5, 1])), max_size=40))
def test_pentanomial_from_the_other_side_is_the_reverse_and_scores_like_the_games(pairs):
    p = Pentanomial.from_pairs(pairs)
    other = Pentanomial.from_pairs([(1 - x, 1 - y) for x, y in pairs])
    assert other.counts == p.counts[::-1] == p.swapped().counts
    games = Trinomial.from_scores(s for pair in pairs for s in pair)
    assert p.games == games.games and p.score == games.score
    if pairs:
        assert p.elo == pytest.approx(games.elo) or p.elo == games.elo  # also ±inf


# -- SPRT ---------------------------------------------------------------------------------


def test_sprt_bounds_are_walds():
    t = SPRT.parse("elo0=0,elo1=20,alpha=0.05,beta=0.1")
    assert t == SPRT(0, 20, 0.05, 0.1)
    assert t.lower == pytest.approx(math.log(0.1 / 0.95))  # -2.251
    assert t.upper == pytest.approx(math.log(0.9 / 0.05))  # 2.890
    assert SPRT.parse(str(t)) == t
    assert SPRT.parse(" beta=0.05 , alpha=0.05, elo1=5, elo0=-1.5 ") == SPRT(-1.5, 5, 0.05, 0.05)


@pytest.mark.parametrize("text", ["elo0=0,elo1=6381.8359", "elo0=1.0000001,elo1=1.0000002", "elo0=0,elo1=20.0000001",
                                  "elo0=0,elo1=20,alpha=0.4999999,beta=0.5", "elo0=0,elo1=20,alpha=0.9999999,beta=1e-08",
                                  "elo0=-0.1,elo1=0.30000000000000004"])
def test_an_sprt_as_text_reads_back_as_the_same_test_to_the_last_bit(text) -> None:
    """What a results file keeps (``text``) is the run's test: it wrote six
    digits, so elo1=6381.8359 came back as 6381.84 (refused: its score is
    1), elo0=1.0000001,elo1=1.0000002 as 1 and 1 (refused: not above), and
    alpha=0.4999999,beta=0.5 as 0.5 + 0.5 (refused): files the arena
    wrote that its report then refused.  Round numbers stay short."""
    test = SPRT.parse(text)
    assert SPRT.parse(test.text()) == test and str(test) == test.text()
    assert SPRT(0, 20, 0.05, 0.05).text() == "elo0=0,elo1=20,alpha=0.05,beta=0.05"
    assert SPRT(-1.5, 1e-07, 0.1, 0.2).text() == "elo0=-1.5,elo1=1e-07,alpha=0.1,beta=0.2"


def test_an_sprt_without_its_error_rates_takes_fishtests_5_percent() -> None:
    assert SPRT.parse("elo0=0,elo1=20") == SPRT(0, 20, 0.05, 0.05)
    assert SPRT.parse("elo0=0,elo1=20,beta=0.1") == SPRT(0, 20, 0.05, 0.1)
    assert str(SPRT.parse("elo1=20,elo0=0")) == "elo0=0,elo1=20,alpha=0.05,beta=0.05"  # the header keeps all four


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("elo0=0", "missing elo1"),
        ("alpha=0.05,beta=0.05", "missing elo0, elo1"),
        ("elo0=0,elo1=20,alpha=0.05,beta=0.05,gamma=1", "unknown key 'gamma'"),
        ("elo0=0,elo1=twenty,alpha=0.05,beta=0.05", "elo1='twenty' is not a number"),
        ("elo0=0,elo1=20,alpha=,beta=0.05", "alpha='' is not a number"),
        ("elo0=0,elo1=20,elo1=30,alpha=0.05,beta=0.05", "elo1 is given twice"),
        ("elo0 0,elo1=20,alpha=0.05,beta=0.05", "'elo0 0' is not key=value"),
        ("elo0=0,elo1=20,alpha=0.05,beta=0.05,", "'' is not key=value"),
        ("", "is not key=value"),
        ("elo0=nan,elo1=20,alpha=0.05,beta=0.05", "elo0 must be a finite number"),
        ("elo0=0,elo1=20,alpha=0,beta=0.05", "alpha is a probability strictly between 0 and 1"),
        ("elo0=0,elo1=20,alpha=0.05,beta=1", "beta is a probability strictly between 0 and 1"),
        ("elo0=0,elo1=20,alpha=1.5,beta=0.05", "alpha is a probability"),
        ("elo0=0,elo1=20,alpha=0.6,beta=0.5", "alpha \\+ beta must be below 1"),
        ("elo0=0,elo1=0,alpha=0.05,beta=0.05", "elo1 must be above elo0"),
        ("elo0=10,elo1=5,alpha=0.05,beta=0.05", "elo1 must be above elo0"),
    ],
)
def test_sprt_parser_says_what_is_wrong(text, message):
    with pytest.raises(ValueError, match=message):
        SPRT.parse(text)


def brute_force_fit(values, counts, score: float) -> tuple[np.ndarray, float]:
    """The chances of ``values`` with expected score ``score`` that make the
    counts most likely, and that log-likelihood: SciPy's SLSQP over the
    whole simplex, no Lagrange multiplier (the way SPRT finds them)."""
    values, n = np.array(values, float), np.array(counts, float)
    seen, total = n > 0, n.sum()
    found = minimize(lambda q: -np.sum(n[seen] * np.log(np.maximum(q[seen], 1e-300))) / total,
                     np.full(len(n), 1 / len(n)), method="SLSQP", bounds=[(0, 1)] * len(n),
                     options={"ftol": 1e-14, "maxiter": 1000},
                     constraints=[{"type": "eq", "fun": lambda q: q.sum() - 1},
                                  {"type": "eq", "fun": lambda q: q @ values - score}])
    assert found.success, found.message
    return found.x, -found.fun * total


def brute_force_llr(values, counts, elo0: float, elo1: float) -> float:
    """The generalized LLR: the best log-likelihood under H1 less the best under H0."""
    s0, s1 = (1 / (1 + 10 ** (-e / 400)) for e in (elo0, elo1))
    return brute_force_fit(values, counts, s1)[1] - brute_force_fit(values, counts, s0)[1]


GAME_VALUES, PAIR_VALUES = (1, 0.5, 0), (0, 0.25, 0.5, 0.75, 1)


@pytest.mark.parametrize(("elo0", "elo1"), [(0, 20), (0, 200), (-100, 0), (100, 300), (-500, 500)])
def test_sprt_llr_is_the_exact_multinomial_likelihood_ratio_for_games_and_for_pairs(elo0, elo1):
    """Each hypothesis is the distribution of its score that explains the
    counts best; some counts are 0, as in a short match."""
    t = SPRT(elo0, elo1, 0.05, 0.05)
    rng = np.random.default_rng(elo1 - elo0)
    for values in (GAME_VALUES, PAIR_VALUES):
        for _ in range(8):
            counts = tuple(int(c) for c in rng.integers(0, 30, len(values)) * (rng.random(len(values)) < 0.7))
            if sum(counts):
                assert t.llr(counts) == pytest.approx(brute_force_llr(values, counts, elo0, elo1), abs=1e-6), counts
    wdl, penta = (60, 20, 20), (3, 10, 30, 12, 5)
    assert t.llr(Trinomial(*wdl)) == t.llr(wdl) == pytest.approx(brute_force_llr(GAME_VALUES, wdl, elo0, elo1))
    assert t.llr(Pentanomial(penta)) == t.llr(penta) == pytest.approx(brute_force_llr(PAIR_VALUES, penta, elo0, elo1))
    with pytest.raises(ValueError, match="3 .* or 5"):
        t.llr((1, 2, 3, 4))
    with pytest.raises(ValueError, match="3 .* or 5"):
        t.decide((0, 0, 0, 0))
    with pytest.raises(ValueError, match="whole numbers"):
        t.decide((1, -1, 0))


def test_sprt_llr_is_fishtests_on_fishtests_figures():
    # fishtest's LLR_logistic(0, 20, [10, 50, 200, 150, 40]) is 16.87; the normal
    # approximation the arena used before said 20.0
    assert SPRT(0, 20, 0.05, 0.05).llr((10, 50, 200, 150, 40)) == pytest.approx(16.8725, abs=1e-4)


def test_the_fitted_hypothesis_has_its_score_and_explains_the_counts_best():
    t = SPRT(0, 20, 0.05, 0.05)
    for counts, values in (((10, 50, 200, 150, 40), PAIR_VALUES), ((0, 3, 0, 0, 7), PAIR_VALUES),
                           ((7, 0, 2), GAME_VALUES), ((0, 9, 0), GAME_VALUES)):
        for elo in (-150, 0, 20, 300):
            q = np.array(t.fitted(counts, elo))
            score = stats.score_from_elo(elo)
            assert q.sum() == pytest.approx(1, abs=1e-12) and (q >= 0).all()
            assert q @ np.array(values) == pytest.approx(score, abs=1e-12)
            best, _ = brute_force_fit(values, counts, score)
            assert q == pytest.approx(best, abs=1e-5), (counts, elo)
    assert t.fitted(Trinomial(7, 0, 2), 20) == t.fitted((7, 0, 2), 20)
    with pytest.raises(ValueError, match="needs a game"):
        t.fitted((0, 0, 0), 20)


def test_an_outcome_never_seen_takes_only_what_the_seen_ones_cannot_reach():
    # a sweep of wins read as "equal strength": half wins, half losses, nothing
    # on draws (which would only lower the chance of a win)
    assert SPRT(0, 20, 0.05, 0.05).fitted((5, 0, 0), 0) == pytest.approx((0.5, 0, 0.5), abs=1e-15)
    assert SPRT(0, 20, 0.05, 0.05).fitted((0, 0, 0, 0, 5), 0) == pytest.approx((0.5, 0, 0, 0, 0.5), abs=1e-15)
    # all draws against elo 0: the draws explain the score alone
    assert SPRT(0, 20, 0.05, 0.05).fitted((0, 9, 0), 0) == pytest.approx((0, 1, 0), abs=1e-15)


def test_without_draws_the_llr_is_the_binomial_one():
    # no draw seen: each hypothesis is the binomial of its score (a draw would
    # only take chance from a win and a loss), so LLR = W·log(s1/s0) + L·log((1-s1)/(1-s0))
    s0, s1 = 0.5, 1 / (1 + 10 ** (-200 / 400))
    for wins, losses in ((63, 37), (64, 36), (9, 1), (0, 4)):
        expected = wins * math.log(s1 / s0) + losses * math.log((1 - s1) / (1 - s0))
        assert SPRT(0, 200, 0.05, 0.05).llr((wins, 0, losses)) == pytest.approx(expected, abs=1e-9)


def test_the_llr_changes_sign_where_both_hypotheses_explain_the_games_as_well_not_at_the_midpoint():
    # elo 0 against 200 without draws: equal likelihoods at the score
    # log((1-s0)/(1-s1)) / log(s1·(1-s0) / (s0·(1-s1))) = 0.6366, above the
    # midpoint of the two scores (0.5 + 0.7597)/2 = 0.6299: at 63% the test leans to H0
    t = SPRT(0, 200, 0.05, 0.05)
    assert t.llr((63, 0, 37)) == pytest.approx(-0.7601, abs=1e-4)
    assert t.llr((64, 0, 36)) == pytest.approx(0.3912, abs=1e-4)


def test_the_llr_is_symmetric_under_swapping_the_sides():
    # hypotheses mirrored about 0 Elo, results seen from the other side: the LLR
    # changes sign, so counts symmetric about a score of ½ between -e and +e leave it at 0
    for counts in ((3, 10, 30, 12, 5), (0, 0, 4, 1, 9), (12, 0, 3, 0, 0)):
        assert SPRT(-50, 20, 0.05, 0.05).llr(Pentanomial(counts).swapped()) == pytest.approx(
            -SPRT(-20, 50, 0.05, 0.05).llr(counts), abs=1e-9)
    assert SPRT(-30, 30, 0.05, 0.05).llr((4, 10, 30, 10, 4)) == pytest.approx(0, abs=1e-9)
    assert SPRT(-30, 30, 0.05, 0.05).llr((7, 2, 7)) == pytest.approx(0, abs=1e-9)


def test_no_games_is_no_evidence():
    t = SPRT(0, 20, 0.05, 0.05)
    assert t.llr((0, 0, 0)) == 0.0 and t.llr(Pentanomial((0, 0, 0, 0, 0))) == 0.0
    assert t.decide((0, 0, 0)) is None and t.decide((0, 0, 0, 0, 0)) is None


@pytest.mark.parametrize(("text", "key", "whose", "reach"),
                         [("elo0=0,elo1=7000", "elo1", "its", "above 6381.8359"),
                          ("elo0=0,elo1=6381.836", "elo1", "its", "above 6381.8359"),
                          ("elo0=-6381.836,elo1=0", "elo0", "its opponent's", "below -6381.8359"),
                          ("elo0=-7000,elo1=0", "elo0", "its opponent's", "below -6381.8359"),
                          ("elo0=-200000,elo1=0", "elo0", "its opponent's", "below -6381.8359")])
def test_an_sprt_of_a_hypothesis_no_match_can_tell_apart_is_refused(text, key, whose, reach):
    # a score of 1 to double precision allows no game but a win: every other result would end it at once
    with pytest.raises(UntestableHypothesis, match=rf"^SPRT: {key}=-?[\d.]+ is too far from 0 to test: {whose} "
                                                   rf"expected score is 1 to double precision \({reach}\)$"):
        SPRT.parse(text)
    # the bounds the line gives are the last testable ones
    assert SPRT.parse("elo0=0,elo1=6381.8359").elo1 == 6381.8359
    assert SPRT.parse("elo0=-6381.8359,elo1=0").elo0 == -6381.8359


@pytest.mark.parametrize(("elo0", "elo1"), [(0, 6381.8359), (0, 6381.836), (-7000, 0), (-120000, -6000), (-200, 7000),
                                            (-6381.8359, 6381.8359), (-6381.836, -6381.8359)])
def test_an_sprt_is_taken_exactly_when_the_same_test_with_the_agents_swapped_is(elo0, elo1):
    """A against B with (elo0, elo1) is B against A with (-elo1, -elo0):
    both taken or both refused.  elo0 went down to -120000, where the
    score is still above 0, while elo1 stopped at 6381.8359, so
    elo0=-7000,elo1=0 was a test and its mirror elo0=0,elo1=7000 none."""

    def taken(low: float, high: float) -> bool:
        try:
            SPRT(low, high, 0.05, 0.05)
        except UntestableHypothesis:
            return False
        return True

    assert taken(elo0, elo1) == taken(-elo1, -elo0)
    if taken(elo0, elo1):  # and the two read the same games the same way, mirrored
        counts = (1, 3, 5, 2, 4)
        mirror = SPRT(-elo1, -elo0, 0.05, 0.05).decide(Pentanomial(counts).swapped())
        assert SPRT(elo0, elo1, 0.05, 0.05).decide(counts) == {"H0": "H1", "H1": "H0", None: None}[mirror]
    near = SPRT.parse("elo0=0,elo1=6000")  # a score of 1 - 1e-15: tested, a pair lost refutes it at once
    assert near.decide((0, 0, 0, 0, 4)) is None and near.decide((0, 0, 0, 0, 5)) == "H1"
    assert near.decide((1, 0, 0, 0, 4)) == "H0"


def test_sprt_llr_by_hand_on_a_large_even_match():
    # 500-0-500 is binomial: 500·log(2·s1) + 500·log(2·(1-s1)) = 500·log(1 - 4·(s1-½)²),
    # s1 = 1/(1 + 10^(-20/400)) = 0.5287505: 500·log(0.9966935) = -1.6560
    assert SPRT(0, 20, 0.05, 0.05).llr((500, 0, 500)) == pytest.approx(-1.6560, abs=1e-4)


def test_sprt_stops_a_lopsided_match_with_h1():
    test = SPRT.parse("elo0=0,elo1=20,alpha=0.05,beta=0.05")
    games = [1, 1, 0, 1, 1, 0, 1, 1, 1, 0] * 30  # 70% wins, 147 Elo
    verdicts = [test.decide(Trinomial.from_scores(games[:n])) for n in range(len(games) + 1)]
    first = next(n for n, v in enumerate(verdicts) if v is not None)
    assert verdicts[first] == "H1" and 20 < first < 200


def test_sprt_does_not_stop_an_even_match_early():
    test = SPRT.parse("elo0=0,elo1=20,alpha=0.05,beta=0.05")
    games = [1, 0] * 100
    assert all(test.decide(Trinomial.from_scores(games[:n])) is None for n in range(201))
    # ...but it does accept H0 in the end: n/2·log(1 - 4·(s1-½)²) = -0.0016560·n
    # crosses -2.944 after about 1780 games.
    longer = Trinomial.from_scores([1, 0] * 1000)
    assert test.llr(longer) == pytest.approx(1000 * math.log(1 - 4 * 0.0287505**2), rel=1e-5)
    assert test.decide(longer) == "H0"


def test_a_sweep_of_pairs_decides_as_the_likelihood_of_wins_alone_says():
    # n pairs won and nothing else: H0 (a score of ½) is best read as half the
    # pairs won, half lost, H1 as s1 won and 1-s1 lost, so LLR = n·log(2·s1), and
    # the test accepts H1 at the first n with n·log(2·s1) >= log(0.95/0.05):
    # 53 pairs for elo1=20, 23 for 50, 8 for 200 (the normal approximation took 13 for 20)
    upper = math.log(0.95 / 0.05)
    for elo1, pairs in ((20, 53), (50, 23), (200, 8)):
        test = SPRT(0, elo1, 0.05, 0.05)
        s1 = 1 / (1 + 10 ** (-elo1 / 400))
        assert test.llr((0, 0, 0, 0, 13)) == pytest.approx(13 * math.log(2 * s1), abs=1e-12)
        assert math.ceil(upper / math.log(2 * s1)) == pairs
        assert test.decide((0, 0, 0, 0, pairs - 1)) is None and test.decide((0, 0, 0, 0, pairs)) == "H1"
    # fishtest's LLR of 13 pairs won in a row for elo 0 against 20: 0.73
    assert SPRT(0, 20, 0.05, 0.05).llr((0, 0, 0, 0, 13)) == pytest.approx(0.7268, abs=1e-4)


def test_sprt_on_pairs():
    test = SPRT.parse("elo0=0,elo1=50,alpha=0.05,beta=0.05")
    assert test.decide((0, 0, 0, 0, 0)) is None  # no verdict without a game
    assert test.decide((0, 0, 0, 0, 1)) is None  # one pair won proves nothing
    assert test.decide((0, 0, 0, 0, 23)) == "H1"
    # pairs lost: n·log((1-s1)/½) = -0.15418·n, H0 after 20
    assert test.decide((19, 0, 0, 0, 0)) is None and test.decide((20, 0, 0, 0, 0)) == "H0"


def test_sprt_does_not_stop_an_even_paired_match_early():
    # Pair totals 2, 0, 1, 1.5, 0.5 in turn: s = 0.5, per-pair variance
    # (0.25 + 0.25 + 0 + 0.0625 + 0.0625)/5 = 0.125; for hypotheses this close the
    # LLR is near its normal approximation -0.028751²·N/(2·0.125) = -0.0033·N:
    # H0 only after about 890 pairs.
    test = SPRT.parse("elo0=0,elo1=20,alpha=0.05,beta=0.05")
    cycle = itertools.cycle([4, 0, 2, 3, 1])
    counts = [0] * 5
    for _ in range(200):
        counts[next(cycle)] += 1
        assert test.decide(tuple(counts)) is None
    assert test.llr(tuple(counts)) == pytest.approx(-(0.028751**2) * 200 / 0.25, rel=0.02)
    assert test.llr(tuple(counts)) == pytest.approx(brute_force_llr(PAIR_VALUES, counts, 0, 20), abs=1e-6)


# -- a tournament -----------------------------------------------------------------------------

OUTCOMES = [
    ("x", "y", "A"),  # x beats y
    ("y", "x", "A"),  # y beats x
    ("x", "z", "A"),  # x beats z
    ("z", "x", "draw"),
    ("y", "z", "B"),  # z beats y
    ("z", "y", "draw"),
]


def test_standings_and_cross_table_by_hand():
    table = rank(OUTCOMES)
    # x: W2 D1 L1 = 2.5/4; z: W1 D2 L1 = 2/4; y: W1 D1 L2 = 1.5/4
    assert table.agents == ("x", "z", "y")
    x, z, y = table.standings
    assert (x.games, x.score, x.wins, x.draws, x.losses) == (4, 2.5, 2, 1, 1)
    assert (z.games, z.score, z.wins, z.draws, z.losses) == (4, 2.0, 1, 2, 1)
    assert (y.games, y.score, y.wins, y.draws, y.losses) == (4, 1.5, 1, 1, 2)
    # x's Elo against the field: 400·log10(0.625/0.375) = 88.74
    assert x.elo == pytest.approx(88.74, abs=0.01) and z.elo == 0 and y.elo == pytest.approx(-88.74, abs=0.01)
    assert x.elo_low < x.elo < x.elo_high
    # x's per-game variance: (2·0.375² + 0.125² + 0.625²)/4 = 0.171875, se = sqrt(0.171875/4)
    # = 0.2073: 0.625 ± 0.4063 reaches past a score of 1
    assert x.elo_low == pytest.approx(logistic_elo(0.625 - Z95 * math.sqrt(0.171875 / 4)))
    assert x.elo_high == math.inf
    assert table.cell("x", "z") == Cell("x", "z", 1.5, 2)
    assert table.cell("z", "x") == Cell("z", "x", 0.5, 2)
    assert table.cell("x", "y") == Cell("x", "y", 1.0, 2)
    assert table.cell("z", "y").fraction == 0.75
    assert [(c.row, c.column) for c in table.cells] == [
        ("x", "z"), ("x", "y"), ("z", "x"), ("z", "y"), ("y", "x"), ("y", "z"),
    ]
    assert table.standing("y") == y
    with pytest.raises(KeyError):
        table.cell("x", "w")


def test_agents_that_never_met_have_an_empty_cell_and_ties_rank_by_name():
    table = rank([("b", "c", "draw"), ("a", "d", "draw")])
    assert table.agents == ("a", "b", "c", "d")
    cell = table.cell("a", "b")
    assert (cell.games, cell.score) == (0, 0.0) and math.isnan(cell.fraction)


agent = st.sampled_from("pqrs")


@given(st.lists(st.tuples(agent, agent, st.sampled_from(["A", "B", "draw"]))))
def test_every_point_is_counted_once_from_each_side(outcomes):
    outcomes = [o for o in outcomes if o[0] != o[1]]
    table = rank(outcomes)
    assert sum(s.games for s in table.standings) == 2 * len(outcomes)
    assert sum(s.score for s in table.standings) == len(outcomes)
    for c in table.cells:
        assert c.score + table.cell(c.column, c.row).score == c.games
    fractions = [s.fraction for s in table.standings]
    assert fractions == sorted(fractions, reverse=True)


def test_bad_outcomes_are_refused():
    with pytest.raises(ValueError, match="'A', 'B' or 'draw'"):
        rank([("x", "y", "win")])
    with pytest.raises(ValueError, match="does not play itself"):
        rank([("x", "x", "A")])


# -- a perfect score: no finite estimate, the bound the exact interval gives ---------


def test_a_sweep_is_bounded_by_the_exact_interval_not_a_made_up_number() -> None:
    for n in (1, 4, 10, 100):
        low = stats.sweep_bound(n)
        # the exact (Clopper-Pearson) lower end for n wins in n: (alpha/2)^(1/n)
        assert stats.score_from_elo(low) == pytest.approx(0.025 ** (1 / n))
        assert stats.elo_bound(n, 0, 0) == ("at_least", low) and stats.elo_bound(0, 0, n) == ("at_most", -low)
    assert stats.sweep_bound(10) < stats.sweep_bound(100)  # more games, a higher bound
    assert stats.elo_bound(9, 1, 0) is None and stats.elo_bound(0, 0, 0) is None
    assert math.isnan(stats.sweep_bound(0))


def test_the_arena_says_no_finite_estimate_with_its_bound_in_json_and_tables() -> None:
    import json

    from c4lab.arena.games import Game
    from c4lab.arena.report import NO_ESTIMATE, render_text, summarise
    from c4lab.arena.schedule import ArenaConfig

    first, second = "random:seed=1", "random:seed=2"
    config = ArenaConfig((first, second), games=4)
    games = [
        Game("7x6:dcdcdcd", "A", first, second, "7x6", 0, pair, 0) for pair in range(2)
    ] + [
        Game("7x6:adcdcdcd", "B", second, first, "7x6", 0, pair, 1) for pair in range(2)
    ]
    summary = summarise(config, games)
    data = json.loads(json.dumps(summary.to_dict()))  # plain JSON: no 1e9 standing in for infinity
    top, bottom = data["standings"]
    assert top["elo"] is None and top["elo_bound"] == {"at_least": round(stats.sweep_bound(4), 1), "note": NO_ESTIMATE}
    assert bottom["elo"] is None and bottom["elo_bound"]["at_most"] == -top["elo_bound"]["at_least"]
    pairing = data["pairings"][0]
    assert pairing["elo"] is None and pairing["elo_bound"]["at_least"] == top["elo_bound"]["at_least"]
    text = render_text(summary)
    bound = round(stats.sweep_bound(4))  # 4 wins in 4: only at least -72
    assert bound == -72 and f">={bound:+d}" in text and f"<={-bound:+d}" in text
    assert NO_ESTIMATE in " ".join(text.split()) and "inf" not in text


def test_a_pairing_without_games_shows_no_interval_los_or_p_value() -> None:
    """A report of a run cut short (a round robin whose last pairing has not
    started) has nothing to say about that pairing: n/a (null in JSON),
    not "[-, -]", LOS 50.0% and p 1 as if an even match had been measured."""
    import json

    from c4lab.arena.games import Game
    from c4lab.arena.report import NOT_AVAILABLE, pairing_rows, render_text, summarise
    from c4lab.arena.schedule import ArenaConfig

    config = ArenaConfig(("x", "y", "z"), games=2)  # pairings x-y, x-z, y-z
    games = [Game("7x6:dcdcdcd", "A", "x", "y", "7x6", 0, 0, 0), Game("7x6:adcdcdcd", "B", "y", "x", "7x6", 0, 0, 1)]
    summary = summarise(config, games)
    played, *unplayed = pairing_rows(summary)
    assert played[2:4] == ["2", "2-0-0"]
    for row in unplayed:
        assert row[2:5] == ["0", "0-0-0", "0/0/0/0/0"]
        assert row[5] == "-" and row[6:] == [NOT_AVAILABLE] * 7  # Elo; both intervals, both LOS, p (equal, sign, pairs)
    data = json.loads(json.dumps(summary.to_dict()))
    for pairing in data["pairings"][1:]:
        assert pairing["games"] == 0 and pairing["elo"] is None and pairing["elo_bound"] is None
        assert pairing["elo_ci"] is None and pairing["pentanomial_elo_ci"] is None
        assert pairing["los"] is None and pairing["p_value"] is None and pairing["sign_p_value"] is None
        assert pairing["pentanomial_sign_p_value"] is None
        assert pairing["pentanomial_los"] is None and pairing["pentanomial_p_value"] is None
    assert "[-, -]" not in render_text(summary)


def test_a_pairings_two_intervals_and_two_los_say_which_is_from_the_games_and_which_from_the_pairs() -> None:
    """The pairings' intervals are headed "95% CI (games)" and "95% CI
    (pairs)", in the text and on the page: the games' one takes each game
    as independent, which a paired match is not (where an opening favours
    one agent in both its games it held the truth 88.5-92% of the time in
    simulation, the pairs' 92-95.5%).  They were "95% CI", read as the
    pairing's, and "CI (pairs)".  The likelihood of superiority is given
    both ways too, "LOS (games)" and "LOS (pairs)" (the pairs' was in the
    JSON only)."""
    from c4lab.arena.games import Game
    from c4lab.arena.report import PAIRING_COLUMNS, _html, pairing_rows, render_text, summarise
    from c4lab.arena.schedule import ArenaConfig

    config = ArenaConfig(("x", "y"), games=4)
    games = [Game("7x6:dcdcdcd", "A", "x", "y", "7x6", 0, 0, 0), Game("7x6:adcdcdcd", "B", "y", "x", "7x6", 0, 0, 1),
             Game("7x6:dcdcdcd", "A", "y", "x", "7x6", 0, 1, 0), Game("7x6:dcdcdcd", "A", "x", "y", "7x6", 0, 1, 1)]
    summary = summarise(config, games)
    row = dict(zip(PAIRING_COLUMNS, pairing_rows(summary)[0], strict=True))
    assert summary.pairings[0].games.counts == (3, 0, 1) and summary.pairings[0].pairs.counts == (0, 0, 1, 0, 1)
    # games: 0.75 - 1.96·sqrt(0.1875/4) = 0.326, -126 Elo; pairs (½ and 1): 0.75 - 1.96·sqrt(0.0625/2) = 0.403, -68
    assert row["95% CI (games)"] == "[-126, +inf]" and row["95% CI (pairs)"] == "[-68, +inf]"
    # the LOS the same way: games Φ((3 - 1)/sqrt(3 + 1)) = Φ(1); pairs Φ((0.75 - 0.5)/sqrt(0.0625/2)) = Φ(1.414)
    assert row["LOS (games)"] == "84.1%" and row["LOS (pairs)"] == "92.1%"
    text = " ".join(render_text(summary).split())
    assert "95% CI (games)" in text and "95% CI (pairs)" in text and "LOS (games) ┃ LOS (pairs)" in text
    page = _html(summary, {})
    assert "<th>95% CI (games)</th><th>95% CI (pairs)</th><th>LOS (games)</th><th>LOS (pairs)</th>" in page


# -- the exact test ------------------------------------------------------------------------


@pytest.mark.parametrize(("wins", "losses"), [(9, 0), (9, 1), (0, 7), (12, 4), (3, 3), (1, 0), (510, 490), (600, 400)])
def test_the_sign_test_is_scipys_exact_binomial_test(wins: int, losses: int) -> None:
    assert sign_test(wins, losses) == pytest.approx(binomtest(wins, wins + losses).pvalue, rel=1e-9)


def test_the_sign_test_leaves_the_draws_out_and_says_nothing_without_a_decisive_game() -> None:
    assert Trinomial(9, 1, 0).sign_p_value == sign_test(9, 0) == 2 / 2**9  # 0.0039: Wald said < 1e-15
    assert Trinomial(9, 1, 0).p_value < 1e-15
    assert Trinomial(0, 20, 0).sign_p_value == Trinomial(0, 0, 0).sign_p_value == 1.0
    assert Trinomial(10, 0, 0).sign_p_value == Trinomial(0, 0, 10).sign_p_value == 2 / 2**10  # a sweep has one


def test_the_pairs_sign_test_counts_pairs_won_and_lost_and_leaves_the_even_ones_out() -> None:
    assert Pentanomial((1, 0, 4, 3, 2)).sign_p_value == pytest.approx(binomtest(5, 6).pvalue)
    assert Pentanomial((0, 0, 9, 0, 0)).sign_p_value == 1.0


@given(st.integers(0, 300), st.integers(0, 300))
def test_the_sign_test_is_a_p_value_symmetric_in_its_sides(wins: int, losses: int) -> None:
    p = sign_test(wins, losses)
    assert 0.0 < p <= 1.0 and p == sign_test(losses, wins)


def test_the_sign_test_is_quick_for_a_runs_million_games() -> None:
    assert sign_test(500_000, 499_000) == pytest.approx(binomtest(500_000, 999_000).pvalue, rel=1e-9)


def test_a_text_reports_pairings_keep_each_spec_and_figure_on_one_line() -> None:
    """The pairings' thirteen columns are wider than the report's 140
    characters for specs of everyday length: the table grows as wide as it
    needs (up to 200), rather than folding "heuristic" into "heuristi" and
    "c" and an interval over two lines, as it did with twelve columns."""
    from c4lab.arena.games import Game
    from c4lab.arena.report import NARROWEST, WIDEST, render_text, summarise
    from c4lab.arena.schedule import ArenaConfig

    first, second = "heuristic", "minimax:depth=4"
    games = [Game("7x6:dcdcdcd", "A", first, second, "7x6", 0, 0, 0), Game("7x6:adcdcdcd", "B", second, first, "7x6", 0, 0, 1)]
    lines = render_text(summarise(ArenaConfig((first, second), games=2), games)).splitlines()
    row = next(line for line in lines if line.startswith("│ heuristic"))
    assert f"│ {first} " in row and f"│ {second} " in row
    assert NARROWEST < len(row) <= WIDEST
    assert all(len(line) <= NARROWEST for line in lines if not line.startswith(("┏", "┃", "┡", "│", "└")) and line.strip()
               and "Pairings" not in line)


def test_the_names_that_moved_to_their_own_modules_are_still_read_from_stats():
    """``SPRT`` and ``rank`` (with their classes) have modules of their own;
    a script that imports them from ``c4lab.arena.stats`` gets the same
    objects, and ``dir`` lists them."""
    from c4lab.arena import sprt, standings, stats

    assert stats.SPRT is sprt.SPRT and stats.UntestableHypothesis is sprt.UntestableHypothesis
    assert stats.rank is standings.rank and stats.Table is standings.Table
    assert {"SPRT", "rank", "Cell", "Standing"} <= set(dir(stats))
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        stats.nothing  # noqa: B018
