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
