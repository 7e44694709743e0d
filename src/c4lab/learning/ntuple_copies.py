"""Training on copies of the network: rounds of self-play in other processes
(``processes``) or on a Ray cluster (``ray``), their changes merged.

The threads of ``Trainer`` share one table in one process, which only
scales to the cores of one machine.  Here each worker gets a copy of the
weights at the start of a round, plays ``ROUND`` games on it with the same
kernel (``ntuple_td.train_games``) and sends back what it changed, as a
sparse difference; the trainer adds the mean of the workers' differences
to the network and starts the next round from the result.

Measured on the classic board, two workers, 3 minutes each from a new
network, greedy value-keeping moves on 400 probe positions: one shared
table in two threads 87.5 % (1.79 M games); copies, the mean of their
changes 86.2 % (1.56 M games), with rounds of 2,000 games 84.8 % (1.02 M:
the copies cost more often); copies, the sum of their changes 67.5 %
(1.72 M games: where both copies moved a weight the same way, the sum
moves it twice, from weights a round old).  So threads on one machine,
copies to go beyond one.
"""

from __future__ import annotations

import multiprocessing
import signal
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from c4lab.learning import ntuple_td as T
from c4lab.rules import Position

#: Games a worker plays on its copy before the copies are merged.
ROUND = 20_000


@dataclass(frozen=True)
class Round:
    """One worker's share of a round: everything it needs but the weights."""

    variant: str  # the board's notation
    arrays: tuple[Any, ...]  # the network's layout arrays (``Network.arrays()[1:]``)
    games: int
    rng: int
    alpha: float
    epsilon: float
    learn_from_random: bool
    opening: int
    lam: float = 0.0  # lambda of the lambda-return (0: TD(0))
    early_plies: int = 0  # the first moves of a game that explore at least early_epsilon (``Options``)
    early_epsilon: float = 0.0


@dataclass(frozen=True)
class Change:
    """What a round did: the weights it changed (flat indices, differences),
    the worker's next random state and the kernel's counters."""

    index: np.ndarray  # int64
    delta: np.ndarray  # float32
    rng: int
    counters: np.ndarray


def play_round(task: Round, weights: np.ndarray) -> Change:
    """Play a round on a private copy of ``weights`` (in a worker process or
    a Ray task); return the sparse change."""
    copy = np.array(weights, dtype=np.float32, copy=True)
    geo, st = Position.parse(task.variant).kernel_arrays()
    counters = np.zeros(T.N_COUNTERS)
    rng = T.train_games(geo, st, copy, *task.arrays, task.games, np.uint64(task.rng),  # type: ignore[call-arg]  # numba's Dispatcher type
                        task.alpha, task.epsilon, task.learn_from_random, T.NO_TCL, 0.0, task.lam,
                        task.opening, task.early_plies, task.early_epsilon, counters)
    flat, base = copy.reshape(-1), np.asarray(weights, dtype=np.float32).reshape(-1)
    index = np.flatnonzero(flat != base)
    return Change(index, flat[index] - base[index], int(rng), counters)


def merge(weights: np.ndarray, changes: list[Change]) -> None:
    """Add the mean of the changes to ``weights`` (in place)."""
    flat = weights.reshape(-1)
    share = np.float32(1.0 / max(len(changes), 1))
    for change in changes:
        np.add.at(flat, change.index, change.delta * share)


class Copies(Protocol):
    """Runs one round of ``play_round`` per task and returns the changes."""

    workers: int

    def round(self, weights: np.ndarray, tasks: list[Round]) -> list[Change]: ...

    def close(self) -> None: ...


def _ignore_ctrl_c() -> None:
    """Workers leave Ctrl-C, and a SIGTERM or SIGHUP sent to the whole group
    (a scheduler, a closed terminal), to the trainer, which saves and stops
    them; a worker whose trainer is gone ends after its round."""
    from c4lab.ctrl_c import STOP_SIGNALS  # lazy: the worker's start-up

    for signum in STOP_SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


def _tracker_outlives_a_closed_terminal() -> None:
    """Start multiprocessing's resource tracker (the process that cleans up
    the pool's semaphores) with SIGHUP ignored, as it already ignores
    SIGINT and SIGTERM: a terminal closed under the run sends SIGHUP to the
    whole group, and a tracker it killed is started again, then prints a
    traceback for each semaphore the new one never saw.  The ignored
    disposition is inherited by the tracker's process; nothing else changes."""
    from multiprocessing import resource_tracker

    if not hasattr(signal, "SIGHUP") or threading.current_thread() is not threading.main_thread():
        resource_tracker.ensure_running()
        return
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        resource_tracker.ensure_running()
    finally:
        signal.signal(signal.SIGHUP, previous)


class ProcessCopies:
    """Rounds in ``workers`` local processes (the weights are sent to each;
    started by spawning: the trainer's process runs threads)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        _tracker_outlives_a_closed_terminal()
        self._pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=_ignore_ctrl_c)

    def round(self, weights: np.ndarray, tasks: list[Round]) -> list[Change]:
        futures: list[Future[Change]] = [self._pool.submit(play_round, t, weights) for t in tasks]
        return [f.result() for f in futures]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class RayCopies:
    """Rounds as Ray tasks (``address``: ``None`` starts a local Ray with
    ``workers`` CPUs; else the cluster there, checked first as the arena
    does).  The weights go to the object store once a round."""

    def __init__(self, workers: int, address: str | None = None) -> None:
        from c4lab.arena.executors import start_ray  # lazy: Ray only here

        self._ray, self._started = start_ray(address, workers)
        self.workers = workers
        self._remote = self._ray.remote(num_cpus=1)(play_round)

    def round(self, weights: np.ndarray, tasks: list[Round]) -> list[Change]:
        ref = self._ray.put(weights)
        return list(self._ray.get([self._remote.remote(t, ref) for t in tasks]))

    def close(self) -> None:
        if self._started:
            self._ray.shutdown()
            self._started = False


def make_copies(executor: str, workers: int, address: str | None = None) -> Copies:
    """``"processes"`` or ``"ray"``."""
    if executor == "processes":
        return ProcessCopies(workers)
    if executor == "ray":
        return RayCopies(workers, address)
    raise ValueError(f"unknown executor {executor!r} (threads, processes or ray)")


def start(copies: Copies, variant: str, arrays: tuple[Any, ...], weights: np.ndarray) -> None:
    """Start every worker of ``copies`` with a round of no games each: a
    process spawned, c4lab imported and the kernel loaded in it (5 s for
    two processes here; a Ray task's worker alike), so that a run's clock
    and schedule start with its first games.  What the round sends back
    is dropped (``variant``, ``arrays``: as in ``Round``)."""
    idle = Round(variant, arrays, 0, 1, 1.0, 0.0, False, 0)
    copies.round(weights, [idle] * copies.workers)


__all__ = ["ROUND", "Change", "Copies", "ProcessCopies", "RayCopies", "Round", "make_copies", "merge", "play_round",
           "start"]
