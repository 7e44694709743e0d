"""How long a first move takes: with an empty numba cache, after another
command filled it, and warm.

    python3 benchmarks/first_move.py [--warm-runs 3] [--cold-runs 1] [--only NAME ...]

Each case is a sequence of commands, each run as a fresh process
(``python3 -m c4lab ...``), all sharing one ``NUMBA_CACHE_DIR``, a new empty
temporary directory per case (the user's own cache is neither read nor
copied, and one case never warms another).  The *first* commands of a case
prepare its cache (``move 7x6 --agent hard``: what a person has already
run); the last one is measured twice: *cold*, on the cache the earlier ones
left (empty when there are none), then *warm*, with the cache that first run
left behind (the fastest of ``--warm-runs``).  The cases are the goals of
issue 27:

* ``master 9x8/Xd3`` and ``master 7x6``: the first ``master`` move on a board
  (goal: at most 5 s, hoped 2 s), on an empty cache, and ``master
  9x8/Xd3:dd`` on a position with moves (reading it plays them); after ``hard``, on
  9x8/Xd3, 6x5/Xc2 (small enough for the solver's probe) and 12x12/Xf4/Bc2;
* ``solve 6x5/Xc2 after hard``: the first exact answer on a board of a new
  kind, after ``hard`` was compiled on 7x6 (goal: at most 3 s), and
  ``perfect 6x5/Xc2:dc after hard``: the first exact move there (a
  position with moves: reading it compiles the kernels that play moves);
* ``hard 9x8/Xd3 after hard``: a level's first move on a second kind of
  board (goal: at most 3 s);
* ``hard 7x6``: the first move after an install, the README's figure;
* ``ntuple-puct 7x6 after hard`` and ``ntuple alpha-beta 7x6 after hard``:
  the learnt network's first move with each of its searches (no goal);
* ``prepare``: ``c4lab prepare`` itself, every agent compiled on every kind
  of board, and the first moves after it (``master 9x8/Xd3 after prepare``,
  ``master 12x12/Xf4/Bc2 after prepare``, ``solve 6x5/Xc2 after prepare``):
  what a person who ran it after the install waits.

The environment is passed on: where the kernels shipped compiled are used
(``c4lab.precompiled``), a cold run loads them; with
``C4LAB_PRECOMPILED=0`` it measures a first start that compiles them.

A command may leave a child compiling ahead when it ends (``hard`` the
solver, ``c4lab.compile_aside``); the next command of the case starts at
once, as in a script, so the figure after it counts whatever of that
child's work was left.  But each cold run of a case, and the warm runs
after it, start only once every process the earlier commands left has
ended (each command runs in a session of its own, which this script
waits to empty): a child still compiling for the case before would
otherwise take a core from the one measured (it made the very first
``master`` move on 9x8/Xd3, measured right after ``master 7x6``, 0.5 s
slower).

Prints wall and CPU seconds (user + system of the child process and of the
processes it waited for: a ``master`` that compiles UCT in a second process,
``c4lab.compile_aside``, counts both when it waits for it to end; a
first timed ``master`` move waits for the child's minimax only, and then
the child's last work, the rules' ``play``, is left out) for each; on a shared machine the CPU
figure is the steadier one, on an idle one the wall figure is what a person
waits.  The c4lab that runs
is the one this Python imports (set ``PYTHONPATH`` to measure a source tree).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time

from c4lab.ctrl_c import run_stoppable

HARD_7X6 = ["move", "7x6", "--agent", "hard"]
PREPARE = ["prepare"]

#: name: (the commands that fill the cache first, the command measured).
CASES: dict[str, tuple[list[list[str]], list[str]]] = {
    "hard 7x6": ([], HARD_7X6),
    "master 7x6": ([], ["move", "7x6", "--agent", "master"]),
    "master 9x8/Xd3": ([], ["move", "9x8/Xd3", "--agent", "master"]),
    "master 9x8/Xd3:dd": ([], ["move", "9x8/Xd3:dd", "--agent", "master"]),
    "master 9x8/Xd3 after hard": ([HARD_7X6], ["move", "9x8/Xd3", "--agent", "master"]),
    "master 6x5/Xc2 after hard": ([HARD_7X6], ["move", "6x5/Xc2", "--agent", "master"]),
    "master 12x12/Xf4/Bc2 after hard": ([HARD_7X6], ["move", "12x12/Xf4/Bc2", "--agent", "master"]),
    "solve 6x5/Xc2": ([], ["solve", "6x5/Xc2"]),
    "solve 6x5/Xc2 after hard": ([HARD_7X6], ["solve", "6x5/Xc2"]),
    "solve --analyse 6x5/Xc2": ([], ["solve", "--analyse", "6x5/Xc2"]),
    "perfect 6x5/Xc2:dc after hard": ([HARD_7X6], ["move", "6x5/Xc2:dc", "--agent", "perfect"]),
    "perfect 6x5/Xc2:dc": ([], ["move", "6x5/Xc2:dc", "--agent", "perfect"]),
    "hard 9x8/Xd3 after hard": ([HARD_7X6], ["move", "9x8/Xd3", "--agent", "hard"]),
    "hard 8x7/Bc1 after hard": ([HARD_7X6], ["move", "8x7/Bc1", "--agent", "hard"]),
    "show 7x6": ([], ["show", "7x6"]),
    "ntuple-puct 7x6 after hard": ([HARD_7X6], ["move", "7x6:dd", "--agent", "ntuple-puct"]),
    "ntuple alpha-beta 7x6 after hard": ([HARD_7X6], ["move", "7x6:dd", "--agent", "ntuple:depth=3"]),
    "prepare": ([], PREPARE),
    "master 9x8/Xd3 after prepare": ([PREPARE], ["move", "9x8/Xd3", "--agent", "master"]),
    "master 12x12/Xf4/Bc2 after prepare": ([PREPARE], ["move", "12x12/Xf4/Bc2", "--agent", "master"]),
    "solve 6x5/Xc2 after prepare": ([PREPARE], ["solve", "6x5/Xc2"]),
}


#: The sessions of the commands run so far whose processes may still run
#: (a command's children compiling ahead).
_sessions: list[int] = []

#: The signals that stop this script (``run_stoppable``).
_STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}

#: How long :func:`settle` waits for them before it ends them.
SETTLE_LIMIT = 120.0


def _alive(session: int) -> bool:
    try:
        os.killpg(session, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a reused group id of someone else's
        return False
    return True


def settle() -> None:
    """Wait until every process the commands run so far left behind has
    ended (at most ``SETTLE_LIMIT`` seconds; then end them)."""
    deadline = time.monotonic() + SETTLE_LIMIT
    while _sessions:
        if not _alive(_sessions[0]):
            _sessions.pop(0)
        elif time.monotonic() > deadline:
            os.killpg(_sessions.pop(0), signal.SIGKILL)
        else:
            time.sleep(0.05)


def run(args: list[str], cache_dir: str) -> tuple[float, float]:
    """Run ``python3 -m c4lab ARGS`` with ``cache_dir`` as numba's cache, in
    a session of its own; (wall seconds, CPU seconds of the child).  Its
    stderr (a notice, ``prepare``'s progress) is shown only if it fails."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    with tempfile.TemporaryFile() as errors:
        # A stop while the command starts would leave it running, unknown here:
        # held until it is known (its session ended with this script below).
        unmasked = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
        try:
            start = time.perf_counter()
            child = subprocess.Popen([sys.executable, "-m", "c4lab", *args], env=env, stdout=subprocess.DEVNULL,
                                     stderr=errors, start_new_session=True)
        except BaseException:
            signal.pthread_sigmask(signal.SIG_SETMASK, unmasked)
            raise
        _sessions.append(child.pid)
        try:
            signal.pthread_sigmask(signal.SIG_SETMASK, unmasked)
            _, status, usage = os.wait4(child.pid, 0)
        except BaseException:  # a stop (run_stoppable): the command measured and its children end with this script
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait()
            raise
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        errors.seek(0)
        said = errors.read().decode(errors="replace").strip()
        if child.returncode != 0:
            raise SystemExit(f"c4lab {' '.join(args)} failed (exit {child.returncode})" + (f": {said}" if said else ""))
        return wall, usage.ru_utime + usage.ru_stime


def _span(values: list[float]) -> str:
    """``1.23s``, or ``1.23-1.45s`` for the range of several runs."""
    low, high = min(values), max(values)
    return f"{low:.2f}s" if len(values) == 1 else f"{low:.2f}-{high:.2f}s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--warm-runs", type=int, default=3, help="warm runs per case (the fastest is shown)")
    parser.add_argument("--cold-runs", type=int, default=1,
                        help="times each case is run on a new empty cache (the range is shown: on a machine "
                             "whose speed wanders, run several)")
    # One --only with several names, as the usage line shows, or one --only a name.
    parser.add_argument("--only", choices=sorted(CASES), nargs="+", action="extend", metavar="NAME",
                        help="run only these cases, each name quoted (one or more: "
                             + ", ".join(f"'{name}'" for name in sorted(CASES)) + ")")
    args = parser.parse_args()
    for option, value in (("--warm-runs", args.warm_runs), ("--cold-runs", args.cold_runs)):
        if value < 1:
            parser.error(f"{option} must be 1 or more, got {value}")

    names = args.only or list(CASES)
    width = 11 if args.cold_runs == 1 else 14
    names_width = max(len("case"), *(len(name) for name in names))
    print(f"{'case':{names_width}} {'cold wall':>{width}} {'cold CPU':>{width}} {'warm wall':>10} {'warm CPU':>9}")
    for name in names:
        before, measured = CASES[name]
        colds: list[tuple[float, float]] = []
        warms: list[tuple[float, float]] = []
        for _ in range(args.cold_runs):
            settle()
            with tempfile.TemporaryDirectory(prefix="c4lab-numba-") as cache_dir:
                for command in before:
                    run(command, cache_dir)
                colds.append(run(measured, cache_dir))
                for _ in range(args.warm_runs):
                    settle()
                    warms.append(run(measured, cache_dir))
                settle()  # nothing writes into the cache folder as it is removed
        warm = min(warms, key=lambda r: r[1])
        cold_wall, cold_cpu = _span([c[0] for c in colds]), _span([c[1] for c in colds])
        print(f"{name:{names_width}} {cold_wall:>{width}} {cold_cpu:>{width}} {warm[0]:9.2f}s {warm[1]:8.2f}s", flush=True)


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, the children ended (the finally blocks)
