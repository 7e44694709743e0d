"""c4lab's exact solver against BitBully (a fast C++ solver), deep classic positions.

    python3 benchmarks/vs_bitbully.py [--venv DIR] [--random 20] [--seed 1]

BitBully (PyPI ``bitbully``) is AGPL-licensed: it is never imported here.
It runs in its own virtual environment, as a separate process, which this
script drives with a small program on its command line.  Make one with

    python3 -m venv .bitbully-venv && .bitbully-venv/bin/pip install bitbully

in the folder you run this from (or anywhere, named by ``--venv`` or
``$C4LAB_BITBULLY_VENV``).  Without either and without ``.bitbully-venv``
there, only c4lab runs; a ``--venv`` or ``$C4LAB_BITBULLY_VENV`` that holds
no Python, or whose Python cannot run BitBully, stops it with one line that
says so.  The figures printed are CPU seconds and nodes of each solver per
position, then the CPU seconds of each in all (and c4lab's over BitBully's).
BitBully solves every position first, c4lab then: on the 22 positions the
table's first line comes after BitBully's minute or so.

The positions: ``7x6:dddd``, ``7x6:ddddd`` and ``--random`` positions at ply
6 to 10 reached by seeded random moves.  Both solvers search without any
opening book or database (c4lab: ``Solver(book=False)``; BitBully: no
opening book, MTD(f) from 0) with a fresh table per position, and each
reports its CPU time and its nodes; the scores must agree.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
from pathlib import Path

from c4lab.rules import Position
from c4lab.solver import Solver

# Runs inside BitBully's environment: moves as column digits on stdin, one
# position a line; a JSON line each on stdout.
BITBULLY_PROGRAM = """
import json, sys, time
import bitbully
for line in sys.stdin:
    moves = line.strip()
    solver = bitbully.BitBully(opening_book=None)
    board = bitbully.Board(moves)
    start = time.process_time()
    score = solver.mtdf(board)
    print(json.dumps({"score": score, "nodes": solver.get_node_counter(),
                      "cpu": time.process_time() - start}), flush=True)
"""


def positions(count: int, seed: int) -> list[Position]:
    """The two yardsticks, then ``count`` seeded random positions at ply 6-10
    (games not over)."""
    out = [Position.parse("7x6:dddd"), Position.parse("7x6:ddddd")]
    rng = random.Random(seed)
    while len(out) < count + 2:
        position = Position.parse("7x6")
        for _ in range(rng.randint(6, 10)):
            position = position.play(rng.choice(position.legal_moves()))
            if position.is_over:
                break
        if not position.is_over:
            out.append(position)
    return out


class BitBullyError(Exception):
    """BitBully's environment could not run the positions: says why."""


def run_bitbully(venv: Path, items: list[Position]) -> list[dict[str, float]] | None:
    """BitBully's score, nodes and CPU seconds for each position, or
    ``None`` where ``venv`` holds no Python."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    text = "".join("".join(str(m.column) for m in p.moves) + "\n" for p in items)
    run = subprocess.run([str(python), "-c", BITBULLY_PROGRAM], input=text, capture_output=True, text=True,
                         check=False)
    lines = run.stdout.splitlines()
    if run.returncode != 0 or len(lines) != len(items):
        why = (run.stderr.strip().splitlines() or [f"exit status {run.returncode}, no message"])[-1]
        raise BitBullyError(f"BitBully's environment {venv} could not solve the positions: {why} "
                            f"(install it there: {python} -m pip install bitbully)")
    return [json.loads(line) for line in lines]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--venv", type=Path, default=None,
                        help="BitBully's virtual environment (default: $C4LAB_BITBULLY_VENV, else .bitbully-venv "
                             "if there is one)")
    parser.add_argument("--random", type=int, default=20,
                        help="random positions at ply 6-10, besides dddd and ddddd (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1, help="the random positions' seed (default %(default)s)")
    args = parser.parse_args()
    if args.random < 0:
        parser.error(f"--random must be 0 or more (positions besides dddd and ddddd), got {args.random}")
    # Where the environment was named (an error then says so); the default
    # folder, when missing, only leaves BitBully out.
    named = "--venv" if args.venv is not None else "$C4LAB_BITBULLY_VENV" if "C4LAB_BITBULLY_VENV" in os.environ \
        else None
    if args.venv is None:
        args.venv = Path(os.environ.get("C4LAB_BITBULLY_VENV", ".bitbully-venv"))
    if named and not (args.venv / "bin" / "python").exists():
        parser.error(f"{named}: {args.venv} is not a virtual environment (no bin/python); make one with "
                     f"python3 -m venv {args.venv} && {args.venv}/bin/pip install bitbully")

    items = positions(args.random, args.seed)
    try:
        theirs = run_bitbully(args.venv, items)
    except BitBullyError as exc:
        parser.error(str(exc))  # the environment named cannot run BitBully: a bad option, exit status 2
    print(f"{'position':<22}{'score':>6}{'c4lab CPU s':>12}{'c4lab nodes':>14}{'BitBully CPU s':>15}{'BB nodes':>14}",
          flush=True)
    ours_total = theirs_total = 0.0
    solver = Solver(book=False)
    for i, position in enumerate(items):
        solver.clear()
        solution = solver.solve(position)
        ours_total += solution.cpu_s
        line = f"{position.notation:<22}{solution.score:>6}{solution.cpu_s:>12.2f}{solution.nodes:>14,}"
        if theirs is not None:
            them = theirs[i]
            theirs_total += them["cpu"]
            if them["score"] != solution.score:
                sys.exit(f"the scores differ on {position.notation}: c4lab {solution.score}, BitBully {them['score']}")
            line += f"{them['cpu']:>15.2f}{int(them['nodes']):>14,}"
        print(line, flush=True)
    summary = f"total CPU: c4lab {ours_total:.1f} s"
    if theirs is not None:
        summary += f", BitBully {theirs_total:.1f} s (c4lab / BitBully = {ours_total / theirs_total:.2f})"
    else:
        summary += f" (no BitBully environment at {args.venv})"
    print(summary)


if __name__ == "__main__":
    main()
