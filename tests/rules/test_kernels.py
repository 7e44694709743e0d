"""The compiled kernels behind Position: random playouts end in positions
that an independent, naive check of the rules agrees with."""

from __future__ import annotations

import random

import numpy as np
import pytest

from c4lab.rules import Cell, Position, Variant
from c4lab.rules import kernels as K


def naive_winner(cells: dict[Cell, str]) -> set[str]:
    """Every side that owns four in a line somewhere (a slow, obvious check)."""
    owner = {(c.col, c.row): p for c, p in cells.items() if p in ("A", "B")}
    return {
        piece
        for (col, row), piece in owner.items()
        for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1))
        if all(owner.get((col + k * dc, row + k * dr)) == piece for k in range(4))
    }


def board_of(variant: Variant, state: np.ndarray) -> dict[Cell, str]:
    names = {K.PIECE_A: "A", K.PIECE_B: "B", K.BAN: "ban"}
    return {
        c: names[int(state[K.S_BOARD + c.col * 16 + c.row])]
        for c in variant.cells()
        if int(state[K.S_BOARD + c.col * 16 + c.row]) in names
    }


@pytest.mark.parametrize("seed", range(6))
def test_random_playouts_end_where_the_rules_say(seed: int) -> None:
    rng = random.Random(seed)
    s = np.uint64(K.seed_rng(seed))
    for _ in range(150):
        variant = Variant.enhanced(rng, forbidden=rng.randint(0, 2), bonus=rng.random() < 0.5)
        geo, start = Position(variant).kernel_arrays()
        state = start.copy()
        result, s = K.random_playout(geo, state, s)
        s = np.uint64(s)
        cells = board_of(variant, state)
        winners = naive_winner(cells)
        assert len(winners) <= 1
        if result == K.DRAW:
            assert not winners and len(cells) == variant.playable_cells
            assert int(state[K.S_EMPTY]) == 0
        else:
            assert winners == {"A" if result == K.WIN_A else "B"}
        # The header written back at the end is consistent with the board.
        a = sum(p == "A" for p in cells.values())
        b = sum(p == "B" for p in cells.values())
        assert int(state[K.S_PLY]) == a + b
        assert int(state[K.S_EMPTY]) == variant.playable_cells - len(cells)
        assert int(state[K.S_TURN]) == (1 if a > b else 0)


def test_a_playout_from_a_finished_position_changes_nothing() -> None:
    geo, start = Position.parse("7x6:aabbccd").kernel_arrays()
    state = start.copy()
    result, _ = K.random_playout(geo, state, np.uint64(5))
    assert result == K.WIN_A and (state == start).all()


def test_a_playout_won_on_the_bonus_cell_ends_before_its_ban() -> None:
    """RULES.md: the ban comes after a bonus landing that did not win.
    Random playouts on 4x4 with the bonus cell on each cell in turn: every
    one whose last piece won on the bonus cell has no ban piece on the board."""
    s = np.uint64(K.seed_rng(1))
    won_on_bonus = 0
    for bonus in Variant(4, 4).cells():
        variant = Variant(4, 4, bonus=bonus)
        geo, start = Position(variant).kernel_arrays()
        for _ in range(100):
            state = start.copy()
            result, s = K.random_playout(geo, state, s)
            s = np.uint64(s)
            if result != K.DRAW and int(state[K.S_LAST]) == bonus.col * 16 + bonus.row:
                won_on_bonus += 1
                assert "ban" not in board_of(variant, state).values(), variant.notation
    assert won_on_bonus > 20  # the case is common enough to be tested (53 games)


def test_playout_batches_count_every_game() -> None:
    geo, start = Position.parse("7x6").kernel_arrays()
    a, b, d, tokens = K.playout_batch(geo, start, 20_000, 3)
    assert a + b + d == 20_000
    assert 0.5 < a / 20_000 < 0.62  # the first player wins more random games
    assert 18 < tokens / 20_000 < 25
    assert K.playout_batch(geo, start, 1000, 9) == K.playout_batch(geo, start, 1000, 9)


def test_small_boards_use_the_bitboard_encoding_and_large_ones_the_line_masks() -> None:
    for width in range(4, 13):
        for height in range(4, 13):
            geo, _ = Position(Variant(width, height)).kernel_arrays()
            assert bool(geo[K.G_BITBOARD]) == (width * (height + 1) <= 64)


@pytest.mark.parametrize("seed", range(4))
def test_both_win_test_encodings_agree_move_by_move(seed: int) -> None:
    """Force the line masks on boards that would use a bitboard: the same
    random games must give the same legal moves and results at every step."""
    rng = random.Random(seed)
    out_a = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    out_b = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    for _ in range(200):
        while True:
            variant = Variant.enhanced(rng, forbidden=rng.randint(0, 2), bonus=rng.random() < 0.5)
            if variant.width * (variant.height + 1) <= 64:
                break
        geo_bits, start = Position(variant).kernel_arrays()
        geo_lines = geo_bits.copy()
        geo_lines[K.G_BITBOARD] = 0
        a, b = start.copy(), start.copy()
        while a[K.S_RESULT] == K.ONGOING:
            n = K.legal_codes(geo_bits, a, out_a)
            assert K.legal_codes(geo_lines, b, out_b) == n
            assert (out_a[:n] == out_b[:n]).all()
            code = int(out_a[rng.randrange(n)])
            assert K.play(geo_bits, a, code) == K.OK
            assert K.play(geo_lines, b, code) == K.OK
            assert a[K.S_RESULT] == b[K.S_RESULT]
        assert (a[K.S_BOARD:] == b[K.S_BOARD:]).all()


@pytest.mark.parametrize("seed", range(3))
def test_winning_columns_agree_with_the_win_test_of_each_column(seed: int) -> None:
    """The all-at-once bitboard test and the column-by-column test agree."""
    rng = random.Random(seed)
    for _ in range(80):
        position = Position(Variant.enhanced(rng, forbidden=rng.randint(0, 2), bonus=rng.random() < 0.3))
        while not position.is_over:
            geo, st = position.kernel_arrays()
            for side in (0, 1):
                expected = 0
                for c in range(position.variant.width):
                    r = int(st[K.S_HEIGHT + c])
                    if r < position.variant.height and position.variant.contains(Cell(c, r)):
                        board = dict(position.cells)
                        board[Cell(c, r)] = "A" if side == 0 else "B"
                        if naive_winner(board) & {"A" if side == 0 else "B"}:
                            expected |= 1 << c
                assert K.winning_columns(geo, st, side) == expected, (position.notation, side)
            position = position.play(rng.choice(position.legal_moves()))


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**63 + 7, 2**64 - 1, -5, 2**70 + 3])
def test_the_seed_state_computed_in_python_is_the_kernels(seed: int) -> None:
    """``seed_state`` (the agents' first start, no compile) gives the same
    state as the compiled ``seed_rng``, wrap-around and all, from any integer."""
    assert K.seed_state(seed) == K.seed_rng(np.uint64(seed % 2**64))
    assert isinstance(K.seed_state(seed), np.uint64)
