"""``c4lab bench``: how fast the rules engine is, measured on this machine.

Two measurements per board (the classic 7x6, and 12x12 with f4 forbidden):

* random playouts to the end of the game per second, through the compiled
  kernel (one core; a uniformly random non-full column each move; a win test
  after every move);
* play-plus-legal-moves operations per second through the public
  ``Position`` API (what a pure-Python caller gets);
* UCT iterations per second (whole iterations: selection, expansion,
  playout, backup) from the empty board;
* minimax nodes per second (positions visited, interior or leaf) in an
  iterative-deepening search from the empty board;
* n-tuple self-play training games per second (``c4lab train ntuple``'s
  kernel, one core: every legal move's afterstate valued, one TD update a
  move).

Rates use the process's CPU time (``time.process_time``), so a busy machine
does not skew them; wall time is reported beside it.  Each rate is the median
of three timed runs.
"""

from __future__ import annotations

import os
import platform
import random
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from c4lab.agents.minimax import bench_minimax
from c4lab.agents.uct import bench_uct
from c4lab.learning.ntuple import bench_training
from c4lab.rules import Position
from c4lab.rules import kernels as K

BOARDS = ("7x6", "12x12/Xf4")


def _timed(run: Callable[[int], int], seconds: float, first: int, repeats: int = 3) -> dict[str, Any]:
    """Measure ``run(n)`` (which does ``n`` units of work).

    ``n`` grows until one call uses about ``seconds / repeats`` of CPU time;
    then ``repeats`` calls are timed and the median rate is kept, so one
    unlucky run (another process, a frequency change) does not decide.
    """
    share = seconds / repeats
    n = first
    while True:
        cpu0 = time.process_time()
        run(n)
        cpu = time.process_time() - cpu0
        if cpu >= share / 2 or n >= 1 << 40:
            break
        n = max(n * 2, int(n * 1.1 * share / max(cpu, 1e-6)))
    n = max(1, int(n * share / max(cpu, 1e-6)))
    runs = []
    for _ in range(repeats):
        cpu0, wall0 = time.process_time(), time.perf_counter()
        run(n)
        runs.append((time.process_time() - cpu0, time.perf_counter() - wall0))
    cpu, wall = sorted(runs)[repeats // 2]
    return {"n": n, "cpu_s": cpu, "wall_s": wall, "rates": [n / c for c, _ in runs]}


def bench_playouts(board: str, seconds: float, seed: int = 1) -> dict[str, float]:
    """Random playouts from the empty ``board`` through the kernel."""
    geo, start = Position.parse(board).kernel_arrays()
    K.playout_batch(geo, start, 10, seed)  # compile / load from the cache
    tokens: dict[str, int] = {}

    def run(n: int) -> int:
        a, b, d, t = K.playout_batch(geo, start, n, seed)
        tokens.update(a=a, b=b, d=d, t=t)
        return n

    m = _timed(run, seconds, 10_000)
    run(m["n"])  # the counts of a run of the measured size (same seed: same games)
    return {
        "playouts": m["n"],
        "playouts_per_s": m["n"] / m["cpu_s"],
        "moves_per_s": tokens["t"] / m["cpu_s"],
        "mean_length": tokens["t"] / m["n"],
        "wins_a": tokens["a"] / m["n"],
        "wins_b": tokens["b"] / m["n"],
        "draws": tokens["d"] / m["n"],
        "cpu_s": m["cpu_s"],
        "wall_s": m["wall_s"],
        "runs_per_s": m["rates"],
    }


def bench_position_api(board: str, seconds: float, seed: int = 1) -> dict[str, float]:
    """Random games through ``Position``: one operation is a ``legal_moves()``
    call and a ``play()`` of one of them."""
    start = Position.parse(board)
    rng = random.Random(seed)

    def run(n: int) -> int:
        position = start
        for _ in range(n):
            if position.is_over:
                position = start
            position = position.play(rng.choice(position.legal_moves()))
        return n

    run(100)
    m = _timed(run, seconds, 2_000)
    return {
        "ops": m["n"],
        "ops_per_s": m["n"] / m["cpu_s"],
        "cpu_s": m["cpu_s"],
        "wall_s": m["wall_s"],
        "runs_per_s": m["rates"],
    }


# The C yardstick: (engine, W, H, forbidden column, forbidden row) per board.
C_RUNS = {
    "7x6": [("lines", 7, 6, -1, -1), ("bitboard", 7, 6, -1, -1)],
    "12x12/Xf4": [("lines", 12, 12, 5, 3)],
}


def _run_c(args: list[str], n: int) -> float:
    """One run of the compiled C reference: its playouts per CPU second."""
    line = subprocess.run([*args, str(n)], check=True, capture_output=True, text=True).stdout
    return float(line.split()[0])


def bench_c_reference(seconds: float) -> dict[str, dict[str, float]]:
    """Compile ``bench_reference.c`` (gcc -O3 -march=native) and time the same
    random playouts in C: the median of three runs per engine and board."""
    compiler = shutil.which("gcc") or shutil.which("cc")
    if compiler is None:
        raise RuntimeError("--c needs a C compiler (gcc or cc) on the PATH")
    source = Path(__file__).with_name("bench_reference.c")
    out: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        exe = Path(tmp) / "bench_reference"
        subprocess.run(
            [compiler, "-O3", "-march=native", "-o", str(exe), str(source)], check=True, capture_output=True
        )
        for board, runs in C_RUNS.items():
            for engine, *shape in runs:
                args = [str(exe), engine, *map(str, shape)]
                n = 100_000
                while n / max(_run_c(args, n), 1.0) < seconds / 6:
                    n *= 4
                rates = sorted(_run_c(args, n) for _ in range(3))
                out.setdefault(board, {})[engine] = rates[1]
    return out


#: The measurements, in the order they are made and reported: the name of
#: each under ``details`` in the JSON object.
SECTIONS = ("playouts", "position_api", "uct", "minimax", "ntuple")


def run_benchmarks(
    seconds: float = 2.0, c_reference: bool = False,
    measured: Callable[[str, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Every measurement, as the JSON object ``c4lab bench --json`` prints;
    ``measured(name, by_board)`` is called as each of ``SECTIONS`` is done
    (the command prints its table then: a run stopped half-way has shown
    what it measured)."""
    runs: dict[str, Callable[[str], dict[str, Any]]] = {
        "playouts": lambda board: bench_playouts(board, seconds),
        "position_api": lambda board: bench_position_api(board, seconds / 2),
        "uct": bench_uct,
        "minimax": lambda board: bench_minimax(board, seconds / 2),
        "ntuple": lambda board: bench_training(board, seconds),
    }
    details: dict[str, dict[str, Any]] = {}
    for name in SECTIONS:
        details[name] = {board: runs[name](board) for board in BOARDS}
        if measured is not None:
            measured(name, details[name])
    playouts, api, uct, minimax, ntuple = (details[name] for name in SECTIONS)
    results: dict[str, Any] = {
        "playouts_per_s": {b: round(r["playouts_per_s"]) for b, r in playouts.items()},
        "position_ops_per_s": {b: round(r["ops_per_s"]) for b, r in api.items()},
        "uct_iterations_per_s": {b: round(r["iterations_per_s"]) for b, r in uct.items()},
        # One number (the classic board), and per board beside it.
        "minimax_nodes_per_s": round(minimax["7x6"]["nodes_per_s"]),
        "minimax_nodes_per_s_by_board": {b: round(r["nodes_per_s"]) for b, r in minimax.items()},
        "ntuple_training_games_per_s": {b: round(r["games_per_s"]) for b, r in ntuple.items()},
        "details": details,
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "numba": _numba_version(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
    }
    if c_reference:
        results["c_reference_playouts_per_s"] = bench_c_reference(seconds)
    return results


def _numba_version() -> str:
    import numba  # lazy: loaded already by the kernels; only the report's last line reads it

    return str(numba.__version__)


#: Each of ``SECTIONS``: its heading, and its line for one board's figures.
_TABLES: dict[str, tuple[str, Callable[[dict[str, Any]], str]]] = {
    "playouts": (
        "Random playouts (compiled kernel, one core, CPU time):",
        lambda r: (f"{r['playouts_per_s'] / 1e6:7.2f} M playouts/s  {r['moves_per_s'] / 1e6:7.1f} M moves/s  "
                   f"mean length {r['mean_length']:5.1f}  "
                   f"A {r['wins_a']:.1%} B {r['wins_b']:.1%} draw {r['draws']:.1%}  "
                   f"(median of 3 runs of {r['playouts']:,}: {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"),
    ),
    "position_api": (
        "Position API (legal_moves + play, pure Python caller):",
        lambda r: (f"{r['ops_per_s'] / 1e3:7.1f} k ops/s  "
                   f"(median of 3 runs of {r['ops']:,}: {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"),
    ),
    "uct": (
        "UCT iterations (plain UCT, random playouts, 100,000 iterations from the empty board):",
        lambda r: (f"{r['iterations_per_s'] / 1e6:7.2f} M iterations/s  "
                   f"(median of 5 runs: {r['cpu_s']:.3f} s CPU, {r['wall_s']:.3f} s wall)"),
    ),
    "minimax": (
        "Minimax (alpha-beta, iterative deepening from the empty board):",
        lambda r: (f"{r['nodes_per_s'] / 1e6:7.2f} M nodes/s  depth {r['depth']}  "
                   f"({r['nodes']:,} nodes, {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"),
    ),
    "ntuple": (
        "n-tuple TD training (self-play games, tuples of 8 cells, one core; the shipped network where there is one):",
        lambda r: (f"{r['games_per_s']:9,.0f} games/s  {r['tuples']:4} tuples  {r['cells_per_game']:5.1f} cells a game  "
                   f"(median of 3 runs of {r['games']:,}: {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"),
    ),
}


def section_lines(name: str, by_board: dict[str, Any]) -> list[str]:
    """The table of one of ``SECTIONS`` (its heading, a line per board)."""
    if name not in _TABLES:
        raise ValueError(f"no section {name!r}: the sections are {', '.join(SECTIONS)}")
    heading, line = _TABLES[name]
    return [heading, *(f"  {board:<10} {line(figures)}" for board, figures in by_board.items())]


def closing_lines(results: dict[str, Any]) -> list[str]:
    """What the report says after the sections: the C reference (``--c``), the machine."""
    lines: list[str] = []
    reference = results.get("c_reference_playouts_per_s")
    if reference:
        lines.append("C reference (bench_reference.c, gcc -O3 -march=native), the same playouts:")
        for board, engines in reference.items():
            ours = results["playouts_per_s"][board]
            for engine, rate in engines.items():
                lines.append(
                    f"  {board:<10} {engine:<9} {rate / 1e6:6.2f} M playouts/s   "
                    f"numba kernel / C = {ours / rate:.2f}"
                )
    m = results["machine"]
    lines.append(f"Python {m['python']}, numba {m['numba']}, numpy {m['numpy']}, {m['cpus']} CPUs")
    return lines


def report(results: dict[str, Any]) -> str:
    """The human-readable table of ``c4lab bench``: every section, then ``closing_lines``."""
    lines = [line for name in SECTIONS for line in section_lines(name, results["details"][name])]
    return "\n".join(lines + closing_lines(results))
