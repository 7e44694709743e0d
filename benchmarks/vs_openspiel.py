r"""Paired games of a c4lab agent against OpenSpiel's C++ MCTSBot.

    python3 benchmarks/vs_openspiel.py --agent master:time=0.1 --seconds 0.1 \
        --boards 7x6,8x7,9x7,10x8,12x12 --pairs 10
    python3 benchmarks/vs_openspiel.py --agent random --seconds 0.01 --boards 4x4 --pairs 1  # a quick check

Both sides get the same wall-clock time a move (OpenSpiel's
``max_wall_clock_time``; random rollouts, UCT selection, uct_c=2 as in its
examples).  Each opening (a board and two random first moves) is played
twice, sides swapped.  Plain boards only: OpenSpiel's connect_four has no
forbidden cells or bonus.  Prints the agent's score (wins 1, draws 1/2) per
board and in all, and each board's wall-clock seconds.
The agent is any spec ``c4lab arena`` takes, an engine program's
(``engine:cmd=./my_engine``) too.  Every game is played by c4lab's game
loop (``c4lab.game.play_game``): an answer that is no legal move, or an
agent that fails, loses that game by forfeit, counted in the score and
told in one line under its board's.  An engine's program ends with the
run, on Ctrl-C too.
Bad options (an unknown agent or ``human``, an engine that does not start,
a board with forbidden or bonus cells, no positive ``--seconds`` or
``--pairs``, OpenSpiel not installed) stop it at once with one line that
says which.
"""

from __future__ import annotations

import argparse
import math
import random
import time

import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...': an engine program plays as any agent)
from c4lab import precompiled
from c4lab.adapters.openspiel import OpenSpielMCTS
from c4lab.agents import Agent, AgentError, make_agent
from c4lab.agents.base import refuse_a_person
from c4lab.ctrl_c import run_stoppable
from c4lab.game import Forfeit, play_game
from c4lab.rules import Position

precompiled.measure_this_cpu()  # speed is measured on the code compiled for this CPU, as after c4lab prepare


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> tuple[list[Position], Agent]:
    """The boards and a first copy of the agent, or one clear error (exit 2):
    before, ``--seconds 0`` searched without end (OpenSpiel's "no limit"),
    ``--pairs 0`` divided by zero, and a bad board or agent was a traceback
    after minutes of games."""
    if not 0 < args.seconds < math.inf:
        parser.error(f"--seconds must be a number above 0 (OpenSpiel's time a move), got {args.seconds:g}")
    if args.pairs < 1:
        parser.error(f"--pairs must be 1 or more (openings per board), got {args.pairs}")
    boards = []
    for text in args.boards.split(","):
        try:
            board = Position.parse(text.strip())
        except ValueError as exc:
            parser.error(f"--boards: {exc}")
        if board.variant.forbidden or board.variant.bonus is not None:
            parser.error(f"--boards: {text.strip()}: OpenSpiel's connect_four has plain boards only "
                         "(no forbidden or bonus cells)")
        if board.is_over:
            parser.error(f"--boards: {text.strip()}: the game is already over")
        boards.append(board)
    # the yardstick first, then our agent: its engine's program starts only for a match that can be played, and
    # a Ctrl-C once it runs cannot land in OpenSpiel's import (its C extension made that an ImportError: the run
    # said "OpenSpiel is not installed" and ended with status 2, seen on a slow day)
    try:
        import pyspiel  # noqa: F401  (OpenSpielMCTS imports it when made)
    except ImportError:
        parser.error("OpenSpiel is not installed: python3 -m pip install open-spiel")
    try:
        agent = refuse_a_person(make_agent(args.agent), "vs_openspiel.py")  # human: a traceback at stdin's end
    except (ValueError, AgentError) as exc:  # AgentError: an engine's program that did not start
        parser.error(f"--agent: {exc}")
    return boards, agent


def forfeit_line(forfeits: list[Forfeit]) -> str:
    """The one line under a board's that tells its forfeits: how many, and
    the first one in the game loop's words (which move, whose, and why)."""
    count = len(forfeits)
    return (f"{'':>6}  {count} game{'s' if count > 1 else ''} lost by forfeit (an answer that was no legal move, "
            f"or an agent that failed); the first: {forfeits[0].detail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="master:time=0.1", help="c4lab's agent (default %(default)s)")
    parser.add_argument("--seconds", type=float, default=0.1,
                        help="OpenSpiel's wall-clock time a move (default %(default)s)")
    parser.add_argument("--boards", default="7x6,8x7,9x7,10x8,12x12",
                        help="plain boards, comma-separated (default %(default)s)")
    parser.add_argument("--pairs", type=int, default=10,
                        help="openings per board, two games each (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="the openings' and OpenSpiel's seed (default %(default)s)")
    args = parser.parse_args()
    boards, ours = check_options(parser, args)

    rng = random.Random(args.seed)
    print(f"{args.agent} against OpenSpiel's MCTSBot ({args.seconds:g} s a move, random rollouts), "
          f"{2 * args.pairs} games a board; score: wins 1, draws 1/2", flush=True)
    total = games = 0.0
    try:
        for index, board in enumerate(boards):
            if index:  # a fresh agent a board; the last one's engine program ends first
                ours.close()
                ours = make_agent(args.agent)
            theirs = OpenSpielMCTS(args.seconds, args.seed)
            score = played = 0.0
            forfeits: list[Forfeit] = []
            started = time.time()
            for _ in range(args.pairs):
                opening = board
                for _ in range(2):
                    opening = opening.play(rng.choice(opening.legal_moves()))
                for ours_is_a in (True, False):
                    a, b = (ours, theirs) if ours_is_a else (theirs, ours)
                    record = play_game(a, b, opening, policy="judge")  # a bad answer loses its game
                    mine = "A" if ours_is_a else "B"
                    score += 1.0 if record.result == mine else 0.5 if record.result == "draw" else 0.0
                    played += 1
                    if record.forfeit is not None:
                        forfeits.append(record.forfeit)
            total += score
            games += played
            print(f"{board.notation:>6}: {args.agent} scores {score:.1f} of {played:.0f} games "
                  f"({score / played:.0%}) in {time.time() - started:.0f} s", flush=True)
            if forfeits:
                print(forfeit_line(forfeits), flush=True)
    finally:  # an engine's program ends with the run, on Ctrl-C too
        ours.close()
    print(f" total: {args.agent} scores {total:.1f} of {games:.0f} games ({total / games:.0%})")


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, the engine closed (main's finally)
