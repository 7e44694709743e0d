"""Threat tables beside the n-tuples (``Network.create(threats=True)``,
``c4lab train ntuple --threats``): what a column's table is indexed by, and
that the tables are read, learnt, saved and grown like the tuples'."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from numba import njit

from c4lab.agents.ntuple_net import THREAT_PATTERNS, THREAT_REACH, Network, NetworkError
from c4lab.cli import main
from c4lab.learning import ntuple as N
from c4lab.rules import Position
from c4lab.rules import kernels as K


@njit(cache=True)
def _windows(geo, st, out):  # type: ignore[no-untyped-def]
    K.threat_windows(geo, st, THREAT_REACH, out)


def windows(position: Position) -> list[int]:
    """``K.threat_windows`` of ``position``, a column each."""
    out = np.zeros(K.MAX_SIDE, dtype=np.int64)
    _windows(*position.kernel_arrays(), out)
    return [int(w) for w in out[: position.variant.width]]


def completes_four(grid: np.ndarray, col: int, row: int, piece: int) -> bool:
    """Would ``piece`` on (col, row) make four in a line on ``grid``
    (``K.board_grid``)?  Counted cell by cell, apart from the kernels."""
    width, height = grid.shape
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for sign in (1, -1):
            c, r = col + sign * dc, row + sign * dr
            while 0 <= c < width and 0 <= r < height and grid[c, r] == piece:
                run += 1
                c, r = c + sign * dc, r + sign * dr
        if run >= 4:
            return True
    return False


def expected_windows(position: Position) -> list[int]:
    """Each column's threats as the kernels' docstring says, from the grid:
    bit k for A, bit 6 + k for B, on the empty cell k rows above the
    landing row."""
    geo, st = position.kernel_arrays()
    grid = K.board_grid(geo, st)
    width, height = grid.shape
    out = []
    for col in range(width):
        land = int(K.landing_row(st, col))
        bits = 0
        for k in range(min(THREAT_REACH, height - land)):
            if grid[col, land + k] != K.EMPTY:  # a forbidden cell
                continue
            for side in (0, 1):
                if completes_four(grid, col, land + k, K.PIECE_A + side):
                    bits |= 1 << (k + THREAT_REACH * side)
        out.append(bits)
    return out


def random_positions(board: str, count: int, seed: int) -> list[Position]:
    """``count`` positions of random games on ``board``, of every length."""
    rng = np.random.default_rng(seed)
    found = []
    for _ in range(count):
        position = Position.parse(board)
        for _ in range(int(rng.integers(0, position.variant.width * position.variant.height))):
            moves = position.legal_moves()
            after = position.play(moves[int(rng.integers(len(moves)))])
            if after.is_over:
                break
            position = after
        found.append(position)
    return found


@pytest.mark.parametrize("board", ["4x4", "7x6", "6x5/Xc2", "8x6/Xc3/Bf4", "4x12/Xa3", "9x8/Xd3", "12x12/Xf4/Bb3"])
def test_a_column_s_threats_are_the_empty_cells_above_its_landing_row_that_complete_four(board: str) -> None:
    """One-word bitboards (7x6, 8x6) and the boards kept as line masks
    (9x8, 12x12) give the same windows as counting along the grid, forbidden
    cells and ban pieces included."""
    positions = random_positions(board, 40, seed=5)
    assert any(any(windows(p)) for p in positions)  # threats were there to find
    for position in positions:
        assert windows(position) == expected_windows(position), position.notation


def test_a_known_position_has_its_threats_where_a_player_would_see_them() -> None:
    """7x6:ddeeff: A threatens c1 and g1 (row 1, the landing row of c and
    g: bit 0); B, with d2 e2 f2, threatens c2 and g2 (bit 1 of the B half);
    nothing in the other columns."""
    w = windows(Position.parse("7x6:ddeeff"))
    assert w == [0, 0, 1 | 2 << THREAT_REACH, 0, 0, 0, 1 | 2 << THREAT_REACH]


def test_a_network_with_threat_tables_has_a_table_per_column_pair_after_the_tuples_tables() -> None:
    classic = Network.create("7x6", tuples=10, seed=1, threats=True)
    lay = classic.layout
    per = THREAT_PATTERNS * 7  # landing rows 0 to 6
    tuples_end = int(lay.sizes.sum())
    assert lay.threat_entries == 4 * per and lay.entries == tuples_end + 4 * per  # a, b, c, d: the mirror shares
    assert list(lay.threat_base) == [tuples_end + per * k for k in (0, 1, 2, 3, 2, 1, 0)]
    assert lay.slots == lay.inst_cells.shape[0] + 7
    lopsided = Network.create("6x5/Xc2", tuples=10, seed=1, threats=True)  # not its own mirror image
    assert lopsided.layout.threat_entries == 6 * THREAT_PATTERNS * 6
    assert Network.create("7x6", tuples=10, seed=1).threats  # the default on the classic board
    assert not Network.create("6x5/Xc2", tuples=10, seed=1).threats  # and there only
    plain = Network.create("7x6", tuples=10, seed=1, threats=False)
    assert plain.layout.threat_entries == 0 and plain.layout.slots == plain.layout.inst_cells.shape[0]


def test_threat_tables_move_the_values_and_a_mirror_image_reads_the_same() -> None:
    """Weights in the threat tables change the values of the afterstates
    that reach them; a column and its mirror image share a table, so a
    position and its mirror image keep equal values move for move."""
    net = Network.create("7x6", tuples=10, seed=1, threats=True)
    rng = np.random.default_rng(2)
    lay = net.layout
    threat = slice(lay.entries - lay.threat_entries, lay.entries)
    net.weights[:] = rng.normal(0, 0.1, net.weights.shape).astype(np.float32)
    position = Position.parse("7x6:ddeef")  # B to move: after f, A threatens c1 and g1
    codes, values, _ = net.move_values(position)
    mirror = Position.parse("7x6:ddccb")
    mirrored = dict(zip(*net.move_values(mirror)[:2], strict=True))
    for code, value in zip(codes, values, strict=True):
        assert mirrored[6 - code] == pytest.approx(value, abs=1e-12)
    net.weights[:, threat] = 0
    assert all(a != b for a, b in zip(values, net.move_values(position)[1], strict=True))


def test_a_network_with_threat_tables_round_trips_grows_and_says_so(tmp_path: Path) -> None:
    net = Network.create("5x4", tuples=8, seed=2, threats=True)
    N.Trainer(net, seed=1).run(games=2000)
    lay = net.layout
    assert net.weights[:, lay.entries - lay.threat_entries:].any()  # the tables learnt
    path = tmp_path / "t.npz"
    net.save(path)
    back = Network.load(path)
    assert back.threats and back.header()["threats"] is True
    assert np.array_equal(back.weights, net.weights)
    for text in ("5x4", "5x4:bc", "5x4:ccbdd"):
        assert back.move_values(Position.parse(text)) == net.move_values(Position.parse(text))
    grown = net.grown(3, seed=4)
    for text in ("5x4", "5x4:bc", "5x4:ccbdd"):
        assert grown.move_values(Position.parse(text)) == net.move_values(Position.parse(text))
    # A header that says no threat tables over weights that have them: the sizes disagree, named with the file.
    header = {**net.header(), "threats": False}
    wrong = tmp_path / "wrong.npz"
    np.savez_compressed(wrong, header=np.array(json.dumps(header)), tuples=net.tuples, weights=net.weights)
    with pytest.raises(NetworkError, match="wrong.npz: it has .* weights a side"):
        Network.load(wrong)
    header["threats"] = "yes"
    np.savez_compressed(wrong, header=np.array(json.dumps(header)), tuples=net.tuples, weights=net.weights)
    with pytest.raises(NetworkError, match="wrong.npz: its header is damaged .threats is 'yes'"):
        Network.load(wrong)


def test_train_threats_makes_a_network_with_them_and_a_resume_cannot_add_or_remove_them(tmp_path: Path) -> None:
    out = tmp_path / "n.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "300", "--probes", "0",
                                       "--tuples", "6", "--threats", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert Network.load(out).threats
    plain = tmp_path / "p.npz"
    Network.create("4x4", tuples=6, seed=1).save(plain)
    # A resume can neither add threat tables nor take them away: refused, the file untouched.
    for network, option in ((plain, "--threats"), (out, "--no-threats")):
        before = network.read_bytes()
        refused = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(network), option, "--games", "10",
                                            "--probes", "0"])
        assert refused.exit_code == 2
        assert "--threats and --no-threats shape a new network" in refused.output and str(network) in refused.output
        assert network.read_bytes() == before
