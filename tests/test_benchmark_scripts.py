"""The scripts of benchmarks/: they refuse bad options with one clear line
(no traceback, no hang, no minutes of work first), run with tiny settings
and say what they measured, and the pages show command lines they take."""

from __future__ import annotations

import os
import re
import runpy
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from testkit import register_misbehaving

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / name), *args], check=False, capture_output=True,
                          text=True, timeout=120, env=env)


def one_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a refused run (argparse's usage lines aside)."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize(("args", "words"), [
    (["--pairs", "0"], ["--pairs", "got 0"]),                       # was: ZeroDivisionError
    (["--seconds", "0"], ["--seconds", "above 0"]),                 # was: OpenSpiel searched without end
    (["--seconds", "inf"], ["--seconds"]),
    (["--boards", "7x6,7x6/Xd1"], ["--boards", "7x6/Xd1", "plain boards only"]),
    (["--boards", "7y6"], ["--boards", "invalid position '7y6'"]),
    (["--agent", "nosuch"], ["--agent", "unknown agent 'nosuch'"]),
    (["--agent", "master:time=-1"], ["--agent", "time"]),
    (["--agent", "human"], ["--agent", "agent 'human' is a human: vs_openspiel.py plays agents only"]),  # was: a
    # traceback once the first game read the end of stdin
])
def test_vs_openspiel_refuses_bad_options(args: list[str], words: list[str]) -> None:
    one_error(run_script("vs_openspiel.py", *args), *words)


def test_vs_openspiel_plays_its_pairs_and_says_what_it_measured() -> None:
    """A tiny run (one opening of 4x4, two games): the opponent, its time
    a move and the scoring named, then a line per board and the total, in
    games (was: no word of OpenSpiel or of the scoring, and 'scores 1.5/2')."""
    pytest.importorskip("pyspiel")
    done = run_script("vs_openspiel.py", "--agent", "random", "--seconds", "0.01", "--boards", "4x4", "--pairs", "1")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    head, board, total = done.stdout.splitlines()
    assert head == "random against OpenSpiel's MCTSBot (0.01 s a move, random rollouts), 2 games a board; " \
                   "score: wins 1, draws 1/2", head
    assert board.split()[:3] == ["4x4:", "random", "scores"] and " of 2 games (" in board, board
    assert total.split()[:3] == ["total:", "random", "scores"] and " of 2 games (" in total, total


def test_vs_bitbully_refuses_a_negative_count() -> None:
    one_error(run_script("vs_bitbully.py", "--random", "-1"), "--random", "got -1")


def test_vs_bitbully_refuses_a_named_environment_that_is_not_one(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    one_error(run_script("vs_bitbully.py", "--venv", str(missing)), "--venv", str(missing), "pip install bitbully")
    env = dict(os.environ, C4LAB_BITBULLY_VENV=str(missing))
    one_error(run_script("vs_bitbully.py", env=env), "$C4LAB_BITBULLY_VENV", str(missing))


def test_vs_bitbully_says_why_bitbully_did_not_run(tmp_path: Path) -> None:
    """An environment without BitBully: its own message, not a traceback of
    CalledProcessError with the whole driving program in it."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'bitbully'\" >&2\nexit 1\n")
    python.chmod(0o755)
    done = run_script("vs_bitbully.py", "--venv", str(python.parents[1]), "--random", "0")
    line = one_error(done, "No module named 'bitbully'", "pip install bitbully")
    assert "import json" not in line
    assert done.returncode == 2 and not done.stdout, done.stdout  # a bad --venv, as one with no Python


def test_vs_bitbully_says_what_it_does_at_once_and_why_it_stopped(tmp_path: Path) -> None:
    """BitBully answers position by position, so the table's header and a
    line on stderr come at once (it was a minute of silence: BitBully
    solved every position before the first line); a BitBully that stops
    answering in the middle stops the run with one line that says so."""
    python = tmp_path / "venv" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho ready\nread line\necho 'Killed: out of memory' >&2\nexit 137\n")
    python.chmod(0o755)
    done = run_script("vs_bitbully.py", "--venv", str(python.parents[1]), "--random", "0")
    assert done.stdout.split() == ["position", "score", "c4lab", "CPU", "s", "c4lab", "nodes", "BitBully", "CPU",
                                   "s", "BB", "nodes"], done.stdout
    first, *rest = done.stderr.splitlines()
    assert first.startswith("2 positions, each solved by BitBully, then c4lab, and printed at once"), first
    assert "Traceback" not in done.stderr and len(rest) == 1, done.stderr
    assert rest[0].endswith("could not solve 7x6:dddd: Killed: out of memory (install it there: "
                            f"{python} -m pip install bitbully)"), rest[0]
    assert done.returncode == 1


@pytest.mark.parametrize("args", [["--warm-runs", "0"], ["--cold-runs", "-1"]])
def test_first_move_refuses_counts_below_one(args: list[str]) -> None:
    """Was: quietly run once, as though 1 had been given."""
    one_error(run_script("first_move.py", *args, "--only", "show 7x6"), args[0], f"got {args[1]}")


def test_first_move_takes_several_names_after_one_only() -> None:
    """``--only NAME ...`` as its usage line shows: a row for each name
    (was: 'unrecognized arguments' for every name after the first)."""
    done = run_script("first_move.py", "--only", "show 7x6", "show 7x6", "--warm-runs", "1")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    head, *rows = done.stdout.splitlines()
    assert head.split()[0] == "case" and [row.split()[:2] for row in rows] == [["show", "7x6"]] * 2, done.stdout


@pytest.mark.parametrize(("args", "words"), [
    (["--games", "0", "random"], ["--games", "got 0"]),            # was: quietly 1
    (["nosuch", "--board", "4x4"], ["unknown agent 'nosuch'"]),    # was: a failure line per board, after each started
    (["human", "--board", "4x4"], ["agent 'human' is a human"]),  # was: "failed: ...QuitGame" on each board
    (["random", "--board", "7y6"], ["--board", "invalid position '7y6'"]),
    # --board B ..., as the usage line shows (was: the second board an agent, or 'unrecognized arguments')
    (["--board", "7x6", "7y6", "random"], ["--board", "invalid position '7y6'"]),
    (["--board", "7x6", "hard"], ["--board", "invalid position 'hard'", "name the agents before --board"]),
])
def test_compiles_in_game_refuses_bad_options(args: list[str], words: list[str]) -> None:
    one_error(run_script("compiles_in_game.py", *args), *words)


def test_load_server_refuses_a_negative_kill_time() -> None:
    """Was: a ValueError from time.sleep once the server and the rooms were up."""
    one_error(run_script("load_server.py", "--kill", "--kill-after", "-5", "--rooms", "2"), "--kill-after", "-5")


@pytest.mark.parametrize(("args", "words"), [
    (["--rooms", "2", "0"], ["--rooms", "got 0"]),       # was: "--rooms, --drivers and --duration must be positive"
    (["--drivers", "0"], ["--drivers", "got 0"]),
    (["--duration", "0"], ["--duration", "got 0"]),
    (["--duration", "nan"], ["--duration", "got nan"]),
    (["--port", "70000"], ["--port", "got 70000"]),
])
def test_load_server_names_the_bad_option(args: list[str], words: list[str]) -> None:
    one_error(run_script("load_server.py", *args), *words)


def test_load_server_refuses_a_port_taken(tmp_path: Path) -> None:
    """``--port`` that another program listens on: one line before any server starts."""
    import socket  # lazy: only this test holds a port

    from c4lab.server.run import free_port  # lazy: as above

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", free_port()))
        taken.listen()
        port = str(taken.getsockname()[1])
        one_error(run_script("load_server.py", "--port", port, "--rooms", "2"), "--port", port, "cannot listen")


def run_load_server(*args: str) -> subprocess.CompletedProcess[str]:
    """``load_server.py ARGS --drivers 1`` on a free port of its own, in its
    own session: a run that hangs is ended with its server and driver, and
    fails the test."""

    from c4lab.server.run import free_port  # lazy: as above

    command = [sys.executable, str(BENCHMARKS / "load_server.py"), *args, "--drivers", "1", "--port", str(free_port())]
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=180)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
    return subprocess.CompletedProcess(command, proc.returncode, stdout, stderr)


def load_rows(done: subprocess.CompletedProcess[str]) -> list[list[str]]:
    """The fields of each row of a run's table, under its checked header."""
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    head, *rows = done.stdout.splitlines()[1:]
    assert head.split()[:4] == ["rooms", "moves/s", "p50", "ms"], done.stdout
    assert "RSS MiB peak MiB srv CPU" in " ".join(head.split()), head  # the peak's unit was not said
    return [row.split() for row in rows]


def test_load_server_help_says_what_each_column_measures() -> None:
    """The table's last two columns (games, setup s) were said nowhere, and
    the memory's peak had no unit."""
    text = " ".join(run_script("load_server.py", "--help").stdout.split())
    for words in ("resident memory at the end and at its peak (MiB", "the games finished in the window",
                  "the seconds it took to make the rooms and seat their players"):
        assert words in text, text


@pytest.mark.parametrize("duration", ["1", "2"])
def test_load_server_runs_its_rooms_on_the_port_given(duration: str) -> None:
    """A tiny run (2 rooms, a second or two) on ``--port`` (a shared machine
    gives each user a few ports): the table's row, no error and no lost
    move.  Was: no ``--port``; and a window shorter than the first move's
    think (1-3 s) never ended, its players waiting for a move none would send."""
    [fields] = load_rows(run_load_server("--rooms", "2", "--duration", duration))
    assert fields[0] == "2" and fields[-4:-2] == ["0", "0"], fields  # 2 rooms, 0 errors, 0 lost
    assert "nan" not in fields, fields  # no move in the window: '-' for its round trips (was: nan)


def test_load_server_lifts_the_servers_cap_on_sockets_from_one_address() -> None:
    """51 rooms are 102 sockets from 127.0.0.1, over ``c4lab serve``'s
    ``--sockets-per-client`` (100): lifted like the server's other caps
    (was: every socket past the 100th refused and opened again without
    end, so that no run of 51 rooms or more, the published 500 to 5,000
    among them, ever began)."""
    [fields] = load_rows(run_load_server("--rooms", "51", "--duration", "2"))
    assert fields[0] == "51" and fields[-4:-2] == ["0", "0"], fields  # no error, no lost move


def test_load_server_ends_when_the_server_refuses_a_socket() -> None:
    """A cap passed on with ``--server-option``: the refused seat counts as
    an error, named under the row, and the run ends (was: reopened for
    ever)."""
    done = run_load_server("--rooms", "2", "--duration", "1", "--server-option=--sockets-per-client=3")
    [fields] = load_rows(done)[:1]
    assert fields[0] == "2" and int(fields[-4]) >= 1, fields
    assert "'error rate-limited': 1" in done.stdout, done.stdout


def test_load_server_says_why_the_server_did_not_start() -> None:
    """Was: 'see /tmp/c4lab-load-.../server-2.log', a file in a temporary
    folder removed as the script exited."""
    done = run_script("load_server.py", "--server-option=--bogus", "--rooms", "2", "--duration", "1")
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert "exited at start" in done.stderr and "--bogus" in done.stderr and ".log" not in done.stderr, done.stderr


@pytest.mark.parametrize(("args", "words"), [
    (["--weights", "/nonexistent.npz"], ["--weights", "does not exist"]),    # was: a NetworkError traceback
    (["--perfect-games", "-5"], ["--perfect-games", "got -5"]),            # was: 'wins 0/-5 (-0%)'
    (["--specs", "nosuch"], ["--specs", "unknown agent 'nosuch'"]),        # was: a traceback after the networks
    (["--specs", "heuristic,human"], ["--specs", "agent 'human' is a human"]),  # was: a traceback at stdin's end
])
def test_ntuple_strength_refuses_bad_options(args: list[str], words: list[str]) -> None:
    one_error(run_script("ntuple_strength.py", *args), *words)


def test_ntuple_strength_help_says_what_each_figure_measures() -> None:
    """``--help`` has the measures and each option's default (was: the
    docstring's first line, and seven options with no word of help)."""
    done = run_script("ntuple_strength.py", "--help")
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    for words in ("Value-keeping moves", "Against varied perfect play", "Against perfect play", "Games",
                  "--probes PROBES probe positions judged by the solver (default 400",
                  "--games GAMES games of each network against random, normal and hard (default 100",
                  "--perfect PERFECT winning 2-move openings played against perfect (default 20"):
        assert words in text, text


def test_ntuple_strength_ends_where_no_opening_is_a_win(tmp_path: Path) -> None:
    """5x4: no 2-move opening is a win for A, so ``--perfect`` drew openings
    for ever; now it says so and ends."""
    from c4lab.agents.ntuple_net import Network  # lazy: only this test makes a network
    from c4lab.rules import Position  # lazy: as above

    net = tmp_path / "net.npz"
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(net)
    done = run_script("ntuple_strength.py", "--weights", str(net), "--probes", "0", "--games", "0",
                      "--perfect-games", "0", "--perfect", "1", "--search", "0", "--puct", "0", "--puct-time", "0")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "none: no 2-move opening of 5x4 is a win for A" in done.stdout, done.stdout


def test_ntuple_strength_names_each_network_by_its_label_on_the_probes(tmp_path: Path) -> None:
    """The value-keeping table names the networks as the games' table does
    (greedy, alpha-beta T s, PUCT N), then each of ``--specs`` (was: each
    network's whole spec, with the weights' full path, past the column)."""
    from c4lab.agents.ntuple_net import Network  # lazy: only these tests make a network
    from c4lab.rules import Position  # lazy: as above

    net = tmp_path / "net.npz"
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(net)
    done = run_script("ntuple_strength.py", "--weights", str(net), "--probes", "3", "--games", "0",
                      "--perfect-games", "0", "--perfect", "0", "--search", "0.01", "--puct", "10",
                      "--puct-time", "0", "--specs", "random")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = done.stdout.split("judged by the solver):\n")[1].splitlines()
    assert [row.split("  ")[1].strip() for row in rows] == ["greedy", "alpha-beta 0.01 s", "PUCT 10", "random"], rows
    for row in rows:  # each with the plies of its misses, counted, where it has any
        shown = re.search(r" (\d+\.\d)%  \(\d+ s\)(?:; misses by ply: (\d+: \d+(?:, \d+: \d+)*))?$", row)
        assert shown, row
        missed = sum(int(pair.split(": ")[1]) for pair in shown[2].split(", ")) if shown[2] else 0
        assert missed == round(3 * (1 - float(shown[1]) / 100)), row
    assert str(net) not in done.stdout.split("\n", 1)[1], done.stdout  # the path only on the first line


def test_ntuple_strength_takes_specs_with_parameters_of_their_own(tmp_path: Path) -> None:
    """``--specs ntuple:time=0.2,threads=2``, as the README measures the
    network on two threads: one agent with both parameters, beside another
    (was: 'unknown agent 'threads=2'')."""
    from c4lab.agents.ntuple_net import Network  # lazy: only these tests make a network
    from c4lab.rules import Position  # lazy: as above

    net = tmp_path / "net.npz"
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(net)
    done = run_script("ntuple_strength.py", "--weights", str(net), "--probes", "2", "--games", "0",
                      "--perfect-games", "0", "--perfect", "0", "--search", "0", "--puct", "0", "--puct-time", "0",
                      "--specs", "uct:iterations=50,seed=3,random")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    rows = done.stdout.split("judged by the solver):\n")[1].splitlines()
    assert [row.split("  ")[1].strip() for row in rows] == ["greedy", "uct:iterations=50,seed=3", "random"], rows


def test_load_server_checks_profile_before_it_starts(tmp_path: Path) -> None:
    """--profile DIR: a profile already there is not overwritten, and without
    py-spy the run stops before any server starts (was: exit status 1 after
    the server and its rooms were up, and an older profile overwritten)."""
    (tmp_path / "server-2.txt").write_text("an earlier run\n")
    done = run_script("load_server.py", "--profile", str(tmp_path), "--rooms", "3", "2", "--duration", "1")
    assert done.returncode == 2, done.stderr
    one_error(done, "--profile", str(tmp_path / "server-2.txt"), "not overwritten")
    assert (tmp_path / "server-2.txt").read_text() == "an earlier run\n"
    assert "rooms" not in done.stdout, done.stdout
    if not (shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")):
        done = run_script("load_server.py", "--profile", str(tmp_path / "new"), "--rooms", "2", "--duration", "1")
        assert done.returncode == 2, done.stderr
        one_error(done, "--profile", "py-spy")
        assert "rooms" not in done.stdout and not (tmp_path / "new").exists(), done.stdout


@pytest.mark.parametrize("args", [["--reps", "5"], ["--sprt-reps", "0"]])
def test_stats_coverage_refuses_too_few_simulations(args: list[str]) -> None:
    one_error(run_script("stats_coverage.py", *args), "--reps is 10 or more and --sprt-reps 1 or more")


def test_stats_coverage_says_how_often_each_figure_got_the_truth() -> None:
    """A tiny run of two sections: each says what it measured, then one
    share a case and match length, and how long it took."""
    done = run_script("stats_coverage.py", "--only", "intervals", "null", "--reps", "20")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "Games' 95% interval: how often it holds the true Elo (independent games)"
    assert lines[1].startswith("  W/D/L (0.45, 0.1, 0.45) Elo     +0:  50 games ") and lines[1].endswith("%")
    assert "Equal agents called unequal at the 5% level (Wald p / sign test p / LOS > 97.5%)" in lines


def _benchmark_command_lines() -> list[tuple[str, str, list[str]]]:
    """(where, script, options) of every ``python3 benchmarks/NAME.py ...``
    the README and the manual's pages show (up to a backquote, a table's
    bar or a comment)."""
    root = BENCHMARKS.parent
    found = []
    for page in [root / "README.md", *sorted((root / "docs").glob("*.md"))]:
        if page.name == "changelog.md":
            continue  # history: the commands as they were then
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            for match in re.finditer(r"python3 benchmarks/(\w+\.py)([^`|#(\n]*)", line):
                options = [word.split("=")[0] for word in match.group(2).split() if word.startswith("--")]
                found.append((f"{page.name}:{number}", match.group(1), options))
    return found


def test_the_pages_show_benchmark_command_lines() -> None:
    assert {script for _, script, _ in _benchmark_command_lines()} >= {
        "vs_openspiel.py", "vs_bitbully.py", "ntuple_strength.py", "compiles_in_game.py", "load_server.py"}


@pytest.mark.parametrize("script", sorted({script for _, script, _ in _benchmark_command_lines()}))
def test_every_benchmark_command_shown_names_a_script_and_options_it_has(script: str) -> None:
    """The pages that quote a benchmark's figures say how to run it: the
    script is there, and each option a page gives it is one its ``--help``
    lists."""
    assert (BENCHMARKS / script).is_file(), script
    done = run_script(script, "--help")
    assert done.returncode == 0, done.stderr
    known = set(re.findall(r"--[a-z][a-z-]*", done.stdout))
    for where, named, options in _benchmark_command_lines():
        if named == script:
            assert set(options) <= known, f"{where}: {script} has no {sorted(set(options) - known)}"


ENGINE = BENCHMARKS.parent / "examples" / "engine" / "simple_engine.py"


def run_in_process(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str,
                   *args: str) -> subprocess.CompletedProcess[str]:
    """``run_script`` in this process, as ``python3 benchmarks/NAME ARGS``
    runs it: an agent registered for one test (``register_misbehaving``)
    is one it can name.  A traceback would be the exception itself, failing
    the test."""
    monkeypatch.setattr(sys, "argv", [name, *args])
    code: int | str | None = 0
    try:
        runpy.run_path(str(BENCHMARKS / name), run_name="__main__")
    except SystemExit as stop:
        code = stop.code
    out, err = capsys.readouterr()
    return subprocess.CompletedProcess([name, *args], code, out, err)


@pytest.mark.parametrize(("how", "words"), [
    ("number", "player A (misbehaving:how=number) answered 3, which is not a move"),
    ("raise", "player A (misbehaving:how=raise) raised RuntimeError: my agent's own bug at "),
])
def test_vs_openspiel_counts_a_bad_answer_as_a_game_lost_by_forfeit(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], how: str, words: str
) -> None:
    """An agent that answers no legal move, or fails, loses each game by
    forfeit, counted in its score and told in one line under the board's
    (was: a ValueError traceback at its first move, nothing printed)."""
    pytest.importorskip("pyspiel")
    spec = f"{register_misbehaving(monkeypatch)}:how={how}"
    done = run_in_process(monkeypatch, capsys, "vs_openspiel.py", "--agent", spec, "--seconds", "0.01",
                          "--boards", "4x4", "--pairs", "1")
    assert done.returncode == 0 and not done.stderr, done.stderr
    _, board, forfeits, total = done.stdout.splitlines()
    assert board.startswith(f"   4x4: {spec} scores 0.0 of 2 games (0%) in "), board
    assert forfeits.startswith("        2 games lost by forfeit (an answer that was no legal move, or an agent that "
                               "failed); the first: move 3 of the game: "), forfeits
    assert words in forfeits, forfeits
    assert total == f" total: {spec} scores 0.0 of 2 games (0%)", total


def test_vs_openspiel_plays_an_engine_program() -> None:
    """``engine:cmd=...`` as the manual says an engine works wherever
    agents do (was: 'unknown agent 'engine''); one that does not start is
    one line."""
    pytest.importorskip("pyspiel")
    spec = f"engine:cmd={sys.executable} {ENGINE}"
    done = run_script("vs_openspiel.py", "--agent", spec, "--seconds", "0.01", "--boards", "4x4", "--pairs", "1")
    assert done.returncode == 0 and not done.stderr, done.stderr
    _, board, total = done.stdout.splitlines()
    assert board.startswith(f"   4x4: {spec} scores ") and " of 2 games (" in board, board
    assert total.startswith(f" total: {spec} scores "), total
    one_error(run_script("vs_openspiel.py", "--agent", "engine:cmd=/nonexistent/engine"),
              "--agent", "cannot start engine '/nonexistent/engine'")


def _stopped_while_running(
    command: list[str], running: Callable[[int], list[int]], stop: signal.Signals
) -> tuple[int, str, list[int]]:
    """Start ``command``, wait until ``running(its pid)`` finds the
    processes it started (an engine, a command it times), then send it
    ``stop``: its exit status, its stderr and those processes."""
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        try:
            deadline = time.monotonic() + 60
            while not (found := running(proc.pid)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert found, f"{command[1]} started nothing within 60 s"
            proc.send_signal(stop)
            _, stderr = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
    return proc.returncode, stderr, found


def _running(path: Path) -> list[int]:
    """The live processes whose command line names ``path``."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and str(path).encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:  # ended while looked at
            continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the engine's process in /proc")
def test_vs_openspiel_ends_its_engine_on_ctrl_c(tmp_path: Path) -> None:
    """Ctrl-C in the middle of the games: the line 'interrupted', status
    130 as a shell gives it, no traceback, and the engine's program ended
    with the run."""
    pytest.importorskip("pyspiel")
    engine = tmp_path / "engine_for_ctrl_c.py"  # a path of its own: its process is found by it
    shutil.copy(ENGINE, engine)
    command = [sys.executable, str(BENCHMARKS / "vs_openspiel.py"), "--agent", f"engine:cmd={sys.executable} {engine}",
               "--seconds", "0.01", "--boards", "7x6", "--pairs", "10000"]
    status, stderr, _ = _stopped_while_running(  # (the engine's path is in the script's command line too)
        command, lambda pid: [other for other in _running(engine) if other != pid], signal.SIGINT)
    assert status == 130 and stderr == "interrupted\n", stderr
    deadline = time.monotonic() + 10  # the engine's own 'quit' grace, then its process group killed
    while _running(engine) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _running(engine), "the engine's program outlived the run"


def test_ntuple_strength_judges_an_engine_and_counts_bad_answers_as_misses(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """``--specs`` takes an engine program's spec (was: 'unknown agent
    'engine''), and an agent that answers no legal move has its probes
    missed, said in its row, while the other rows are measured (was: an
    IllegalMoveError traceback that lost the rest of the run)."""
    from c4lab.agents.ntuple_net import Network  # lazy: only these tests make a network
    from c4lab.rules import Position  # lazy: as above

    net = tmp_path / "net.npz"
    Network.create(Position.parse("5x4").variant, tuples=4, length=4).save(net)
    bad = f"{register_misbehaving(monkeypatch)}:how=number"
    engine = f"engine:cmd={sys.executable} {ENGINE}"
    done = run_in_process(monkeypatch, capsys, "ntuple_strength.py", "--weights", str(net), "--probes", "2",
                          "--games", "0", "--perfect-games", "0", "--perfect", "0", "--search", "0", "--puct", "0",
                          "--puct-time", "0", "--specs", f"{engine},{bad},random")
    assert done.returncode == 0 and not done.stderr, done.stderr
    rows = done.stdout.split("judged by the solver):\n")[1].splitlines()
    assert [row.split("  ")[1].strip() for row in rows] == ["greedy", engine, bad, "random"], rows
    assert re.search(r" \d+\.\d%  \(\d+ s\)", rows[1]) and "failed" not in rows[1], rows[1]
    assert re.search(rf"{re.escape(bad)} +0\.0%  \(", rows[2]), rows[2]  # both probes missed
    assert re.search(r"; misses by ply: \d+: \d+(, \d+: \d+)?; 2 answered no legal move or failed, the first: "
                     r"illegal move '3' in '5x4:\w+': agent 'misbehaving:how=number' answered 3, which is not a "
                     r"move$", rows[2]), rows[2]


def _children(pid: int) -> list[int]:
    """The live processes whose parent is ``pid`` (from ``/proc``)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and int((proc / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(proc.name))
        except (OSError, IndexError, ValueError):  # ended while looked at
            continue
    return found


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the command measured in /proc")
def test_first_move_stopped_by_a_signal_says_so_and_ends_the_command_it_measures() -> None:
    """A ``kill`` (SIGTERM) while a command is being timed: the line
    'stopped by a signal', status 143 as a shell gives it, no traceback,
    and the ``c4lab`` command it was timing ended with it (was: a traceback
    from ``os.wait4``, and the command ran on, an orphan)."""
    command = [sys.executable, str(BENCHMARKS / "first_move.py"), "--only", "show 7x6", "--warm-runs", "1000"]
    status, stderr, timed = _stopped_while_running(command, _children, signal.SIGTERM)
    assert status == 143 and stderr == "stopped by a signal\n", stderr
    for pid in timed:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
