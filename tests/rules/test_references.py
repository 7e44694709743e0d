"""The engine against references written independently of it: OpenSpiel's
Connect Four on plain boards, and a plain grid that follows RULES.md
sentence by sentence (gravity over forbidden cells, the bonus and its ban
piece, wins, draws); and the mirror image of a symmetric board."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from c4lab.rules import Cell, Move, Position, Variant

DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


def test_plain_boards_play_as_openspiels_connect_four() -> None:
    pyspiel = pytest.importorskip("pyspiel")
    rng = random.Random(31)
    for _ in range(300):
        width, height = rng.randint(4, 12), rng.randint(4, 12)
        state = pyspiel.load_game(f"connect_four(rows={height},columns={width})").new_initial_state()
        position = Position(Variant(width, height))
        while not state.is_terminal():
            assert [m.column for m in position.legal_moves()] == state.legal_actions(), position.notation
            column = rng.choice(state.legal_actions())
            state.apply_action(column)
            position = position.play(Move(column))
        returns = state.returns()
        expected = "A" if returns[0] > 0 else "B" if returns[1] > 0 else "draw"
        assert position.result == expected, position.notation
        assert position.legal_moves() == ()


class Grid:
    """RULES.md on a dictionary of cells, as slow and plain as can be."""

    def __init__(self, variant: Variant) -> None:
        self.width, self.height = variant.width, variant.height
        self.bonus = None if variant.bonus is None else (variant.bonus.col, variant.bonus.row)
        self.cells: dict[tuple[int, int], str] = {(c.col, c.row): "X" for c in variant.forbidden}
        self.side = "A"
        self.result: str | None = "draw" if self.empty() == 0 else None

    def empty(self) -> int:
        return sum((c, r) not in self.cells for c in range(self.width) for r in range(self.height))

    def landing(self, col: int) -> int | None:
        """The lowest cell of the column that is empty and not forbidden."""
        return next((r for r in range(self.height) if (col, r) not in self.cells), None)

    def wins(self, col: int, row: int) -> bool:
        for dc, dr in DIRECTIONS:
            run = 1
            for sign in (1, -1):
                k = 1
                while self.cells.get((col + sign * k * dc, row + sign * k * dr)) == self.side:
                    run, k = run + 1, k + 1
            if run >= 4:
                return True
        return False

    def legal(self) -> list[Move]:
        if self.result is not None:
            return []
        out = []
        for col in range(self.width):
            row = self.landing(col)
            if row is None:
                continue
            out.append(Move(col))  # at the bonus cell: the decline
            if (col, row) == self.bonus:
                self.cells[col, row] = self.side
                if not self.wins(col, row) and self.empty() > 0:
                    out += [Move(col, ban) for ban in range(self.width) if self.landing(ban) is not None]
                del self.cells[col, row]
        return out

    def play(self, move: Move) -> None:
        row = self.landing(move.column)
        assert row is not None
        self.cells[move.column, row] = self.side
        won = self.wins(move.column, row)
        if move.ban is not None:
            ban_row = self.landing(move.ban)
            assert ban_row is not None
            self.cells[move.ban, ban_row] = "ban"
        if won:
            self.result = self.side
        elif self.empty() == 0:
            self.result = "draw"
        self.side = "B" if self.side == "A" else "A"


@st.composite
def variants(draw: st.DrawFn, symmetric: bool = False) -> Variant:
    width = draw(st.integers(4, 12))
    height = draw(st.integers(4, 12))
    cells = [Cell(c, r) for c in range(width) for r in range(height)]
    forbidden = set(draw(st.lists(st.sampled_from(cells), max_size=12)))
    if symmetric:
        forbidden |= {Cell(width - 1 - c.col, c.row) for c in forbidden}
    free = [c for c in cells if c not in forbidden and (not symmetric or 2 * c.col == width - 1)]
    bonus = draw(st.sampled_from(free)) if free and draw(st.booleans()) else None
    return Variant(width, height, tuple(forbidden), bonus)


@settings(max_examples=150, deadline=None)
@given(variants(), st.randoms(use_true_random=False))
def test_every_variant_plays_as_the_rules_page_says_move_by_move(variant: Variant, rng: random.Random) -> None:
    grid = Grid(variant)
    position = Position(variant)
    while True:
        assert position.result == grid.result, position.notation
        assert list(position.legal_moves()) == grid.legal(), position.notation
        assert position.empty_cells == grid.empty()
        if position.is_over:
            break
        assert position.to_move == grid.side
        move = rng.choice(grid.legal())
        grid.play(move)
        position = position.play(move)
        assert {(c.col, c.row): p for c, p in position.cells.items()} == {
            cell: p for cell, p in grid.cells.items() if p != "X"
        }


def _mirror(move: Move, width: int) -> Move:
    return Move(width - 1 - move.column, None if move.ban is None else width - 1 - move.ban)


@settings(max_examples=150, deadline=None)
@given(variants(symmetric=True), st.randoms(use_true_random=False))
def test_a_symmetric_board_plays_its_mirror_image_game_the_same(variant: Variant, rng: random.Random) -> None:
    assert variant.is_mirror_symmetric
    width = variant.width
    position = mirrored = Position(variant)
    while not position.is_over:
        assert sorted(_mirror(m, width) for m in position.legal_moves()) == sorted(mirrored.legal_moves())
        move = rng.choice(position.legal_moves())
        position, mirrored = position.play(move), mirrored.play(_mirror(move, width))
        assert {Cell(width - 1 - c.col, c.row): p for c, p in position.cells.items()} == mirrored.cells
        assert (position.result, position.empty_cells) == (mirrored.result, mirrored.empty_cells)
    assert mirrored.is_over and mirrored.legal_moves() == ()
