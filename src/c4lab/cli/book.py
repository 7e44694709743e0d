"""``c4lab book build`` and ``c4lab book info``: the opening book."""

from __future__ import annotations

import click

from c4lab.cli.group import main
from c4lab.cli.options import BadInput, Finite, Int64, bad_option, given, named_file, writable_output

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


@main.group()
def book() -> None:
    """The classic 7x6 opening book of the solver and the perfect player."""


@book.command("build")
@click.option("--depth", type=Int64(0, 41), required=True, help="Last ply the book covers.")
@click.option("--out", type=click.Path(dir_okay=False), callback=writable_output, default=None,
              help="Book file (default: $C4LAB_BOOK or ~/.c4lab/classic-book.npz); resumed if it exists.")
@click.option("--from", "start", default=None, callback=given("position"), help="Start the strategies at this classic position.")
@click.option("--timeout", type=Finite(0, min_open=True), default=None,
              help="Give up on a position after this many seconds (default: none, search to the end).")
@click.option("--budget", type=Finite(0, min_open=True), default=None,
              help="Stop after this many seconds in all (resume later; default: none, until the book is done).")
def book_build(depth: int, out: str | None, start: str | None, timeout: float | None, budget: float | None) -> None:
    """Solve the book's positions and write them (saved every 30 s, at the
    end, and when stopped).

    For the side to move at the start (the empty board by default) and for
    the other side after each first move: the positions where that side is
    to move, their exact scores and one best reply, against every answer,
    down to --depth plies.  Ctrl-C, a kill (SIGTERM) or a closed terminal
    (SIGHUP) stops it with what was solved saved (status 130, 143, 129);
    the same command resumes.
    """
    import sys
    from pathlib import Path

    from c4lab.ctrl_c import exit_status, stop_words, stops_ignored_from_now, stops_interrupt
    from c4lab.rules import Variant
    from c4lab.rules.setup import check_start
    from c4lab.solver import book as opening_book

    try:  # a start that does not parse, whose game is over or is no classic one: the option named, nothing made
        root = check_start(start, False) if start else None
        if root is not None:
            opening_book.check_start(root, depth)
    except ValueError as exc:
        raise bad_option(str(exc), "--from") from None
    path = Path(out) if out else opening_book.book_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:  # a stop saves what was solved (build's own finally), from a background job or a kill too
        with stops_interrupt():
            made = opening_book.build(depth, path, start=root, timeout=timeout, budget=budget,
                                      log=lambda line: click.echo(line, err=True))
    except ValueError as exc:
        raise BadInput(str(exc)) from None
    except KeyboardInterrupt as stop:
        stops_ignored_from_now()  # saved; more presses (signals) on the way out change nothing
        status = exit_status(stop)
        try:
            kept = f"{len(opening_book.OpeningBook.load(path))} positions saved in {path}"
        except opening_book.BookError:  # stopped before the book was read or written
            kept = f"nothing new saved in {path}"
        click.echo(f"{stop_words(status)}: {kept}; the same command resumes the build", err=True)
        sys.exit(status)
    if made.info["complete"]:
        done = ""
    elif made.info.get("budget_spent"):
        done = "; not complete: the --budget ran out first (the same command resumes it)"
    else:  # a shallower run over a book cut short below it, or another start's strategies stop above its depth
        short = [start for start, reached in made.info["starts"].items() if (reached or 0) < made.depth]
        ours = root.notation if root is not None else Variant.classic().notation
        done = (f"; complete to depth {depth} only (--depth {made.depth} completes it)" if short == [ours]
                else f"; not complete: --depth {made.depth} --from each of {', '.join(short)} completes it")
    click.echo(f"{path}: {len(made)} positions, depth {made.depth}, {made.info.get('unsolved', 0)} left unsolved{done}")


@book.command("info")
@click.argument("path", type=click.Path(dir_okay=False), required=False, callback=named_file)
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
