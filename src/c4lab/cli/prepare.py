"""``c4lab prepare``: compile the engine for every agent and kind of board
now, once per install, so that no first move waits for the compiler."""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING

import click

from c4lab.cli.group import main
from c4lab.cli.options import Int64, bad_option
from c4lab.ctrl_c import exit_status, stop_words, stops_ignored_from_now, stops_interrupt

if TYPE_CHECKING:
    from c4lab.agents.prepare import Done

#: Seconds between the progress lines of a prepare whose stderr is not a
#: terminal (a log); a run that ends sooner writes none.
LOG_EVERY = 10.0

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


@main.command()
@click.option("--agent", "agents", multiple=True, metavar="NAME",
              help="Only this agent (repeat for more; default: every agent).")
@click.option("--jobs", type=Int64(min=1), default=None,
              help="Worker processes (default: one per usable core, at most 4; 1 compiles in this process).")
def prepare(agents: tuple[str, ...], jobs: int | None) -> None:
    """Compile every agent's kernels (with its default options) on every
    kind of board now, once, for this machine's processor: every later
    move on any board loads them from numba's cache.  Where the kernels
    shipped compiled for a baseline processor are used (x86-64 Linux,
    Python 3.11), this makes them 10-30 % faster; elsewhere a
    first move no longer waits for the compiler (a first `master` move in
    about 2 s instead of 5 to 7 s).  An agent that needs a file of its own
    (`qlearning`'s table) is left out, and says so.

    Boards differ, for the compiled code, only by their kind: one 64-bit
    word or three (width x (height + 1) at most 64 or more), with a bonus
    cell or without (4 kinds, one board each).
    A second run loads what is on disk and says so; after an upgrade of
    c4lab or numba it compiles again what changed.  `c4lab play` and
    `c4lab serve` run the same in the background, at a low priority, the
    first time they start after an install or an upgrade
    (C4LAB_PREPARE_IN_BACKGROUND=0 turns that off).
    """
    from numba.core import config  # lazy: numba only for the commands that run kernels

    if getattr(config, "DISABLE_JIT", False):
        click.echo("numba's compiler is off (NUMBA_DISABLE_JIT): nothing to prepare")
        return
    from c4lab.agents import prepare as ahead  # lazy: start-up time
    from c4lab.agents.base import agent_infos, make_agent

    known = ahead.agent_names()
    unknown = [name for name in agents if name not in known]
    if unknown:
        info = {i.name: i for i in agent_infos()}.get(unknown[0])
        if info is None:
            raise bad_option(f"no agent '{unknown[0]}' (--agent takes an agent's name, without options); "
                             f"the agents: {', '.join(known)}", "--agent")
        raise bad_option(f"agent '{unknown[0]}' has nothing to prepare here"
                         f"{': ' + info.unavailable if info.unavailable else ' (a person at the keyboard)'}", "--agent")
    for name in dict.fromkeys(agents):  # named: one that cannot be made with its defaults is refused, not left out
        try:
            make_agent(name).close()
        except Exception as exc:  # noqa: BLE001  (any agent's refusal: said)
            raise bad_option(f"agent '{name}' cannot be prepared with its default options: {exc}", "--agent") from None
    names = list(dict.fromkeys(agents)) or known
    specs = ahead.with_variants(names)
    tasks = ahead.plan(specs)
    workers = ahead.worker_count(jobs, len(tasks))
    options = specs[len(names):]
    also = f" (and {len(options)} of their options: {', '.join(options)})" if options else ""
    click.echo(f"preparing the engine: {len(names)} agent{'s' if len(names) != 1 else ''}{also} on "
               f"{len(ahead.KIND_BOARDS)} kinds of board ({', '.join(ahead.KIND_BOARDS)}), "
               f"{workers} process{'es' if workers != 1 else ''}...", err=True)
    began = time.monotonic()
    done: list[Done] = []
    try:  # Ctrl-C, SIGTERM or SIGHUP stop the workers too, even in a background job that inherited SIGINT ignored
        with stops_interrupt():
            _with_progress(tasks, workers, done)
    except KeyboardInterrupt as stop:
        stops_ignored_from_now()  # on the way out: more presses change nothing
        status = exit_status(stop)
        click.echo(f"{stop_words(status)}: {len(done)} of {len(tasks)} warm-ups done; what they compiled is "
                   "kept, and the same command compiles the rest", err=True)
        sys.exit(status)
    except ahead.PrepareError as exc:
        click.echo(f"Error: {exc}; what was compiled is kept, and the same command compiles the rest", err=True)
        sys.exit(1)
    if not agents:
        ahead.mark_prepared()  # ``play`` and ``serve`` then leave it be
    compiled = len(frozenset().union(*(one.compiled for one in done)))
    seconds = time.monotonic() - began
    left_out = {one.spec: one.left_out for one in done if one.left_out is not None}
    for spec, why in left_out.items():
        click.echo(f"left out: {spec} ({why})", err=True)
    kept = ahead.cache_location()
    if compiled:
        click.echo(f"ready: {compiled} kernel{'s' if compiled != 1 else ''} compiled in {seconds:.1f} s, "
                   f"kept in numba's cache ({kept})")
    else:
        click.echo(f"ready: nothing to compile, every kernel was in numba's cache already ({kept}; {seconds:.1f} s)")


def _with_progress(tasks: list[tuple[str, str]], workers: int, finished: list[Done]) -> None:
    """``agents.prepare.prepare`` with a progress bar on a terminal (nothing
    more elsewhere: the first and last lines say what runs and what it
    did); each warm-up is added to ``finished`` as it ends."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from c4lab.agents.prepare import prepare as prepare_all  # lazy: start-up time
    from c4lab.ui.status import stderr_console  # lazy: rich only for the commands that draw

    columns = (TextColumn("[bold]compiling"), BarColumn(), MofNCompleteColumn(),
               TextColumn("{task.fields[last]}", markup=False), TimeElapsedColumn())
    terminal = sys.stderr.isatty()
    began = time.monotonic()
    over = threading.Event()

    def heartbeat() -> None:  # a log's lines: a minute of compiling must not read as a hang
        while not over.wait(LOG_EVERY):
            click.echo(f"compiling: {len(finished)} of {len(tasks)} warm-ups done ({time.monotonic() - began:.0f} s)",
                       err=True)

    if not terminal:
        threading.Thread(target=heartbeat, name="c4lab-prepare-log", daemon=True).start()
    try:
        with Progress(*columns, console=stderr_console(), disable=not terminal, transient=True) as bar:
            task = bar.add_task("prepare", total=len(tasks), last="")

            def step(one: Done) -> None:
                finished.append(one)
                bar.update(task, advance=1, last=f"{one.spec} on {one.board} done")

            prepare_all(tasks, workers, step)
    finally:
        over.set()
