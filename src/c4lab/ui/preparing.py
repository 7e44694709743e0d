"""Say so while numba compiles: "preparing the engine, first start only".

The first run after an install compiles the compiled kernels (later runs load
them from numba's cache on disk), which can take seconds; a command that
stays silent meanwhile looks hung.  :func:`announce_preparation` listens to
numba's compile events and, from the first compilation on, shows a status
line with the elapsed time on the given console until the compiling is over.
Loading from the cache raises no such event, so a warm start shows nothing.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console

from c4lab.ui.status import stderr_console

MESSAGE = "preparing the engine, first start only"
#: Said beside it on a terminal wide enough for both on one line: the command
#: that compiles every agent on every kind of board at once, so that no later
#: first move waits.
PREPARE_HINT = "`c4lab prepare` does every board at once"


@contextmanager
def announce_preparation(
    console: Console, busy: str | None = None, helpers: Callable[[threading.Thread], bool] | None = None,
    hint: bool = True,
) -> Iterator[None]:
    """Within the block, a status line on ``console`` while numba compiles
    for the thread that entered it, or in a thread for which ``helpers``
    is true (one whose work the block may wait for: the hint engine's
    warm-up, ``server.review.prepares_the_engine``), not for other threads'
    compiling in the background.  With ``busy``, the status line shows all
    along: ``busy`` and the seconds so far, but for the compiling (work
    that may last seconds, as the analysis board's scores, is never a
    silent screen).  ``hint``: name ``c4lab prepare`` beside it (where the
    work is a move or a score, which a prepare compiles ahead; not a
    training run's kernels, which it does not)."""
    from numba.core import event  # lazy: only the commands that run kernels load numba

    owner = threading.current_thread()

    def ours() -> bool:
        thread = threading.current_thread()
        return thread is owner or (helpers is not None and helpers(thread))
    lock = threading.Lock()
    begun = time.monotonic()
    state: dict[str, Any] = {"depth": 0, "start": None, "status": None}

    def text() -> str:
        if busy is not None and state["depth"] == 0:
            return f"{busy}... {time.monotonic() - begun:.0f} s"
        said = f"{MESSAGE}... {time.monotonic() - state['start']:.0f} s"
        hinted = f"{said} ({PREPARE_HINT})"
        return hinted if hint and len(hinted) + 3 <= console.width else said  # the spinner and a space: one line, never two

    def tick(done: threading.Event) -> None:
        while not done.wait(0.2):
            with lock:
                if state["status"] is not None:
                    state["status"].update(text())

    class Listener(event.Listener):  # type: ignore[misc]
        def on_start(self, _event: Any) -> None:
            if not ours():
                return
            with lock:
                state["depth"] += 1
                state["start"] = state["start"] or time.monotonic()
                if state["status"] is None:
                    status = console.status(text(), spinner="dots")
                    status.start()
                    state["status"] = status
                else:  # the busy line turns into the notice at once
                    state["status"].update(text(), spinner="dots")  # spinner=: drawn now, not at the next tick

        def on_end(self, _event: Any) -> None:
            if not ours():
                return
            with lock:
                if state["depth"] == 0:
                    return  # a helper's compile begun before the block: its start was not counted
                state["depth"] -= 1
                if state["depth"] == 0 and state["status"] is not None:
                    if busy is None:
                        state["status"].stop()
                        state["status"] = None
                    else:  # back to the busy line
                        state["status"].update(text(), spinner="dots")

    listener = Listener()
    if busy is not None:
        with lock:
            state["status"] = console.status(text(), spinner="dots")
            state["status"].start()
            state["status"].update(text(), spinner="dots")  # drawn now, not at the first tick
    done = threading.Event()
    ticker = threading.Thread(target=tick, args=(done,), daemon=True)
    ticker.start()
    try:
        with event.install_listener("numba:compile", listener):
            yield
    finally:
        done.set()
        ticker.join()
        with lock:
            if state["status"] is not None:
                state["status"].stop()
                state["status"] = None


def preparing_on_stderr(logged: bool = False, hint: bool = True) -> Any:
    """On a terminal, :func:`announce_preparation` on stderr; otherwise (a
    pipe, a log file: no status lines) nothing, or with ``logged`` a line
    when the compiling begins and one when the block ends after it (a long
    run's log: a minute of silence there read as a hang).  ``hint``: as
    :func:`announce_preparation`'s."""
    if sys.stderr.isatty():
        return announce_preparation(stderr_console(), hint=hint)
    return _logged_preparation() if logged else contextlib.nullcontext()


@contextmanager
def _logged_preparation(after: float = 1.0) -> Iterator[None]:
    """A line on stderr once this thread has spent ``after`` seconds
    compiling within the block (a kernel numba cannot cache, compiled in a
    fraction of a second on every start, says nothing), and at the block's
    end the seconds since its first compile."""
    from numba.core import event  # lazy: only the commands that run kernels load numba

    owner = threading.current_thread()
    lock = threading.Lock()
    state: dict[str, Any] = {"depth": 0, "first": None, "since": 0.0, "spent": 0.0, "said": False}
    done = threading.Event()

    def watch() -> None:  # says it once the compiling so far, the one under way included, passes ``after``
        while not done.wait(0.1):
            with lock:
                running = time.monotonic() - state["since"] if state["depth"] else 0.0
                if state["spent"] + running >= after:
                    state["said"] = True
                    print(f"{MESSAGE} (compiling, then kept on disk)...", file=sys.stderr, flush=True)
                    return

    class Listener(event.Listener):  # type: ignore[misc]
        def on_start(self, _event: Any) -> None:
            if threading.current_thread() is not owner:
                return
            with lock:
                state["depth"] += 1
                if state["depth"] == 1:
                    state["since"] = time.monotonic()
                if state["first"] is None:
                    state["first"] = state["since"]
                    threading.Thread(target=watch, daemon=True).start()

        def on_end(self, _event: Any) -> None:
            if threading.current_thread() is owner:
                with lock:
                    state["depth"] = max(0, state["depth"] - 1)
                    if state["depth"] == 0:
                        state["spent"] += time.monotonic() - state["since"]

    try:
        with event.install_listener("numba:compile", Listener()):
            yield
    finally:
        done.set()
        with lock:
            if state["said"]:
                print(f"ready after {time.monotonic() - state['first']:.0f} s", file=sys.stderr, flush=True)
