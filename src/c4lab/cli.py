"""The ``c4lab`` command.  Thin: it parses options and dispatches.

Heavy modules (numpy, numba, the rules engine, rich) are imported inside the
commands, so ``c4lab --help`` answers at once.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import click

from c4lab import __version__

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules import Position


def _inputs(positions: tuple[str, ...]) -> Iterator[str]:
    """The positions to answer: the arguments, with ``-`` meaning "read
    standard input, one position per line, answering each as it comes"."""
    for item in positions:
        if item == "-":
            while True:
                line = sys.stdin.readline()
                if not line:
                    break
                yield line.rstrip("\r\n") if line.endswith("\n") else line
        else:
            yield item


def _answer_each(
    positions: tuple[str, ...], as_json: bool, answer: Callable[[str], tuple[dict, str]]
) -> None:
    """Run ``answer`` on every input; print its JSON record or its text, one
    answer per input, flushed at once.  A bad input answers an error and the
    run goes on; the exit status is 2 if any input was bad."""
    bad = 0
    for text in _inputs(positions):
        try:
            record, plain = answer(text)
        except ValueError as exc:
            bad += 1
            if as_json:
                click.echo(json.dumps({"input": text, "error": str(exc)}))
            else:
                click.echo(f"error: {exc}")
        else:
            click.echo(json.dumps(record) if as_json else plain)
        sys.stdout.flush()
    if bad:
        sys.exit(2)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="c4lab")
def main() -> None:
    """Connect Four on variant boards: play it, watch AIs play it, study it.

    Positions use the notation of RULES.md, e.g. 7x6:dddc or 9x8/Xd3/Bb1:b+ac.
    """


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position.")
def show(positions: tuple[str, ...], as_json: bool) -> None:
    """Print each POSITION as a board (``-`` reads positions from stdin)."""
    from c4lab.rules import Position

    def answer(text: str) -> tuple[dict, str]:
        position = Position.parse(text)
        record = position.to_dict()
        return record, _describe(position)

    _answer_each(positions, as_json, answer)


def _describe(position: Position) -> str:
    """The text answer of ``show``: the board and one line of facts."""
    if position.result == "draw":
        state = "draw"
    elif position.result:
        state = f"{position.result} wins ({' '.join(c.name for c in position.win_line)})"
    else:
        state = f"{position.to_move} to move"
    return (
        f"{position.notation}\n{position.render()}\n"
        f"{state}; {position.empty_cells} empty cells; legal: "
        f"{' '.join(m.token for m in position.legal_moves()) or '-'}\n"
    )


@main.command()
@click.argument("positions", nargs=-1, required=True, metavar="POSITION...")
@click.option("--agent", "spec", default="random", show_default=True, help="Agent spec NAME[:key=value,...].")
@click.option("--time", "seconds", type=float, default=None, help="Seconds per move.")
@click.option("--iterations", type=int, default=None, help="Iterations per move.")
@click.option("--json", "as_json", is_flag=True, help="One JSON object per position, with the analysis.")
def move(
    positions: tuple[str, ...], spec: str, seconds: float | None, iterations: int | None, as_json: bool
) -> None:
    """Print the move the agent chooses in each POSITION (``-``: stdin)."""
    from c4lab.agents import Budget, make_agent
    from c4lab.rules import Position

    try:
        agent = make_agent(spec)
        budget = Budget(seconds, iterations) if (seconds or iterations) else None
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None

    def answer(text: str) -> tuple[dict, str]:
        position = Position.parse(text)
        if position.is_over:
            raise ValueError(f"the game is over in {position.notation}: there is no move to choose")
        chosen, analysis = agent.analyse(position, budget)
        record = {
            "position": position.notation,
            "agent": spec,
            "move": chosen.token,
            "analysis": analysis.to_dict(),
        }
        return record, chosen.token

    _answer_each(positions, as_json, answer)


@main.command()
def agents() -> None:
    """List the agents and their parameters."""
    from c4lab.agents import agent_infos

    for info in agent_infos():
        click.echo(f"{info.name}: {info.help}")
        for param in info.params:
            default = param.default
            if param.name in info.defaults:
                default = param.convert(info.name, info.defaults[param.name])
            click.echo(f"    {param.name}={default}  ({param.type.__name__}) {param.help}")


@main.command()
@click.option("--tui", is_flag=True, help="The terminal game (the only interface so far).")
@click.option(
    "--board",
    default="7x6",
    show_default=True,
    help="7x6, WxH, 'random' (the enhanced setup), or a full position string to start from.",
)
@click.option("--bonus", is_flag=True, help="With --board random: add a bonus cell.")
@click.option("--player1", "-1", "player1", default="human", show_default=True, help="Agent spec or 'human'.")
@click.option("--player2", "-2", "player2", default="hard", show_default=True, help="Agent spec or 'human' (levels: normal, hard, impossible, master).")
@click.option(
    "--first",
    type=click.Choice(["1", "2", "random"]),
    default="random",
    show_default=True,
    help="Which player plays A (moves first).",
)
@click.option("--seed", type=int, default=None, help="Seed for the draws (first player, random boards).")
@click.option("--delay", type=float, default=None, help="Seconds to pause after an agent's move.")
@click.option("--color/--no-color", default=None, help="Force colours on or off (default: when a terminal).")
def play(
    tui: bool,
    board: str,
    bonus: bool,
    player1: str,
    player2: str,
    first: str,
    seed: int | None,
    delay: float | None,
    color: bool | None,
) -> None:
    """Play a game in the terminal."""
    from c4lab.ui.terminal import GameSettings, run_terminal_game

    settings = GameSettings(
        board=board, bonus=bonus, players=(player1, player2), first=first, seed=seed, delay=delay, color=color
    )
    try:
        sys.exit(run_terminal_game(settings))
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--seconds", type=float, default=2.0, show_default=True, help="CPU seconds per measurement.")
@click.option("--c", "c_reference", is_flag=True, help="Also time the C reference playouts (needs gcc).")
def bench(as_json: bool, seconds: float, c_reference: bool) -> None:
    """Measure the rules engine: random playouts and Position API speed."""
    from c4lab.bench import report, run_benchmarks

    try:
        results = run_benchmarks(seconds, c_reference=c_reference)
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(json.dumps(results) if as_json else report(results))


if __name__ == "__main__":  # pragma: no cover
    main()
