"""What a command shows on stderr while it works: a line rewritten in place
(a search's progress, a measurement's current position) and the console
that rich's progress bars and status lines draw on.

Standard output keeps the answers only, so that a pipe gets clean lines;
on a terminal, stderr shows what is going on meanwhile.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click
from rich.console import Console


def stderr_console() -> Console:
    """A rich console on standard error."""
    return Console(stderr=True, emoji=False)  # "4x4:b: ..." is a position and a colon, no emoji code


class StatusLine:
    """One line of a terminal's stderr, rewritten in place and cleared
    before an answer is printed.  Silent when stderr is not a terminal."""

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix
        self.shown = False
        self.enabled = sys.stderr.isatty()

    def show(self, text: str) -> None:
        """``text`` in place of the line shown before, cut to the terminal's
        width: a line that wrapped left its first part on the screen at
        each rewrite (the carriage return goes back to the start of the
        last row only), a column of "solving: ..." lines on 60 columns."""
        if self.enabled:
            line = f"{self.prefix}{text}"[: max(1, _stderr_columns() - 1)]
            click.echo(f"\r\033[K{line}", nl=False, err=True)
            self.shown = True

    def __call__(self, progress: Any) -> None:
        """Show a search's progress (anything with ``describe()``)."""
        self.show(progress.describe())

    def clear(self) -> None:
        if self.shown:
            click.echo("\r\033[K", nl=False, err=True)
            self.shown = False


def _stderr_columns() -> int:
    """The width of the terminal standard error writes to (``COLUMNS``
    first, as rich and the shell have it); 80 where none is known."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(sys.stderr.fileno()).columns
    except (AttributeError, OSError, ValueError):  # no terminal, or a stream without a file descriptor
        return 80


#: What the bar says while no game of the run has ended: on a terminal in
#: a line above the bar, once, after :data:`WAIT_SAID_AFTER` seconds.
WAITING = "no game has ended yet (a first run compiles the agents before their first moves)"
WAIT_SAID_AFTER = 3.0


@dataclass(frozen=True)
class GamesBar:
    """What :func:`games_bar` yields: called, it moves the bar
    (``progress(done, total, summary)``); :attr:`say` prints a line (a
    note) above it."""

    move: Callable[[int, int, str], None]
    say: Callable[[str], None]

    def __call__(self, done: int, total: int, summary: str) -> None:
        self.move(done, total, summary)


@contextmanager
def games_bar(total: int, plain_every: float = 60.0) -> Iterator[GamesBar]:
    """A progress bar of games on a terminal's stderr (games done, the
    running score, the time left); yields what moves it:
    ``progress(done, total, summary)``, and ``progress.say(line)`` for a
    note printed above it.  Where stderr is no terminal (a log
    file, ``nohup``, a job scheduler) a plain line instead, at each tenth of
    the run and at least every ``plain_every`` seconds of it, games ending
    or not (a first run's first games, which wait for the agents' compile,
    are said to be under way): a long run that printed nothing until its
    end could not be followed.  The line
    ends with the seconds so far and, once a game is played, about how many
    are left, from the games this run played (not those a resumed run
    found saved), after its first ones once more came (those carry the
    workers' start and compiling): ``(74 s, about 37 s left)``; it gave a
    bare ``(74 s)``."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    columns = (  # the summary names specs: text, not markup ("[/b]" in a spec is no tag)
        TextColumn("[bold]games"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[summary]}", markup=False),
        TimeRemainingColumn(),
    )
    terminal = sys.stderr.isatty()
    began = time.monotonic()
    last = {"time": began, "tenth": 0}
    first: list[int] = []  # the games done at the first call: those a resumed run found saved
    # (time, games done) when this run's first games came: the rate is taken from there on once twice as many
    # more came, as the first ones carry the workers' start and, on a first run, their compiling (a run of 23 s
    # said "about 172 s left" after its first pair); not at once, as the other workers' first games end just
    # after them (a resumed run with two jobs said "about 4 s left" of 20 s)
    warm: list[tuple[float, int]] = []
    latest: dict[str, int | str] = {"done": 0, "total": total, "summary": ""}  # the last call's, for the heartbeat
    lock = threading.Lock()  # the calls and the heartbeat below print one line at a time

    def plain_line(done: int, total: int, summary: str, now: float, beat: bool = False) -> str:
        played = done - first[0] if first else 0
        left = ""
        if played and done < total:
            settled = warm and done - warm[0][1] >= 2 * (warm[0][1] - first[0])
            since, then = warm[0] if settled else (began, first[0])
            left = f", about {(now - since) / (done - then) * (total - done):.0f} s left"
        if beat and not played:  # nothing ended yet in this run: a first run compiles the agents first
            left = f": {WAITING}"
        said = f"  {summary}" if summary else ""
        return f"games {done}/{total}{said}  ({now - began:.0f} s{left})"

    with Progress(*columns, console=stderr_console(), disable=not terminal) as bar:
        task = bar.add_task("games", total=total, summary="")

        def progress(done: int, total: int, summary: str) -> None:
            bar.update(task, completed=done, total=total, summary=summary)
            with lock:
                latest.update(done=done, total=total, summary=summary)
                if not first:
                    first.append(done)
                now = time.monotonic()
                if not warm and done > first[0]:
                    warm.append((now, done))
                if terminal:
                    return
                tenth = 10 * done // max(total, 1)
                if done and (tenth > last["tenth"] or now - last["time"] >= plain_every):
                    last.update(time=now, tenth=tenth)
                    click.echo(plain_line(done, total, summary, now), err=True)

        def heartbeat() -> None:
            # "at least every plain_every seconds" held only while games ended: a first run's first pair
            # (compiling) or long games left a log silent for minutes
            while not over.wait(min(1.0, plain_every / 4)):
                with lock:
                    now = time.monotonic()
                    if now - last["time"] >= plain_every:
                        last["time"] = now
                        click.echo(plain_line(int(latest["done"]), int(latest["total"]), str(latest["summary"]), now,
                                              beat=True), err=True)

        def say(line: str) -> None:
            with lock:  # above the bar on a terminal (written to stderr as it is, it landed on the bar's line)
                if terminal:
                    bar.console.print(line, markup=False, highlight=False, soft_wrap=True)
                else:
                    click.echo(line, err=True)

        def waiting() -> None:
            # a first run's bar stood at 0 for a minute, saying nothing of the compiling (a log's line did)
            if not over.wait(WAIT_SAID_AFTER):
                with lock:
                    quiet = bool(first) and latest["done"] != first[0]
                if not quiet:
                    say(f"{WAITING[0].upper()}{WAITING[1:]}")

        over = threading.Event()
        threading.Thread(target=heartbeat if not terminal else waiting, name="c4lab-games-heartbeat",
                         daemon=True).start()
        try:
            yield GamesBar(progress, say)
        finally:
            over.set()
