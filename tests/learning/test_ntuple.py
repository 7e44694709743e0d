"""The n-tuple learner: its features, its TD update, its file, its agent,
its command."""

from __future__ import annotations

import csv
import html
import itertools
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from c4lab.agents import SpecError, make_agent
from c4lab.agents import ntuple as AB
from c4lab.agents.ntuple import PUCT_C, PUCT_LOOK, PUCT_TEMP, NTupleAgent
from c4lab.agents.ntuple_net import (
    BANNED,
    FORMAT_V1,
    LATER,
    NOW,
    STONE_A,
    STONE_B,
    Network,
    NetworkError,
    default_tuples,
    lines_through,
    random_walk_tuples,
    reachable,
    segment_values,
)
from c4lab.agents.ntuple_puct import M_ITER, M_USED, Tree
from c4lab.agents.ntuple_puct import run as puct_run
from c4lab.cli import main
from c4lab.game import play_game
from c4lab.learning import ntuple as N
from c4lab.learning import ntuple_td as T
from c4lab.learning.train_ntuple import bar_columns
from c4lab.rules import Move, Position, Variant
from c4lab.rules import kernels as K
from testkit import as_a_user, ctrl_c_once_ready, progress_line, run_counting_compiles

NO_TCL = T.NO_TCL

#: A ten-minute run on 5x4 that measures a point of its curve every 2 s of
#: training, and the line of a point (on a pipe, one line a point: "     2 s
#: 26,000 games, 12,609/s, 85% vs random") that says it has trained some
#: games.  Its first line ("training 5x4: ...") comes before the kernels are
#: loaded or compiled and the first point is measured (on an empty numba
#: cache and a loaded machine that took minutes: a Ctrl-C then saved
#: nothing), and worker processes may take seconds to send their first games.
TRAIN_5X4 = ["train", "ntuple", "--board", "5x4", "--minutes", "10", "--probes", "0", "--tuples", "10",
             "--eval-every", "2"]
TRAINING = r" [1-9][\d,]* games, "


@cache
def trained(board: str, games: int, seed: int = 1, workers: int = 1) -> Network:
    """A network trained by self-play on ``board`` (cached per test run)."""
    net = Network.create(Position.parse(board).variant, tuples=20 if games < 50_000 else 70, seed=seed)
    N.Trainer(net, workers=workers, seed=seed).run(games=games)
    return net


def features(position: Position, net: Network) -> tuple[np.ndarray, np.ndarray]:
    """``position``'s cell states and tuple indices (``encode``, as the agent reads them)."""
    return AB._features(*position.kernel_arrays(), net)


# -- the features ----------------------------------------------------------------


def test_tuples_are_random_walks_of_distinct_playable_cells() -> None:
    variant = Variant(7, 6, forbidden=["d3"])
    tuples = random_walk_tuples(variant, 70, 8, seed=3)
    assert tuples.shape == (70, 8)
    forbidden = 3 * 16 + 2
    for row in tuples.tolist():
        assert len(set(row)) == 8 and forbidden not in row
        assert all(0 <= c // 16 < 7 and 0 <= c % 16 < 6 for c in row)
        for cell in row[1:]:  # every cell touches an earlier one of the walk
            assert any(max(abs(cell // 16 - o // 16), abs(cell % 16 - o % 16)) == 1 for o in row[: row.index(cell)])
    assert (random_walk_tuples(variant, 70, 8, seed=3) == tuples).all()


def test_lines_of_four_through_the_classic_boards_cells() -> None:
    lines = lines_through(Variant(7, 6))
    assert lines[(0, 0)] == 3 and lines[(3, 0)] == 7 and lines[(3, 2)] == 13
    assert sum(lines.values()) == 4 * 69  # the classic board's 69 lines of four
    assert (3, 2) not in lines_through(Variant(7, 6, forbidden=["d3"]))


def test_the_walks_start_where_the_tuples_are_furthest_below_the_cells_share_of_lines() -> None:
    """Every cell (with its mirror image, which the network reads too) holds
    at least half its share of the tuples' cells, whatever the seed: no
    hole left by chance, as random starts left at the first centre cell."""
    variant = Variant(7, 6)
    lines = lines_through(variant)
    for seed in range(5):
        held = dict.fromkeys(lines, 0)
        for cell in random_walk_tuples(variant, 150, 8, seed).ravel().tolist():
            held[(cell // 16, cell % 16)] += 1
        for col, row in lines:
            pair = {(col, row), (6 - col, row)}
            share = sum(lines[c] for c in pair) / sum(lines.values()) * 150 * 8
            assert sum(held[c] for c in pair) >= share / 2, (seed, col, row)


def test_tuples_added_to_a_network_start_where_its_tuples_are_scarce() -> None:
    variant = Variant(7, 6, forbidden=["a1"])  # not its own mirror image: each cell counts alone
    left = np.array([[c * 16 + r for c in range(3) for r in range(1, 4)][:8]] * 20, dtype=np.int16)
    added = random_walk_tuples(variant, 5, 8, seed=1, beside=left)
    assert not set(added[:, 0].tolist()) & set(left.ravel().tolist())  # none starts where 20 tuples are


def test_a_new_network_has_thills_70_tuples_120_where_a_bonus_cell_adds_a_fifth_cell_state_200_on_7x6() -> None:
    assert default_tuples(Variant(7, 6)) == 200
    assert default_tuples(Position.parse("7x6/Xd1").variant) == 70
    assert default_tuples(Position.parse("6x5/Xc2").variant) == 70
    assert default_tuples(Position.parse("8x6/Xc3/Bf4").variant) == 120


def test_cell_states_tell_playable_empty_cells_from_the_others_and_ban_pieces_from_pieces() -> None:
    # A: c1 (the bonus) and a ban on c2; B: a1; A: b2 (gravity skips the forbidden b1).
    position = Position.parse("5x5/Xb1/Bc1:c+cab")
    net = Network.create(position.variant, tuples=4, length=4)
    codes, _ = features(position, net)

    def at(name: str) -> int:
        return int(codes[(ord(name[0]) - ord("a")) * 16 + int(name[1:]) - 1])

    assert (at("c1"), at("c2"), at("c3"), at("c4")) == (STONE_A, BANNED, NOW, LATER)
    assert (at("a1"), at("a2"), at("a3")) == (STONE_B, NOW, LATER)
    assert (at("b2"), at("b3"), at("b4")) == (STONE_A, NOW, LATER)
    assert net.states == 5


@pytest.mark.parametrize("threats", [False, True])
@pytest.mark.parametrize("board", ["6x5/Xc2/Bd1", "7x6", "9x8/Xd8", "12x12/Xf4/Bb3"])
def test_afterstate_values_equal_the_values_of_the_positions_encoded_afresh(board: str, threats: bool) -> None:
    """``move_values`` reads a plain drop's afterstate from the instances it
    moves (``drops``: its cell becomes a stone, the next free cell above it,
    past a forbidden one, becomes playable) and plays a bonus move on the
    features and takes it back: either way its values must be those of the
    positions after each move, encoded afresh, to the rounding (with threat
    tables too, read from each afterstate's board)."""
    position = Position.parse(board)
    net = Network.create(position.variant, tuples=12, length=6, seed=2, threats=threats)
    rng = np.random.default_rng(0)
    net.weights[:] = rng.normal(0, 0.1, net.weights.shape).astype(np.float32)
    while not position.is_over:
        moves, values, results = net.move_values(position)
        side = 0 if position.to_move == "A" else 1
        for code, value, result in zip(moves, values, results):
            after = position.play(Move.from_code(code))
            if after.is_over:
                continue
            _, idx = features(after, net)
            total = sum(float(net.weights[side, i]) for i in idx)
            assert value == pytest.approx(math.tanh(total), abs=1e-12), after.notation
        position = position.play(Move.from_code(moves[int(rng.integers(len(moves)))]))


def test_a_column_segment_ranks_its_reachable_states_densely() -> None:
    """Cells a1 and a2 of one tuple (a column from the floor): seven states a
    game can reach (a1 empty and playable; a piece on a1, a2 playable; two
    pieces), numbered 0 to 6.  b3 alone (an uncovered cell below it) has all
    four states."""
    variant = Variant(4, 4)
    cells = np.array([0 * 16 + 0, 0 * 16 + 1], dtype=np.int64)
    values, size = segment_values(variant, cells, 4)
    index = {(s0, s1): int(values[0, s0] + values[1, s1])
             for s0, s1 in [(NOW, LATER), (STONE_A, NOW), (STONE_B, NOW), (STONE_A, STONE_A), (STONE_B, STONE_A),
                            (STONE_A, STONE_B), (STONE_B, STONE_B)]}
    assert size == 7 and sorted(index.values()) == list(range(7))
    _, alone = segment_values(variant, np.array([1 * 16 + 2], dtype=np.int64), 4)
    assert alone == 4
    # With a forbidden cell under it, a2 is the floor of its column: gravity skips a1.
    _, floor = segment_values(Variant(4, 4, forbidden=["a1"]), np.array([0 * 16 + 1], dtype=np.int64), 4)
    assert floor == 3


@pytest.mark.parametrize("board", ["5x4", "6x5/Xc2", "5x5/Xb1/Bc1", "7x6"])
def test_every_position_a_game_reaches_has_its_own_entry_in_each_table(board: str) -> None:
    """Along random games (bonus moves and ban pieces included), each
    instance's index lies in its own table, and one entry never stands for
    two different states of the tuple's cells (which ``reachable`` also
    accepts): the dense ranking loses nothing."""
    position0 = Position.parse(board)
    net = Network.create(position0.variant, tuples=12, length=6, seed=4)
    lay = net.layout
    seen: dict[tuple[int, int], tuple[int, ...]] = {}
    rng = np.random.default_rng(1)
    for _ in range(60):
        position = position0
        while not position.is_over:
            codes, idx = features(position, net)
            for i, cells in enumerate(lay.inst_cells):
                t = int(lay.inst_tuple[i])
                assert lay.bases[t] <= idx[i] < lay.bases[t] + lay.sizes[t]
                state = tuple(int(codes[c]) for c in cells)
                assert reachable(net.variant, cells, np.array([state]))[0], (position.notation, state)
                assert seen.setdefault((t, int(idx[i])), state) == state, position.notation
            moves = position.legal_moves()
            position = position.play(moves[int(rng.integers(len(moves)))])
    assert len(seen) > 100


def test_a_network_of_the_first_format_is_read_into_the_dense_tables(tmp_path: Path) -> None:
    """A file with tables of ``P ** n`` entries (the cell states read in base
    ``P``) loads with the same values, each weight moved to its state's
    dense entry."""
    net = Network.create(Position.parse("6x5/Xc2").variant, tuples=5, length=4, seed=2)
    lay, states, length = net.layout, net.states, net.length
    rng = np.random.default_rng(3)
    old = np.zeros((2, 5, states**length), dtype=np.float32)
    digits = np.arange(states**length)[:, None] // states ** np.arange(length) % states
    for t, cells in enumerate(net.tuples):
        keep = reachable(net.variant, cells, digits)
        values, _ = segment_values(net.variant, cells, states)
        new = lay.bases[t] + values[np.arange(length), digits[keep]].sum(axis=1)
        w = rng.normal(0, 0.1, (2, int(keep.sum()))).astype(np.float32)
        old[:, t, np.flatnonzero(keep)] = w
        net.weights[:, new] = w
    header = {**net.header(), "format": FORMAT_V1}
    path = tmp_path / "v1.npz"
    np.savez_compressed(path, header=np.array(json.dumps(header)), tuples=net.tuples, weights=old)
    back = Network.load(path)
    assert np.array_equal(back.weights, net.weights)
    position = Position.parse("6x5/Xc2:aab")
    assert back.move_values(position) == net.move_values(position)
    np.savez_compressed(path, header=np.array(json.dumps(header)), tuples=net.tuples, weights=old[:, :, :-1])
    with pytest.raises(NetworkError, match="v1.npz.*do not match"):
        Network.load(path)


# -- the TD update ---------------------------------------------------------------


def test_td_update_moves_the_value_along_the_gradient_of_tanh() -> None:
    weights = np.zeros((2, 16), dtype=np.float32)
    rows = np.array([5, 9], dtype=np.int64)
    # V = tanh(0) = 0, delta = 1: each active weight moves by rate * 1 * (1 - 0).
    assert T.td_update(weights, 1, rows, 1.0, 0.25, NO_TCL, 0.0) == pytest.approx(1.0)
    assert weights[1, 5] == weights[1, 9] == pytest.approx(0.25)
    assert not weights[0].any()
    # Now V = tanh(0.5): the next step is rate * (1 - V) * (1 - V^2).
    v = math.tanh(0.5)
    assert T.td_update(weights, 1, rows, 1.0, 0.25, NO_TCL, 0.0) == pytest.approx(1 - v, abs=1e-6)
    assert weights[1, 5] == pytest.approx(0.25 + 0.25 * (1 - v) * (1 - v * v), abs=1e-6)


def test_temporal_coherence_shrinks_the_step_of_a_weight_whose_recommendations_cancel_out() -> None:
    """TCL-EXP: a weight keeps the sum N and the sum of magnitudes A of the
    changes recommended to it, and steps by exp(beta * (|N| / A - 1)) times
    the plain step: full steps while they agree, smaller once they cancel."""
    weights = np.zeros((2, 4), dtype=np.float32)
    tcl = np.zeros((2, *weights.shape), dtype=np.float32)
    rows, rate, beta = np.array([1], dtype=np.int64), 0.5, 2.0
    n = a = 0.0
    for target in (1.0, -1.0, 1.0):
        before = float(weights[0, 1])
        v = math.tanh(before)
        grad = (target - v) * (1 - v * v)
        factor = math.exp(beta * (abs(n) / a - 1)) if a > 0 else 1.0
        T.td_update(weights, 0, rows, target, rate, tcl, beta)
        assert weights[0, 1] == pytest.approx(before + rate * grad * factor, abs=1e-6)
        n, a = n + grad, a + abs(grad)
        assert tcl[0, 0, 1] == pytest.approx(n, abs=1e-6) and tcl[1, 0, 1] == pytest.approx(a, abs=1e-6)
    assert factor < 0.2  # the third step: the first two recommendations had nearly cancelled out
    assert np.count_nonzero(weights) == 1 and np.count_nonzero(tcl) == 2


def test_the_lambda_return_mixes_the_next_value_with_the_return_after_it_and_stops_at_a_cut() -> None:
    """A side's five afterstates of a game; the fifth's next value is the
    result, the third learns nothing (the side's next move was an
    exploratory one): G[i] = (1 - lambda) * next[i] + lambda * G[i + 1],
    and next[i] alone before a cut or at the end."""
    nextv = np.array([0.1, 0.3, 0.6, -0.2, 1.0])
    has = np.array([True, True, False, True, True])
    out = np.full(5, 9.0)
    T.lambda_returns(nextv, has, 5, 0.5, out)
    assert out.tolist() == pytest.approx([0.5 * 0.1 + 0.5 * 0.3, 0.3, 9.0, 0.5 * -0.2 + 0.5 * 1.0, 1.0])
    T.lambda_returns(nextv, has, 5, 0.0, out)  # TD(0): each moves toward the next value
    assert out.tolist() == pytest.approx([0.1, 0.3, 9.0, -0.2, 1.0])
    T.lambda_returns(nextv, np.ones(5, dtype=bool), 5, 1.0, out)  # Monte Carlo: the result
    assert out.tolist() == pytest.approx([1.0] * 5)


@pytest.mark.parametrize("options", [N.Options(lam=0.5), N.Options(tcl=0.5)], ids=["lambda", "tcl"])
def test_a_short_run_with_a_lambda_return_or_temporal_coherence_learns_too(options: N.Options) -> None:
    """An untrained network scores 65 % against random here (its win and
    block rules alone); after 20,000 games with a lambda-return or with temporal
    coherence, 80 to 96 % (seeds 1 to 6: the tuples and the games vary
    more than the two settings do)."""
    variant = Position.parse("4x4").variant
    assert N.score_against(Network.create(variant, tuples=20, seed=1), "random", 40, seed=1) == 0.65
    net = Network.create(variant, tuples=20, seed=1)
    N.Trainer(net, options, seed=1).run(games=20_000)
    assert N.score_against(net, "random", 40, seed=1) >= 0.8


@pytest.mark.parametrize("threats", [False, True])
def test_one_random_game_teaches_only_its_end_the_winner_up_and_the_loser_down(threats: bool) -> None:
    """With every move random and no learning from random moves, a game
    teaches two things from zero weights: the winner's last afterstate
    before the win moves toward +1 and the loser's last one toward -1, each
    active weight by exactly the step size (the step divided by the tuple
    instances; a threat table's weight, one a column, takes the same step)."""
    position = Position.parse("4x4")
    net = Network.create(position.variant, tuples=6, length=4, seed=1, threats=threats)
    active = net.layout.slots
    geo, st = position.kernel_arrays()
    for seed in range(20):
        net.weights[:] = 0
        counters = np.zeros(T.N_COUNTERS)
        T.train_games(geo, st, *net.arrays(), 1, np.uint64(K.seed_rng(seed)), 1.0, 1.0, False, NO_TCL, 0.0, 0.0, 0,
                      0, 0.0, counters)
        rate = 1.0 / net.layout.inst_cells.shape[0]
        if counters[T.C_DRAW]:
            assert not net.weights.any()
            continue
        winner = 0 if counters[T.C_WIN_A] else 1
        assert counters[T.C_UPDATES] == 2
        assert net.weights[winner].sum() == pytest.approx(rate * active)
        assert net.weights[1 - winner].sum() == pytest.approx(-rate * active)
        return
    pytest.fail("no decisive game in 20 seeds")


def test_early_exploration_makes_the_first_moves_random_and_only_those() -> None:
    """``early_epsilon`` is the least chance of a random move in a game's
    first ``early_plies`` moves: at 1 over the whole game, greedy play
    (epsilon 0) becomes random play, which teaches only the game's end (two
    updates a game, as above); over the first two moves only, every later
    greedy move teaches again; at 0 it changes nothing."""
    position = Position.parse("4x4")
    geo, st = position.kernel_arrays()

    def updates(early_plies: int, early_epsilon: float) -> tuple[float, np.ndarray]:
        net = Network.create(position.variant, tuples=6, length=4, seed=1)
        counters = np.zeros(T.N_COUNTERS)
        T.train_games(geo, st, *net.arrays(), 200, np.uint64(K.seed_rng(3)), 0.5, 0.0, False, NO_TCL, 0.0, 0.0, 0,
                      early_plies, early_epsilon, counters)
        return counters[T.C_UPDATES], net.weights

    assert updates(16, 1.0)[0] == 2 * 200
    assert updates(2, 1.0)[0] > 2 * 200
    greedy, weights = updates(0, 0.0)
    assert greedy > 2 * 200
    again, same = updates(8, 0.0)
    assert again == greedy and np.array_equal(weights, same)


def test_early_exploration_is_an_option_the_header_keeps_and_a_resume_carries(tmp_path: Path) -> None:
    with pytest.raises(N.OptionOutOfRange, match="early epsilon must be in"):
        N.Options(early_epsilon=1.5)
    with pytest.raises(N.OptionWrongType, match="early_plies must be a whole number"):
        N.Options(early_plies=2.5)  # type: ignore[arg-type]
    out = tmp_path / "net.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "200", "--probes", "0",
                                       "--early-epsilon", "0.3", "--early-plies", "3", "--out", str(out)])
    assert result.exit_code == 0, result.output
    options = Network.load(out).options
    assert (options["early_epsilon"], options["early_plies"]) == (0.3, 3)
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "200", "--probes", "0"])
    assert result.exit_code == 0, result.output
    options = Network.load(out).options
    assert (options["early_epsilon"], options["early_plies"]) == (0.3, 3)
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "200", "--early-epsilon", "2",
                                       "--out", str(tmp_path / "other.npz")])
    assert result.exit_code == 2 and "Invalid value for '--early-epsilon'" in result.output
    assert not (tmp_path / "other.npz").exists()


def test_the_same_seed_with_one_worker_learns_the_same_network() -> None:
    variant = Position.parse("5x4").variant
    nets = []
    for _ in range(2):
        net = Network.create(variant, tuples=10, length=6, seed=4)
        N.Trainer(net, workers=1, seed=9).run(games=3000)
        nets.append(net)
    assert np.array_equal(nets[0].weights, nets[1].weights) and nets[0].weights.any()
    other = Network.create(variant, tuples=10, length=6, seed=4)
    N.Trainer(other, workers=1, seed=10).run(games=3000)
    assert not np.array_equal(other.weights, nets[0].weights)


def test_two_workers_play_the_games_asked_for_on_the_same_weights() -> None:
    net = Network.create(Position.parse("5x4").variant, tuples=10, length=6, seed=4)
    trainer = N.Trainer(net, workers=2, seed=1)
    trainer.run(games=5000)
    assert trainer.played == net.games == 5000 == trainer.counters[T.C_GAMES]
    assert net.weights.any()


@pytest.mark.parametrize("workers", [1, 2])
def test_a_run_given_in_games_pauses_every_worker_at_each_multiple_of_pause_every(workers: int) -> None:
    """``pause_every``: the network is judged at exactly 700, 1400...
    games, never at the run's end; no game is played while it is judged
    (its weights do not move), and the pause is not training time."""
    net = Network.create(Position.parse("5x4").variant, tuples=10, length=6, seed=4)
    trainer = N.Trainer(net, workers=workers, seed=1)
    seen: list[int] = []

    def judge(t: N.Trainer) -> None:
        weights = net.weights.copy()
        seen.append(net.games)
        assert t.played == net.games
        threading.Event().wait(0.3)  # the workers, were they not paused, would play on meanwhile
        assert net.games == seen[-1] and np.array_equal(net.weights, weights)

    began = time.monotonic()
    trainer.run(games=3000, pause_every=700, on_pause=judge)
    wall = time.monotonic() - began
    assert seen == [700, 1400, 2100, 2800] and net.games == trainer.played == 3000
    assert trainer.seconds <= wall - 4 * 0.3  # the four pauses' 1.2 s at least are not in it
    with pytest.raises(ValueError, match="Trainer.run: pause_every must be a whole number of games from 1, not 0"):
        trainer.run(games=10, pause_every=0)


def test_a_pause_that_ends_the_run_is_not_training_time_either() -> None:
    """Ctrl-C (or a failure) while a point is judged ends the run with the
    network at the pause's games, and the seconds the run saves leave the
    unfinished pause out as they leave out the finished ones (they took it
    in: a run stopped during a long point saved that point's time as
    training)."""
    net = Network.create(Position.parse("5x4").variant, tuples=10, length=6, seed=4)
    trainer = N.Trainer(net, workers=1, seed=1)

    def interrupted(t: N.Trainer) -> None:
        threading.Event().wait(1.0)
        raise KeyboardInterrupt

    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        trainer.run(games=3000, pause_every=700, on_pause=interrupted)
    wall = time.monotonic() - began
    assert net.games == trainer.played == 700
    assert trainer.seconds <= wall - 1.0


def test_the_same_seed_with_one_worker_and_pauses_learns_the_same_network() -> None:
    variant = Position.parse("5x4").variant
    nets = []
    for _ in range(2):
        net = Network.create(variant, tuples=10, length=6, seed=4)
        N.Trainer(net, workers=1, seed=9).run(games=3000, pause_every=450, on_pause=lambda t: None)
        nets.append(net)
    assert np.array_equal(nets[0].weights, nets[1].weights) and nets[0].weights.any()


def test_merged_copies_take_the_mean_of_the_workers_changes() -> None:
    """A round on a copy, sent back as a sparse change and merged, leaves the
    network where training the table itself would have (one worker); two
    changes are averaged; two processes learn the same network from the
    same seed."""
    from c4lab.learning import ntuple_copies as C

    variant = Position.parse("5x4").variant
    shared = Network.create(variant, tuples=10, length=6, seed=4)
    constant = N.Options(alpha=1.0, alpha_final=1.0, epsilon=0.1, epsilon_final=0.1)  # as the round below
    N.Trainer(shared, constant, workers=1, seed=9).run(games=3000)
    copied = Network.create(variant, tuples=10, length=6, seed=4)
    rng = int(K.seed_rng(9 * 1009))
    task = C.Round(variant.notation, tuple(copied.arrays()[1:]), 3000, rng, 1.0, 0.1, False, N.Options().opening)
    change = C.play_round(task, copied.weights)
    C.merge(copied.weights, [change])
    assert change.counters[T.C_GAMES] == 3000 and 0 < change.index.size < copied.weights.size
    assert np.allclose(copied.weights, shared.weights, atol=1e-6)
    halves = Network.create(variant, tuples=10, length=6, seed=4)
    C.merge(halves.weights, [change, C.Change(change.index, -change.delta, 0, change.counters)])
    assert not halves.weights.any()
    C.merge(halves.weights, [change, change])
    assert np.allclose(halves.weights, copied.weights, atol=1e-6)

    net = Network.create(variant, tuples=10, length=6, seed=4)
    trainer = N.Trainer(net, workers=2, seed=1, executor="processes")
    trainer.run(games=5000)
    assert trainer.played == net.games == 5000 == trainer.counters[T.C_GAMES]
    again = Network.create(variant, tuples=10, length=6, seed=4)
    N.Trainer(again, workers=2, seed=1, executor="processes").run(games=5000)
    assert np.array_equal(net.weights, again.weights) and net.weights.any()


def test_the_copies_workers_start_before_the_clock_and_the_schedule_start(monkeypatch: pytest.MonkeyPatch) -> None:
    """Starting the workers of the copies (two processes spawned, c4lab
    imported and the kernel loaded in each: 5 s here; a local Ray 15 to
    40 s) was counted as training: a run of ``--minutes 1 --executor ray``
    spent most of its minute, and of its falling step size and
    exploration, before its first game, and said 2 games a second.  The
    workers start with a round of no games each, off the clock; the first
    games are played at the start of the schedule."""
    from c4lab.learning import ntuple_copies as C

    class SlowToStart:
        """Copies played in this process, whose workers take a second to
        start (their first round), after half a second to make them."""

        def __init__(self, workers: int) -> None:
            time.sleep(0.5)
            self.workers, self.started, self.tasks = workers, False, []

        def round(self, weights: np.ndarray, tasks: list[C.Round]) -> list[C.Change]:
            if not self.started:
                time.sleep(1.0)
                self.started = True
            self.tasks += [t for t in tasks if t.games]
            return [C.play_round(t, weights) for t in tasks]

        def close(self) -> None:
            pass

    made: list[SlowToStart] = []
    monkeypatch.setattr(C, "make_copies", lambda executor, workers, address=None: made.append(SlowToStart(workers))
                        or made[-1])
    monkeypatch.setattr(C, "ROUND", 200)
    net = Network.create(Position.parse("5x4").variant, tuples=10, length=6, seed=4)
    trainer = N.Trainer(net, workers=2, seed=1, executor="processes")
    began = time.monotonic()
    trainer.run(seconds=2.0)
    wall = time.monotonic() - began
    assert trainer.seconds <= wall - 1.5  # the start's 1.5 s are not training
    assert trainer.played == net.games > 0
    # the first round within a tenth of the schedule (1 falling to 0.1, 0.1 to 0), not three quarters down it
    # (0.18 and 0.025: the start's 1.5 s of the 2)
    assert made[0].tasks[0].alpha > 0.8 and made[0].tasks[0].epsilon > 0.09


@pytest.mark.slow
def test_ray_tasks_learn_what_local_processes_learn() -> None:
    """The Ray executor (a local Ray here) runs the same rounds as local
    processes: the same seed gives the same network."""
    pytest.importorskip("ray")
    variant = Position.parse("5x4").variant
    nets = []
    for executor in ("processes", "ray"):
        net = Network.create(variant, tuples=10, length=6, seed=4)
        N.Trainer(net, workers=2, seed=1, executor=executor).run(games=4000)
        nets.append(net)
    assert np.array_equal(nets[0].weights, nets[1].weights) and nets[0].weights.any()


# -- the learnt value inside master ------------------------------------------------


def test_uct_with_the_learnt_value_at_its_leaves_backs_up_the_networks_value() -> None:
    """With ``mix=1`` a leaf is worth the network's value of its afterstate
    for the player who moved into it (no playout): after one iteration the
    one expanded child holds exactly that, mapped to [0, 1]; with ``mix=0.5``
    it holds the mean of that and a playout's result."""
    from c4lab.agents.base import Budget
    from c4lab.agents.uct import UCTAgent
    from c4lab.agents.uct_search import F_MEAN, Leaf

    net = trained("5x4", 3000)
    position = Position.parse("5x4:c")
    moves, values, _ = net.move_values(position)
    lay = net.layout
    for mix in (1.0, 0.5):
        agent = UCTAgent(iterations=1, seed=1)
        agent.leaf = Leaf(net.weights, lay.cell_ptr, lay.cell_inst, lay.cell_add, lay.threat_base,
                          len(lay.inst_tuple), mix)
        tree = agent.search(position, Budget(iterations=1))
        [(move, child)] = tree.children(tree.root)
        learnt = 0.5 + 0.5 * values[moves.index(move.code)]
        mean = float(tree.nf[child, F_MEAN])
        if mix == 1.0:
            assert mean == pytest.approx(learnt, abs=1e-6)
        else:
            assert any(mean == pytest.approx(0.5 * learnt + 0.5 * r, abs=1e-6) for r in (0.0, 0.5, 1.0))


def test_master_with_a_network_plays_legal_moves_on_its_board_and_refuses_another(tmp_path: Path) -> None:
    path = tmp_path / "net.npz"
    trained("7x6/Xd1/Be2", 300).save(path)
    master = make_agent(f"master:time=none,iterations=200,depth=2,seed=1,weights={path},mix=0.7")
    record = play_game(master, make_agent("random:seed=2"), Position.parse("7x6/Xd1/Be2"))
    assert record.result in ("A", "B", "draw")
    with pytest.raises(NetworkError, match="trained for the board 7x6/Xd1/Be2, not 7x6"):
        master.choose(Position.parse("7x6"))
    with pytest.raises(NetworkError, match="does not exist"):
        make_agent(f"master:weights={tmp_path / 'missing.npz'}")
    with pytest.raises(ValueError, match="mix must lie in"):
        make_agent(f"master:weights={path},mix=2")


# -- what it learns --------------------------------------------------------------


def test_a_short_4x4_training_beats_random_in_at_least_90_percent_of_the_games() -> None:
    """4x4 is a draw with best play: a learner that plays itself with the
    usual 10 % of exploration learns to draw, and wins only 70-80 % against
    random.  With half its moves random, the values it learns are those
    against a weak opponent, and it learns to exploit one (100,000 games,
    about 8 s).  Everything is held constant, the network too: the mean of
    its last weights (the default) wins as often here (179-184 of 200 games
    from seeds 1-3, 179-183 without it), where a falling step size gives it
    something to smooth."""
    net = Network.create(Position.parse("4x4").variant, tuples=70, seed=1)
    held = N.Options(alpha=0.3, alpha_final=0.3, epsilon=0.5, epsilon_final=0.5, opening=0, average=0)
    N.Trainer(net, held, seed=1).run(games=100_000)
    agent = NTupleAgent(net, seed=1)
    other = make_agent("random:seed=2")
    wins = 0
    for g in range(200):
        record = play_game(agent, other, Position(net.variant)) if g % 2 == 0 else \
            play_game(other, agent, Position(net.variant))
        wins += record.result == ("A" if g % 2 == 0 else "B")
    assert wins >= 180


@pytest.mark.parametrize("board", ["4x4/Xb2", "5x5/Bc3", "7x6/Xd1/Be2", "12x12/Xf4/Bg1", "4x12/Xa1", "12x4/Bl1"])
@pytest.mark.parametrize("search", [{}, {"depth": 2}, {"search": "puct", "iterations": 200},
                                    {"search": "puct", "iterations": 200, "threads": 2}], ids=str)
def test_the_agent_plays_only_legal_moves_on_every_kind_of_board(board: str, search: dict) -> None:
    net = trained(board, 300)
    agent = NTupleAgent(net, seed=3, **search)
    other = make_agent("random:seed=4")
    for g in range(4):
        a, b = (agent, other) if g % 2 == 0 else (other, agent)
        record = play_game(a, b, Position(net.variant))  # policy "raise": an illegal move fails the test
        assert record.final.is_over


def test_greedy_play_wins_at_once_and_blocks_an_immediate_win() -> None:
    net = trained("5x4", 500)
    agent = NTupleAgent(net, seed=0)
    assert agent.choose(Position.parse("5x4:ababab")).token == "a"  # A holds a1-a3: a4 wins
    assert agent.choose(Position.parse("5x4:aebec")).token == "d"  # A holds a1-c1: B must block d1


def test_greedy_play_blocks_with_the_ban_piece_when_no_stone_can() -> None:
    # Every move loses at once but taking the bonus cell (f) and banning the
    # column where A would win (d): even an untrained network finds it.
    position = Position.parse("8x6/Xc3/Bf4:fheefegahhf")
    for seed in range(3):
        move, analysis = NTupleAgent(Network.create(position.variant, tuples=10, seed=seed), seed=seed).analyse(position)
        assert (move.token, analysis.note) == ("f+d", "blocks an immediate win")


def test_the_search_wins_at_once_blocks_and_keeps_to_its_time(tmp_path: Path) -> None:
    path = tmp_path / "net.npz"
    trained("5x4", 500).save(path)
    for spec in ("depth=2", "depth=3", "search=alphabeta,time=0.05", "iterations=300", "time=0.05"):
        agent = make_agent(f"ntuple:weights={path},{spec},seed=1")
        assert agent.choose(Position.parse("5x4:ababab")).token == "a", spec
        assert agent.choose(Position.parse("5x4:aebec")).token == "d", spec
    for search, note in (("search=alphabeta", "alpha-beta to depth"), ("search=puct", "PUCT")):
        agent = make_agent(f"ntuple:weights={path},{search},time=0.05")
        _, analysis = agent.analyse(Position.parse("5x4:c"))
        assert analysis.seconds is not None and analysis.seconds < 2.0
        assert note in (analysis.note or "") and (analysis.iterations or 0) > 0


def plain_negamax(net: Network, position: Position, depth: int) -> float:
    """The alpha-beta search's value of ``position``, by plain negamax in
    Python: a move that ends the game is worth its exact value, scaled up
    by ``2 + depth / 100`` (more than any learnt value, and more the sooner
    it comes); a win now settles the node; the last ply takes the network's
    afterstate values."""
    codes, values, results = net.move_values(position)
    scaled = [v * (2.0 + 0.01 * depth) if r != K.ONGOING else v for v, r in zip(values, results)]
    if any(r != K.ONGOING and v > 0 for v, r in zip(scaled, results)):
        return max(scaled)
    if depth <= 1:
        return max(scaled)
    return max(v if r != K.ONGOING else -plain_negamax(net, position.play(Move.from_code(c)), depth - 1)
               for c, v, r in zip(codes, scaled, results))


@pytest.mark.parametrize("board", ["5x4", "5x5/Xa1/Bc3"])
def test_alpha_beta_finds_the_plain_negamax_value_at_every_depth(board: str) -> None:
    """Alpha-beta on the learnt value (its root's loop, the table kept
    between depths, the cut-offs) returns the value plain negamax finds,
    to the last bit, for the move it picks, and for every other move a
    bound between that move's own value and the best (each is searched
    with the best value so far as its window); on a board with a bonus
    cell, bans included."""
    net = trained(board, 500)
    rng = np.random.default_rng(7)
    for _ in range(6):
        position = Position(net.variant)
        for _ in range(int(rng.integers(0, 8))):
            if position.is_over:
                break
            moves = position.legal_moves()
            position = position.play(moves[int(rng.integers(len(moves)))])
        if position.is_over:
            continue
        geo, st = position.kernel_arrays()
        moves_out = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        values = np.empty(K.MAX_LEGAL, dtype=np.float64)
        prior = np.zeros(K.MAX_LEGAL, dtype=np.float64)
        nodes = np.zeros(2, dtype=np.int64)
        table = (np.zeros(AB.TT_SIZE, dtype=np.uint64), np.zeros(AB.TT_SIZE), np.zeros(AB.TT_SIZE, dtype=np.int64))
        codes, leaf, results = net.move_values(position)
        for depth in range(1, 5):
            n = AB._search_root(net, geo, st, depth, moves_out, values, prior, *table, nodes)
            prior[:n] = values[:n]
            best = int(nodes[1])
            assert values[best] == max(values[:n]) == plain_negamax(net, position, depth), (position, depth)
            assert [int(m) for m in moves_out[:n]] == codes
            for k in range(n):
                if results[k] != K.ONGOING or depth <= 1:
                    assert values[k] == (leaf[k] * (2.0 + 0.01 * depth) if results[k] != K.ONGOING else leaf[k])
                else:
                    own = -plain_negamax(net, position.play(Move.from_code(codes[k])), depth - 1)
                    assert own <= values[k] <= values[best], (position, depth, k)


#: A fresh process's first timed move with each search: how deep it went.
FIRST_TIMED_MOVE = """
import itertools
import json
from c4lab.agents import make_agent
from c4lab.rules import Position
out = {}
for spec in ("ntuple:time=0.3", "ntuple:search=alphabeta,time=0.3"):
    _, analysis = make_agent(spec).analyse(Position.parse("7x6:dd"))
    out[spec] = [analysis.iterations, analysis.note]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_a_cold_first_timed_move_searches_as_a_warm_one_the_compiler_is_not_thinking_time(tmp_path: Path) -> None:
    """On an empty numba cache the first timed move compiles its search
    before its clock starts: PUCT runs more than its first chunk of 500
    iterations, alpha-beta goes deeper than depth 1 (each stopped there
    when the compiler ate the whole 0.3 s)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", FIRST_TIMED_MOVE], env=env, capture_output=True, text=True,
                         check=True)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    puct_iterations, _ = report["ntuple:time=0.3"]
    assert puct_iterations > 500, report
    _, note = report["ntuple:search=alphabeta,time=0.3"]
    assert "depth 1 " not in note, report


@pytest.mark.slow
def test_masters_first_timed_move_with_a_network_compiles_its_valued_search_off_the_clock(tmp_path: Path) -> None:
    """UCT with a network's value at its leaves is a kernel of its own:
    compiled inside the move's time, the first move ran 256 iterations in
    5.4 s of a 0.3 s move (a fresh cache after ``hard``)."""
    net = tmp_path / "n.npz"
    Network.create(Position.parse("9x8").variant, tuples=6, length=4).save(net)
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run([sys.executable, "-m", "c4lab", "move", "--json", "9x8:ee", "--agent",
                          f"master:weights={net},time=0.3"], env=env, capture_output=True, text=True, check=True)
    analysis = json.loads(out.stdout.strip().splitlines()[-1])["analysis"]
    assert analysis["iterations"] > 2000 and analysis["seconds"] < 1.0, analysis


def test_one_puct_iteration_backs_up_the_networks_value_of_the_move_it_tries_first() -> None:
    net = trained("5x4", 500)
    position = Position.parse("5x4:cc")
    codes, values, _ = net.move_values(position)
    _, analysis = NTupleAgent(net, search="puct", iterations=1, look=0).analyse(position)
    tried = [stats for stats in analysis.moves if stats.visits]
    assert analysis.iterations == 1 and len(tried) == 1
    # First play: an unvisited move counts with its own network value, plus
    # the exploration term of its prior (a softmax of those values).
    prior = np.exp(np.array(values) - max(values))
    prior /= prior.sum()
    first = int(np.argmax(np.array(values) + prior))
    assert tried[0].move == Move.from_code(codes[first])
    assert tried[0].value == pytest.approx((values[first] + 1) / 2)


def test_a_new_puct_leaf_backs_up_its_value_mixed_with_the_best_reply_it_has_just_valued() -> None:
    net = trained("5x4", 500)
    position = Position.parse("5x4:cc")
    _, plain = NTupleAgent(net, search="puct", iterations=1, look=0).analyse(position)
    (tried,) = [stats for stats in plain.moves if stats.visits]
    own = 2 * tried.value - 1  # the network's value of the leaf, for the player who moved into it
    _, replies, results = net.move_values(position.play(tried.move))
    assert all(result == K.ONGOING for result in results)  # no reply ends the game: the leaf is not proven
    for look in (0.25, 0.5, 1.0):
        _, analysis = NTupleAgent(net, search="puct", iterations=1, look=look).analyse(position)
        (leaf,) = [stats for stats in analysis.moves if stats.visits]
        assert leaf.move == tried.move  # first play does not look ahead: the same move is tried
        assert 2 * leaf.value - 1 == pytest.approx((1 - look) * own - look * max(replies))


def test_puct_spends_exactly_its_iterations_and_proves_a_win_in_two() -> None:
    net = trained("5x4", 500)
    _, analysis = NTupleAgent(net, search="puct", iterations=400, seed=1).analyse(Position.parse("5x4:cc"))
    assert analysis.iterations == 400 and sum(stats.visits or 0 for stats in analysis.moves) == 400
    # A to move holds b1 and c1: d1 makes b1-c1-d1 open at both ends (a1 and
    # e1), a double threat.  The search proves the win and says so.
    move, analysis = NTupleAgent(net, search="puct", iterations=5000, seed=1).analyse(Position.parse("5x4:bbcc"))
    assert move.token == "d" and analysis.note == "a proven win" and analysis.value == 1.0


def test_a_callers_iteration_cap_bounds_puct_and_depth_bounds_a_timed_alpha_beta() -> None:
    """What an engine's ``go iterations N`` asks is what PUCT spends (at
    most its own ``iterations=``); ``depth=`` is the deepest a timed
    alpha-beta goes, as for minimax (the time alone deepened past it)."""
    from c4lab.agents.base import Budget

    net = trained("5x4", 500)
    start = Position.parse("5x4:cc")
    _, analysis = NTupleAgent(net, search="puct", seed=1).analyse(start, Budget(iterations=300))
    assert analysis.iterations == 300
    _, analysis = NTupleAgent(net, search="puct", iterations=200, seed=1).analyse(start, Budget(iterations=300))
    assert analysis.iterations == 200
    _, analysis = NTupleAgent(net, search="puct", seed=1, time=30.0).analyse(start, Budget(iterations=250))
    assert analysis.iterations == 250  # the cap ends it long before the time
    _, analysis = NTupleAgent(net, depth=2, time=5.0, search="alphabeta", seed=1).analyse(start)
    assert analysis.note is not None and analysis.note.startswith("alpha-beta to depth 2 ")
    _, analysis = NTupleAgent(net, depth=3, search="alphabeta", seed=1).analyse(start, Budget(time=5.0))
    assert analysis.note is not None and analysis.note.startswith("alpha-beta to depth 3 ")


@pytest.mark.parametrize("board", ["5x4:cc", "6x5/Xc2/Bb1:a"])
def test_both_searches_give_a_principal_variation_a_legal_line_from_the_position(board: str) -> None:
    """Review: PUCT and alpha-beta on the learnt value answered a line of
    one move (``"pv": ["d"]``) where UCT gives the line it expects; PUCT's
    line is the most visited one under its move, alpha-beta's the table's
    best moves along it, and each is legal from the position (a bonus
    move with its ban too)."""
    net = trained(board.partition(":")[0], 500)
    start = Position.parse(board)
    for agent in (NTupleAgent(net, search="puct", iterations=2000, seed=1),
                  NTupleAgent(net, depth=4, search="alphabeta", seed=1)):
        move, analysis = agent.analyse(start)
        assert analysis.pv[0] == move and 3 <= len(analysis.pv) <= 12, (agent, analysis.pv)
        start.play(*analysis.pv)  # a legal line (an illegal move raises)


def test_two_threads_share_one_puct_tree_lose_no_visit_and_prove_the_same_win() -> None:
    """Two threads on one tree (atomic updates, virtual loss): the root's
    visits are exactly the iterations asked for, every value sum is within
    its visits (a virtual loss left behind would push one out), and the
    proof of a double threat is found as by one thread."""
    net = trained("5x4", 500)
    root = Position.parse("5x4:cc")
    geo, st = root.kernel_arrays()
    tree = Tree(1 + 4001 * K.MAX_LEGAL)
    args = (PUCT_C, PUCT_TEMP, PUCT_LOOK, *tree.arrays(), *net.arrays())
    assert puct_run(geo, st, 1, *args, False) == 1  # the root expanded before the tree is shared
    done: list[int] = []
    helpers = [threading.Thread(target=lambda: done.append(puct_run(geo, st, 2000, *args, True))) for _ in range(2)]
    for helper in helpers:
        helper.start()
    for helper in helpers:
        helper.join()
    assert done == [2000, 2000] and tree.meta[M_ITER] == 4001
    base, n = tree.first[0], tree.count[0]
    assert tree.visits[0] == tree.visits[base:base + n].sum() == 4001
    used = tree.meta[M_USED]
    assert np.all(np.abs(tree.total[1:used]) <= tree.visits[1:used] + 1e-9)
    _, analysis = NTupleAgent(net, search="puct", iterations=400, seed=1, threads=2).analyse(root)
    assert analysis.iterations == 400 and sum(stats.visits or 0 for stats in analysis.moves) == 400
    assert analysis.note == "PUCT on the learnt value, 2 threads: the most visited move"
    move, analysis = NTupleAgent(net, search="puct", iterations=5000, seed=1, threads=2).analyse(
        Position.parse("5x4:bbcc"))
    assert move.token == "d" and analysis.note == "a proven win" and analysis.value == 1.0


def test_the_search_options_that_do_not_go_together_are_refused() -> None:
    with pytest.raises(SpecError, match="depth= is alpha-beta's; PUCT"):
        make_agent("ntuple:search=puct,depth=2")
    with pytest.raises(SpecError, match="iterations= is PUCT's"):
        make_agent("ntuple:search=alphabeta,iterations=100")
    with pytest.raises(SpecError, match="needs depth= or time="):
        make_agent("ntuple:search=alphabeta")
    with pytest.raises(SpecError, match=r"look= is PUCT's: give time= or iterations= with it \(ntuple:time=0.2,"
                                        r"look=0.5\), or use ntuple-puct"):
        make_agent("ntuple:depth=2,look=0.5")
    with pytest.raises(SpecError, match="between 0 and 1, not 2"):  # the range first, whatever else is wrong
        make_agent("ntuple:look=2")
    with pytest.raises(SpecError, match="search=greedy takes no depth=, time= or iterations="):
        make_agent("ntuple:search=greedy,time=0.2")
    with pytest.raises(SpecError, match=r"PUCT \(search=puct, as in ntuple-puct\) takes iterations= or time="):
        make_agent("ntuple-puct:depth=3")
    with pytest.raises(SpecError, match="between 0 and 1, not 1.5"):
        make_agent("ntuple:time=0.1,look=1.5")
    with pytest.raises(SpecError, match="threads= is PUCT's"):
        make_agent("ntuple:depth=2,threads=2")
    with pytest.raises(SpecError, match="at most 16, not 17"):
        make_agent("ntuple:time=0.1,threads=17")
    with pytest.raises(SpecError, match="threads"):
        make_agent("ntuple:time=0.1,threads=0")


# -- the file --------------------------------------------------------------------


def test_a_network_file_round_trips(tmp_path: Path) -> None:
    net = trained("5x4", 1000)
    path = tmp_path / "net.npz"
    net.save(path)
    back = Network.load(path)
    assert back.variant == net.variant and back.games == net.games == 1000
    assert np.array_equal(back.tuples, net.tuples) and np.array_equal(back.weights, net.weights)
    assert back.states == net.states and back.mirror == net.mirror
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["header.npy", "tuples.npy", "weights.npy"]


def test_weights_of_another_shape_are_refused_at_save_and_nothing_is_written(tmp_path: Path) -> None:
    """Review: ``small.weights = large.weights`` (the averaging recipe with
    two networks of other tuples) saved, and the file then failed to load as
    "a damaged file"; the save refuses it and writes nothing."""
    small = Network.create("5x4", tuples=3, seed=1)
    small.weights = Network.create("5x4", tuples=6, seed=2).weights
    with pytest.raises(NetworkError, match=r"cannot save .*net\.npz: the weights are \(2, \d+\), its tuples need"):
        small.save(tmp_path / "net.npz")
    assert list(tmp_path.iterdir()) == []


def test_missing_damaged_and_foreign_files_are_refused_with_what_and_where(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    trained("5x4", 1000).save(good)
    with pytest.raises(NetworkError, match="does not exist"):
        Network.load(tmp_path / "missing.npz")
    cut = tmp_path / "cut.npz"
    cut.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    with pytest.raises(NetworkError, match="cut.npz"):
        Network.load(cut)
    text = tmp_path / "text.npz"
    text.write_text("hello")
    with pytest.raises(NetworkError, match="not an .npz"):
        Network.load(text)
    net = Network.load(good)
    short = tmp_path / "short.npz"
    np.savez_compressed(short, header=np.array(json.dumps(net.header())), tuples=net.tuples,
                        weights=net.weights[:, :-1])
    with pytest.raises(NetworkError, match=f"short.npz: it has {net.weights.shape[1] - 1} weights a side, its "
                                           f"tuples need {net.weights.shape[1]}"):
        Network.load(short)
    agent = NTupleAgent(Network.load(good))
    with pytest.raises(NetworkError, match="trained for the board 5x4, not 7x6"):
        agent.choose(Position.parse("7x6"))
    with pytest.raises(SpecError):
        make_agent("ntuple:depth=-1")


# -- the command -----------------------------------------------------------------


def test_train_ntuple_writes_a_network_that_the_agent_plays_and_a_curve(tmp_path: Path) -> None:
    out = tmp_path / "n.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "4000", "--out", str(out),
                                       "--probes", "10", "--tuples", "20"])
    assert result.exit_code == 0, result.output
    first = Network.load(out)
    assert first.games == 4000
    # By default the step size falls to a tenth and exploration to 0 over the run (the shipped network's recipe).
    assert {k: first.options[k] for k in ("alpha", "alpha_final", "epsilon", "epsilon_final")} == {
        "alpha": 1.0, "alpha_final": 0.1, "epsilon": 0.1, "epsilon_final": 0.0}
    # No terminal, so no bar: a line for each point of the curve instead (a log file shows progress).
    assert result.stderr.count(" games, ") >= 1 and "vs random" in result.stderr
    for suffix in ("csv", "png", "html"):
        assert (tmp_path / f"n-curve.{suffix}").stat().st_size > 0
    lines = (tmp_path / "n-curve.csv").read_text().splitlines()
    assert lines[0].startswith("games,seconds,accuracy,probes,board,run,score vs")
    assert all(line.split(",")[4] == "4x4" for line in lines[1:])  # the network's board, on every point
    games = [int(line.split(",")[0]) for line in lines[1:]]
    assert games == sorted(set(games)) and games[-1] == 4000  # one row a point, the last one the final's
    moved = CliRunner().invoke(main, ["move", "4x4:bb", "--agent", f"ntuple:weights={out}"])
    assert moved.exit_code == 0 and moved.output.strip() in list("abcd")
    resumed = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "1000", "--probes", "0"])
    assert resumed.exit_code == 0, resumed.output
    again = Network.load(out)
    assert again.games == 5000
    # The resumed run goes on with the same curve: the first run's points kept, its own after them.
    rows = [line.split(",") for line in (tmp_path / "n-curve.csv").read_text().splitlines()[1:]]
    assert [int(r[0]) for r in rows[: len(games)]] == games and int(rows[-1][0]) == 5000
    assert [float(r[1]) for r in rows] == sorted(float(r[1]) for r in rows)  # its seconds go on too
    assert len(rows) > len(games)
    # Resumed with no step size or exploration given, it goes on where it stopped, not back at alpha 1.
    assert {k: again.options[k] for k in ("alpha", "alpha_final", "epsilon", "epsilon_final")} == {
        "alpha": 0.1, "alpha_final": 0.1, "epsilon": 0.0, "epsilon_final": 0.0}


@pytest.mark.parametrize("workers", ["1", "2"])
def test_a_curve_given_in_games_has_a_point_every_twentieth_of_the_games(tmp_path: Path, workers: str) -> None:
    """The training pauses at each point of a run given in games, so the
    points are at 0, 1/20, 2/20... of the games however long a point takes
    (on 4x4 a point takes longer than the whole run's training: the curve
    had its first and last points only); a twentieth is rounded up (at most
    twenty points after the first)."""
    for games, expected in (("4000", list(range(0, 4001, 200))), ("30", list(range(0, 31, 2)))):
        out = tmp_path / f"g{games}.npz"
        result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", games, "--out", str(out),
                                           "--probes", "10", "--tuples", "20", "--workers", workers])
        assert result.exit_code == 0, result.output
        with (tmp_path / f"g{games}-curve.csv").open() as f:
            rows = list(csv.DictReader(f))
        assert [int(r["games"]) for r in rows] == expected
        assert all(r["accuracy"] and r["score vs random"] for r in rows)


def test_the_curve_page_lists_the_opponents_weakest_first_and_the_games_axis_speaks_one_style(tmp_path: Path) -> None:
    """Review: the page's columns came hard, normal, random (by name), and
    the plot's axis said "800,000" beside "1 M"."""
    from c4lab.learning.ntuple_curve import CurvePoint, _games_tick, write_curve

    points = [CurvePoint(0, 0.0, 0.5, {"random": 0.5, "normal": 0.25}),
              CurvePoint(2000, 3.5, 0.75, {"random": 1.0, "normal": 0.5, "hard": 0.25})]
    write_curve(points, tmp_path / "c", "a curve")
    page = (tmp_path / "c.html").read_text()
    assert "<th>accuracy</th><th>random</th><th>normal</th><th>hard</th>" in page
    assert [_games_tick(x) for x in (0, 500, 800_000, 1_000_000, 1_500_000)] == ["0", "500", "800 k", "1 M", "1.5 M"]


def test_the_curve_page_says_how_many_probes_and_games_its_figures_are_of(tmp_path: Path) -> None:
    """Review: the page said neither how many probe positions the accuracy
    counts nor how many games each score is of (10 against normal: one
    game is 10 points), and explained an accuracy a run without probes
    does not have."""
    from c4lab.learning.ntuple_curve import CurvePoint, write_curve
    from c4lab.learning.train_ntuple import GAMES_NOTE

    points = [CurvePoint(0, 0.0, 0.5, {"random": 0.5}, probes=400), CurvePoint(2000, 3.5, 0.75, {"random": 1.0},
                                                                               probes=400)]
    write_curve(points, tmp_path / "c", "a curve", games_note=GAMES_NOTE)
    page = " ".join((tmp_path / "c.html").read_text().split())
    assert "Accuracy: the share of the 400 probe positions" in page and "one position is 0.25 points of it" in page
    assert "at each point 20 games against random, at every fourth also 10 against normal" in page
    assert "40 against random, 20 against normal, 20 against hard." in page
    write_curve([CurvePoint(0, 0.0, None, {"random": 0.5})], tmp_path / "d", "no probes", games_note=GAMES_NOTE)
    assert "Accuracy" not in (tmp_path / "d.html").read_text().split("<table>")[0]


def test_a_curve_reads_back_what_was_written_and_names_the_line_where_a_file_is_not_one(tmp_path: Path) -> None:
    from c4lab.learning.ntuple_curve import CurvePoint, read_curve, write_csv

    points = [CurvePoint(0, 0.0, 0.5, {"random": 0.5}), CurvePoint(2000, 3.5, None, {"random": 1.0, "hard": 0.25})]
    path = write_csv(points, tmp_path / "c")
    assert path == tmp_path / "c.csv" and not list(tmp_path.glob("*.partial"))
    assert write_csv(points, tmp_path / "c.csv") == path  # --curve c.csv: c.csv, c.png, c.html (not c.csv.csv)
    assert read_curve(path) == points
    for text, where in (("games,seconds\n", ":1: not the header"),
                        ("games,seconds,accuracy\n10,1,0.5\n5,2,0.5\n", ":3: games 5 is less than the line before's 10"),
                        ("games,seconds,accuracy\n10,1\n", ":2: 2 fields where the header has 3"),
                        ("games,seconds,accuracy\n10,nan,0.5\n", ":2: seconds is not a number"),
                        ("games,seconds,accuracy,score vs random,score vs random\n10,1,0.5,0.25,1\n",
                         ":1: the column 'score vs random' is there twice"),
                        # an opponent with no name: its scores were read, carried on and drawn as "score vs "
                        ("games,seconds,accuracy,score vs random,score vs \n10,1,0.5,0.25,1\n",
                         ":1: column 5, 'score vs ', names no opponent"),
                        ("games,seconds,accuracy,probes,score vs  \n10,1,0.5,200,1\n",
                         ":1: column 5, 'score vs  ', names no opponent"),
                        # cut in the middle of its last number: 0.9 of 0.9531 was read as a point
                        ("games,seconds,accuracy\r\n10,1,0.5\r\n20,2,0.9", ":3: the file ends in the middle of a line")):
        path.write_text(text)
        with pytest.raises(ValueError, match=where):
            read_curve(path)


def test_a_curve_not_text_or_not_a_file_is_named_once_with_its_line_or_its_reason(tmp_path: Path) -> None:
    """A byte that is not UTF-8 was named by its offset in the chunk the
    reader had decoded ("can't decode byte 0x82 in position 2"), and a
    folder in the file's place named it twice, with Python's errno."""
    from c4lab.learning.ntuple_curve import read_curve

    path = tmp_path / "c.csv"
    path.write_bytes(b"games,seconds,accuracy\r\n10,1,0.5\r\n20,2,\x82\r\n")
    with pytest.raises(ValueError) as caught:
        read_curve(path)
    assert str(caught.value) == f"{path}:3: not UTF-8 text (byte 0x82): not a learning curve of `c4lab train ntuple`"
    folder = tmp_path / "folder.csv"
    folder.mkdir()
    with pytest.raises(ValueError) as caught:
        read_curve(folder)
    assert str(caught.value) == f"cannot read the learning curve {folder}: Is a directory"


@pytest.mark.parametrize(("row", "said"), [
    ("1000,2.0,2.5,200,0.5", ":3: accuracy must be a share from 0 to 1, not '2.5'"),
    ("1000,2.0,-3,200,0.5", ":3: accuracy must be a share from 0 to 1, not '-3'"),
    ("1000,2.0,0.5,200,97.5", ":3: score vs random must be a share from 0 to 1, not '97.5'"),
    ("1000,2.0,0.5,200,nan", ":3: score vs random is not a number: 'nan'"),
    ("-1000,2.0,0.5,200,0.5", ":3: games must be a whole number, 0 or more, not '-1000'"),
    ("1000.5,2.0,0.5,200,0.5", ":3: games must be a whole number, 0 or more, not '1000.5'"),
    ("1000,-2.0,0.5,200,0.5", ":3: seconds must be 0 or more, not '-2.0'"),
    ("1000,2.0,0.5,-200,0.5", ":3: probes must be a whole number, 0 or more, not '-200'"),
])
def test_a_curve_value_out_of_its_range_names_the_file_line_and_column(tmp_path: Path, row: str, said: str) -> None:
    """A curve's CSV read back (by a resumed run) took any finite number:
    an accuracy of 250 % or -3, a negative count or time went on into the
    new curve, its plot and its page.  Each is one line naming the file,
    the line and the column, and the resumed run writes nothing."""
    from c4lab.learning.ntuple_curve import check_curve

    path = tmp_path / "c.csv"
    text = f"games,seconds,accuracy,probes,score vs random\n0,0.0,0.5,200,0.5\n{row}\n"
    path.write_text(text)
    with pytest.raises(ValueError, match=rf"^{re.escape(str(path) + said)}.*; mend the file, or give another "
                       r"--curve \(a curve that starts at this network\)$"):  # what to do next, as other refusals say
        check_curve(tmp_path / "c", 2000, 200)
    assert path.read_text() == text and not (tmp_path / "c.png").exists()


def test_a_resumed_curve_keeps_one_measure_and_its_columns(tmp_path: Path) -> None:
    """A curve says how many probe positions its accuracy was measured on:
    a run resumed with another ``--probes`` is refused rather than mixing
    two measures in one line; the score columns are the same at a
    checkpoint as at the end; a curve written before the column is read
    as it was."""
    from c4lab.learning.ntuple_curve import CurvePoint, check_curve, read_curve, write_csv

    points = [CurvePoint(0, 0.0, 0.5, {"random": 0.5}, 200), CurvePoint(2000, 3.5, 0.75, {"random": 1.0}, 200)]
    path = write_csv(points, tmp_path / "c", ("random", "normal", "hard"))
    # the levels weakest first, as the page's columns (review: the CSV had them by name, hard first)
    assert path.read_text().splitlines()[0] == ("games,seconds,accuracy,probes,board,run,score vs random,"
                                                "score vs normal,score vs hard")
    assert read_curve(path) == points
    assert check_curve(tmp_path / "c", 2000, 200) == points
    with pytest.raises(ValueError, match=r"c\.csv measured the accuracy on 200 probe positions, this run on 10: "
                                         r"give --probes 200 to go on with the same measure, or another --curve"):
        check_curve(tmp_path / "c", 2000, 10)
    path.write_text("games,seconds,accuracy,score vs random\n10,1,0.5,0.25\n")  # an older curve
    assert read_curve(path) == [CurvePoint(10, 1.0, 0.5, {"random": 0.25})]
    assert check_curve(tmp_path / "c", 10, 10) == read_curve(path)  # nothing to compare: it goes on
    write_csv(points, tmp_path / "c")
    assert check_curve(tmp_path / "c", 2000, 0) == points  # --probes 0: no accuracy measured, nothing mixed


def test_a_network_resumed_onto_the_curve_of_another_boards_network_is_refused_and_the_curve_kept(
        tmp_path: Path) -> None:
    """Two runs of ``--games 2000`` on 4x4 and 5x4: resumed with
    ``--curve`` naming the other's curve (a slip of the keyboard), the 4x4
    network went on with the 5x4 curve, whose last point was not past its
    games, and its points were added to that curve and drawn over its PNG
    and page.  A curve names its board on every point; a resumed run
    refuses another board's, before any game, and writes nothing."""
    from c4lab.learning.ntuple_curve import CurvePoint, check_curve, read_curve, write_csv

    for board in ("4x4", "5x4"):
        made = CliRunner().invoke(main, ["train", "ntuple", "--board", board, "--games", "2000", "--probes", "0",
                                         "--tuples", "4", "--out", str(tmp_path / f"{board}.npz")])
        assert made.exit_code == 0, made.output
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(tmp_path / "4x4.npz"), "--games", "100",
                                       "--curve", str(tmp_path / "5x4-curve")])
    assert result.exit_code == 2
    assert result.output == (f"Error: {tmp_path / '5x4-curve.csv'} is the curve of a network for the board 5x4, "
                             "not 4x4: choose another --curve\n")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert read_curve(tmp_path / "5x4-curve.csv")[-1].board == "5x4"
    # A curve written before the column names no board: it goes on as before.
    write_csv([CurvePoint(10, 1.0, 0.5, {"random": 0.25}, 0)], tmp_path / "old")
    assert check_curve(tmp_path / "old", 10, 0, "4x4") == [CurvePoint(10, 1.0, 0.5, {"random": 0.25}, 0)]


def test_a_network_resumed_onto_the_curve_of_another_network_of_its_board_is_refused_and_the_curve_kept(
        tmp_path: Path) -> None:
    """Review: two runs on 5x4, the second shorter: the first network,
    resumed with ``--curve`` naming the second's curve (whose last point
    was not past its games), went on with it and drew its points over the
    other run's.  A network is named when it is made (its header's ``run``,
    kept by every run that resumes it) and a curve names it on every point:
    another network's curve is refused, before any game, nothing written;
    a curve of the network's own run goes on."""
    from c4lab.learning.ntuple_curve import CurvePoint, check_curve, read_curve, write_csv

    for name, games in (("long", "3000"), ("short", "1000")):
        made = CliRunner().invoke(main, ["train", "ntuple", "--board", "5x4", "--games", games, "--probes", "0",
                                         "--tuples", "4", "--out", str(tmp_path / f"{name}.npz")])
        assert made.exit_code == 0, made.output
    long_run, short_run = (Network.load(tmp_path / f"{n}.npz").options["run"] for n in ("long", "short"))
    assert long_run != short_run and read_curve(tmp_path / "short-curve.csv")[-1].run == short_run
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(tmp_path / "long.npz"), "--games", "100",
                                       "--probes", "0", "--curve", str(tmp_path / "short-curve")])
    assert result.exit_code == 2
    assert result.output == (f"Error: {tmp_path / 'short-curve.csv'} is the curve of another network (run "
                             f"{short_run}; this one's is run {long_run}): choose another --curve\n")
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before
    again = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(tmp_path / "long.npz"), "--games", "100",
                                      "--probes", "0"])
    assert again.exit_code == 0, again.output
    assert Network.load(tmp_path / "long.npz").options["run"] == long_run
    assert {p.run for p in read_curve(tmp_path / "long-curve.csv")} == {long_run}
    # A curve written before the column names no run: it goes on as before; a damaged name is refused.
    write_csv([CurvePoint(10, 1.0, 0.5, {"random": 0.25}, 0, "5x4")], tmp_path / "old")
    assert check_curve(tmp_path / "old", 10, 0, "5x4", long_run) == [CurvePoint(10, 1.0, 0.5, {"random": 0.25}, 0, "5x4")]
    (tmp_path / "bad-curve.csv").write_text("games,seconds,accuracy,probes,board,run\n10,1,0.5,0,5x4,zz\n")
    with pytest.raises(ValueError, match=r"bad-curve\.csv:2: run must be a run's name"):
        read_curve(tmp_path / "bad-curve.csv")


def test_the_step_size_falls_geometrically_and_exploration_linearly_over_the_run() -> None:
    net = Network.create(Position.parse("4x4").variant, tuples=4, length=4)
    trainer = N.Trainer(net, N.Options(alpha=1.0, alpha_final=0.01, epsilon=0.1, epsilon_final=0.0))
    assert [round(trainer.alpha_at(p), 6) for p in (0, 0.5, 1, 2)] == [1.0, 0.1, 0.01, 0.01]
    assert [round(trainer.epsilon_at(p), 6) for p in (0, 0.5, 1, -1)] == [0.1, 0.05, 0.0, 0.1]
    constant = N.Trainer(net, N.Options(alpha=1.0, alpha_final=1.0, epsilon=0.2, epsilon_final=0.2))
    assert constant.epsilon_at(0.7) == constant.alpha_at(0.7) * 0.2 == 0.2
    recipe = N.Trainer(net, N.Options(alpha=0.5))  # by default: to a tenth of the step, exploration to 0
    assert (recipe.alpha_at(1), recipe.epsilon_at(1)) == (0.05, 0.0)


def test_the_mean_of_the_weights_takes_one_snapshot_a_hundredth_of_the_run_from_its_start() -> None:
    weights = np.zeros((2, 3), dtype=np.float32)
    mean = N.Snapshots(weights, start=0.5)
    for progress, value in ((0.2, 9.0), (0.5, 1.0), (0.505, 9.0), (0.513, 2.0), (0.518, 9.0), (0.6, 3.0)):
        weights[...] = value
        mean.take(progress)  # 0.5, 0.513 (past 0.51; the next at 0.523) and 0.6 are taken
    assert mean.count == 3
    weights[...] = 6.0
    mean.settle()
    assert np.allclose(weights, (1 + 2 + 3 + 6) / 4)


def test_a_run_that_averages_keeps_the_mean_of_its_last_share_not_its_last_weights(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = Network.create(Position.parse("4x4").variant, seed=1)
    taken: list[float] = []  # the progress at each snapshot
    settled: list[tuple[np.ndarray, np.ndarray, int]] = []  # the sum, the last weights, the count

    class Recording(N.Snapshots):
        def take(self, progress: float) -> None:
            before = self.count
            super().take(progress)
            if self.count > before:
                taken.append(progress)

        def settle(self) -> None:  # the workers have stopped: the weights no longer move
            settled.append((self.sum.copy(), self.weights.copy(), self.count))
            super().settle()

    monkeypatch.setattr(N, "Snapshots", Recording)
    N.Trainer(net, N.Options(average=0.5), seed=1).run(games=60_000, tick=0.01)
    assert len(taken) >= 2 and taken[0] >= 0.5 and all(b - a >= 0.01 for a, b in itertools.pairwise(taken))
    (total, last, count), = settled
    assert count == len(taken)
    assert np.allclose(net.weights, (total + last) / (count + 1)) and not np.allclose(net.weights, last)
    assert net.options["average"] == 0.5  # the header says what the run kept


def test_a_grown_network_plays_as_before_with_room_for_more(tmp_path: Path) -> None:
    net = trained("5x4", 2000)
    grown = net.grown(6, seed=3)
    assert grown.tuples.shape[0] == net.tuples.shape[0] + 6 and np.array_equal(grown.tuples[:-6], net.tuples)
    old = net.weights.shape[1]  # the new tuples' tables come after the old ones
    assert not grown.weights[:, old:].any() and grown.games == net.games
    for text in ("5x4", "5x4:bc", "5x4:ccbd"):
        assert grown.move_values(Position.parse(text)) == net.move_values(Position.parse(text))
    path = tmp_path / "n.npz"
    net.save(path)
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(path), "--add-tuples", "6", "--seed", "3",
                                       "--games", "500", "--probes", "0"])
    assert result.exit_code == 0, result.output
    back = Network.load(path)
    assert np.array_equal(back.tuples, grown.tuples) and back.games == net.games + 500
    assert back.weights[:, old:].any()  # the new tuples learnt
    too_many = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(path), "--add-tuples", "995",
                                         "--games", "500", "--probes", "0"])
    assert too_many.exit_code == 2 and "more than 1000" in too_many.output
    refused = CliRunner().invoke(main, ["train", "ntuple", "--board", "5x4", "--add-tuples", "6",
                                        "--out", str(tmp_path / "new.npz")])
    assert refused.exit_code == 2 and "--add-tuples grows a trained network" in refused.output
    assert not (tmp_path / "new.npz").exists()


def test_a_resumed_run_goes_on_where_the_network_stopped_unless_told_otherwise() -> None:
    from c4lab.learning.train_ntuple import schedule

    last = {"alpha": 1.0, "alpha_final": 0.1, "epsilon": 0.1, "epsilon_final": 0.0}
    assert schedule(last, None, None, None, None) == (0.1, 0.1, 0.0, 0.0)
    assert schedule(last, 0.3, None, None, 0.05) == (0.3, None, 0.1, 0.05)  # a pair given: as for a new run
    assert schedule({"alpha": 2.0, "alpha_final": None, "epsilon": 0.2, "epsilon_final": None},
                    None, None, None, None) == (2.0, 2.0, 0.2, 0.2)  # a constant run: the same constants
    assert schedule({}, None, None, None, None) == (1.0, None, 0.1, 0.0)  # a new network: the defaults
    # Stopped (Ctrl-C) at 36 % of its schedule: the rest of it, from there to the same ends.
    alpha, alpha_final, epsilon, epsilon_final = schedule({**last, "done": 0.36}, None, None, None, None)
    assert alpha == pytest.approx(0.1 ** 0.36) and alpha_final == 0.1
    assert epsilon == pytest.approx(0.064) and epsilon_final == 0.0
    assert schedule({**last, "done": 1.0}, None, None, None, None) == (0.1, 0.1, 0.0, 0.0)


def test_a_run_stopped_by_ctrl_c_is_resumed_with_the_rest_of_its_schedule(tmp_path: Path) -> None:
    """The header says how much of the schedule a run did (``done``); a
    run that went to its end says 1."""
    out = tmp_path / "n.npz"
    status, _, stderr = ctrl_c_once_ready(
        [*TRAIN_5X4, "--out", str(out)],
        TRAINING, "default", after=1.0)
    assert status == 130, stderr
    done = Network.load(out).options["done"]
    assert 0 < done < 0.1
    resumed = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "2000", "--probes", "0"])
    assert resumed.exit_code == 0, resumed.output
    options = Network.load(out).options
    assert options["alpha"] == pytest.approx(0.1 ** done) and options["alpha_final"] == pytest.approx(0.1)
    assert options["epsilon"] == pytest.approx(0.1 * (1 - done)) and options["epsilon_final"] == 0.0
    assert options["done"] == 1.0


def test_the_shipped_network_is_never_trained_over(tmp_path: Path) -> None:
    from c4lab.agents.ntuple import shipped_path

    shipped = shipped_path("7x6")
    assert shipped is not None
    before = shipped.stat().st_mtime_ns
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(shipped), "--games", "100", "--probes", "0"])
    assert result.exit_code == 2
    assert result.output == (f"Error: {shipped} is a network shipped with c4lab: it is never overwritten (every "
                             "ntuple agent plays it); give --out FILE for the network trained on\n")
    assert shipped.stat().st_mtime_ns == before and not list(shipped.parent.glob("*-curve*"))


def test_the_commands_defaults_are_the_learners() -> None:
    """``c4lab train ntuple`` shows the defaults of ``Options``, not its own."""
    import click

    command = main.commands["train"].commands["ntuple"]  # type: ignore[attr-defined]
    ctx = click.Context(command)
    defaults = {p.name: p.get_default(ctx) for p in command.params}
    import dataclasses

    options = {f.name: f.default for f in dataclasses.fields(N.Options)}
    for name in ("alpha", "alpha_final", "epsilon", "epsilon_final", "opening", "lam", "average"):
        assert defaults[name] == options[name], name


def test_a_setting_out_of_range_names_the_option_that_gave_it() -> None:
    """``Options`` checks each learning setting's range (their one home);
    the command turns the setting's name into its own option's name, so
    that ``--lambda 1`` is not answered about a field called ``lam``."""
    from c4lab.learning.train_ntuple import OPTION_OF

    command = main.commands["train"].commands["ntuple"]  # type: ignore[attr-defined]
    flags = {flag for p in command.params for flag in p.opts}
    assert set(OPTION_OF.values()) <= flags
    import dataclasses

    assert set(OPTION_OF) <= {f.name for f in dataclasses.fields(N.Options)}


def test_the_board_is_named_as_everywhere_classic_included(tmp_path: Path) -> None:
    """Review: ``--board classic`` was refused ("invalid position"), where
    ``arena`` and ``play`` take it for the 7x6 board."""
    out = tmp_path / "n.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "classic", "--games", "200", "--probes", "0",
                                       "--tuples", "5", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert Network.load(out).variant == Variant.classic()


@pytest.mark.parametrize("args, message", [
    (["--minutes", "-1"], "Error: Invalid value for '--minutes': the minutes must be a positive, finite number"),
    (["--minutes", "inf"], "Invalid value for '--minutes': the minutes must be a positive, finite number, not inf"),
    (["--workers", "0"], "Error: Invalid value for '--workers': the workers must be from 1 to 1024"),
    (["--workers", "100000"], ("Invalid value for '--workers': the workers must be from 1 to 1024 (one per core is "
                              "best), not 100000")),
    (["--epsilon-final", "1.5"], "Invalid value for '--epsilon-final': the final epsilon must be in [0, 1], not 1.5"),
    (["--lambda", "1"], "Invalid value for '--lambda': lambda must be in [0, 1), not 1.0"),
    (["--average", "1"], "Invalid value for '--average': the share of the run to average must be in [0, 1), not 1.0"),
    (["--alpha", "-1"], "Invalid value for '--alpha': alpha must be in (0, 100], not -1.0"),
    (["--alpha-final", "0"], "Invalid value for '--alpha-final': the final alpha must be in (0, 100], not 0.0"),
    (["--epsilon", "2"], "Invalid value for '--epsilon': epsilon must be in [0, 1], not 2.0"),
    (["--opening", "65"], "Invalid value for '--opening': the random opening must be 0 to 64 moves, not 65"),
    (["--games", "0"], "Error: Invalid value for '--games': the games must be at least 1, not 0"),
    (["--board", "7x6:d"], "Error: Invalid value for '--board': '7x6:d' is a position with moves: give a board"),
    (["--board", "3x3"], ("Error: Invalid value for '--board': invalid position '3x3': at character 0: size 3x3 "
                         "out of range")),
    (["--resume", "{good}", "--board", "5x4/Xz9"], "Error: Invalid value for '--board': invalid position '5x4/Xz9'"),
    (["--resume", "{missing}"], "does not exist"),
    (["--resume", "{damaged}"], "damaged.npz"),
    (["--resume", "{good}", "--board", "7x6"], "is a network for the board 5x4, not 7x6"),
    (["--out", "{good}"], "exists: continue it with --resume"),
    (["--out", "{tmp}/old-curve.csv"], "old-curve.csv exists and is not a network file (.npz): choose another --out"),
    (["--resume", "{good}", "--tuples", "100"], "--tuples shapes a new network; the one in"),
    (["--resume", "{good}", "--length", "6"], "--length shapes a new network"),
    (["--ray-address", "127.0.0.1:1"], "--ray-address needs --executor ray"),
    (["--resume", "{good}", "--bonus"], "--bonus draws the bonus cell of a new network; the one in"),
    (["--curve", "{curve}"], "old-curve.csv exists: choose another --curve (or --resume the network it belongs to)"),
    (["--resume", "{good}", "--curve", "{curve}"], "old-curve.csv:1: not the header of a learning curve"),
    (["--resume", "{good}", "--curve", "{far}"], "is the curve of another run (its last point is at 9,000,000 games"),
    (["--executor", "ray", "--ray-address", "127.0.0.1:1"], "no Ray cluster answers there"),
    (["--executor", "ray", "--ray-address", ""], "--ray-address': an empty address"),  # "$RAY" unset
    (["--out", "{tmp}/run.png", "--curve", "{tmp}/run"], "run.png: a network file's name ends in .npz"),  # not the plot
    (["--out", "{tmp}/net.txt"], ("net.txt: a network file's name ends in .npz (it is a NumPy archive, read back by "
                                  "--resume and weights=FILE): give --out ")),
    (["--board", "random"], "'random' draws a new board for each game, and a learner learns one board"),
    (["--probes", "10001"], "10001 is not in the range 0<=x<=10000"),  # each labelled by the solver first
])
def test_bad_options_and_files_are_one_line_exit_2_and_nothing_is_overwritten(
    tmp_path: Path, args: list[str], message: str
) -> None:
    good = tmp_path / "good.npz"
    trained("5x4", 1000).save(good)
    damaged = tmp_path / "damaged.npz"
    damaged.write_bytes(good.read_bytes()[:300])
    (tmp_path / "old-curve.png").write_bytes(b"an earlier run's plot")  # a new run's default curve is new-curve
    (tmp_path / "old-curve.csv").write_text("an earlier run's notes\n")
    (tmp_path / "far-curve.csv").write_text("games,seconds,accuracy,score vs random\n9000000,60.0,0.9,1.0\n")
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    files = {"missing": tmp_path / "missing.npz", "damaged": damaged, "good": good,
             "curve": tmp_path / "old-curve", "far": tmp_path / "far-curve", "tmp": tmp_path}
    args = [a.format(**files) for a in args]
    out = ["--out", str(tmp_path / "new.npz")] if "--out" not in args else []
    result = CliRunner().invoke(main, ["train", "ntuple", "--probes", "0", "--games", "10", *out, *args])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.output
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written, nothing new


@pytest.mark.parametrize("args", [["--resume", "net.npz"], ["--board", "4x4", "--tuples", "6"]])
def test_a_network_whose_default_file_is_in_a_folder_nobody_may_write_is_refused_before_training(
    tmp_path: Path, args: list[str]
) -> None:
    """With no --out the network goes back to --resume's file, or to
    ntuple-BOARD.npz here: in a folder the user cannot write, that is one
    line and status 2 before any game, as a read-only --out is, not a whole
    run that ends with 'what this run learnt is lost' (status 1)."""
    folder = tmp_path / "shared"
    folder.mkdir()
    trained("4x4", 500).save(folder / "net.npz")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    folder.chmod(0o555)
    try:
        result = subprocess.run([*as_a_user(), sys.executable, "-m", "c4lab", "train", "ntuple", *args, "--games",
                                 "100", "--probes", "0"], cwd=folder, capture_output=True, text=True, timeout=120,
                                 check=False)
        after = {p.name: p.read_bytes() for p in folder.iterdir()}
    finally:
        folder.chmod(0o755)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "the network cannot be written to " in lines[0], result.stderr
    assert "cannot write in the folder" in lines[0] and "(give --out FILE)" in lines[0]
    assert after == before


def test_a_network_for_another_board_is_refused_before_any_game_wherever_a_game_starts(tmp_path: Path) -> None:
    """The arena (on every board its games are drawn on, which follow from
    its seed), the terminal game and ``c4lab play`` refuse it in one line
    before a game, not by a forfeit at its first move."""
    from c4lab.arena.schedule import ArenaConfig, ArenaError
    from c4lab.ui.terminal import GameSettings, TerminalGame
    from testkit import Script

    path = tmp_path / "n.npz"
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(path)
    spec = f"ntuple:weights={path}"
    with pytest.raises(ArenaError, match=r"cannot play on 7x6, a board of this run: the network in .*n\.npz was "
                                         r"trained for the board 5x4, not 7x6"):
        ArenaConfig(specs=(spec, "random"), games=2, board="7x6").check_agents()
    ArenaConfig(specs=(spec, "random"), games=2, board="5x4").check_agents()
    with pytest.raises(ArenaError, match=r"cannot play on 5x4/B.., a board of this run"):
        ArenaConfig(specs=(spec, "random"), games=2, board="5x4", bonus=True).check_agents()
    arena = CliRunner().invoke(main, ["arena", spec, "random", "--games", "2", "--board", "7x6",
                                      "--out", str(tmp_path / "a.jsonl")])
    assert arena.exit_code == 2 and "trained for the board 5x4, not 7x6" in arena.output
    assert not (tmp_path / "a.jsonl").exists()
    keyboard = Script("d")
    with pytest.raises(ValueError, match="trained for the board 5x4, not 7x6"):
        TerminalGame(GameSettings(board="7x6", players=("human", spec)), read=keyboard).run()
    assert keyboard.prompts == []  # refused before the person was asked anything
    play = CliRunner().invoke(main, ["play", "--no-browser", "--board", "7x6", "--player2", spec])
    assert play.exit_code == 2 and "--player2" in play.output and "not 7x6" in play.output
    assert len(play.output.strip().splitlines()) == 1


def test_a_network_file_is_named_when_master_refuses_its_board_and_a_home_path_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``master:weights=FILE`` on another board names FILE, as ``ntuple``
    does; ``weights=~/net.npz`` is read from the home folder, as a shell
    would have expanded it."""
    monkeypatch.setenv("HOME", str(tmp_path))
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(tmp_path / "net.npz")
    master = make_agent("master:weights=~/net.npz")
    with pytest.raises(ValueError, match=r"the network in ~/net\.npz was trained for the board 5x4, not 7x6"):
        master.check_board(Variant.classic())
    assert make_agent("ntuple:weights=~/net.npz").choose(Position.parse("5x4:bb")).token in "abcde"


def test_the_arena_says_when_the_shipped_network_plays_heuristics_moves_on_another_board(tmp_path: Path) -> None:
    """``ntuple`` without ``weights=`` falls back to ``heuristic`` off the
    classic board: the arena says so before its games, so that a ranking
    of "ntuple" is never silently one of heuristic."""
    from c4lab.arena.schedule import ArenaConfig

    assert ArenaConfig(specs=("ntuple", "random"), games=2, board="7x6").check_agents() == []
    assert ArenaConfig(specs=("ntuple", "random"), games=2, board="6x5/Xc2").check_agents() == [
        "ntuple has nothing learnt for any board of this run: it plays heuristic's moves there"]
    arena = CliRunner().invoke(main, ["arena", "ntuple-puct", "random", "--games", "2", "--board", "6x5/Xc2",
                                      "--jobs", "1", "--out", str(tmp_path / "a.jsonl")])
    assert arena.exit_code == 0, arena.output
    assert arena.output.startswith("note: ntuple-puct has nothing learnt for any board of this run: it plays "
                                   "heuristic's moves there\n")
    # Review: only that line said it; the results file, the tables, the page and the JSON ranked "ntuple-puct"
    # as though it had played (heuristic against itself, 1-1).  They all say it now.
    said = "ntuple-puct has nothing learnt for any board of this run: it plays heuristic's moves there"
    assert f"Note: {said}." in arena.output.split("Ranking", 1)[1]
    report = CliRunner().invoke(main, ["report", str(tmp_path / "a.jsonl"), "--json"])
    assert report.exit_code == 0, report.output
    assert json.loads(report.output.splitlines()[-1])["stand_ins"] == [said]
    assert f"Note: {html.escape(said)}." in (tmp_path / "a-report" / "report.html").read_text(encoding="utf-8")
    text = CliRunner().invoke(main, ["report", str(tmp_path / "a.jsonl")])
    assert f"Note: {said}." in text.output


def test_a_room_may_not_open_a_network_file_of_the_server() -> None:
    from c4lab.server.limits import AgentLimits, LimitError

    for spec in ("ntuple:weights=/etc/passwd", "master:weights=/etc/passwd"):
        with pytest.raises(LimitError, match="opens a file"):
            AgentLimits().make(spec)


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_saves_the_network_and_the_curve_then_exits(tmp_path: Path, inherited: str) -> None:
    """Ctrl-C (SIGINT) saves and exits with 130, also where the run
    started with SIGINT ignored (Python then installs no handler of its
    own: a run started in the background of a script could not be stopped
    and saved that way)."""
    out = tmp_path / "n.npz"
    status, _, stderr = ctrl_c_once_ready(
        [*TRAIN_5X4, "--out", str(out)],
        TRAINING, inherited, after=1.0)  # some tens of thousands of games
    assert status == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    assert Network.load(out).games > 0
    # The columns a checkpoint writes, 'score vs hard' too though only a run's end measures it.
    header = (tmp_path / "n-curve.csv").read_text().splitlines()[0]
    assert header == "games,seconds,accuracy,probes,board,run,score vs random,score vs normal,score vs hard"


@pytest.mark.parametrize("inherited", ["default", "ignored"])
@pytest.mark.parametrize("after", [0.1, 0.3, 0.6, 1.0])
def test_ctrl_c_from_the_first_moments_of_a_run_ends_it_with_one_line(tmp_path: Path, inherited: str,
                                                                       after: float) -> None:
    """Review: a press while the command loads (about a second: click,
    numpy, numba) was lost where the run started with SIGINT ignored (a
    script's background job): it trained on to its end.  Pressed while
    click read the command line, it said "Aborted!", status 1.  At any
    moment now: status 130, one "interrupted" line, no blank line before it
    in a pipe, no traceback."""
    status, _, stderr = ctrl_c_once_ready([*TRAIN_5X4, "--out", str(tmp_path / "n.npz")], "main starts",
                                          inherited, after=after)
    assert status == 130, stderr
    assert "Traceback" not in stderr and "Aborted" not in stderr, stderr
    lines = stderr.splitlines()
    said = [line for line in lines if "interrupted" in line]
    assert said and "" not in lines[lines.index(said[0]) - 1:lines.index(said[0])], stderr


def test_a_run_stopped_between_two_points_of_its_curve_goes_on_at_the_seconds_it_stopped_at(tmp_path: Path) -> None:
    """Stopped a second after its second point (the first is at 0 games,
    0 s, the second 2 s into training), before its third, a run's network
    has trained for three seconds or so: the resumed run's first point, at
    that network's games, is at those seconds (the network's header keeps
    them), not at the 2 s of the point before."""
    out = tmp_path / "n.npz"
    status, _, stderr = ctrl_c_once_ready(
        [*TRAIN_5X4, "--out", str(out)],
        TRAINING, "default", after=1.0)
    assert status == 130, stderr
    stopped = Network.load(out)
    assert stopped.options["seconds"] >= 2.0  # stopped after the point at 2 s, not before training
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "1000", "--probes", "0"])
    assert result.exit_code == 0, result.output
    rows = [line.split(",") for line in (tmp_path / "n-curve.csv").read_text().splitlines()[1:]]
    at = {int(r[0]): float(r[1]) for r in rows}
    assert at[0] == 0.0 and at[stopped.games] == stopped.options["seconds"]
    assert Network.load(out).options["seconds"] == at[stopped.games + 1000] >= stopped.options["seconds"]


@pytest.mark.parametrize("option", ["--resume", "--out", "--curve"])
def test_an_empty_file_name_is_refused_not_taken_for_the_option_left_out(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, option: str) -> None:
    """``--resume "$NET"`` with ``NET`` unset would otherwise start a new
    classic network into ntuple-7x6.npz; ``--out ""`` would write the
    default file: one line, exit 2, nothing written."""
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["train", "ntuple", "--games", "10", "--probes", "0", option, ""])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: Invalid value for '{option}': an empty file name"
    assert list(tmp_path.iterdir()) == []


def test_a_tilde_in_out_or_resume_is_the_home_folder_as_in_weights(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out=~/net.npz`` reaches the command unexpanded (no shell expands
    it there): the folder check read it as the home folder, the run then
    wrote ``./~/net.npz``, whose folder does not exist, and lost what it
    learnt at the end.  It is the home folder throughout, as the agent's
    ``weights=~/net.npz`` is."""
    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    first = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "500", "--probes", "0",
                                      "--tuples", "6", "--out=~/net.npz"])
    assert first.exit_code == 0, first.output
    assert Network.load(home / "net.npz").games == 500 and (home / "net-curve.csv").exists()
    again = CliRunner().invoke(main, ["train", "ntuple", "--resume=~/net.npz", "--games", "500", "--probes", "0"])
    assert again.exit_code == 0, again.output
    assert Network.load(home / "net.npz").games == 1000 and list(here.iterdir()) == []


def test_a_network_resumed_into_a_new_curve_keeps_its_training_seconds(tmp_path: Path) -> None:
    """``--resume net.npz --out other.npz`` (as the shipped network is
    trained on) starts a new curve: its first point is the network as it
    was, at its games and the training seconds its header kept, and the
    file written keeps counting from them, not from 0."""
    net = Network.create(Variant(4, 4), tuples=10, seed=1)
    net.games, net.options = 3000, {"seconds": 12.5}
    net.save(tmp_path / "net.npz")
    out = tmp_path / "other.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(tmp_path / "net.npz"), "--out", str(out),
                                       "--games", "1000", "--probes", "0"])
    assert result.exit_code == 0, result.output
    rows = [line.split(",") for line in (tmp_path / "other-curve.csv").read_text().splitlines()[1:]]
    assert (int(rows[0][0]), float(rows[0][1])) == (3000, 12.5)
    assert Network.load(out).options["seconds"] >= 12.5


def test_a_network_resumed_into_another_out_takes_its_curve_s_points_along(tmp_path: Path) -> None:
    """Review: ``--resume net.npz --out n3.npz`` started ``n3-curve.csv`` at
    the network's games, the earlier points left in ``net-curve.csv``
    alone, where the docs say a resumed run goes on with its curve.  The
    new curve now starts with them (the old file stays as it was)."""
    net = tmp_path / "net.npz"
    first = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "2000", "--probes", "0",
                                      "--out", str(net), "--seed", "1"])
    assert first.exit_code == 0, first.output
    old = (tmp_path / "net-curve.csv").read_text()
    result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(net), "--out", str(tmp_path / "n3.npz"),
                                       "--games", "1000", "--probes", "0"])
    assert result.exit_code == 0, result.output
    assert f"the curve goes on from {tmp_path / 'net-curve.csv'}'s " in result.stderr
    new = (tmp_path / "n3-curve.csv").read_text().splitlines()
    assert new[: len(old.splitlines())] == old.splitlines() and len(new) > len(old.splitlines())
    assert (tmp_path / "net-curve.csv").read_text() == old


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_while_the_probes_are_labelled_stops_at_once_and_writes_nothing(tmp_path: Path, inherited: str) -> None:
    """Labelling 100 probe positions of 8x6/Xc3/Bf4 takes the solver two
    minutes or more before the first game: Ctrl-C ends it, status 130."""
    out = tmp_path / "n.npz"
    env = {**os.environ, "HOME": str(tmp_path / "home")}
    status, _, stderr = ctrl_c_once_ready(
        ["train", "ntuple", "--board", "8x6/Xc3/Bf4", "--minutes", "1", "--out", str(out)],
        "labelling 100 probe positions", inherited, after=1.0, env=env)
    assert status == 130, stderr
    assert "Traceback" not in stderr and "interrupted" in stderr
    assert not out.exists() and not (tmp_path / "home" / ".c4lab" / "probes").exists()


@pytest.mark.parametrize("during", ["warm_up", "the first point"])
def test_ctrl_c_while_the_kernel_loads_or_the_first_point_is_judged_stops_at_once_where_sigint_came_ignored(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, during: str) -> None:
    """A run started with SIGINT ignored (a script's background job, then
    ``kill -INT``) takes Ctrl-C while it labels its probes and while it
    trains; in between, while the kernel was loaded (compiled: minutes on
    an empty numba cache) and the first point of the curve judged, Ctrl-C
    was lost, and the run trained on to its end (``--minutes 0.3``: 18 s,
    status 0).  It stops there at once, before any game, and writes
    nothing."""
    import signal

    from c4lab.learning import train_ntuple

    def ctrl_c(*args: Any, **kwargs: Any) -> float:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1.0)  # the handler, if any, runs meanwhile
        return 0.5

    monkeypatch.setattr(*((N.Trainer, "warm_up", ctrl_c) if during == "warm_up" else (N, "score_against", ctrl_c)))
    inherited = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        with pytest.raises(KeyboardInterrupt):
            train_ntuple.run(board="4x4", bonus=False, minutes=None, games=2000, workers=1, seed=0,
                             out=tmp_path / "n.npz", resume=None, tuples=4, length=None, probes=0, eval_every=None,
                             checkpoint_minutes=5.0, curve=None)
    finally:
        signal.signal(signal.SIGINT, inherited)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("name", "status", "executor"), [("SIGTERM", 143, "threads"), ("SIGHUP", 129, "processes")])
def test_a_kill_or_a_closed_terminal_saves_as_ctrl_c_does(tmp_path: Path, name: str, status: int, executor: str) -> None:
    """A scheduler's or ``timeout``'s SIGTERM, or the SIGHUP of a terminal
    closed under the run (sent to its whole group, the workers too), saves
    the network and the curve as Ctrl-C does, with the shell's status for
    that signal; before, the run ended with nothing written until its first
    checkpoint (five minutes in)."""
    import signal

    out = tmp_path / "n.npz"
    status_, _, stderr = ctrl_c_once_ready(
        [*TRAIN_5X4, "--workers", "2", "--executor", executor, "--out", str(out)],
        TRAINING, "default", after=1.0, signum=getattr(signal, name), group=name == "SIGHUP")
    assert status_ == status, stderr
    assert "Traceback" not in stderr and "stopped by a signal: the network and the curve are saved" in stderr
    assert Network.load(out).games > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n-curve.csv", "n-curve.html", "n-curve.png", "n.npz"]


def test_ctrl_c_pressed_again_while_saving_loses_nothing(tmp_path: Path) -> None:
    """The save after Ctrl-C takes seconds on a large network: more presses
    meanwhile, and on the way out after it, are ignored (the status stays
    130, not a death by SIGINT), and neither the network, the curve nor a
    temporary file is lost or left behind.  The presses go on, a tenth of
    a second apart, until the process has gone."""
    out = tmp_path / "n.npz"
    status, _, stderr = ctrl_c_once_ready(
        [*TRAIN_5X4, "--out", str(out)],
        TRAINING, "default", after=1.0, presses=60)
    assert status == 130, stderr
    assert "Traceback" not in stderr and "saving the network" in stderr
    assert Network.load(out).games > 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n-curve.csv", "n-curve.html", "n-curve.png", "n.npz"]


# -- the shipped network -----------------------------------------------------------


def test_the_shipped_classic_network_loads_and_is_small() -> None:
    from c4lab.agents.ntuple import shipped_path

    path = shipped_path("7x6")
    assert path is not None and path.stat().st_size <= 10 * 2**20
    net = Network.load(path)
    assert net.variant == Variant.classic() and net.games > 1_000_000 and net.mirror
    assert make_agent("ntuple").choose(Position.parse("7x6:ddddd")).token in "abcdefg"


def test_on_a_board_without_a_shipped_network_the_agent_plays_heuristic_and_says_so() -> None:
    move, analysis = make_agent("ntuple:seed=1").analyse(Position.parse("9x8/Xd3:dd"))
    assert Position.parse("9x8/Xd3:dd").is_legal(move)
    assert analysis.fallback == "heuristic:seed=1" and "no network for the board 9x8/Xd3" in (analysis.note or "")


@pytest.mark.slow
def test_the_shipped_network_keeps_the_value_in_at_least_90_percent_of_the_probe_positions(tmp_path: Path) -> None:
    """Measured when it shipped: 97.0 % of these 200 positions, 95.0 % of
    1,200 others (three sets of 400); the issue's target: 90 %."""
    from c4lab.agents.ntuple import shipped_path
    from c4lab.learning.probes import probe_set

    path = shipped_path("7x6")
    assert path is not None
    items = probe_set(Variant.classic(), 200)
    assert N.accuracy(Network.load(path), items) >= 0.90


@pytest.mark.slow
def test_puct_on_the_shipped_network_keeps_the_value_more_often_than_greedy_and_beats_varied_perfect_play() -> None:
    """Measured: 97.4 % of 1,200 probes (greedy 95.0 %); moving first from the
    empty board against ``perfect:ties=random``, greedy won 272 of 300."""
    from c4lab.arena.accuracy import measure
    from c4lab.learning.probes import probe_set

    items = probe_set(Variant.classic(), 200)
    puct = make_agent("ntuple:iterations=1000,seed=1")
    assert measure(puct, items).share >= 0.92
    wins = sum(
        play_game(puct, make_agent(f"perfect:ties=random,seed={game}"), Position(Variant.classic())).result == "A"
        for game in range(10)
    )
    assert wins >= 9


#: Run in a fresh process on an empty cache (``run_counting_compiles``): a
#: short training run, the command's notice of the compiling replaced by a
#: mark of what was compiled when it ended; then the learnt network's three
#: searches.  (One process for both: a cold start costs a minute or two.)
FIRST_COMPILES = """
import contextlib, json, pathlib
from c4lab.agents import make_agent
from c4lab.learning import train_ntuple
from c4lab.rules import Position
marks = []
@contextlib.contextmanager
def preparing():
    yield
    marks.append(len(compiled))
train_ntuple.run(board="5x4", bonus=False, minutes=None, games=3000, workers=1, seed=1, out=pathlib.Path(OUT),
                 resume=None, tuples=10, length=6, probes=0, eval_every=None, checkpoint_minutes=10.0, curve=None,
                 preparing=preparing)
marks.append(len(compiled))
for spec in ("ntuple", "ntuple:iterations=20", "ntuple:depth=2"):
    make_agent(spec).choose(Position.parse("7x6:dd"))
print(json.dumps({"during": compiled[:marks[0]], "after": compiled[marks[0]:marks[1]], "all": compiled}))
"""


@pytest.mark.slow
def test_a_first_training_run_or_search_compiles_within_its_notice_no_error_paths_and_nothing_twice(
    tmp_path: Path,
) -> None:
    """The notice of a first start ("preparing the engine ...") covers all
    the training run compiles: the final point's games against ``hard``
    compiled its search after the notice had ended, seconds of a silent
    stop (helper 155's review).  And what a first start compiles is the
    work itself: PUCT's expansion once (not again for the root's literal
    index), alpha-beta's children once (its root, in Python, calls the
    kernel its nodes call), and none of numba's error messages for slice
    copies, an array's ``max`` or a sort (each a second or more of a first
    move)."""
    script = FIRST_COMPILES.replace("OUT", repr(str(tmp_path / "net.npz")))
    found = run_counting_compiles(script, tmp_path / "cache")
    assert "c4lab.learning.ntuple_td.train_games" in found["during"]
    assert found["after"] == []
    compiled = found["all"]
    puct, agent = "c4lab.agents.ntuple_puct", "c4lab.agents.ntuple"
    assert {f"{puct}.run", f"{puct}._expand", f"{agent}._negamax", f"{agent}._children", f"{agent}._greedy_values",
            "c4lab.learning.ntuple_td.train_games"} <= set(compiled)
    assert compiled.count(f"{puct}._expand") == 1
    assert compiled.count(f"{agent}._children") == 1  # alpha-beta's root (Python) and its nodes share one
    heavy = [name for name in compiled if any(part in name for part in ("raise_with_shape", "npy_max", "quicksort"))]
    assert not heavy, heavy


# -- the trainer's own bookkeeping: stopping, resuming, the header -------------------------------


def test_ctrl_c_stops_every_worker_before_the_run_returns_and_the_header_says_how_to_go_on() -> None:
    """A KeyboardInterrupt in the trainer's thread (Ctrl-C) ends the run
    only once every worker has stopped: nothing trains on while the
    network is saved, and its header holds the run's options and where
    each worker's games were."""
    net = Network.create(Position.parse("5x4").variant, tuples=10, length=6, seed=1)
    trainer = N.Trainer(net, N.Options(opening=3), workers=2, seed=1)
    ticks = []

    def tick(t: N.Trainer) -> None:
        ticks.append(dict(net.options))  # what a checkpoint written now would say
        if t.played >= 20_000:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        trainer.run(seconds=60, on_tick=tick, tick=0.01)
    assert ticks[0]["opening"] == 3 and len(ticks[0]["rng"]) == 2  # from the first tick on
    played, weights = trainer.played, net.weights.copy()
    threading.Event().wait(0.3)
    assert trainer.played == played == net.games and np.array_equal(net.weights, weights)
    assert net.options["opening"] == 3 and net.options["rng"] == [str(int(r)) for r in trainer._rngs]
    trainer.run(games=1000)  # the next run starts afresh (its stop is not the last one's)
    assert trainer.played == played + 1000


def test_the_schedule_of_a_chunk_is_read_before_its_games_are_taken() -> None:
    """A run of one chunk plays at the schedule's start, not at its end."""
    net = Network.create(Position.parse("4x4").variant, tuples=4, length=4)
    seen: list[float] = []

    class Recording(N.Trainer):
        def alpha_at(self, progress: float) -> float:
            seen.append(progress)
            return super().alpha_at(progress)

    Recording(net, N.Options(average=0)).run(games=N.CHUNK)
    assert seen == [0.0]


def test_a_resumed_network_keeps_its_workers_games_apart_and_gives_new_workers_new_ones() -> None:
    net = trained("4x4", 1000)
    saved = [np.uint64(int(x)) for x in net.options["rng"]]
    one, two = N.Trainer(net, workers=1), N.Trainer(net, workers=2)
    assert one._rngs == saved and two._rngs[0] == saved[0]
    assert two._rngs[1] not in (saved[0], np.uint64(K.seed_rng(1)), np.uint64(K.seed_rng(0)))
    huge = N.Trainer(Network.create(net.variant, tuples=4, length=4), seed=2**63 - 1, workers=2)
    huge.run(games=10)  # a seed that overflows 64 bits once mixed still seeds the workers
    assert len(set(huge._rngs)) == 2


def test_a_resumed_run_keeps_the_openings_lambda_and_averaging_it_was_given(tmp_path: Path) -> None:
    out = tmp_path / "n.npz"
    first = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "1000", "--out", str(out),
                                      "--probes", "0", "--tuples", "6", "--lambda", "0.5", "--opening", "4",
                                      "--average", "0"])
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "1000", "--probes", "0"])
    assert again.exit_code == 0, again.output
    options = Network.load(out).options
    assert (options["lam"], options["opening"], options["average"]) == (0.5, 4, 0)
    told = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(out), "--games", "1000", "--probes", "0",
                                     "--opening", "8"])
    assert told.exit_code == 0 and Network.load(out).options["opening"] == 8


def test_a_header_that_does_not_match_its_arrays_or_holds_bad_options_is_refused(tmp_path: Path) -> None:
    """Every header field the kernels rely on is checked against the
    arrays: a bonus board's tables have a column for the ban piece, and a
    file that says four cell states there would index past them."""
    net = trained("5x4/Bc2", 500)
    assert net.states == 5

    def written(name: str, **changes: Any) -> Path:
        header = {**net.header(), **changes}
        path = tmp_path / name
        np.savez_compressed(path, header=np.array(json.dumps(header)), tuples=net.tuples, weights=net.weights)
        return path

    for name, changes, why in [
        ("states.npz", {"states": 4}, "do not match its header"),
        ("count.npz", {"tuples": 999}, "do not match its header"),
        ("length.npz", {"length": 3}, "do not match its header"),
        ("games.npz", {"games": -5}, "header is damaged"),
        ("nameless.npz", {"variant": None}, "header is damaged \\(invalid position 'None'"),
        # int() took these: a run resuming 1e300 failed on it ("seed must fit in a 64-bit integer")
        ("huge.npz", {"games": 1e300}, "header is damaged \\(games is 1e\\+300, not a whole number\\)"),
        ("half.npz", {"games": 2.5}, "header is damaged \\(games is 2.5, not a whole number\\)"),
        ("true.npz", {"games": True}, "header is damaged \\(games is True, not a whole number\\)"),
        ("past.npz", {"games": 2**63}, "header is damaged \\(games is 9223372036854775808, not a count"),
        ("final.npz", {"options": {**net.options, "alpha_final": [1]}}, "option alpha_final is \\[1\\]"),
        ("eps.npz", {"options": {**net.options, "epsilon_final": {}}}, "option epsilon_final"),
        ("zero.npz", {"options": {**net.options, "rng": ["0"]}}, "option rng"),
        ("text.npz", {"options": {**net.options, "rng": ["x"]}}, "option rng"),
        ("minus.npz", {"options": {**net.options, "rng": ["-1"]}}, "option rng"),
        ("clock.npz", {"options": {**net.options, "seconds": "12"}}, "option seconds is '12', not a number"),
        ("run.npz", {"options": {**net.options, "run": "../x"}}, "option run is '../x', not a run's name"),
    ]:
        with pytest.raises(NetworkError, match=f"{name}: .*{why}"):
            Network.load(written(name, **changes))
    assert Network.load(written("fine.npz")).games == 500
    unsaid = tmp_path / "unsaid.npz"  # a missing field was said by its name alone: "its header is damaged ('mirror')"
    np.savez_compressed(unsaid, header=np.array(json.dumps({k: v for k, v in net.header().items() if k != "mirror"})),
                        tuples=net.tuples, weights=net.weights)
    with pytest.raises(NetworkError, match=re.escape(f"{unsaid}: its header is damaged (it has no 'mirror')")):
        Network.load(unsaid)


def test_a_resumed_network_whose_header_holds_options_no_run_takes_is_refused_naming_the_file(
        tmp_path: Path) -> None:
    """A resumed run goes on with the header's step size, exploration,
    openings, lambda and averaged share where none is given: an edited or
    damaged header's value out of range is one line naming the file and its
    header (exit 2, nothing written), not a complaint about an option the
    user never typed."""
    net = trained("4x4", 500)
    for name, option, why in [("alpha.npz", {"alpha": 0.0}, "alpha must be"),
                              ("opening.npz", {"opening": 100}, "opening must be 0 to 64 moves, not 100"),
                              ("lam.npz", {"lam": 2.0}, "lambda must be"), ("epsilon.npz", {"epsilon": 5.0}, "epsilon")]:
        path = tmp_path / name
        header = {**net.header(), "options": {**net.options, **option}}
        np.savez_compressed(path, header=np.array(json.dumps(header)), tuples=net.tuples, weights=net.weights)
        before = sorted(tmp_path.iterdir())
        result = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(path), "--games", "10", "--probes", "0"])
        assert result.exit_code == 2 and result.stderr.count("\n") == 1, result.output
        assert result.stderr.startswith(f"Error: {path}: its header's training options are damaged (")
        assert why in result.stderr
        assert sorted(tmp_path.iterdir()) == before


def test_a_network_file_whose_compressed_data_is_damaged_is_one_line_for_the_agent_and_the_trainer(
        tmp_path: Path) -> None:
    """Bit rot inside a member's deflate stream (the archive's directory
    whole) is not a bad CRC but a decompression error: one line naming the
    file, exit 2, for ``weights=`` and ``--resume`` alike (before: zlib's
    traceback, exit 1)."""
    path = tmp_path / "rotten.npz"
    trained("4x4", 500).save(path)
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as archive:
        at = archive.getinfo("weights.npy").header_offset
    start = at + 30 + int.from_bytes(data[at + 26:at + 28], "little") + int.from_bytes(data[at + 28:at + 30], "little")
    data[start] = 0b111  # the first deflate block: final, of the reserved type 3
    path.write_bytes(bytes(data))
    with pytest.raises(NetworkError, match=f"cannot read n-tuple network {path}: .*invalid block type"):
        Network.load(path)
    moved = CliRunner().invoke(main, ["move", "4x4", "--agent", f"ntuple:weights={path}"])
    resumed = CliRunner().invoke(main, ["train", "ntuple", "--resume", str(path), "--games", "10", "--probes", "0"])
    for result in (moved, resumed):
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert result.stderr.count("\n") == 1 and str(path) in result.stderr


def test_a_header_whose_mirror_flag_is_not_the_boards_symmetry_is_refused(tmp_path: Path) -> None:
    """A network reads its tuples mirrored exactly where its board is its
    own mirror image; a header edited to say otherwise (or to say "false"
    as text, which is not false) would make the same weights play another
    game, so it is refused as damaged, not loaded."""
    net = trained("4x4", 500)
    assert net.mirror

    def written(name: str, mirror: Any) -> Path:
        path = tmp_path / name
        np.savez_compressed(path, header=np.array(json.dumps({**net.header(), "mirror": mirror})),
                            tuples=net.tuples, weights=net.weights)
        return path

    for name, mirror, why in [("text.npz", "false", "header is damaged \\(mirror is 'false'"),
                              ("number.npz", 1, "header is damaged"),
                              ("unmirrored.npz", False, "do not match its header")]:
        with pytest.raises(NetworkError, match=f"{name}: .*{why}"):
            Network.load(written(name, mirror))
    assert Network.load(written("fine.npz", True)).mirror


def test_a_file_written_whole_or_not_at_all(tmp_path: Path) -> None:
    from c4lab import atomic

    path = tmp_path / "kept.txt"
    atomic.write_text(path, "old")
    with pytest.raises(RuntimeError), atomic.replacing(path) as f:
        f.write("half of the new")
        raise RuntimeError("the disk is full")
    assert path.read_text() == "old" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]
    atomic.write_bytes(path, b"new")
    assert path.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["kept.txt"]


def test_a_checkpoint_that_cannot_be_written_is_a_warning_and_training_goes_on(tmp_path: Path) -> None:
    out = tmp_path / "n.npz"
    (tmp_path / "n.npz.tmp").mkdir()  # every write of the network fails while this is here
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--minutes", "0.05", "--out", str(out),
                                       "--probes", "0", "--tuples", "6", "--checkpoint", "0.005"])
    assert "the checkpoint could not be written" in result.stderr
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert f"the network could not be written to {out}" in result.stderr and not out.exists()


def test_a_point_of_the_curve_judges_a_copy_that_training_does_not_move() -> None:
    """The curve's point at N games judges the network as it was at N
    games: a copy of its weights (its tuples and layout shared), not a
    network the workers go on changing while its probes and games are
    played."""
    net = trained("4x4", 500)
    judged = net.frozen()
    assert judged.layout is net.layout and judged.games == 500
    net.weights += 1.0
    net.games += 1
    assert not np.array_equal(judged.weights, net.weights) and judged.games == 500
    seen = []
    trainer = N.Trainer(net, workers=2, seed=1)
    trainer.run(games=20_000, on_tick=lambda t: seen.append(t.snapshot()), tick=0.01)
    assert seen and all(s.games <= net.games and s.weights is not net.weights for s in seen)


def test_a_worker_that_fails_ends_the_run_in_one_line_and_keeps_what_was_learnt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    real, calls = T.train_games, []

    def failing(*args: Any) -> Any:  # the warm-up's game and three chunks, then a worker dies
        calls.append(1)
        if len(calls) > 4:
            raise MemoryError("no room for the next chunk")
        return real(*args)

    monkeypatch.setattr(T, "train_games", failing)
    out = tmp_path / "n.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "100000", "--out", str(out),
                                       "--probes", "0", "--tuples", "6"])
    assert result.exit_code == 1 and "Traceback" not in result.stderr
    assert "training stopped: a worker failed (MemoryError: no room for the next chunk)" in result.stderr
    assert Network.load(out).games == 3 * N.CHUNK


def test_a_point_of_the_curve_that_cannot_be_judged_ends_the_run_in_one_line_and_keeps_what_was_learnt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A failure while a point of a run given in games is judged (the
    workers paused) is not a worker's: it propagated as itself, and the
    games played so far were not saved."""
    real, calls = N.score_against, []

    def failing(*args: Any, **kwargs: Any) -> Any:  # the first point judged, then the next fails
        calls.append(1)
        if len(calls) > 2:  # the first point plays random and normal, the next random only
            raise MemoryError("no room for the match")
        return real(*args, **kwargs)

    monkeypatch.setattr(N, "score_against", failing)
    out = tmp_path / "n.npz"
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "4000", "--out", str(out),
                                       "--probes", "0", "--tuples", "6"])
    assert result.exit_code == 1 and "Traceback" not in result.stderr, result.stderr
    assert ("training stopped: a point of the curve could not be judged (MemoryError: no room for the match); "
            f"the network so far (200 games) is saved in {out}") in " ".join(result.stderr.split())
    assert Network.load(out).games == 200
    assert [p.suffix for p in tmp_path.glob("n*.csv")] == [".csv"]  # the curve so far


def test_on_an_80_column_terminal_the_progress_line_cuts_the_last_point_short_not_the_bar() -> None:
    # the curve's last point squeezed the bar and left out the time: "6x5/Xc2 ╸  52,000 games, ..."
    last = ", accuracy 85.0%, 100% vs random, 65% vs normal"
    line = progress_line(bar_columns(), 80, "6x5/Xc2", 100_000, 52_000, games=52_000, speed=17_017.0, last=last)
    assert len(line) <= 80 and line.startswith("6x5/Xc2 ━━━━━━━━━━━━") and " 0:00:00 52,000 games, 17,017/s" in line
    assert line.endswith("…")
    assert progress_line(bar_columns(), 200, "6x5/Xc2", 100_000, 52_000, games=52_000, speed=17_017.0,
                         last=last).endswith("17,017/s" + last)


def test_two_runs_of_one_seed_score_their_same_network_alike_against_random_however_many_points_came_before(
        tmp_path: Path) -> None:
    # The games against random were drawn from the point's index, so the final point of the same network
    # scored differently when a busy machine placed fewer points before it (1 worker: --eval-every changes
    # when the curve is measured, not what is learnt).
    finals = []
    for name, every in (("few", "1000"), ("many", "0.05")):
        out = tmp_path / f"{name}.npz"
        result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "40000", "--tuples", "20",
                                           "--probes", "0", "--seed", "3", "--eval-every", every, "--out", str(out)])
        assert result.exit_code == 0, result.output
        with (tmp_path / f"{name}-curve.csv").open(newline="") as f:
            rows = list(csv.DictReader(f))
        finals.append((Network.load(out).weights, rows))
    (few_weights, few), (many_weights, many) = finals
    assert np.array_equal(few_weights, many_weights)  # few: 2 points (start, end); many: one at each tick
    assert few[-1]["games"] == many[-1]["games"] == "40000"
    assert few[-1]["score vs random"] == many[-1]["score vs random"]


@pytest.mark.parametrize("settings, message", [
    ({"alpha": "1"}, "Options.alpha: alpha must be a number, not '1'"),
    ({"alpha": None}, "Options.alpha: alpha must be a number, not None"),
    ({"alpha_final": "x"}, "Options.alpha_final: alpha_final must be a number or None, not 'x'"),
    ({"epsilon": None}, "Options.epsilon: epsilon must be a number, not None"),
    ({"lam": "0.5"}, "Options.lam: lam must be a number, not '0.5'"),
    ({"average": True}, "Options.average: average must be a number, not True"),
    ({"opening": 3.5}, "Options.opening: opening must be a whole number of moves, not 3.5"),
    ({"opening": True}, "Options.opening: opening must be a whole number of moves, not True"),
    ({"learn_from_random": "no"}, "Options.learn_from_random: learn_from_random must be True or False, not 'no'"),
    ({"tcl": "x"}, "Options.tcl: tcl must be a number, not 'x'"),
])
def test_options_of_the_wrong_type_are_a_type_error_naming_the_field(settings: dict[str, Any], message: str) -> None:
    """The Python API: a learning setting of the wrong type is refused
    where it is given, naming the field (not ``'<' not supported between
    'int' and 'str'``, nor kept to fail, or not, in the kernel later)."""
    with pytest.raises(TypeError) as caught:
        N.Options(**settings)
    assert str(caught.value) == message
    assert isinstance(caught.value, N.OptionOutOfRange)  # one except for every bad setting
    assert caught.value.field == next(iter(settings))


@pytest.mark.parametrize("settings, message", [
    ({"tcl": -1.0}, "Options.tcl: the temporal coherence beta must be in [0, 100], not -1.0"),
    ({"tcl": math.nan}, "Options.tcl: the temporal coherence beta must be in [0, 100], not nan"),
    ({"average": 1.5}, "Options.average: the share of the run to average must be in [0, 1), not 1.5"),
    ({"alpha_final": 0.0}, "Options.alpha_final: the final alpha must be in (0, 100], not 0.0"),
    ({"lam": 1.0}, "Options.lam: lambda must be in [0, 1), not 1.0"),
])
def test_options_out_of_range_name_the_field_for_the_python_api(settings: dict[str, Any], message: str) -> None:
    """Out of range, the message begins with the field (``Options.lam``),
    as the Python caller typed it; the command names its option instead
    (``exc.message``: ``Invalid value for '--lambda': lambda must be ...``)."""
    with pytest.raises(N.OptionOutOfRange) as caught:
        N.Options(**settings)
    assert str(caught.value) == message
    assert not str(caught.value.message).startswith("Options.")


@pytest.mark.parametrize("settings, error, message", [
    ({"workers": 0}, ValueError, "Trainer.workers must be at least 1, not 0"),
    ({"workers": 2.5}, TypeError, "Trainer.workers must be a whole number, not 2.5"),
    ({"workers": "2"}, TypeError, "Trainer.workers must be a whole number, not '2'"),
    ({"seed": "1"}, TypeError, "Trainer.seed must be a whole number, not '1'"),
    ({"options": {"alpha": 1.0}}, TypeError, "Trainer.options must be an Options, not dict"),
    ({"executor": "gpu"}, ValueError, "Trainer.executor: unknown executor 'gpu'"),
])
def test_a_trainer_of_bad_settings_is_refused_naming_the_field(settings: dict[str, Any], error: type,
                                                               message: str) -> None:
    net = Network.create(Position.parse("4x4").variant, tuples=5, seed=1)
    with pytest.raises(error) as caught:
        N.Trainer(net, **settings)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("budget, error, message", [
    ({"games": 0}, ValueError, "Trainer.run: games must be at least 1, not 0"),
    ({"games": -5}, ValueError, "Trainer.run: games must be at least 1, not -5"),
    ({"games": 2.5}, TypeError, "Trainer.run: games must be a whole number, not 2.5"),
    ({"seconds": 0}, ValueError, "Trainer.run: seconds must be a positive, finite number, not 0"),
    ({"seconds": -1.0}, ValueError, "Trainer.run: seconds must be a positive, finite number, not -1.0"),
    ({"seconds": math.nan}, ValueError, "Trainer.run: seconds must be a positive, finite number, not nan"),
    ({}, ValueError, "Trainer.run: give games=N or seconds=S (or both: whichever ends first)"),  # trained for ever
])
def test_a_run_of_no_games_or_no_time_is_refused_before_it_touches_the_network(
        budget: dict[str, Any], error: type, message: str) -> None:
    """``run(games=0)`` divided by zero in a worker (a ``WorkerFailed``),
    ``games=-5`` and ``seconds=-1`` ran nothing and said nothing,
    ``seconds=nan`` wrote ``done: nan`` into the header (a file the loader
    then refuses), ``games=2.5`` counted half games: each is refused, and
    the network's header is as it was."""
    net = Network.create(Position.parse("4x4").variant, tuples=5, seed=1)
    before = dict(net.options)
    with pytest.raises(error) as caught:
        N.Trainer(net).run(**budget)
    assert str(caught.value) == message
    assert net.options == before and net.games == 0


def test_a_run_says_where_its_network_and_curve_go_before_it_trains(tmp_path: Path) -> None:
    """A run of minutes checkpoints its network and curve meanwhile: where
    they are (the default name included, ``ntuple-6x5_Xc2.npz``) is said as
    training starts, not only in the last lines."""
    result = CliRunner().invoke(main, ["train", "ntuple", "--board", "4x4", "--games", "1000", "--probes", "0",
                                       "--tuples", "5", "--out", str(tmp_path / "n.npz"), "--checkpoint", "2"])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    said = next(i for i, line in enumerate(lines) if line.startswith("network: "))
    assert lines[said] == (f"network: {tmp_path / 'n.npz'} (every 2 min and at the end); curve: "
                           f"{tmp_path / 'n-curve.csv'}, {tmp_path / 'n-curve.png'}, {tmp_path / 'n-curve.html'} "
                           "(the CSV with each checkpoint)")
    assert not any(" games, " in line for line in lines[:said])  # before the first point of the curve


def test_a_network_is_made_for_a_board_given_by_its_notation_too() -> None:
    """Review: ``Network.create("6x5/Xc2")`` was a TypeError (a Variant was
    wanted) where ``Solver.prepare`` takes the string."""
    assert Network.create("6x5/Xc2", 5).variant == Position.parse("6x5/Xc2").variant
    with pytest.raises(ValueError, match="'6x5:dd' is a position with moves: give a board"):
        Network.create("6x5:dd", 5)


@pytest.mark.parametrize("args, message", [
    ((16,), "Network.create: variant must be a Variant or a board's notation ('6x5/Xc2'), not int"),
    ((Position.parse("4x4").variant, 2.5), "Network.create: tuples must be a whole number, not 2.5"),
    ((Position.parse("4x4").variant, "3"), "Network.create: tuples must be a whole number, not '3'"),
    ((Position.parse("4x4").variant, 5, 8.0), "Network.create: length must be a whole number, not 8.0"),
    ((Position.parse("4x4").variant, 5, 8, "1"), "Network.create: seed must be a whole number, not '1'"),
])
def test_a_network_of_the_wrong_kind_of_argument_is_a_type_error_naming_it(args: tuple[Any, ...], message: str) -> None:
    """``Network.create("4x4")`` failed with ``'str' object has no attribute
    'bonus'``; ``tuples="3"`` with a comparison of str and int."""
    with pytest.raises(TypeError) as caught:
        Network.create(*args)
    assert str(caught.value) == message
