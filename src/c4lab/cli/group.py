"""The ``c4lab`` command group: ``main`` (on which every command module
of this package registers its commands), Ctrl-C in any command as one
line and status 130, a usage error as one line, and ``run``, the
command as a process runs it (the short commands end with a quick
exit)."""

from __future__ import annotations

import sys
from typing import Any, NoReturn

import click

from c4lab import __version__
from c4lab.quick_exit import ends_at_once, leave

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


#: Other spellings of a command's name, taken as it (not listed in the help):
#: ``solve`` takes ``--analyze`` for ``--analyse`` too.
SPELLINGS = {"analyze": "analyse"}


class _Commands(click.Group):
    """The command group: Ctrl-C in any command is one line and status 130
    (click's own handling prints "Aborted!" and exits 1); a command written
    with another spelling (:data:`SPELLINGS`) is run."""

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, SPELLINGS.get(cmd_name, cmd_name))

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """The command line read (click's), where Ctrl-C is "interrupted",
        status 130, as in the command (click's own: "Aborted!", status 1)."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except KeyboardInterrupt:
            _interrupted()

    def invoke(self, ctx: click.Context) -> Any:
        try:
            done = super().invoke(ctx)
        except click.UsageError as exc:  # click's own form is four lines (usage, hint, blank, error): one
            if isinstance(exc, click.BadParameter):
                _name_as_the_help_does(exc)
            click.echo(f"Error: {exc.format_message()}", err=True)
            sys.exit(exc.exit_code)
        except InterruptedAt as stop:
            _interrupted(str(stop))
        except KeyboardInterrupt:
            _interrupted()
        from c4lab.ctrl_c import ctrl_c_pressed  # lazy: start-up time

        if ctrl_c_pressed():  # kept for a block of the command's that never came (c4lab.__main__): acted on now
            _interrupted()
        return done


class InterruptedAt(KeyboardInterrupt):
    """Ctrl-C in a command that says where it stopped (a batch of
    positions: "at stdin line 57 (56 answers printed before it)")."""


def _interrupted(where: str = "") -> NoReturn:
    """Ctrl-C's end of any command: one line ("interrupted", and ``where``),
    status 130; more presses on the way out change nothing (one would end
    the process by SIGINT, -2)."""
    from c4lab.ctrl_c import ctrl_c_ignored_from_now, interrupted_line  # lazy: start-up time

    ctrl_c_ignored_from_now()
    click.echo(interrupted_line() + (f" {where}" if where else ""), err=True)
    sys.exit(130)


def _name_as_the_help_does(exc: click.BadParameter) -> None:
    """An argument's refusal names it as the command's help does (``PATH``),
    not by click's usage form of it: ``book info ''`` said ``Invalid value
    for '[PATH]'`` (the brackets of an optional argument).  An argument
    with a metavar of its own (``SPEC SPEC [SPEC...]``) keeps it."""
    if exc.param_hint is None and isinstance(exc.param, click.Argument) and exc.param.metavar is None:
        exc.param_hint = f"'{exc.param.human_readable_name}'"


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
        if quick or ends_at_once():
            leave(exc.code)
        raise
