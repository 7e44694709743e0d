"""Boards: the classic one, the enhanced random setup, and bad boards."""

from __future__ import annotations

import dataclasses
import random
import re
import typing
from collections import Counter
from collections.abc import Callable, Iterable

import numpy as np
import pytest

from c4lab.rules import Cell, IllegalMoveError, Move, Position, Variant, VariantError


def test_the_classic_board_is_7_by_6_and_plain() -> None:
    classic = Variant.classic()
    assert (classic.width, classic.height, classic.forbidden, classic.bonus) == (7, 6, (), None)
    assert classic.notation == "7x6"
    assert classic.playable_cells == 42


def test_the_enhanced_setup_is_reproducible_from_a_seed() -> None:
    assert Variant.enhanced(7) == Variant.enhanced(7)
    assert Variant.enhanced(7, bonus=True) == Variant.enhanced(7, bonus=True)
    assert len({Variant.enhanced(seed) for seed in range(50)}) > 40


def test_the_enhanced_setup_draws_sizes_in_range_and_one_forbidden_cell() -> None:
    rng = random.Random(1)
    sizes = Counter()
    for _ in range(2000):
        v = Variant.enhanced(rng, bonus=True)
        assert 4 <= v.width <= 12 and 4 <= v.height <= 12
        assert len(v.forbidden) == 1 and v.contains(v.forbidden[0])
        assert v.bonus is not None and v.bonus not in v.forbidden and v.contains(v.bonus)
        sizes[v.width] += 1
    assert set(sizes) == set(range(4, 13))


def test_the_enhanced_ranges_and_options_are_configurable() -> None:
    v = Variant.enhanced(3, width=(7, 7), height=(6, 6), forbidden=0)
    assert (v.width, v.height, v.forbidden, v.bonus) == (7, 6, (), None)
    v = Variant.enhanced(3, forbidden=2)
    assert len(v.forbidden) == 2
    with pytest.raises(VariantError):
        Variant.enhanced(3, width=(3, 8))
    with pytest.raises(VariantError):
        Variant.enhanced(3, width=(9, 8))


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"width": 3, "height": 6}, "out of range"),
        ({"width": 7, "height": 13}, "out of range"),
        ({"width": 7, "height": 6, "forbidden": ["h1"]}, "off the 7x6 board"),
        ({"width": 7, "height": 6, "forbidden": ["a1", "a1"]}, "repeated"),
        ({"width": 7, "height": 6, "forbidden": ["a1"], "bonus": "a1"}, "is a forbidden cell"),
        ({"width": 7, "height": 6, "bonus": "a7"}, "off the 7x6 board"),
        ({"width": 7.0, "height": 6}, "integer"),
        ({"width": True, "height": 6}, "integer"),
        ({"width": "7", "height": 6}, "integer"),
    ],
)
def test_bad_boards_are_refused_with_a_reason(kwargs: dict, words: str) -> None:
    with pytest.raises(VariantError, match=words):
        Variant(**kwargs)


def test_cells_are_named_column_then_row_and_sort_that_way() -> None:
    assert Cell.parse("d3") == Cell(3, 2)
    assert Cell(3, 2).name == "d3"
    assert sorted(Cell.parse(n) for n in ["b1", "a10", "a2"]) == [Cell.parse(n) for n in ["a2", "a10", "b1"]]
    for bad in ["d0", "d03", "D3", "3d", "m1", "a13", "", "a"]:
        with pytest.raises(VariantError):
            Cell.parse(bad)


def test_a_cell_out_of_range_says_that_cells_count_from_zero() -> None:
    """Review: "no cell at column 0, row 12" read like the notation's row 12."""
    with pytest.raises(VariantError, match=re.escape("no cell at column 0, row 12: Cell(col, row) counts from 0, "
                                                      "each below 12 (a1 is Cell(0, 0)")):
        Cell(0, 12)


def test_forbidden_cells_are_kept_in_canonical_order() -> None:
    assert Variant(12, 12, ["b1", "a10", "a2"]).notation == "12x12/Xa2/Xa10/Xb1"


def _mirror_image(variant: Variant) -> Variant:
    """The board seen in a mirror: every special cell moved to the mirrored column."""
    def flip(cell: Cell) -> Cell:
        return Cell(variant.width - 1 - cell.col, cell.row)

    return Variant(variant.width, variant.height, [flip(c) for c in variant.forbidden],
                   None if variant.bonus is None else flip(variant.bonus))


@pytest.mark.parametrize(("board", "symmetric"), [
    ("7x6", True), ("6x5", True), ("7x6/Xd2", True), ("7x6/Xa1/Xg1", True), ("7x6/Bd3", True),
    ("7x6/Xb2/Xf2/Bd6", True),
    ("7x6/Xa1", False), ("7x6/Xa1/Xg2", False), ("7x6/Bc3", False), ("6x5/Bc3", False), ("7x6/Xa1/Xg1/Be1", False),
])
def test_a_board_is_its_own_mirror_image_only_when_its_forbidden_and_bonus_cells_are(board: str, symmetric: bool) -> None:
    """The solver's table and the learners' weights are shared between a
    position and its mirror image only on such a board: a forbidden cell or
    a bonus cell off the centre column without its mirror breaks it (an
    even width has no centre column, so no bonus cell is its own mirror)."""
    variant = Position.parse(board).variant
    assert variant.is_mirror_symmetric is symmetric
    assert (_mirror_image(variant) == variant) is symmetric


def test_mirror_symmetry_is_the_board_equal_to_its_mirror_image() -> None:
    rng = random.Random(8)
    for _ in range(300):
        variant = Variant.enhanced(rng, width=(4, 7), height=(4, 5), forbidden=rng.randint(0, 3), bonus=rng.random() < 0.5)
        if rng.random() < 0.5:  # make half of them symmetric, or nearly
            variant = Variant(variant.width, variant.height, set(variant.forbidden) | set(_mirror_image(variant).forbidden),
                              None)
        assert variant.is_mirror_symmetric == (_mirror_image(variant) == variant), variant.notation


def test_the_constructor_s_type_hints_take_what_it_takes() -> None:
    """A type checker accepts the board as the docs build it
    (``Variant(9, 8, forbidden=["d3"], bonus="b1")``): the constructor's
    hints take cell names and any iterable, as it does, while the fields
    hold the canonical tuple of ``Cell``s."""
    hints = typing.get_type_hints(Variant.__init__)
    assert hints["forbidden"] == Iterable[Cell | str] | Cell | str
    assert hints["bonus"] == Cell | str | None
    v = Variant(9, 8, forbidden=iter(["e3", Cell(3, 2)]), bonus="b1")
    assert (v.forbidden, v.bonus) == ((Cell(3, 2), Cell(4, 2)), Cell(1, 0))
    assert v == Variant(9, 8, ("d3", "e3"), Cell(1, 0)) and dataclasses.replace(v, bonus=None).notation == "9x8/Xd3/Xe3"


def test_contains_takes_a_cell_or_its_name_as_every_cell_argument_does() -> None:
    # a name was an AttributeError ('str' object has no attribute 'col'), where piece_at takes one
    board = Variant(7, 6)
    assert board.contains("g6") and board.contains(Cell(6, 5))
    assert not board.contains("h1") and not board.contains("a7")
    with pytest.raises(VariantError, match="'zz' is not a cell name"):
        board.contains("zz")
    with pytest.raises(TypeError, match=re.escape("a cell is a Cell or a cell name like 'd3', not 3")):
        board.contains(3)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["z9", "j1", "a9", "a13"])
def test_a_cell_off_a_board_is_refused_with_that_board_s_own_columns_and_rows(name: str) -> None:
    # a room's forbidden z9 on 9x8 said "columns go from a to l", the notation's limit, not the board's
    with pytest.raises(VariantError) as refused:
        Variant(9, 8).cell(name)
    assert str(refused.value) == f"cell {name} is off the 9x8 board (columns a to i, rows 1 to 8)"


@pytest.mark.parametrize("name", ["d3/Bb1:dd", "", "D3", "d03", "a0", "d"])
def test_what_is_no_cell_name_at_all_is_refused_as_cell_parse_refuses_it(name: str) -> None:
    with pytest.raises(VariantError, match=re.escape(f"{name!r} is not a cell name")):
        Variant(9, 8).cell(name)


def test_a_cell_of_the_board_is_its_cell() -> None:
    assert Variant(9, 8).cell("i8") == Cell(8, 7) and Variant(9, 8).extent == "columns a to i, rows 1 to 8"


def test_numpy_integers_make_the_same_boards_cells_and_moves_as_ints() -> None:
    # what NumPy code (argmax, arrays of sizes) passes; the values are stored as plain ints
    v = Variant(np.int64(9), np.int32(8), forbidden=[Cell(np.int64(3), np.int64(2))])
    assert v == Variant(9, 8, ["d3"]) and hash(v) == hash(Variant(9, 8, ["d3"])) and v.notation == "9x8/Xd3"
    assert type(v.width) is int and type(v.forbidden[0].col) is int
    move = Move(np.int64(3), np.uint8(0))
    assert move == Move(3, 0) and move.token == "d+a" and type(move.column) is int and type(move.ban) is int


@pytest.mark.parametrize("make", [lambda: Cell(1.5, 2), lambda: Cell(True, 0), lambda: Cell("a", 1)])
def test_a_cell_of_anything_but_integers_is_refused_with_a_reason(make: Callable[[], Cell]) -> None:
    with pytest.raises(VariantError, match="a cell's column must be an integer"):
        make()


@pytest.mark.parametrize("args", [(3.0,), (True,), ("d",), (3, 0.0), (3, False)])
def test_a_move_of_anything_but_integers_is_refused_with_a_reason(args: tuple) -> None:
    with pytest.raises(ValueError, match="must be an integer, not"):
        Move(*args)


@pytest.mark.parametrize("make, message", [
    (lambda: Move("d"), "a move's column must be an integer, not 'd' (Move.parse('d') reads it)"),
    (lambda: Move("b+a"), "a move's column must be an integer, not 'b+a' (Move.parse('b+a') reads it)"),
    (lambda: Variant("9x8/Xd3"),  # type: ignore[arg-type]
     "the width must be an integer, not '9x8/Xd3' (Position.parse('9x8/Xd3').variant reads it)"),
])
def test_a_string_where_a_number_goes_names_what_reads_the_string(make: Callable[[], object], message: str) -> None:
    """The newcomer's ``Move("d")``: the error says which call reads the
    notation (still a ``ValueError``, as any other non-integer column)."""
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        make()


@pytest.mark.parametrize("name", ["a100", "a" + "1" * 5000, "b" + "9" * 4400])
def test_a_cell_name_with_a_row_of_any_length_is_refused_with_a_reason(name: str) -> None:
    with pytest.raises(VariantError, match="rows go from 1 to 12") as caught:
        Cell.parse(name)
    assert len(str(caught.value)) < 200
    with pytest.raises(VariantError, match="rows go from 1 to 12"):
        Variant(7, 6, bonus=name)


def test_a_long_move_token_is_quoted_short() -> None:
    with pytest.raises(IllegalMoveError, match="not a move token") as caught:
        Position.parse("7x6").play("a" * 10000)
    assert len(str(caught.value)) < 400


@pytest.mark.parametrize(
    "kwargs,words",
    [
        ({"bonus": 3}, r"^the bonus cell must be a Cell or a cell name like 'd3', not 3$"),
        ({"forbidden": 3}, r"^the forbidden cells must be cells or cell names like \['d3'\], not 3$"),
        ({"forbidden": ["a1", (3, 2)]}, r"^a forbidden cell must be a Cell or a cell name like 'd3', not \(3, 2\)$"),
    ],
)
def test_special_cells_of_the_wrong_type_are_refused_naming_which(kwargs: dict, words: str) -> None:
    with pytest.raises(VariantError, match=words):
        Variant(7, 6, **kwargs)


@pytest.mark.parametrize("parse,text", [(Cell.parse, "a cell name must be a str like 'd3', not 3"),
                                        (Move.parse, "a move token must be a str like 'd' or 'd\\+a', not 3")])
def test_parsing_anything_but_a_string_is_a_type_error_that_says_what_to_pass(
        parse: Callable[[object], object], text: str) -> None:
    with pytest.raises(TypeError, match=f"^{text} \\(type int; "):
        parse(3)


@pytest.mark.parametrize("seed", ["1", 1.0, True, (1,)])
def test_an_enhanced_board_refuses_a_seed_that_is_not_an_integer(seed: object) -> None:
    # random.Random would take a string or a float (and True for 1) and hash it: a typo'd seed would
    # still give a board, just not the one an integer seed reproduces
    with pytest.raises(VariantError, match="^" + re.escape(f"an enhanced board's seed must be an integer, not {seed!r}") + "$"):
        Variant.enhanced(seed)  # type: ignore[arg-type]


def test_an_enhanced_board_takes_numpy_integer_seeds_and_generators() -> None:
    assert Variant.enhanced(np.int64(5)) == Variant.enhanced(5) == Variant.enhanced(random.Random(5))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"width": 5}, r"^the width range must be a pair \(low, high\), like \(7, 7\) for width 7 only, not 5$"),
        ({"height": (5, 6, 7)}, r"^the height range must be a pair \(low, high\), .*, not \(5, 6, 7\)$"),
        ({"width": ("5", 7)}, r"^each bound of the width range must be an integer, not '5'$"),
        ({"forbidden": "1"}, r"^the number of forbidden cells must be an integer, not '1'$"),
    ],
)
def test_enhanced_ranges_and_counts_of_the_wrong_type_are_refused_naming_which(kwargs: dict, message: str) -> None:
    with pytest.raises(VariantError, match=message):
        Variant.enhanced(1, **kwargs)
    assert Variant.enhanced(1, width=[5, 5], height=(np.int64(4), 4)).size == "5x4"  # a list, NumPy bounds


@pytest.mark.parametrize("make, message", [
    (lambda: Variant(10**5000, 6), "the width is far out of range: a number of about 5,000 digits"),
    (lambda: Move(-(10**5000)), "a move's column is far out of range: a number of about 5,000 digits"),
    (lambda: Cell(0, 10**4400), "a cell's row is far out of range: a number of about 4,400 digits"),
])
def test_an_integer_too_long_to_write_out_is_refused_saying_so(make: Callable[[], object], message: str) -> None:
    """Python writes no integer of more than 4,300 digits: each message that
    named such a number failed with Python's own ("Exceeds the limit (4300
    digits) for integer string conversion"), as if c4lab had broken."""
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        make()
