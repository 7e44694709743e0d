"""The ``c4lab`` command's option types and checks, shared by its
commands: an option's value refused in click's own words
(``bad_option``), file names checked before a long run, numbers within
64 bits and finite, and defaults read from the module that owns them
(``default_from``) when a command runs or shows its help."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules.errors import SecondBonusCellError

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


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


def bonus_refused(exc: SecondBonusCellError) -> click.BadParameter:
    """The rules' refusal of ``--bonus`` with a board that names its own
    bonus cell (``rules.setup.starting_position``: ``6x5/Xc2/Bb2``), in
    the options' words: ``Invalid value for '--bonus': --board 6x5/Xc2/Bb2
    has its bonus cell (b2) already, and --bonus would draw another: give
    one or the other``, as ``c4lab play``, ``arena`` and ``train ntuple``
    say it."""
    return bad_option(exc.worded("--board", "--bonus"), "--bonus")


def given(what: str) -> Callable[[click.Context, click.Parameter, str | None], str | None]:
    """The callback of an option (or argument) whose empty value is an
    error, not the option left out: ``--board "$BOARD"`` with ``BOARD``
    unset trained on 7x6, ``--from ""`` built the book from the empty board,
    ``--openings ""`` played the default starts.  ``what`` names the value
    in the error (``an empty board``; ``(blank)`` for spaces only)."""

    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise click.BadParameter(f"an empty {what} (blank)" if value else f"an empty {what}")
        return value

    return check


def _named(what: str, ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file or folder name given (``given``), a ``~`` no shell expanded
    (``--resume=~/net.npz``) read as the home folder."""
    value = given(what)(ctx, param, value)
    if value is None:
        return None
    from pathlib import Path  # lazy: start-up time

    return str(Path(value).expanduser())


def named_file(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file option given an empty name (``--resume "$NET"`` with ``NET``
    unset) is an error, not the option left out: the command would
    otherwise quietly start anew or write its default file.  A ``~`` no
    shell expanded (``--resume=~/net.npz``) is the home folder."""
    return _named("file name", ctx, param, value)


def named_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A folder option, as ``named_file`` reads a file option: ``--out-dir ""``
    wrote the report into the default folder, ``--dir ""`` read the default
    benchmark sets."""
    return _named("folder name", ctx, param, value)


def no_colour_option(color: bool | None) -> None:
    """``--color``/``--no-color`` of a command that opens the page instead
    of the terminal game (no ``--tui``): refused, not ignored; the page has
    its own look."""
    if color is not None:
        raise click.UsageError(f"--{'' if color else 'no-'}color is for the terminal (--tui): the page's look is "
                               "in its Settings")


def no_page_options(port: int | None, db: str | None, no_browser: bool, what: str = "the terminal game") -> None:
    """The page's options given with ``--tui``: refused, not ignored, as the
    terminal's are without it (``no_colour_option``): a person who asked
    for ``--db`` would look there for a game the terminal never stores.
    ``what``: what ``--tui`` opens instead ("the terminal analysis board"
    for ``analyse``)."""
    for option, given, why in (
        ("--db", db is not None, "stores no game"),
        ("--port", port is not None, "runs no server"),
        ("--no-browser", no_browser, "opens no browser"),
    ):
        if given:
            raise click.UsageError(f"{option} is for the page in the browser: {what} (--tui) {why}")


#: The options of ``play`` and ``analyse`` that only the page takes, and only the terminal game (``--tui``):
#: each refused with the other (``no_page_options``, ``no_colour_option``, ``play``'s own for --network,
#: --seed and --delay), and so named in a suggestion for a mistyped option (``PageOrTerminal``).
PAGE_ONLY = frozenset({"--no-browser", "--port", "--db", "--network"})
TERMINAL_ONLY = frozenset({"--seed", "--delay", "--color", "--no-color"})


class PageOrTerminal(click.Command):
    """A command that opens the page or, with ``--tui``, the terminal game
    (``play``, ``analyse``): click's suggestion for an option it does not
    know names which of those it suggests one of the two only takes:
    ``play --bored`` was asked "Did you mean one of: '--board', '--port',
    '--seed'?", and --seed alone then said it was for --tui."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if not exc.possibilities:
                raise
            named = [f"'{option}'" + (" (for the page)" if option in PAGE_ONLY
                                      else " (for --tui)" if option in TERMINAL_ONLY else "")
                     for option in exc.possibilities]
            listed = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
            raise click.NoSuchOption(exc.option_name, f"{exc.message} Did you mean {listed}?", ctx=ctx) from None


def named_files(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """A repeatable file option (``--network``, ``--qtable``): each as ``named_file``
    reads one (an empty name refused, a ``~`` expanded)."""
    return tuple(str(named_file(ctx, param, v)) for v in value)


def ray_address(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--ray-address`` given an empty value (``--ray-address "$RAY"`` with
    ``RAY`` unset) is an error, as ``--sprt ""`` is: it was taken for the
    option left out, and the run started a local Ray (or, without
    ``--executor ray``, ran here) without a word."""
    if value is not None and not value.strip():
        raise click.BadParameter(
            "an empty address: give the cluster's HOST:PORT (or auto), or leave the option out to start a local Ray")
    return value


def writable_output(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """An output file's folder must exist and take a new file: checked before
    the run, so that a long run does not end in a write that fails (the
    name, ``~`` expanded, from ``named_file``)."""
    value = named_file(ctx, param, value)
    if value is not None:
        from pathlib import Path  # lazy: start-up time

        from c4lab.arrayfile import check_writable  # lazy: start-up time

        try:
            check_writable(Path(value))
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def in_existing_folder(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A file option's folder must exist: a typo is an error, not new folders.
    An empty name is refused as ``named_file`` refuses it (``--db ""`` was
    "." is a folder)."""
    value = named_file(ctx, param, value)  # the file whose folder is checked, ~ expanded: not ./~/...
    if value is not None:
        from pathlib import Path  # lazy: start-up time

        folder = Path(value).parent
        if not folder.is_dir():
            raise click.BadParameter(f"the folder {str(folder)!r} does not exist")
    return value


#: ``--db`` of ``c4lab play``, ``analyse``, ``serve`` and ``games``: one
#: definition, whose help says where the games go when it is left out
#: (``c4lab.server.storage.DEFAULT_DB``; its four copies said nothing).
db_option = click.option(
    "--db", type=click.Path(dir_okay=False), callback=in_existing_folder, default=None,
    help="Game database (SQLite file; default: ~/.c4lab/games.sqlite).",
)


def checked_room_prefix(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """``--room-prefix``: letters and digits (a one-line error otherwise)."""
    if value:
        from c4lab.server.room import check_prefix  # lazy: start-up time

        try:
            check_prefix(value)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from None
    return value


def field_default(module: str, owner: str, name: str) -> Any:
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


class Finite(_OwnBounds, click.FloatRange):
    """``click.FloatRange`` that also refuses ``nan`` and ``inf``, which pass
    every comparison with a bound and then break a clock or a deadline
    (``--timeout inf`` overflowed a timer)."""

    name = "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return number


class Int64(_OwnBounds, click.IntRange):
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
INT64 = Int64()


class HomeDefault(click.Option):
    """An option whose default has its home elsewhere -- a dataclass field
    (``field_default``) or a constant (``_constant``) of the module that uses it --
    read when the command runs or shows its help: written once, and
    ``c4lab --help`` still loads nothing (``home`` is called only then)."""

    def __init__(self, *args: Any, home: Callable[[], Any], **kwargs: Any) -> None:
        self.home = home
        kwargs.setdefault("show_default", True)
        super().__init__(*args, **kwargs)

    def get_default(self, ctx: click.Context, call: bool = True) -> Any:
        return self.home()


def default_from(*where: str) -> dict[str, Any]:
    """``cls=HomeDefault`` with its home: ``("module", "Class", "field")`` or ``("module", "NAME")``."""
    home = (lambda: field_default(*where)) if len(where) == 3 else (lambda: _constant(*where))
    return {"cls": HomeDefault, "home": home}


#: The homes of the server's defaults.
GUARD = ("c4lab.server.guard", "GuardOptions")
LIMITS = ("c4lab.server.limits", "AgentLimits")
PRESENCE = "c4lab.server.presence"
QTRAIN = ("c4lab.learning.qlearning", "TrainConfig")
NTRAIN = ("c4lab.learning.ntuple", "Options")
ARENA = ("c4lab.arena.schedule", "ArenaConfig")
