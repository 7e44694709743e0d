"""Tabular Q-learning: what it learns, its keys, its table file, its agent, its command."""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
import zipfile
from functools import cache
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from c4lab.agents import SpecError, make_agent
from c4lab.agents.qlearning import QLearningAgent
from c4lab.agents.qtable import FORMAT, QTable, TableError, check_board, position_keys
from c4lab.cli import main
from c4lab.game import play_game
from c4lab.learning.qlearning import (
    EvalPoint,
    QLearner,
    TrainConfig,
    evaluate,
    progress_columns,
    summary,
    train,
)
from c4lab.rules import Move, Position
from c4lab.rules import kernels as K
from testkit import ctrl_c_once_ready, progress_line, run_counting_compiles


@cache
def trained_4x4(seed: int = 1, episodes: int = 200_000, slip: float = 0.1) -> QTable:
    """A 4x4 table from the default training (about a second once compiled)."""
    table, _ = train(TrainConfig(board="4x4", episodes=episodes, seed=seed, slip=slip), eval_games=0)
    return table


def keys(text: str) -> tuple[int, int]:
    geo, st = Position.parse(text).kernel_arrays()
    key, mirror = position_keys(geo, st)
    return int(key), int(mirror)


def mirrored(text: str) -> str:
    """The mirror image of a position on a board without special cells."""
    board, _, moves = text.partition(":")
    width = int(board.split("x")[0])
    return board + (":" + "".join(chr(ord("a") + width - 1 - (ord(m) - ord("a"))) for m in moves) if moves else "")


# -- what it learns ----------------------------------------------------------


def test_self_play_on_4x4_learns_to_beat_random_in_at_least_90_percent_of_the_games() -> None:
    table = trained_4x4()
    wins, draws, losses = evaluate(table, "random", 200, seed=7)  # 100 games as A, 100 as B
    assert wins >= 180, (wins, draws, losses)
    assert losses == 0


def test_the_4x4_agent_never_loses_to_minimax_depth_2() -> None:
    wins, _, losses = evaluate(trained_4x4(), "minimax:depth=2", 20, seed=7)
    assert losses == 0 and wins >= 5


def test_plain_q_learning_learns_that_4x4_is_a_draw_and_that_a_win_in_one_is_worth_a_win() -> None:
    table = trained_4x4(slip=0.0)
    start = table.values(Position.parse("4x4"))
    assert start is not None and all(v == pytest.approx(0.5, abs=1e-3) for v in start.values())
    # A to move has three on the bottom row (a1 b1 c1): d1 wins.
    values = table.values(Position.parse("4x4:aabbcc"))
    assert values is not None and values[Move(3)] == pytest.approx(1.0, abs=1e-3)
    assert max(v for m, v in values.items() if m != Move(3)) < 1.0


def test_training_is_reproducible_from_its_seed() -> None:
    def run(seed: int) -> QTable:
        learner = QLearner(TrainConfig(board="4x4", episodes=3000, seed=seed))
        learner.run(3000)
        return learner.table()

    one, again, other = run(5), run(5), run(6)
    assert np.array_equal(one.keys, again.keys) and np.array_equal(one.q, again.q)
    assert not np.array_equal(one.keys, other.keys) or not np.array_equal(one.q, other.q)


def test_epsilon_falls_linearly_from_its_start_to_its_end_then_stays() -> None:
    config = TrainConfig(episodes=1000, epsilon_start=1.0, epsilon_end=0.05, epsilon_decay=0.8)
    eps = config.epsilons(0, 1000)
    assert eps[0] == 1.0 and eps[400] == pytest.approx(1.0 - 0.95 / 2)
    assert np.all(eps[800:] == pytest.approx(0.05)) and np.all(np.diff(eps) <= 0)


def test_bad_options_are_refused() -> None:
    for bad in ({"alpha": 0.0}, {"discount": 1.5}, {"epsilon_end": -0.1}, {"slip": 2.0},
                {"reward_win": 0.0, "reward_draw": 0.0, "reward_loss": 0.0}):
        with pytest.raises(ValueError):
            TrainConfig(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^the start position 4x4:aabbccd is already over \(A \(white\) wins: four in a "
                                         r"row\)$"):
        QLearner(TrainConfig(board="4x4:aabbccd"))
    # how it ended, in the words a move after the end is refused with (a full board: a draw)
    with pytest.raises(ValueError, match=r"^the start position 4x4:bbcdaadcbbdcdcaa is already over \(draw: the board "
                                         r"is full\)$"):
        QLearner(TrainConfig(board="4x4:bbcdaadcbbdcdcaa"))


# -- keys and mirror symmetry ----------------------------------------------------


def test_a_position_and_its_mirror_image_swap_their_two_keys() -> None:
    for text in ("4x4:a", "4x4:abbc", "5x4:aeedc", "5x5:cbdaae"):
        key, mirror = keys(text)
        assert keys(mirrored(text)) == (mirror, key)
    assert keys("4x4:abcd") == keys("4x4:cbad")  # the same board reached in another order
    key, mirror = keys("4x4:ad")
    assert keys("4x4:da") == (mirror, key) and key != mirror
    assert keys("4x4:ab") != keys("4x4:ba") and keys("4x4") == keys("4x4")


def test_keys_tell_apart_every_4x4_position_with_a_bonus_cell_up_to_six_plies() -> None:
    # Ban pieces included: the key must hold the ban's cell.
    board_of: dict[int, tuple[int, ...]] = {}
    frontier = [Position.parse("4x4/Bb1")]
    for _ in range(6):
        following = []
        for position in frontier:
            for move in position.legal_moves():
                after = position.play(move)
                geo, st = after.kernel_arrays()
                board = tuple(int(x) for x in st[K.S_BOARD:])
                key = int(position_keys(geo, st)[0])
                assert board_of.setdefault(key, board) == board, after.notation
                if not after.is_over:
                    following.append(after)
        frontier = following
    assert len(board_of) > 1000


def test_mirror_symmetry_is_used_only_when_the_special_cells_are_their_own_mirror_images() -> None:
    symmetric = ["4x4", "5x4/Xc1", "4x4/Xa1/Xd1", "5x5/Bc3", "6x5/Xa2/Xf2"]
    asymmetric = ["4x4/Xb2", "5x5/Bb3", "4x4/Xa1", "5x4/Xc1/Bd2"]
    for text in symmetric:
        assert Position.parse(text).variant.is_mirror_symmetric, text
    for text in asymmetric:
        assert not Position.parse(text).variant.is_mirror_symmetric, text
    assert QLearner(TrainConfig(board="4x4")).symmetric
    assert not QLearner(TrainConfig(board="4x4", symmetry=False)).symmetric
    assert not QLearner(TrainConfig(board="4x4/Xb2")).symmetric


def test_a_mirrored_position_reads_the_same_values_on_mirrored_moves() -> None:
    table = trained_4x4()
    for text in ("4x4:a", "4x4:abbc", "4x4:aab"):
        values, images = table.values(Position.parse(text)), table.values(Position.parse(mirrored(text)))
        assert values is not None and images is not None
        assert {m.column: v for m, v in values.items()} == {3 - m.column: v for m, v in images.items()}


def test_boards_whose_keys_do_not_fit_64_bits_are_refused() -> None:
    check_board(Position.parse("7x6").variant)  # fits (49 bits), though no table could cover it
    with pytest.raises(TableError, match="too large for a Q-table"):
        check_board(Position.parse("8x8").variant)
    check_board(Position.parse("7x8").variant)  # 63 bits
    with pytest.raises(TableError, match="too large"):  # 63 + 8 for the ban piece's cell
        QLearner(TrainConfig(board="7x8/Bd1"))


# -- the table file -------------------------------------------------------------


def test_a_saved_table_loads_back_with_the_same_values(tmp_path: Path) -> None:
    table = trained_4x4()
    path = tmp_path / "q.npz"
    table.save(path)
    loaded = QTable.load(path)
    assert np.array_equal(loaded.keys, table.keys) and loaded.keys.dtype == np.uint64
    assert np.array_equal(loaded.q, table.q) and loaded.q.dtype == np.float32
    assert np.array_equal(loaded.visits, table.visits)
    assert (loaded.variant, loaded.symmetric, loaded.rewards) == (table.variant, True, (1.0, 0.5, 0.0))
    assert loaded.info["episodes"] == 200_000 and loaded.info["options"]["alpha"] == 0.9
    with zipfile.ZipFile(path) as archive:  # no pickled objects: plain arrays and a JSON header
        assert sorted(archive.namelist()) == ["header.npy", "keys.npy", "q.npy", "visits.npy"]
    header = json.loads(str(np.load(path, allow_pickle=False)["header"]))
    assert header["format"] == FORMAT and header["variant"] == "4x4" and header["states"] == len(table)
    a, b = make_agent(f"qlearning:table={path},seed=3"), QLearningAgent(table, seed=3)
    for text in ("4x4", "4x4:bc", "4x4:abca"):
        assert a.choose(Position.parse(text)) == b.choose(Position.parse(text))


def test_a_missing_table_says_to_train_one_first(tmp_path: Path) -> None:
    with pytest.raises(TableError, match=r"no Q-table at .*nope\.npz: train one first"):
        make_agent(f"qlearning:table={tmp_path / 'nope.npz'}")
    with pytest.raises(SpecError, match="needs a table: train one with `c4lab train qlearning"):
        make_agent("qlearning")


def test_a_damaged_table_says_what_is_wrong_and_where(tmp_path: Path) -> None:
    good = tmp_path / "good.npz"
    trained_4x4().save(good)
    text = tmp_path / "text.npz"
    text.write_text("not a table")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    arrays = dict(np.load(good, allow_pickle=False))

    def variant(name: str, **changes: object) -> Path:
        path = tmp_path / name
        np.savez(path, **{**arrays, **changes})  # type: ignore[arg-type]
        return path

    header = json.loads(str(arrays["header"]))
    cases = {
        text: "not a c4lab Q-table (not an .npz archive)",
        truncated: "cannot read Q-table",
        variant("book.npz", header=np.array(json.dumps({**header, "format": "c4lab-book-1"}))):
            "not a c4lab Q-table (format 'c4lab-book-1'",
        variant("short.npz", q=arrays["q"][:-1]): "damaged: its arrays do not match a 4x4 table",
        variant("wide.npz", q=np.zeros((len(arrays["keys"]), 9), dtype=np.float32)): "damaged",
        variant("unsorted.npz", keys=arrays["keys"][::-1].copy()): "damaged: keys not sorted",
        variant("nan.npz", q=np.full_like(arrays["q"], np.nan)): "not finite",
        variant("board.npz", header=np.array(json.dumps({**header, "variant": "4x"}))): "damaged: bad header",
        variant("huge.npz", header=np.array(json.dumps({**header, "variant": "12x12", "symmetric": False})),
                q=np.zeros((len(arrays["keys"]), 24), dtype=np.float32)): "too large for a Q-table",
        variant("even.npz", header=np.array(json.dumps({**header, "rewards": [1, 1, 1]}))): "damaged: bad rewards",
        variant("upside.npz", header=np.array(json.dumps({**header, "rewards": [0, 0.5, 1]}))):
            "damaged: bad rewards",
        variant("short_rewards.npz", header=np.array(json.dumps({**header, "rewards": [1, 0]}))): "damaged",
        variant("yes.npz", header=np.array(json.dumps({**header, "symmetric": "no"}))): "damaged: bad header",
        # a missing field was said by its name alone: "bad header ('rewards')"
        variant("no_rewards.npz", header=np.array(json.dumps({k: v for k, v in header.items() if k != "rewards"}))):
            "damaged: bad header (it has no 'rewards')",
        variant("pickled.npz", keys=np.array([None])): "cannot read Q-table",  # never unpickled
        # a start evaluate() plays from: was taken unread, and failed there without the file's name
        variant("start.npz", header=np.array(json.dumps({**header, "start": "5x4"}))):
            "damaged: its start (5x4 is not on the table's 4x4)",
        variant("over.npz", header=np.array(json.dumps({**header, "start": "4x4:abababa"}))):
            "damaged: its start (the game is over in 4x4:abababa)",
        variant("bad_start.npz", header=np.array(json.dumps({**header, "start": "4x4:z"}))): "damaged: its start (",
        variant("no_text.npz", header=np.array(json.dumps({**header, "start": 3}))):
            "damaged: its start (3 is not a position)",
    }
    for path, message in cases.items():
        with pytest.raises(TableError, match=re.escape(message)) as info:
            QTable.load(path)
        assert str(path) in str(info.value)


def test_a_table_refuses_positions_of_another_board(tmp_path: Path) -> None:
    path = tmp_path / "q.npz"
    trained_4x4().save(path)
    agent = make_agent(f"qlearning:table={path}")
    for text in ("5x4", "4x4/Xb2", "4x4/Bb1:a"):
        with pytest.raises(TableError, match=rf"q\.npz was trained on 4x4 boards; it cannot play {text}"):
            agent.choose(Position.parse(text))


# -- the agent ------------------------------------------------------------------


def test_the_agent_plays_the_best_learnt_move_and_reports_every_value() -> None:
    agent = QLearningAgent(trained_4x4(), seed=1)
    move, analysis = agent.analyse(Position.parse("4x4:aabbcc"))  # A wins in d
    assert move == Move(3) and analysis.note == "Q-table"
    assert {s.move for s in analysis.moves} == set(Position.parse("4x4:aabbcc").legal_moves())
    move, _ = agent.analyse(Position.parse("4x4:aabbc"))  # B must block d1
    assert move == Move(3)
    assert analysis.value == max(s.value for s in analysis.moves if s.value is not None)


def test_unknown_positions_fall_back_to_win_block_or_random_and_are_counted() -> None:
    empty = QTable(Position.parse("4x4").variant, np.zeros(0, np.uint64), np.zeros((0, 8), np.float32),
                   np.zeros(0, np.uint32), True)
    agent = QLearningAgent(empty, seed=1)
    move, analysis = agent.analyse(Position.parse("4x4:aabbcc"))  # A wins in d
    assert move == Move(3) and "won at once" in (analysis.note or "")
    move, analysis = agent.analyse(Position.parse("4x4:aabbc"))  # B blocks A's d1
    assert move == Move(3) and "blocked an immediate win" in (analysis.note or "")
    move, analysis = agent.analyse(Position.parse("4x4:ab"))  # no threat anywhere
    assert move in Position.parse("4x4:ab").legal_moves() and "random legal move" in (analysis.note or "")
    assert "3 of 3 positions asked so far were not in it" in (analysis.note or "")


def test_trained_on_a_bonus_board_the_agent_plays_legal_moves_bans_included() -> None:
    table, _ = train(TrainConfig(board="4x4/Bb1", episodes=20_000, seed=2), eval_games=0)
    assert not table.symmetric and table.q.shape[1] == 8
    agent = QLearningAgent(table, seed=4)
    random_player = make_agent("random:seed=4")
    played_bans = False
    for game in range(40):
        sides = (agent, random_player) if game % 2 == 0 else (random_player, agent)
        final = play_game(*sides, Position.parse("4x4/Bb1")).final  # an illegal move raises
        played_bans |= any(move.ban is not None for move in final.moves)
    assert played_bans


# -- the command -------------------------------------------------------------------


def test_train_qlearning_writes_the_table_the_curve_and_its_plot(tmp_path: Path) -> None:
    out, curve = tmp_path / "t.npz", tmp_path / "curve"
    result = CliRunner().invoke(main, [
        "train", "qlearning", "--board", "4x4", "--episodes", "3000", "--eval-every", "1000",
        "--eval-games", "4", "--out", str(out), "--curve", str(curve), "--seed", "3", "--learning-rate", "0.5",
    ])
    assert result.exit_code == 0, result.output
    assert "3,000 episodes" in result.output and "against random:" in result.output
    table = QTable.load(out)
    assert table.info["episodes"] == 3000 and table.info["options"]["alpha"] == 0.5
    with (tmp_path / "curve.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["episodes"]) for r in rows] == [1000, 2000, 3000]
    assert {"random win_rate", "minimax:depth=2 win_rate", "states", "epsilon"} <= set(rows[0])
    assert (tmp_path / "curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the page, as the n-tuple learner's: the plot embedded, and each evaluation's games against each opponent
    page = (tmp_path / "curve.html").read_text()
    assert page.count("data:image/png;base64,") == 1 and "<th>vs minimax:depth=2</th>" in page
    assert re.search(r"<td>3,000</td>.*<td>\d / \d / \d, \d+\.\d%</td>", page)
    assert f"learning curve: {tmp_path / 'curve.csv'}, {tmp_path / 'curve.png'}, {tmp_path / 'curve.html'}" in result.output
    move = CliRunner().invoke(main, ["move", "4x4", "--agent", f"qlearning:table={out}"])
    assert move.exit_code == 0 and move.output.strip() in "abcd"


def test_the_closing_summary_counts_one_game_in_the_singular(tmp_path: Path) -> None:
    # A run printed "7 wins, 2 draws, 1 losses".
    point = EvalPoint(episodes=10, seconds=0.1, states=5, epsilon=0.5,
                      results={"random": (1, 1, 1), "minimax:depth=2": (0, 2, 3)})
    text = summary(trained_4x4(), [point], [tmp_path / "curve.csv"])
    assert "against random: 1 win, 1 draw, 1 loss (33.3% wins, score 50.0%)" in text
    assert "against minimax:depth=2: 0 wins, 2 draws, 3 losses (0.0% wins, score 20.0%)" in text
    # Review: a run stopped between two evaluations showed the last one's figures under its own count of
    # episodes, as if they were measured there.
    table = trained_4x4()
    assert table.info["episodes"] != 10
    assert "  at the last evaluation, after 10 episodes:\n  against random: 1 win" in text


def test_training_asked_to_stop_ends_at_the_end_of_its_chunk_without_the_final_evaluation() -> None:
    asked = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) == 2

    table, curve = train(TrainConfig(board="4x4", episodes=10_000, seed=1), eval_every=0, eval_games=4,
                         chunk=1000, stop=stop)
    assert table.info["episodes"] == 2000 and curve == []


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_saves_the_table_and_the_curve_then_exits(tmp_path: Path, inherited: str) -> None:
    """Ctrl-C (SIGINT) stops training at the end of a chunk of episodes,
    saves what was learnt and exits with 130, also where the run started
    with SIGINT ignored (a script's background job).  An impatient person
    presses again and again until it has gone: that changes nothing."""
    out = tmp_path / "q.npz"
    status, stdout, stderr = ctrl_c_once_ready(
        ["train", "qlearning", "--board", "5x5", "--episodes", "1000000000", "--eval-games", "2", "--out", str(out)],
        "training 5x5", inherited, after=1.0, presses=60)  # some thousands of episodes
    assert status == 130, stderr
    assert "Traceback" not in stderr and "interrupted: the table" in stderr
    episodes = QTable.load(out).info["episodes"]
    assert 0 < episodes < 1_000_000_000 and f"{episodes:,} episodes" in stdout
    # stopped before its first evaluation (every 50 M episodes): no curve, and the summary says why
    assert not (tmp_path / "q-curve.csv").exists() and "no learning curve: no evaluation games" in stdout
    assert "interrupted: the table is saved (" in stderr and "curve" not in stderr  # it said "and the curve are"


SIGNAL_INSIDE_SET = """
import os, signal, sys
from c4lab.learning.qlearning import ctrl_c_stops

sent = 0

def tracer(frame, event, arg):  # a signal between every two lines of a method 'set' (three at most)
    if frame.f_code.co_name != "set":
        return None
    def line(frame, event, arg):
        global sent
        if event == "line" and sent < 3:
            sent += 1
            os.kill(os.getpid(), signal.SIGINT)
        return line
    return line

with ctrl_c_stops() as pressed:
    sys.settrace(tracer)
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass  # the handlers run here, one inside another
    sys.settrace(None)
print(pressed.is_set(), pressed.status, sent)
"""


def test_a_press_that_comes_while_the_last_one_is_being_handled_is_no_deadlock() -> None:
    """Python runs a signal's handler between any two bytecodes, another
    handler's included.  Training's flag was a ``threading.Event``: a
    press that came while the last press's handler held the event's lock
    waited for that lock for ever (CI290: the 60 presses of the test
    above hung a run).  Here a signal comes between every two lines of
    the flag's ``set``."""
    done = subprocess.run([sys.executable, "-c", SIGNAL_INSIDE_SET], capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[:2] == ["True", "130"], done.stdout


def test_a_kill_saves_the_table_as_ctrl_c_does(tmp_path: Path) -> None:
    """SIGTERM (``kill``, ``timeout``, a scheduler) saves the table and the
    curve as Ctrl-C does, with the shell's status for it, 143."""
    import signal

    out = tmp_path / "q.npz"
    status, _, stderr = ctrl_c_once_ready(
        ["train", "qlearning", "--board", "5x5", "--episodes", "1000000000", "--eval-games", "2", "--out", str(out)],
        "training 5x5", "default", after=1.0, signum=signal.SIGTERM)
    assert status == 143, stderr
    assert "Traceback" not in stderr and "stopped by a signal: the table" in stderr
    assert QTable.load(out).info["episodes"] > 0 and not (tmp_path / "q-curve.csv").exists()  # no evaluation yet


def test_train_qlearning_explains_bad_boards_and_options(tmp_path: Path) -> None:
    runner = CliRunner()
    big = runner.invoke(main, ["train", "qlearning", "--board", "9x9", "--out", str(tmp_path / "x.npz")])
    assert big.exit_code == 2 and "too large for a Q-table" in big.output
    bad = runner.invoke(main, ["train", "qlearning", "--rewards", "1,0.5", "--out", str(tmp_path / "x.npz")])
    assert bad.exit_code == 2 and "rewards must be three numbers WIN,DRAW,LOSS" in bad.output
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize(("board", "why"), [
    ("9x9", "9x9 is too large for a Q-table: its keys need 90 bits"),
    ("4x4:abababa", "the start position 4x4:abababa is already over (A (white) wins: four in a row)"),
    ("4x4:dz", "invalid position '4x4:dz': move 1 (the 2nd) 'z' at character 5"),
    ("random", "'random' draws a new board for each game, and a learner learns one board"),
])
def test_a_bad_board_names_the_option_before_any_work(tmp_path: Path, board: str, why: str) -> None:
    """Review: 'Error: 9x9 is too large for a Q-table' named no option,
    where train ntuple, arena and play name --board."""
    result = CliRunner().invoke(main, ["train", "qlearning", "--board", board, "--out", str(tmp_path / "x.npz")])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '--board': {why}"), result.output
    assert len(result.output.splitlines()) == 1 and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_first_training_run_compiles_no_error_messages(tmp_path: Path) -> None:
    """The training kernel's array copies (the start position, the table
    grown) are loops: numba's slice assignment compiled its shape-mismatch
    error, a message built with ``str``, once per array type (3.6 s of a
    first run)."""
    script = """
import json
from c4lab.learning.qlearning import TrainConfig, train
train(TrainConfig(board="4x4", episodes=3000, seed=1), eval_games=0)
print(json.dumps(compiled))
"""
    compiled = run_counting_compiles(script, tmp_path)
    assert "c4lab.learning.qlearning._train_episodes" in compiled
    assert not [name for name in compiled if "raise_with_shape" in name]


def test_a_new_run_never_overwrites_a_table(tmp_path: Path) -> None:
    out = tmp_path / "q.npz"
    first = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "2000",
                                      "--eval-games", "0", "--out", str(out)])
    assert first.exit_code == 0, first.output
    before = out.read_bytes()
    again = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "1000", "--out", str(out)])
    assert again.exit_code == 2 and "exists" in again.output and str(out) in again.output
    assert out.read_bytes() == before


def test_a_new_run_never_overwrites_a_curve(tmp_path: Path) -> None:
    first = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "2000", "--eval-games", "2",
                                      "--out", str(tmp_path / "q.npz"), "--curve", str(tmp_path / "c")])
    assert first.exit_code == 0, first.output
    before = {p: p.read_bytes() for p in tmp_path.iterdir()}
    again = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "1000",
                                      "--out", str(tmp_path / "q2.npz"), "--curve", str(tmp_path / "c")])
    assert again.exit_code == 2 and f"{tmp_path / 'c'}.csv exists: choose another --curve" in again.output
    assert {p: p.read_bytes() for p in tmp_path.iterdir()} == before  # nothing written, nothing overwritten


def test_no_evaluation_games_write_no_curve_and_the_summary_says_why(tmp_path: Path) -> None:
    """Review: ``--eval-games 0`` wrote a CSV of its header alone and a
    blank plot, and the summary named them as the learning curve."""
    result = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "2000", "--eval-games", "0",
                                       "--out", str(tmp_path / "q.npz")])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["q.npz"]
    assert "no learning curve: no evaluation games were played (--eval-games 0, " in result.output


def test_a_tilde_in_out_is_the_home_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``--out=~/q.npz`` reaches the command unexpanded (no shell expands it
    there): the table is written in the home folder, the folder that was
    checked, and the agent's ``table=~/q.npz`` reads it -- not ``./~/q.npz``."""
    home, here = tmp_path / "home", tmp_path / "here"
    home.mkdir()
    here.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(here)
    result = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "2000",
                                       "--eval-games", "0", "--out=~/q.npz"])
    assert result.exit_code == 0, result.output
    assert QTable.load(home / "q.npz").info["episodes"] == 2000 and list(here.iterdir()) == []
    move = CliRunner().invoke(main, ["move", "4x4", "--agent", "qlearning:table=~/q.npz"])
    assert move.exit_code == 0 and move.output.strip() in "abcd", move.output


def test_the_start_position_is_printed_as_typed_not_as_an_emoji_code(tmp_path: Path) -> None:
    # "training 4x4:b: ..." held rich's emoji code ":b:": the line read "training 4x4🅱 1,000 episodes"
    result = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4:b", "--episodes", "1000",
                                       "--eval-games", "0", "--out", str(tmp_path / "q.npz")])
    assert result.exit_code == 0, result.output
    assert "training 4x4:b: 1,000 episodes" in result.stderr


def test_on_a_narrow_terminal_the_progress_line_cuts_the_scores_short_not_the_bar() -> None:
    # on 80 columns the last evaluation's scores left of the board, the bar, the counts and the times only
    # "4… 154,834 ep/s, ..."; on 120 the counts and the time left read "15000…" and "-:--:…"
    fields = {"speed": 154_834.0, "states": 50_492, "eps": 0.05, "last": ", wins 80% vs random, 50% vs minimax:depth=2"}
    for width in (80, 120):
        line = progress_line(progress_columns(), width, "4x4:b", 300_000, 150_000, **fields)
        assert len(line) <= width and line.startswith("4x4:b ━━━━━━━━━━━━")
        assert "150000/300000 0:00:00 -:--:-- 154,834 ep/s" in line and line.endswith("…")
    assert "eps 0.05, wins 80% vs rand" in progress_line(progress_columns(), 120, "4x4:b", 300_000, 150_000, **fields)
    assert progress_line(progress_columns(), 200, "4x4:b", 300_000, 150_000, **fields).endswith(
        "eps 0.05, wins 80% vs random, 50% vs minimax:depth=2")


def test_a_table_file_named_other_than_npz_is_refused_before_the_run(tmp_path: Path) -> None:
    """``--out q.txt`` wrote a NumPy archive under a text file's name: the
    name must say what the file is, and the message gives the one to use."""
    result = CliRunner().invoke(main, ["train", "qlearning", "--board", "4x4", "--episodes", "1000",
                                       "--out", str(tmp_path / "q.txt")])
    assert result.exit_code == 2, result.output
    assert (f"{tmp_path / 'q.txt'}: a table file's name ends in .npz (it is a NumPy archive, read back by "
            f"table=FILE): give --out {tmp_path / 'q.npz'}") in result.output
    assert list(tmp_path.iterdir()) == []
