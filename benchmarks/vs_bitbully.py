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
Each position is solved by BitBully, then by c4lab (one at a time: they
never compete for a core), and its line is printed at once, so the table
grows as the run goes (BitBully used to solve them all first: a minute of
silence before the first line).

The positions: ``7x6:dddd``, ``7x6:ddddd`` and ``--random`` positions at ply
6 to 10 reached by seeded random moves.  Both solvers search without any
opening book or database (c4lab: ``Solver(book=False)``; BitBully: no
opening book, MTD(f) from 0) with a fresh table per position, and each
reports its CPU time and its nodes; the scores must agree.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from c4lab import precompiled
from c4lab.ctrl_c import run_stoppable
from c4lab.rules import Position
from c4lab.solver import Solver

precompiled.measure_this_cpu()  # speed is measured on the code compiled for this CPU, as after c4lab prepare

# Runs inside BitBully's environment: "ready" once BitBully is imported, then
# for each position read on stdin (moves as column digits, one position a
# line) a JSON line on stdout, as soon as it is solved.
BITBULLY_PROGRAM = """
import json, sys, time
import bitbully
print("ready", flush=True)
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


class BitBully:
    """BitBully's solver in its own environment, a separate process that
    solves one position at a time when asked (:meth:`solve`), so that each
    line of the table is printed as soon as both solvers are done with it."""

    def __init__(self, venv: Path) -> None:
        """Start ``venv``'s Python on ``BITBULLY_PROGRAM`` and wait until it
        has imported BitBully; ``BitBullyError`` (with its last line of
        standard error) if it cannot."""
        self.venv = venv
        self.python = venv / "bin" / "python"
        # A file, not a pipe: a chatty stderr cannot block it.  Open while the process runs; close() closes it.
        self._stderr = tempfile.TemporaryFile("w+")  # noqa: SIM115
        try:
            self._process = subprocess.Popen([str(self.python), "-c", BITBULLY_PROGRAM], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=self._stderr, text=True, bufsize=1)
        except OSError as exc:  # there, but not a program this system runs
            self._stderr.close()
            raise BitBullyError(f"BitBully's environment {venv} could not start: {self.python}: {exc.strerror} "
                                f"(make it again: python3 -m venv {venv} && {venv}/bin/pip install bitbully)") from None
        if self._read() != "ready":
            raise self._failure("could not start")

    def solve(self, position: Position) -> dict[str, float]:
        """BitBully's score, nodes and CPU seconds for ``position``."""
        assert self._process.stdin is not None
        try:
            self._process.stdin.write("".join(str(m.column) for m in position.moves) + "\n")
            self._process.stdin.flush()
        except OSError:
            raise self._failure(f"could not solve {position.notation}") from None
        line = self._read()
        if not line:
            raise self._failure(f"could not solve {position.notation}")
        answer: dict[str, float] = json.loads(line)
        return answer

    def _read(self) -> str:
        assert self._process.stdout is not None
        return self._process.stdout.readline().strip()

    def _failure(self, what: str) -> BitBullyError:
        """The error of a BitBully that stopped answering: its last line of
        standard error (or its exit status) and how to install it."""
        self._end()
        self._stderr.seek(0)
        lines = self._stderr.read().strip().splitlines()
        self._stderr.close()
        why = lines[-1] if lines else f"exit status {self._process.returncode}, no message"
        return BitBullyError(f"BitBully's environment {self.venv} {what}: {why} "
                             f"(install it there: {self.python} -m pip install bitbully)")

    def close(self) -> None:
        """End BitBully's process and forget its standard error."""
        self._end()
        self._stderr.close()

    def _end(self) -> None:
        """End BitBully's process: its input closed, it ends its loop."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            with contextlib.suppress(OSError):
                self._process.stdin.close()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


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
    theirs: BitBully | None = None
    if (args.venv / "bin" / "python").exists():
        try:
            theirs = BitBully(args.venv)
        except BitBullyError as exc:
            parser.error(str(exc))  # the environment named cannot run BitBully: a bad option, exit status 2
    solvers = "BitBully, then c4lab," if theirs is not None else "c4lab (no BitBully environment)"
    print(f"{len(items)} positions, each solved by {solvers} and printed at once; "
          "the first two take the longest", file=sys.stderr, flush=True)
    print(f"{'position':<22}{'score':>6}{'c4lab CPU s':>12}{'c4lab nodes':>14}{'BitBully CPU s':>15}{'BB nodes':>14}",
          flush=True)
    ours_total = theirs_total = 0.0
    solver = Solver(book=False)
    try:
        for position in items:
            them = theirs.solve(position) if theirs is not None else None
            solver.clear()
            solution = solver.solve(position)
            ours_total += solution.cpu_s
            line = f"{position.notation:<22}{solution.score:>6}{solution.cpu_s:>12.2f}{solution.nodes:>14,}"
            if them is not None:
                theirs_total += them["cpu"]
                if them["score"] != solution.score:
                    sys.exit(f"the scores differ on {position.notation}: c4lab {solution.score}, "
                             f"BitBully {them['score']}")
                line += f"{them['cpu']:>15.2f}{int(them['nodes']):>14,}"
            print(line, flush=True)
    except BitBullyError as exc:  # it stopped answering in the middle (killed, out of memory)
        sys.exit(f"{Path(sys.argv[0]).name}: error: {exc}")
    finally:
        if theirs is not None:
            theirs.close()
    summary = f"total CPU: c4lab {ours_total:.1f} s"
    if theirs is not None:
        summary += f", BitBully {theirs_total:.1f} s (c4lab / BitBully = {ours_total / theirs_total:.2f})"
    else:
        summary += f" (no BitBully environment at {args.venv})"
    print(summary)


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, the children ended (the finally blocks)
