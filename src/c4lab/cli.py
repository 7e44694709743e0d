"""The ``c4lab`` command.  Thin: it parses options and dispatches.

Heavy modules (numpy, numba, the rules engine, rich) are imported inside the
commands, so ``c4lab --help`` answers at once.
"""

from __future__ import annotations

import json
import math
import os
import sys
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import click

from c4lab import __version__
from c4lab.quick_exit import leave

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


def _answer_each(
    positions: tuple[str, ...], as_json: bool, answer: Callable[[str], tuple[dict, str]]
) -> None:
    """Run ``answer`` on every input; print its JSON record or its text, one
    answer per input, flushed at once.  A bad input answers an error and the
    run goes on; the exit status is 2 if any input was bad."""
    bad = 0
    for text, where in _inputs(positions):
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
    if bad:
        sys.exit(2)


def _interruptible(work: Callable[[], None]) -> None:
    """Run ``work`` on a thread of its own while this one waits for it, so
    that Ctrl-C stops the command at once (its ``KeyboardInterrupt`` is raised
    here, and the command group says "interrupted", status 130).  Python runs
    a signal's handler only between the main thread's bytecodes, and a
    compiled kernel can run for minutes in one call (the solver's search on a
    large board): in the main thread, Ctrl-C would wait for it.  For the
    commands whose only output is the standard streams (``solve``,
    ``move``): the work's thread is a daemon, left to the process's end.
    An exception of ``work`` (``SystemExit`` among them) is raised here."""
    import threading  # lazy: start-up time

    failure: list[BaseException] = []

    def run() -> None:
        try:
            work()
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            failure.append(exc)

    from c4lab.ctrl_c import ctrl_c_interrupts  # lazy: start-up time

    thread = threading.Thread(target=run, name="c4lab-command", daemon=True)
    thread.start()
    with ctrl_c_interrupts():  # even where SIGINT came ignored (a background job of a script)
        while thread.is_alive():
            thread.join(0.1)  # a wait that Ctrl-C interrupts
    if failure:
        raise failure[0]


class BadInput(click.ClickException):
    """Bad input met while a command runs (a file that is not what it should
    be, a setting the run refuses): one line, status 2, as a bad option."""

    exit_code = 2


def bad_option(message: str, option: str | None) -> click.BadParameter:
    """A value of ``option`` the command refuses after click has read it:
    ``Error: Invalid value for '--board': MESSAGE``, the option quoted as
    click quotes one it refuses itself (``'x' is not a valid integer``), so
    that the two kinds of refusal read alike; ``None``: no option named."""
    return click.BadParameter(message, param_hint=None if option is None else f"'{option}'")


def _named_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file option given an empty name (``--resume "$NET"`` with ``NET``
    unset) is an error, not the option left out: the command would
    otherwise quietly start anew or write its default file.  A ``~`` no
    shell expanded (``--resume=~/net.npz``) is the home folder."""
    if value is None:
        return None
    if not value.strip():
        raise click.BadParameter("an empty file name (blank)" if value else "an empty file name")
    from pathlib import Path  # lazy: start-up time

    return str(Path(value).expanduser())


def _no_colour_option(color: bool | None) -> None:
    """``--color``/``--no-color`` of a command that opens the page instead
    of the terminal game (no ``--tui``): refused, not ignored; the page has
    its own look."""
    if color is not None:
        raise click.UsageError(f"--{'' if color else 'no-'}color is for the terminal (--tui): the page's look is "
                               "in its Settings")


def _no_page_options(port: int | None, db: str | None, no_browser: bool) -> None:
    """The page's options given with ``--tui``: refused, not ignored, as the
    terminal's are without it (``_no_colour_option``): a person who asked
    for ``--db`` would look there for a game the terminal never stores."""
    for option, given, why in (
        ("--db", db is not None, "the terminal game (--tui) stores no game"),
        ("--port", port is not None, "the terminal game (--tui) runs no server"),
        ("--no-browser", no_browser, "the terminal game (--tui) opens none"),
    ):
        if given:
            raise click.UsageError(f"{option} is for the page in the browser: {why}")


def _named_files(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """A repeatable file option (``--network``, ``--qtable``): each as ``_named_file``
    reads one (an empty name refused, a ``~`` expanded)."""
    return tuple(str(_named_file(ctx, param, v)) for v in value)


def _ray_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--ray-address`` given an empty value (``--ray-address "$RAY"`` with
    ``RAY`` unset) is an error, as ``--sprt ""`` is: it was taken for the
    option left out, and the run started a local Ray (or, without
    ``--executor ray``, ran here) without a word."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "an empty address: give the cluster's HOST:PORT (or auto), or leave the option out to start a local Ray")
    return value


def _writable_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An output file's folder must exist and take a new file: checked before
    the run, so that a long run does not end in a write that fails (the
    name, ``~`` expanded, from ``_named_file``)."""
    value = _named_file(ctx, param, value)
    if value is not None:
        from pathlib import Path  # lazy: start-up time

        from c4lab.arrayfile import check_writable  # lazy: start-up time

        try:
            check_writable(Path(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def _in_existing_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file option's folder must exist: a typo is an error, not new folders."""
    if value is not None:
        from pathlib import Path  # lazy: start-up time

        value = str(Path(value).expanduser())  # the file whose folder was checked, not ./~/...
        folder = Path(value).parent
        if not folder.is_dir():
            raise click.BadParameter(f"the folder {str(folder)!r} does not exist")
    return value


def _room_prefix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--room-prefix``: letters and digits (a one-line error otherwise)."""
    if value:
        from c4lab.server.room import check_prefix  # lazy: start-up time

        try:
            check_prefix(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def _field(module: str, owner: str, name: str) -> Any:
    """The default of the dataclass field ``owner.name`` of ``module``."""
    import dataclasses  # lazy: start-up time
    import importlib  # lazy: start-up time

    cls = getattr(importlib.import_module(module), owner)
    return next(f.default for f in dataclasses.fields(cls) if f.name == name)


def _constant(module: str, name: str) -> Any:
    """The module-level constant ``name`` of ``module``."""
    import importlib  # lazy: start-up time

    return getattr(importlib.import_module(module), name)


class _OwnBounds:
    """A number range whose help names only the bounds it was given (none:
    nothing, where click would print ``x<=None``)."""

    min: Any
    max: Any

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()  # type: ignore[misc]


class _Finite(_OwnBounds, click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and ``inf``, which pass
    every comparison with a bound and then break a clock or a deadline
    (``--timeout inf`` overflowed a timer)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class _Int64(_OwnBounds, click.IntRange):
    """An integer option within 64 bits (the compiled kernels' and
    SQLite's integers: a larger one failed deep in numba or in the
    database with a traceback), and within ``min``/``max`` if given (the
    help names only those)."""

    name = "integer"
    LIMIT = 2**63

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        if not -self.LIMIT <= number < self.LIMIT:
            self.fail(f"{number} does not fit in a 64-bit integer.", param, ctx)
        return super().convert(number, param, ctx)


#: Any integer option without bounds of its own.
_INT64 = _Int64()


class _Default(click.Option):
    """An option whose default has its home elsewhere -- a dataclass field
    (``_field``) or a constant (``_constant``) of the module that uses it --
    read when the command runs or shows its help: written once, and
    ``c4lab --help`` still loads nothing (``home`` is called only then)."""

    def __init__(self, *args: Any, home: Callable[[], Any], **kwargs: Any) -> None:
        self.home = home
        kwargs.setdefault("show_default", True)
        super().__init__(*args, **kwargs)

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return self.home()


def _home(*where: str) -> dict[str, Any]:
    """``cls=_Default`` with its home: ``("module", "Class", "field")`` or ``("module", "NAME")``."""
    home = (lambda: _field(*where)) if len(where) == 3 else (lambda: _constant(*where))
    return {"cls": _Default, "home": home}


#: The homes of the server's defaults.
_GUARD = ("c4lab.server.guard", "GuardOptions")
_LIMITS = ("c4lab.server.limits", "AgentLimits")
_PRESENCE = "c4lab.server.presence"
_QTRAIN = ("c4lab.learning.qlearning", "TrainConfig")
_NTRAIN = ("c4lab.learning.ntuple", "Options")
_ARENA = ("c4lab.arena.schedule", "ArenaConfig")


class _Commands(click.Group):
    """The command group: Ctrl-C in any command is one line and status 130
    (click's own handling prints "Aborted!" and exits 1)."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:  # click's own form is four lines (usage, hint, blank, error): one
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            from c4lab.ctrl_c import ctrl_c_ignored_from_now  # lazy: start-up time

            ctrl_c_ignored_from_now()  # a second press on the way out would end the process by SIGINT (-2)
            click.echo("\ninterrupted", err=True)
            sys.exit(130)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="c4lab")
def main() -> None:
    """Connect Four on variant boards: play it, watch AIs play it, study it.

    Positions use the notation of RULES.md, e.g. 7x6:dddc or 9x8/Xd3/Bb1:b+ac
    (the manual's page "The rules and the notation", docs/rules.md, sums it up).
    `c4lab COMMAND --help` tells a command's options.
    """


#: The commands that end with a quick exit (``c4lab.quick_exit``): short
#: ones that people and scripts run often, whose only output is the
#: standard streams.  The others (servers, training, the arena: long runs
#: that write files) end the normal way, every file closed by Python.
QUICK_EXIT = frozenset({"show", "move", "solve", "agents"})


def run() -> None:
    """The ``c4lab`` command as a process runs it (the console script,
    ``python -m c4lab``): :func:`main`; the commands of
    :data:`QUICK_EXIT` then skip Python's slow shutdown (0.2-0.4 s of
    every warm ``c4lab move``)."""
    quick = len(sys.argv) > 1 and sys.argv[1] in QUICK_EXIT
    try:
        main()
    except SystemExit as exc:
        if quick:
            leave(exc.code)
        raise


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position.")
def show(positions: tuple[str, ...], as_json: bool) -> None:
    """Print each POSITION as a board ("-" reads positions from stdin)."""
    from c4lab.rules import Position

    def answer(text: str) -> tuple[dict, str]:
        position = Position.parse(text)
        return position.to_dict(), position.describe()

    _answer_each(positions, as_json, answer)


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--agent", "spec", default="random", show_default=True,
              help="Agent spec NAME[:key=value,...] (`c4lab agents` lists them).")
@click.option("--time", "seconds", type=float, default=None,
              help="Seconds per move, in place of the spec's time= and iterations=.")
@click.option("--iterations", type=_INT64, default=None,
              help="Iterations per move, in place of the spec's time= and iterations=.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position, with the analysis.")
def move(
    positions: tuple[str, ...], spec: str, seconds: float | None, iterations: int | None, as_json: bool
) -> None:
    """Print the move the agent chooses in each POSITION ("-": stdin)."""
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...' on the local command line)
    from c4lab.agents import Budget, QuitGame, make_agent
    from c4lab.rules import Position

    # the bad option named (Invalid value for '--time': ...), each budget checked alone
    for option, alone in (("--time", (seconds, None)), ("--iterations", (None, iterations))):
        if any(value is not None for value in alone):
            try:
                Budget(*alone)
            except ValueError as exc:
                raise bad_option(str(exc), option) from None
    budget = Budget(seconds, iterations) if (seconds is not None or iterations is not None) else None
    try:
        agent = make_agent(spec)
    except ValueError as exc:
        raise bad_option(str(exc), "--agent") from None
    except RuntimeError as exc:  # an engine program that cannot start
        raise BadInput(str(exc)) from None

    from c4lab.agents.base import AgentError, AnswerError
    from c4lab.game import crash_detail, play_answer

    class AgentFailed(Exception):
        """The agent raised (not bad input: a fault of the agent's code)."""

    def answer(text: str) -> tuple[dict, str]:
        position = Position.parse(text)
        if position.is_over:
            raise ValueError(f"the game is over in {position.notation}: there is no move to choose")
        try:
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
        chosen = play_answer(position, said, f"agent {spec!r}").moves[-1]
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

    def work() -> None:
        with preparing_on_stderr():
            _answer_each(positions, as_json, answer)

    try:
        _interruptible(work)
    except QuitGame:
        raise click.ClickException("the human agent reads its moves from the keyboard, and none came "
                                   "(the input ended, or e or exit was typed)") from None
    except (EngineError, AgentFailed) as exc:
        raise click.ClickException(str(exc)) from None


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position: score, best_moves, nodes, time_s.")
@click.option("--weak", is_flag=True, help="Only decide win, draw or loss (prints 1, 0 or -1); faster.")
@click.option("--analyse", "--analyze", "analyse", is_flag=True, help="Also score every legal move (with --weak: 1, 0 or -1).")
@click.option("--timeout", type=_Finite(0, min_open=True), default=None,
              help="Give up on a position after this many seconds.")
@click.option("--no-book", is_flag=True, help="Search classic openings to the end instead of reading the 12-ply database.")
def solve(
    positions: tuple[str, ...], as_json: bool, weak: bool, analyse: bool, timeout: float | None, no_book: bool
) -> None:
    """Print each POSITION and its exact score ("-": read them from stdin,
    one a line, as an argument would be; empty lines are skipped).

    The score is RULES.md's, for the side to move: positive wins (the larger,
    the sooner), 0 draws, negative loses.  A position given up at --timeout
    prints "timeout" (JSON: "score": null) and the exit status is 3; no
    answer is ever a guess.  A classic position with at most 12 pieces is
    searched down to the published 12-ply database (`c4lab book info`); a
    search longer than a second shows its progress on a terminal's stderr.
    """
    from c4lab.rules import Position
    from c4lab.solver import Solver, api
    from c4lab.ui.preparing import preparing_on_stderr
    from c4lab.ui.status import StatusLine

    line = StatusLine("solving: ")
    solver = Solver(book=not no_book, progress=line if line.enabled else None)
    timed_out = 0

    def answer(text: str) -> tuple[dict, str]:
        nonlocal timed_out
        record, plain = api.answer(
            solver, Position.parse(text), weak=weak, analyse=analyse, timeout=timeout, best_moves=as_json
        )
        timed_out += record["timed_out"]
        line.clear()
        return record, plain

    def work() -> None:
        with preparing_on_stderr():
            _answer_each(positions, as_json, answer)

    _interruptible(work)
    line.clear()
    if timed_out:
        sys.exit(3)


@main.command()
@click.argument("names", nargs=-1, metavar="[NAME]...")
def agents(names: tuple[str, ...]) -> None:
    """List the agents and their parameters: every agent, or those NAMEd
    (`c4lab agents master uct`; a spec's name part counts: master:time=2)."""
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...', which the arena and move play)
    from c4lab.agents import agent_infos

    infos = agent_infos()
    if names:
        by_name = {info.name: info for info in infos}
        unknown = [name for name in names if name.partition(":")[0] not in by_name]
        if unknown:
            raise BadInput(f"unknown agent {unknown[0].partition(':')[0]!r} (known agents: {', '.join(by_name)})")
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


def _check_game_options(board: str, bonus: bool, player1: str, player2: str) -> None:
    """``c4lab play``'s board and players, refused with the option that is
    wrong (``Invalid value for '--board': ...``) before a game starts: the page
    would only show a bad board in its form and refuse an agent when the game
    starts; the terminal game's own refusal would not name the option."""
    from c4lab.agents import make_agent  # lazy: start-up time
    from c4lab.rules.setup import check_start  # lazy: as above

    try:
        start = check_start(board, bonus)
    except ValueError as exc:
        raise bad_option(str(exc), "--board") from None
    for option, spec in (("--player1", player1), ("--player2", player2)):
        if spec != "human":
            try:
                agent = make_agent(spec)
                if not bonus and board != "random":  # the board of every game (else drawn for each game)
                    agent.check_board(start.variant)
            except ValueError as exc:
                raise bad_option(str(exc), option) from None


@main.command()
@click.option("--tui", is_flag=True, help="Play in the terminal instead of the browser.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser (print the address only).")
@click.option("--port", type=_Int64(1, 65535), default=None, help="Port of the local server (default: a free one).")
@click.option("--db", type=click.Path(dir_okay=False), callback=_in_existing_folder, default=None, help="Game database (SQLite file).")
@click.option(
    "--board",
    default="7x6",
    show_default=True,
    help="7x6, WxH, 'random' (the enhanced setup: a random size from 4x4 to 12x12 and one forbidden cell), "
    "or a position string: a board with its cells "
    "(6x5/Xc2: c2 forbidden; 8x7/Bd1: the bonus cell on d1) and moves to start from (9x8/Xd3:ddde).",
)
@click.option("--bonus", is_flag=True, help="Add a random bonus cell to a board that has none.")
@click.option("--player1", "-1", "player1", default="human", show_default=True, help="Agent spec or 'human'.")
@click.option(
    "--player2", "-2", "player2", default="hard", show_default=True,
    help="Agent spec or 'human' (levels: normal, hard, impossible, master).",
)
@click.option(
    "--first",
    type=click.Choice(["1", "2", "random"]),
    default="random",
    show_default=True,
    help="Which player plays A (moves first).",
)
@click.option("--seed", type=_INT64, default=None,
              help="Seed for the draws (first player, random boards) of the terminal game.")
@click.option("--delay", type=_Finite(0), default=None, help="Seconds to pause after an agent's move (terminal game).")
@click.option("--color/--no-color", default=None,
              help="Force the terminal game's colours on or off (default: when a terminal).")
@click.option("--network", "networks", multiple=True, metavar="FILE", callback=_named_files,
              help="Offer this n-tuple network to the page's players as weights=ITS-FILE-NAME (repeatable; a "
                   "--player1/--player2 with weights=FILE or qlearning:table=FILE offers its file by itself).")
def play(
    tui: bool,
    no_browser: bool,
    port: int | None,
    db: str | None,
    board: str,
    bonus: bool,
    player1: str,
    player2: str,
    first: str,
    seed: int | None,
    delay: float | None,
    color: bool | None,
    networks: tuple[str, ...],
) -> None:
    """Play: in the browser (a local server on 127.0.0.1), or with --tui in
    the terminal."""
    _check_game_options(board, bonus, player1, player2)
    if tui:
        _no_page_options(port, db, no_browser)
        if networks:
            raise click.UsageError("--network is for the page in the browser: the terminal game's players "
                                   "name their own files (weights=FILE)")
        from c4lab.ui.terminal import GameSettings, run_terminal_game

        settings = GameSettings(
            board=board, bonus=bonus, players=(player1, player2), first=first, seed=seed, delay=delay,
            color=color,
        )
        try:
            sys.exit(run_terminal_game(settings))
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    for option, value in (("--seed", seed), ("--delay", delay)):
        if value is not None:  # the page's form draws the board and the first player, and paces the agents itself
            raise click.UsageError(f"{option} is for the terminal game (--tui): the page draws its own boards "
                                   "and first player, and plays the agents' moves as they come")
    _no_colour_option(color)
    import dataclasses  # lazy: start-up time

    from c4lab.server.guard import UNLIMITED
    from c4lab.server.limits import PERSONAL
    from c4lab.server.offered import NETWORK, by_file_name, offered_files, spec_file  # lazy: as above
    from c4lab.server.presence import FORFEIT_AFTER

    # The page names a file by its file name (a room never opens a path): the players' own files (networks,
    # Q-tables) and --network's are offered to it, and the form gets the players with their file's name.
    wanted = [*(f for f in (spec_file(p) for p in (player1, player2) if p != "human") if f),
              *((NETWORK, n) for n in networks)]
    try:
        limits = dataclasses.replace(PERSONAL, files=offered_files(wanted))
    except ValueError as exc:  # a players' file was read already: a --network one, named
        raise BadInput(str(exc)) from None
    # The page's new-game form starts filled in with the options given here.
    query = {"board": board, "p1": by_file_name(player1), "p2": by_file_name(player2),
             "first": {"1": "A", "2": "B"}.get(first, "random")}
    if bonus:
        query["bonus"] = "1"
    _serve(
        host="127.0.0.1", port=port, db=db, forfeit_after=FORFEIT_AFTER, open_browser=not no_browser, local=True,
        query=urllib.parse.urlencode(query), limits=limits, guard=UNLIMITED, idle_after=None,
    )


@main.command()
@click.argument("position")
@click.option("--tui", is_flag=True, help="Analyse in the terminal instead of the browser.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser (print the link only).")
@click.option("--port", type=_Int64(1, 65535), default=None, help="Port of the local server (default: a free one).")
@click.option("--db", type=click.Path(dir_okay=False), callback=_in_existing_folder, default=None, help="Game database (SQLite file).")
@click.option("--color/--no-color", default=None, help="Force the terminal's colours on or off (default: when a terminal).")
def analyse(position: str, tui: bool, no_browser: bool, port: int | None, db: str | None, color: bool | None) -> None:
    """Open POSITION on the analysis board: you make the moves of both
    sides, and after every move each column shows its score for whoever is
    to move (exact where the solver answers in time, else the engine's
    estimate, marked as such). In the browser (a local server on 127.0.0.1,
    the page /analyse?position=POSITION), or with --tui in the terminal.
    A bad POSITION is one line that says where, and nothing starts."""
    from c4lab.rules import Position

    try:
        start = Position.parse(position)
    except ValueError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    if tui:
        _no_page_options(port, db, no_browser)
        from c4lab.ui.terminal import GameSettings, run_terminal_game

        settings = GameSettings(board=start.notation, players=("human", "human"), first="1", color=color, analyse=True)
        sys.exit(run_terminal_game(settings))
    _no_colour_option(color)
    from c4lab.server.guard import UNLIMITED
    from c4lab.server.limits import PERSONAL
    from c4lab.server.presence import FORFEIT_AFTER

    _serve(
        host="127.0.0.1", port=port, db=db, forfeit_after=FORFEIT_AFTER, open_browser=not no_browser, local=True,
        page="analyse", query=urllib.parse.urlencode({"position": start.notation}), limits=PERSONAL,
        guard=UNLIMITED, idle_after=None,
        first_warm=("perfect", start.notation),  # the page's hints: the solver, its fallback (the hint's engine)
    )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every one).")
@click.option("--port", type=_Int64(1, 65535), default=8000, show_default=True, help="Port to listen on.")
@click.option("--db", type=click.Path(dir_okay=False), callback=_in_existing_folder, default=None, help="Game database (SQLite file).")
@click.option("--forfeit-after", type=_Finite(0, min_open=True), **_home(_PRESENCE, "FORFEIT_AFTER"),
              help="Seconds an absent player has to come back before forfeiting.")
@click.option("--max-think", type=_Finite(), **_home(*_LIMITS, "max_time"),
              help="Most seconds an agent may think about one move (time=; at least 1).")
@click.option("--max-iterations", type=_INT64, **_home(*_LIMITS, "max_iterations"),
              help="Most iterations an agent may run for one move (iterations=).")
@click.option("--max-depth", type=_INT64, **_home(*_LIMITS, "max_depth"),
              help="Deepest search an agent may ask for (depth=).")
@click.option("--agent-threads", type=_INT64, **_home(*_LIMITS, "threads"),
              help="Worker threads for agents, hints and reviews (one room uses one at most).")
@click.option("--allow-agent", "allow_agents", multiple=True, metavar="NAME",
              help="Also let rooms use this agent (repeatable; never engine, which runs programs, nor "
                   "qlearning: see --qtable).")
@click.option("--network", "networks", multiple=True, metavar="FILE", callback=_named_files,
              help="Let rooms use this n-tuple network as weights=ITS-FILE-NAME (ntuple:weights=net.npz; "
                   "repeatable): loaded and checked at start; no other file is ever opened for weights=.")
@click.option("--qtable", "qtables", multiple=True, metavar="FILE", callback=_named_files,
              help="Let rooms use qlearning with this Q-table as table=ITS-FILE-NAME (qlearning:table=q.npz; "
                   "repeatable): loaded and checked at start; no other file is ever opened for table=.")
@click.option("--rooms-per-minute", type=_Finite(0), **_home(*_GUARD, "rooms_per_minute"),
              help="New rooms a minute from one client address (0: no limit).")
@click.option("--joins-per-minute", type=_Finite(0), **_home(*_GUARD, "joins_per_minute"),
              help="Seats taken a minute from one client address (0: no limit).")
@click.option("--rooms-per-client", type=_Int64(min=0), **_home(*_GUARD, "rooms_per_client"),
              help="Open rooms one client address may have made (0: no limit).")
@click.option("--max-rooms", type=_Int64(min=0), **_home(*_GUARD, "max_rooms"),
              help="Open rooms in all (0: no limit).")
@click.option("--sockets-per-client", type=_Int64(min=0), **_home(*_GUARD, "sockets_per_client"),
              help="Room connections (pages, clients) open at once from one client address (0: no limit).")
@click.option("--expire-idle", type=_Finite(1.0), **_home(_PRESENCE, "IDLE_AFTER"),
              help="Seconds before a room nobody has connected to ends (online) or leaves memory (local).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Also accept browser requests from this page origin, e.g. https://c4.example.com (repeatable; * any).")
@click.option("--room-prefix", default="", metavar="NAME", callback=_room_prefix,
              help="Start every new room's code with NAME- (letters and digits): one of several servers "
                   "behind a proxy that routes /r/NAME-..., /ws/NAME-... to it.")
@click.option("--log-level", type=click.Choice(["error", "warning", "info", "debug"]), default="info",
              show_default=True,
              help="What the log (standard error, the time on each line) says: info adds each room made, "
                   "each game ended and each request refused by the limits to the warnings.")
@click.option("--access-log", is_flag=True, help="Also log every HTTP request (uvicorn's access log) and, at info, "
              "each WebSocket's handshake, opening and closing.")
def serve(
    host: str, port: int, db: str | None, forfeit_after: float, max_think: float, max_iterations: int,
    max_depth: int, agent_threads: int, allow_agents: tuple[str, ...], networks: tuple[str, ...],
    qtables: tuple[str, ...], rooms_per_minute: float,
    joins_per_minute: float, rooms_per_client: int, max_rooms: int, sockets_per_client: int, expire_idle: float,
    allow_origins: tuple[str, ...], room_prefix: str, log_level: str, access_log: bool,
) -> None:
    """Host rooms for online play (and local games) on HOST:PORT.

    Agents are bounded (a room asking for more is refused, never cut down),
    each client address is rate-limited, and browsers may act only from
    this server's own pages (or --allow-origin): see docs/protocol.md.
    """
    from c4lab.server.guard import GuardOptions, normal_origin
    from c4lab.server.limits import AgentLimits, LimitError
    from c4lab.server.offered import NETWORK, QTABLE, offered_files  # lazy: start-up time

    try:
        offered = offered_files([*((NETWORK, n) for n in networks), *((QTABLE, t) for t in qtables)])
    except ValueError as exc:  # it names the option and the file
        raise BadInput(str(exc)) from None

    try:
        for origin in allow_origins:
            normal_origin(origin)
    except ValueError as exc:
        raise bad_option(str(exc), "--allow-origin") from None
    try:  # AgentLimits holds the bounds of its own settings
        limits = AgentLimits.with_agents(
            allow_agents, max_time=max_think, max_iterations=max_iterations, max_depth=max_depth, threads=agent_threads,
            files=offered,
        )
    except LimitError as exc:  # the option that set it
        option = {"max_time": "--max-think", "max_iterations": "--max-iterations", "max_depth": "--max-depth",
                  "threads": "--agent-threads"}.get(exc.limit)
        raise bad_option(exc.message, option) from None
    except ValueError as exc:  # --allow-agent: it names itself
        raise click.UsageError(str(exc)) from None
    guard = GuardOptions(
        rooms_per_minute=rooms_per_minute or None, joins_per_minute=joins_per_minute or None,
        rooms_per_client=rooms_per_client or None, max_rooms=max_rooms or None,
        sockets_per_client=sockets_per_client or None, allow_origins=allow_origins,
    )
    _serve(
        host=host, port=port, db=db, forfeit_after=forfeit_after, open_browser=False, local=False,
        limits=limits, guard=guard, idle_after=expire_idle, room_prefix=room_prefix, log_level=log_level,
        access_log=access_log,
    )


def _serve(
    host: str, port: int | None, db: str | None, forfeit_after: float, open_browser: bool, local: bool,
    query: str = "", page: str = "", **options: Any,
) -> None:
    from c4lab.server.run import open_page, run_in_foreground
    from c4lab.server.storage import StorageError, StoreInUse

    try:
        run_in_foreground(
            db, host, port, forfeit_after=forfeit_after, local=local, open_browser=open_browser, query=query,
            page=page, say=click.echo, **options,
        )
    except StoreInUse as exc:
        if not (local and exc.personal and exc.url):
            raise BadInput(str(exc)) from None
        # ``c4lab play`` (or analyse) already runs over this database: its page serves this request as well
        target = exc.url + page + (f"?{query}" if query else "")
        click.echo(f"c4lab is already running at {exc.url} (process {exc.pid}, the same game database): "
                   f"{'opening' if open_browser else 'open'} {target}")
        if open_browser:
            open_page(target)
    except StorageError as exc:
        raise BadInput(str(exc)) from None
    except ValueError as exc:  # a limit the hints or a stored setting do not fit
        raise BadInput(str(exc)) from None



def _token_from_file(path: str) -> str:
    """The token on the first line of ``path`` (``--token-file``): a file
    that cannot be read, is not text or holds no token is one line naming
    it, before anything connects (it was a traceback for a file not text)."""
    try:
        with open(path, encoding="utf-8") as lines:
            token = lines.readline().strip()
    except UnicodeDecodeError:
        raise bad_option(f"{path!r} is not a text file: the token is the first line of one", "--token-file") from None
    except OSError as exc:
        raise bad_option(f"cannot read {path!r}: {exc.strerror or exc}", "--token-file") from None
    if not token:
        raise bad_option(f"{path!r} holds no token: its first line is empty", "--token-file")
    return token

@main.command()
@click.argument("url")
@click.option("--name", default=None, help="Your display name when you take a free seat (1-24 characters).")
@click.option("--token", default=None, envvar="C4LAB_TOKEN", show_envvar=True,
              help="The token of your seat: come back to a game you left (visible to others in ps: "
                   "prefer --token-file or C4LAB_TOKEN).")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the token from this file (its first line).")
@click.option("--watch", is_flag=True, help="Watch as a spectator, even if a seat is free.")
@click.option("--color/--no-color", default=None, help="Force colours on or off (default: when a terminal).")
def connect(
    url: str, name: str | None, token: str | None, token_file: str | None, watch: bool, color: bool | None
) -> None:
    """Play or watch an online room in the terminal.

    URL is the room's link, http://HOST:PORT/r/CODE (or ws://HOST:PORT/ws/CODE).
    Without a token you take the free seat (the token to come back is
    printed), or watch if there is none. The token comes from --token-file,
    the C4LAB_TOKEN environment variable or --token (which other users of
    this machine can see in ps). Type a column letter or number; r resigns
    (after a confirmation), e exits. After a game in an online room, m
    offers a rematch in the same room, sides swapped (y accepts the other
    player's, n declines); spectators see the next game. A replay link
    (/games/CODE) watches. Exit status: 0 when the person leaves (or the
    game ends and no rematch can follow), 2 for a bad link or an unknown
    room, 1 for a connection lost for good (a server that went away is
    tried again for two minutes, or as long as it keeps an absent
    player's seat, with a line saying so).
    """
    from c4lab.ui.online import run_online

    if token_file is not None:
        token = _token_from_file(token_file)
    token_file = os.path.abspath(token_file) if token_file is not None else None  # said in the come-back line
    sys.exit(run_online(url, name=name, token=token or None, token_file=token_file, watch=watch, color=color))


def _fit_terminal(line: str) -> str:
    """``line`` as is, or at a terminal narrower than it, broken between
    words with its further lines indented, a word longer than a line (a
    position string) kept whole: a listing line of ``c4lab games`` (about
    100 characters) broke in the middle of a word on an 80-column terminal.
    Piped, every game stays one line, for grep."""
    import shutil  # lazy: as the command's other imports
    import textwrap  # lazy: as above

    if not sys.stdout.isatty():
        return line
    width = shutil.get_terminal_size().columns
    return textwrap.fill(line, max(20, width), subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False)


@main.command()
@click.option("--db", type=click.Path(dir_okay=False), callback=_in_existing_folder, default=None, help="Game database (SQLite file).")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per game.")
@click.option("--limit", type=_Int64(min=1), default=50, show_default=True, help="The most games listed.")
def games(db: str | None, as_json: bool, limit: int) -> None:
    """List the games stored by `c4lab play` (in the browser) or `c4lab
    serve`, newest first; the terminal game stores none. The file is only
    read (a read-only one too). A damaged game is named in an error line
    and the others are listed (exit status 2)."""
    from pathlib import Path

    from c4lab.server.storage import DEFAULT_DB, StorageError, read_games

    if db is None and not Path(DEFAULT_DB).exists():  # nothing stored yet: not an error
        click.echo(f"no games stored yet: games in the browser (`c4lab play`) and on `c4lab serve` are kept in "
                   f"{DEFAULT_DB}; the terminal game keeps none", err=True)
        return
    damaged: list[str] = []
    try:
        rows = read_games(db or DEFAULT_DB, limit + 1, damaged)  # a listing creates no file; one more: any left?
    except StorageError as exc:
        raise BadInput(str(exc)) from None
    for row in rows[:limit]:
        click.echo(json.dumps(row.listing()) if as_json else _fit_terminal(row.listing_line()))
    if len(rows) > limit:  # said on stderr: the listing itself stays one game a line
        newest = "the newest game" if limit == 1 else f"the newest {limit} games"
        click.echo(f"({newest} shown: --limit N shows more)", err=True)
    elif not rows and not damaged:
        click.echo(f"no games stored in {db or DEFAULT_DB} yet", err=True)
    if damaged:  # the others are listed; each damaged one is said, and the status says it too
        for line in damaged:
            click.echo(f"Error: {line}", err=True)
        sys.exit(2)


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
        raise click.UsageError(str(exc)) from None
    sys.exit(status)


@main.group()
def train() -> None:
    """Train learning agents by self-play: n-tuple networks (any board) or
    tabular Q-learning (small boards)."""


@train.command("qlearning")
@click.option("--board", **_home(*_QTRAIN, "board"), help="Start position to train from: 4x4, 5x4, 4x4/Xb2...")
@click.option("--episodes", type=_Int64(min=1), **_home(*_QTRAIN, "episodes"), help="Self-play games.")
@click.option("--alpha", "--learning-rate", "alpha", type=float, **_home(*_QTRAIN, "alpha"),
              help="Learning rate, in (0, 1].")
@click.option("--discount", type=float, **_home(*_QTRAIN, "discount"),
              help="Discount per ply (toward the draw reward), in [0, 1].")
@click.option("--epsilon", "epsilon_start", type=float, **_home(*_QTRAIN, "epsilon_start"),
              help="Exploration rate at the start (epsilon-greedy).")
@click.option("--epsilon-end", type=float, **_home(*_QTRAIN, "epsilon_end"),
              help="Exploration rate at the end.")
@click.option("--epsilon-decay", type=float, **_home(*_QTRAIN, "epsilon_decay"),
              help="Fraction of the episodes over which epsilon falls linearly to --epsilon-end.")
@click.option("--slip", type=float, **_home(*_QTRAIN, "slip"),
              help="Chance the opponent's value assumes a random move (0: plain max, minimax values).")
@click.option("--rewards", cls=_Default, home=lambda: _rewards_default(),  # defined below
              help="Rewards for a win, a draw and a loss.")
@click.option("--no-symmetry", is_flag=True, help="Do not share positions with their mirror images.")
@click.option("--eval-every", type=_Int64(min=0), default=None,
              help="Evaluate every N episodes (default: episodes/20; 0: only at the end).")
@click.option("--eval-games", type=_Int64(min=0), default=100, show_default=True,
              help="Games per evaluation against random and minimax:depth=2 (half as A, half as B).")
@click.option("--out", type=click.Path(dir_okay=False), callback=_writable_output, default=None, help="Table file (default: qlearning-BOARD.npz).")
@click.option("--curve", type=click.Path(dir_okay=False), callback=_writable_output, default=None,
              help="Learning curve: writes CURVE.csv and CURVE.png (default: the table's name + '-curve').")
@click.option("--seed", type=_INT64, **_home(*_QTRAIN, "seed"),
              help="The self-play games and the evaluations follow from it.")
def train_qlearning(board: str, episodes: int, alpha: float, discount: float, epsilon_start: float,
                    epsilon_end: float, epsilon_decay: float, slip: float, rewards: str, no_symmetry: bool,
                    eval_every: int | None, eval_games: int, out: str | None, curve: str | None, seed: int) -> None:
    """Learn a Q-table by self-play and save it for the agent qlearning:table=FILE.

    A table covers small boards only: 4x4 (the default 200,000 episodes,
    about a second, visit 92% of its positions; a million, 98.5%), 5x4 and
    5x5 partially; 7x6 is far beyond it.
    """
    from pathlib import Path

    from c4lab.learning import qlearning
    from c4lab.ui.status import stderr_console

    try:
        r_win, r_draw, r_loss = qlearning.parse_rewards(rewards)
    except ValueError as exc:
        raise bad_option(str(exc), "--rewards") from None
    try:  # TrainConfig holds the ranges of its settings: out of one, a usage error (status 2)
        config = qlearning.TrainConfig(
            board=board, episodes=episodes, alpha=alpha, discount=discount, epsilon_start=epsilon_start,
            epsilon_end=epsilon_end, epsilon_decay=epsilon_decay, reward_win=r_win, reward_draw=r_draw,
            reward_loss=r_loss, slip=slip, symmetry=not no_symmetry, seed=seed,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    table_path = Path(out) if out else qlearning.default_table_path(config.board)
    if table_path.exists():
        raise BadInput(f"{table_path} exists: choose another --out, or remove it first (a run never overwrites "
                       "a table)")
    prefix = curve or str(table_path.with_suffix("")) + "-curve"
    for suffix in (".csv", ".png"):  # the curve's files: another run's are never overwritten either
        if Path(prefix + suffix).exists():
            raise BadInput(f"{prefix}{suffix} exists: choose another --curve, or remove it first (a run never "
                           "overwrites a curve)")
    try:
        with qlearning.ctrl_c_stops() as interrupted:
            table, points, paths = qlearning.run_with_progress(
                config, table_path, prefix, eval_every=eval_every, eval_games=eval_games,
                console=stderr_console(), show_progress=sys.stderr.isatty(), interrupted=interrupted)
        if interrupted.is_set():
            from c4lab.ctrl_c import stops_ignored_from_now  # lazy: start-up time

            stops_ignored_from_now()  # saved; more presses (signals) on the way out change nothing
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    click.echo(qlearning.summary(table, points, paths))
    if interrupted.is_set():
        from c4lab.ctrl_c import stop_words  # lazy: start-up time

        click.echo(f"{stop_words(interrupted.status)}: the table ({table.info['episodes']:,} of {episodes:,} "
                   "episodes) and the curve are saved", err=True)
        sys.exit(interrupted.status)


@train.command("ntuple")
@click.option("--board", default=None, help="The board: 7x6 (default), 6x5/Xc2, 7x7/Xd4/Bc5...  "
              "(with --resume: the network's own board).")
@click.option("--bonus", is_flag=True, help="Add a random bonus cell (drawn from --seed) to the board.")
@click.option("--minutes", type=float, default=None, help="Train for this long (wall clock).")
@click.option("--games", type=_INT64, default=None,
              help="Train for this many self-play games (default: 200,000 unless --minutes).")
@click.option("--workers", type=_INT64, default=1, show_default=True,
              help="Self-play workers (one per core; with --executor ray, Ray tasks at once).")
@click.option("--executor", type=click.Choice(["threads", "processes", "ray"]), default="threads", show_default=True,
              help="threads: the workers share one table in this process; processes or ray: each plays rounds "
                   "on a copy, and the changes are merged.")
@click.option("--ray-address", default=None, callback=_ray_address,
              help="With --executor ray: the cluster's HOST:PORT, or auto (default: start a local Ray).")
@click.option("--seed", type=_INT64, default=0, show_default=True,
              help="Tuples, bonus cell and games follow from it (with --resume: only the tuples --add-tuples adds; "
                   "the games go on from where the network's last run left them).")
@click.option("--out", type=click.Path(dir_okay=False), callback=_writable_output, default=None,
              help="Network file (default: ntuple-BOARD.npz); never overwritten unless it is --resume's file.")
@click.option("--resume", type=click.Path(dir_okay=False), callback=_named_file, default=None,
              help="Continue training this network file (written back to --out, default: the same file); "
                   "given none of --alpha and --alpha-final (--epsilon and --epsilon-final) it goes on at its last "
                   "run's final step size (exploration), or, for a run stopped early, with the rest of its schedule.")
@click.option("--alpha", type=float, **_home(*_NTRAIN, "alpha"),
              help="Step size (divided by the number of tuple readings).")
@click.option("--alpha-final", type=float, **_home(*_NTRAIN, "alpha_final"),
              help="The step size falls geometrically to this over the run (default: a tenth of --alpha; "
                   "--alpha's value: constant).")
@click.option("--epsilon", type=float, **_home(*_NTRAIN, "epsilon"),
              help="Exploration: the chance of a random move.")
@click.option("--epsilon-final", type=float, **_home(*_NTRAIN, "epsilon_final"),
              help="The chance of a random move falls linearly to this over the run (--epsilon's value: "
                   "constant).")
@click.option("--opening", type=_INT64, **_home(*_NTRAIN, "opening"),
              help="Each game starts with 0 to this many random moves that nobody learns from (0: from the "
                   "empty board).")
@click.option("--lambda", "lam", type=float, **_home(*_NTRAIN, "lam"),
              help="TD(lambda): at the end of each game every afterstate moves toward its lambda-return "
                   "(0: TD(0), each toward the next one's value at once).")
@click.option("--average", type=float, **_home(*_NTRAIN, "average"),
              help="Keep the mean of the weights over this last share of the run (snapshots a hundredth of "
                   "the run apart; 0: the last weights).")
@click.option("--tuples", type=_Int64(1, 1000), default=None,  # train_ntuple.MAX_TUPLES
              help="Number of n-tuples (default: 70; 120 on boards with a bonus cell; 150 on the classic 7x6).")
@click.option("--add-tuples", type=_Int64(min=0), default=0,
              help="With --resume: grow the network by this many tuples (random walks drawn from --seed) whose "
                   "weights start at zero, so it plays as before and has more room to learn.")
@click.option("--length", type=_Int64(2, 8), default=8, show_default=True, help="Cells per tuple.")
@click.option("--probes", type=_Int64(min=0), default=None,
              help="Probe positions for the accuracy curve (default: 200 on boards of up to 42 playable cells, "
                   "100 up to 48, else 0; from the empty board up to 30 cells and on the classic board, "
                   "from ply 10 on the others).")
@click.option("--eval-every", type=_Finite(min=0, min_open=True), default=None,
              help="Seconds of training between two points of the curve (default: a twentieth of the run, for "
                   "--games at exactly every twentieth of the games, the training paused at each point; a point "
                   "by the clock waits for the workers' chunk of games, about half a second, so a run of seconds "
                   "has fewer).")
@click.option("--checkpoint", type=_Finite(min=0, min_open=True), default=5.0, show_default=True,
              help="Minutes between two checkpoints of the network file.")
@click.option("--curve", type=click.Path(dir_okay=False), callback=_writable_output, default=None,
              help="Learning curve: CURVE.csv, CURVE.png, CURVE.html (default: the network's name + '-curve').")
def train_ntuple(board: str | None, bonus: bool, minutes: float | None, games: int | None, workers: int,
                 executor: str, ray_address: str | None, seed: int, out: str | None, resume: str | None,
                 alpha: float | None, alpha_final: float | None, epsilon: float | None, epsilon_final: float | None,
                 opening: int | None, lam: float | None, average: float | None, tuples: int | None, add_tuples: int, length: int, probes: int | None, eval_every: float | None, checkpoint: float, curve: str | None) -> None:
    """Learn an n-tuple network by self-play (TD learning) for the agent
    ntuple:weights=FILE.

    Every point of the curve: the share of value-keeping moves of the
    greedy network on probe positions scored by the exact solver, and its
    score against random and normal (and hard at the end).  Ctrl-C saves
    the network and the curve, then stops.  A bad option or file: one line,
    exit status 2, and no file written.
    """
    from pathlib import Path

    from c4lab.learning import train_ntuple

    def _path(value: str | None) -> Path | None:  # the options' callbacks expanded a ~ already (_named_file)
        return Path(value) if value else None

    # Left to its default, a step size or exploration is the learner's (or, with --resume, where the network
    # stopped), and so are the openings, lambda and the averaged share (with --resume, its last run's); a
    # length given with --resume is refused (the network keeps its tuples).
    ctx = click.get_current_context()
    given: dict[str, Any] = {
        name: None if ctx.get_parameter_source(name) is click.core.ParameterSource.DEFAULT else value
        for name, value in (("alpha", alpha), ("alpha_final", alpha_final), ("epsilon", epsilon),
                            ("epsilon_final", epsilon_final), ("opening", opening), ("lam", lam),
                            ("average", average), ("length", length))}
    seed_given = ctx.get_parameter_source("seed") is not click.core.ParameterSource.DEFAULT
    try:
        train_ntuple.run(
            board=board, bonus=bonus, minutes=minutes, games=games, workers=workers, executor=executor,
            ray_address=ray_address, seed=seed, seed_given=seed_given, out=_path(out), resume=_path(resume),
            tuples=tuples, add_tuples=add_tuples, probes=probes, eval_every=eval_every,
            checkpoint_minutes=checkpoint, curve=_path(curve), **given,
        )
    except ValueError as exc:  # one line, whatever was wrong (an option, a file)
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)


@main.group()
def book() -> None:
    """The classic 7x6 opening book of the solver and the perfect player."""


@book.command("build")
@click.option("--depth", type=_Int64(0, 41), required=True, help="Last ply the book covers.")
@click.option("--out", type=click.Path(dir_okay=False), callback=_writable_output, default=None,
              help="Book file (default: $C4LAB_BOOK or ~/.c4lab/classic-book.npz); resumed if it exists.")
@click.option("--from", "start", default=None, help="Start the strategies at this classic position.")
@click.option("--timeout", type=_Finite(0, min_open=True), default=None,
              help="Give up on a position after this many seconds.")
@click.option("--budget", type=_Finite(0, min_open=True), default=None,
              help="Stop after this many seconds in all (resume later).")
def book_build(depth: int, out: str | None, start: str | None, timeout: float | None, budget: float | None) -> None:
    """Solve the book's positions and write them (saved after each one).

    For the side to move at the start (the empty board by default) and for
    the other side after each first move: the positions where that side is
    to move, their exact scores and one best reply, against every answer,
    down to --depth plies.
    """
    from pathlib import Path

    from c4lab.rules import Position
    from c4lab.solver import book as opening_book

    path = Path(out) if out else opening_book.book_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        root = Position.parse(start) if start else None
        made = opening_book.build(depth, path, start=root, timeout=timeout, budget=budget,
                       log=lambda line: click.echo(line, err=True))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    click.echo(f"{path}: {len(made)} positions, depth {made.depth}, {made.info.get('unsolved', 0)} left unsolved")


@book.command("info")
@click.argument("path", type=click.Path(dir_okay=False), required=False)
def book_info(path: str | None) -> None:
    """Say which books are loaded and where they come from: the classic
    12-ply database and the book file the agents use; with PATH, that book
    file only."""
    from pathlib import Path

    from c4lab.solver import book as opening_book

    try:
        for line in opening_book.describe_books(Path(path) if path else None):
            click.echo(line)
    except opening_book.BookError as exc:
        raise BadInput(str(exc)) from None


@main.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--seconds", type=_Finite(0, min_open=True), default=2.0, show_default=True,
              help="CPU seconds per measurement.")
@click.option("--c", "c_reference", is_flag=True, help="Also time the C reference playouts (needs gcc).")
@click.pass_context
def bench(ctx: click.Context, as_json: bool, seconds: float, c_reference: bool) -> None:
    """Measure the engine on this machine, in CPU time on one core: random
    playouts (playouts and moves a second), legal_moves + play through
    Position (operations a second), plain UCT (iterations a second), minimax
    (nodes a second, and the depth reached) and n-tuple self-play training
    (games a second), each on 7x6 and 12x12/Xf4.

    `c4lab bench solver` measures the exact solver on the classic sets,
    `c4lab bench accuracy` the agents' moves against the solver's scores.
    """
    if ctx.invoked_subcommand is not None:
        return
    from c4lab.bench import report, run_benchmarks

    try:
        results = run_benchmarks(seconds, c_reference=c_reference)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(results) if as_json else report(results))


@bench.command("solver")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object keyed by set name.")
@click.option("--limit", type=_Int64(min=1), default=None, help="Only the first N positions of each set.")
@click.option("--sets", default=None, help="Comma-separated set names (default: all but Test_L1_R3).")
@click.option("--weak", is_flag=True, help="Weak solve: compare the sign of the score only.")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Where the sets are (default: $C4LAB_BENCH_DIR, else ../shared/bench/classic).")
def bench_solver(as_json: bool, limit: int | None, sets: str | None, weak: bool, directory: str | None) -> None:
    """Solve the classic benchmark sets: per set, positions solved exactly,
    mean CPU time and mean nodes per position."""
    from pathlib import Path

    from rich.progress import Progress

    from c4lab.solver import bench as solver_bench
    from c4lab.ui.status import stderr_console

    names = _set_names(sets, solver_bench.DEFAULT_SETS, solver_bench.SETS)
    folder = Path(directory) if directory else solver_bench.default_directory()
    try:
        loaded = {name: solver_bench.read_set(folder / name, limit) for name in names}
    except solver_bench.BenchSetError as exc:
        raise BadInput(f"{exc} (give the folder with --dir or $C4LAB_BENCH_DIR)") from None
    results = {}
    with Progress(transient=True, disable=not sys.stderr.isatty(), console=stderr_console()) as progress:
        for name, positions in loaded.items():
            task = progress.add_task(name, total=len(positions))

            def step(good: bool, task: Any = task) -> None:
                progress.advance(task)

            results[name] = solver_bench.run_set(positions, weak, step)
    click.echo(json.dumps(results) if as_json else solver_bench.report(results, weak))


@bench.command("accuracy")
@click.argument("specs", nargs=-1, metavar="[SPEC...]")
@click.option("--positions", "count", type=_Int64(min=1), default=50, show_default=True,
              help="Positions per set.")
@click.option("--sets", default=None, help="Comma-separated sets (default: classic-begin,classic-middle,variants).")
@click.option("--seed", type=_INT64, default=1, show_default=True, help="Seed of the variant positions and OpenSpiel.")
@click.option("--no-openspiel", is_flag=True, help="Do not measure OpenSpiel's MCTS as a yardstick.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def bench_accuracy(
    specs: tuple[str, ...], count: int, sets: str | None, seed: int, no_openspiel: bool, as_json: bool
) -> None:
    """The share of moves that keep the position's value (win, draw or loss),
    judged by the exact solver's score of every move, for each SPEC (default:
    master:time=1).  As a yardstick, OpenSpiel's C++ MCTS plays the same
    positions, given the time a move of the first SPEC that sets one
    (time=T), where OpenSpiel is installed; elsewhere, or when no SPEC sets a
    time, a note says so."""
    from c4lab.arena import accuracy
    from c4lab.ui.status import StatusLine

    names = _set_names(sets, accuracy.SETS, accuracy.SETS)
    line = StatusLine()
    try:
        measured = accuracy.run_accuracy(
            list(specs) or ["master:time=1"], sets=names, count=count, seed=seed, openspiel=not no_openspiel,
            progress=line.show,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    finally:
        line.clear()
    click.echo(json.dumps(accuracy.to_dict(measured)) if as_json else accuracy.report(measured))


def _rewards_default() -> str:
    """``--rewards``' default: TrainConfig's rewards, written as the option takes them."""
    win, draw, loss = (_field(*_QTRAIN, name) for name in ("reward_win", "reward_draw", "reward_loss"))
    return ",".join(f"{value:g}" for value in (win, draw, loss))


def _set_names(text: str | None, default: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, ...]:
    """The benchmark sets a ``--sets`` option names (comma-separated)."""
    names = default if text is None else tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise click.UsageError(f"unknown set {', '.join(unknown) or '(none)'}; the sets: {', '.join(known)}")
    return names


@main.command()
@click.argument("specs", nargs=-1, required=True, metavar="SPEC SPEC [SPEC...]")
@click.option("--games", type=_INT64, default=10, show_default=True, help="Games per pairing (even: two per start; at most 1,000,000 in a run).")
@click.option("--gauntlet", is_flag=True, help="The first agent against each of the others (default: round robin).")
@click.option("--board", **_home(*_ARENA, "board"),
              help="classic (7x6), random (a new enhanced board per pair) or a position string (9x8, 9x8/Xd3).")
@click.option("--bonus", is_flag=True, help="Add a random bonus cell to a board that has none (a new one per pair).")
@click.option("--opening-moves", "plies", type=_Int64(min=0), default=2, show_default=True,
              help="Random opening moves played from each start (the same for both games of a pair).")
@click.option("--openings", "openings_file", type=click.Path(dir_okay=False), default=None,
              help="A file of start positions (one position string per line), used in turn.")
@click.option("--seed", type=_INT64, **_home(*_ARENA, "seed"), help="Boards and openings follow from it.")
@click.option("--limit", type=_Finite(), **_home(*_ARENA, "limit"), help="Seconds a move may take: a slower one (beyond --margin) loses its game; an engine "
                   "program is stopped then, an agent of this process judged when its move returns.")
@click.option("--margin", type=_Finite(), **_home(*_ARENA, "margin"),
              help="A move over limit + margin loses the game.")
@click.option("--jobs", type=_Int64(min=1), default=None, help="Parallel games (default: all cores).")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where the games run: local processes (--jobs) or a Ray cluster (the ray extra).")
@click.option("--ray-address", default=None, callback=_ray_address,
              help="A Ray cluster to join (default: start a local one).")
@click.option("--sprt", default=None, help="Stop a two-agent match as soon as a sequential probability ratio test "
              "decides between 'elo0 better' and 'elo1 better': elo0=0,elo1=20,alpha=0.05,beta=0.05 "
              "(alpha and beta 0.05 where not given).")
@click.option("--out", type=click.Path(dir_okay=False), callback=_writable_output, default="arena.jsonl", show_default=True,
              help="Results file (JSON lines); an unfinished run with the same settings is resumed.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def arena(
    specs: tuple[str, ...], games: int, gauntlet: bool, board: str, bonus: bool, plies: int,
    openings_file: str | None, seed: int, limit: float, margin: float, jobs: int | None, executor: str,
    ray_address: str | None, sprt: str | None, out: str, as_json: bool,
) -> None:
    """Play agents against each other in pairs of games (same start, sides
    swapped) and rank them: score, W/D/L, Elo with its 95% interval,
    likelihood of superiority, p-value of "equal".

    Each SPEC is an agent spec, NAME[:key=value,...] (master:time=0.5,
    uct:iterations=5000); `c4lab agents` lists the names and parameters."""
    import time
    from pathlib import Path

    from c4lab.arena import report as arena_report
    from c4lab.arena.executors import make_executor
    from c4lab.arena.results import ResultsError, read_results
    from c4lab.arena.runner import run_arena
    from c4lab.arena.schedule import ArenaConfig, ArenaError, read_openings
    from c4lab.arena.stats import SPRT
    from c4lab.ui.status import games_bar

    ctx = click.get_current_context()
    given = [f"--{name.replace('_', '-')}" for name in ("board", "bonus", "plies")
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if ray_address and executor != "ray":  # it would be ignored: the games would run here without a word
        raise click.UsageError(f"--ray-address {ray_address} is for --executor ray (the games run here otherwise)")
    if openings_file and given:  # the file's positions are the starts: a board or random moves would be ignored
        raise click.UsageError(f"--openings gives the start positions; {' and '.join(given)} cannot be given with it"
                               .replace("--plies", "--opening-moves"))
    try:
        openings = read_openings(openings_file) if openings_file else ()
        config = ArenaConfig(
            specs, games=games, gauntlet=gauntlet, board=board, bonus=bonus, plies=plies,
            openings=openings, seed=seed, limit=limit, margin=margin,
        )
        test = SPRT.parse(sprt) if sprt is not None else None  # `--sprt ""` (an unset variable) is no test: refused
        runner = make_executor(executor, jobs, ray_address)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    from c4lab.cores import usable_cores

    cores = usable_cores()
    if executor == "local" and jobs is not None and jobs > cores:  # more games at once than cores
        click.echo(f"note: --jobs {jobs} on {cores} core{'s' if cores > 1 else ''}: an agent that thinks on a clock "
                   f"gets less than a core and plays weaker (and loses on time more often) than at --jobs {cores}",
                   err=True)
    from c4lab.arena.executors import WorkerLost
    from c4lab.ctrl_c import exit_status, stop_words, stops_ignored_from_now, stops_interrupt

    began = time.perf_counter()
    # SIGTERM (a job scheduler, kill) and SIGHUP (a terminal closed under the run) stop it as Ctrl-C does: the
    # workers stopped, the games kept; by default SIGTERM would end this process alone and leave its workers
    # computing, orphans.
    try:
        with stops_interrupt(), games_bar(config.total_games) as progress:
            outcome = run_arena(config, out, executor=runner, sprt=test, progress=progress,
                                on_note=lambda note: click.echo(f"note: {note}", err=True))
    except (ArenaError, ResultsError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    except WorkerLost as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt as stop:
        stops_ignored_from_now()  # the count below reads the file: a second press changes nothing
        saved = len(read_results(out).whole_pairs()) if Path(out).exists() else 0
        status = exit_status(stop)
        click.echo(f"{stop_words(status)}: {saved} games saved in {out}; the same command resumes the run", err=True)
        sys.exit(status)
    summary = arena_report.summarise(outcome.config, outcome.games)
    from c4lab.arena.runner import sprt_line, sprt_state

    state = sprt_state(test, outcome.config, list(outcome.games)) if test else None  # decided or not: its LLR
    if as_json:
        data = summary.to_dict()
        data.update(played=outcome.played, stopped=outcome.stopped, sprt=state,
                    seconds=round(time.perf_counter() - began, 2))
        click.echo(json.dumps(data))
        return
    click.echo(arena_report.render_text(summary))
    if test and state:
        click.echo(sprt_line(test, state))
    click.echo(f"{outcome.played} games played now, {len(outcome.games)} in {out}")


@main.command("report")
@click.argument("results", type=click.Path(dir_okay=False))
@click.option("--out-dir", type=click.Path(file_okay=False), default=None,
              help="Where to write the plots and report.html (default: RESULTS without .jsonl, plus -report).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
def report_command(results: str, out_dir: str | None, as_json: bool) -> None:
    """Print an arena run's tables again and write its plots (cross table,
    Elo with error bars, score by board size) and a self-contained HTML report.

    RESULTS is the results file of `c4lab arena` (its --out, arena.jsonl by
    default)."""
    from pathlib import Path

    from c4lab.arena import report as arena_report
    from c4lab.arena.results import ResultsError, read_results

    try:
        saved = read_results(results)
    except ResultsError as exc:
        raise BadInput(str(exc)) from None
    games = saved.whole_pairs()  # what the run keeps: a lone game of a pair would give one side the first move
    if not games:  # an arena stopped before its first game ended: no table, no plot to draw
        raise BadInput(f"{results}: no finished game yet, nothing to report")
    if saved.cut_line:  # a run stopped while it wrote: the arena plays that pair again when resumed
        click.echo(f"note: the last line of {results} is cut short (a run stopped while writing it): left out",
                   err=True)
    if len(games) < len(saved.games):
        lone = len(saved.games) - len(games)
        games_of = f"{lone} game{'s' if lone > 1 else ''} of {results}"
        click.echo(f"note: {games_of} without the other game of {'their' if lone > 1 else 'its'} pair left out "
                   "(the arena plays such a pair again when resumed)", err=True)
    summary = arena_report.summarise(saved.config, games)
    stopped = state = line = None
    if saved.sprt:  # the run's sequential test: say where it stopped the run, as the arena said then, or where it stands
        from c4lab.arena.runner import sprt_line, sprt_state
        from c4lab.arena.stats import SPRT

        test = SPRT.parse(saved.sprt)
        state = sprt_state(test, saved.config, list(games))
        line = sprt_line(test, state)
        stopped = line if state["accepted"] else None
    path = Path(results)
    folder = Path(out_dir) if out_dir else path.with_name(path.stem + "-report")
    if not folder.parent.is_dir():  # the report's own folder is made, not a path of folders to it
        raise BadInput(f"--out-dir {out_dir}: {str(folder.parent)!r} is not a folder")
    try:
        files = arena_report.write_report(summary, folder, stopped, sprt=line)
    except OSError as exc:
        raise BadInput(f"cannot write the report in {str(folder)!r}: {exc.strerror or exc}") from None
    if as_json:
        click.echo(json.dumps({**summary.to_dict(), "stopped": stopped, "sprt": state, "files": [str(f) for f in files]}))
        return
    click.echo(arena_report.render_text(summary))
    if line:
        click.echo(line)
    for f in files:
        click.echo(f"wrote {f}")


if __name__ == "__main__":  # pragma: no cover
    main()
