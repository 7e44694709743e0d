"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib
import importlib.util
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest

from testkit import one_at_a_time

#: The most workers ``-n auto`` starts: each compiles and holds numba's
#: kernels (a few hundred MB), and past four the suite's longest tests, not
#: the number of workers, set its time.
MOST_WORKERS = 4

# Kaggle's package, pinned; installed without its dependencies (its list pulls
# in gigabytes that ConnectX never uses). What ConnectX does import beyond our
# own dependencies (jsonschema, requests) comes with the ``kaggle`` extra.
KAGGLE_ENVIRONMENTS = "kaggle-environments==1.33.2"

# The servers the tests start (``c4lab play`` and ``serve``, in processes or
# threads) do not start the whole prepare in the background when their own
# warm-ups are done: a minute of compiling beside the suite, for each test
# that keeps one open long enough.  The tests of that prepare turn it on.
os.environ.setdefault("C4LAB_PREPARE_IN_BACKGROUND", "0")

# The suite compiles the kernels for this machine's CPU, as before there was
# shipped code: its tests of numba's cache, of compiling aside and of the
# first start count what is compiled.  The tests of the shipped code
# (``tests/test_precompiled.py``) turn it on in the processes they start.
os.environ.setdefault("C4LAB_PRECOMPILED", "0")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the suite's default): a worker for each core this
    process may run on, at most ``MOST_WORKERS``."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, MOST_WORKERS))


@pytest.fixture(scope="session")
def kaggle() -> ModuleType:
    """``kaggle_environments``, installed first if this machine lacks it
    (by one worker; the others wait for it and find it there)."""
    with one_at_a_time("kaggle-install"):
        importlib.invalidate_caches()
        if importlib.util.find_spec("kaggle_environments") is None:
            subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", KAGGLE_ENVIRONMENTS], check=True
            )
            importlib.invalidate_caches()
    return importlib.import_module("kaggle_environments")


def pytest_unconfigure(config: pytest.Config) -> None:
    """numba starts colorama when it first prints a coloured message, and
    colorama's exit handler then writes to pytest's captured stream after it
    is closed ("Exception ignored in atexit callback ... I/O operation on
    closed file" after the summary): take that handler back."""
    colorama = sys.modules.get("colorama.initialise")
    if colorama is not None:
        import atexit

        atexit.unregister(colorama.reset_all)


#: The signals a command of c4lab ignores once it is on its way out (``c4lab.ctrl_c``).
_STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name))


@pytest.fixture(autouse=True)
def _no_scores_known_from_another_test() -> None:
    """Each test starts with the server's table of exact scores found
    (``c4lab.server.known_scores.KNOWN``, one for the process) empty: a
    hint of one test would otherwise make another's position exact, or
    not, by the order the worker ran them in."""
    known = sys.modules.get("c4lab.server.known_scores")
    if known is not None:
        known.KNOWN.clear()


@pytest.fixture(autouse=True)
def _signal_dispositions_restored() -> Iterator[None]:
    """Each test starts with the worker's own SIGINT, SIGTERM and SIGHUP
    dispositions. A command run in this process (click's ``CliRunner``)
    and stopped ignores them from then on, as a process on its way out
    should (``stops_ignored_from_now``); left so, the next test's engine
    program, started from this process, inherited SIGTERM ignored and
    could not be killed by it (``kill -TERM $$`` in the engine: a timeout,
    not "was killed by signal 15"). Seen: the arena's Ctrl-C test before the
    header left SIGINT, SIGTERM and SIGHUP ignored in its worker."""
    saved = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    yield
    for signum, disposition in saved.items():
        if disposition is not None and signal.getsignal(signum) is not disposition:
            signal.signal(signum, disposition)
