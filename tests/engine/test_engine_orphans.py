"""An engine program does not outlive the c4lab process that started it
(Linux: ``c4lab.engine.tether``).  A c4lab process killed with SIGKILL runs
none of its cleanup, and an engine that hangs in a busy loop, no longer
reading its input, never sees the end of it: it used to run on for ever,
an orphan at a full core, and so did the arena's workers, each playing its
pair to the end for nobody.  Now both end within seconds.  The tether
changes nothing else an engine sees, and an engine started by a thread
that ends at once lives on (as ``prctl(PR_SET_PDEATHSIG)`` would not).

Each engine is a few lines of shell written into ``tmp_path``; it records
its pid, and that of the child it starts, in ``tmp_path/pids``, and its
pid in ``tmp_path/thinking`` when it starts its busy loop.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from c4lab.agents import Budget
from c4lab.engine import client
from c4lab.engine.client import EngineAgent, EngineError
from c4lab.rules import Position
from testkit import alive

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tether is Linux's")

#: Seconds a process killed with SIGKILL may leave its engines and workers
#: running: generous (a loaded machine), and far below a move's limit here.
GONE_WITHIN = 10.0
#: Seconds for a c4lab command to get its engines thinking (a cold start compiles).
READY_WITHIN = 180.0


def hung_engine(tmp_path: Path, child: str = "sleep 1000") -> str:
    """A shell engine that answers the handshake, then at ``go`` starts a
    child (``sleep``; ``child``) and busy-loops for ever, never reading again."""
    script = tmp_path / "hung.sh"
    script.write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo $$ >> "{tmp_path / 'pids'}"
        while read -r line; do
          case "$line" in
            c4lab) echo c4labok;;
            isready) echo readyok;;
            go*) {child} & echo $! >> "{tmp_path / 'pids'}"; echo $$ >> "{tmp_path / 'thinking'}"
                 while :; do :; done;;
          esac
        done
        """))
    script.chmod(0o755)
    return str(script)


def recorded(tmp_path: Path, name: str) -> list[int]:
    path = tmp_path / name
    return [int(pid) for pid in path.read_text().split()] if path.exists() else []


def still_alive(pids: list[int], within: float = GONE_WITHIN) -> list[int]:
    """Those of ``pids`` still alive after up to ``within`` s."""
    deadline = time.monotonic() + within
    while (left := [pid for pid in pids if alive(pid)]) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left


@contextmanager
def c4lab_with_thinking_engines(tmp_path: Path, args: list[str], engines: int) -> Iterator[tuple[int, list[int]]]:
    """``python -m c4lab ARGS`` run until ``engines`` of its hung engines
    are in their busy loop: its pid, and a list of pids the test adds to.
    Whatever is left running at the end is killed: the process, its
    engines, and the pids added (the old code left engines and workers
    running)."""
    log = (tmp_path / "stderr").open("wb")
    run = subprocess.Popen([sys.executable, "-m", "c4lab", *args], stdin=subprocess.DEVNULL,
                           stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
    more: list[int] = []
    try:
        deadline = time.monotonic() + READY_WITHIN
        while len(recorded(tmp_path, "thinking")) < engines and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert len(recorded(tmp_path, "thinking")) >= engines, (tmp_path / "stderr").read_text()
        yield run.pid, more
    finally:
        run.kill()
        run.wait()
        log.close()
        for pid in [*recorded(tmp_path, "pids"), *more]:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)


def kill(pid: int) -> None:
    """SIGKILL, which runs none of the process's cleanup (reaped by the
    context's end: a zombie counts as gone)."""
    os.kill(pid, signal.SIGKILL)


def children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


@pytest.mark.parametrize("child", ["sleep 1000", "setsid sleep 1000 < /dev/null > /dev/null 2>&1"],
                         ids=["in-its-group", "in-a-session-of-its-own"])
def test_c4lab_move_killed_with_sigkill_leaves_no_hung_engine_behind(tmp_path: Path, child: str) -> None:
    """Nor what the engine started, in a session of its own too (out of
    the group the tether kills: the tether is its subreaper)."""
    args = ["move", "7x6", "--agent", f"engine:cmd={hung_engine(tmp_path, child)}", "--time", "600"]
    with c4lab_with_thinking_engines(tmp_path, args, engines=1) as (pid, _):
        kill(pid)
        engine_and_child = recorded(tmp_path, "pids")
        assert len(engine_and_child) == 2
        assert still_alive(engine_and_child) == []


def test_an_arena_killed_with_sigkill_leaves_no_worker_and_no_engine_behind(tmp_path: Path) -> None:
    args = ["arena", f"engine:cmd={hung_engine(tmp_path)}", "random:seed=1", "--games", "4", "--limit", "600",
            "--jobs", "2", "--out", str(tmp_path / "run.jsonl")]
    with c4lab_with_thinking_engines(tmp_path, args, engines=2) as (pid, more):
        workers = children(pid)
        more.extend(workers)
        assert len(workers) >= 2
        kill(pid)
        assert still_alive(workers) == []
        assert still_alive(recorded(tmp_path, "pids")) == []


def test_an_engine_started_by_a_thread_that_ends_at_once_plays_on(tmp_path: Path) -> None:
    """What a death signal (``PR_SET_PDEATHSIG``) set for the engine would
    break: it follows the thread that started the child, and c4lab starts
    engines from short-lived threads too (a warm-up, a server's thread)."""
    script = tmp_path / "plays.sh"
    script.write_text("#!/bin/sh\nwhile read -r l; do case \"$l\" in c4lab) echo c4labok;; isready) echo readyok;;"
                      " go*) echo 'bestmove d';; quit) exit 0;; esac; done\n")
    script.chmod(0o755)
    started: list[EngineAgent] = []
    thread = threading.Thread(target=lambda: started.append(EngineAgent(str(script))))
    thread.start()
    thread.join()
    time.sleep(0.5)
    with started[0] as engine:
        assert engine.choose(Position.parse("7x6"), Budget(time=5)).token == "d"


def what_the_engine_sees(tmp_path: Path) -> dict[str, object]:
    """An engine's session, ignored signals and standard streams, as it
    reports them at its start."""
    report = tmp_path / "sees.json"
    script = tmp_path / "sees.py"
    script.write_text(textwrap.dedent(f"""\
        import json, os, stat, sys
        status = dict(line.split(":\\t", 1) for line in open("/proc/self/status").read().splitlines())
        json.dump({{"session": os.getsid(0), "group_leader_is_own_session": os.getpgid(0) == os.getsid(0),
                   "ignored": status["SigIgn"].strip(),
                   "pipes": [stat.S_ISFIFO(os.fstat(fd).st_mode) for fd in (0, 1, 2)]}}, open({str(report)!r}, "w"))
        for line in sys.stdin:
            print({{"c4lab": "c4labok", "isready": "readyok"}}.get(line.split()[0], ""), flush=True)
        """))
    EngineAgent(shlex.join([sys.executable, str(script)])).close()
    seen: dict[str, object] = json.loads(report.read_text())
    return seen


def test_a_tethered_engine_sees_what_one_started_directly_sees(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The same ignored signals (the tether ignores SIGTERM, SIGINT and
    SIGHUP itself, and Python ignores SIGPIPE: none of it reaches the
    engine), a session of its own (a terminal's Ctrl-C does not reach it),
    its three pipes."""
    tethered = what_the_engine_sees(tmp_path)
    monkeypatch.setattr(client, "TETHER", False)
    direct = what_the_engine_sees(tmp_path)
    assert tethered["session"] != os.getsid(0) and direct["session"] != os.getsid(0)
    assert tethered["group_leader_is_own_session"] and direct["group_leader_is_own_session"]
    assert tethered["ignored"] == direct["ignored"]
    assert tethered["pipes"] == direct["pipes"] == [True, True, True]


@pytest.mark.parametrize(("go", "told"), [("exit 3", "exited with status 3"), ("kill -KILL $$", "was killed by signal 9 (SIGKILL)"),
                                          ("kill -TERM $$", "was killed by signal 15 (SIGTERM)")])
def test_how_an_engine_ended_is_told_through_the_tether(tmp_path: Path, go: str, told: str) -> None:
    script = tmp_path / "ends.sh"
    script.write_text(f"#!/bin/sh\nwhile read -r l; do case \"$l\" in c4lab) echo c4labok;; isready) echo readyok;;"
                      f" go*) {go};; esac; done\n")
    script.chmod(0o755)
    with EngineAgent(str(script)) as engine, pytest.raises(EngineError, match=re.escape(told)):
        engine.choose(Position.parse("7x6"), Budget(time=5))


def test_a_program_that_cannot_start_is_the_same_error_through_the_tether(tmp_path: Path) -> None:
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(EngineError, match=r"cannot start engine '/no/such/engine': \[Errno 2\] No such file or directory: "
                                          r"'/no/such/engine'$"):
        EngineAgent("/no/such/engine")
    with pytest.raises(EngineError, match=r"\[Errno 13\] Permission denied: '.*folder' \(a folder, not a program\)$"):
        EngineAgent(str(folder))


def test_without_pidfds_the_tether_sees_its_c4lab_end_by_looking(tmp_path: Path) -> None:
    """A kernel before 5.3, or a sandbox that forbids pidfds: the tether
    looks at its parent every ``POLL`` seconds instead.  Here the parent is
    a stand-in for c4lab that starts the tether with pidfds disabled."""
    pids = tmp_path / "pids"
    stand_in = textwrap.dedent(f"""\
        import os, subprocess, sys, time
        tether = ("import sys; from c4lab.engine import tether; tether.pidfd = lambda pid: None; "
                  "tether.main(sys.argv)")
        report, errfd = os.pipe()
        subprocess.Popen([sys.executable, "-c", tether, str(os.getpid()), str(errfd),
                          "sh", "-c", "echo $$ >> {pids}; while :; do :; done"], pass_fds=(errfd,),
                         stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, start_new_session=True)
        os.close(errfd)
        assert os.read(report, 10) == b""  # the end of the pipe: the program runs
        print("running", flush=True)
        time.sleep(1000)
        """)
    run = subprocess.Popen([sys.executable, "-c", stand_in], stdout=subprocess.PIPE, text=True)
    try:
        assert run.stdout is not None and run.stdout.readline() == "running\n"
        deadline = time.monotonic() + READY_WITHIN
        while not recorded(tmp_path, "pids") and time.monotonic() < deadline:
            time.sleep(0.1)
        tethers = children(run.pid)
        assert len(tethers) == 1 and len(recorded(tmp_path, "pids")) == 1
        kill(run.pid)
        assert still_alive(recorded(tmp_path, "pids") + tethers) == []
    finally:
        for pid in recorded(tmp_path, "pids"):
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        run.kill()
        run.communicate()
