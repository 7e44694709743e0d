"""``c4lab bench`` (speed), ``bench solver`` (the exact solver on the
benchmark positions) and ``bench accuracy`` (agents' value-keeping moves)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from c4lab.cli.group import main
from c4lab.cli.options import INT64, BadInput, Finite, Int64, named_folder

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


def _set_names(text: str | None, default: tuple[str, ...], known: tuple[str, ...]) -> tuple[str, ...]:
    """The benchmark sets a ``--sets`` option names (comma-separated)."""
    names = default if text is None else tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise click.UsageError(f"unknown set {', '.join(unknown) or '(none)'}; the sets: {', '.join(known)}")
    return names


@main.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--seconds", type=Finite(0, min_open=True), default=2.0, show_default=True,
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

    Every bench runs the kernels compiled for this machine's CPU, as after
    `c4lab prepare`, not the shipped ones (C4LAB_PRECOMPILED=1 measures
    those): a first run compiles.
    """
    from c4lab import precompiled  # lazy: imports numba, which `c4lab --help` never loads

    precompiled.measure_this_cpu()
    if ctx.invoked_subcommand is not None:
        return
    from c4lab.bench import closing_lines, run_benchmarks, section_lines

    def measured(name: str, by_board: dict[str, Any]) -> None:  # each table as soon as it is measured
        click.echo("\n".join(section_lines(name, by_board)))

    try:
        results = run_benchmarks(seconds, c_reference=c_reference, measured=None if as_json else measured)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(results) if as_json else "\n".join(closing_lines(results)))


@bench.command("solver")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object keyed by set name.")
@click.option("--limit", type=Int64(min=1), default=None, help="Only the first N positions of each set.")
@click.option("--sets", default=None, help="Comma-separated set names (default: all but Test_L1_R3; with --dir, any "
                                           "file of that folder too).")
@click.option("--weak", is_flag=True, help="Weak solve: compare the sign of the score only.")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None, callback=named_folder,
              help="Where the sets are (default: $C4LAB_BENCH_DIR, else ../shared/bench/classic).")
@click.option("--timeout", type=Finite(0, min_open=True), default=None,
              help="Give up on a position after this many seconds of search (counted as a timeout, not as a wrong "
                   "score; default: none).")
@click.option("--each", is_flag=True,
              help="Also print every position's answer as it comes: FILE:LINE, the position, the solver's score and "
                   "the file's, nodes, CPU time (with --json: an \"answers\" list in each set's object).")
def bench_solver(as_json: bool, limit: int | None, sets: str | None, weak: bool, directory: str | None,
                 timeout: float | None, each: bool) -> None:
    """Solve the classic benchmark sets: per set, positions solved exactly,
    mean CPU time and mean nodes per position.  Exit status 1 where the
    solver's score of a position is not the file's (each named under the
    table), else 3 where a position was given up at --timeout."""
    from pathlib import Path

    from rich.progress import Progress

    from c4lab.solver import bench as solver_bench
    from c4lab.ui.status import stderr_console

    folder = Path(directory) if directory else solver_bench.default_directory()
    # in a folder of one's own (--dir), a set of any name: its files
    own = tuple(sorted(p.name for p in folder.iterdir() if p.is_file())) if directory and folder.is_dir() else ()
    names = _set_names(sets, solver_bench.DEFAULT_SETS, solver_bench.SETS + tuple(n for n in own
                                                                                  if n not in solver_bench.SETS))
    try:
        loaded = {name: solver_bench.read_set(folder / name, limit) for name in names}
    except solver_bench.BenchSetError as exc:  # the folder hinted at only where the file is not there
        raise BadInput(f"{exc} (give the folder with --dir or $C4LAB_BENCH_DIR)" if exc.missing else str(exc)) from None
    results = {}
    with Progress(transient=True, disable=not sys.stderr.isatty(), console=stderr_console()) as progress:
        for name, positions in loaded.items():
            task = progress.add_task(name, total=len(positions))

            def step(good: bool, task: Any = task) -> None:
                progress.advance(task)

            answers: list[dict[str, Any]] = []

            def told(answer: dict[str, Any], where: str = str(folder / name), answers: list = answers) -> None:
                if as_json:
                    answers.append(answer)
                else:
                    # sys.stdout as it is now: on a terminal, rich's proxy prints above the progress bar
                    click.echo(solver_bench.answer_line(where, answer), file=sys.stdout)

            results[name] = solver_bench.run_set(positions, weak, step, timeout, told if each else None)
            if each and as_json:
                results[name]["answers"] = answers
    click.echo(json.dumps(results) if as_json else solver_bench.report(results, weak, folder, timeout))
    gave_up = sum(r["timed_out"] for r in results.values())
    differ = sum(r["positions"] - r["correct"] for r in results.values()) - gave_up
    if differ:  # a script (or CI) running the sets learns it from the status, as from a test runner's
        click.echo(f"the solver's score is not the file's on {differ} position{'s' if differ != 1 else ''}", err=True)
        sys.exit(1)
    if gave_up:
        click.echo(f"{gave_up} position{'s were' if gave_up != 1 else ' was'} not solved within --timeout {timeout:g} s",
                   err=True)
        sys.exit(3)


@bench.command("accuracy")
@click.argument("specs", nargs=-1, metavar="[SPEC...]")
@click.option("--positions", "count", type=Int64(min=1), default=50, show_default=True,
              help="Positions per set.")
@click.option("--sets", default=None, help="Comma-separated sets (default: classic-begin,classic-middle,variants).")
@click.option("--seed", type=INT64, default=1, show_default=True, help="Seed of the variant positions and OpenSpiel.")
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
    import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...': an engine program is measured as any agent)
    from c4lab.agents.base import AgentError
    from c4lab.arena import accuracy
    from c4lab.solver.bench import BenchSetError
    from c4lab.ui.status import StatusLine

    names = _set_names(sets, accuracy.SETS, accuracy.SETS)
    line = StatusLine()
    try:
        measured = accuracy.run_accuracy(
            list(specs) or ["master:time=1"], sets=names, count=count, seed=seed, openspiel=not no_openspiel,
            progress=line.show,
        )
    except BenchSetError as exc:  # the classic sets' folder, where the file is not there
        raise BadInput(f"{exc} (give the folder with $C4LAB_BENCH_DIR)" if exc.missing else str(exc)) from None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    except AgentError as exc:  # an engine program that would not start, exited or broke the protocol: as move says it
        raise BadInput(str(exc)) from None
    finally:
        line.clear()
    click.echo(json.dumps(accuracy.to_dict(measured)) if as_json else accuracy.report(measured))
