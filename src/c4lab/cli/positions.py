"""``c4lab show``, ``move``, ``solve``, ``agents`` and ``engine``: the
commands that answer about positions and agents, each position given as
an argument or read from standard input, one answer per input."""

from __future__ import annotations

import contextlib
import json
import sys
from collections.abc import Callable, Iterator

import click

from c4lab.cli.group import InterruptedAt, main
from c4lab.cli.options import INT64, BadInput, Finite, bad_option, default_from

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


def _inputs(positions: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """The positions to answer, each with where it came from ("" for an
    argument, ``stdin line N: `` for a line of standard input): the
    arguments, with ``-`` meaning "read standard input, one position per
    line, answering each as it comes" (see ``_stdin_lines``)."""
    for item in positions:
        if item == "-":
            for number, line in _stdin_lines():
                yield line, f"stdin line {number}: "
        else:
            yield item, ""


def _stdin_lines() -> Iterator[tuple[int, str]]:
    """The lines of standard input with their numbers (from 1), each as it
    comes, without the newline ending it: exactly what an argument would
    be, so the strict parser refuses what it refuses in an argument (a
    space, a tab) and its character
    numbers point into the line as read.  An empty line is skipped (still
    counted).  The bytes are read and decoded here, as the command line's
    are: a byte that is not UTF-8 reaches the parser as itself
    (``surrogateescape``), never a UnicodeDecodeError of the locale's
    codec.  A line ends with ``\\n`` or ``\\r\\n`` (a file saved on
    Windows), not with a lone ``\\r``."""
    stream = getattr(sys.stdin, "buffer", None)
    number = 0
    while True:
        raw = stream.readline() if stream is not None else sys.stdin.readline()
        if not raw:
            return
        number += 1
        line = raw.decode("utf-8", "surrogateescape") if isinstance(raw, bytes) else raw
        line = line.removesuffix("\n").removesuffix("\r") if line.endswith("\n") else line  # one line end: LF or CRLF
        if line:
            yield number, line


class Progress:
    """Where a batch of answers is (:func:`answer_each`): the input being
    answered, and how many answers were printed before it."""

    def __init__(self) -> None:
        self.where = ""
        self.printed = 0

    def stopped(self) -> KeyboardInterrupt:
        """Ctrl-C in the batch, saying where: "interrupted at stdin line 57
        (56 answers printed before it)"."""
        answers = f"{self.printed} answer{'' if self.printed == 1 else 's'}"
        return InterruptedAt(f"at {self.where} ({answers} printed before it)") if self.where else KeyboardInterrupt()


def answer_each(
    positions: tuple[str, ...], as_json: bool, answer: Callable[[str], tuple[dict, str]],
    progress: Progress | None = None,
) -> None:
    """Run ``answer`` on every input; print its JSON record or its text, one
    answer per input, flushed at once.  A bad input answers an error and the
    run goes on; the exit status is 2 if any input was bad.  ``progress``
    is kept up to date, for a Ctrl-C to say where it stopped the batch."""
    bad = 0
    for text, where in _inputs(positions):
        if progress is not None:
            progress.where = where.removesuffix(": ") or repr(text if len(text) <= 40 else text[:37] + "...")
        try:
            record, plain = answer(text)
        except ValueError as exc:
            bad += 1
            if as_json:
                click.echo(json.dumps({"input": text, "error": f"{where}{exc}"}))
            else:
                click.echo(f"error: {where}{exc}")
        else:
            click.echo(json.dumps(record) if as_json else plain)
        sys.stdout.flush()
        if progress is not None:
            progress.printed += 1
    if bad:
        sys.exit(2)


def interruptible(work: Callable[[], None], progress: Progress | None = None) -> None:
    """Run ``work`` on a thread of its own while this one waits for it, so
    that Ctrl-C stops the command at once (its ``KeyboardInterrupt`` is raised
    here, and the command group says "interrupted", status 130).  Python runs
    a signal's handler only between the main thread's bytecodes, and a
    compiled kernel can run for minutes in one call (the solver's search on a
    large board): in the main thread, Ctrl-C would wait for it.  For the
    commands whose only output is the standard streams (``solve``,
    ``move``): the work's thread is a daemon, left to the process's end.
    An exception of ``work`` (``SystemExit`` among them) is raised here."""
    from c4lab.ctrl_c import ctrl_c_interrupts, waited_on_a_thread  # lazy: start-up time

    with ctrl_c_interrupts():  # even where SIGINT came ignored (a background job of a script)
        try:
            waited_on_a_thread(work, "c4lab-command")
        except InterruptedAt:
            raise
        except KeyboardInterrupt:
            if progress is None:
                raise
            raise progress.stopped() from None




@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position.")
def show(positions: tuple[str, ...], as_json: bool) -> None:
    """Print each POSITION as a board ("-" reads positions from stdin)."""
    from c4lab.rules import Position

    def answer(text: str) -> tuple[dict, str]:
        position = Position.parse(text)
        return position.to_dict(), position.describe()

    answer_each(positions, as_json, answer)


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--agent", "spec", **default_from("c4lab.agents.catalogue", "DEFAULT_LEVEL"),
              help="Agent spec NAME[:key=value,...] (`c4lab agents` lists them; random:seed=1 answers at once).")
@click.option("--time", "seconds", type=float, default=None,
              help="Seconds per move, in place of the spec's time= and iterations= (with --iterations: "
                   "whichever runs out first).")
@click.option("--iterations", type=INT64, default=None,
              help="Iterations per move, in place of the spec's time= and iterations= (with --time: "
                   "whichever runs out first).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position, with the analysis.")
def move(
    positions: tuple[str, ...], spec: str, seconds: float | None, iterations: int | None, as_json: bool
) -> None:
    """Print the move the agent chooses in each POSITION ("-": stdin)."""
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...' on the local command line)
    from c4lab.agents import Budget, QuitGame, make_agent
    from c4lab.rules import Position

    # the bad option named (Invalid value for '--time': ...), each budget checked alone
    for option, alone in (("--time", {"time": seconds}), ("--iterations", {"iterations": iterations})):
        if any(value is not None for value in alone.values()):
            try:
                Budget(**alone)
            except ValueError as exc:
                raise bad_option(str(exc), option) from None
    budget = Budget(time=seconds, iterations=iterations) if (seconds is not None or iterations is not None) else None
    try:
        agent = make_agent(spec)
    except ValueError as exc:
        raise bad_option(str(exc), "--agent") from None
    except RuntimeError as exc:  # an engine program that cannot start
        raise BadInput(str(exc)) from None
    if budget is not None:
        _say_an_unused_budget(spec, seconds, iterations)

    from c4lab.agents.base import AgentError, AnswerError
    from c4lab.game import answer_move, crash_detail
    from c4lab.rules.sides import game_over_error

    class AgentFailed(Exception):
        """The agent raised (not bad input: a fault of the agent's code)."""

    def answer(text: str) -> tuple[dict, str]:
        agent.expect(text)  # what the agent compiles in the background while the moves are read
        position = Position.parse(text)
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        try:
            # an agent's stray print() goes to stderr: stdout holds the answers, one a position (a person's
            # prompts stay where they are asked)
            with contextlib.nullcontext() if agent.is_human else contextlib.redirect_stdout(sys.stderr):
                said, analysis = agent.analysed(position, budget)
        except (ValueError, AgentError):  # this position refused (its message says why); an engine's fault
            raise
        except QuitGame:  # the human agent's: no move came from the keyboard (said below), not a crash
            raise
        except AnswerError as exc:
            raise AgentFailed(f"agent {spec!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001  (an agent of one's own that fails: one line, not c4lab's traceback)
            raise AgentFailed(crash_detail(exc, f"agent {spec!r}")) from None
        # An illegal answer is told as an engine's is: an error line for this position, status 2.
        chosen = answer_move(position, said, f"agent {spec!r}")
        record = {
            "position": position.notation,
            "agent": spec,
            "move": chosen.token,
            "analysis": analysis.to_dict(),
        }
        if analysis.fallback and not as_json:  # the JSON analysis says it in its note
            click.echo(f"{spec} fell back to {analysis.fallback}: {analysis.note}", err=True)
        return record, chosen.token

    from c4lab.engine.client import EngineError
    from c4lab.ui.preparing import preparing_on_stderr

    progress = Progress()

    def work() -> None:
        with preparing_on_stderr():
            answer_each(positions, as_json, answer, progress)

    try:
        interruptible(work, progress)
    except QuitGame:
        raise click.ClickException("the human agent reads its moves from the keyboard, and none came "
                                   "(the input ended, or e or exit was typed)") from None
    except (EngineError, AgentFailed) as exc:
        raise click.ClickException(str(exc)) from None


def _say_an_unused_budget(spec: str, seconds: float | None, iterations: int | None) -> None:
    """A note on standard error where ``move``'s ``--time`` or
    ``--iterations`` changes nothing: the agent (``heuristic``, ``random``,
    a Q-table) takes no budget of either kind (it was taken silently)."""
    from c4lab.agents import agent_infos  # lazy: start-up time

    name = spec.partition(":")[0]
    info = next((info for info in agent_infos() if info.name == name), None)
    if info is None or {"time", "iterations"} & {param.name for param in info.params}:
        return  # a search (or an engine program, told the budget by go): the budget holds
    given = [option for option, value in (("--time", seconds), ("--iterations", iterations)) if value is not None]
    verb = "changes" if len(given) == 1 else "change"
    click.echo(f"note: {name} searches nothing a budget could bound: {' and '.join(given)} {verb} nothing", err=True)


#: Seconds after which ``solve`` with no ``--timeout`` and no progress line
#: (its standard error not a terminal) says, once a position, that the
#: search goes on: off the classic board one can take hours, and a script
#: waited in silence with no hint of ``--timeout``.
STILL_SOLVING_AFTER = 10.0


def still_solving(notation: str) -> str:
    """The line ``solve`` says of a search that goes on (``STILL_SOLVING_AFTER``)."""
    return (f"still solving {notation} after {STILL_SOLVING_AFTER:g} s: off the classic board a search can take "
            "hours (--timeout SECONDS gives up on a position: 'timeout', status 3)")


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--json", "as_json", is_flag=True,
              help="One JSON object per position: score, best_moves (searched after the score, within the same "
                   "--timeout), nodes, time_s.")
@click.option("--weak", is_flag=True, help="Only decide win, draw or loss (prints 1, 0 or -1); faster.")
@click.option("--analyse", "--analyze", "analyse", is_flag=True, help="Also score every legal move (with --weak: 1, 0 or -1).")
@click.option("--timeout", type=Finite(0, min_open=True), default=None,
              help="Give up on a position after this many seconds (default: none, search to the end).")
@click.option("--no-book", is_flag=True, help="Search classic openings to the end instead of reading the 12-ply database.")
def solve(
    positions: tuple[str, ...], as_json: bool, weak: bool, analyse: bool, timeout: float | None, no_book: bool
) -> None:
    """Print each POSITION and its exact score ("-": read them from stdin,
    one a line, as an argument would be; empty lines are skipped).

    The score is RULES.md's, for the side to move: positive wins (the larger,
    the sooner), 0 draws, negative loses.  A position given up at --timeout
    prints "timeout" (JSON: "score": null) and the exit status is 3; no
    answer is ever a guess.  The status is 3 too for a move --analyse had
    no time left for ("?") and, with --json, for best moves not found in
    time ("best_moves": null, the score kept).  A classic position with at most 12 pieces is
    searched down to the published 12-ply database (`c4lab book info`); a
    search longer than a second shows its progress on a terminal's stderr
    (elsewhere, without --timeout, one line after 10 s says it goes on).
    """
    import threading  # lazy: start-up time
    import time

    from c4lab.rules import Position
    from c4lab.solver import Solver, api
    from c4lab.ui.preparing import preparing_on_stderr
    from c4lab.ui.status import StatusLine

    line = StatusLine("solving: ")
    solver = Solver(book=not no_book, progress=line if line.enabled else None)
    timed_out = 0

    def answer(text: str) -> tuple[dict, str]:
        nonlocal timed_out
        api.expect(text)  # the solver's child compiles while the moves are read
        position = Position.parse(text)
        note = None
        began = time.monotonic()
        if timeout is None and not line.enabled:  # no progress line (a pipe, a script): one line if it is long
            # compiled first (a first start's): the line is about a search that goes on, not the compiler
            solver.prepare(position, moves=analyse or as_json)
            note = threading.Timer(STILL_SOLVING_AFTER, click.echo, args=(still_solving(position.notation),),
                                   kwargs={"err": True})
            note.daemon = True
            note.start()
        try:
            record, plain = api.answer(
                solver, position, weak=weak, analyse=analyse, timeout=timeout, best_moves=as_json
            )
        finally:
            if note is not None:
                note.cancel()
        before = time.monotonic() - began - record["time_s"]  # not the search's: a first start's compiling, or loading it from the cache
        if record["timed_out"] and before >= 1.0 and plain.endswith(" s)"):  # the timeout counts the search only
            plain = plain[:-1] + f" of search, after {before:.0f} s of preparing the engine, not counted)"
        timed_out += record["timed_out"]
        line.clear()
        return record, plain

    progress = Progress()

    def work() -> None:
        with preparing_on_stderr():
            answer_each(positions, as_json, answer, progress)

    interruptible(work, progress)
    line.clear()
    if timed_out:
        sys.exit(3)


@main.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
def agents(names: tuple[str, ...]) -> None:
    """List the agents and their parameters: every agent, or those NAMEd
    (`c4lab agents master uct`; a spec's name part counts: master:time=2)."""
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...', which the arena and move play)
    from c4lab.agents import SpecError, agent_infos, make_agent

    infos = agent_infos()
    if names:
        by_name = {info.name: info for info in infos}
        unknown = [name for name in names if name.partition(":")[0] not in by_name]
        if unknown:  # make_agent's words (a name it would suggest, a plugin that did not load)
            try:
                make_agent(unknown[0].partition(":")[0])
            except SpecError as exc:
                raise bad_option(str(exc), "NAME") from None
            raise bad_option(f"unknown agent {unknown[0].partition(':')[0]!r}", "NAME")
        infos = [by_name[name] for name in dict.fromkeys(name.partition(":")[0] for name in names)]
    for info in infos:
        missing = info.unavailable
        click.echo(f"{info.name}: {info.help}" + (f"  [unavailable: {missing}]" if missing else ""))
        for param in info.params:
            default, kind = param.default, param.type.__name__
            if param.name in info.defaults:  # a preset's own value, not the family's default the help may name
                default = param.convert(info.name, info.defaults[param.name])
                kind += f", {info.name}'s setting"
            click.echo(f"    {param.name}={default}  ({kind}) {param.help}")




@main.command()
@click.option("--agent", "spec", default="master", show_default=True, help="Agent spec NAME[:key=value,...].")
def engine(spec: str) -> None:
    """Run an agent as an engine: the c4lab engine protocol on stdin/stdout.

    Commands come one a line (c4lab, isready, setoption, newgame, position,
    go, stop, quit; see docs/engine-protocol.md); the agent's parameters are
    its options.  Bad lines answer 'error ...' and the engine goes on.
    """
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...': an engine may relay another)
    from c4lab.engine.serve import run_on_stdio

    try:
        status = run_on_stdio(spec)  # a bad spec is a usage error before the conversation starts
    except ValueError as exc:  # a bad spec, or a file it names (a network, a table) that cannot be read
        raise bad_option(str(exc), "--agent") from None  # named as c4lab move names it
    sys.exit(status)
