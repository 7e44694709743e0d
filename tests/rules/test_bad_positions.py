"""Every malformed or illegal position string is rejected with an error that
names the offending token and its index (../shared/cases/bad_positions.txt)."""

from __future__ import annotations

import pickle
import re

import pytest

from c4lab.rules import IllegalMoveError, Position, PositionError
from testkit import load_bad_positions

BAD = load_bad_positions()


def test_the_public_bad_strings_are_all_there() -> None:
    assert len(BAD) == 30


@pytest.mark.parametrize("text,category,why", BAD, ids=[f"{c}:{t[:30]}" for t, c, _ in BAD])
def test_a_bad_string_is_rejected_with_its_token_and_index(text: str, category: str, why: str) -> None:
    with pytest.raises(PositionError) as caught:
        Position.parse(text)
    error = caught.value
    assert error.text == text
    assert error.token is not None and error.index is not None
    # The token is really at that index of the string.
    assert text[error.index : error.index + len(error.token)] == error.token
    message = str(error)
    assert repr(error.token) in message and f"character {error.index}" in message
    if len(text) > 200:
        assert len(message) < 400, "a long input is quoted short"
    move = re.match(r"move (\d+)", why)
    if move:
        assert error.move_index == int(move.group(1))
        assert f"move {error.move_index}" in message
        # 0-based as the cases count, with the ordinal a person counts by: "move 1 (the 2nd)"
        assert f"move {error.move_index} (the {error.move_index + 1}" in message
    elif category == "syntax" and ":" in text and error.index > text.index(":"):
        # a move token that breaks the notation: its index among the moves
        before = text[text.index(":") + 1 : error.index]
        assert error.move_index == len(re.findall(r"[a-l](?:\+[a-l])?", before))
        assert f"move {error.move_index}" in message
    elif category in HEADER_CATEGORIES:
        assert error.move_index is None


HEADER_CATEGORIES = {
    "size", "syntax", "off-board", "duplicate-forbidden", "bonus-on-forbidden", "two-bonus",
    "empty-moves", "whitespace", "unicode",
}


EXPECTED_WORDS = {
    "size": "out of range",
    "syntax": "expected",
    "off-board": "off the",
    "duplicate-forbidden": "repeated",
    "bonus-on-forbidden": "is a forbidden cell",
    "two-bonus": "second bonus",
    "full-column": "is full",
    "after-end": "already over",
    "ban-not-on-bonus": "not on the bonus cell",
    "ban-after-win": "wins on the bonus cell",
    "ban-full-column": "ban column",
    "beyond-width": "beyond the board's width",
    "empty-moves": "at least one move",
    "whitespace": "whitespace",
    "unicode": "non-ASCII",
    "long": "column a is full|the game is already over",
}


@pytest.mark.parametrize("text,category,why", BAD, ids=[f"{c}:{t[:30]}" for t, c, _ in BAD])
def test_the_message_says_what_is_wrong(text: str, category: str, why: str) -> None:
    with pytest.raises(PositionError, match=EXPECTED_WORDS[category]):
        Position.parse(text)


def test_the_first_problem_in_reading_order_is_the_one_reported() -> None:
    # Move 2 goes past the end of the game only after move 1 already failed.
    with pytest.raises(PositionError) as caught:
        Position.parse("4x4:aaaaab")
    assert caught.value.move_index == 4


def test_a_bad_moves_message_gives_the_ordinal_a_person_counts_by_next_to_its_index() -> None:
    from c4lab.rules.errors import _ordinal

    assert [_ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 102, 111, 113)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "102nd", "111th", "113th"]
    with pytest.raises(PositionError, match=r"move 6 \(the 7th\) 'd' at character 10: column d is full"):
        Position.parse("7x6:ddddddd")


def test_the_rules_errors_cross_a_process_boundary_with_their_fields() -> None:
    """An error raised in an arena worker or a Ray task comes back by pickle:
    the same message and the same fields a program points with."""
    with pytest.raises(PositionError) as bad:
        Position.parse("7x6:dz")
    again = pickle.loads(pickle.dumps(bad.value))
    assert (type(again), str(again)) == (PositionError, str(bad.value))
    assert (again.text, again.token, again.index, again.move_index) == ("7x6:dz", "z", 5, 1)
    with pytest.raises(IllegalMoveError) as illegal:
        Position.parse("4x4:aaaa").play("a")
    moved = pickle.loads(pickle.dumps(illegal.value))
    assert (type(moved), str(moved), moved.move) == (IllegalMoveError, str(illegal.value), "a")
