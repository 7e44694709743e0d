"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
from types import ModuleType

import pytest

# Kaggle's package, pinned; installed without its dependencies (its list pulls
# in gigabytes that ConnectX never uses). What ConnectX does import beyond our
# own dependencies (jsonschema, requests) comes with the ``kaggle`` extra.
KAGGLE_ENVIRONMENTS = "kaggle-environments==1.33.2"


@pytest.fixture(scope="session")
def kaggle() -> ModuleType:
    """``kaggle_environments``, installed first if this machine lacks it."""
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
