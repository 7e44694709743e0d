"""Fitted ratings: one Elo scale for a whole tournament, whoever met whom
(the logistic model fitted to every game at once)."""

from __future__ import annotations

import html
import json
import math
import random

import pytest

from c4lab.arena import standings, stats
from c4lab.arena.games import Game
from c4lab.arena.ratings import fit_ratings
from c4lab.arena.report import (
    PRIOR_NOTE,
    RATING_COLUMNS,
    RATING_NOTE,
    rating_rows,
    render_text,
    summarise,
    write_report,
)
from c4lab.arena.schedule import ArenaConfig


def games(first: str, second: str, wins: int, draws: int, losses: int) -> list[tuple[str, str, str]]:
    """``first``'s wins, draws and losses against ``second``, as ``standings.rank`` outcomes."""
    return [(first, second, "A")] * wins + [(first, second, "draw")] * draws + [(first, second, "B")] * losses


def by_agent(outcomes: list[tuple[str, str, str]], prior: float = 1.0) -> dict[str, float]:
    fitted = fit_ratings(outcomes, prior=prior)
    assert fitted is not None
    return {r.agent: r.elo for r in fitted}


def test_two_agents_are_as_far_apart_as_their_score_says() -> None:
    """Without the prior, two agents' difference is the Elo of the score
    (75 %: 190.8 Elo), split evenly about the mean 0."""
    r = by_agent(games("a", "b", 75, 0, 25), prior=0)
    assert r["a"] - r["b"] == pytest.approx(stats.elo_from_score(0.75))
    assert r["a"] == pytest.approx(-r["b"])


def test_a_chain_adds_up_even_where_two_agents_never_met() -> None:
    """a beats b 75 %, b beats c 75 %, a and c never meet: a is two steps
    (381.7 Elo) above c."""
    r = by_agent(games("a", "b", 75, 0, 25) + games("b", "c", 75, 0, 25), prior=0)
    assert r["a"] - r["c"] == pytest.approx(2 * stats.elo_from_score(0.75))
    assert r["b"] == pytest.approx(0, abs=1e-9)


def test_the_fitted_difference_is_the_elo_difference_where_the_performance_is_not() -> None:
    """a scores 75 % against b and against c, who are even: a is 190.8 Elo
    above each.  The ranking's "Elo vs field" (a performance) puts a 279.5
    above them: b's field is a and c, a's field is only the two weaker
    ones."""
    outcomes = games("a", "b", 75, 0, 25) + games("a", "c", 75, 0, 25) + games("b", "c", 50, 0, 50)
    r = by_agent(outcomes, prior=0)
    assert r["a"] - r["b"] == pytest.approx(stats.elo_from_score(0.75))
    assert r["b"] == pytest.approx(r["c"])
    field = {s.agent: s.elo for s in standings.rank(outcomes).standings}
    assert field["a"] - field["b"] == pytest.approx(stats.elo_from_score(0.75) - stats.elo_from_score(0.375))
    assert field["a"] - field["b"] > r["a"] - r["b"] + 80


def test_the_ratings_have_mean_0_and_do_not_depend_on_the_order_or_sides_of_the_games() -> None:
    rng = random.Random(4)
    outcomes = [(a, b, rng.choice(["A", "B", "draw", "A"])) for a, b in
                [("x", "y"), ("y", "z"), ("z", "x"), ("w", "x")] * 30]
    r = by_agent(outcomes)
    assert sum(r.values()) == pytest.approx(0, abs=1e-9)
    flipped = [(b, a, {"A": "B", "B": "A", "draw": "draw"}[res]) for a, b, res in reversed(outcomes)]
    assert by_agent(flipped) == pytest.approx(r)


@pytest.mark.parametrize(("wins", "draws", "losses"), [(39, 0, 1), (9, 0, 1), (38, 1, 1), (75, 0, 25)])
def test_a_near_sweep_is_as_far_apart_as_its_score_says_with_no_prior(wins: int, draws: int, losses: int) -> None:
    """Where the games have a finite maximum they are fitted alone: 39-1
    is 636.4 Elo apart, the pairing's figure and plain Bradley-Terry's.
    One virtual draw a pairing, always added until now, read it as 39.5 of
    41: 568.2 Elo (9-1: 320.7 for 381.7), a gap a reader of the pairing
    beside it could not explain."""
    fitted = fit_ratings(games("a", "b", wins, draws, losses))
    assert fitted is not None and all(r.prior == 0 for r in fitted)
    r = {x.agent: x.elo for x in fitted}
    assert r["a"] - r["b"] == pytest.approx(stats.elo_from_score((wins + draws / 2) / (wins + draws + losses)))
    assert r == pytest.approx(by_agent(games("a", "b", wins, draws, losses), prior=0))


def test_a_sweep_gets_a_finite_rating_from_the_prior_of_one_draw_and_none_without() -> None:
    """10 wins of 10: one virtual draw makes the score 10.5 of 11 (528 Elo
    apart); plain maximum likelihood has no finite answer."""
    r = by_agent(games("a", "b", 10, 0, 0))
    assert r["a"] - r["b"] == pytest.approx(stats.elo_from_score(10.5 / 11))
    assert fit_ratings(games("a", "b", 10, 0, 0), prior=0) is None
    swept = fit_ratings(games("a", "b", 40, 0, 0))  # 40.5 of 41: 763.4 Elo, said to come from the prior
    assert swept is not None and [x.prior for x in swept] == [1.0, 1.0]
    assert swept[0].elo - swept[1].elo == pytest.approx(stats.elo_from_score(40.5 / 41))


def test_without_the_prior_a_group_that_won_every_game_against_the_rest_is_not_rated() -> None:
    """a won all 10 of its games against b, and b and c drew theirs: no
    finite ratings make these games most likely (a's runs off to
    infinity), so there are none; it was 4183 Elo with an interval of zero
    width.  With one virtual draw a pairing the same games are rated."""
    outcomes = games("a", "b", 10, 0, 0) + games("b", "c", 0, 10, 0)
    assert fit_ratings(outcomes, prior=0) is None
    rated = fit_ratings(outcomes)
    assert rated is not None and all(r.low < r.elo < r.high for r in rated)


def test_without_the_prior_a_sweep_inside_a_cycle_is_rated_at_the_likelihoods_maximum() -> None:
    """a won every game against b, but b scored against c and c against a:
    every group scored against the rest, so the maximum is finite; there
    each agent's points are the points the ratings expect of it."""
    outcomes = games("a", "b", 10, 0, 0) + games("b", "c", 7, 0, 3) + games("c", "a", 4, 0, 6)
    rated = fit_ratings(outcomes, prior=0)
    assert rated is not None
    elo = {r.agent: r.elo for r in rated}
    for agent, rating in elo.items():
        points = sum(1.0 if (f == agent) == (res == "A") else 0.0 for f, s, res in outcomes if agent in (f, s))
        expected = sum(stats.score_from_elo(rating - elo[s if f == agent else f])
                       for f, s, _ in outcomes if agent in (f, s))
        assert points == pytest.approx(expected, abs=1e-6)


def test_agents_that_never_meet_even_through_others_are_not_rated() -> None:
    assert fit_ratings(games("a", "b", 3, 1, 2) + games("c", "d", 2, 2, 2)) is None
    assert fit_ratings([]) == ()


def test_each_interval_holds_its_rating_and_narrows_with_more_games() -> None:
    few = fit_ratings(games("a", "b", 6, 2, 2) + games("b", "c", 5, 3, 2))
    many = fit_ratings(games("a", "b", 60, 20, 20) + games("b", "c", 50, 30, 20))
    assert few is not None and many is not None
    for rating in (*few, *many):
        assert rating.low < rating.elo < rating.high
    width = {r.agent: r.high - r.low for r in few}
    assert all(r.high - r.low < width[r.agent] / 2 for r in many)


def test_two_agents_interval_of_their_difference_is_the_pairings_at_most() -> None:
    """For two agents the interval of the difference (twice each agent's
    half-width, the mean being 0) is the binomial one: as wide as the
    pairing's trinomial interval without draws, wider with them."""
    for counts in ((40, 0, 60), (30, 40, 30)):
        fitted = fit_ratings(games("a", "b", *counts), prior=0)
        assert fitted is not None
        half = 2 * (fitted[0].high - fitted[0].elo)
        low, high = stats.elo_interval(*counts)
        pairing = (high - low) / 2
        if counts[1] == 0:
            assert half == pytest.approx(pairing, rel=0.02)
        else:
            assert half > pairing


def test_bad_outcomes_are_refused() -> None:
    with pytest.raises(ValueError, match="a result is 'A', 'B' or 'draw', not 'won'"):
        fit_ratings([("a", "b", "won")])
    with pytest.raises(ValueError, match="does not play itself"):
        fit_ratings([("a", "a", "A")])


def _arena_games(pairs: list[tuple[str, str, int, int]]) -> list[Game]:
    """Arena records: for each ``(first, second, first's wins, losses)``, a
    pairing of that many decisive games, sides swapped in each pair."""
    out = []
    for index, (first, second, wins, losses) in enumerate(pairs):
        for i, winner in enumerate([first] * wins + [second] * losses):
            a, b = (first, second) if i % 2 == 0 else (second, first)
            out.append(Game(position="7x6", result="A" if winner == a else "B", a=a, b=b, start="7x6",
                            pairing=index, pair=i // 2, game=i % 2))
    return out


def test_the_report_shows_the_fitted_ratings_of_three_agents_or_more(tmp_path) -> None:  # type: ignore[no-untyped-def]
    config = ArenaConfig(("x", "y", "z"), games=8)
    summary = summarise(config, _arena_games([("x", "y", 6, 2), ("x", "z", 7, 1), ("y", "z", 5, 3)]))
    rows = rating_rows(summary)
    assert [row[1] for row in rows] == ["x", "y", "z"] and [row[0] for row in rows] == ["1", "2", "3"]
    assert len(rows[0]) == len(RATING_COLUMNS)
    text = render_text(summary)
    assert "Fitted ratings" in text and " ".join(RATING_NOTE.split()) in " ".join(text.split())
    assert "virtual draw" not in text  # no sweep: the games alone
    data = json.loads(json.dumps(summary.to_dict()))
    assert [r["spec"] for r in data["ratings"]] == ["x", "y", "z"]
    assert sum(r["elo"] for r in data["ratings"]) == pytest.approx(0, abs=0.05)
    assert all(r["elo_ci"][0] < r["elo"] < r["elo_ci"][1] for r in data["ratings"])
    assert data["ratings_prior_draws"] == 0
    page = next(p for p in write_report(summary, tmp_path / "rep") if p.suffix == ".html").read_text()
    assert "<h2>Fitted ratings</h2>" in page and "virtual draw" not in page


def test_the_report_says_when_a_sweep_made_the_ratings_take_their_prior(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """z lost all its 16 games: no finite ratings fit them alone, so each
    pairing gets one virtual draw, and the table's note, the page and
    the JSON say so."""
    summary = summarise(ArenaConfig(("x", "y", "z"), games=8), _arena_games([("x", "y", 6, 2), ("x", "z", 8, 0),
                                                                              ("y", "z", 8, 0)]))
    assert summary.ratings is not None and [r.agent for r in summary.ratings] == ["x", "y", "z"]
    assert " ".join(PRIOR_NOTE.split()) in " ".join(render_text(summary).split())
    assert summary.to_dict()["ratings_prior_draws"] == 1.0
    page = next(p for p in write_report(summary, tmp_path / "rep") if p.suffix == ".html").read_text()
    assert html.escape(PRIOR_NOTE) in page


def test_two_agents_show_no_fitted_table_but_the_json_has_their_ratings() -> None:
    summary = summarise(ArenaConfig(("x", "y"), games=8), _arena_games([("x", "y", 6, 2)]))
    assert "Fitted ratings" not in render_text(summary)
    data = summary.to_dict()["ratings"]
    # the pairing's Elo: 6 of 8 (it was 6.5 of 9, one virtual draw added)
    assert data[0]["elo"] - data[1]["elo"] == pytest.approx(summary.pairings[0].games.elo, abs=0.05)
    assert summary.pairings[0].games.elo == pytest.approx(stats.elo_from_score(0.75))
    assert not math.isnan(data[0]["elo"])
