"""A command ends at once when its work is done, and keeps everything a
normal exit keeps: its status, its output, its ``atexit`` functions, and
the threads it must wait for."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest


def python(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], check=False, capture_output=True, text=True, timeout=60)


def test_the_status_the_output_and_the_atexit_functions_are_kept() -> None:
    out = python("""
        import atexit, sys
        from c4lab.quick_exit import leave
        atexit.register(lambda: print("atexit ran"))
        print("written", end=" ")
        sys.stderr.write("to stderr")
        leave(3)
        print("never")
    """)
    assert out.returncode == 3
    assert out.stdout == "written atexit ran\n"
    assert out.stderr == "to stderr"


@pytest.mark.parametrize(("code", "status", "stderr"), [(None, 0, ""), ("a message", 1, "a message\n")])
def test_none_and_a_message_mean_what_they_mean_to_sys_exit(code: str | None, status: int, stderr: str) -> None:
    out = python(f"from c4lab.quick_exit import leave\nleave({code!r})")
    assert (out.returncode, out.stderr) == (status, stderr)


def test_a_thread_that_is_not_a_daemon_is_waited_for() -> None:
    out = python("""
        import threading, time
        from c4lab.quick_exit import leave
        def work():
            time.sleep(0.3)
            print("the thread finished")
        threading.Thread(target=work).start()
        leave(0)
    """)
    assert out.returncode == 0
    assert out.stdout == "the thread finished\n"


def test_after_at_once_a_thread_still_running_is_not_waited_for() -> None:
    """``c4lab serve`` and ``play`` call ``at_once`` once the server stopped
    and the game database is closed: a first move or warm-up still inside
    numba's compiler no longer holds the exit (Python's shutdown joined the
    agent pool's threads)."""
    out = python("""
        import atexit, threading, time
        from c4lab.quick_exit import at_once, ends_at_once, leave
        atexit.register(lambda: print("atexit ran"))
        def work():
            time.sleep(600)
            print("the thread finished")
        threading.Thread(target=work).start()
        print(ends_at_once(), end=" ")
        at_once()
        print(ends_at_once(), end=" ")
        leave(130)
    """)
    assert out.returncode == 130
    assert out.stdout == "False True atexit ran\n"


def test_the_quick_commands_are_commands() -> None:
    from c4lab.cli import QUICK_EXIT, main

    assert QUICK_EXIT <= set(main.commands)
    assert not QUICK_EXIT & {"play", "serve", "train", "arena", "engine", "book"}  # long runs that write files


def test_the_command_exits_with_its_status_and_its_one_line() -> None:
    bad = subprocess.run([sys.executable, "-m", "c4lab", "show", "7x6:dq"], check=False, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    line = ("error: invalid position '7x6:dq': move 1 (the 2nd) 'q' at character 5: column q is beyond the board's width 7 "
            "(columns a..g)")
    assert (bad.stdout + bad.stderr).strip().splitlines() == [line]
    good = subprocess.run([sys.executable, "-m", "c4lab", "show", "7x6:d"], check=False, capture_output=True, text=True, timeout=60)
    assert good.returncode == 0
    assert good.stdout.startswith("7x6:d\n")


def test_a_reader_that_leaves_early_costs_no_traceback() -> None:
    """``c4lab ... | head -1``: the pipe closes before the output is flushed."""
    out = subprocess.run(
        f"{sys.executable} -m c4lab show 7x6 4x4 5x4 6x5 7x7 8x8 9x9 12x12 | head -c 1",
        shell=True, check=False, capture_output=True, text=True, timeout=60,
    )
    assert out.stdout == "7"
    assert "Traceback" not in out.stderr
