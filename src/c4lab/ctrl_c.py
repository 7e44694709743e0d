"""Ctrl-C wherever a process was started: a handler of SIGINT for a block.

A non-interactive shell starts a background job with SIGINT ignored, and
Python then installs no handler of its own: a run started that way could
not be stopped (nor its results saved) by Ctrl-C.  The long commands (the
arena, training, a solve) put their own handler in place for their run.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import FrameType


@contextmanager
def ctrl_c_calls(handler: Callable[[int, FrameType | None], object]) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT) calls ``handler`` (a signal
    handler) in this process, whatever SIGINT disposition it inherited: a
    non-interactive shell starts a background job with SIGINT ignored, and
    Python then installs no handler of its own, so a run started that way
    could not be stopped (nor its results saved) by Ctrl-C.  Outside the
    main thread signals cannot be handled, and nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ctrl_c_interrupts() -> AbstractContextManager[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` in this process,
    whatever SIGINT disposition it inherited (:func:`ctrl_c_calls`)."""
    return ctrl_c_calls(signal.default_int_handler)


def ctrl_c_ignored_from_now() -> None:
    """Ignore Ctrl-C from now until the process ends: called once a first
    Ctrl-C is being handled (what was done is being saved, the process is
    on its way out).  An impatient second press would otherwise raise
    ``KeyboardInterrupt`` in the middle of that, and a ``KeyboardInterrupt``
    that escapes while Python exits kills the process by SIGINT: the
    status is then -2, not 130, and the last lines may be lost.  Outside
    the main thread nothing changes."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


__all__ = ["ctrl_c_calls", "ctrl_c_ignored_from_now", "ctrl_c_interrupts"]
