"""The tether: a small program between c4lab and an engine program it
starts (Linux), so that the engine cannot outlive the c4lab process.

A well-behaved engine exits when its standard input ends, which is what
happens when the c4lab process dies; one that hangs (a busy loop that no
longer reads) would run on for ever, an orphan eating a core.  c4lab stops
its engines itself whenever it can (``close``, at exit, on its stop
signals), but nothing runs in a process killed by SIGKILL or the
out-of-memory killer.  So on Linux c4lab starts

    python -I -S tether.py PARENT ERRFD PROGRAM [ARG...]

in the engine's own session instead of PROGRAM: the tether starts PROGRAM
as its child and waits until either ends.  The engine ending: the tether
exits with its status (the same exit code, or killed by the same signal),
so that c4lab sees the engine's own end.  The process PARENT (c4lab)
ending: the tether kills its whole process group with SIGKILL -- the
engine, what the engine started, and itself.

Why a process rather than ``prctl(PR_SET_PDEATHSIG)`` in the engine: the
death signal follows the *thread* that started the child, not the process,
and c4lab starts engines from many threads (a command's worker thread, the
server's agent threads, a warm-up thread that ends at once), so an engine
would be killed when the thread that happened to start it ended; setting it
in ``preexec_fn`` is also unsafe in a process with threads.  It would only
reach the engine itself, too, not a script's children.  The tether watches
the *process*, with a pidfd where Linux has one (5.3 on) and by looking at
``getppid()`` every ``POLL`` seconds where not.

A process the engine starts in a session of its own (``setsid``, a daemon)
leaves the engine's process group, so killing the group misses it.  The
tether is therefore the *subreaper* of what the engine starts
(``PR_SET_CHILD_SUBREAPER``): such a process, orphaned, becomes the
tether's child rather than init's, and the tether kills its children
(and theirs, as they come to it) before it ends: when the engine ends,
when c4lab is gone, and on SIGUSR1, which c4lab sends before it kills a
group that would not end on SIGTERM (SIGKILL would end the tether before
it could).  One that ends by itself is reaped as it ends (SIGCHLD), as
init would have.

It must not change what the engine sees: PROGRAM is found on PATH as
``subprocess`` finds it, a program that cannot start reports its errno on
ERRFD (a pipe that closes unwritten when PROGRAM started: c4lab reads it
and raises the ``OSError`` that ``Popen`` would have), the signal
dispositions the engine gets are those ``Popen`` would have given it, and
the tether keeps none of the engine's pipes open (its own standard streams
are /dev/null once the child runs).  It ignores SIGTERM, SIGINT and SIGHUP
(c4lab's SIGTERM to the group is for the engine, which may take the grace
c4lab gives it; the tether then reports how it ended); SIGKILL ends both.

Standard library only, and run with ``-I -S`` by path: it imports nothing of
c4lab, so it starts in a few tens of milliseconds.  The arena's workers use
:func:`wait` too, to end with the run that started them.
"""

from __future__ import annotations

import os
import select
import sys

TYPE_CHECKING = False  # not typing's: importing typing would add to every engine's start
if TYPE_CHECKING:
    import signal
    from collections.abc import Mapping
    from typing import NoReturn
else:
    try:  # the C module that ``signal`` wraps: ``signal`` imports enum, a third of the tether's start-up time
        import _signal as signal
    except ImportError:  # pragma: no cover - another Python than CPython
        import signal

#: Seconds between two looks at ``getppid()`` where there is no pidfd.
POLL = 0.2
#: The status of a tether that did not start PROGRAM (c4lab was gone, or exec failed).
NOT_STARTED = 127
#: Signals the tether ignores, to end only with its engine (or SIGKILL).
_IGNORED: tuple[int, ...] = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
#: Signals Python ignores at its start and ``Popen`` restores to the default for the program it runs.
_RESTORED: tuple[int, ...] = tuple(getattr(signal, name) for name in ("SIGPIPE", "SIGXFSZ") if hasattr(signal, name))


def pidfd(pid: int) -> int | None:
    """A pidfd of process ``pid`` (readable once it has ended), or None
    where there is none: Linux before 5.3, a sandbox that forbids it, a
    process gone already."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def wait(parent: int, child: int | None = None) -> int | None:
    """Block until ``parent`` is no longer this process's parent (it ended:
    None), or until this process's ``child`` ended (its wait status, the
    child reaped).  Either end is seen at once where pidfds exist, within
    ``POLL`` seconds where not."""
    watched = pidfd(parent)
    if os.getppid() != parent:  # ended before (or while) its pidfd was opened: the pidfd may name another
        return None
    mine = pidfd(child) if child is not None else None
    fds = [fd for fd in (watched, mine) if fd is not None]
    whole = watched is not None and (child is None or mine is not None)
    while True:
        ready, _, _ = select.select(fds, [], [], None if whole else POLL)
        if child is not None:
            done, status = os.waitpid(child, os.WNOHANG)
            if done:
                return status
        if (watched is not None and watched in ready) or os.getppid() != parent:
            return None


#: Linux's ``prctl`` option that makes orphaned descendants this process's children.
PR_SET_CHILD_SUBREAPER = 36
#: The signal c4lab sends the tether to kill everything under it at once.
KILL_ALL = signal.SIGUSR1


def become_subreaper() -> bool:
    """Make this process the subreaper of its descendants (Linux 3.4 on):
    whether it is.  ``ctypes`` only here: a dozen milliseconds."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (ImportError, OSError, AttributeError):
        return False


def children() -> list[int]:
    """This process's children (zombies included), from /proc."""
    found: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as listing:
                found += [int(pid) for pid in listing.read().split()]
    except (OSError, ValueError):
        pass
    return found


def kill_descendants(rounds: int = 50) -> None:
    """SIGKILL every process under this one, reaping them: a child killed
    leaves its own children to this process (the subreaper), so the next
    round finds them, until none is left (or ``rounds`` have passed)."""
    for _ in range(rounds):
        alive = children()
        if not alive:
            return
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in alive:
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass


def reap_adopted(engine: int) -> None:
    """Reap the children that have ended but ``engine``: processes the
    engine left in a session of their own, adopted by the tether (its
    subreaper), which would else stay zombies until the tether ends.  The
    engine is left to :func:`wait`, which reports its status."""
    for pid in children():
        if pid != engine:
            try:
                os.waitpid(pid, os.WNOHANG)
            except OSError:
                pass


def _end_all(status: int, child: int | None = None) -> NoReturn:
    """Kill what is under the tether, then its group (itself too), and
    ``child`` in any case (where /proc lists no children); exit with
    ``status``."""
    kill_descendants()
    if os.getpgrp() == os.getpid():
        os.killpg(os.getpgrp(), signal.SIGKILL)
    if child is not None:
        os.kill(child, signal.SIGKILL)
    os._exit(status)


def _kill_all(signum: int, frame: object) -> None:
    """SIGUSR1 (``KILL_ALL``): end everything now, as SIGKILL would have."""
    _end_all(128 + signal.SIGKILL)


def _run(program: list[str], errfd: int, inherited: Mapping[int, object]) -> None:
    """In the child: PROGRAM, with the dispositions ``Popen`` would give it;
    its errno on ``errfd`` if it cannot start."""
    try:
        for signum, disposition in inherited.items():
            signal.signal(signum, signal.SIG_IGN if disposition == signal.SIG_IGN else signal.SIG_DFL)
        for signum in (*_RESTORED, KILL_ALL):
            signal.signal(signum, signal.SIG_DFL)
        os.execvp(program[0], program)
    except OSError as exc:
        try:
            os.write(errfd, str(exc.errno or 0).encode())
        except OSError:
            pass
    os._exit(NOT_STARTED)


def _relay(status: int) -> None:
    """End this process as the child ended: its exit code, or its signal
    (without a core file of the tether's own)."""
    if os.WIFEXITED(status):
        os._exit(os.WEXITSTATUS(status))
    signum = os.WTERMSIG(status)
    try:
        import resource  # lazy: only for a child killed by a signal

        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ImportError, OSError, ValueError):
        pass
    try:
        signal.signal(signum, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL's cannot be set (nor need it)
        pass
    os.kill(os.getpid(), signum)
    os._exit(128 + signum)


def main(argv: list[str]) -> None:
    """``tether.py PARENT ERRFD PROGRAM [ARG...]``: see the module's text."""
    if len(argv) < 4 or not (argv[1].isdigit() and argv[2].isdigit()):
        sys.stderr.write(f"usage: {argv[0]} PARENT_PID ERRFD PROGRAM [ARG...] (c4lab runs it: see its text)\n")
        sys.exit(2)
    parent, errfd, program = int(argv[1]), int(argv[2]), argv[3:]
    inherited = {signum: signal.getsignal(signum) for signum in _IGNORED}
    for signum in _IGNORED:
        signal.signal(signum, signal.SIG_IGN)
    if os.getppid() != parent:  # c4lab died before the tether got here: nobody to play for
        os._exit(NOT_STARTED)
    os.set_inheritable(errfd, False)  # closed by a successful exec: c4lab reads its end, then EOF
    become_subreaper()  # before the fork: what the engine starts is the tether's to end
    signal.signal(KILL_ALL, _kill_all)
    child = os.fork()
    if child == 0:
        _run(program, errfd, inherited)
    os.close(errfd)
    if hasattr(signal, "SIGCHLD"):  # an adopted process that ends is reaped then, not when the tether ends
        signal.signal(signal.SIGCHLD, lambda signum, frame: reap_adopted(child))
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the engine's pipes are the engine's alone: they close when it ends
        os.dup2(null, fd)
    os.close(null)
    status = wait(parent, child)
    if status is not None:
        kill_descendants()  # what the engine left behind, in a session of its own too
        _relay(status)
    _end_all(NOT_STARTED, child)  # c4lab is gone: the engine, what it started, and the tether


if __name__ == "__main__":
    main(sys.argv)
