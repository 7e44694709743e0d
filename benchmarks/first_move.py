"""How long the first move takes with an empty numba cache, and then warm.

    python3 benchmarks/first_move.py [--warm-runs 3]

Each command runs as a fresh process (``python3 -m c4lab ...``) twice: cold,
with ``NUMBA_CACHE_DIR`` pointing at a new empty temporary directory (the
user's own cache is neither read nor copied), then warm, with the cache that
first run left behind.  Every command gets its own directory, so one
command's compilations never warm another's.  Prints wall and CPU seconds
(user + system of the child process) for each; on a shared machine the CPU
figure is the steadier one.  The c4lab that runs is the one this Python
imports (set ``PYTHONPATH`` to measure a source tree).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

COMMANDS = {
    "move 7x6 --agent hard": ["move", "7x6", "--agent", "hard"],
    "move 7x6 --agent master": ["move", "7x6", "--agent", "master"],
    "show 7x6": ["show", "7x6"],
}


def run(args: list[str], cache_dir: str) -> tuple[float, float]:
    """Run ``python3 -m c4lab ARGS`` with ``cache_dir`` as numba's cache;
    (wall seconds, CPU seconds of the child)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    start = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-m", "c4lab", *args], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"c4lab {' '.join(args)} failed (exit {child.returncode})")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warm-runs", type=int, default=3, help="warm runs per command (the fastest is shown)")
    parser.add_argument("--only", choices=sorted(COMMANDS), action="append", help="run only these commands")
    args = parser.parse_args()

    names = args.only or list(COMMANDS)
    print(f"{'command':30} {'cold wall':>10} {'cold CPU':>9} {'warm wall':>10} {'warm CPU':>9}")
    for name in names:
        with tempfile.TemporaryDirectory(prefix="c4lab-numba-") as cache_dir:
            cold = run(COMMANDS[name], cache_dir)
            warm = min((run(COMMANDS[name], cache_dir) for _ in range(max(1, args.warm_runs))), key=lambda r: r[1])
        print(f"c4lab {name:24} {cold[0]:9.2f}s {cold[1]:8.2f}s {warm[0]:9.2f}s {warm[1]:8.2f}s", flush=True)


if __name__ == "__main__":
    main()
