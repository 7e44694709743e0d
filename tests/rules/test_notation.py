"""Reading and writing positions: strict, canonical, round-tripping."""

from __future__ import annotations

import pytest

from c4lab.rules import Move, Position, PositionError, Variant


@pytest.mark.parametrize(
    "text",
    ["7x6", "7x6:dddc", "9x8/Xd3:ddde", "9x8/Xd3/Bb1:b+ac", "12x12/Xa2/Xa10/Xb1/Bl12", "4x4/Ba1:a+a"],
)
def test_canonical_strings_read_back_to_themselves(text: str) -> None:
    assert Position.parse(text).notation == text
    assert str(Position.parse(text)) == text


def test_forbidden_cells_print_column_then_row() -> None:
    position = Position.parse("12x12/Xb1/Xa10/Xa2")
    assert position.notation == "12x12/Xa2/Xa10/Xb1"
    assert position == Position.parse("12x12/Xa2/Xa10/Xb1")


def test_the_examples_of_the_rules_page() -> None:
    assert Position.parse("9x8/Xd3:ddde").piece_at("d4") == "A"
    position = Position.parse("9x8/Xd3/Bb1:b+ac")
    assert {c.name: p for c, p in position.cells.items()} == {"b1": "A", "a1": "ban", "c1": "B"}
    assert position.to_move == "A"


def test_other_tools_column_numbers_are_not_our_notation_and_the_error_translates_them() -> None:
    assert Position.parse("7x6:ddec") == Position(Variant.classic()).play("d", "d", "e", "c")
    for text, ours in (("7x6:4453", "7x6:ddec"), ("4453", "7x6:ddec"), ("6x5/Xc2:13", "6x5/Xc2:ac")):
        with pytest.raises(PositionError) as refused:
            Position.parse(text)
        assert f"is '{ours}' here" in str(refused.value)
    # a line of Pons' benchmark files, moves and score (review: solve's batch said "whitespace" alone)
    with pytest.raises(PositionError) as refused:
        Position.parse("4453 -1")
    assert str(refused.value).endswith(
        "whitespace or a control character (the notation has none); a line of Pons' benchmark files (moves "
        "numbered from 1, then the score)? its position is '7x6:ddec' here, and `c4lab bench solver FILE` checks "
        "such a file's scores")
    for text in ("7x6:89", "7x6:d4", "7", "4453 x", "4453\t-1"):  # no translation: beyond the board, ..., no score
        with pytest.raises(PositionError) as refused:
            Position.parse(text)
        assert "other tools" not in str(refused.value)


@pytest.mark.parametrize(
    "text,token,index",
    [
        ("", None, 0),
        ("07x6", "07", 0),
        ("7x06", "06", 2),
        ("7X6", "X", 1),
        ("7x6/Xd03", "03", 6),
        ("7x6/Yd3", "Y", 4),
        ("7x6/XD3", "D", 5),
        ("7x6/B/Xa1", "/", 5),
        ("7x6/X-1", "-", 5),
        ("7x6/Bd3/Xa1", "Xa1", 8),
        ("7x6/Xm1", "Xm1", 4),
        ("7x6/Xa13", "Xa13", 4),
        ("7x6:D", "D", 4),
        ("7x6:d+", "d+", 4),
        ("7x6:d+D", "d+D", 4),
        ("7x6:dd:d", ":", 6),
        ("7x6/", "/", 3),  # at the end of the text: the unfinished part
        ("7x6/Xa1/B", "B", 8),
        ("7x6/Xa1/Bb", "Bb", 8),
        ("7x", "7x", 0),
        ("12", "12", 0),
        ("7x6:z", "z", 4),
        ("7x6\n", "\n", 3),
        ("7x6:d\t", "\t", 5),
    ],
)
def test_strict_reading_points_at_the_token(text: str, token: str | None, index: int) -> None:
    with pytest.raises(PositionError) as caught:
        Position.parse(text)
    assert caught.value.index == index
    if token is not None:
        assert caught.value.token == token
        assert text[index : index + len(token)] == token
        assert repr(token) in str(caught.value)
    else:  # the empty string: nothing to name but the place
        assert caught.value.token is None and text == ""


def test_a_position_string_must_be_a_string() -> None:
    with pytest.raises(TypeError, match=r"^a position string must be a str like '7x6:dd', not b'7x6' \(type bytes\)$"):
        Position.parse(b"7x6")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not None \(type NoneType\)$"):
        Position.parse(None)  # type: ignore[arg-type]


def test_move_tokens_are_strict() -> None:
    assert Move.parse("d") == Move(3)
    assert Move.parse("d+a") == Move(3, 0)
    assert Move(3, 0).token == "d+a"
    for bad in ["", "D", "d+", "+a", "dd", "m", "d-a", " d", "4"]:
        with pytest.raises(ValueError):
            Move.parse(bad)


def test_moves_round_trip_through_their_kernel_codes() -> None:
    for col in range(12):
        for ban in [None, *range(12)]:
            move = Move(col, ban)
            assert Move.from_code(move.code) == move
            assert Move.parse(move.token) == move


@pytest.mark.parametrize(
    "text,token,reason",
    [
        ("0x6", "0x6", "size 0x6 out of range"),  # a zero is a number, not a leading zero
        ("7x0", "7x0", "size 7x0 out of range"),
        ("7x6/Xa0", "Xa0", "cell a0 is off the 7x6 board"),
        ("7x6/Bb0", "Bb0", "cell b0 is off the 7x6 board"),
        ("100x6", "100x6", "size 100x6 out of range"),
        ("7x6/Xa100", "Xa100", "cell a100 is off the 7x6 board"),
        ("1" * 5000 + "x6", "1" * 5000 + "x6", "out of range"),  # more digits than int() reads
        ("7x" + "9" * 5000, "7x" + "9" * 5000, "out of range"),
        ("7x6/Xa" + "1" * 5000, "Xa" + "1" * 5000, "is off the 7x6 board"),
    ],
)
def test_a_number_of_any_length_is_a_size_or_row_out_of_range(text: str, token: str, reason: str) -> None:
    with pytest.raises(PositionError, match=reason) as caught:
        Position.parse(text)
    assert caught.value.token == token and text[caught.value.index :].startswith(token)
    assert "leading zero" not in str(caught.value)
    assert len(str(caught.value)) < 400, "a long token is quoted short"


def test_a_long_string_of_column_numbers_is_quoted_short_in_the_hint() -> None:
    with pytest.raises(PositionError, match="other tools") as caught:
        Position.parse("1234" * 1000)
    assert len(str(caught.value)) < 500


def test_moves_sort_as_the_legal_moves_are_listed_the_decline_before_the_bans() -> None:
    position = Position.parse("5x4/Bc1:a")
    legal = list(position.legal_moves())
    assert [m.token for m in legal[2:9]] == ["c", "c+a", "c+b", "c+c", "c+d", "c+e", "d"]
    shuffled = legal[1::2] + legal[::2]
    assert sorted(shuffled) == legal
    assert Move(2) < Move(2, 0) < Move(2, 4) < Move(3) and max(legal) == Move(4)
