"""Where the games run: local processes, or a Ray cluster.

An executor takes ``PairTask``s and yields each task's two games as soon as
they are done (in whatever order they finish).  Both run the same
``play_pair`` (``c4lab.arena.games``) in their workers.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterable, Iterator
from multiprocessing.pool import Pool
from queue import Empty, SimpleQueue
from typing import Any, Protocol

from c4lab.arena.games import play_pair
from c4lab.arena.schedule import PairTask
from c4lab.cores import usable_cores
from c4lab.engine.client import stop_all
from c4lab.engine.tether import wait
from c4lab.rules.variant import integer

log = logging.getLogger(__name__)


class Executor(Protocol):
    """Runs pair tasks somewhere; ``close`` stops what has not started."""

    def run(self, tasks: Iterable[PairTask]) -> Iterator[tuple[PairTask, list[dict[str, Any]]]]: ...

    def close(self) -> None: ...


#: Jobs by default: all the cores this process may use.
default_jobs = usable_cores
#: Seconds between two looks, while no game ends, at whether a worker
#: process died with a task (the out-of-memory killer, a crash in compiled code).
WATCH_EVERY = 0.5


class WorkerLost(RuntimeError):
    """A worker process died twice with the same pair of games in hand: the
    run stops (the games saved stay; the same command resumes it)."""


#: In a worker: where it says which task it starts (``_worker_start``).
_started: Any = None


def _worker_start(started: Any = None) -> None:
    """Workers leave Ctrl-C to the parent, which stops them (``close``):
    otherwise each would die in the middle of its own game with a traceback.
    So do they the SIGHUP of a terminal closed under the run, sent to the
    whole group: killed by it, a worker would leave its engine programs
    running, and the parent would take it for a crash.  The parent stops them with SIGTERM (``Pool.terminate``), which would
    leave their engine programs running in sessions of their own: a worker
    kills those first (:func:`_worker_terminated`).  And a worker ends with
    the run that started it, however that ended (SIGKILL runs no cleanup
    of the run's): :func:`_end_with_the_run`.  ``started``: the queue on
    which a worker says which task it starts (``_play_numbered``)."""
    global _started
    _started = started
    # a worker's standard output is no part of the run's (the tables, --json's object): an agent's stray print()
    # goes to stderr, as in the run's own process (cli/arena.py) and in `c4lab engine`
    sys.stdout = sys.stderr
    threading.Thread(target=_end_with_the_run, args=(os.getppid(),), name="c4lab-run-watch", daemon=True).start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "SIGHUP"):
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _worker_terminated)


def _play_numbered(number: int, task: PairTask) -> tuple[PairTask, list[dict[str, Any]]]:
    """``play_pair(task)`` in a worker, after saying that this process took
    task ``number``: should the process die with it, the parent knows which
    games to play again."""
    if _started is not None:
        _started.put((number, os.getpid()))
    return play_pair(task)


def _end_with_the_run(run: int) -> None:
    """In a worker, on a thread of its own: wait until the process ``run``
    that started it has ended, then kill the worker's engine programs and
    exit.  A worker orphaned by a run killed with SIGKILL (or the
    out-of-memory killer) would otherwise play its pair to the end, a game
    with a hung engine waiting out the whole move limit, at a full core,
    for nobody, its engines with it (they end with the worker that started
    them: ``c4lab.engine.tether``).  The parent watched is the worker's:
    the run, which forks its workers (with a fork server, the server, which
    ends with the run)."""
    wait(run)
    stop_all()
    os._exit(1)


def _worker_terminated(signum: int, _frame: object) -> None:
    """SIGTERM in a worker: kill the engine programs it runs (with what
    they started), then exit at once.  Not by ``SystemExit``: the game
    loop takes that for an agent's own ``sys.exit`` (a forfeit), and the
    worker would record a game nobody lost and go on."""
    stop_all()
    os._exit(128 + signum)


class LocalExecutor:
    """A pool of ``jobs`` local processes (``jobs=1``: this process, which
    keeps tracebacks and debuggers simple; ``None``: one a core).  Any
    other ``jobs`` than an integer of 1 or more is a ``ValueError`` naming
    it."""

    def __init__(self, jobs: int | None = None) -> None:
        self.jobs = checked_jobs(jobs, "LocalExecutor") or default_jobs()
        self._pool: Pool | None = None
        self._finished = False

    def run(self, tasks: Iterable[PairTask]) -> Iterator[tuple[PairTask, list[dict[str, Any]]]]:
        """Each task's games as they end.  A worker process that dies with a
        task (``kill -9``, the out-of-memory killer, a crash in compiled
        code) is replaced by the pool, but its task would never come back
        and the run would wait for ever: its pair is played again, once; a
        second death with the same pair stops the run (``WorkerLost``)."""
        if self.jobs == 1:
            for task in tasks:
                yield play_pair(task)
            return
        started: Any = multiprocessing.SimpleQueue()  # (number, pid) from the workers
        self._pool = pool = Pool(self.jobs, initializer=_worker_start, initargs=(started,))
        done: SimpleQueue[tuple[int, bool, Any]] = SimpleQueue()
        queue = list(enumerate(tasks))
        queue.reverse()
        pending: dict[int, PairTask] = {}  # in flight, by number
        holder: dict[int, int] = {}  # a started task's worker process
        lost: set[int] = set()  # tasks whose worker died once already

        def submit(number: int, task: PairTask) -> None:
            pending[number] = task
            pool.apply_async(
                _play_numbered, (number, task),
                callback=lambda result: done.put((number, True, result)),
                error_callback=lambda error: done.put((number, False, error)),
            )

        # Keep a few tasks per worker in flight, not the whole run: an early
        # stop (SPRT, Ctrl-C) then wastes little.
        while queue or pending:
            while queue and len(pending) < 2 * self.jobs:
                submit(*queue.pop())
            try:
                number, ok, value = done.get(timeout=WATCH_EVERY)
            except Empty:
                for number in _orphans(pool, started, pending, holder):
                    task = pending[number]
                    if number in lost:
                        raise WorkerLost(
                            f"a worker process died twice playing pair {task.pair + 1} of {task.first} against "
                            f"{task.second} from {task.start}: the run stops (the same command resumes it)"
                        )
                    lost.add(number)
                    holder.pop(number, None)
                    log.warning("a worker process died playing pair %d of %s against %s: played again",
                                task.pair + 1, task.first, task.second)
                    submit(number, task)
                continue
            if pending.pop(number, None) is None:  # a pair played again whose first try came back after all
                continue
            holder.pop(number, None)
            if not ok:
                raise value
            yield value
        # A pool that lost a task still counts it as pending, and its join would wait for it for ever:
        # such a pool is stopped (``close``), not waited for.
        self._finished = not lost

    def close(self) -> None:
        """Stop the workers: at once if the run did not finish (an early
        stop, Ctrl-C, an error), since the games in flight are not wanted."""
        if self._pool is not None:
            if self._finished:
                self._pool.close()
                self._pool.join()
            else:  # (a terminated pool has joined its threads and processes: no join, which has no bound)
                _terminate(self._pool)
            self._pool = None


def _orphans(pool: Pool, started: Any, pending: dict[int, PairTask], holder: dict[int, int]) -> list[int]:
    """The tasks in flight whose worker process has died (the pool replaces
    the process, not its task), after reading which worker took which
    task (``holder``)."""
    while not started.empty():
        number, pid = started.get()
        holder[number] = pid
    alive = {worker.pid for worker in list(getattr(pool, "_pool", [])) if worker.exitcode is None}
    return [number for number, pid in holder.items() if number in pending and pid not in alive]


#: Seconds a worker has to end after its SIGTERM before it is killed.
STOP_GRACE = 10.0


def _terminate(pool: Pool) -> None:
    """``pool.terminate()``, which sends each worker SIGTERM and then waits
    for every one of them; a worker still alive ``STOP_GRACE`` seconds on
    is killed (SIGKILL).  Seen once in the test suite: after an early stop
    (SPRT) one worker of two stayed blocked on the task queue's lock, which
    ``terminate`` holds, without having ended at its SIGTERM, and
    ``terminate`` waited for it forever (a SIGTERM sent by hand then ended
    it).  A worker killed this way does not stop its engine programs, as
    one that ends at its SIGTERM does (``_worker_terminated``); on Linux
    their tethers do (``c4lab.engine.tether``).  The wait
    after the kill is bounded as well (once, in a test run, a stop hung
    with no worker left: the pool's own threads, not a process, held it);
    the thread that stops the pool is a daemon, left to end alone."""
    stopper = threading.Thread(target=pool.terminate, name="c4lab-arena-stop", daemon=True)
    stopper.start()
    stopper.join(STOP_GRACE)
    if stopper.is_alive():
        for worker in list(getattr(pool, "_pool", [])):  # the pool's processes (no public name for them)
            if worker.exitcode is None:
                logging.getLogger(__name__).warning("arena worker %s did not end at SIGTERM: killed", worker.pid)
                worker.kill()
        stopper.join(STOP_GRACE)  # bounded too: a run that has stopped its workers must come back
        if stopper.is_alive():
            logging.getLogger(__name__).warning("the arena's pool did not finish stopping: left to end alone")


#: Seconds to wait for a Ray cluster's address to accept a connection and answer.
RAY_CONNECT_TIMEOUT = 5.0

#: HTTP/2's client preface and an empty SETTINGS frame: what a gRPC client
#: sends first.  Ray's head (GCS) and its client server (``ray://``) speak
#: gRPC, so they answer with a SETTINGS frame of their own.
_H2_HELLO = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4  # the type byte of a SETTINGS frame (the fourth of its 9-byte header)


def check_ray_address(address: str, timeout: float = RAY_CONNECT_TIMEOUT) -> None:
    """A ``HOST:PORT`` (or ``ray://HOST:PORT``) that nothing answers at, or
    where something that does not speak gRPC listens (a web server, a
    database, a silent socket), is a ValueError within ``timeout`` s.
    ``ray.init`` would instead retry for minutes, printing only its own
    warnings (about the node's address, not the one given), or hang.
    ``auto`` and ``local`` are Ray's to resolve."""
    if address in ("auto", "local"):
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not host or not port.isdigit():
        raise ValueError(f"--ray-address {address!r} is not HOST:PORT, ray://HOST:PORT or auto")
    try:
        conn = socket.create_connection((host.strip("[]"), int(port)), timeout=timeout)
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else exc.strerror or str(exc)
        raise ValueError(f"--ray-address {address}: no Ray cluster answers there ({why})") from None
    head = b""
    with conn:
        try:
            conn.sendall(_H2_HELLO)
            while len(head) < 9 and (chunk := conn.recv(9 - len(head))):
                head += chunk
        except OSError:  # silence until the timeout, or the peer hung up: ``head`` holds what came
            pass
    if len(head) < 9 or head[3] != _H2_SETTINGS:
        what = "it says nothing" if not head else "it does not speak gRPC"
        raise ValueError(f"--ray-address {address}: something listens there, but not a Ray cluster ({what})")


def ray_available() -> Any:
    """The ``ray`` module; a ValueError that says how to install it where
    it is not (checked before a command's long preparations)."""
    try:
        import ray
    except ImportError:
        # Not "pip install 'c4lab[ray]'": c4lab is installed from its folder
        # (docs/experiments.md), and that line would ask the package index.
        raise ValueError(
            "--executor ray needs Ray: python3 -m pip install -e '.[ray]' in c4lab's folder"
        ) from None
    return ray


def start_ray(address: str | None, cpus: int) -> tuple[Any, bool]:
    """Ray, connected to the cluster at ``address`` (checked first: see
    :func:`check_ray_address`) or to a new local instance with ``cpus``
    CPUs when ``address`` is ``None``; and whether this call started it
    (the caller then shuts it down).  Needs the optional extra ``ray`` (``pip install -e '.[ray]'``)."""
    ray = ray_available()
    if address:
        check_ray_address(address)
    if ray.is_initialized():
        return ray, False
    kwargs: dict[str, Any] = {"address": address} if address else {"num_cpus": cpus}
    try:
        ray.init(include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False, **kwargs)
    except (ConnectionError, RuntimeError) as exc:  # something answers there, but not a Ray cluster
        where = f"--ray-address {address}" if address else "a local Ray"
        raise ValueError(f"{where}: Ray could not start or join a cluster ({str(exc).splitlines()[0]})") from None
    return ray, True


def checked_jobs(jobs: object, executor: str) -> int | None:
    """An executor's ``jobs`` as an ``int`` of 1 or more (NumPy's integers
    too), or ``None`` (one a core); anything else is a ``ValueError`` naming
    ``executor``'s ``jobs``."""
    if jobs is None:
        return None
    try:
        count = integer(jobs, f"{executor}: jobs")
    except ValueError as exc:
        raise ValueError(f"{exc} (1 or more; None: one a core)") from None
    if count < 1:
        raise ValueError(f"{executor}: jobs must be at least 1 (None: one a core), not {count}")
    return count


class RayExecutor:
    """The same runner on a Ray cluster (``address``: ``None`` starts a
    local Ray instance; ``"auto"`` joins the cluster this machine is in; an
    address nothing answers at is a ValueError at once, see
    :func:`check_ray_address`).  Needs the optional extra ``ray`` (``pip install -e '.[ray]'``)."""

    def __init__(self, address: str | None = None, jobs: int | None = None) -> None:
        self._ray, self._started = start_ray(address, checked_jobs(jobs, "RayExecutor") or default_jobs())
        ray = self._ray
        self.jobs = int(ray.cluster_resources().get("CPU", 1))
        self._remote = ray.remote(num_cpus=1)(play_pair)
        self._pending: list[Any] = []

    def run(self, tasks: Iterable[PairTask]) -> Iterator[tuple[PairTask, list[dict[str, Any]]]]:
        ray = self._ray
        queue = list(tasks)
        queue.reverse()
        while queue or self._pending:
            while queue and len(self._pending) < 2 * self.jobs:
                self._pending.append(self._remote.remote(queue.pop()))
            done, self._pending = ray.wait(self._pending, num_returns=1)
            for ref in done:
                yield ray.get(ref)

    def close(self) -> None:
        for ref in self._pending:
            self._ray.cancel(ref, force=True)
        self._pending = []
        if self._started:
            self._ray.shutdown()
            self._started = False


def make_executor(name: str, jobs: int | None = None, address: str | None = None) -> Executor:
    """``"local"`` or ``"ray"``."""
    if name == "local":
        return LocalExecutor(jobs)
    if name == "ray":
        return RayExecutor(address, jobs)
    raise ValueError(f"unknown executor {name!r} (local or ray)")
