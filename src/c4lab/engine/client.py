"""``EngineAgent``: any program that speaks the engine protocol, as an agent.

The agent spec ``engine:cmd=PROGRAM`` starts PROGRAM (a command line, split
like a shell does with ``shlex``; no ``,`` in it, since ``,`` separates spec
values: put a longer command in a script and name the script), does the
handshake, and for each move sends the position and ``go`` and reads
``bestmove``.  Everything an engine can do wrong becomes an ``EngineError``
that says what it got: a program that cannot start, that exits, that prints
a line which is not a reply of the protocol, that answers ``error``, that
plays an illegal move, or that takes longer than the move's time plus a
margin.  A program that hangs or prints garbage is killed (the conversation
is out of step with it); ``new_game`` starts it again.

The program is ended on ``close()``, at garbage collection, and at exit.
An ``EngineAgent`` holds a process, so it cannot be pickled or shared
between processes; within one process its calls are serialised by a lock.

Importing this module registers the ``engine`` spec.  It is deliberately
not among the agent families that the registry loads by itself (the
``c4lab.agents`` entry points): a spec that runs a command must not be reachable from
specs that come over the network (the room server builds agents from its
clients' specs).
"""

from __future__ import annotations

import collections
import queue
import shlex
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping
from typing import IO, TYPE_CHECKING

from c4lab.agents.base import Agent, Analysis, Budget, Param, SpecError, register
from c4lab.engine.protocol import (
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
    parse_reply,
)
from c4lab.rules import Move, Position
from c4lab.rules.errors import quote

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self

DEFAULT_TIMEOUT = 30.0  # s: the handshake, and a move when the budget sets no time
DEFAULT_MARGIN = 2.0  # s: beyond the move's time, for the engine's start-up and the pipes
_STDERR_LINES = 20  # the engine's last stderr lines, quoted when it dies


class EngineError(RuntimeError):
    """An engine program that failed: it could not start, exited, hung,
    broke the protocol, answered ``error`` or chose an illegal move."""


class _Refused(EngineError):
    """The engine answered ``error``: a failure, but the conversation is in
    step (the program is kept)."""


class _Process:
    """A running engine program: its pipes, read by two daemon threads.

    Standard output goes line by line into a queue (``None`` at its end) so
    reads can time out; the last lines of standard error are kept for the
    messages of ``EngineError``.
    """

    def __init__(self, argv: list[str], label: str) -> None:
        self.label = label
        try:
            self.popen = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                bufsize=1,
            )
        except OSError as exc:
            raise EngineError(f"cannot start engine {label}: {exc}") from None
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_LINES)
        threading.Thread(target=self._read_stdout, daemon=True, name=f"engine-out {label}").start()
        threading.Thread(target=self._read_stderr, daemon=True, name=f"engine-err {label}").start()

    def _read_stdout(self) -> None:
        stream = self.popen.stdout
        assert stream is not None
        try:
            for line in stream:
                self.lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def _read_stderr(self) -> None:
        stream = self.popen.stderr
        assert stream is not None
        try:
            for line in stream:
                self.stderr.append(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass

    def send(self, line: str) -> None:
        stream: IO[str] | None = self.popen.stdin
        assert stream is not None
        try:
            stream.write(line + "\n")
            stream.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise EngineError(f"engine {self.label} {self.exit_story()} before reading {line!r}") from None

    def read(self, deadline: float, waiting_for: str) -> str:
        """The next line, or EngineError if none comes before ``deadline``
        (a ``time.monotonic()`` value) or the program exits first."""
        try:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise EngineError(
                f"engine {self.label} sent no {waiting_for} within the time allowed"
            ) from None
        if line is None:
            self.lines.put(None)  # every later read sees the end too
            raise EngineError(f"engine {self.label} {self.exit_story()} while we waited for {waiting_for}")
        return line

    def exit_story(self) -> str:
        """'exited with status N (stderr: ...)' -- or 'closed its output'."""
        try:
            status = self.popen.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            story = "closed its output"
        else:
            story = f"exited with status {status}"
        time.sleep(0.05)  # let the stderr thread catch the last lines
        tail = " | ".join(line for line in self.stderr if line.strip())
        return story + (f" (its stderr: {tail[-600:]})" if tail else "")

    def alive(self) -> bool:
        return self.popen.poll() is None


def _stop(popen: subprocess.Popen[str], grace: float) -> None:
    """End ``popen``: ask with ``quit``, then kill it after ``grace`` s.
    (A plain function, so that ``weakref.finalize`` holds no agent.)"""
    if popen.poll() is None:
        try:
            assert popen.stdin is not None
            popen.stdin.write(f"{Quit()}\n")
            popen.stdin.flush()
        except (OSError, ValueError):
            pass
        try:
            popen.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass


@register(
    "engine",
    "an external program speaking the c4lab engine protocol (docs/engine-protocol.md); "
    "cmd= is its command line (no ',' in it: name a script for a longer one)",
    [
        Param("cmd", str, None, "the program's command line, split like a shell (shlex); required"),
        Param("name", str, None, "a display name (default: the engine's own 'id name')"),
        Param(
            "margin", float, DEFAULT_MARGIN,
            "seconds an engine may take beyond the move's time before it is given up",
        ),
        Param(
            "timeout", float, DEFAULT_TIMEOUT,
            "seconds for the handshake, and for a move when the budget sets no time",
        ),
    ],
)
class EngineAgent(Agent):
    """An engine program as a player.

    ``cmd`` is a command line (``str``, split with ``shlex``) or an argument
    list; ``options`` are sent as ``setoption`` after each handshake.  The
    program starts at once, so a bad command fails here.  ``engine_name``,
    ``engine_author`` and ``engine_options`` hold what the handshake told.
    """

    def __init__(
        self,
        cmd: str | list[str] | None = None,
        name: str | None = None,
        margin: float = DEFAULT_MARGIN,
        timeout: float = DEFAULT_TIMEOUT,
        options: Mapping[str, str] | None = None,
    ) -> None:
        if not cmd:
            raise SpecError("agent 'engine' needs cmd=, the engine's command line (e.g. engine:cmd=./my_engine.py)")
        try:
            self.argv = shlex.split(cmd) if isinstance(cmd, str) else [str(a) for a in cmd]
        except ValueError as exc:
            raise SpecError(f"agent 'engine': cmd={cmd!r} is not a command line: {exc}") from None
        if not self.argv:
            raise SpecError("agent 'engine': cmd= is empty")
        if not margin >= 0:
            raise SpecError(f"agent 'engine': margin must not be negative, not {margin!r}")
        if not timeout > 0:
            raise SpecError(f"agent 'engine': timeout must be positive, not {timeout!r}")
        self.label = quote(shlex.join(self.argv))
        self.display_name = name
        self.margin = margin
        self.timeout = timeout
        self.options = dict(options or {})
        self.engine_name: str | None = None
        self.engine_author: str | None = None
        self.engine_options: dict[str, Option] = {}
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
        """Start the program and do the handshake (and the options)."""
        process = _Process(self.argv, self.label)
        self._process = process
        self._finalizer = weakref.finalize(self, _stop, process.popen, 1.0)
        deadline = time.monotonic() + self.timeout
        try:
            process.send(str(Hello()))
            while True:
                reply = self._reply(process.read(deadline, "'c4labok' (the handshake)"), "the handshake")
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
            for key, value in self.options.items():
                process.send(str(SetOption(key, value)))
            self._sync(deadline, "after its options")
        except (EngineError, ValueError):
            self.close()
            raise

    def _reply(self, line: str, during: str) -> Reply:
        try:
            return parse_reply(line)
        except ProtocolError as exc:
            self.close()  # out of step with the program: only a restart helps
            raise EngineError(f"engine {self.label} sent {quote(line)} during {during}: {exc.reason}") from None

    def _out_of_step(self, reply: Reply, expected: str) -> EngineError:
        self.close()
        return EngineError(f"engine {self.label} sent {quote(str(reply))} where {expected} was expected")

    def _sync(self, deadline: float, when: str) -> None:
        """Send ``isready`` and read up to ``readyok``; an ``error`` on the
        way (an option or a position the engine refused) is an EngineError
        -- after ``readyok``, so the conversation stays in step."""
        process = self._live()
        process.send(str(IsReady()))
        errors = []
        while True:
            reply = self._reply(process.read(deadline, "'readyok'"), "'isready'")
            if isinstance(reply, ReadyOk):
                break
            if isinstance(reply, Error):
                errors.append(reply.message)
            else:
                raise self._out_of_step(reply, "'readyok' or 'error'")
        if errors:
            raise _Refused(f"engine {self.label} refused what it was sent {when}: " + "; ".join(errors))

    def _live(self) -> _Process:
        if self._process is None:
            raise EngineError(f"engine {self.label} is not running (closed after an error; new_game starts it)")
        return self._process

    def close(self) -> None:
        """End the program (``quit``, then a kill after a second).  Idempotent."""
        finalizer, self._finalizer, self._process = self._finalizer, None, None
        if finalizer is not None:
            finalizer()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the agent ------------------------------------------------------------

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
                self._sync(time.monotonic() + self.timeout, "with 'newgame'")
            except _Refused:
                raise
            except EngineError:
                self.close()
                raise

    def choose(self, position: Position, budget: Budget | None = None) -> Move:
        return self.analyse(position, budget)[0]

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """Send ``position`` and ``go`` with the budget; the engine's
        ``bestmove`` and, from its last ``info``, value, pv, iterations,
        seconds and note (``info string``)."""
        if position.is_over:
            raise ValueError(f"the game is over in {position.notation}: there is no move to choose")
        go = Go(budget.time, budget.iterations) if budget is not None else Go()
        with self._lock:
            process = self._live()
            start = time.monotonic()
            allowed = (go.time + self.margin) if go.time is not None else self.timeout
            deadline = start + allowed
            try:
                process.send(str(SetPosition(position.notation)))
                self._sync(deadline, f"with 'position {position.notation}'")
                process.send(str(go))
                info = Info()
                while True:
                    line = process.read(deadline, f"'bestmove' for {position.notation} (within {allowed:g} s)")
                    reply = self._reply(line, f"'{go}'")
                    if isinstance(reply, Info):
                        info = reply
                    elif isinstance(reply, BestMove):
                        break
                    elif isinstance(reply, Error):
                        raise _Refused(
                            f"engine {self.label} answered '{go}' for {position.notation} with an error: "
                            f"{reply.message}"
                        )
                    else:
                        raise self._out_of_step(reply, "'info', 'bestmove' or 'error'")
            except _Refused:
                raise
            except BaseException:  # dead, hung, out of step, or interrupted while it thought:
                self.close()  # a late bestmove would answer the next question
                raise
            move = reply.move
            if not position.is_legal(move):
                legal = " ".join(m.token for m in position.legal_moves())
                raise EngineError(
                    f"engine {self.label} chose {move.token!r}, which is illegal in {position.notation} "
                    f"(legal: {legal})"
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


__all__ = ["EngineAgent", "EngineError"]
