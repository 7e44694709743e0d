"""Ctrl-C wherever a process was started: a handler of SIGINT for a block.

A non-interactive shell starts a background job with SIGINT ignored, and
Python then installs no handler of its own: a run started that way could
not be stopped (nor its results saved) by Ctrl-C.  The long commands (the
arena, training, a solve) put their own handler in place for their run.
"""

from __future__ import annotations

import _thread
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from types import CodeType, FrameType
from typing import Any, TypeVar

T = TypeVar("T")

#: The signals that ask a long run to stop and keep what it did: Ctrl-C,
#: ``kill``'s (or a job scheduler's, or ``timeout``'s) SIGTERM, and the SIGHUP
#: of a terminal or a session closed under it.
STOP_SIGNALS: tuple[signal.Signals, ...] = (signal.SIGINT, signal.SIGTERM) + (
    (signal.SIGHUP,) if hasattr(signal, "SIGHUP") else ())


def stop_status(signum: int) -> int:
    """The exit status of a run a stop signal ended, as a shell gives it:
    130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP (128 + its number)."""
    return 128 + signum


def stop_words(status: int) -> str:
    """How a stopped run says why: "interrupted" for Ctrl-C's status, else
    "stopped by a signal"."""
    return "interrupted" if status == stop_status(signal.SIGINT) else "stopped by a signal"


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP within :func:`stops_interrupt`: raised as Ctrl-C's
    ``KeyboardInterrupt`` is, so that what handles Ctrl-C (save, then exit)
    handles them too; ``status`` is the shell's for a process the signal
    ended (128 + its number)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum

    @property
    def status(self) -> int:
        return stop_status(self.signum)


def exit_status(stop: KeyboardInterrupt) -> int:
    """The exit status of a run stopped by ``stop``: 130 for Ctrl-C, 143
    for SIGTERM, 129 for SIGHUP."""
    return stop.status if isinstance(stop, Stopped) else stop_status(signal.SIGINT)


class Flag:
    """A flag that a signal handler may set: ``threading.Event``'s ``set``
    without its lock.  Python runs a handler between any two bytecodes of
    the main thread, a handler included: a second signal can run one
    handler inside another, and an ``Event.set`` interrupted while it held
    its lock waits for itself for ever (an impatient user's many Ctrl-C
    hung a training run: CI290).  Setting, clearing and reading an
    attribute is one bytecode each, and nothing is waited for."""

    def __init__(self) -> None:
        self._set = False

    def set(self) -> None:
        self._set = True

    def clear(self) -> None:
        self._set = False

    def is_set(self) -> bool:
        return self._set


#: A Ctrl-C pressed since :func:`ctrl_c_kept_for_later` and not yet acted on.
_PRESSED = Flag()


def _keep(signum: int, frame: FrameType | None) -> None:
    _PRESSED.set()


def ctrl_c_pressed() -> bool:
    """Whether a Ctrl-C kept for later (:func:`ctrl_c_kept_for_later`) has
    not been acted on."""
    return _PRESSED.is_set()


def ctrl_c_kept_for_later() -> None:
    """From now on, Ctrl-C outside the blocks of :func:`ctrl_c_calls` is
    kept, not raised, and the next such block acts on it as it starts: the
    way a long command starts (``c4lab.__main__``), also where SIGINT came
    ignored.  Raised while the command loads, a ``KeyboardInterrupt`` met
    numba's imports and compiler, which made it an ``ImportError`` (a
    traceback, status 1) or swallowed it in a callback (the run trained on
    to its end).  Outside the main thread nothing changes."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _keep)


@contextmanager
def ctrl_c_calls(handler: Callable[[int, FrameType | None], object],
                 signals: tuple[signal.Signals, ...] = (signal.SIGINT,)) -> Iterator[None]:
    """Within the block, Ctrl-C (SIGINT; or each of ``signals``) calls
    ``handler`` (a signal handler) in this process, whatever disposition it
    inherited: a non-interactive shell starts a background job with SIGINT
    ignored, and Python then installs no handler of its own, so a run
    started that way could not be stopped (nor its results saved) by
    Ctrl-C.  A press kept for later (:func:`ctrl_c_kept_for_later`) calls
    ``handler`` as the block starts.  Each press is kept too, until it is
    acted on: one that ``handler`` raised where Python cannot raise it (a
    compiled library's callback) is sent again at once (:func:`_sent_again`),
    and acted on by the next block if it still got lost.  Outside
    the main thread signals cannot be handled, and nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def call(signum: int, frame: FrameType | None) -> object:
        if signum == signal.SIGINT:
            _PRESSED.set()
        return handler(signum, frame)

    def act_on_a_kept_press() -> None:
        if signal.SIGINT in signals and _PRESSED.is_set():
            _PRESSED.clear()
            handler(signal.SIGINT, None)

    previous = {signum: signal.signal(signum, call) for signum in signals}
    hook = sys.unraisablehook
    sys.unraisablehook = _sent_again(hook)
    try:
        act_on_a_kept_press()  # pressed before the block
        yield
        act_on_a_kept_press()  # pressed in the block, and lost there
    except KeyboardInterrupt:
        _PRESSED.clear()  # acted on
        raise
    finally:
        sys.unraisablehook = hook
        for signum, disposition in previous.items():
            signal.signal(signum, disposition)


def _sent_again(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    """``sys.unraisablehook`` for a :func:`ctrl_c_calls` block: a stop its
    handler raised where Python cannot raise it (a compiled library's
    callback, such as llvmlite's while numba compiles; a ``__del__``) is
    not printed as "Exception ignored ... Traceback" but sent again
    (:func:`_send_once_out`), and so raised in the main thread's Python
    outside that callback, milliseconds later (CI531: a Ctrl-C while a
    training run compiled printed that traceback before its "interrupted"
    line).  Anything else goes to ``hook``."""

    def handle(unraisable: Any) -> object:
        stop = unraisable.exc_value
        if not isinstance(stop, KeyboardInterrupt):
            return hook(unraisable)
        signum = stop.signum if isinstance(stop, Stopped) else signal.SIGINT
        threading.Thread(target=_send_once_out, args=(signum, handle.__code__), name="c4lab-stop-sent-again",
                         daemon=True).start()
        return None

    return handle


def _send_once_out(signum: int, hook: CodeType) -> None:
    """Send ``signum`` to the main thread once it has left ``hook`` (the
    code of the unraisable hook that asked): sent from the hook itself, it
    was handled at the hook's next line, and lost there again.  Sent while
    the main thread is in another callback, it is lost there and sent
    again, until a line of Python outside one raises it."""
    main = threading.main_thread().ident
    while True:
        frame = sys._current_frames().get(main) if main is not None else None
        while frame is not None and frame.f_code is not hook:
            frame = frame.f_back
        if frame is None:
            break
        time.sleep(0.001)
    _thread.interrupt_main(signal.Signals(signum))


def ctrl_c_interrupts() -> AbstractContextManager[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` in this process,
    whatever SIGINT disposition it inherited (:func:`ctrl_c_calls`)."""
    return ctrl_c_calls(signal.default_int_handler)


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Stopped(signum)


def stops_interrupt() -> AbstractContextManager[None]:
    """Within the block, Ctrl-C raises ``KeyboardInterrupt`` and SIGTERM or
    SIGHUP raise :class:`Stopped` (a ``KeyboardInterrupt``): a long run
    killed by a scheduler or left by a closed terminal saves its work as
    on Ctrl-C, instead of ending with nothing written."""
    return ctrl_c_calls(_raise_stop, STOP_SIGNALS)


def stops_ignored_from_now() -> None:
    """:func:`ctrl_c_ignored_from_now` for every signal of
    :data:`STOP_SIGNALS`: the first one is being handled."""
    _PRESSED.clear()  # acted on
    if threading.current_thread() is threading.main_thread():
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


def run_stoppable(main: Callable[[], object]) -> None:
    """Run a script's ``main`` so that Ctrl-C, SIGTERM or SIGHUP ends it as
    a command does: ``main``'s ``finally`` blocks run (an engine closed, a
    server stopped), then one line on stderr ("interrupted" or "stopped by
    a signal") and the shell's status (130, 143, 129), no traceback.  The
    ``__main__`` of the benchmark scripts; a command of the CLI says in its
    line what it saved as well."""
    try:
        with stops_interrupt():
            main()
    except KeyboardInterrupt as stop:
        stops_ignored_from_now()  # on the way out: more presses change nothing
        print(stop_words(exit_status(stop)), file=sys.stderr)
        sys.exit(exit_status(stop))


def ctrl_c_ignored_from_now() -> None:
    """Ignore Ctrl-C from now until the process ends: called once a first
    Ctrl-C is being handled (what was done is being saved, the process is
    on its way out).  An impatient second press would otherwise raise
    ``KeyboardInterrupt`` in the middle of that, and a ``KeyboardInterrupt``
    that escapes while Python exits kills the process by SIGINT: the
    status is then -2, not 130, and the last lines may be lost.  Outside
    the main thread nothing changes."""
    _PRESSED.clear()  # acted on
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def interrupted_line() -> str:
    """What a command Ctrl-C ended says: "interrupted", on a line of its own
    after the ``^C`` a terminal echoes, with no blank line before it in a
    log file or a pipe."""
    return ("\n" if sys.stderr.isatty() else "") + "interrupted"


@contextmanager
def _stops_held() -> Iterator[None]:
    """Within the block, the stop signals (:data:`STOP_SIGNALS`) are noted,
    not acted on, and each one noted is sent again as the block ends, to
    the handler in place before it: for a step that must not be cut in
    the middle.  ``Thread.start`` is one: it starts the thread, then waits
    for it to say so, and a handler that raised in that wait (CI saw a
    SIGTERM there) left a thread running that ``join`` refused to wait for
    ("cannot join thread before it is started").  Outside the main thread
    signals are not handled, and nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []

    def note(signum: int, frame: FrameType | None) -> None:
        held.append(signum)

    previous = {}
    try:
        for signum in STOP_SIGNALS:
            previous[signum] = signal.signal(signum, note)
        yield
    finally:
        for signum, disposition in previous.items():
            signal.signal(signum, disposition)
        for noted in dict.fromkeys(held):  # also after a failure in the block: a Ctrl-C is never lost
            signal.raise_signal(noted)  # its handler runs now, here


def waited_on_a_thread(
    work: Callable[[], T], name: str, on_interrupt: Callable[[], bool | None] | None = None, join: bool = True,
) -> T:
    """``work()`` run on a daemon thread of its own while this one waits,
    so that Ctrl-C reaches this one at once: Python runs a signal's handler
    only between the main thread's bytecodes, and a compiled kernel can run
    for minutes (hours) in one call.  Its exception is raised here.  An
    exception in the wait (``KeyboardInterrupt``, one as the thread starts
    too) calls ``on_interrupt``, which tells the work to stop: where it
    returns True the wait goes on (the work returns what it has: the
    analysis board's ``s``); otherwise the exception is raised again, after
    the work ended where ``join`` (else at once: a hint, whose engine may
    think on; the thread ends on its own).  Without ``on_interrupt`` the
    work is left to the process's end."""
    answer: list[T] = []
    failure: list[BaseException] = []
    # The end of the work, as an event of its own: once a Ctrl-C has interrupted ``Thread.join``, CPython
    # 3.11's ``is_alive`` may say False of a thread that still runs (the wait then ended with no answer).
    ended = threading.Event()

    def run() -> None:
        try:
            answer.append(work())
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            failure.append(exc)
        finally:
            ended.set()

    thread = threading.Thread(target=run, name=name, daemon=True)
    begun = False
    while not ended.is_set():
        try:
            if not begun:
                with _stops_held():  # a stop raised in ``start``'s wait would leave a thread no join may wait for
                    thread.start()
                    begun = True
            ended.wait(0.1)  # a wait that Ctrl-C interrupts
        except BaseException:
            if on_interrupt is None:
                raise
            if on_interrupt():
                continue
            if join and begun:
                ended.wait()
            raise
    if failure:
        raise failure[0]
    return answer[0]


__all__ = [
    "STOP_SIGNALS", "Flag", "Stopped", "ctrl_c_calls", "ctrl_c_ignored_from_now", "ctrl_c_interrupts", "ctrl_c_kept_for_later",
    "ctrl_c_pressed", "exit_status", "interrupted_line", "run_stoppable", "stop_status", "stop_words", "stops_ignored_from_now", "stops_interrupt",
    "waited_on_a_thread",
]
