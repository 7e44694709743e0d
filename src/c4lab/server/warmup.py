"""numba's first start on the server: compile in the background, and say so.

The first run after an install compiles the agents' kernels (later runs load
them from numba's cache on disk), which takes seconds.  The server hides it
as well as it can and says so when it cannot:

- :func:`warm_up` plays one throwaway move of an agent on a board, in the
  agent pool, so that the kernels are compiled (or loaded from the cache)
  while the person thinks about their first move.  Each agent and kind of
  board is warmed once per process (:func:`claim`): numba keeps what it
  compiled for the process's lifetime.  Both come from ``c4lab.agents.base``,
  whose ``Agent.prepare`` the arena's referee uses the same way.
- :data:`COMPILING` listens to numba's compile events, from any thread: while
  an agent's move waits and a compile is going on, the room's state carries
  ``preparing`` (the seconds the move has waited) and the page shows
  "preparing the engine, first start only".  Loading from the cache raises
  no compile event, so a warm server never shows it.
- :class:`AgentPool` is the agent pool that knows when it is busy: the
  background warm-ups (what a person may pick next) start each of theirs
  only while no move, hint, review or room's warm-up is waiting or under
  way, since numba compiles one function at a time in a process and a
  person's first hint waited behind them (the analysis board's first hint
  on 6x5/Xc2 on an empty cache: 66-76 s, 41 s with the gate, a loaded
  machine).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from c4lab.agents.base import board_kind, claim, warm_up
from c4lab.cores import usable_cores

MESSAGE = "preparing the engine, first start only"


class CompileWatch:
    """Whether numba is compiling now, in any thread of the process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self._installed = False
        #: Compilations started so far (a move that saw this change was delayed by one).
        self.started = 0

    def install(self) -> None:
        """Listen to numba's compile events (once; imports numba)."""
        with self._lock:
            if self._installed:
                return
            self._installed = True
        from numba.core import event  # lazy: numba only for a server that runs agents

        watch = self

        class Listener(event.Listener):  # type: ignore[misc]
            def on_start(self, _event: Any) -> None:
                with watch._lock:
                    watch._depth += 1
                    watch.started += 1

            def on_end(self, _event: Any) -> None:
                with watch._lock:
                    watch._depth = max(0, watch._depth - 1)

        event.register("numba:compile", Listener())

    @property
    def active(self) -> bool:
        """True while a compilation is under way."""
        return self._depth > 0


COMPILING = CompileWatch()

#: Seconds between two looks of a background warm-up at whether the pool is idle.
IDLE_POLL = 0.1


class AgentPool(ThreadPoolExecutor):
    """A thread pool that counts its tasks waiting or under way, so that
    speculative work elsewhere can give way to it (:meth:`wait_idle`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._count_lock = threading.Lock()
        self._pending = 0

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        with self._count_lock:
            self._pending += 1
        try:
            future = super().submit(fn, *args, **kwargs)
        except BaseException:
            self._finished(None)
            raise
        future.add_done_callback(self._finished)
        return future

    def _finished(self, _future: Future[Any] | None) -> None:
        with self._count_lock:
            self._pending -= 1

    @property
    def busy(self) -> bool:
        """True while a task waits for a thread or runs."""
        return self._pending > 0

    def wait_idle(self, stop: threading.Event) -> bool:
        """Block until no task waits or runs (True), or ``stop`` is set (False)."""
        while self.busy:
            if stop.wait(IDLE_POLL):
                return False
        return not stop.is_set()


class PrepareAhead:
    """``c4lab prepare``'s work in the background, for ``c4lab play`` and
    ``serve``: called once the server's own warm-ups are done (``create_app``'s
    ``after_warm_ups``), it starts a child process at a low priority that
    compiles every agent on every kind of board
    (``agents.prepare.prepare_everything``), where no whole prepare was
    made for these sources yet (``agents.prepare.wanted_in_background``)
    and a core is free for it (``compile_aside.enabled``; on a busy
    machine it looks again every :attr:`RETRY` seconds), says so in a line,
    and in another when it is done.  So a person who started the game
    once after an install meets the compiler on no board and in no
    command afterwards.  :meth:`stop` ends the child with the server:
    what it compiled is kept, and the next start goes on with the rest."""

    #: What the child runs (``compile_aside``'s ``MODULE:FUNCTION``).
    TARGET = "c4lab.agents.prepare:prepare_everything"
    #: Seconds between two looks for a free core, while other work keeps
    #: them busy (a reading of ``/proc/loadavg``).
    RETRY = 10.0

    def __init__(self, say: Callable[[str], None]) -> None:
        self._say = say
        self._lock = threading.Lock()
        self._aside: Any = None  # compile_aside.Aside, once started
        self._stopped = threading.Event()

    def __call__(self) -> None:
        from c4lab import compile_aside, precompiled  # lazy: numba's kernels are loaded by then
        from c4lab.agents.prepare import BACKGROUND_ENV, wanted_in_background

        if not wanted_in_background() or os.environ.get(compile_aside.ENV, "") == "0" or usable_cores() < 2:
            return  # off, done, or one core: the child would only slow the server's own moves
        while not compile_aside.enabled():  # a busy machine: later, when a core is free
            if self._stopped.wait(self.RETRY):
                return
        with self._lock:
            if self._stopped.is_set():
                return
            self._aside = aside = compile_aside.start(self.TARGET, ahead=True)
        if aside is None:  # no process to be had (or the core taken again meanwhile)
            return
        began = time.monotonic()
        self._say("compiling the engine for every agent and kind of board in the background, once (what "
                  f"`c4lab prepare` does; {BACKGROUND_ENV}=0 turns it off)")
        if aside.join() == 0 and not self._stopped.is_set():
            done = f"the engine is compiled for every agent and kind of board ({waited(began):.0f} s)"
            if precompiled.usable():  # nothing waited for the compiler: what changes is the speed, from the next start
                self._say(f"{done}, for this processor: later starts run that, 10-30 % faster than the "
                          "code shipped compiled")
            else:
                self._say(f"{done}: no first move waits for the compiler now")

    def stop(self) -> None:
        """End the child if it runs (the server stops), and start none."""
        with self._lock:
            self._stopped.set()
            if self._aside is not None:
                self._aside.stop()


def waited(since: float) -> float:
    """The seconds since ``since`` (``time.monotonic``), to one decimal."""
    return round(time.monotonic() - since, 1)


__all__ = [
    "COMPILING", "MESSAGE", "AgentPool", "CompileWatch", "PrepareAhead", "board_kind", "claim", "waited", "warm_up",
]
