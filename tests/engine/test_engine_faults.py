"""Experiments that survive faulty engines (issue 25): an engine program that
hangs, hangs at the handshake, prints garbage, plays an illegal move, exits
or leaves a child behind loses its game with the reason that says what
happened, within the arena's limit plus margin, and leaves no process
behind; Ctrl-C stops a run the same way; compile time is not thinking time.

Each engine is a few lines of shell written into ``tmp_path``; every
process it starts writes its pid into a file there, so the test can check
afterwards that none is left (a zombie, dead but not yet reaped by the
container's init, counts as gone).
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from c4lab.agents import Agent, Analysis, Budget, make_agent
from c4lab.arena.games import play_pair
from c4lab.arena.runner import run_arena
from c4lab.arena.schedule import ArenaConfig, ArenaError, PairTask
from c4lab.engine import serve as serve_module
from c4lab.engine.client import MAX_LINE, EngineAgent, EngineError, EngineTimeout
from c4lab.engine.serve import _Engine, serve
from c4lab.rules import Move, Position
from testkit import alive

pytestmark = pytest.mark.skipif(os.name != "posix" or not Path("/proc").is_dir(), reason="POSIX sessions and /proc")

LIMIT = 1.0
MARGIN = 0.5
#: Beyond limit + margin: starting the script, killing it, the other side's moves.
SLACK = 1.5

HANG = 'sleep 1000 & echo $! >> "$PIDS"; wait'


def engine_script(tmp_path: Path, go: str, hello: str = "echo 'id name fake'; echo c4labok") -> str:
    """A shell engine: ``hello`` answers ``c4lab``, ``go`` answers ``go``
    (shell commands); ``isready`` answers ``readyok``.  It records its pid
    (and its children record theirs: ``$PIDS``) in ``tmp_path/pids``."""
    script = tmp_path / "engine.sh"
    script.write_text(
        "#!/bin/sh\n"
        f'PIDS="{tmp_path / "pids"}"\n'
        'echo $$ >> "$PIDS"\n'
        "while read -r line; do\n"
        '  case "$line" in\n'
        f"    c4lab) {hello};;\n"
        "    isready) echo readyok;;\n"
        f"    go*) {go};;\n"
        "    quit) exit 0;;\n"
        "  esac\n"
        "done\n"
    )
    script.chmod(0o755)
    return str(script)


def left_behind(tmp_path: Path, wait: float = 2.0) -> list[int]:
    """The recorded pids still alive after up to ``wait`` s."""
    path = tmp_path / "pids"
    pids = [int(p) for p in path.read_text().split()] if path.exists() else []
    deadline = time.monotonic() + wait
    while True:
        left = [pid for pid in pids if alive(pid)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def pair_against_random(cmd: str, start: str = "7x6") -> tuple[list[dict], float]:
    """The two games of the engine ``cmd`` against ``random`` (engine first
    as A, then as B) judged with LIMIT and MARGIN, and the seconds taken."""
    task = PairTask(0, f"engine:cmd={cmd}", "random:seed=1", 0, start, LIMIT, MARGIN)
    began = time.monotonic()
    _, games = play_pair(task)
    return games, time.monotonic() - began


@pytest.mark.parametrize(
    ("go", "reason", "detail"),
    [
        (HANG, "time", "sent no 'bestmove' for 7x6"),
        ("echo 'Hello, world!'", "crash", "sent 'Hello, world!' during 'go'"),
        ("echo 'bestmove k'", "illegal", "illegal move 'k' in '7x6"),
        ("echo 'bestmove z'", "illegal", "illegal move 'z' in '7x6"),
        ("echo 'the end' >&2; exit 3", "crash", "exited with status 3 (its stderr: the end)"),
        ('sleep 1000 & echo $! >> "$PIDS"; exit 0', "crash", "exited with status 0"),
        ("tr '\\0' x < /dev/zero", "crash", f"sent a line of more than {MAX_LINE} characters ('xxx"),
        ("while :; do echo 'info string busy'; done", "time", "'info' lines meanwhile (the last: 'info string busy')"),
        # the last info line quoted as the engine wrote it, not as c4lab would ('value 0.5000')
        ("while :; do echo 'info value 0.5 string thinking'; done", "time", "(the last: 'info value 0.5 string thinking')"),
        # a last stderr line with no newline is whole: no "[...]" as if it had been cut short
        ("printf 'line one\\nno newline at end' >&2; exit 3", "crash",
         "exited with status 3 (its stderr: line one | no newline at end)"),
        # a line begun and never ended: quoted, the program's bug named
        (f"printf 'bestmo'; {HANG}", "time", "(it wrote 'bestmo' and no newline after it: a line ends with one)"),
    ],
    ids=[
        "hangs-on-go", "garbage", "illegal-move", "no-move-at-all", "exits", "exits-leaving-a-child",
        "endless-line", "floods-info-lines", "floods-info-lines-as-written", "stderr-without-a-last-newline",
        "a-line-never-ended",
    ],
)
def test_a_faulty_engine_loses_with_the_reason_within_the_limit_and_leaves_nothing(
    tmp_path: Path, go: str, reason: str, detail: str
) -> None:
    games, seconds = pair_against_random(engine_script(tmp_path, go))
    for game, side in zip(games, "AB"):
        forfeit = game["forfeit"]
        assert forfeit is not None and (forfeit["side"], forfeit["reason"]) == (side, reason), forfeit
        assert detail in forfeit["detail"]
        assert "client.py" not in forfeit["detail"] and "time allowed" not in forfeit["detail"]
        assert "\n" not in forfeit["detail"]
    assert seconds < 2 * (LIMIT + MARGIN + SLACK)
    assert left_behind(tmp_path) == []


def test_an_engines_illegal_answer_is_timed_and_left_out_of_its_mean_as_the_answer_that_lost(tmp_path: Path) -> None:
    """An illegal ``bestmove`` is an answer like an agent's illegal move:
    its seconds are in the record, one more time than the moves played, so
    ``Game.unplayed`` names its side and the means leave it out.  It was
    not timed, and the record's times were those of the moves alone."""
    from c4lab.arena.games import Game

    cmd = engine_script(tmp_path, "echo 'bestmove z'")
    task = PairTask(0, f"engine:cmd={cmd}", "random:seed=1", 0, "7x6", LIMIT, MARGIN)
    _, games = play_pair(task)
    for record, side in zip(games, "AB"):
        game = Game.from_dict(record)
        assert game.forfeit is not None and game.forfeit.reason == "illegal"
        assert game.unplayed == side
        assert len(game.times[side]) == len(game.played_times(side)) + 1


def test_a_hung_engine_is_not_waited_for_beyond_the_limit_whatever_its_timeout(tmp_path: Path) -> None:
    """``timeout=`` (30 s) is the engine's allowance without a judge; the
    judge's limit plus margin caps it, and the move's time counts in the
    record."""
    cmd = engine_script(tmp_path, HANG)
    task = PairTask(0, f"engine:cmd={cmd},timeout=30", "random:seed=1", 0, "7x6:d", LIMIT, MARGIN)
    began = time.monotonic()
    _, games = play_pair(task)
    assert time.monotonic() - began < 2 * (LIMIT + MARGIN + SLACK)
    game = games[1]  # the engine plays B: it moves first from 7x6:d
    assert game["forfeit"]["reason"] == "time"
    assert game["forfeit"]["detail"].startswith("move 2 of the game, by player B (engine:cmd=")
    assert game["forfeit"]["detail"].endswith(f"within {LIMIT + MARGIN:g} s")
    assert LIMIT + MARGIN <= game["times"]["B"][-1] < LIMIT + MARGIN + SLACK
    assert left_behind(tmp_path) == []


def test_an_engine_that_hangs_at_the_handshake_is_refused_in_one_line_within_its_limit(tmp_path: Path) -> None:
    cmd = engine_script(tmp_path, "echo 'bestmove a'", hello=HANG)
    began = time.monotonic()
    with pytest.raises(EngineTimeout) as caught:
        EngineAgent(cmd, handshake=0.5)
    assert time.monotonic() - began < 0.5 + SLACK
    message = str(caught.value)
    assert message.startswith("engine '/") and "\n" not in message
    assert message.endswith(" sent no 'c4labok' (the end of the handshake) within 0.5 s" + SILENT + LONGER)
    assert left_behind(tmp_path) == []
    # The arena refuses it before any game, in one line naming the parameter that allows a slower start (the
    # handshake has its own allowance, not --limit: it said nothing of it), and starts nothing else.
    config = ArenaConfig((f"engine:cmd={cmd},handshake=0.5", "random"), games=2)
    with pytest.raises(ArenaError, match=r"^agent 'engine:cmd=.*' cannot start: engine .* within 0.5 s \(nor .*\); "
                                         r"to give it longer to start: handshake=SECONDS \(15 by default\)$"):
        run_arena(config, tmp_path / "arena.jsonl")
    assert left_behind(tmp_path) == []


#: What a time-out adds when the program has printed nothing at all yet.
SILENT = (" (nor anything else: does it flush its standard output after each line,"
          " and read its input a line at a time?)")
#: What a time-out at the start adds: the parameter that allows more.
LONGER = "; to give it longer to start: handshake=SECONDS (15 by default)"


def test_a_silent_engine_is_asked_whether_it_flushes_one_that_spoke_is_not(tmp_path: Path) -> None:
    """An engine that buffers its output says nothing at all: the commonest
    slip of a first engine, so the time-out asks about it; one that said
    anything has shown that its lines get through."""
    (tmp_path / "buffered.py").write_text(textwrap.dedent("""\
        import sys
        for line in sys.stdin:  # print() to a pipe is buffered: nothing reaches the driver
            if line.split() == ["c4lab"]:
                print("id name buffered")
                print("c4labok")
        """))
    silent = shlex.join(["env", "-u", "PYTHONUNBUFFERED", sys.executable, str(tmp_path / "buffered.py")])
    with pytest.raises(EngineTimeout) as caught:
        EngineAgent(silent, handshake=0.5)
    assert str(caught.value).endswith("sent no 'c4labok' (the end of the handshake) within 0.5 s" + SILENT + LONGER)
    spoke = engine_script(tmp_path, "echo 'bestmove a'", hello=f"echo 'id name fake'; {HANG}")
    with pytest.raises(EngineTimeout) as caught:
        EngineAgent(spoke, handshake=0.5)
    assert str(caught.value).endswith("sent no 'c4labok' (the end of the handshake) within 0.5 s" + LONGER)


def test_a_program_that_is_not_executable_is_told_how_to_run_it(tmp_path: Path) -> None:
    plain = tmp_path / "engine.py"
    plain.write_text("print('c4labok')\n")
    with pytest.raises(EngineError, match=r"Permission denied: .* \(not an executable file: chmod \+x it, "
                                          rf"or name its interpreter: engine:cmd=python3 {re.escape(str(plain))}\)$"):
        EngineAgent(str(plain))
    plain.chmod(0o755)  # executable, but with no #! line to say what runs it
    with pytest.raises(EngineError, match=r"Exec format error: .* \(a script needs a first line like "
                                          r"#!/usr/bin/env python3, or name its interpreter\)$"):
        EngineAgent(str(plain))


@pytest.mark.parametrize(("setting", "error", "message"), [
    ({"timeout": "30"}, TypeError, "EngineAgent: timeout is a number of seconds, not str '30'"),
    ({"margin": None}, TypeError, "EngineAgent: margin is a number of seconds, not NoneType None"),
    ({"handshake": True}, TypeError, "EngineAgent: handshake is a number of seconds, not bool True"),
    ({"timeout": float("inf")}, ValueError, "agent 'engine': timeout must be a finite number, not inf"),
])
def test_engine_agents_limits_from_python_that_are_no_seconds_are_refused_before_a_start(
    tmp_path: Path, setting: dict[str, object], error: type[Exception], message: str
) -> None:
    """As the spec's are (``engine:cmd=...,timeout=inf``): a string was
    "'>' not supported between instances of 'str' and 'int'", and an
    infinite wait was taken. Nothing is started."""
    with pytest.raises(error) as caught:
        EngineAgent(str(tmp_path / "never-started"), **setting)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_program_that_is_there_but_would_not_start_is_told_why(tmp_path: Path, monkeypatch) -> None:
    """Issue review: "No such file or directory: 'my_engine.py'" for a file
    that is right there (the ``./`` left out, so PATH was searched; or its
    ``#!`` names an interpreter that does not exist, as a Windows line end
    makes it), and "chmod +x it" for a folder."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "my_engine.py"
    script.write_text("#!/usr/bin/python3-not-here -u\nprint('c4labok')\n")
    script.chmod(0o755)
    with pytest.raises(EngineError, match=r"No such file or directory: 'my_engine.py' "
                                          r"\(a program of this folder is named with its path: "
                                          r"engine:cmd=./my_engine.py\)$"):
        EngineAgent("my_engine.py")
    with pytest.raises(EngineError, match=r"No such file or directory: .* \(the interpreter its #! line names, "
                                          r"'/usr/bin/python3-not-here', does not exist\)$"):
        EngineAgent("./my_engine.py")
    script.write_bytes(b"#!/usr/bin/python3\r\nprint('c4labok')\r\n")
    with pytest.raises(EngineError, match=r"No such file or directory: .* \(its #! line ends in a carriage return: "
                                          r"save the file with Unix line ends, LF, not CRLF\)$"):
        EngineAgent(str(script))
    with pytest.raises(EngineError, match=r"Permission denied: .* \(a folder, not a program\)$"):
        EngineAgent(str(tmp_path))
    # the usual form, through env: env starts, finds no 'python3\r' and exits with 127
    script.write_bytes(b"#!/usr/bin/env python3\r\nprint('c4labok')\r\n")
    with pytest.raises(EngineError, match=r"exited with status 127 \(its stderr: .*python3\\r.*\) \(its #! line ends in "
                                          r"a carriage return: save the file with Unix line ends, LF, not CRLF\)"):
        EngineAgent(str(script))
    script.write_text("print('c4labok')\n")
    script.chmod(0o644)  # the example's name was given, not the program's: engine:cmd=python3 my_engine.py
    with pytest.raises(EngineError, match=r"Permission denied: .* \(not an executable file: chmod \+x it, or name its "
                                          r"interpreter: engine:cmd=python3 ./my_engine.py\)$"):
        EngineAgent("./my_engine.py")


def test_an_engine_that_closes_its_input_and_runs_on_is_told_so(tmp_path: Path) -> None:
    """Issue review: a program that closed its standard input (so a line
    could not be sent) was said to have "closed its output"."""
    cmd = engine_script(tmp_path, "echo 'bestmove a'", hello=f"exec 0<&-; echo c4labok; {HANG}")
    with pytest.raises(EngineError) as caught:
        EngineAgent(cmd, handshake=5)
    assert str(caught.value).endswith(" closed its input before reading 'isready'")
    assert left_behind(tmp_path) == []


def test_an_engine_that_fails_its_handshake_in_a_later_game_loses_that_game(tmp_path: Path) -> None:
    """A program that started once may not start again: that game is a
    forfeit (``crash``, the handshake's story), the run goes on."""
    marker = tmp_path / "started"
    hello = f'if [ -e "{marker}" ]; then {HANG}; else touch "{marker}"; echo c4labok; fi'
    cmd = engine_script(tmp_path, "echo 'Hello'", hello=hello)
    EngineAgent(cmd).close()  # the first start (the arena's check of the specs) works
    games, seconds = pair_against_random(f"{cmd},handshake=0.5")
    for game, side in zip(games, "AB"):
        assert game["forfeit"]["side"] == side and game["forfeit"]["reason"] == "crash"
        assert "could not start: engine" in game["forfeit"]["detail"]
        assert game["forfeit"]["detail"].endswith(LONGER)
        assert game["position"] == "7x6"
    assert seconds < 2 * (0.5 + SLACK)
    assert left_behind(tmp_path) == []


def test_an_endless_line_on_stderr_is_cut_short_and_its_next_lines_kept(tmp_path: Path) -> None:
    """Standard error is read all along: a line with no end (1 MB here) is
    kept cut short, not buffered whole, and the lines after it are read."""
    go = "head -c 1000000 /dev/zero | tr '\\0' y >&2; echo >&2; echo 'the end' >&2; echo 'bestmove d'"
    with EngineAgent(engine_script(tmp_path, go)) as engine:
        assert engine.choose(Position.parse("7x6")) == Move(3)
        process = engine._process
        assert process is not None
        deadline = time.monotonic() + 10
        while "the end" not in process.stderr and time.monotonic() < deadline:
            time.sleep(0.05)
        lines = list(process.stderr)
    assert lines == ["y" * MAX_LINE + " [...]", "the end"]


def test_closing_an_engine_stops_what_it_started_even_holding_its_pipes(tmp_path: Path) -> None:
    """A script that leaves a child holding its output open: ``close`` kills
    the whole session at once, it does not wait for the pipe to close."""
    cmd = engine_script(tmp_path, "echo 'bestmove d'", hello='sleep 1000 & echo $! >> "$PIDS"; echo c4labok')
    engine = EngineAgent(cmd)
    assert engine.choose(Position.parse("7x6")) == Move(3)
    began = time.monotonic()
    engine.close()
    assert time.monotonic() - began < 2.0
    assert left_behind(tmp_path) == []


#: A process the engine starts in a session of its own, out of its process group (a daemon).
OWN_SESSION = 'setsid sleep 1000 < /dev/null > /dev/null 2>&1 & echo $! >> "$PIDS"'


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tether is Linux's")
@pytest.mark.parametrize("engine", ["quits", "ignores-sigterm"])
def test_closing_an_engine_ends_what_it_started_in_a_session_of_its_own(tmp_path: Path, engine: str) -> None:
    """Killing the engine's process group missed a process that left it
    (``setsid``): it ran on after the game, for ever (helper 156's review).
    The tether is the subreaper of what the engine starts, and ends it:
    after an engine that quits when asked, and after one that ignores
    SIGTERM, which c4lab then kills."""
    hello = f"{OWN_SESSION}; " + ("trap '' TERM; " if engine == "ignores-sigterm" else "") + "echo c4labok"
    engine_agent = EngineAgent(engine_script(tmp_path, "echo 'bestmove d'", hello=hello))
    assert engine_agent.choose(Position.parse("7x6")) == Move(3)
    assert len(left_behind(tmp_path, wait=0)) == 2  # the script and its daemon
    began = time.monotonic()
    engine_agent.close()
    assert time.monotonic() - began < 3.0
    assert left_behind(tmp_path) == []


def zombies_under(pid: int) -> list[int]:
    """The children of ``pid`` that have ended and not been reaped."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                stat = Path(f"/proc/{child}/stat").read_text()
            except OSError:
                continue
            if stat.rpartition(")")[2].split()[0] == "Z":
                found.append(int(child))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the tether is Linux's")
def test_a_process_the_engine_left_in_a_session_of_its_own_is_reaped_when_it_ends_not_at_the_game_s_end(
    tmp_path: Path,
) -> None:
    """The tether adopts what the engine leaves in a session of its own (it
    is their subreaper); one that ended on its own stayed a zombie under the
    tether until the game was over."""
    tether = tmp_path / "tether"
    hello = (f'echo $PPID > "{tether}"; ( setsid sh -c "sleep 0.2" < /dev/null > /dev/null 2>&1 & ); '
             "echo c4labok")
    engine_agent = EngineAgent(engine_script(tmp_path, "echo 'bestmove d'", hello=hello))
    try:
        assert engine_agent.choose(Position.parse("7x6")) == Move(3)
        parent = int(tether.read_text())
        time.sleep(0.5)  # the daemon's 0.2 s are over: it has ended
        deadline = time.monotonic() + 2
        while zombies_under(parent) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert zombies_under(parent) == []  # and nothing is left of it
    finally:
        engine_agent.close()


def test_ctrl_c_stops_the_run_keeps_finished_games_and_leaves_no_process(tmp_path: Path) -> None:
    """The first pairing's engine plays and loses at once, the second's
    hangs for long: Ctrl-C keeps the finished pairs and stops everything."""
    quick = engine_script(tmp_path, "echo 'bestmove k'")
    hanging = tmp_path / "hang"
    hanging.mkdir()
    slow = engine_script(hanging, HANG)
    out = tmp_path / "arena.jsonl"
    run = subprocess.Popen(
        [
            sys.executable, "-m", "c4lab", "arena", "random:seed=1", f"engine:cmd={quick}", f"engine:cmd={slow}",
            "--gauntlet", "--games", "2", "--limit", "60", "--jobs", "2", "--out", str(out),
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (
            out.exists() and len(out.read_text().splitlines()) >= 3 and len(left_behind(hanging, 0)) >= 2
        ):
            time.sleep(0.1)
        os.killpg(run.pid, signal.SIGINT)  # what a terminal does: the whole foreground group
        _, err = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, err
    assert "interrupted: 2 games saved" in err
    assert left_behind(tmp_path) == [] and left_behind(hanging) == []
    lines = out.read_text().splitlines()
    assert [json.loads(line)["forfeit"]["reason"] for line in lines[1:]] == ["illegal", "illegal"]


# ---------------------------------------------------------------------------
# Compile time is not thinking time
# ---------------------------------------------------------------------------


def test_an_engine_is_told_the_start_before_the_clock_runs(tmp_path: Path) -> None:
    """``prepare``: ``position`` and ``isready`` within ``timeout``, not
    within the move's time: an engine slow to get ready is not late."""
    log = tmp_path / "log"
    script = engine_script(tmp_path, "echo 'bestmove d'")
    script_text = Path(script).read_text().replace(
        "    isready) echo readyok;;", f'    isready) echo "$line $position" >> "{log}"; sleep 1; echo readyok;;'
    ).replace('  case "$line" in', '  case "$line" in\n    position*) position="$line";;')
    Path(script).write_text(script_text)
    agent = make_agent(f"engine:cmd={script},margin=0.2")
    try:
        agent.set_move_limit(0.5)
        agent.prepare(Position.parse("9x8/Xd3"))
        assert log.read_text().splitlines()[-1] == "isready position 9x8/Xd3"
        with pytest.raises(EngineError, match="sent no 'readyok' within 0.5 s$"):  # a move's isready is timed
            agent.choose(Position.parse("9x8/Xd3"), Budget(time=0.3))
    finally:
        agent.close()


@pytest.mark.parametrize("when", ["-n", "-z"], ids=["before-the-first-move", "at-its-start"])
def test_an_engine_not_ready_in_time_for_a_game_loses_it_on_time(tmp_path: Path, when: str) -> None:
    """An answer that does not come in time is a ``time`` forfeit, before
    the first move too: ``readyok`` to the start's ``position`` (``-n``:
    once a position was sent), or to the ``isready`` after the options, at
    the program's start (``-z``; review: that one was a ``crash``, "could
    not start"), within the engine's ``timeout``, which the detail names."""
    script = engine_script(tmp_path, "echo 'bestmove d'")
    Path(script).write_text(Path(script).read_text().replace(
        "    isready) echo readyok;;", f'    isready) if [ {when} "$position" ]; then {HANG}; fi; echo readyok;;'
    ).replace('  case "$line" in', '  case "$line" in\n    position*) position="$line";;'))
    games, _ = pair_against_random(f"{script},timeout=0.5")
    for game, side in zip(games, "AB"):
        forfeit = game["forfeit"]
        assert (forfeit["side"], forfeit["reason"]) == (side, "time"), forfeit
        assert forfeit["detail"].startswith(f"before the first move: player {side} (engine:cmd=")
        assert forfeit["detail"].endswith("sent no 'readyok' within 0.5 s; to give it longer to get ready: "
                                          "timeout=SECONDS (30 by default)")
        assert game["position"] == "7x6"
    assert left_behind(tmp_path) == []


def test_a_cold_compile_cache_costs_no_forfeit(tmp_path: Path) -> None:
    """numba's cache empty (a fresh install): with a 1 s limit the compile
    happens before the clock starts, and no move is over its time (before:
    uct's first move "took 3.57 s", a forfeit; 6-7 s in all here)."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}
    done = subprocess.run(
        [
            sys.executable, "-m", "c4lab", "arena", "uct:iterations=1000,seed=1", "heuristic:seed=2",
            "--games", "2", "--limit", "1", "--margin", "0.5", "--jobs", "1", "--json",
            "--out", str(tmp_path / "arena.jsonl"),
        ],
        capture_output=True, text=True, env=env, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in (tmp_path / "arena.jsonl").read_text().splitlines()[1:]]
    assert [r["forfeit"] for r in records] == [None, None]
    slowest = max(t for r in records for ts in r["times"].values() for t in ts)
    assert slowest < 1.0, slowest


# ---------------------------------------------------------------------------
# Our engine: ready at isready, a pv that goes with its move
# ---------------------------------------------------------------------------


def test_our_engine_gets_ready_at_isready_for_the_positions_board(monkeypatch: pytest.MonkeyPatch) -> None:
    warmed: list[tuple[str, str]] = []
    monkeypatch.setattr(serve_module, "warm_once", lambda spec, start: warmed.append((spec, start.notation)))
    out = io.StringIO()
    serve("random:seed=1", io.StringIO("c4lab\nisready\nposition 9x8/Xd3\nisready\nquit\n"), out)
    assert warmed == [("random:seed=1", "7x6"), ("random:seed=1", "9x8/Xd3")]
    assert out.getvalue().splitlines()[-2:] == ["readyok", "readyok"]


class OverruledLine(Agent):
    """An agent whose analysis is the line of another move (a search that
    was overruled), as master's and uct's could be."""

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        return Move(0), Analysis(pv=(Move(1), Move(2)), seconds=0.25)


def test_the_pv_sent_starts_with_the_bestmove_it_goes_with() -> None:
    out = io.StringIO()
    engine = _Engine("random", out)
    engine.agent = OverruledLine()
    for line in ("position 7x6", "go time 0.5"):
        engine.run(engine.read(line))
    assert out.getvalue().splitlines() == ["info time 0.250 pv a", "bestmove a"]


@pytest.mark.parametrize("spec", ["uct:iterations=300,seed=1", "master:time=none,iterations=300,depth=2,seed=1"])
def test_our_searches_give_a_pv_that_starts_with_their_move(spec: str) -> None:
    agent = make_agent(spec)
    for text in ("7x6:dd", "9x8/Xd3:aabbcc", "6x5/Xb4:cc", "7x6:ddddcccbbe"):
        position = Position.parse(text)
        move, analysis = agent.analyse(position)
        assert analysis.pv[:1] == (move,), (text, move, analysis.pv)


def test_an_option_an_engine_does_not_declare_is_refused_even_where_it_would_ignore_it(tmp_path: Path) -> None:
    """Review: ``options=levle=3`` to an engine that ignores an unknown
    ``setoption`` (this shell engine ignores every one) ran the experiment
    as if the option were set.  The driver sends only the options the
    handshake declared; another is one line, and the program is stopped."""
    cmd = engine_script(tmp_path, "echo 'bestmove d'")
    with pytest.raises(EngineError, match=r"^engine '.*has no option 'levle' \(the options its handshake "
                                          r"declares: none\)$"):
        EngineAgent(cmd, options={"levle": "3"})
    assert left_behind(tmp_path) == []


def test_a_program_that_spoke_at_an_earlier_start_is_not_asked_whether_it_flushes(tmp_path: Path) -> None:
    """Review: a program whose handshake went through in an earlier game and
    that hung silently at a later start was asked whether it flushes its
    output: it had shown that its lines get through."""
    once = tmp_path / "started-once"
    cmd = engine_script(tmp_path, "echo 'bestmove d'",
                        hello=f'if [ -e "{once}" ]; then {HANG}; fi; touch "{once}"; echo c4labok')
    EngineAgent(cmd, handshake=5).close()
    with pytest.raises(EngineTimeout) as caught:
        EngineAgent(cmd, handshake=0.5)
    assert str(caught.value).endswith("sent no 'c4labok' (the end of the handshake) within 0.5 s" + LONGER)
    assert left_behind(tmp_path) == []


def test_a_run_resumed_after_its_engine_program_changed_is_refused_and_the_file_kept(tmp_path: Path) -> None:
    """The results file keeps what each engine said it is (``id name``):
    resuming after the program was changed (its spec, a path, the same)
    would mix the games of two versions in one experiment, silently.  It
    is refused, the file untouched; with the program of those games it
    resumes."""
    from c4lab.arena.executors import LocalExecutor
    from c4lab.arena.results import ResultsError, read_results

    agent = tmp_path / "agent.txt"
    agent.write_text("random:seed=1")
    script = tmp_path / "engine.sh"
    script.write_text(f'#!/bin/sh\nexec {shlex.quote(sys.executable)} -m c4lab engine --agent "$(cat {agent})"\n')
    script.chmod(0o755)
    spec = f"engine:cmd={script}"
    out = tmp_path / "arena.jsonl"
    run_arena(ArenaConfig((spec, "random"), games=2, board="5x4"), out, executor=LocalExecutor(jobs=1))
    assert read_results(out).engines == {spec: "c4lab random:seed=1"}
    written = out.read_bytes()
    agent.write_text("random:seed=2")  # a new version of the program, under the same command
    with pytest.raises(ResultsError) as caught:
        run_arena(ArenaConfig((spec, "random"), games=4, board="5x4"), out, executor=LocalExecutor(jobs=1))
    assert str(caught.value) == (
        f"{out}: its games are by the engine of {spec!r} when it said it was 'c4lab random:seed=1', and it now says "
        "'c4lab random:seed=2': one run does not mix the games of two versions of a program (write to another file, "
        "or resume it with the program of those games)")
    assert out.read_bytes() == written
    agent.write_text("random:seed=1")
    outcome = run_arena(ArenaConfig((spec, "random"), games=4, board="5x4"), out, executor=LocalExecutor(jobs=1))
    assert outcome.played == 2 and len(read_results(out).games) == 4
