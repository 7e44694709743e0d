"""One of our agents behind the engine protocol: ``serve(spec, stdin, stdout)``.

The loop reads one command a line and answers it (docs/engine-protocol.md).
It never dies on bad input: a line that is not a command, a position string
that RULES.md rejects, a ``go`` without a position, an agent that fails --
each answers one ``error`` line and the loop reads on.  It ends at ``quit``
or at the end of the input.

The agent's parameters are the engine's options: ``setoption name seed
value 3`` rebuilds the agent from its spec with ``seed=3``.  Commands are
answered in order: a ``go`` searches in a thread of its own while the loop
reads on, and every line after it but two waits for its ``bestmove``.
``stop`` asks the search to finish now (``Agent.request_stop``): the ``go``
answers at once with the best move found so far, as its deadline reached
now would; with no search under way it is ignored.  ``quit`` does not
wait: it ends the conversation at once and stops the search, unanswered (a
driver that quits wants no more answers, and should not leave its engine
thinking for a minute).  The end of the input does wait, and the search
answers: a script piped in ends there, and wants its answers.  An agent
that never looks at its stop request (one of one's own) keeps to its
budget: ``stop`` changes nothing for it.

``isready`` is where the engine gets ready, as the protocol intends: the
agent is warmed up there (``c4lab.agents.base.warm_once``: numba compiles
its kernels, or loads them from its cache) for the current position's kind
of board, or the classic board before any position, so that the first
``go`` on a new kind of board is spent thinking, not compiling.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import TextIO

from c4lab.agents.base import Agent, AgentInfo, Budget, agent_infos, make_agent, parse_spec, warm_once
from c4lab.engine.protocol import (
    MAX_LINE,
    SEPARATORS,
    BestMove,
    Command,
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
    parse_command,
    readable,
    without_line_end,
)
from c4lab.game import answer_move, crash_detail
from c4lab.rules import IllegalMoveError, Position, Variant
from c4lab.rules.errors import quote
from c4lab.rules.sides import game_over_error

AUTHOR = "c4lab"


def author_of(info: AgentInfo) -> str:
    """Who wrote the agent, for ``id author``: c4lab for its own, else the
    ``Author`` (or the name in ``Author-email``) of the installed package
    that holds the agent's module (a plugin), else that module's top-level
    name (a script's agent, a package with no author given)."""
    top = str(getattr(info.factory, "__module__", "") or "").partition(".")[0]
    if top == "c4lab":
        return AUTHOR
    from importlib.metadata import (  # lazy: a plugin only
        PackageNotFoundError,
        metadata,
        packages_distributions,
    )

    try:
        holders = packages_distributions().get(top, [])
    except Exception:  # noqa: BLE001 - another package's damaged metadata: the module's name, not an engine that fails
        holders = []
    for dist in holders:
        try:
            meta = metadata(dist)
        except PackageNotFoundError:  # pragma: no cover - listed a moment ago, gone now
            continue
        names = list(meta.get_all("Author") or [])
        for emails in meta.get_all("Author-email") or []:  # '"Ann Lee" <ann@example.org>, Bo <bo@example.org>'
            names += [part.split("<")[0].strip().strip('"') for part in emails.split(",")]
        found = ", ".join(name for name in names if name)
        if found:
            return " ".join(found.split())  # one line, whatever the metadata holds
    return top or "unknown"


class _Engine:
    """The state of one serving session: the agent, its spec, the position."""

    def __init__(self, spec: str, stdout: TextIO) -> None:
        self.out = stdout
        name, values = parse_spec(spec)
        self.agent: Agent = make_agent(spec)  # raises SpecError before any output
        self.info: AgentInfo = next(i for i in agent_infos() if i.name == name)
        self.values = values  # the spec's key=value pairs, updated by setoption
        self.position: Position | None = None
        #: Set once the conversation is over (``quit``, the end of input):
        #: a search still running then answers nothing.
        self.over = False

    @property
    def spec(self) -> str:
        name = self.info.name
        return name + (":" + ",".join(f"{k}={v}" for k, v in self.values.items()) if self.values else "")

    def send(self, *replies: Reply) -> None:
        """Write ``replies``, in one write: a search's ``info`` and its
        ``bestmove`` go whole or not at all (a ``quit`` that came between
        the two left the ``info`` alone)."""
        if self.over:
            return
        self.out.write("".join(f"{reply}\n" for reply in replies))
        self.out.flush()

    def error(self, problem: object) -> None:
        self.send(Error.about(problem))

    # -- the commands -----------------------------------------------------

    def hello(self) -> None:
        self.send(Id("name", f"c4lab {self.spec}"))
        self.send(Id("author", author_of(self.info)))
        for param in self.info.params:
            raw = self.values.get(param.name, self.info.defaults.get(param.name))
            default = param.convert(self.info.name, raw) if raw is not None else param.default
            kind = param.type.__name__ if param.type.__name__ in ("int", "float", "bool") else "str"
            shown = "none" if default is None else str(int(default) if kind == "bool" else default)
            self.send(Option(param.name, kind, shown))
        self.send(HelloOk())

    def set_option(self, command: SetOption) -> None:
        if command.name not in {p.name for p in self.info.params}:
            known = ", ".join(p.name for p in self.info.params) or "none"
            self.error(f"setoption: unknown option {quote(command.name)} (options: {known})")
            return
        value = command.value.strip(SEPARATORS)
        if not value or any(c in value for c in ",=") or any(c.isspace() for c in value):
            self.error(f"setoption: option {quote(command.name)} cannot take the value {quote(value)}")
            return
        values = {**self.values, command.name: value}
        old = self.values
        self.values = values
        try:
            agent = make_agent(self.spec)
        except ValueError as exc:  # SpecError: a value of the wrong type
            self.values = old
            self.error(f"setoption: {exc}")
            return
        except Exception as exc:  # noqa: BLE001  (an agent that cannot be made: a program that will not start)
            self.values = old
            self.error(f"setoption: no agent with {command.name}={value} (the old settings stay): "
                       f"{type(exc).__name__}: {exc}")
            return
        self.agent.close()  # what the old one holds (an engine program)
        self.agent = agent

    def set_position(self, command: SetPosition) -> None:
        self.position = None  # a bad position string leaves no position, not the previous one
        try:
            self.position = Position.parse(command.text)
        except ValueError as exc:  # PositionError, with RULES.md's message
            self.error(exc)

    def go(self, command: Go) -> None:
        if self.position is None:
            self.error("go: no position (send 'position <position string>' first)")
            return
        if self.position.is_over:
            self.error(f"go: {game_over_error(self.position.notation, self.position.result)}")
            return
        budget = Budget(time=command.time, iterations=command.iterations) if command.time or command.iterations else None
        start = time.monotonic()
        try:
            answer, analysis = self.agent.analysed(self.position, budget)
        except ValueError as exc:  # the agent refuses this position (ntuple: a network for another board): why
            self.error(f"go: {exc}")
            return
        except Exception as exc:  # noqa: BLE001  (the engine never dies of its agent)
            self.error(f"go: {crash_detail(exc, 'the agent')}")  # where: the agent's own file and line
            return
        try:  # an agent of one's own may answer None, a number, a full column...
            move = answer_move(self.position, answer, "the agent")
        except IllegalMoveError as exc:
            self.error(f"go: {exc}")
            return
        seconds = analysis.seconds if analysis.seconds is not None else time.monotonic() - start
        value = analysis.value
        pv = tuple(analysis.pv)
        if pv and pv[0] != move:  # the line of another move (a search overruled): it would mislead
            pv = (move,)
        self.send(Info(
            value=None if value is None else min(max(float(value), 0.0), 1.0),
            iterations=analysis.iterations,
            time=max(float(seconds), 0.0),
            pv=pv,
            string=" ".join(analysis.note.split()) if analysis.note and analysis.note.strip() else None,
        ), BestMove(move))

    def get_ready(self) -> None:
        """Warm the agent up for the current position's kind of board (the
        classic board before any position), once per kind: ``isready`` may
        take that long, a timed ``go`` should not."""
        warm_once(self.spec, self.position or Position(Variant.classic()))

    def read(self, line: str) -> Command | Error:
        """The command on ``line``, or the error line that answers it."""
        try:
            return parse_command(line)
        except ProtocolError as exc:
            return Error.about(exc)

    def run(self, command: Command | Error) -> None:
        """Carry out ``command`` (send an error line as it is)."""
        if isinstance(command, Error):
            self.send(command)
        elif isinstance(command, Hello):
            self.hello()
        elif isinstance(command, IsReady):
            self.get_ready()
            self.send(ReadyOk())
        elif isinstance(command, SetOption):
            self.set_option(command)
        elif isinstance(command, NewGame):
            self.agent.new_game()
            self.position = None
        elif isinstance(command, SetPosition):
            self.set_position(command)
        elif isinstance(command, Go):
            self.agent.stop_request.clear()
            self.go(command)
        # Stop: nothing runs here (a search in its thread is stopped by serve)


class _Search:
    """A ``go`` under way in a thread of its own, so that the loop reads
    on while it runs: a ``stop`` asks it to answer now, and a ``quit``
    during the search ends the conversation at once instead of after it.
    The thread is a daemon: a process that exits does not wait for it."""

    def __init__(self, engine: _Engine, command: Go) -> None:
        self.engine = engine
        self.agent = engine.agent
        self.command = command
        self.failure: BaseException | None = None
        # cleared before the thread starts: a stop read at once after this go is for this go
        self.agent.stop_request.clear()
        self.thread = threading.Thread(target=self._run, name="c4lab-engine-go", daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """Ask the search to finish now (its agent's ``request_stop``)."""
        self.agent.request_stop()

    def _run(self) -> None:
        try:
            self.engine.go(self.command)  # the agent's own failures are an error line there
        except BaseException as exc:  # noqa: BLE001  (a closed pipe, or at quit the output closed under it)
            if not self.engine.over:
                self.failure = exc

    def wait(self) -> None:
        """Wait for the search's answer; what broke its writing (a driver
        that closed its end) is raised here, as a synchronous ``go``
        raised it."""
        self.thread.join()
        if self.failure is not None:
            raise self.failure


def serve(agent_spec: str, stdin: TextIO, stdout: TextIO) -> int:
    """Run the agent ``agent_spec`` as an engine: read commands from
    ``stdin`` until ``quit`` or the end of input, answer on ``stdout``
    (one line each, flushed).  Returns the exit status, 0.

    A ``go`` searches in a thread of its own while the lines after it are
    read: ``stop`` asks it to finish now (the agent's ``request_stop``), and
    it answers with the best move found so far (``stop`` with no search is
    ignored); ``quit`` ends the conversation at once and stops the search,
    which answers nothing (its thread ends soon after ``serve`` returns, as
    soon as a ``stop`` would answer; an agent that never looks at its stop
    request runs on to its budget); the end of the input waits for the
    search's ``bestmove``, and any other line is answered after it, in
    order.

    A bad ``agent_spec`` raises ``SpecError`` before anything is written.
    Blank lines are ignored; every other bad line answers ``error ...``.
    """
    engine = _Engine(agent_spec, stdout)
    search: _Search | None = None
    try:
        for line in _lines(stdin):
            if isinstance(line, str) and not line.strip(SEPARATORS):  # blank: spaces and tabs alone
                continue
            command = line if isinstance(line, Error) else engine.read(line)
            if isinstance(command, Quit):
                break
            if isinstance(command, Stop):
                if search is not None:  # a search already over: its agent's request is cleared at the next go
                    search.stop()
                continue
            if search is not None:  # every other line is answered after the search under way
                search.wait()
                search = None
            if isinstance(command, Go):
                search = _Search(engine, command)
            else:
                engine.run(command)
        else:  # the end of the input: the search under way answers first (a piped script wants it)
            if search is not None:
                search.wait()
                search = None
    finally:
        engine.over = True  # a search still running (the conversation ended during it) answers nothing
        if search is not None:  # and thinks no longer
            search.stop()
    return 0


def _lines(stdin: TextIO) -> Iterator[str | Error]:
    """The lines of ``stdin`` without their line ends; in place of a line
    longer than ``MAX_LINE`` characters, the error that says so: its rest
    is read and dropped a piece at a time, never held whole (a driver that
    writes an endless line does not fill this process's memory)."""
    while line := stdin.readline(MAX_LINE + 2):  # the longest line and its '\r\n'
        if len(without_line_end(line)) <= MAX_LINE:
            yield without_line_end(line)
            continue
        start, length = line[:60], len(line)
        while not line.endswith("\n") and (line := stdin.readline(MAX_LINE)):
            length += len(line)
        length -= len(line) - len(without_line_end(line))  # its line end
        yield Error(f"bad message {readable(start)!r}... ({length} characters): a line has at most "
                    f"{MAX_LINE:,} characters")


def run_on_stdio(agent_spec: str) -> int:
    """``c4lab engine``: :func:`serve` on this process's standard input and
    output.  The protocol gets its own handle on standard output, so that a
    stray ``print()`` of an agent goes to stderr instead of into the
    conversation.  Ctrl-C or a closed pipe ends the conversation (status 0).
    A bad ``agent_spec`` raises ``SpecError`` (a file it names that cannot
    be read, the file's ``ValueError``) before anything is written."""
    make_agent(agent_spec).close()
    # a byte that is no UTF-8 is kept (a lone surrogate) for the error that names it
    # and a line ends at '\n' alone (_lines takes off its '\r\n'): a lone '\r' stays in its line, for the error
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="surrogateescape", newline="\n")
    stdout = open(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", newline="\n")  # noqa: SIM115
    try:
        with contextlib.redirect_stdout(sys.stderr):
            return serve(agent_spec, stdin, stdout)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    finally:
        with contextlib.suppress(OSError):
            stdout.close()
