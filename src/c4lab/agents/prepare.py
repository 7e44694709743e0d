"""Compile every agent's kernels for every kind of board, once, ahead of play.

numba compiles a kernel the first time a process runs it and keeps it in its
cache on disk; later processes load it in milliseconds.  Without this, a
person meets the compiler at each first: the first ``master`` move on a new
kind of board takes 5 to 7 s on this project's 2-core machine, where a warm
one takes under 2 s.  ``c4lab prepare`` (:func:`prepare`) pays all of it at
once, after an install, the way pip compiles Python's bytecode at install
time: every agent's warm-up (``agents.base.warm_up``: the throwaway moves
and ``compile_rest``) on one board of each kind (:data:`KIND_BOARDS`), in
worker processes on the machine's cores.

The kernels are compiled once per *kind* of board, not per board: the rules'
win test and the exact solver use one 64-bit word where the board fits in one
and three words where it does not, and a bonus cell has paths of its own.
Sizes, forbidden cells and the bonus cell's place are read at run time.  So
the four boards of :data:`KIND_BOARDS` cover every board from 4x4 to 12x12
(a test plays first moves on boards of every kind after a prepare and
counts the compiles: none).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from c4lab.agents.base import agent_infos, warm_up
from c4lab.cores import usable_cores
from c4lab.rules import Position
from c4lab.rules import kernels as K

#: One board of each kind: one word or three (width x (height + 1) at most
#: 64 bits, or more), without a bonus cell or with one.  Two boards of one word and two
#: of three alternate, so that two workers start on boards whose kernels
#: differ.
KIND_BOARDS: tuple[str, ...] = ("7x6", "9x8", "7x6/Bd1", "9x8/Bd1")


@dataclass(frozen=True)
class Done:
    """One warm-up done: ``spec`` on ``board``, its wall seconds, and how many
    of c4lab's functions it compiled (0: all were on disk already, or
    another worker compiled them first)."""

    spec: str
    board: str
    seconds: float
    compiled: int


def agent_names() -> list[str]:
    """Every registered agent that can be made here (its package present),
    in the registry's order; a person at the keyboard has nothing to
    compile and is left out."""
    return [info.name for info in agent_infos() if info.unavailable is None and info.name != "human"]


def plan(agents: Iterable[str], boards: Iterable[str] = KIND_BOARDS) -> list[tuple[str, str]]:
    """The warm-ups to run, ``(agent, board)``, in the order workers take
    them: the boards in pairs, the first one's agents forwards interleaved
    with the second one's backwards.  Two workers thus start on different
    agents on different kinds of board; a kernel both need (the levels'
    UCT search is one for every board) is compiled by the first and loaded
    from the cache by the second when it gets there (measured on 2 cores:
    35 s for the whole plan, against 53 s one after the other)."""
    names = list(agents)
    kinds = list(boards)
    tasks: list[tuple[str, str]] = []
    for first, second in zip(kinds[::2], kinds[1::2]):
        forwards = [(name, first) for name in names]
        backwards = [(name, second) for name in reversed(names)]
        tasks += [task for pair in zip(forwards, backwards) for task in pair]
    if len(kinds) % 2:
        tasks += [(name, kinds[-1]) for name in names]
    return tasks


def cache_location() -> str:
    """Where numba keeps c4lab's compiled kernels: the ``__pycache__``
    folders beside its sources, or a folder of numba's own
    (``NUMBA_CACHE_DIR``, or its user-wide cache where the sources' folders
    cannot be written)."""
    where = K.play_all.stats.cache_path
    if where is None:  # pragma: no cover - every kernel is compiled with cache=True
        return "numba's default place"
    path = Path(where)
    package = Path(__file__).resolve().parent.parent  # c4lab, whose folders hold the kernels
    if path.name == "__pycache__" and package in path.resolve().parents:
        return f"the __pycache__ folders beside c4lab's sources in {package}"
    return str(path.parent)


def worker_count(jobs: int | None, tasks: int) -> int:
    """The worker processes for ``tasks`` warm-ups: ``jobs``, or one per
    usable core, and never more than the tasks."""
    return max(1, min(jobs or usable_cores(), tasks))


def prepare(
    tasks: list[tuple[str, str]], jobs: int | None = None, done: Callable[[Done], None] | None = None
) -> list[Done]:
    """Run ``tasks`` (:func:`plan`) in ``jobs`` worker processes (the usable
    cores by default; one: in this process), calling ``done`` as each ends,
    and return them all.  A warm-up that fails (an agent that cannot play on
    that board, such as ``ntuple`` without a network for it) compiles what it
    reached and is counted like any other: the real move reports the error.
    The workers compile nothing aside (``C4LAB_COMPILE_ASIDE=0``: they are
    the parallelism) and leave Ctrl-C to this process, which stops them."""
    jobs = worker_count(jobs, len(tasks))
    results: list[Done] = []
    for one in _run(tasks, jobs):
        results.append(one)
        if done is not None:
            done(one)
    return results


def _run(tasks: list[tuple[str, str]], jobs: int) -> Iterator[Done]:
    """Each task's :class:`Done` as it ends: here with one job, else from a
    pool of ``jobs`` fresh processes (spawned: a fork would copy this
    process's numba state and threads)."""
    if jobs == 1:
        _quiet_worker(ignore_ctrl_c=False)
        for spec, board in tasks:
            yield _warm(spec, board)
        return
    import multiprocessing  # lazy: only a prepare with workers starts processes

    pool = multiprocessing.get_context("spawn").Pool(jobs, initializer=_quiet_worker)
    try:
        yield from pool.imap_unordered(_warm_task, tasks)
    except BaseException:
        pool.terminate()  # Ctrl-C or an error here: the workers stop now, mid-compile (numba's cache stays whole)
        raise
    else:
        pool.close()
    finally:
        pool.join()


def _quiet_worker(ignore_ctrl_c: bool = True) -> None:
    """A worker's set-up: no child compiling aside, Ctrl-C left to the
    parent, and numba's compile events counted (:func:`_warm`)."""
    os.environ["C4LAB_COMPILE_ASIDE"] = "0"
    if ignore_ctrl_c:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CompileCount.install()


def _warm_task(task: tuple[str, str]) -> Done:
    return _warm(*task)


def _warm(spec: str, board: str) -> Done:
    """``warm_up(spec, board)``, timed, with the compiles it did."""
    before = _CompileCount.count
    start = time.monotonic()
    warm_up(spec, Position.parse(board))
    return Done(spec, board, time.monotonic() - start, _CompileCount.count - before)


class _CompileCount:
    """How many of c4lab's own functions numba compiled in this process
    (its ``numba:compile`` event; numba's overloads compiled inside them are
    not counted)."""

    count = 0
    _installed = False

    @classmethod
    def install(cls) -> None:
        if cls._installed:
            return
        from numba.core import event  # lazy: numba is loaded by the workers' warm-ups anyway

        class Listener(event.Listener):
            def on_start(self, ev: event.Event) -> None:
                pass

            def on_end(self, ev: event.Event) -> None:
                compiled = ev.data.get("dispatcher")
                function = getattr(compiled, "py_func", None) or getattr(compiled, "_pyfunc", compiled)  # a jit function, a cfunc
                if str(getattr(function, "__module__", "")).startswith("c4lab"):
                    cls.count += 1

        event.register("numba:compile", Listener())
        cls._installed = True
