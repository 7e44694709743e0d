"""The rules of RULES.md, as the Position API shows them."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

from c4lab.rules import Cell, IllegalMoveError, Move, Position, Variant, VariantError


def names(cells) -> list[str]:
    return [c.name for c in cells]


def test_the_empty_classic_board() -> None:
    start = Position()
    assert start.notation == "7x6"
    assert start.to_move == "A" and start.result is None and not start.is_over
    assert names_of(start.legal_moves()) == list("abcdefg")
    assert start.empty_cells == 42 and start.ply == 0 and start.cells == {}


def names_of(moves) -> list[str]:
    return [m.token for m in moves]


def test_pieces_fall_to_the_lowest_empty_cell_and_sides_alternate() -> None:
    p = Position().play("d", "d", "d")
    assert [p.piece_at(c) for c in ["d1", "d2", "d3", "d4"]] == ["A", "B", "A", None]
    assert p.to_move == "B" and p.ply == 3 and p.empty_cells == 39


def test_gravity_skips_a_forbidden_cell() -> None:
    p = Position.parse("9x8/Xd3:ddde")
    assert p.piece_at("d4") == "A" and p.piece_at("d3") is None
    bottom = Position.parse("7x6/Xa1:a")
    assert bottom.piece_at("a2") == "A" and bottom.last_cell == Cell.parse("a2")


def test_a_forbidden_top_cell_makes_the_column_shorter() -> None:
    p = Position.parse("7x6/Xa6:aaaaa")
    assert "a" not in names_of(p.legal_moves())
    with pytest.raises(IllegalMoveError, match="column a is full"):
        p.play("a")


def test_a_forbidden_cell_breaks_a_line() -> None:
    # A holds a1 b1 d1 e1 around the forbidden c1: no four.
    p = Position.parse("7x6/Xc1:agbgdfe")
    assert [p.piece_at(c) for c in ["a1", "b1", "d1", "e1"]] == ["A"] * 4
    assert p.result is None
    p = p.play("g", "c", "g")  # A's c lands on c2; B completes g1..g4
    assert p.piece_at("c2") == "A"
    assert p.result == "B" and names(p.win_line) == ["g1", "g2", "g3", "g4"]


def test_four_in_a_row_wins_in_every_direction() -> None:
    assert Position.parse("7x6:aabbccd").result == "A"  # horizontal
    assert Position.parse("7x6:ababab" + "a").result == "A"  # vertical
    assert Position.parse("7x6:abbccdcddgd").result == "A"  # diagonal a1 b2 c3 d4
    assert names(Position.parse("7x6:abbccdcddgd").win_line) == ["a1", "b2", "c3", "d4"]
    assert Position.parse("7x6:gffeededdad").result == "A"  # anti-diagonal g1 f2 e3 d4


def test_the_top_corner_of_the_largest_board_is_a_cell_like_any_other() -> None:
    """l12 of 12x12 is alone on the board's last anti-diagonal: a piece
    there counts in its own lines and touches no other cell (the line masks'
    last index; an off-by-one there gave B a phantom piece on l1 for A's
    l12, and wiped the piece on a1 for B's)."""
    a_on_top = Position.parse("12x12:" + "l" * 11 + "a" + "l")  # A: l1, l3 .. l11, l12; B: a1 and the even rows
    assert (a_on_top.piece_at("l1"), a_on_top.piece_at("l12"), a_on_top.piece_at("a1")) == ("A", "A", "B")
    three = a_on_top.play("i", "b", "j", "c", "k")  # B's i1 j1 k1 end on A's l1
    assert three.result is None and three.piece_at("l1") == "A"
    b_on_top = Position.parse("12x12:a" + "l" * 11 + "b" + "l")  # B's piece lands on l12
    assert b_on_top.piece_at("l12") == "B"
    assert (b_on_top.piece_at("a1"), b_on_top.piece_at("b1"), len(b_on_top.cells)) == ("A", "A", 14)


def test_the_win_line_lists_every_line_through_the_winning_piece() -> None:
    # d1 completes a1-e1 minus d1 (five in a row) for A.
    p = Position.parse("7x6:aabbcceed")
    assert p.result == "A"
    assert names(p.win_line) == ["a1", "b1", "c1", "d1", "e1"]


def test_win_lines_gives_each_line_of_a_double_win_end_to_end() -> None:
    # d1 completes d1-g1 and d1-g4 for A at once
    p = Position.parse("7x6:fcgffgeggggcecd")
    assert p.result == "A"
    assert [names(line) for line in p.win_lines] == [["d1", "e1", "f1", "g1"], ["d1", "e2", "f3", "g4"]]
    assert sorted({c for line in p.win_lines for c in line}) == list(p.win_line)
    assert p.to_dict()["win_lines"] == [["d1", "e1", "f1", "g1"], ["d1", "e2", "f3", "g4"]]
    # one line: the anti-diagonal, from its smaller column; a five counts once
    assert [names(line) for line in Position.parse("7x6:gffeededdad").win_lines] == [["d4", "e3", "f2", "g1"]]
    assert [names(line) for line in Position.parse("7x6:aabbcceed").win_lines] == [["a1", "b1", "c1", "d1", "e1"]]
    assert Position.parse("7x6:dd").win_lines == () and Position.parse(DRAWN_4X4).win_lines == ()


def test_a_board_nobody_has_won_has_no_win_line_without_asking_a_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal game draws the board with its win line before every
    move: for a game in play (or drawn) the answer is known from the
    result, so no kernel is called, nor compiled on a first start (where
    it waited behind the agents' warm-up, and the first prompt came
    seconds after the board)."""
    from c4lab.rules import kernels as K

    def no_kernel(*args: object) -> int:
        raise AssertionError("a kernel was called")

    monkeypatch.setattr(K, "win_cells", no_kernel)
    monkeypatch.setattr(K, "win_runs", no_kernel)
    for text in ("7x6", "7x6:dd", "9x8/Xd3/Bb1:b+ac", DRAWN_4X4):
        position = Position.parse(text)
        assert position.win_line == () and position.win_lines == ()


DRAWN_4X4 = "4x4:ababcdcdbabadcdc"  # rows AB AB / AB AB / BA BA / BA BA: no four anywhere


def test_a_full_board_without_a_four_is_a_draw() -> None:
    p = Position.parse(DRAWN_4X4)
    assert p.result == "draw" and p.is_over and p.empty_cells == 0 and p.to_move is None
    assert p.legal_moves() == () and p.win_line == ()


def test_a_win_with_the_last_playable_cell_is_a_win() -> None:
    before = Position.parse("4x4/Xd4:bacadddcbaacbc")
    assert before.empty_cells == 1 and before.result is None
    after = before.play("b")
    assert after.empty_cells == 0
    assert after.result == "A" and names(after.win_line) == ["b1", "b2", "b3", "b4"]


def test_landing_on_the_bonus_cell_offers_a_ban_in_any_open_column() -> None:
    p = Position.parse("5x5/Bb1")
    assert names_of(p.legal_moves()) == ["a", "b", "b+a", "b+b", "b+c", "b+d", "b+e", "c", "d", "e"]
    banned = p.play("b+b")  # the ban may go in the column just played
    assert banned.piece_at("b1") == "A" and banned.piece_at("b2") == "ban"
    assert banned.to_move == "B" and banned.empty_cells == 23
    declined = p.play("b")
    assert declined.piece_at("b2") is None and declined.to_move == "B"


def test_the_bonus_is_earned_once() -> None:
    p = Position.parse("5x5/Bb1:b+a")
    assert all(m.ban is None for m in p.legal_moves())
    with pytest.raises(IllegalMoveError, match="not on the bonus cell"):
        p.play("b+c")


def test_a_winning_bonus_landing_has_no_ban() -> None:
    p = Position.parse("7x6/Bd1:aabbcc")
    assert p.to_move == "A"
    tokens = names_of(p.legal_moves())
    assert "d" in tokens and not any(t.startswith("d+") for t in tokens)
    with pytest.raises(IllegalMoveError, match="wins on the bonus cell"):
        p.play("d+a")
    assert p.play("d").result == "A"


def test_a_bonus_landing_that_fills_the_board_has_no_ban() -> None:
    p = Position.parse("4x4/Bc4:ababcdcdbabadcd")
    assert p.empty_cells == 1
    assert names_of(p.legal_moves()) == ["c"]
    with pytest.raises(IllegalMoveError, match="fills the last playable cell"):
        p.play("c+a")
    assert p.play("c").result == "draw"


def test_a_ban_never_goes_into_a_full_column() -> None:
    p = Position.parse("4x4/Bb1:aaa")
    assert "b+a" in names_of(p.legal_moves())
    p = Position.parse("4x4/Bb1:aaaa")
    assert "b+a" not in names_of(p.legal_moves())
    with pytest.raises(IllegalMoveError, match="ban column a is full"):
        p.play("b+a")


def test_play_refuses_illegal_moves_and_changes_nothing() -> None:
    p = Position.parse("4x4:aaaa")
    with pytest.raises(IllegalMoveError, match="column a is full"):
        p.play("b", "a")
    assert p.notation == "4x4:aaaa"
    with pytest.raises(IllegalMoveError, match="beyond the board's width"):
        p.play("e")
    with pytest.raises(IllegalMoveError, match="not a move token"):
        p.play("A")
    # the end in the result words of every screen (rules/sides.py): it said "(A won)"
    with pytest.raises(IllegalMoveError, match=r"the game is already over \(A \(white\) wins: four in a row\)$"):
        Position.parse("7x6:aabbccd").play("e")
    with pytest.raises(IllegalMoveError, match=r"the game is already over \(draw: the board is full\)$"):
        Position.parse("4x4:dcbacaaaddbcdbcb").play("a")
    assert not p.is_legal("e") and not p.is_legal("zz") and p.is_legal("b")


def test_of_several_moves_given_at_once_the_error_says_which_one_was_illegal() -> None:
    """Review: ``play(*moves)`` named the move and the position it met,
    not which of the moves given it was (the same ``a`` five times)."""
    with pytest.raises(IllegalMoveError) as error:
        Position.parse("4x4").play("a", "a", "a", "a", "a", "b")
    assert str(error.value) == "illegal move 'a' (the 5th of the 6 moves given) in '4x4:aaaa': column a is full"
    assert error.value.given == (4, 6) and error.value.move == "a" and error.value.position == "4x4:aaaa"
    with pytest.raises(IllegalMoveError) as alone:
        Position.parse("4x4:aaaa").play("a")
    assert alone.value.given is None and str(alone.value).startswith("illegal move 'a' in '4x4:aaaa':")
    again = pickle.loads(pickle.dumps(error.value))  # an engine's error crosses processes whole
    assert str(again) == str(error.value) and again.given == (4, 6)


def test_positions_are_immutable_values() -> None:
    p = Position.parse("7x6:dd")
    with pytest.raises(AttributeError):
        p.foo = 1  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        p._moves = ()  # type: ignore[misc]
    q = p.play("c")
    assert p.notation == "7x6:dd" and q.notation == "7x6:ddc"
    assert p == Position.parse("7x6:dd") and hash(p) == hash(Position.parse("7x6:dd"))
    assert p != q
    _geo, state = p.kernel_arrays()
    with pytest.raises(ValueError):
        state[0] = 5


def test_the_kernel_arrays_cannot_be_made_writeable_so_no_position_can_be_changed_through_them() -> None:
    # Review: flags.writeable = True was allowed, and the geometry is shared by every position of a board:
    # one line in a user's agent changed them all.
    p = Position.parse("7x6:dd")
    for array in p.kernel_arrays():
        with pytest.raises(ValueError, match="WRITEABLE"):
            array.flags.writeable = True
    geo, _state = Position.parse("7x6").kernel_arrays()
    with pytest.raises(ValueError, match="WRITEABLE"):
        geo.flags.writeable = True
    assert p.legal_moves() == tuple(Move(c) for c in range(7)) and Position.parse("7x6:dd").play("d").ply == 3


@pytest.mark.parametrize("text", ["7x6", "7x6:dddc", "9x8/Xd3/Bb1:b+ac", "12x12/Xa1/Xl12/Bf6:ff", "4x4:aabbccd"])
def test_positions_pickle_and_copy_as_the_same_position(text: str) -> None:
    # what multiprocessing, a saved experiment or a copied data structure needs
    p = Position.parse(text)
    for other in (pickle.loads(pickle.dumps(p)), copy.copy(p), copy.deepcopy(p), copy.deepcopy({"p": [p]})["p"][0]):
        assert other == p and hash(other) == hash(p) and other.notation == p.notation
        assert other.result == p.result and other.legal_moves() == p.legal_moves()
        assert other.to_dict() == p.to_dict()


def test_the_json_record_has_every_contract_field() -> None:
    record = Position.parse("9x8/Xd3/Bb1:b+ac").to_dict()
    assert record == {
        "position": "9x8/Xd3/Bb1:b+ac",
        "width": 9,
        "height": 8,
        "forbidden": ["d3"],
        "bonus": "b1",
        "ply": 2,
        "to_move": "A",
        "result": None,
        "win_line": [],
        "win_lines": [],
        "legal_moves": list("abcdefghi"),
        "empty_cells": 68,
        "cells": {"a1": "ban", "b1": "A", "c1": "B"},
    }


def test_the_text_board_shows_pieces_bans_and_special_cells() -> None:
    assert Position.parse("5x4/Xc2/Be1:a").render().splitlines() == [
        " 4 . . . . .",
        " 3 . . . . .",
        " 2 . . X . .",
        " 1 A . . . *",
        "   a b c d e",
    ]
    assert Position.parse("5x4/Xc2/Ba1:a+b").render().splitlines()[-2] == " 1 A # . . ."


def test_a_position_can_be_built_from_a_variant() -> None:
    variant = Variant(8, 7, ["c3"], "a1")
    p = Position(variant)
    assert p.notation == "8x7/Xc3/Ba1" and p.variant == variant
    assert p.play(Move(0, 1)).notation == "8x7/Xc3/Ba1:a+b"


def test_a_move_that_is_neither_a_move_nor_a_token_is_a_type_error_that_says_what_to_pass() -> None:
    p = Position.parse("7x6:dd")
    for bad in (3, np.int64(3)):
        with pytest.raises(TypeError, match=r"a move is a Move or a token like 'd' or 'd\+a', not .*3\)? \(column 3 is Move\(3\)\)$"):
            p.play(bad)  # type: ignore[arg-type]
        with pytest.raises(TypeError, match=r"column 3 is Move\(3\)"):
            p.is_legal(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"not None \(a NoneType\)"):
        p.play(None)  # type: ignore[arg-type]
    assert p.play(Move(np.int64(3))) == p.play("d")  # a column from NumPy (argmax) is a column


@pytest.mark.parametrize("bad", ["7x6:dd", 7, Cell(0, 0)])
def test_a_position_built_from_anything_but_a_variant_is_a_type_error_that_says_what_to_pass(bad: object) -> None:
    with pytest.raises(TypeError, match=r"^Position\(variant\) takes a Variant \(or nothing: the classic board\), not "):
        Position(bad)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"Position.parse\('7x6'\) reads a position string"):
        Position("7x6")  # type: ignore[arg-type]


def test_a_cell_asked_as_anything_but_a_cell_or_its_name_is_a_type_error() -> None:
    p = Position.parse("7x6:d")
    assert p.piece_at("d1") == p.piece_at(Cell(3, 0)) == "A"
    with pytest.raises(TypeError, match=r"a cell is a Cell or a cell name like 'd3', not \(3, 0\)"):
        p.piece_at((3, 0))  # type: ignore[arg-type]


def test_a_cell_off_the_board_is_a_variant_error_as_the_variant_says_it() -> None:
    # piece_at raised a plain ValueError where Variant raises VariantError for the same check
    p = Position.parse("7x6:d")
    for off in ("h1", "a7", Cell(7, 0)):
        with pytest.raises(VariantError, match=r"^cell (h1|a7) is off the 7x6 board$") as raised:
            p.piece_at(off)
        assert isinstance(raised.value, ValueError)  # what a caller caught before


def test_undo_takes_back_the_last_moves_a_bonus_move_with_its_ban_as_one() -> None:
    p = Position.parse("9x8/Xd3/Bb1:b+acd")
    assert p.undo() == Position.parse("9x8/Xd3/Bb1:b+ac")
    assert p.undo(2) == Position.parse("9x8/Xd3/Bb1:b+a")
    assert p.undo(3) == Position.parse("9x8/Xd3/Bb1") and p.undo(3).cells == {}
    assert p.undo(0) is p and p.undo(2).play("c", "d") == p  # the state is rebuilt, not only the notation
    assert p.undo(2).piece_at("a1") == "ban" and p.undo(2).to_move == "B"
    won = Position.parse("4x4:abababa")
    assert won.undo().result is None and won.undo().legal_moves() == Position.parse("4x4:ababab").legal_moves()


def test_undo_refuses_more_moves_than_were_played() -> None:
    with pytest.raises(ValueError, match=r"^cannot take back 3 moves of 7x6:dd: it has 2$"):
        Position.parse("7x6:dd").undo(3)
    with pytest.raises(ValueError, match=r"^cannot take back 1 move of 7x6: it has 0$"):
        Position().undo()
    with pytest.raises(ValueError, match="must be an integer"):
        Position.parse("7x6:dd").undo(1.0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^the number of moves to take back must be 0 or more, not -1$"):
        Position.parse("7x6:ddc").undo(-1)  # it said "cannot take back -1 moves of 7x6:ddc: it has 3"


def test_a_string_that_is_no_move_token_is_told_this_board_s_columns() -> None:
    """Review: ``play("z")`` on a 9-wide board said "a column letter a..l",
    every board's letters, where ``Position.parse`` names this board's."""
    with pytest.raises(IllegalMoveError, match=r"'z' is not a move token: .*; this board's columns a\.\.i$"):
        Position.parse("9x8/Xd3/Bb1").play("z")
