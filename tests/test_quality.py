"""The habits that keep the code as it is: the linter, the type checker and
the docstrings' examples all pass, as part of the suite.

ruff and mypy are pinned in the ``test`` extra (``pyproject.toml`` holds
their settings); the examples are every ``>>>`` in ``src/c4lab``.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import c4lab

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], check=False, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "--no-cache", "src", "tests")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing() -> None:
    done = _run("mypy")  # the files and settings: [tool.mypy] in pyproject.toml
    assert done.returncode == 0, done.stdout + done.stderr


def _modules() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(c4lab.__path__, "c4lab.") if m.name != "c4lab.__main__")


@pytest.mark.parametrize("name", _modules())
def test_the_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    failures, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_there_are_examples_to_run() -> None:
    """The examples are read: a module that had some still has them."""
    finder = doctest.DocTestFinder()
    examples = sum(len(t.examples) for name in _modules() for t in finder.find(importlib.import_module(name)))
    assert examples >= 14


def test_the_package_says_it_is_typed() -> None:
    """PEP 561: ``py.typed`` ships with the package (``[tool.setuptools.package-data]``)."""
    assert (Path(c4lab.__file__).parent / "py.typed").is_file()
    assert '"py.typed"' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
