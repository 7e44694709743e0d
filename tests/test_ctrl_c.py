"""The stop signals around a wait on a thread (``c4lab.ctrl_c.waited_on_a_thread``):
a solve, a hint or a book build runs its search on a thread so that Ctrl-C
(or a SIGTERM) reaches the main thread at once; and a stop that lands in a
compiled library's callback."""

from __future__ import annotations

import ctypes
import signal
import sys
import threading
import time

import pytest

from c4lab.ctrl_c import Stopped, stops_interrupt, waited_on_a_thread


def test_a_stop_that_comes_as_the_thread_starts_is_raised_once_the_work_has_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI: a SIGTERM to ``c4lab book build`` came while ``Thread.start``
    waited for the solve's new thread; raised there, it left a thread that
    ``join`` refused to wait for ("cannot join thread before it is
    started"): a traceback and status 1 instead of the saved book and 143.
    Now the signal waits for the start to end, then acts as in the wait:
    the work is told to stop, ends, and the stop is raised."""
    original = threading.Thread.start

    def start(self: threading.Thread) -> None:
        if self.name == "test-work":  # no other thread's start (a test runner's own)
            signal.raise_signal(signal.SIGTERM)  # within the start (CI's came in its wait for the thread)
        original(self)

    told = threading.Event()
    ended: list[bool] = []

    def work() -> int:
        told.wait(10)
        ended.append(told.is_set())
        return 1

    monkeypatch.setattr(threading.Thread, "start", start)
    with stops_interrupt(), pytest.raises(Stopped):
        waited_on_a_thread(work, "test-work", on_interrupt=told.set)
    assert ended == [True]  # told to stop, and waited for


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_stop_that_lands_in_a_compiled_library_s_callback_is_raised_after_it_with_no_traceback(
    signum: int, capsys: pytest.CaptureFixture[str],
) -> None:
    """CI531: a Ctrl-C while a training run compiled came in one of llvmlite's
    ctypes callbacks; Python cannot raise from there, and printed
    "Exception ignored on calling ctypes callback function", a traceback and
    the ``KeyboardInterrupt``, before the run's "interrupted" line.  Now the
    stop is sent again and raised in the main thread's Python soon after the
    callback (within milliseconds), and nothing is printed; the hook of the process is as before
    once the block ends."""
    ran: list[str] = []

    def callback() -> None:
        signal.raise_signal(signum)  # the handler runs at the next line: inside the callback
        ran.append("after the signal")  # never: the stop was raised

    called_from_c = ctypes.CFUNCTYPE(None)(callback)
    hook = sys.unraisablehook
    with pytest.raises(KeyboardInterrupt) as stop, stops_interrupt():
        called_from_c()
        ran.append("after the callback")  # reached: the stop comes once the main thread has left the callback
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.01)
        ran.append("later")
    assert ran == ["after the callback"]
    assert isinstance(stop.value, Stopped) == (signum != signal.SIGINT)
    assert capsys.readouterr().err == ""
    assert sys.unraisablehook is hook


def test_without_a_stop_the_work_s_answer_and_its_exception_come_back() -> None:
    assert waited_on_a_thread(lambda: 41 + 1, "test-work") == 42

    def fails() -> int:
        raise ValueError("the work's own error")

    with pytest.raises(ValueError, match="the work's own error"):
        waited_on_a_thread(fails, "test-work")


def test_a_ctrl_c_that_asks_the_work_to_stop_waits_for_what_it_has() -> None:
    """The analysis board's ``s``: Ctrl-C tells the solves to stop, and the
    wait goes on until they return what they solved.  Once a Ctrl-C had
    interrupted ``Thread.join``, Python 3.11 said the still running thread
    was no longer alive, the wait ended with no answer, and the board
    failed with an ``IndexError`` and a traceback."""
    told = threading.Event()

    def work() -> str:
        told.wait(10)
        return "what it solved"

    # Python's own Ctrl-C, as in a command (a test runner's worker process may have it ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, signal.raise_signal, (signal.SIGINT,))
    timer.start()
    try:
        assert waited_on_a_thread(work, "test-work", on_interrupt=lambda: bool(told.set()) or True) == "what it solved"
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, before)
    assert told.is_set()
