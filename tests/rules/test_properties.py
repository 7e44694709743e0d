"""Properties of every position reachable by legal play (hypothesis)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from c4lab.rules import Cell, Position, Variant


@st.composite
def variants(draw: st.DrawFn) -> Variant:
    width = draw(st.integers(4, 12))
    height = draw(st.integers(4, 12))
    cells = [Cell(c, r) for c in range(width) for r in range(height)]
    special = draw(st.lists(st.sampled_from(cells), unique=True, max_size=3))
    bonus = draw(st.booleans()) and len(special) > 0
    forbidden = special[:-1] if bonus else special
    return Variant(width, height, tuple(forbidden), special[-1] if bonus else None)


@st.composite
def games(draw: st.DrawFn) -> list[Position]:
    """A random legal game (possibly unfinished), as every position along it."""
    position = Position(draw(variants()))
    line = [position]
    length = draw(st.integers(0, 150))
    for _ in range(length):
        legal = position.legal_moves()
        if not legal:
            break
        position = position.play(draw(st.sampled_from(legal)))
        line.append(position)
    return line


def check_board(position: Position) -> None:
    variant = position.variant
    cells = position.cells
    for cell in variant.forbidden:
        assert cell not in cells, "a piece in a forbidden cell"
    for c in range(variant.width):
        for r in range(1, variant.height):
            if Cell(c, r) in cells:
                below = Cell(c, r - 1)
                assert below in cells or below in variant.forbidden, f"a piece floats above {below}"
    count_a = sum(1 for p in cells.values() if p == "A")
    count_b = sum(1 for p in cells.values() if p == "B")
    assert count_a - count_b in (0, 1), "A moves first, then the sides alternate"
    assert position.empty_cells == variant.playable_cells - len(cells)
    bans = sum(1 for p in cells.values() if p == "ban")
    assert bans <= (1 if variant.bonus is not None else 0)


@settings(max_examples=300, deadline=None)
@given(games())
def test_canonical_strings_round_trip(line: list[Position]) -> None:
    for position in line:
        again = Position.parse(position.notation)
        assert again == position
        assert again.notation == position.notation
        assert again.cells == position.cells and again.result == position.result


@settings(max_examples=300, deadline=None)
@given(games())
def test_legal_play_keeps_the_board_possible(line: list[Position]) -> None:
    for position in line:
        check_board(position)


@settings(max_examples=300, deadline=None)
@given(games())
def test_a_finished_game_has_no_legal_moves_and_an_ongoing_one_has_some(line: list[Position]) -> None:
    for position in line:
        if position.is_over:
            assert position.legal_moves() == () and position.to_move is None
            assert position is line[-1]
        else:
            assert position.legal_moves() and position.to_move in ("A", "B")


@settings(max_examples=200, deadline=None)
@given(games())
def test_a_won_game_shows_a_line_of_four_of_the_winner(line: list[Position]) -> None:
    final = line[-1]
    if final.result in ("A", "B"):
        cells = final.cells
        assert len(final.win_line) >= 4
        assert all(cells[c] == final.result for c in final.win_line)
        assert final.last_cell in final.win_line
    else:
        assert final.win_line == ()
