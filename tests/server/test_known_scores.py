"""The exact scores the server's solver found, kept for the next answers:
a move left open is scored from the position it leads to, where that one
was solved before (the analysis board stepping into a line and back)."""

from __future__ import annotations

from c4lab.rules import Position
from c4lab.server import review
from c4lab.server.known_scores import KnownScores
from c4lab.solver import Solver


def test_a_move_left_open_takes_the_exact_score_of_the_position_it_leads_to_once_that_one_was_solved() -> None:
    """Review: on the analysis board, stepping into a line the solver settles
    and back left the move to it an estimate ("~57"), where its exact score
    was known: RULES.md makes a move that does not end the game worth minus
    the score of the position after it."""
    before = Position.parse("6x5/Xc2:d")
    truth = {move.token: score for move, score in Solver().analyse(before).items()}
    first = review.move_scores(before, 1e-6)  # the budget of a large board's hint: moves left open
    open_moves = [token for token, score in first.items() if score is None]
    assert open_moves
    token = open_moves[0]
    after = before.play(token)
    solved = review.move_scores(after, 30.0)  # the person steps into the line: every move solved there
    assert None not in solved.values()
    again = review.move_scores(before, 1e-6)  # and back
    assert again[token] == truth[token] == -max(solved.values())
    assert all(again[t] in (None, truth[t]) for t in truth)


def test_what_a_position_s_solved_moves_say_is_kept_for_the_positions_after_them() -> None:
    known = KnownScores()
    position = Position.parse("4x4:ababab")
    known.learn(position, {"a": 2, "b": -1, "c": None, "d": None}, None)  # a wins at once: a finished game
    assert known.get(position.play("a")) is None
    assert known.get(position.play("b")) == 1
    assert known.get(position) is None and known.get(position.play("c")) is None
    assert known.fill(position, {"a": 2, "b": None, "c": None, "d": -3}) == {"a": 2, "b": -1, "c": None, "d": -3}
    known.learn(position, {}, 2)
    assert known.get(position) == 2


def test_the_table_keeps_the_most_recently_used_scores_up_to_its_capacity() -> None:
    known = KnownScores(capacity=2)
    a, b, c = (Position.parse(text) for text in ("7x6:a", "7x6:b", "7x6:c"))
    known.keep(a, 1)
    known.keep(b, 2)
    assert known.get(a) == 1  # used: b is now the oldest
    known.keep(c, 3)
    assert len(known) == 2 and known.get(b) is None and known.get(a) == 1 and known.get(c) == 3
    known.clear()
    assert len(known) == 0


def test_a_hint_shown_again_is_scored_again_from_what_was_solved_since() -> None:
    """The terminal's analysis board keeps its hints by position: ``u``
    back to one showed its estimate still, where the line stepped into had
    been solved (``known_hint``)."""
    from c4lab.server.known_scores import KNOWN

    before = Position.parse("6x5/Xc2:d")
    truth = {move.token: score for move, score in Solver().analyse(before).items()}
    moves: dict[str, int | None] = {token: None for token in truth}
    moves["d"] = truth["d"]
    estimates = {token: 0.5 for token in truth if token != "d"}
    answer = review._hint_answer(before, before.legal_moves()[0], 0.5,
                                 review.columns_of(moves, estimates, "a"))
    assert review.known_hint(before, answer) is answer  # nothing new known: the same answer
    KNOWN.keep(before.play("e"), -truth["e"])
    again = review.known_hint(before, answer)
    assert again["moves"]["e"] == truth["e"] and again["moves"]["a"] is None
    column = next(c for c in again["columns"] if c["column"] == "e")
    assert column["exact"] and column["score"] == truth["e"]
