"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib
import importlib.util
import os
import subprocess
import sys
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
