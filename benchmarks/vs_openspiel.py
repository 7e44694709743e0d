"""Paired games of a c4lab agent against OpenSpiel's C++ MCTSBot.

    python3 benchmarks/vs_openspiel.py --agent master:time=0.1 --seconds 0.1 \
        --boards 7x6,8x7,9x7,10x8,12x12 --pairs 10

Both sides get the same wall-clock time a move (OpenSpiel's
``max_wall_clock_time``; random rollouts, UCT selection, uct_c=2 as in its
examples).  Each opening (a board and two random first moves) is played
twice, sides swapped.  Plain boards only: OpenSpiel's connect_four has no
forbidden cells or bonus.  Prints a line per board and the total score.
"""

from __future__ import annotations

import argparse
import random
import time

from c4lab.adapters.openspiel import OpenSpielMCTS
from c4lab.agents import make_agent
from c4lab.rules import Position


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--agent", default="master:time=0.1")
    parser.add_argument("--seconds", type=float, default=0.1, help="OpenSpiel's wall-clock time a move")
    parser.add_argument("--boards", default="7x6,8x7,9x7,10x8,12x12")
    parser.add_argument("--pairs", type=int, default=10, help="openings per board (two games each)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    total = games = 0.0
    for board in args.boards.split(","):
        ours = make_agent(args.agent)
        theirs = OpenSpielMCTS(args.seconds, args.seed)
        score = played = 0.0
        started = time.time()
        for _ in range(args.pairs):
            opening = Position.parse(board)
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
        print(f"{board:>6}: {args.agent} scores {score:.1f}/{played:.0f} ({score / played:.0%}) "
              f"in {time.time() - started:.0f} s", flush=True)
    print(f"total: {total:.1f}/{games:.0f} ({total / games:.0%})")


if __name__ == "__main__":
    main()
