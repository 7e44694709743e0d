"""``c4lab bench accuracy``: a move is right when it keeps the value the best
move keeps, judged against the solver's exact move scores."""

from __future__ import annotations

import pytest

from c4lab.adapters.openspiel import OpenSpielMCTS
from c4lab.agents import Agent, Analysis, Budget
from c4lab.arena import accuracy as A
from c4lab.rules import Move, Position
from c4lab.solver import Solver


def test_a_move_is_right_when_it_keeps_the_result_of_the_best_move() -> None:
    item = A.ScoredPosition(Position.parse("7x6"), {Move(0): -2, Move(1): 0, Move(2): 0, Move(3): 1})
    assert item.keeps_value(Move(3))  # the win
    assert not item.keeps_value(Move(2))  # a draw gives the win away
    drawn = A.ScoredPosition(Position.parse("7x6"), {Move(0): -2, Move(1): 0, Move(2): 0})
    assert drawn.keeps_value(Move(1)) and drawn.keeps_value(Move(2)) and not drawn.keeps_value(Move(0))
    lost = A.ScoredPosition(Position.parse("7x6"), {Move(0): -2, Move(1): -5})
    assert lost.keeps_value(Move(0)) and lost.keeps_value(Move(1))  # a lost position is lost


def test_an_agent_may_answer_a_move_token_as_in_the_arena() -> None:
    """A token names its move (docs/writing-agents.md), as in the arena
    (``game.play_answer``): it failed on ``.token`` inside the tally."""

    class Tokens(Agent):
        spec = "tokens"

        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            return "d", Analysis()  # type: ignore[return-value]

    item = A.ScoredPosition(Position.parse("7x6"), {Move(i): 1 if i == 3 else -1 for i in range(7)})
    tally = A.measure(Tokens(), [item])
    assert (tally.right, tally.played, tally.wrong) == (1, 1, [])
    full = A.measure(Tokens(), [A.ScoredPosition(Position.parse("7x6:dddddd"), {Move(0): 0})])
    assert (full.right, full.played, full.wrong) == (0, 1, ["7x6:dddddd: ?"])  # no legal move: a miss
    assert len(full.failed) == 1 and "column d is full (played by agent 'tokens')" in full.failed[0]


def test_an_agent_that_fails_on_some_positions_is_measured_on_the_rest() -> None:
    """A failure (an engine that hangs or exits, a network made for another
    board) is a miss that ``failed`` explains; it lost the whole run, and
    every other agent's figures, before."""

    class Picky(Agent):
        spec = "picky"

        def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
            if position.variant.width != 7:
                raise ValueError(f"made for 7x6, not {position.variant}")
            return Move(3), Analysis()

    good = A.ScoredPosition(Position.parse("7x6"), {Move(i): 1 if i == 3 else -1 for i in range(7)})
    other = A.ScoredPosition(Position.parse("5x4"), {Move(i): 0 for i in range(5)})
    tally = A.measure(Picky(), [other, good, other])
    assert (tally.right, tally.played, tally.wrong) == (1, 3, ["5x4: ?", "5x4: ?"])
    assert tally.failed[0].startswith("5x4: agent 'picky' raised ValueError: made for 7x6, not 5x4 at ")
    report = A.report({"sets": {"some": 3, "none": 1}, "results": {"picky": {"some": tally, "none": A.measure(Picky(), [other])}}})
    row, first, second = report.splitlines()[2:]
    assert row.split()[1:] == ["33.3%*", "failed"]
    assert first.startswith("* picky on some: 2 of 3 positions failed (counted as misses), the first: 5x4: agent")
    assert second.startswith("* picky on none: 1 of 1 positions failed")


def test_every_move_of_a_scored_position_has_its_exact_score() -> None:
    position = Position.parse("7x6:bdbfccdccdd")  # 11 pieces
    item = A.scored(position, Solver())
    assert item is not None
    assert set(item.scores) == set(position.legal_moves())
    assert item.scores[Move.parse("g")] == -Solver().solve(position.play("g")).score  # type: ignore[operator]


def test_the_variant_set_holds_small_boards_with_a_forbidden_and_a_bonus_cell_from_ply_6_to_12() -> None:
    positions = list(A.variant_positions(20, seed=3))
    assert len(positions) == 20
    for position in positions:
        variant = position.variant
        assert 5 <= variant.width <= 7 and 4 <= variant.height <= 6
        assert len(variant.forbidden) == 1 and variant.bonus is not None
        assert 6 <= position.ply <= 12 and not position.is_over
    assert [p.notation for p in A.variant_positions(5, seed=3)] == [p.notation for p in positions[:5]]


def test_the_exact_solver_keeps_every_value_and_a_random_player_does_not() -> None:
    # a bound far above the time these take (well under a second each), so that a busy machine
    # never sends the agent to its fallback (master's move) and the test stays about the rules of scoring
    measured = A.run_accuracy(["solver:time=60", "random:seed=1"], sets=("variants",), count=12, openspiel=False)
    assert measured["sets"] == {"variants": 12}
    assert measured["results"]["solver:time=60"]["variants"].share == 1.0
    assert measured["results"]["random:seed=1"]["variants"].share < 1.0
    table = A.report(measured)
    assert "variants (12)" in table and "100.0%" in table


def test_each_share_stands_under_its_set_however_long_an_agent_s_spec() -> None:
    """A spec longer than the agents' column (an engine program's) widens
    the column: every share ends where its set's heading ends."""
    long_spec = "engine:cmd=examples/engine/simple_engine.py"
    measured = {"sets": {"classic-middle": 3, "variants": 3},
                "results": {"heuristic": {"classic-middle": A.Tally(3, 3), "variants": A.Tally(2, 3)},
                            long_spec: {"classic-middle": A.Tally(2, 3)}}}
    heading, *rows = A.report(measured).splitlines()[1:]
    assert rows[1].startswith(long_spec + "  ")
    for row in rows:
        for cell in ("classic-middle (3)", "variants (3)"):
            end = heading.index(cell) + len(cell)
            assert row[end - 7:end] in ("100.0% ", " 66.7% ", "    n/a"), (row, cell)


def test_a_missing_openspiel_is_said_rather_than_its_row_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    # A plain install has no OpenSpiel: the table lost the yardstick's row
    # that the docs name without a word.
    monkeypatch.setattr(A, "openspiel_available", lambda: False)
    measured = A.run_accuracy(["solver:time=0.5"], sets=("classic-middle", "variants"), count=2)
    assert list(measured["results"]) == ["solver:time=0.5"]
    assert "note: OpenSpiel's MCTS, the yardstick, is not installed" in A.report(measured)
    assert "pip install open-spiel" in A.to_dict(measured)["note"]
    for quiet in (
        A.run_accuracy(["solver:time=0.5"], sets=("classic-middle",), count=2, openspiel=False),
        A.run_accuracy(["solver:time=0.5"], sets=("variants",), count=2),  # no set OpenSpiel would play
    ):
        assert "note" not in quiet and "note:" not in A.report(quiet) and "note" not in A.to_dict(quiet)


def test_no_timed_agent_is_said_rather_than_the_yardstick_s_row_left_out() -> None:
    """OpenSpiel plays at the time a move of the first ``time=`` SPEC: with
    none (``c4lab bench accuracy master``), the row went without a word."""
    measured = A.run_accuracy(["solver"], sets=("classic-middle",), count=1)
    assert list(measured["results"]) == ["solver"]
    assert "note: no SPEC gives a time a move (time=T)" in A.report(measured)
    quiet = A.run_accuracy(["solver"], sets=("classic-middle",), count=1, openspiel=False)
    assert "note" not in quiet


def test_the_classic_sets_come_from_the_public_benchmark_files() -> None:
    begin = A.classic_positions("classic-begin", 3)
    assert len(begin) == 3 and all(p.variant.size == "7x6" for p in begin)


def test_openspiel_s_mcts_answers_with_a_legal_move_on_plain_boards_only() -> None:
    bot = OpenSpielMCTS(0.02)
    position = Position.parse("7x6:ddc")
    assert bot.choose(position) in position.legal_moves()
    with pytest.raises(ValueError, match="no forbidden or bonus cells"):
        bot.choose(Position.parse("7x6/Xa1"))
