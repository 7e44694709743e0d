"""Ending a process once its work is done, without Python's slow shutdown.

A process that has loaded or compiled numba kernels spends a long time in
the interpreter's own shutdown after its last line has run (tearing down
its modules and the compiled code's objects): 0.3 s for a warm ``c4lab
move``, whose whole run is 1.3-1.7 s, and 0.9 s for the child of
``c4lab.compile_aside`` after it compiled UCT (measured on the project's
machine).  A person waits for the first; a first ``master`` move waits for
the second.  :func:`leave` keeps what a normal exit does that matters --
the ``atexit`` functions run (logging, Ray, multiprocessing), the standard
streams are flushed -- and then ends the process at once (``os._exit``).
numba writes its cache while it compiles, not at exit, so nothing of it is
lost.  Where a thread that is not a daemon still runs, a normal exit would
wait for it: :func:`leave` then exits normally too.  A file the process
left open would not be flushed: the ``c4lab`` command uses it only for its
short commands, whose output is the standard streams
(``c4lab.cli.QUICK_EXIT``).

A command whose own end closed everything it wrote (``c4lab serve`` and
``play``, once the server stopped and the game database is closed) calls
:func:`at_once`: its exit then skips the wait for the threads still running
too (a background warm-up or an agent's first move, inside numba's
compiler: Python's shutdown joined them, up to a first compile's 10-20 s
after a Ctrl-C; a thread torn down there can also crash the process).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn

_at_once = False


def at_once() -> None:
    """From now on, :func:`leave` ends the process even while other threads
    run: what they do needs no keeping (the caller closed its files)."""
    global _at_once
    _at_once = True


def ends_at_once() -> bool:
    """Whether :func:`at_once` was called in this process."""
    return _at_once


def leave(code: int | str | None = 0) -> NoReturn:
    """End the process with ``code`` as ``sys.exit`` would (``None`` is 0;
    a string is printed to stderr and the status is 1), skipping the
    interpreter's shutdown where nothing else still runs (or after
    :func:`at_once`)."""
    run_exit_functions = getattr(atexit, "_run_exitfuncs", None)
    waits = not _at_once and any(
        t is not threading.main_thread() and t.is_alive() and not t.daemon for t in threading.enumerate()
    )
    if waits or run_exit_functions is None or not isinstance(code, (int, str, type(None))):
        sys.exit(code)  # a thread to wait for, not CPython, or an odd status: the normal exit
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    status = 0 if code is None else code
    run_exit_functions()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``c4lab ... | head``) or stream: nothing to keep
            pass
    os._exit(status)


__all__ = ["at_once", "ends_at_once", "leave"]
