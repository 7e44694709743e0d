"""Compile every agent's kernels for every kind of board, once, ahead of play.

numba compiles a kernel the first time a process runs it and keeps it in its
cache on disk; later processes load it in milliseconds.  Without this, a
person meets the compiler at each first: the first ``master`` move on a new
kind of board takes 5 to 7 s on this project's 2-core machine, where a warm
one takes about 2 s.  ``c4lab prepare`` (:func:`prepare`) pays all of it at
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

A whole prepare leaves a stamp in the cache (:func:`mark_prepared`): what
it was made for, c4lab's sources as they are and numba's version.  ``c4lab
play`` and ``serve`` read it (:func:`wanted_in_background`): where it is
missing or out of date, they run the same work in the background once their
own warm-ups are done (:func:`prepare_everything`, in a child process at a
low priority), so that a person who started the game once meets the
compiler nowhere afterwards, in the page or on the command line.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import platform
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from c4lab import precompiled
from c4lab.agents.base import agent_infos, make_agent, warm_up
from c4lab.atomic import write_text
from c4lab.compile_aside import ENV as COMPILE_ASIDE
from c4lab.cores import usable_cores
from c4lab.rules import Position
from c4lab.rules import kernels as K

#: One board of each kind: one word or three (width x (height + 1) at most
#: 64 bits, or more), without a bonus cell or with one.  Two boards of one
#: word and two of three alternate, so that two workers start on boards whose
#: kernels differ.  The classic 7x6 must be one of them: the solver's lookup
#: in the classic opening database is compiled on that board only.
KIND_BOARDS: tuple[str, ...] = ("7x6", "9x8", "7x6/Bd1", "9x8/Bd1")

#: Options that run code of their own, prepared with their agent: alpha-beta
#: on the learnt network (``ntuple``'s default is greedy), and a UCT tree
#: kept between moves with a transposition table.  The other options tried
#: after a prepare compiled nothing (three moves each on 7x6 and 9x8/Xd3):
#: UCT's ``tt``, ``solver``, ``policy``, ``lgr``, ``reuse`` and ``final``,
#: ``master``'s ``depth`` and ``weights``, ``minimax``'s ``depth``,
#: ``ntuple``'s ``search`` and ``threads``.
VARIANTS: tuple[str, ...] = ("ntuple:depth=2", "uct:tt=true,reuse=true")

#: ``0``: ``c4lab play`` and ``serve`` leave the prepare to ``c4lab
#: prepare`` (by default they run it in the background where it was never
#: run whole for these sources: :func:`wanted_in_background`).
BACKGROUND_ENV = "C4LAB_PREPARE_IN_BACKGROUND"
#: The stamp's file name, in the folder of numba's cache of the rules' kernels.
STAMP = "c4lab-prepared"

#: The most worker processes by default: each takes about half a gigabyte
#: while it compiles, and beyond two or three most of the kernels are the
#: ones another worker is compiling too.
MAX_WORKERS = 4


@dataclass(frozen=True)
class Done:
    """One warm-up done: ``spec`` on ``board``, the kernels it compiled (``module.name(argument types)``; none: all were on disk
    already, or another worker had compiled them), and why the agent could
    not be made (``left_out``: ``qlearning`` needs its table), if so."""

    spec: str
    board: str
    compiled: frozenset[str] = frozenset()
    left_out: str | None = None


class PrepareError(RuntimeError):
    """A worker process ended before its warm-ups did (killed, or out of
    memory): the message names those left undone."""


def agent_names() -> list[str]:
    """Every registered agent that can be made here (its package present),
    in the registry's order; a person at the keyboard has nothing to
    compile and is left out."""
    return [info.name for info in agent_infos() if info.unavailable is None and info.name != "human"]


def with_variants(names: Iterable[str]) -> list[str]:
    """``names`` and the :data:`VARIANTS` of those agents, after them."""
    chosen = list(names)
    return chosen + [spec for spec in VARIANTS if spec.split(":", 1)[0] in chosen]


def plan(agents: Iterable[str], boards: Iterable[str] = KIND_BOARDS) -> list[tuple[str, str]]:
    """The warm-ups to run, ``(agent, board)`` (an agent's name or spec:
    :func:`with_variants`), in the order workers take
    them: the boards in pairs, the first one's agents forwards interleaved
    with the second one's backwards.  Two workers thus start on different
    agents on different kinds of board; a kernel both need (the levels'
    UCT search is one for every board) is compiled by the first and loaded
    from the cache by the second when it gets there later (when both reach
    it at once, both compile it: the rules' kernels, at their start).
    Measured on 2 cores: 33-36 s for the agents' defaults, against 53 s
    one after the other (43-47 s with :data:`VARIANTS`)."""
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


def _stamp_path() -> Path:
    """Where the stamp of a whole prepare is kept: beside the rules'
    kernels in numba's cache (so that a cache moved by ``NUMBA_CACHE_DIR``
    has its own)."""
    where = K.play_all.stats.cache_path
    if where is None:  # pragma: no cover - every kernel is compiled with cache=True
        raise OSError("numba keeps no cache of c4lab's kernels")
    return Path(where) / STAMP


def _stamp() -> str:
    """What a whole prepare covered: numba's and Python's versions, the
    machine, the agents, options and boards, and each of c4lab's source
    files by size and time of change, as numba's cache tells its entries
    out of date (a changed source, another numba: compiled again)."""
    import numba  # lazy: loaded with the kernels anyway

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    digest.update(f"{numba.__version__}\n{sys.version}\n{platform.machine()}\n".encode())
    digest.update(" ".join([*with_variants(agent_names()), *KIND_BOARDS]).encode())
    for path in sorted(package.rglob("*.py")):
        with contextlib.suppress(OSError):  # a file gone meanwhile: left out
            status = path.stat()
            digest.update(f"\n{path.relative_to(package)} {status.st_size} {status.st_mtime_ns}".encode())
    return digest.hexdigest()


def mark_prepared() -> None:
    """Say in the cache that every agent is prepared for these sources (a
    whole prepare that ended: ``c4lab prepare`` without ``--agent``, or
    :func:`prepare_everything`).  A cache that cannot be written is left
    as it is: the stamp only spares a later run."""
    with contextlib.suppress(OSError):
        write_text(_stamp_path(), _stamp() + "\n")


def is_prepared() -> bool:
    """Whether a whole prepare ran for these sources, this numba and these
    agents (:func:`mark_prepared`)."""
    try:
        return _stamp_path().read_text(encoding="ascii").strip() == _stamp()
    except (OSError, UnicodeDecodeError):
        return False


def wanted_in_background() -> bool:
    """Whether ``c4lab play`` or ``serve`` should prepare in the background:
    numba's compiler on, :data:`BACKGROUND_ENV` not ``0``, and no whole
    prepare for these sources yet (:func:`is_prepared`).  (The child is
    then started only where a core is free for it:
    ``compile_aside.enabled``.)"""
    from numba.core import config  # lazy: loaded with the kernels anyway

    if os.environ.get(BACKGROUND_ENV, "") == "0" or getattr(config, "DISABLE_JIT", False):
        return False
    return not is_prepared()


def prepare_everything() -> None:
    """Every agent with its options on every kind of board, in this process
    one after the other, then the stamp: the work of ``c4lab prepare``, as
    the child of a server runs it (``compile_aside``, at nice 10)."""
    prepare(plan(with_variants(agent_names())), jobs=1)
    mark_prepared()


def worker_count(jobs: int | None, tasks: int) -> int:
    """The worker processes for ``tasks`` warm-ups: ``jobs``, or one per
    usable core up to :data:`MAX_WORKERS`, and never more than the tasks."""
    return max(1, min(jobs or min(usable_cores(), MAX_WORKERS), tasks))


def prepare(
    tasks: list[tuple[str, str]], jobs: int | None = None, done: Callable[[Done], None] | None = None
) -> list[Done]:
    """Run ``tasks`` (:func:`plan`) in ``jobs`` worker processes
    (:func:`worker_count`; one: in this process), calling ``done`` as each
    ends, and return them all.  An agent that cannot be made with its
    defaults (``qlearning`` without a table) is ``left_out``; a warm-up that
    fails later (an agent that cannot play on that board, such as
    ``ntuple`` without a network for it) compiles what it reached and is
    counted like any other: the real move reports the error.  The workers
    compile nothing aside (``C4LAB_COMPILE_ASIDE=0``: they are the
    parallelism) and leave Ctrl-C to this process, which stops them.
    Raises :class:`PrepareError` when a worker dies."""
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
        with _in_this_process():
            for spec, board in tasks:
                yield _warm(spec, board)
        return
    import multiprocessing  # lazy: only a prepare with workers starts processes
    from concurrent.futures import ProcessPoolExecutor, as_completed
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn"), initializer=_quiet_worker)
    with _ctrl_c_ignored():  # the workers start with it ignored: a Ctrl-C as they start is this process's alone
        futures = {pool.submit(_warm, spec, board): (spec, board) for spec, board in tasks}
    try:
        for future in as_completed(futures):
            yield future.result()
    except BrokenProcessPool:
        undone = [f"{spec} on {board}" for future, (spec, board) in futures.items()
                  if not future.done() or future.cancelled() or future.exception() is not None]
        raise PrepareError(f"a worker process ended before its work did (killed, or out of memory?): "
                           f"{len(undone)} warm-ups not done ({', '.join(undone[:4])}{', ...' if len(undone) > 4 else ''})"
                           ) from None
    except BaseException:  # Ctrl-C, a stop signal: the workers end now, mid-compile (numba's cache stays whole)
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


@contextlib.contextmanager
def _ctrl_c_ignored() -> Iterator[None]:
    """SIGINT ignored within the block (in the main thread; elsewhere
    nothing changes): processes started then inherit it ignored."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def _in_this_process() -> Iterator[None]:
    """A worker's set-up (:func:`_quiet_worker`) for a prepare in this
    process, undone at the end: no child compiling aside meanwhile, and
    no shipped code."""
    before = {name: os.environ.get(name) for name in _WORKER_ENV}
    os.environ.update(_WORKER_ENV)
    _CompileLog.install()
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


#: A worker's environment: no child compiling aside (the workers are the
#: parallelism), and the kernels compiled for this CPU, not loaded from
#: the shipped cache for a baseline one (``c4lab.precompiled``).
_WORKER_ENV = {COMPILE_ASIDE: "0", precompiled.ENV: "0"}


def _quiet_worker() -> None:
    """A worker's set-up: no child compiling aside, no shipped code,
    Ctrl-C left to the parent, and numba's compiles logged (:func:`_warm`)."""
    os.environ.update(_WORKER_ENV)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _CompileLog.install()


def _warm(spec: str, board: str) -> Done:
    """``warm_up(spec, board)``, with the kernels it compiled; an
    agent that cannot be made with its defaults is left out, saying why."""
    try:
        make_agent(spec).close()
    except Exception as exc:  # noqa: BLE001  (any agent's refusal: said, not raised)
        return Done(spec, board, left_out=str(exc))
    before = len(_CompileLog.compiled)
    warm_up(spec, Position.parse(board))
    return Done(spec, board, frozenset(_CompileLog.compiled[before:]))


class _CompileLog:
    """The kernels of c4lab's own that numba compiled in this process, as
    ``module.name(argument types)`` (its ``numba:compile`` event; numba's
    overloads compiled inside them are not c4lab's)."""

    compiled: ClassVar[list[str]] = []
    _installed = False

    @classmethod
    def install(cls) -> None:
        if cls._installed:
            return
        from numba.core import event  # lazy: numba is loaded by the warm-ups anyway

        class Listener(event.Listener):
            def on_start(self, ev: event.Event) -> None:
                pass

            def on_end(self, ev: event.Event) -> None:
                compiled = ev.data.get("dispatcher")
                function = getattr(compiled, "py_func", None) or getattr(compiled, "_pyfunc", compiled)  # a jit function, a cfunc
                module = str(getattr(function, "__module__", ""))
                if module.startswith("c4lab"):
                    cls.compiled.append(f"{module}.{getattr(function, '__qualname__', '?')}{ev.data.get('args', '')}")

        event.register("numba:compile", Listener())
        cls._installed = True
