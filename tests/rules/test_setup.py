"""Where a game starts (``rules.setup``): the one place that refuses a
random bonus cell asked for on a board that names its own, for every
front end (the terminal game, the server's rooms, the arena, the
environment, the command)."""

from __future__ import annotations

import pickle
import random
from collections.abc import Callable

import pytest

from c4lab.rules import Position, SecondBonusCellError
from c4lab.rules.setup import check_start, starting_position

REFUSAL = ("the board 6x5/Xc2/Bb2 has its bonus cell (b2) already, and the bonus asked for would draw another: "
           "give one or the other")


@pytest.mark.parametrize("start", [
    pytest.param(lambda: starting_position("6x5/Xc2/Bb2", True, random.Random(1)), id="starting_position"),
    pytest.param(lambda: check_start("6x5/Xc2/Bb2", True), id="check_start"),
])
def test_a_bonus_cell_asked_for_on_a_board_that_names_its_own_is_refused_naming_the_board_and_its_cell(
        start: Callable[[], Position]) -> None:
    """A board has one bonus cell: the one asked for was dropped without a
    word (the board's own was played) everywhere but in the command."""
    with pytest.raises(SecondBonusCellError) as raised:
        start()
    assert str(raised.value) == REFUSAL
    assert (raised.value.board, raised.value.cell) == ("6x5/Xc2/Bb2", "b2")
    assert isinstance(raised.value, ValueError)  # "bad input" to a caller that catches ValueError


def test_the_refusal_is_worded_with_each_front_ends_names_for_the_two_settings() -> None:
    with pytest.raises(SecondBonusCellError) as raised:
        starting_position("6x5/Xc2/Bb2", True, random.Random(1))
    assert raised.value.worded("--board", "--bonus") == (
        "--board 6x5/Xc2/Bb2 has its bonus cell (b2) already, and --bonus would draw another: give one or the other")
    again = pickle.loads(pickle.dumps(raised.value))  # it crosses to a worker process and back
    assert (type(again), str(again), again.cell) == (SecondBonusCellError, REFUSAL, "b2")


def test_a_board_with_its_own_bonus_cell_and_moves_is_refused_for_its_bonus_cell() -> None:
    with pytest.raises(SecondBonusCellError, match=r"^the board 6x5/Xc2/Bb2:dd has its bonus cell \(b2\) already"):
        starting_position("6x5/Xc2/Bb2:dd", True, random.Random(1))


def test_a_board_with_moves_and_no_bonus_cell_is_told_that_a_bonus_cell_needs_an_empty_board() -> None:
    with pytest.raises(ValueError, match=r"^a bonus cell can only be added to an empty board, not to 7x6:d") as raised:
        starting_position("7x6:d", True, random.Random(1))
    assert not isinstance(raised.value, SecondBonusCellError)


def test_without_bonus_a_board_plays_its_own_bonus_cell() -> None:
    assert starting_position("6x5/Xc2/Bb2:dd", False, random.Random(1)).notation == "6x5/Xc2/Bb2:dd"


def test_classic_random_and_a_plain_board_take_a_drawn_bonus_cell() -> None:
    rng = random.Random(5)
    classic = starting_position("classic", True, rng).variant
    assert (classic.width, classic.height, classic.forbidden) == (7, 6, ()) and classic.bonus is not None
    enhanced = starting_position("random", True, rng).variant
    assert len(enhanced.forbidden) == 1 and enhanced.bonus is not None and enhanced.bonus not in enhanced.forbidden
    plain = starting_position("6x5/Xc2", True, rng)
    assert plain.notation.startswith("6x5/Xc2/B") and plain.variant.bonus is not None
    assert plain == Position.parse(plain.notation)


def test_a_board_without_bonus_is_the_string_as_given_and_random_draws_one_forbidden_cell() -> None:
    rng = random.Random(3)
    assert starting_position("7x6", False, rng).notation == "7x6"
    drawn = starting_position("random", False, rng).variant
    assert len(drawn.forbidden) == 1 and drawn.bonus is None


def test_a_bad_board_is_refused_as_a_bad_position_string() -> None:
    with pytest.raises(ValueError, match=r"7x99"):
        starting_position("7x99", False, random.Random(3))
