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
Bad options (an unknown agent or ``human``, a board with forbidden or bonus cells, no
positive ``--seconds`` or ``--pairs``, OpenSpiel not installed) stop it at
once with one line that says which.
"""

from __future__ import annotations

import argparse
import math
import random
import time

from c4lab.adapters.openspiel import OpenSpielMCTS
from c4lab.agents import Agent, make_agent
from c4lab.agents.base import refuse_a_person
from c4lab.rules import Position


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
    try:
        agent = refuse_a_person(make_agent(args.agent), "vs_openspiel.py")  # human: a traceback at stdin's end
    except ValueError as exc:
        parser.error(f"--agent: {exc}")
    try:
        import pyspiel  # noqa: F401  (the yardstick; OpenSpielMCTS imports it when made)
    except ImportError:
        parser.error("OpenSpiel is not installed: python3 -m pip install open-spiel")
    return boards, agent


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
    for index, board in enumerate(boards):
        if index:
            ours = make_agent(args.agent)
        theirs = OpenSpielMCTS(args.seconds, args.seed)
        score = played = 0.0
        started = time.time()
        for _ in range(args.pairs):
            opening = board
            for _ in range(2):
                opening = opening.play(rng.choice(opening.legal_moves()))
            for ours_is_a in (True, False):
                ours.new_game()
                position = opening
                while not position.is_over:
                    our_turn = (position.to_move == "A") == ours_is_a
                    position = position.play((ours if our_turn else theirs).choose(position))
                mine = "A" if ours_is_a else "B"
                score += 1.0 if position.result == mine else 0.5 if position.result == "draw" else 0.0
                played += 1
        total += score
        games += played
        print(f"{board.notation:>6}: {args.agent} scores {score:.1f} of {played:.0f} games ({score / played:.0%}) "
              f"in {time.time() - started:.0f} s", flush=True)
    print(f" total: {args.agent} scores {total:.1f} of {games:.0f} games ({total / games:.0%})")


if __name__ == "__main__":
    main()
