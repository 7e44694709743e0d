"""``c4lab prepare``: every agent's kernels compiled ahead, on one board of
each kind, so that no later first move on any board compiles."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from c4lab.agents import prepare
from c4lab.agents.base import agent_infos
from c4lab.agents.prepare import (
    BACKGROUND_ENV,
    KIND_BOARDS,
    MAX_WORKERS,
    VARIANTS,
    agent_names,
    plan,
    with_variants,
    worker_count,
)
from c4lab.rules import Position
from c4lab.rules import kernels as K
from c4lab.solver.bitboard import is_wide
from testkit import run_counting_compiles


def kind(board: str) -> tuple[bool, bool, bool]:
    """What the compiled code is specialised on: the rules' kind (bonus,
    one-word win test) and whether the solver needs three words."""
    position = Position.parse(board)
    has_bonus, bitboard = K.board_kind(position.kernel_arrays()[0])
    return has_bonus, bitboard, is_wide(position.variant)


def test_the_prepared_boards_are_one_of_each_kind_and_cover_every_board() -> None:
    prepared = [kind(board) for board in KIND_BOARDS]
    assert len(set(prepared)) == len(prepared)
    for width in range(4, 13):
        for height in range(4, 13):
            for bonus in ("", "/Ba1"):
                assert kind(f"{width}x{height}{bonus}") in prepared, f"{width}x{height}{bonus}"


def test_the_classic_board_is_prepared_for_its_opening_database() -> None:
    assert "7x6" in KIND_BOARDS  # the solver's lookup in the classic database is compiled there only


def test_workers_are_one_per_core_at_most_four_and_never_more_than_the_work() -> None:
    assert worker_count(None, 76) <= MAX_WORKERS == 4
    assert worker_count(3, 76) == 3 and worker_count(8, 2) == 2 and worker_count(None, 1) == 1


def test_the_plan_warms_every_agent_once_on_each_board() -> None:
    names = agent_names()
    tasks = plan(names)
    assert Counter(tasks) == Counter((name, board) for name in names for board in KIND_BOARDS)


def test_the_options_that_run_code_of_their_own_come_with_their_agent() -> None:
    assert with_variants(["hard", "ntuple"]) == ["hard", "ntuple", "ntuple:depth=2"]
    assert with_variants(agent_names())[-len(VARIANTS):] == list(VARIANTS)


def test_two_workers_start_on_different_boards_and_agents() -> None:
    (first_agent, first_board), (second_agent, second_board) = plan(["hard", "master", "perfect"])[:2]
    assert first_board != second_board
    assert first_agent != second_agent


def test_an_odd_board_out_is_warmed_too() -> None:
    assert plan(["hard", "perfect"], ["7x6", "9x8", "5x4/Bb1"])[-2:] == [("hard", "5x4/Bb1"), ("perfect", "5x4/Bb1")]


def test_the_agents_are_those_that_can_be_made_here_and_not_a_person() -> None:
    names = agent_names()
    assert "master" in names and "perfect" in names and "ntuple" in names
    assert "human" not in names
    for info in agent_infos():
        if info.unavailable is not None:
            assert info.name not in names


def test_with_numbas_compiler_off_there_is_nothing_to_prepare() -> None:
    out = subprocess.run([sys.executable, "-m", "c4lab", "prepare"], env=dict(os.environ, NUMBA_DISABLE_JIT="1"),
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "numba's compiler is off (NUMBA_DISABLE_JIT): nothing to prepare"


@pytest.fixture
def sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A c4lab of two source files for the stamp to read, and the stamp
    kept in ``tmp_path``."""
    package = tmp_path / "c4lab"
    (package / "agents").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "agents" / "prepare.py").write_text("# the module\n")
    monkeypatch.setattr(prepare, "__file__", str(package / "agents" / "prepare.py"))
    monkeypatch.setattr(prepare, "_stamp_path", lambda: tmp_path / "stamp")
    monkeypatch.delenv(BACKGROUND_ENV, raising=False)
    return package


def test_a_whole_prepare_is_stamped_and_a_changed_source_makes_the_stamp_stale(sources: Path) -> None:
    assert not prepare.is_prepared() and prepare.wanted_in_background()
    prepare.mark_prepared()
    assert prepare.is_prepared() and not prepare.wanted_in_background()
    changed = sources / "__init__.py"
    changed.write_text("x = 1\n")  # another size, another time: numba compiles that file's kernels again
    assert not prepare.is_prepared() and prepare.wanted_in_background()


def test_another_numba_or_another_set_of_agents_makes_the_stamp_stale(
    sources: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numba

    prepare.mark_prepared()
    installed = numba.__version__
    monkeypatch.setattr(numba, "__version__", "0.0.1")
    assert not prepare.is_prepared()
    monkeypatch.setattr(numba, "__version__", installed)
    assert prepare.is_prepared()
    monkeypatch.setattr(prepare, "agent_names", lambda: ["random", "hard"])  # kaggle's package removed, say
    assert not prepare.is_prepared()


def test_a_damaged_stamp_is_no_stamp(sources: Path) -> None:
    (sources.parent / "stamp").write_bytes(b"\xff\xfe not a digest")
    assert not prepare.is_prepared()


def test_the_prepare_in_the_background_can_be_turned_off(sources: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(BACKGROUND_ENV, "0")
    assert not prepare.wanted_in_background()


@pytest.fixture(autouse=True)
def two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's prepare in the background as on a machine of two cores
    (this one's, and CI's), whatever this one has."""
    from c4lab.server import warmup

    monkeypatch.setattr(warmup, "usable_cores", lambda: 2)


class _Child:
    """A stand-in for ``compile_aside.Aside``: ends with ``status`` when joined."""

    def __init__(self, status: int) -> None:
        self.status = status
        self.stopped = False

    def join(self) -> int:
        return self.status

    def stop(self) -> None:
        self.stopped = True


@pytest.mark.parametrize("shipped", [False, True])
def test_a_server_starts_the_prepare_where_it_is_wanted_and_says_so(
    shipped: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its last line says what changes: where the server runs the code
    shipped compiled, only the speed of later starts."""
    from c4lab import compile_aside, precompiled
    from c4lab.server.warmup import PrepareAhead

    monkeypatch.setattr(precompiled, "usable", lambda: shipped)

    started: list[tuple[str, bool]] = []
    child = _Child(0)

    def start(target: str, ahead: bool = False) -> _Child:
        started.append((target, ahead))
        return child

    monkeypatch.setattr(compile_aside, "start", start)
    monkeypatch.setattr(compile_aside, "enabled", lambda: True)
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    lines: list[str] = []
    ahead = PrepareAhead(lines.append)
    ahead()
    assert started == [("c4lab.agents.prepare:prepare_everything", True)]  # at a low priority
    assert lines[0].startswith("compiling the engine for every agent and kind of board in the background, once")
    assert "C4LAB_PREPARE_IN_BACKGROUND=0 turns it off" in lines[0]
    assert lines[1].startswith("the engine is compiled for every agent and kind of board (")
    if shipped:
        assert lines[1].endswith(", for this processor: later starts run that, 10-30 % faster than the code "
                                 "shipped compiled")
    else:
        assert lines[1].endswith(": no first move waits for the compiler now")
    ahead.stop()
    assert child.stopped


def test_a_server_starts_no_prepare_where_it_was_made_or_after_it_stopped(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4lab import compile_aside
    from c4lab.server.warmup import PrepareAhead

    started: list[str] = []
    monkeypatch.setattr(compile_aside, "start", lambda target, ahead=False: started.append(target) or _Child(0))
    monkeypatch.setattr(compile_aside, "enabled", lambda: True)
    lines: list[str] = []
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: False)  # stamped, or turned off
    PrepareAhead(lines.append)()
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    stopped = PrepareAhead(lines.append)
    stopped.stop()  # the server stopped before its warm-ups were done
    stopped()
    assert started == [] and lines == []


def test_a_prepare_that_fails_or_is_stopped_is_not_said_to_be_done(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4lab import compile_aside
    from c4lab.server.warmup import PrepareAhead

    monkeypatch.setattr(compile_aside, "start", lambda target, ahead=False: _Child(1))
    monkeypatch.setattr(compile_aside, "enabled", lambda: True)
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    lines: list[str] = []
    PrepareAhead(lines.append)()
    assert len(lines) == 1 and lines[0].startswith("compiling the engine")


def test_on_one_core_a_server_starts_no_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4lab import compile_aside
    from c4lab.server import warmup

    started: list[str] = []
    monkeypatch.setattr(compile_aside, "enabled", lambda: False)  # what one core gives: it would wait for ever
    monkeypatch.setattr(compile_aside, "start", lambda target, ahead=False: started.append(target) or _Child(0))
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    monkeypatch.setattr(warmup, "usable_cores", lambda: 1)
    warmup.PrepareAhead(print)()  # returns at once
    assert started == []


def test_on_a_busy_machine_the_prepare_waits_for_a_free_core(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4lab import compile_aside
    from c4lab.server.warmup import PrepareAhead

    looks = iter([False, False, True])  # two looks at busy cores, then one free
    monkeypatch.setattr(compile_aside, "enabled", lambda: next(looks))
    monkeypatch.setattr(compile_aside, "start", lambda target, ahead=False: _Child(0))
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    monkeypatch.setattr(PrepareAhead, "RETRY", 0.01)
    lines: list[str] = []
    PrepareAhead(lines.append)()
    assert len(lines) == 2 and lines[1].startswith("the engine is compiled")


def test_a_server_that_stops_while_the_cores_are_busy_starts_no_prepare(monkeypatch: pytest.MonkeyPatch) -> None:
    import threading

    from c4lab import compile_aside
    from c4lab.server.warmup import PrepareAhead

    started: list[str] = []
    monkeypatch.setattr(compile_aside, "enabled", lambda: False)
    monkeypatch.setattr(compile_aside, "start", lambda target, ahead=False: started.append(target) or _Child(0))
    monkeypatch.setattr(prepare, "wanted_in_background", lambda: True)
    ahead = PrepareAhead(print)
    waiting = threading.Thread(target=ahead)
    waiting.start()
    ahead.stop()
    waiting.join(5)
    assert not waiting.is_alive() and started == []


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # it ended meanwhile
        return b""


def _prepare_with_workers(cache: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """``c4lab prepare --jobs 2 --agent hard`` on an empty cache, once its
    two worker processes run (the pool's resource tracker is a child too)."""
    command = subprocess.Popen([sys.executable, "-m", "c4lab", "prepare", "--jobs", "2", "--agent", "hard"],
                               env=dict(os.environ, NUMBA_CACHE_DIR=str(cache)),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    workers: list[int] = []
    for _ in range(600):
        workers = [pid for pid in _children(command.pid) if b"spawn_main" in _cmdline(pid)]
        if len(workers) == 2:
            break
        time.sleep(0.05)
    assert len(workers) == 2, "no workers started"
    return command, workers


def _gone(pid: int) -> bool:
    """Whether ``pid`` has ended (a zombie waiting for its parent counts)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


needs_proc = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads the processes from /proc")


@needs_proc
def test_a_worker_that_dies_ends_the_prepare_with_an_error_not_a_wait(tmp_path: Path) -> None:
    command, workers = _prepare_with_workers(tmp_path / "numba")
    try:
        os.kill(workers[0], signal.SIGKILL)
        out, err = command.communicate(timeout=60)
    finally:
        command.kill()
    assert command.returncode == 1
    assert "Error: a worker process ended before its work did" in err and "warm-ups not done" in err
    assert out == ""


@needs_proc
def test_ctrl_c_stops_the_prepare_and_its_workers(tmp_path: Path) -> None:
    command, workers = _prepare_with_workers(tmp_path / "numba")
    try:
        time.sleep(1.0)  # the workers compiling
        command.send_signal(signal.SIGINT)
        out, err = command.communicate(timeout=30)
    finally:
        command.kill()
    assert command.returncode == 130
    assert "interrupted: " in err and " warm-ups done; what they compiled is kept" in err and out == ""
    for _ in range(100):
        if all(_gone(pid) for pid in workers):
            break
        time.sleep(0.05)
    assert all(_gone(pid) for pid in workers)


@pytest.mark.slow
def test_after_a_prepare_no_first_move_on_any_board_compiles(tmp_path: Path) -> None:
    """A prepare on an empty cache, then a fresh process: every agent's
    warm-up (its throwaway moves and ``compile_rest``) on boards of every
    kind and size, and the solver's answers, compile nothing; a second
    prepare says so too."""
    cache = tmp_path / "numba"
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    first = subprocess.run([sys.executable, "-m", "c4lab", "prepare", "--jobs", "2"], env=env,
                           capture_output=True, text=True, check=True)
    assert first.stdout.startswith("ready: ") and " kernels compiled in " in first.stdout
    assert first.stdout.rstrip().endswith(f"kept in numba's cache ({cache})")
    assert "preparing the engine: " in first.stderr
    left_out = [line for line in first.stderr.splitlines() if line.startswith("left out: ")]
    assert [line.split(" (")[0] for line in left_out] == ["left out: qlearning"]  # it needs a table of its own
    script = """
import json
from c4lab.agents.base import warm_up
from c4lab.agents.prepare import agent_names, with_variants
from c4lab.rules import Position
from c4lab.solver.api import Solver
after = {}
for board in ("4x4", "5x4/Bb1", "6x5/Xc2", "8x7", "8x7/Bc1", "9x6", "10x5/Ba1", "12x12/Xf4/Bc2", "4x12"):
    for name in with_variants(agent_names()):
        warm_up(name, Position.parse(board))
        if compiled:
            after[f"{name} on {board}"] = list(compiled)
            compiled.clear()
solver = Solver()
solver.solve(Position.parse("6x5/Xc2"))
solver.analyse(Position.parse("6x5/Xc2:dc"), timeout=1.0)
print(json.dumps({"after": after, "solver": list(compiled)}))
"""
    out = run_counting_compiles(script, cache, C4LAB_COMPILE_ASIDE="0")  # nothing compiled out of sight
    assert out == {"after": {}, "solver": []}
    again = subprocess.run([sys.executable, "-m", "c4lab", "prepare", "--agent", "master", "--agent", "perfect"],
                           env=env, capture_output=True, text=True, check=True)
    assert again.stdout.startswith("ready: nothing to compile, every kernel was in numba's cache already")
    # The whole prepare left its stamp (a prepare of some agents only does not make one):
    assert _prepared(env)
    _play_prepares_in_the_background(tmp_path, env)


_IS_PREPARED = "from c4lab.agents.prepare import is_prepared; print(is_prepared())"


def _prepared(env: dict[str, str]) -> bool:
    """Whether a fresh process on ``env``'s cache finds the stamp of a whole prepare."""
    out = subprocess.run([sys.executable, "-c", _IS_PREPARED], env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


def _play_prepares_in_the_background(tmp_path: Path, env: dict[str, str]) -> None:
    """``c4lab play`` on a cache with every kernel but without the stamp
    (as after an upgrade that changed nothing compiled): once its own
    warm-ups are done it runs the whole prepare in a child, says so, and
    stamps the cache; the next start leaves it be."""
    import re
    import threading

    from c4lab.agents.prepare import STAMP

    stamps = list(Path(env["NUMBA_CACHE_DIR"]).rglob(STAMP))
    assert len(stamps) == 1
    stamps[0].unlink()
    assert not _prepared(env)
    play_env = {key: value for key, value in env.items() if key != BACKGROUND_ENV}
    play_env["C4LAB_COMPILE_ASIDE"] = "1"  # a core for the child even while the suite runs on both
    server = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "play", "--no-browser", "--db", str(tmp_path / "games.sqlite")],
        env=play_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: list[str] = []
    deadline = threading.Timer(600, server.kill)  # a child that never starts or ends: a failure, not a hang
    deadline.start()
    try:
        assert server.stdout is not None
        for line in server.stdout:
            lines.append(line.rstrip())
            if line.startswith("the engine is compiled"):
                break
    finally:
        deadline.cancel()
        server.terminate()
        server.communicate(timeout=60)
    assert lines[0].startswith("c4lab game at http://127.0.0.1:")
    assert lines[1].startswith("compiling the engine for every agent and kind of board in the background, once")
    assert re.fullmatch(r"the engine is compiled for every agent and kind of board \(\d+ s\): "
                        r"no first move waits for the compiler now", lines[2]), lines
    assert _prepared(env) and _prepared(play_env)
