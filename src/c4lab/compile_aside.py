"""Compiling on the second core: a child process fills numba's cache while
this process compiles something else.

numba compiles one function at a time in a process (under a global lock),
so a first search that needs several large kernels compiles them one after
the other on one core.  ``master``'s first move on a board needs three:
minimax's search, UCT's search and UCT's policy playouts, about 6 s of
compiling in a row.  On a machine with two cores or more, :func:`start`
runs a child process (``python -m c4lab.compile_aside MODULE:FUNCTION``)
that compiles some of them into numba's cache on disk while this process
compiles the others; :meth:`Aside.wait` then waits for the child, and this
process loads what it compiled from the cache (a tenth of a second).

Measured with ``benchmarks/first_move.py`` (an idle machine, two cores):
``c4lab move 9x8/Xd3 --agent master`` after ``hard`` had been compiled went
from 5.4 to 4.4 s, and as the very first command (an empty cache) from 7.5
to 6.3 s, while its UCT now searches its whole share of the move (before,
the compiler ran inside that share and the search stopped after one chunk).  It costs the child's start (about 0.5 s of CPU on the other core)
and the compiling the two processes do twice (the small rules kernels).
The child compiles minimax (``master._aside``), the rules' ``check`` for
compiled callers (the policy playouts call it), then ``check`` for
``Position`` and ``play`` (``rules.position.load_play``: ``c4lab move`` played
the answer it prints until 2026-12-02, and checks it since, 0.5-0.65 s of
compiling after the search then; the very first
``master`` move on 9x8/Xd3, idle, 2026-11-30: 5.70-6.22 → 5.01-5.07 s),
and the first timed
move searches with UCT while it does, then with minimax: on an empty cache this
process compiles UCT's search and playouts (about 4.4 s) meanwhile; after
a level, only the playouts (the search is on disk), and UCT's share of
the move runs under the child's work too.  Measured (idle, two cores,
2026-11-29, two runs of each tree): the very first ``master`` move on
9x8/Xd3 6.82-6.91 → 6.57-6.60 s, after ``hard`` 4.90-5.05 → 4.34-4.55 s
(before, the child compiled the playouts there and this process minimax,
the larger share, before the move could search at all).  The exact
solver does the same for a first solve with its best moves (``solver.api._recursion_aside``):
the child compiles the recursive search while this process compiles the
root search, the database lookup and the rules' move kernels; the first
``master`` move on 7x6 (the database's exact move) 5.11-5.33 → 3.95 s.
``c4lab solve`` and ``c4lab move`` start that child before they read a
position with moves (``solver.api.expect``), so that it compiles while
this process plays the moves (the rules' kernels, 0.9 s): the very first
``move 6x5/Xc2:dc --agent perfect`` 3.45-3.56 → 2.57-2.67 s.  (Since then
the moves are read interpreted, ``rules.interpreted``, and compile nothing.)

A child may also compile *ahead* (:func:`start` with ``ahead``): what a
later command is likely to need, which nobody waits for yet.  A UCT with
an exact end game (the levels ``hard`` and ``impossible``, the ``uct-*``
presets that have one) starts one at its first search for the solver
(``uct._endgame_solver_aside``): its end game needs it some twenty moves
later, and a person who has met a level often asks for an exact answer
next.  Measured with ``benchmarks/first_move.py`` (idle, two cores,
2026-11-29): ``c4lab solve 6x5/Xc2`` right after the first ``c4lab move
7x6 --agent hard`` went from 3.6-3.7 to 1.0-1.2 s and ``move 6x5/Xc2:dc
--agent perfect`` from 4.9-5.2 to 1.8-2.1 s; that first ``hard`` move
itself took 0.1-0.2 s longer (4.23-4.32 against 4.33-4.56 s).  The same
child then compiles the random playouts of the other kinds of board
(``rules.kernels.compile_playouts``, about 6 s more on a slow day): the
level's first move on 9x8/Xd3 after one on 7x6 took 1.47 s once the
child was done (16 s after the first command, 2026-12-05, a slow day),
against 3.7-3.9 s started at once, as ``benchmarks/first_move.py`` starts
it (the child is still on the solver then).  Such a
child runs at nice 10 and is not counted as other work by a later
:func:`enabled` (it ends within seconds).

A child is started only where it can help: numba's compiler on, at least
two cores for this process and one of them free (on this machine busy with
other jobs, load 2 to 4, a child made a first ``master`` move slower, 8.1
to 10.2 s: it only competes for the same cores), the work not already on
disk (:func:`on_disk`; a child that only loads would make the first search
wait for its start), and ``C4LAB_COMPILE_ASIDE`` not ``0`` (``1`` starts
one whatever the load).  A child that fails costs
nothing but its time: the caller then compiles (or loads) the work itself,
as it would have without one.  A child nobody waits for (the process
found its move without the work, or stopped) finishes alone and leaves its
work in the cache for the next start.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from c4lab.cores import usable_cores
from c4lab.quick_exit import leave

#: ``0``: compile everything in the process that needs it; ``1``: a child
#: whatever the load; unset: a child where a core is free.
ENV = "C4LAB_COMPILE_ASIDE"
#: The child's option that lowers its priority: work nobody waits for yet.
AHEAD = "--ahead"
_AHEAD_COMMAND = f"c4lab.compile_aside\0{AHEAD}\0".encode()
#: The longest wait for a child, in seconds: a child that takes longer is
#: left to finish alone, and the caller compiles the work itself.
WAIT_LIMIT = 120.0
#: The longest wait for a child compiling ahead (``--ahead``): at its low
#: priority, a child that other work keeps from its core may take ten
#: times its 4-5 s; the caller then compiles the work itself.
AHEAD_WAIT_LIMIT = 10.0
#: How often a wait with ``done`` (``Aside.wait``) reads whether the work
#: it waits for is on disk, in seconds (a read of the cache's index: a few
#: milliseconds).
DONE_CHECK = 0.05


def on_disk(py_func: Any, signature: Callable[[str], bool] | None = None) -> bool:
    """Whether numba's cache on disk holds a compiled version of
    ``py_func`` (the Python function behind a ``cache=True`` jit function or
    cfunc) for its current source; with ``signature``, one whose signature
    (numba's text of it, ``"int64(uint64, ...)"``) it accepts.  A closure's
    versions share one index, each under the hash of its closure's values
    (numba's ``_index_key``): only one for ``py_func``'s own values counts.
    The shipped compiled kernels count too (``c4lab.precompiled``).
    Reads the cache's index only: a few milliseconds, nothing compiled or
    loaded."""
    from numba.core.caching import FunctionCache

    from c4lab import precompiled  # lazy: imports numba, never loaded by a process that only starts a child

    try:
        cache = FunctionCache(py_func)
        index = {**cache._cache_file._load_index(), **precompiled.index(cache)}
        closure = _closure_hash(py_func)
    except Exception:  # noqa: BLE001 - no usable cache (read-only, no source): nothing on disk
        return False
    return any(
        (signature is None or signature(str(key[0]))) and (closure is None or key[2][1] == closure) for key in index
    )


def _closure_hash(py_func: Any) -> str | None:
    """The hash numba's cache files a closure's version under (the values
    of its free variables, serialised as numba does), or None for a
    function that is not a closure."""
    if py_func.__closure__ is None:
        return None
    import hashlib

    from numba.core.serialize import dumps

    return hashlib.sha256(dumps(tuple(cell.cell_contents for cell in py_func.__closure__))).hexdigest()


_cores = usable_cores  # a name of its own here: the tests set the cores a machine has


def _others_running(samples: int = 5, pause: float = 0.002) -> int | None:
    """How many tasks other than this process are runnable right now: the
    fewest over ``samples`` readings of ``/proc/loadavg`` ``pause`` seconds
    apart (its fourth field, ``runnable/all``, counts the reader itself).
    The fewest, so that a task that runs for a moment (a shell, a daemon)
    is not taken for a busy core; a job that computes is runnable in every
    reading.  None where there is no ``/proc/loadavg`` (not Linux)."""
    fewest: int | None = None
    for k in range(samples):
        try:
            with open("/proc/loadavg", encoding="ascii") as f:
                running = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return None
        fewest = running - 1 if fewest is None else min(fewest, running - 1)
        if fewest <= 0:
            break
        if k + 1 < samples:
            time.sleep(pause)
    return fewest


def _ahead_running() -> int:
    """How many children compiling ahead (``--ahead``) run now, by their
    command lines in ``/proc`` (0 where there is none)."""
    count = 0
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if _AHEAD_COMMAND in f.read():
                    count += 1
        except OSError:  # the process ended meanwhile, or is not ours to read
            continue
    return count


def _load() -> float:
    """How many cores other work keeps busy: the tasks runnable right now
    besides this process (:func:`_others_running`) where the system says,
    else the load average over the last minute (0 where unknown).  Not the
    load average where there is better: it lags by a minute, so the
    commands a person has just run (an install, a first move) count as
    other work long after they ended (measured: right after other
    commands, load 1.0 to 1.2 on an idle machine, the first ``master`` move
    on 9x8/Xd3 started no child and took 9.6-13.8 s; with this check it
    starts one and takes 6.7-9.8 s).  A child compiling ahead
    (:func:`start` with ``ahead``) is not counted: it runs at a low
    priority and ends within seconds (counted, a first ``master`` move
    right after a level's, while the level's child compiled the solver,
    started no child of its own and took 7.9 s instead of 5.2 s)."""
    running = _others_running()
    if running is not None:
        return float(max(0, running - _ahead_running())) if running else 0.0
    try:
        return max(0.0, os.getloadavg()[0] - 1.0)  # this process counted out
    except (AttributeError, OSError):  # pragma: no cover - not on a Unix
        return 0.0


def enabled() -> bool:
    """Whether a child may compile aside: numba's compiler on, two cores or
    more, and one of them free for the child (other work keeps at most the
    cores less two busy, :func:`_load`: this process needs one; on a busy
    machine a second process only slows the first down).
    ``C4LAB_COMPILE_ASIDE=1`` drops the load condition, ``0`` turns it
    off."""
    from numba.core import config

    wanted = os.environ.get(ENV, "")
    if wanted == "0" or getattr(config, "DISABLE_JIT", False):
        return False
    cores = _cores()
    return cores >= 2 and (wanted == "1" or _load() <= cores - 2)


class Aside:
    """A child process compiling ``targets`` into numba's cache, one after
    the other.  A thread of this process reaps it when it ends, whether or
    not anyone waits for it (no zombie is left behind)."""

    def __init__(self, *targets: str, ahead: bool = False) -> None:
        self.target = " ".join(targets)
        self._child = subprocess.Popen(
            [sys.executable, "-m", "c4lab.compile_aside", *([AHEAD] if ahead else []), *targets],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        self._ended = threading.Event()
        self._waited = False
        threading.Thread(target=self._reap, name="c4lab-compile-aside", daemon=True).start()

    def _reap(self) -> None:
        self._child.wait()
        self._ended.set()

    def join(self) -> int:
        """Wait for the child to end, however long it takes, without
        raising numba's compile event (nobody waits for its work: a
        server's ``c4lab prepare`` in the background); its exit status."""
        self._ended.wait()
        return self._child.wait()

    def stop(self) -> None:
        """End the child now if it still runs (SIGTERM): what it compiled is
        on disk, what it was compiling is not (numba's cache stays whole)."""
        if not self._ended.is_set():
            with contextlib.suppress(OSError):
                self._child.terminate()

    def wait(self, limit: float = WAIT_LIMIT, done: Callable[[], bool] | None = None) -> bool:
        """Wait for the child (at most ``limit`` seconds), once; True if it
        finished its work.  With ``done``, only until ``done()`` says that
        the part of its work the caller needs is on disk (read every
        ``DONE_CHECK`` seconds; True then): the child goes on with the
        rest alone.  While it waits, numba's compile event is raised
        in this process, so that the notice "preparing the engine" stays up
        (``c4lab.ui.preparing``, the server's ``warmup.COMPILING``)."""
        if self._waited:
            return False
        self._waited = True
        deadline = time.monotonic() + limit
        if done is not None and not self._ended.is_set() and done():
            return True  # already on disk: no wait at all (not even one ``DONE_CHECK``)
        with _compile_event(self.target):
            while not self._ended.wait(max(0.0, min(DONE_CHECK, deadline - time.monotonic()))):
                if done is not None and done():
                    return True
                if time.monotonic() >= deadline:
                    return False
        return self._child.returncode == 0


def start(*targets: str, ahead: bool = False) -> Aside | None:
    """A child process that runs ``targets`` in turn (each
    ``"module:function"``, a function that compiles or loads kernels), if
    :func:`enabled`; None otherwise.  A later target is work the caller
    needs later, or that costs little and saves it the compiling at the
    end of its first move (``rules.position.load_play``: ``c4lab move``
    checks the answer it prints).  The caller checks first that the work is not on disk
    already (:func:`on_disk`).  ``ahead``: work that nothing waits for
    yet (what a later command may need), at a low priority (nice 10), and
    not counted as other work by a later :func:`enabled`."""
    if not enabled() or not sys.executable:  # no Python to start (an embedded interpreter)
        return None
    try:
        return Aside(*targets, ahead=ahead)
    except OSError:  # no process to be had: compile here
        return None


def _compile_event(target: str) -> Any:
    """numba's ``numba:compile`` event around a wait for ``target``."""
    from numba.core import event

    return event.trigger_event("numba:compile", data={"dispatcher": None, "args": target, "return_type": ""})


def run(target: str) -> None:
    """Import ``module`` and call ``function()`` (``target`` is
    ``"module:function"``)."""
    module, _, name = target.partition(":")
    if not module.startswith("c4lab.") or not name:
        raise SystemExit(f"compile_aside: not a c4lab function: {target!r}")
    getattr(importlib.import_module(module), name)()


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if arguments[:1] == [AHEAD]:
        arguments = arguments[1:]
        with contextlib.suppress(AttributeError, OSError):  # no nice (not a Unix): the same work, less politely
            os.nice(10)
    if not arguments:
        raise SystemExit(f"usage: python -m c4lab.compile_aside [{AHEAD}] MODULE:FUNCTION [MODULE:FUNCTION ...]")
    os.environ[ENV] = "0"  # a child starts no children of its own
    for argument in arguments:
        run(argument)
    leave(0)  # the work is on disk: Python's shutdown would keep the caller waiting 0.9 s more
