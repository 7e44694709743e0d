"""``c4lab arena`` and ``c4lab report``: experiments between agents, and
the report of a results file."""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING

import click

from c4lab.cli.group import main
from c4lab.cli.options import (
    ARENA,
    INT64,
    BadInput,
    Finite,
    Int64,
    bad_option,
    default_from,
    given,
    named_file,
    named_folder,
    ray_address,
    writable_output,
)

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.arena.schedule import SettingError

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.

#: The option of each ArenaConfig field, as an error names it (``SettingError.worded``).
OPTION_OF = {"games": "--games", "board": "--board", "bonus": "--bonus", "plies": "--opening-moves",
             "openings": "--openings", "seed": "--seed", "limit": "--limit", "margin": "--margin",
             "gauntlet": "--gauntlet"}


def terminal_width() -> int | None:
    """The columns of stdout where it is a terminal (the report's tables fit
    them), else None (a file's or a pipe's tables as wide as they need)."""
    import shutil

    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


def setting_refused(exc: SettingError) -> click.BadParameter:
    """An ``ArenaConfig`` setting refused, in the options' words: the option
    at fault quoted as click quotes one (``Invalid value for '--games':
    --games must be a positive even number ...``), the settings the message
    speaks of named as options (``SettingError.worded``)."""
    return bad_option(exc.worded(OPTION_OF), OPTION_OF.get(exc.field))


@main.command()
@click.argument("specs", nargs=-1, required=True, metavar="SPEC SPEC [SPEC...]")
@click.option("--games", type=INT64, default=10, show_default=True, help="Games per pairing (even: two per start; at most 1,000,000 in a run).")
@click.option("--gauntlet", is_flag=True, help="The first agent against each of the others (default: round robin).")
@click.option("--board", **default_from(*ARENA, "board"), callback=given("board"),
              help="classic (7x6), random (a new enhanced board per pair) or a position string (9x8, 9x8/Xd3).")
@click.option("--bonus", is_flag=True, help="Add a random bonus cell to a board that has none (a new one per pair).")
@click.option("--opening-moves", "plies", type=Int64(min=0), **default_from(*ARENA, "plies"),
              help="Random opening moves played from each start (the same for both games of a pair).")
@click.option("--openings", "openings_file", type=click.Path(dir_okay=False), default=None, callback=named_file,
              help="A file of start positions (one position string per line), used in turn.")
@click.option("--seed", type=INT64, **default_from(*ARENA, "seed"), help="Boards and openings follow from it.")
@click.option("--limit", type=Finite(), **default_from(*ARENA, "limit"), help="Seconds a move may take: a slower one (beyond --margin) loses its game; an engine "
                   "program is stopped then, an agent of this process judged when its move returns.")
@click.option("--margin", type=Finite(), **default_from(*ARENA, "margin"),
              help="A move over limit + margin loses the game.")
@click.option("--jobs", "--workers", "jobs", type=Int64(min=1), default=None,
              help="Parallel games (default: all cores); --workers, as `c4lab train` calls it, is the same.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="Where the games run: local processes (--jobs) or a Ray cluster (the ray extra).")
@click.option("--ray-address", default=None, callback=ray_address,
              help="A Ray cluster to join (default: start a local one).")
@click.option("--sprt", default=None, help="Stop a two-agent match as soon as a sequential probability ratio test "
              "decides between 'elo0 better' and 'elo1 better': elo0=0,elo1=20,alpha=0.05,beta=0.05 "
              "(alpha and beta 0.05 where not given; logistic Elo, as cutechess reads them, not fishtest's "
              "default normalized Elo); --games is the most it plays.")
@click.option("--out", type=click.Path(dir_okay=False), callback=writable_output, default="arena.jsonl", show_default=True,
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
    from c4lab.arena.runner import run_arena, sprt_refusal
    from c4lab.arena.schedule import AgentRefused, ArenaConfig, ArenaError, SettingError, read_openings
    from c4lab.arena.sprt import SPRT
    from c4lab.ui.status import games_bar

    ctx = click.get_current_context()
    set_here = [f"--{name.replace('_', '-')}" for name in ("board", "bonus", "plies")
             if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT]
    if ray_address and executor != "ray":  # it would be ignored: the games would run here without a word
        raise click.UsageError(f"--ray-address {ray_address} is for --executor ray (the games run here otherwise)")
    if openings_file and set_here:  # the file's positions are the starts: a board or random moves would be ignored
        raise bad_option(f"the file gives the start positions; {' and '.join(set_here)} cannot be given with it"
                         .replace("--plies", "--opening-moves"), "--openings")
    # each refusal names the option at fault in click's words (Invalid value for '--games': ...), as the
    # other commands do; it was "Error: --games ..." here, and only --bonus read so
    try:
        openings = read_openings(openings_file) if openings_file else ()
    except ArenaError as exc:  # the file's name and line, and what is wrong there
        raise bad_option(str(exc), "--openings") from None
    try:
        config = ArenaConfig(
            specs, games=games, gauntlet=gauntlet, board=board, bonus=bonus, plies=plies,
            openings=openings, seed=seed, limit=limit, margin=margin,
        )
    except SettingError as exc:
        raise setting_refused(exc) from None
    except ArenaError as exc:  # the SPECs (fewer than two, one given twice): no option at fault
        raise click.UsageError(str(exc)) from None
    try:
        test = SPRT.parse(sprt) if sprt is not None else None  # `--sprt ""` (an unset variable) is no test: refused
    except ValueError as exc:
        raise bad_option(str(exc), "--sprt") from None
    if test is not None and (refusal := sprt_refusal(config)):  # three agents: "Invalid value for '--sprt': ..."
        raise bad_option(refusal, "--sprt")
    new_run_notes = []
    if test is not None and ctx.get_parameter_source("games") is click.core.ParameterSource.DEFAULT:
        # a test stopped by the default --games 10 ended "no decision after 5 pairs" without a word before; said
        # with the run's notes, once the results file is taken (not before a refusal of it, nor on resuming)
        new_run_notes.append(f"--sprt plays at most --games {games} ({games // 2} pairs), the default: a test "
                             "seldom decides so soon (between Elo 20 apart it takes hundreds of pairs); give "
                             "--games, the most it may play (it stops at its decision)")
    try:
        runner = make_executor(executor, jobs, ray_address)
    except ValueError as exc:  # Ray missing, or no cluster at --ray-address: the line names the option
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
        # an agent's stray print() goes to stderr: stdout holds the tables, or --json's one object
        with stops_interrupt(), games_bar(config.total_games) as progress, contextlib.redirect_stdout(sys.stderr):
            outcome = run_arena(config, out, executor=runner, sprt=test, progress=progress,
                                on_note=lambda note: progress.say(f"note: {note}"), names=OPTION_OF,
                                new_run_notes=new_run_notes)
    except SettingError as exc:  # found when the starts are drawn: too many --opening-moves
        raise setting_refused(exc) from None
    except AgentRefused as exc:  # named as `c4lab move` names its --agent
        raise bad_option(str(exc), "SPEC") from None
    except (ArenaError, ResultsError, ValueError) as exc:
        raise BadInput(str(exc)) from None
    except WorkerLost as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(1)
    except KeyboardInterrupt as stop:
        stops_ignored_from_now()  # the count below reads the file: a second press changes nothing
        try:  # a run stopped before its header was written leaves an empty file: nothing saved, no traceback
            saved = len(read_results(out).whole_pairs()) if Path(out).exists() else 0
        except ResultsError:
            saved = 0
        status = exit_status(stop)
        if Path(out).exists():
            click.echo(f"{stop_words(status)}: {saved} games saved in {out}; the same command resumes the run",
                       err=True)
        else:  # stopped before the file was made: there is no "saved in" it
            click.echo(f"{stop_words(status)} before any game: {out} was not written; the same command starts "
                       "the run", err=True)
        sys.exit(status)
    summary = arena_report.summarise(outcome.config, outcome.games, outcome.stand_ins)
    from c4lab.arena.runner import sprt_line, sprt_state

    state = sprt_state(test, outcome.config, list(outcome.games)) if test else None  # decided or not: its LLR
    if as_json:
        data = summary.to_dict()
        data.update(played=outcome.played, stopped=outcome.stopped, sprt=state,
                    seconds=round(time.perf_counter() - began, 2))
        click.echo(json.dumps(data))
        return
    click.echo(arena_report.render_text(summary, width=terminal_width()))
    if test and state:
        click.echo(sprt_line(test, state))
    click.echo(f"{outcome.played} games played now, {len(outcome.games)} in {out}")


@main.command("report")
@click.argument("results", type=click.Path(dir_okay=False), callback=named_file)
@click.option("--out-dir", type=click.Path(file_okay=False), default=None, callback=named_folder,
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
    summary = arena_report.summarise(saved.config, games, saved.stand_ins)
    stopped = state = line = None
    if saved.sprt:  # the run's sequential test: say where it stopped the run, as the arena said then, or where it stands
        from c4lab.arena.runner import sprt_line, sprt_state
        from c4lab.arena.sprt import SPRT, UntestableHypothesis

        try:
            test = SPRT.parse(saved.sprt)
        except UntestableHypothesis as exc:  # an earlier c4lab ran it; `c4lab arena` refuses it now
            line = f"SPRT {saved.sprt}: not evaluated, {str(exc).removeprefix('SPRT: ')}"
            if as_json:  # the JSON's "sprt" is null: the line says why (the text and the page print it)
                click.echo(f"note: {line}", err=True)
        else:
            state = sprt_state(test, saved.config, list(games))
            line = sprt_line(test, state)
            stopped = line if state["accepted"] else None
    if stopped is None and len(games) < saved.config.total_games:  # stopped by a signal, or still running
        click.echo(f"note: the run is unfinished: {len(games)} of its {saved.config.total_games} games played (the "
                   "same c4lab arena command resumes it)", err=True)
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
    click.echo(arena_report.render_text(summary, width=terminal_width()))
    if line:
        click.echo(line)
    for f in files:
        click.echo(f"wrote {f}")


if __name__ == "__main__":  # pragma: no cover
    main()
