"""``EngineAgent``: any program that speaks the engine protocol, as an agent.

The agent spec ``engine:cmd=PROGRAM`` starts PROGRAM (a command line, split
like a shell does with ``shlex``; no ``,`` in it, since ``,`` separates spec
values: put a longer command in a script and name the script), does the
handshake, and for each move sends the position and ``go`` and reads
``bestmove``.  Everything an engine can do wrong becomes an ``EngineError``
that says what it got: a program that cannot start, that exits, that prints
a line which is not a reply of the protocol, that answers ``error``, that
plays an illegal move (``EngineIllegalMove``, also an ``IllegalMoveError``),
or that takes longer than the move's time plus a margin (``EngineTimeout``,
also the game loop's ``SlowMoveError``), so that a judged game records
``illegal`` and ``time`` where they apply and ``crash`` for the rest.  A
program that hangs or prints garbage is killed (the conversation is out of
step with it); ``new_game`` starts it again.

No fault of the program can hang its caller:

- the program runs in a session (process group) of its own, and stopping it
  kills the whole group (SIGTERM, then SIGKILL): a script's children too,
  which would otherwise hold its pipes open after it died;
- its output is read by daemon threads into a queue, and every read waits
  until a deadline at most: the handshake has its own short limit
  (``handshake=``), a move its time plus the margin, capped by the judge's
  limit plus margin (``set_move_limit``), and nothing waits for the pipes to
  close;
- a Ctrl-C while it thinks stops it like a time-out does.

The program is ended on ``close()``, at garbage collection, and at exit;
``stop_all`` kills every one still running in this process (the arena's
workers call it when they are terminated).  On Linux it cannot outlive
this process even when none of that runs (a SIGKILL): it is started
through the tether (``c4lab.engine.tether``), which kills its process
group when this process ends.  An ``EngineAgent`` holds a
process, so it cannot be pickled or shared between processes; within one
process its calls are serialised by a lock.

Importing this module registers the ``engine`` spec.  It is deliberately
not among the agent families that the registry loads by itself (the
``c4lab.agents`` entry points): a spec that runs a command must not be reachable from
specs that come over the network (the room server builds agents from its
clients' specs).
"""

from __future__ import annotations

import codecs
import collections
import contextlib
import errno
import io
import math
import numbers
import os
import queue
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING

from c4lab.agents.base import Agent, AgentError, Analysis, Budget, Param, SpecError, register
from c4lab.engine.protocol import (
    MAX_LINE,
    BestMove,
    Error,
    Go,
    Hello,
    HelloOk,
    Id,
    Info,
    IsReady,
    NewGame,
    Option,
    ProtocolError,
    Quit,
    ReadyOk,
    Reply,
    SetOption,
    SetPosition,
    Stop,
    parse_reply,
    readable,
    split_words,
)
from c4lab.engine.tether import KILL_ALL
from c4lab.game import NotReadyError, SlowMoveError
from c4lab.rules import IllegalMoveError, Move, Position
from c4lab.rules.errors import quote
from c4lab.rules.sides import game_over_error

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

DEFAULT_TIMEOUT = 30.0  # s: getting ready (isready), and a move when the budget sets no time
DEFAULT_HANDSHAKE = 15.0  # s: from start to 'c4labok' (our own engine, cold: 5.5 s here)
DEFAULT_MARGIN = 2.0  # s: beyond the move's time, for the engine's start-up and the pipes
#: The end of a time-out's message at the start and when getting ready: the parameter that allows more.
#: A slow start (tables loaded, code compiled) is no fault of the program, and --limit does not bound it.
LONGER_START = f"; to give it longer to start: handshake=SECONDS ({DEFAULT_HANDSHAKE:g} by default)"
LONGER_READY = f"; to give it longer to get ready: timeout=SECONDS ({DEFAULT_TIMEOUT:g} by default)"
_STDERR_LINES = 20  # the engine's last stderr lines, quoted when it dies
_QUIT_GRACE = 1.0  # s: a program told 'quit' may take this long to exit before it is killed
_TERM_GRACE = 0.5  # s: between SIGTERM and SIGKILL to the program's process group
_POLL = 0.1  # s: how often a read checks that the program still runs
_CHUNK = 65536  # bytes: the most one read of standard output takes
#: Sessions of their own, so that stopping a program stops what it started.
_OWN_SESSION = os.name == "posix"
_TETHER_SCRIPT = Path(__file__).with_name("tether.py")
#: Whether programs are started through the tether (``c4lab.engine.tether``),
#: which ends a program whose c4lab process died: on Linux (it watches the
#: process with a pidfd; elsewhere programs are started as they always were).
TETHER = sys.platform.startswith("linux") and bool(sys.executable) and _TETHER_SCRIPT.is_file()
#: How the tether is run: isolated (no user site, no PYTHON* variables), without ``site``: fast.
_TETHER_RUN = (sys.executable, "-I", "-S", str(_TETHER_SCRIPT))


class EngineError(AgentError):
    """An engine program that failed: it could not start, exited, hung,
    broke the protocol, answered ``error`` or chose an illegal move."""


class EngineTimeout(EngineError, SlowMoveError):
    """An engine that sent no answer within the time allowed (a judged
    game records it as a ``time`` forfeit)."""


class EngineNotReady(EngineTimeout, NotReadyError):
    """An engine that sent no ``readyok`` within its ``timeout``: at its
    start (after its options) as before a move, a judged game records it as
    a ``time`` forfeit."""


class EngineIllegalMove(IllegalMoveError, EngineError):
    """An engine whose ``bestmove`` is not a legal move of the position (a
    judged game records it as an ``illegal`` forfeit)."""


def _not_a_move(line: str) -> tuple[str, str] | None:
    """For ``bestmove TOKEN`` whose token is no move of the notation at all
    (``bestmove z``): the token and why; None for every other line, which
    the protocol's parser reads.  An engine that answers so has answered
    (the conversation is in step) with a move it cannot play: the same
    ``illegal`` as a move the position does not allow, as for an agent in
    Python.  A line with a byte that is no UTF-8 is a broken line, for the
    parser to refuse by its index, whatever it holds."""
    words = split_words(line)  # as parse_reply splits it: 'bestmove\xa0z' is no bestmove at all
    if len(words) != 2 or words[0] != "bestmove" or readable(line) != line:  # a byte no UTF-8: a broken line
        return None
    try:
        Move.parse(words[1])
    except ValueError as exc:
        return words[1], str(exc)
    return None


def _signal_name(number: int) -> str:
    """``11 (SIGSEGV)``: a signal's number and, where Python knows it, its name."""
    try:
        return f"{number} ({signal.Signals(number).name})"
    except ValueError:
        return str(number)


def _flooded(err: EngineTimeout, infos: int, last: str) -> EngineTimeout:
    """``err``, a ``bestmove`` that did not come in time, saying how many
    ``info`` lines the engine sent meanwhile (and the last one, as sent) when it
    sent any: an engine that floods its output with them until the time
    is up is not one that hung, and the message read as if it were."""
    if not infos:
        return err
    text = readable(last)
    shown = quote(text) if len(text) <= 80 else f"{quote(text[:80])}..."
    return EngineTimeout(f"{err}; it sent {infos} 'info' line{'s' if infos > 1 else ''} meanwhile (the last: {shown})")


class EngineRefused(EngineError):
    """The engine answered ``error``: a failure, but the conversation is in
    step (the program is kept)."""


#: What to do about a program that cannot start, by its errno: the usual slips.
_START_HINTS = {
    errno.EACCES: " (not an executable file: chmod +x it, or name its interpreter: engine:cmd=python3 {program})",
    errno.ENOEXEC: " (a script needs a first line like #!/usr/bin/env python3, or name its interpreter)",
}


#: A ``#!`` line that ends in a carriage return: the program cannot start (``#!/usr/bin/python3``), or
#: ``env`` finds no interpreter of that name and exits with 127 (``#!/usr/bin/env python3``).
_CRLF_HINT = "its #! line ends in a carriage return: save the file with Unix line ends, LF, not CRLF"


def _start_hint(program: str, exc: OSError) -> str:
    """How to mend the usual slips that keep a program from starting (or
    nothing): a folder, a file that is not executable or has no ``#!``
    line, and the "No such file or directory" of a program that is there:
    a file of this folder named without ``./`` (looked for on PATH, as a
    shell does), a ``#!`` line whose interpreter does not exist (or that
    ends in a carriage return: Windows line ends)."""
    if os.path.isdir(program):
        return " (a folder, not a program)"
    if exc.errno != errno.ENOENT or not os.path.isfile(program):
        return _START_HINTS.get(exc.errno or 0, "").format(program=program)
    if os.sep not in program:
        return f" (a program of this folder is named with its path: engine:cmd=./{program})"
    try:
        with open(program, "rb") as file:
            first = file.readline(256)
    except OSError:
        return ""
    if not first.startswith(b"#!"):
        return ""
    if first.rstrip(b"\n").endswith(b"\r"):
        return f" ({_CRLF_HINT})"
    words = first[2:].split()
    interpreter = words[0].decode(errors="replace") if words else ""
    return f" (the interpreter its #! line names, {interpreter!r}, does not exist)"


@dataclass(frozen=True)
class _LongLine:
    """What the output's reader puts in the queue, and stops at, for a line
    longer than ``MAX_LINE``: its first characters, to quote."""

    start: str


def _popen(argv: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[str]:
    """``argv`` with its three pipes, in a session of its own (POSIX)."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        errors="surrogateescape",  # a byte that is no UTF-8 kept, for the protocol's parser to refuse by its index
        bufsize=1,
        start_new_session=_OWN_SESSION,
        pass_fds=pass_fds,
    )


def _launch(argv: list[str]) -> subprocess.Popen[str]:
    """The program ``argv`` started, tied to this process where ``TETHER``
    holds: run by the tether (``c4lab.engine.tether``), which kills it (and
    what it started) if this process dies without stopping it -- killed by
    SIGKILL, say, when no cleanup of ours runs.  The ``Popen`` is then the
    tether's, which ends as the program ends, with its status.  A program
    that cannot start is the ``OSError`` that ``Popen`` raises for it either
    way (the tether sends its errno back on a pipe of its own)."""
    if not TETHER:
        return _popen(argv)
    report, errfd = os.pipe()
    try:
        popen = _popen([*_TETHER_RUN, str(os.getpid()), str(errfd), *argv], pass_fds=(errfd,))
    except BaseException:
        os.close(report)
        raise
    finally:
        os.close(errfd)
    try:
        with open(report, "rb") as pipe:  # EOF once the program started (or the tether failed, telling on stderr)
            errno_text = pipe.read()
    except BaseException:  # interrupted (Ctrl-C) while the tether started: nothing may be left behind
        _kill_now(popen)
        raise
    if errno_text:
        _kill_now(popen)
        code = int(errno_text)
        raise OSError(code, os.strerror(code), argv[0])
    return popen


def _kill_now(popen: subprocess.Popen[str]) -> None:
    """Kill a program just started (its whole session) and reap it."""
    with contextlib.suppress(OSError):
        os.killpg(popen.pid, signal.SIGKILL)
    popen.wait()
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


#: Every program started in this process and not stopped yet (for stop_all).
_RUNNING: weakref.WeakSet[_Process] = weakref.WeakSet()
#: The command lines whose programs have written a line to this process: a
#: later start of one that stays silent is not asked whether it flushes.
_SPOKE: set[tuple[str, ...]] = set()


class _Process:
    """A running engine program: its pipes, read by two daemon threads.

    Standard output goes line by line into a queue (``None`` at its end) so
    reads can time out; the last lines of standard error are kept for the
    messages of ``EngineError``.  No line is read longer than ``MAX_LINE``:
    one that runs on stops the reading of standard output (the next read
    is an ``EngineError``), and is cut short on standard error.  The reader threads own the two output
    pipes and close them at their end: a pipe that a stray process still
    holds open keeps one daemon thread waiting, never the caller.
    """

    def __init__(self, argv: list[str], label: str) -> None:
        self.label = label
        self.tethered = TETHER  # run by the tether (``_launch``), which ends what the program started
        try:
            self.popen = _launch(argv)
        except OSError as exc:
            raise EngineError(f"cannot start engine {label}: {exc}{_start_hint(argv[0], exc)}") from None
        self.lines: queue.Queue[str | _LongLine | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self.stopped = False
        self.heard = False  # anything on its standard output yet (a silent one may buffer it)
        self.partial = ""  # what it wrote after its last newline: a line not ended yet
        self.argv = tuple(argv)
        self._writing = threading.Lock()  # a 'stop' from another thread never splits a line being sent
        _RUNNING.add(self)
        threading.Thread(target=self._read_stdout, daemon=True, name=f"engine-out {label}").start()
        threading.Thread(target=self._read_stderr, daemon=True, name=f"engine-err {label}").start()

    def _read_stdout(self) -> None:
        """Standard output's lines into ``lines``, as they come.  Read in
        chunks, not a line at a time, so that what the program wrote of a
        line it has not ended (``partial``) is there to quote when a wait
        times out: ``bestmo`` and no newline is a program's bug to name."""
        stream = self.popen.stdout
        assert isinstance(stream, io.TextIOWrapper)  # ``_popen``'s: its bytes are read as they come
        decode = codecs.getincrementaldecoder("utf-8")("surrogateescape").decode  # as ``_popen``'s text streams
        try:
            while chunk := stream.buffer.read1(_CHUNK):
                if not self.heard:
                    self.heard = True
                    _SPOKE.add(self.argv)
                # a line ends at '\n' (or '\r\n'), not at a lone '\r'
                *ended, rest = (self.partial + decode(chunk)).split("\n")
                for line in ended:
                    line = line.removesuffix("\r")
                    if len(line) > MAX_LINE:  # longer than a line may be: not a reply
                        self.lines.put(_LongLine(readable(line[:40])))
                        return
                    self.lines.put(line)
                self.partial = rest
                if len(rest.removesuffix("\r")) > MAX_LINE:  # its end not in sight
                    self.lines.put(_LongLine(readable(rest[:40])))
                    return
            self.partial += decode(b"", True)  # bytes of a character cut short at the end: kept, escaped
            if self.partial:  # the last line, with no newline: whole
                self.lines.put(self.partial.removesuffix("\r"))
                self.partial = ""
            self.lines.put(None)
        except (OSError, ValueError):
            self.lines.put(None)
        finally:
            with contextlib.suppress(OSError):
                stream.close()

    def _read_stderr(self) -> None:
        stream = self.popen.stderr
        assert stream is not None
        cut = False  # in the rest of a line cut short: skipped
        try:  # kept as read (``readable`` when quoted): a chatty engine's stderr costs its clock next to nothing
            while chunk := stream.readline(MAX_LINE):
                ended = chunk.endswith("\n")
                if not cut:  # a last line with no newline is whole; only one as long as MAX_LINE was cut short
                    self.stderr.append(chunk.rstrip("\r\n") if ended or len(chunk) < MAX_LINE else chunk + " [...]")
                cut = not ended and len(chunk) >= MAX_LINE
        except (OSError, ValueError):
            pass
        with contextlib.suppress(OSError):
            stream.close()

    def send(self, line: str) -> None:
        stream: IO[str] | None = self.popen.stdin
        assert stream is not None
        try:
            with self._writing:
                stream.write(line + "\n")
                stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise EngineError(f"engine {self.label} {self.exit_story('input')} before reading {line!r}") from None

    def read(self, deadline: float, waiting_for: str, allowed: float, longer: str = "") -> str:
        """The next line, or EngineError if the program exits first, or
        EngineTimeout if none comes before ``deadline`` (a
        ``time.monotonic()`` value, ``allowed`` seconds after the question),
        its message ending in ``longer`` (how to allow more: ``LONGER_START``).
        The program's exit counts even while its output stays open (held by
        a child it left behind): the wait checks on it every ``_POLL`` s."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                silent = "" if self.heard or self.argv in _SPOKE else (
                    " (nor anything else: does it flush its standard output after each line,"
                    " and read its input a line at a time?)"
                )
                if partial := self.partial.removesuffix("\r"):  # a line begun, never ended
                    silent = f" (it wrote {quote(partial)} and no newline after it: a line ends with one)"
                raise EngineTimeout(f"engine {self.label} sent no {waiting_for} within {allowed:g} s{silent}{longer}")
            try:
                line = self.lines.get(timeout=min(remaining, _POLL))
                break
            except queue.Empty:
                if self.popen.poll() is not None and self.lines.empty():  # exited; its last lines are in
                    raise EngineError(
                        f"engine {self.label} {self.exit_story()} while we waited for {waiting_for}"
                    ) from None
        if line is None:
            self.lines.put(None)  # every later read sees the end too
            raise EngineError(f"engine {self.label} {self.exit_story()} while we waited for {waiting_for}")
        if isinstance(line, _LongLine):
            self.lines.put(line)  # every later read sees it too
            raise EngineError(
                f"engine {self.label} sent a line of more than {MAX_LINE} characters ({quote(line.start)}...) "
                f"while we waited for {waiting_for}"
            )
        return line

    def exit_story(self, closed: str = "output") -> str:
        """'exited with status N (stderr: ...)' -- or, for a program still
        running, 'closed its output' (or its ``closed``: its input, where a
        line could not be sent)."""
        try:
            status = self.popen.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            story = f"closed its {closed}"
        else:
            story = f"exited with status {status}" if status >= 0 else f"was killed by signal {_signal_name(-status)}"
        time.sleep(0.05)  # let the stderr thread catch the last lines
        tail = " | ".join(readable(line) for line in list(self.stderr) if line.strip())
        story += f" (its stderr: {tail[-600:]})" if tail else ""
        if re.search("(\\\\r|\r)['\u2019]", tail):  # "/usr/bin/env: 'python3\\r': No such file": a #! line in CRLF
            story += f" ({_CRLF_HINT})"
        return story

    def alive(self) -> bool:
        return self.popen.poll() is None

    def stop(self, grace: float) -> None:
        """End the program: ask with ``quit`` and wait up to ``grace`` s for
        it to exit (``grace=0``: a program out of step or hung is not asked),
        then kill its whole process group -- what it started too -- with
        SIGTERM and, after a moment, SIGKILL.  Idempotent; never waits for
        the output pipes."""
        if self.stopped:
            return
        self.stopped = True
        _RUNNING.discard(self)
        popen = self.popen
        if grace > 0 and popen.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                assert popen.stdin is not None
                popen.stdin.write(f"{Quit()}\n")
                popen.stdin.flush()
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(timeout=grace)
        self.kill_group(signal.SIGTERM)
        try:
            popen.wait(timeout=_TERM_GRACE)
        except subprocess.TimeoutExpired:
            if self.tethered:  # SIGKILL would end the tether before it ends what left the group (``setsid``)
                with contextlib.suppress(OSError):
                    popen.send_signal(KILL_ALL)
                with contextlib.suppress(subprocess.TimeoutExpired):
                    popen.wait(timeout=_TERM_GRACE)
        self.kill_group(signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            popen.wait(timeout=_TERM_GRACE)
        with contextlib.suppress(OSError, ValueError):
            if popen.stdin is not None:
                popen.stdin.close()

    def kill_group(self, sig: signal.Signals) -> None:
        """Send ``sig`` to the program's process group (to the program
        alone where it has no group of its own); gone already is fine."""
        try:
            if _OWN_SESSION:
                os.killpg(self.popen.pid, sig)
            elif self.popen.poll() is None:
                self.popen.kill()
        except (ProcessLookupError, PermissionError):
            pass


def _stop(process: _Process, grace: float) -> None:
    """``process.stop(grace)``, for ``weakref.finalize`` (a plain function,
    so that the finalizer holds no agent)."""
    process.stop(grace)


def _send_stop(process: _Process) -> None:
    """Tell ``process`` to answer now (``stop``), from the thread that asks
    it (``EngineAgent.request_stop``); a program that has died meanwhile is
    the waiting thread's to report."""
    with contextlib.suppress(EngineError):
        process.send(str(Stop()))


def stop_all() -> None:
    """Kill every engine program this process started and has not stopped
    (with whatever they started).  Safe in a signal handler: it sends
    signals and waits for nothing."""
    for process in list(_RUNNING):
        process.stopped = True
        process.kill_group(signal.SIGKILL)


def _settings(options: Mapping[str, str] | str | None) -> dict[str, str]:
    """The options to send, checked before the program starts: a mapping,
    or ``NAME=VALUE;NAME=VALUE`` (a spec's ``options=``: its values are
    split on ``,``, so the items are split on ``;``)."""
    if isinstance(options, str):
        pairs = []
        for i, item in enumerate(options.split(";")):
            if not item:  # options= with nothing, or a ';' at the end
                continue
            name, eq, value = item.partition("=")
            if not eq:
                raise SpecError(f"agent 'engine': options item {i} ({item!r}) is not NAME=VALUE "
                                "(options=NAME=VALUE;NAME=VALUE)")
            pairs.append((name, value))
    else:
        pairs = [(str(name), str(value)) for name, value in (options or {}).items()]
    settings: dict[str, str] = {}
    for name, value in pairs:
        try:
            SetOption(name, value)
        except ValueError as exc:
            raise SpecError(f"agent 'engine': option {name!r}: {exc}") from None
        if name in settings:
            raise SpecError(f"agent 'engine': option {name!r} is given twice")
        settings[name] = value
    return settings


@register(
    "engine",
    "an external program speaking the c4lab engine protocol (docs/engine-protocol.md), in the arena and "
    "`c4lab move`; cmd= is its command line (no ',' in it: name a script for a longer one)",
    [
        Param("cmd", str, None, "the program's command line, split like a shell (shlex); required"),
        Param("name", str, None, "a display name (default: the engine's own 'id name')"),
        Param(
            "margin", float, DEFAULT_MARGIN,
            "seconds an engine may take beyond the move's time before it is given up",
        ),
        Param(
            "timeout", float, DEFAULT_TIMEOUT,
            "seconds to get ready ('isready'), and for a move when the budget sets no time",
        ),
        Param(
            "handshake", float, DEFAULT_HANDSHAKE,
            "seconds from the start to the end of the handshake ('c4labok')",
        ),
        Param(
            "options", str, None,
            "the engine's own settings as NAME=VALUE;NAME=VALUE, sent with 'setoption' after the handshake "
            "(no ',' or ';' in a value)",
        ),
        Param("time", float, None, "seconds a move, sent as 'go time S' where the caller sets no budget (the arena)"),
        Param("iterations", int, None, "the engine's units of work a move, sent as 'go iterations N' likewise"),
    ],
)
class EngineAgent(Agent):
    """An engine program as a player.

    ``cmd`` is a command line (``str``, split with ``shlex``) or an argument
    list; ``options`` (a mapping, or ``NAME=VALUE;NAME=VALUE`` as a spec
    gives it) are sent as ``setoption`` after each handshake.  The
    program starts at once, so a bad command fails here.  ``engine_name``,
    ``engine_author`` and ``engine_options`` hold what the handshake told.
    ``handshake`` bounds the start-up (to ``c4labok``), ``timeout`` getting
    ready (``isready``) and a move that has no time of its own.
    ``time`` and ``iterations`` are the engine's own budget a move, as
    ``uct:time=0.5`` is uct's: sent with ``go`` when the caller gives no
    budget, as the arena does (without them the engine, told a bare
    ``go``, could not be given a time a move at all).
    """

    #: ``time`` is asked of another program, which may take it or not: the
    #: arena's check of budgets against its ``--limit`` says so.
    time_is_asked = True

    def __init__(
        self,
        cmd: str | list[str] | None = None,
        name: str | None = None,
        margin: float = DEFAULT_MARGIN,
        timeout: float = DEFAULT_TIMEOUT,
        handshake: float = DEFAULT_HANDSHAKE,
        options: Mapping[str, str] | str | None = None,
        time: float | None = None,
        iterations: int | None = None,
    ) -> None:
        if not cmd:
            raise SpecError("agent 'engine' needs cmd=, the engine's command line (e.g. engine:cmd=./my_engine.py)")
        try:
            self.argv = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
        except ValueError as exc:
            raise SpecError(f"agent 'engine': cmd={cmd!r} is not a command line: {exc}") from None
        if not self.argv:
            raise SpecError("agent 'engine': cmd= is empty")
        for key, seconds in (("margin", margin), ("timeout", timeout), ("handshake", handshake)):
            if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real):  # a spec's are checked floats
                raise TypeError(f"EngineAgent: {key} is a number of seconds, not {type(seconds).__name__} "
                                f"{seconds!r:.60}")
            if not math.isfinite(seconds):  # a wait for ever for a hung engine
                raise SpecError(f"agent 'engine': {key} must be a finite number, not {seconds!r}")
        if not margin >= 0:
            raise SpecError(f"agent 'engine': margin must not be negative, not {margin!r}")
        for key, seconds in (("timeout", timeout), ("handshake", handshake)):
            if not seconds > 0:
                raise SpecError(f"agent 'engine': {key} must be positive, not {seconds!r}")
        try:
            self.budget = Budget(time=time, iterations=iterations) if time is not None or iterations is not None else None
        except ValueError as exc:
            raise SpecError(f"agent 'engine': {exc}") from None
        self.time = time  # read by the arena's check of budgets against its --limit
        self.iterations = iterations
        self.label = quote(shlex.join(self.argv))
        self.display_name = name
        self.margin = margin
        self.timeout = timeout
        self.handshake = handshake
        self.options = _settings(options)
        self.engine_name: str | None = None
        self.engine_author: str | None = None
        self.engine_options: dict[str, Option] = {}
        self.move_limit: float | None = None  # a judge's limit plus margin (set_move_limit)
        self._lock = threading.RLock()
        self._process: _Process | None = None
        self._finalizer: weakref.finalize | None = None
        self._start()

    # -- the process --------------------------------------------------------

    @property
    def name(self) -> str:
        """The display name: ``name=``, else the engine's ``id name``, else its command."""
        return self.display_name or self.engine_name or shlex.join(self.argv)

    def _start(self) -> None:
        """Start the program, do the handshake (within ``handshake`` s),
        send the options and wait for ``readyok`` (within ``timeout`` s)."""
        process = _Process(self.argv, self.label)
        self._process = process
        self._finalizer = weakref.finalize(self, _stop, process, _QUIT_GRACE)
        deadline = time.monotonic() + self.handshake
        try:
            process.send(str(Hello()))
            while True:
                line = process.read(deadline, "'c4labok' (the end of the handshake)", self.handshake, LONGER_START)
                reply = self._reply(line, "the handshake")
                if isinstance(reply, HelloOk):
                    break
                if isinstance(reply, Id):
                    if reply.key == "name":
                        self.engine_name = reply.value
                    else:
                        self.engine_author = reply.value
                elif isinstance(reply, Option):
                    self.engine_options[reply.name] = reply
                else:
                    raise self._out_of_step(reply, "'id', 'option' or 'c4labok' during the handshake")
            undeclared = [key for key in self.options if key not in self.engine_options]
            if undeclared:  # an engine that ignores an unknown setoption would play on as if it took it
                declared = ", ".join(self.engine_options) or "none"
                raise EngineRefused(f"engine {self.label} has no option {', '.join(map(quote, undeclared))} "
                               f"(the options its handshake declares: {declared})")
            for key, value in self.options.items():
                process.send(str(SetOption(key, value)))
            self._sync(time.monotonic() + self.timeout, self.timeout, "after its options", LONGER_READY)
        except EngineRefused:
            self.close()
            raise
        except BaseException:  # hung, out of step, dead, or interrupted: nothing to ask it
            self._abandon()
            raise

    def _reply(self, line: str, during: str) -> Reply:
        try:
            return parse_reply(line)
        except ProtocolError as exc:
            self._abandon()  # out of step with the program: only a restart helps
            raise EngineError(f"engine {self.label} sent {quote(readable(line))} during {during}: {exc.reason}") from None

    def _out_of_step(self, reply: Reply, expected: str) -> EngineError:
        self._abandon()
        return EngineError(f"engine {self.label} sent {quote(str(reply))} where {expected} was expected")

    def _sync(self, deadline: float, allowed: float, when: str, longer: str = "") -> None:
        """Send ``isready`` and read up to ``readyok`` (before ``deadline``,
        ``allowed`` s after the question; a time-out's message ends in
        ``longer``, ``LONGER_READY`` where ``timeout`` allows it); an ``error`` on the way (an option
        or a position the engine refused) is an EngineError -- after
        ``readyok``, so the conversation stays in step."""
        process = self._live()
        process.send(str(IsReady()))
        errors = []
        while True:
            try:
                line = process.read(deadline, "'readyok'", allowed, longer)
            except EngineTimeout as err:
                raise EngineNotReady(str(err)) from None
            reply = self._reply(line, "'isready'")
            if isinstance(reply, ReadyOk):
                break
            if isinstance(reply, Error):
                errors.append(reply.message)
            else:
                raise self._out_of_step(reply, "'readyok' or 'error'")
        if errors:
            raise EngineRefused(f"engine {self.label} refused what it was sent {when}: " + "; ".join(errors))

    @property
    def program(self) -> subprocess.Popen[str] | None:
        """The engine's process while it runs (``None`` once it is closed
        or given up after an error)."""
        return None if self._process is None else self._process.popen

    def _live(self) -> _Process:
        if self._process is None:
            raise EngineError(f"engine {self.label} is not running (closed after an error; new_game starts it)")
        return self._process

    def close(self) -> None:
        """End the program (``quit``, then its process group is killed after
        a second).  Idempotent."""
        self._end(_QUIT_GRACE)

    def _abandon(self) -> None:
        """End the program at once: one that hung or is out of step is not
        asked to quit (a late answer would only be misread)."""
        self._end(0.0)

    def _end(self, grace: float) -> None:
        finalizer, self._finalizer = self._finalizer, None
        process, self._process = self._process, None
        if finalizer is not None:
            finalizer.detach()
        if process is not None:
            process.stop(grace)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the agent ------------------------------------------------------------

    def set_move_limit(self, seconds: float | None) -> None:
        """A move waits at most ``seconds`` for ``bestmove`` (the judge's
        limit plus margin), even when the budget or ``timeout`` would allow
        more; ``None``: the engine's own allowance alone."""
        self.move_limit = seconds

    def new_game(self) -> None:
        """Tell the engine ``newgame``; (re)start a program that is not
        running (closed, or exited after an error)."""
        with self._lock:
            if self._process is None or not self._process.alive():
                self.close()
                self._start()
                return
            process = self._live()
            try:
                process.send(str(NewGame()))
                self._sync(time.monotonic() + self.timeout, self.timeout, "with 'newgame'", LONGER_READY)
            except EngineRefused:
                raise
            except BaseException:
                self._abandon()
                raise

    def prepare(self, start: Position) -> None:
        """Let the program get ready for ``start``'s board before any clock
        runs: ``position`` and ``isready``, answered within ``timeout`` s
        (the protocol's place for slow preparations: our own engine warms
        its agent up there)."""
        with self._lock:
            process = self._live()
            try:
                process.send(str(SetPosition(start.notation)))
                self._sync(time.monotonic() + self.timeout, self.timeout, f"with 'position {start.notation}'",
                           LONGER_READY)
            except EngineRefused:
                raise
            except BaseException:
                self._abandon()
                raise

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """Send ``position`` and ``go`` with the budget; the engine's
        ``bestmove`` and, from its last ``info``, value, pv, iterations,
        seconds and note (``info string``).  The whole exchange must end
        within the move's time plus ``margin`` (``timeout`` without a time),
        and within the judge's ``move_limit``: else ``EngineTimeout``."""
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        if budget is None or (budget.time is None and budget.iterations is None):
            budget = self.budget  # the spec's own (time=, iterations=), if any
        go = Go(budget.time, budget.iterations) if budget is not None else Go()
        with self._lock:
            process = self._live()
            start = time.monotonic()
            allowed = (go.time + self.margin) if go.time is not None else self.timeout
            if self.move_limit is not None:
                allowed = min(allowed, self.move_limit)
            deadline = start + allowed
            try:
                process.send(str(SetPosition(position.notation)))
                self._sync(deadline, allowed, f"with 'position {position.notation}'")
                process.send(str(go))
                info = Info()
                wrong = None
                chosen: BestMove | None = None
                infos = 0  # 'info' lines read so far: a flood of them is not a silence
                said = ""  # the last of them, as the engine wrote it
                # a stop request (``request_stop``) while it thinks is the protocol's 'stop': it answers now
                with self.stop_request.calls(lambda: _send_stop(process)):
                    while True:
                        try:
                            line = process.read(deadline, f"'bestmove' for {position.notation}", allowed)
                        except EngineTimeout as err:
                            raise _flooded(err, infos, said) from None
                        wrong = _not_a_move(line)
                        if wrong is not None:  # an answer, in step: judged as an illegal move, not a broken line
                            break
                        reply = self._reply(line, f"'{go}'")
                        if isinstance(reply, Info):
                            info = reply
                            infos += 1
                            said = line
                        elif isinstance(reply, BestMove):
                            chosen = reply
                            break
                        elif isinstance(reply, Error):
                            raise EngineRefused(
                                f"engine {self.label} answered '{go}' for {position.notation} with an error: "
                                f"{reply.message}"
                            )
                        else:
                            raise self._out_of_step(reply, "'info', 'bestmove' or 'error'")
            except EngineRefused:
                raise
            except BaseException:  # dead, hung, out of step, or interrupted while it thought:
                self._abandon()  # a late bestmove would answer the next question
                raise
            if chosen is None:
                assert wrong is not None  # the loop ends on a bestmove, or on one whose token is no move
                raise EngineIllegalMove(position.notation, wrong[0], f"engine {self.label} chose it: {wrong[1]}")
            move = chosen.move
            if not position.is_legal(move):
                legal = " ".join(m.token for m in position.legal_moves())
                try:  # the rules' own reason: a full column, a ban after a drop that missed the bonus cell...
                    position.play(move)
                    why = ""
                except IllegalMoveError as err:
                    why = f": {err.reason}"
                raise EngineIllegalMove(
                    position.notation, move.token, f"engine {self.label} chose it{why} (legal: {legal})"
                )
        analysis = Analysis(
            value=info.value,
            pv=info.pv,
            iterations=info.iterations,
            seconds=info.time if info.time is not None else time.monotonic() - start,
            note=info.string,
        )
        return move, analysis

    def __repr__(self) -> str:
        return f"<EngineAgent {self.name!r} {self.spec or shlex.join(self.argv)}>"


__all__ = ["EngineAgent", "EngineError", "EngineIllegalMove", "EngineNotReady", "EngineRefused", "EngineTimeout", "stop_all"]
