"""What a prepared agent still compiles during a game: a check that numba's
compiler never runs under the clock.

    python3 benchmarks/compiles_in_game.py [--board B ...] [--games 2] SPEC ...

For each agent ``SPEC`` (default: the levels and the game-AI agents, at
short budgets), on a new empty numba cache of its own: the warm-up that
the arena's referee, a room of the web page and the terminal game run
before a first move (``c4lab.agents.base.warm_up``: throwaway moves, then
``Agent.compile_rest``), on each board in turn; then whole games of two
fresh copies of the agent against each other from a few random opening
moves (a different opening each game).  It prints the warm-up's seconds
on the empty cache (the first board pays for the agent's kernels; later
boards only for what their kind adds) and every function numba compiled
during the games, with the move and how long that move took.  Anything
listed there is a bug: that move waited for the compiler, and under a
time limit it would lose the game on time.

Each warm-up and its games run in a fresh process (``python3 -c``) with
``C4LAB_COMPILE_ASIDE=0``, so that all compiling happens in it and is seen.
The c4lab that runs is the one this Python imports.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

from c4lab import precompiled
from c4lab.ctrl_c import run_stoppable

# What a prepared agent still compiles, and its warm-up on an empty cache:
# the code compiled for this CPU, as after ``c4lab prepare``, not the shipped one.
precompiled.measure_this_cpu()

#: Agents at budgets that keep a game short; ``master`` keeps its tree
#: between moves, ``hard`` and ``impossible`` solve their end game exactly.
SPECS = (
    "random", "heuristic", "normal", "hard", "impossible", "master:time=0.2", "minimax:time=0.1",
    "perfect:time=0.3", "uct:iterations=300", "uct-tt:iterations=300,reuse=1", "uct-smart:iterations=300",
    "uct-lgr2:iterations=300", "hybrid:iterations=300", "mcts-solver:iterations=300", "ntuple",
    "ntuple-puct:time=0.05",
)
BOARDS = ("7x6", "6x5/Xc2/Bb1", "9x8/Xd3", "12x12/Xf4/Bc2")

#: The process for one agent and board: warm-up, then the games; one JSON
#: line.  Its listener is the tests' (``tests/testkit.py``'s
#: ``_COMPILE_LISTENER``) with the move added: a benchmark does not import
#: the tests.
SCRIPT = """
import json, random, sys, time
from numba.core import event

spec, board, games = sys.argv[1], sys.argv[2], int(sys.argv[3])
compiled = []
where = [None]


class Listener(event.Listener):
    def on_start(self, ev):
        if where[0] is not None:
            d = ev.data.get("dispatcher")
            f = getattr(d, "py_func", None) or getattr(d, "_pyfunc", d)
            compiled.append([*where[0], f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', str(d))}"])

    def on_end(self, ev):
        pass


event.register("numba:compile", Listener())
from c4lab.agents import make_agent
from c4lab.agents.base import warm_up
from c4lab.rules import Position

start = Position.parse(board)
t = time.perf_counter()
warm_up(spec, start)
warm = time.perf_counter() - t
slowest = 0.0
moves = 0
for game in range(games):
    rng = random.Random(game)
    players = [make_agent(spec), make_agent(spec)]
    position = start
    for _ in range(2 + 2 * game):  # the opening, outside the measurement
        if not position.is_over:
            position = position.play(rng.choice(position.legal_moves()))
    while not position.is_over:
        where[0] = (game + 1, position.ply + 1)
        t = time.perf_counter()
        move = players[position.ply % 2].choose(position)
        took = time.perf_counter() - t
        where[0] = None
        slowest = max(slowest, took)
        moves += 1
        for entry in compiled:
            if len(entry) == 3 and entry[:2] == [game + 1, position.ply + 1]:
                entry.append(round(took, 2))
        position = position.play(move)
print(json.dumps({"warm_up_s": round(warm, 2), "moves": moves, "slowest_s": round(slowest, 2),
                  "compiled": compiled}))
"""


def check(spec: str, board: str, games: int, cache_dir: str) -> dict[str, object]:
    """The report of one agent on one board (on ``cache_dir``)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, C4LAB_COMPILE_ASIDE="0")
    done = subprocess.run([sys.executable, "-c", SCRIPT, spec, board, str(games)], env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return {"error": lines[-1]}
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def _is_agent(text: str) -> bool:
    """Whether ``text`` makes an agent (for the hint of a misplaced one)."""
    from c4lab.agents import make_agent  # lazy: the checks only; each run imports c4lab in its own process

    try:
        make_agent(text)
    except ValueError:
        return False
    return True


def check_options(parser: argparse.ArgumentParser, specs: list[str], boards: list[str]) -> None:
    """One clear error for a bad agent or board, before any process starts
    (each would fail on every board in turn otherwise)."""
    from c4lab.agents import make_agent  # lazy: the checks only; each run imports c4lab in its own process
    from c4lab.agents.base import refuse_a_person  # lazy: as above
    from c4lab.rules import Position  # lazy: as above

    for board in boards:
        try:
            if Position.parse(board).is_over:
                parser.error(f"--board {board}: the game is already over")
        except ValueError as exc:
            # --board takes every word after it: an agent there is named as such.
            hint = " (an agent? name the agents before --board)" if _is_agent(board) else ""
            parser.error(f"--board: {exc}{hint}")
    for spec in specs:
        try:
            refuse_a_person(make_agent(spec), "compiles_in_game.py")  # was "failed: ...QuitGame" on each board
        except ValueError as exc:
            parser.error(f"agent {spec!r}: {exc}")


def _by_move(found: list[list[object]]) -> list[str]:
    """``game G move M (S s): the first three of c4lab's functions and N
    more`` for each move that compiled something (``found``: [game, move,
    function, seconds of the move], in the order numba began them: the
    first is the one the move called)."""
    moves: dict[tuple[object, object], list[list[object]]] = {}
    for entry in found:
        moves.setdefault((entry[0], entry[1]), []).append(entry)
    lines = []
    for (game, move), entries in moves.items():
        ours = [str(e[2]) for e in entries if str(e[2]).startswith("c4lab.")]
        seconds = entries[0][3] if len(entries[0]) > 3 else "?"
        shown = ", ".join(ours[:3]) or "numba's own only"
        more = len(entries) - len(ours[:3])
        lines.append(f"game {game} move {move} ({seconds} s): {shown}" + (f" and {more} more" if more else ""))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("specs", nargs="*", default=list(SPECS), help="agents (default: %(default)s)")
    # Several boards after one --board, as the usage line shows, or one --board a board.
    parser.add_argument("--board", nargs="+", action="extend", metavar="B",
                        help=f"boards, in this order (default: {' '.join(BOARDS)})")
    parser.add_argument("--games", type=int, default=2, help="games on each board (default 2)")
    args = parser.parse_args()
    if args.games < 1:
        parser.error(f"--games must be 1 or more, got {args.games}")
    boards = args.board or list(BOARDS)
    check_options(parser, args.specs, boards)
    print(f"{'agent':32} {'board':14} {'warm-up':>8} {'moves':>6} {'slowest':>8}  compiled during the games")
    failures = 0
    for spec in args.specs:
        with tempfile.TemporaryDirectory(prefix="c4lab-numba-") as cache_dir:
            for board in boards:
                report = check(spec, board, args.games, cache_dir)
                if "error" in report:
                    failures += 1
                    print(f"{spec:32} {board:14} failed: {report['error']}", flush=True)
                    continue
                found = report["compiled"]
                assert isinstance(found, list)
                failures += bool(found)
                listed = "; ".join(_by_move(found)) or "nothing"
                print(f"{spec:32} {board:14} {report['warm_up_s']:7.2f}s {report['moves']:>6} "
                      f"{report['slowest_s']:7.2f}s  {listed}", flush=True)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, the children ended (the finally blocks)
