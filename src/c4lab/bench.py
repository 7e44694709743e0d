"""``c4lab bench``: how fast the rules engine is, measured on this machine.

Two measurements per board (the classic 7x6, and 12x12 with f4 forbidden):

* random playouts to the end of the game per second, through the compiled
  kernel (one core; a uniformly random non-full column each move; a win test
  after every move);
* play-plus-legal-moves operations per second through the public
  ``Position`` API (what a pure-Python caller gets).

Rates use the process's CPU time (``time.process_time``), so a busy machine
does not skew them; wall time is reported beside it.
"""

from __future__ import annotations

import os
import platform
import random
import time
from typing import Any, Callable

import numpy as np

from c4lab.rules import Position
from c4lab.rules import kernels as K

BOARDS = ("7x6", "12x12/Xf4")


def _timed(run: Callable[[int], int], seconds: float, first: int) -> dict[str, float]:
    """Call ``run(n)`` with growing ``n`` until it used ``seconds`` of CPU;
    return the totals of the final call (units counted by ``run``)."""
    n = first
    while True:
        cpu0, wall0 = time.process_time(), time.perf_counter()
        units = run(n)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if cpu >= seconds or n >= 1 << 40:
            return {"n": n, "units": units, "cpu_s": cpu, "wall_s": wall}
        n = max(n * 2, int(n * 1.2 * seconds / max(cpu, 1e-6)))


def bench_playouts(board: str, seconds: float, seed: int = 1) -> dict[str, float]:
    """Random playouts from the empty ``board`` through the kernel."""
    geo, start = Position.parse(board).kernel_arrays()
    K.playout_batch(geo, start, 10, seed)  # compile / load from the cache
    tokens = {}

    def run(n: int) -> int:
        a, b, d, t = K.playout_batch(geo, start, n, seed)
        tokens.update(a=a, b=b, d=d, t=t)
        return n

    m = _timed(run, seconds, 10_000)
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
    return {"ops": m["n"], "ops_per_s": m["n"] / m["cpu_s"], "cpu_s": m["cpu_s"], "wall_s": m["wall_s"]}


def run_benchmarks(seconds: float = 2.0) -> dict[str, Any]:
    """Every measurement, as the JSON object ``c4lab bench --json`` prints."""
    playouts = {board: bench_playouts(board, seconds) for board in BOARDS}
    api = {board: bench_position_api(board, seconds / 2) for board in BOARDS}
    return {
        "playouts_per_s": {b: round(r["playouts_per_s"]) for b, r in playouts.items()},
        "position_ops_per_s": {b: round(r["ops_per_s"]) for b, r in api.items()},
        "details": {"playouts": playouts, "position_api": api},
        "machine": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "numba": _numba_version(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
        },
    }


def _numba_version() -> str:
    import numba

    return str(numba.__version__)


def report(results: dict[str, Any]) -> str:
    """The human-readable table of ``c4lab bench``."""
    lines = ["Random playouts (compiled kernel, one core, CPU time):"]
    for board, r in results["details"]["playouts"].items():
        lines.append(
            f"  {board:<10} {r['playouts_per_s'] / 1e6:7.2f} M playouts/s  "
            f"{r['moves_per_s'] / 1e6:7.1f} M moves/s  mean length {r['mean_length']:5.1f}  "
            f"A {r['wins_a']:.1%} B {r['wins_b']:.1%} draw {r['draws']:.1%}  "
            f"({r['playouts']:,} playouts, {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"
        )
    lines.append("Position API (legal_moves + play, pure Python caller):")
    for board, r in results["details"]["position_api"].items():
        lines.append(
            f"  {board:<10} {r['ops_per_s'] / 1e3:7.1f} k ops/s  "
            f"({r['ops']:,} ops, {r['cpu_s']:.2f} s CPU, {r['wall_s']:.2f} s wall)"
        )
    m = results["machine"]
    lines.append(f"Python {m['python']}, numba {m['numba']}, numpy {m['numpy']}, {m['cpus']} CPUs")
    return "\n".join(lines)
