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


def _error_classes() -> list[type[BaseException]]:
    """Every exception class the package defines."""
    found: dict[str, type[BaseException]] = {}
    for module in pkgutil.walk_packages(c4lab.__path__, "c4lab."):
        if module.name.endswith("__main__") or module.name == "c4lab.compile_aside":
            continue  # run as programs, not imported
        for value in vars(importlib.import_module(module.name)).values():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__.startswith("c4lab"):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


def test_every_error_with_fields_says_how_to_rebuild_it() -> None:
    """An error crosses processes by pickle (an arena worker's, a Ray task's,
    the trainer's copies): Python's default rebuilds it from its message
    alone, which fails for an ``__init__`` that takes its fields.  Each such
    class has a ``__reduce__`` (its own or its base's, rebuilding
    ``type(self)``)."""
    import inspect

    missing = []
    for error in _error_classes():
        init = error.__init__
        if any(init is base.__init__ for base in (BaseException, Exception)):
            continue
        required = [
            p for p in list(inspect.signature(init).parameters.values())[1:]
            if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
        ]
        takes_fields = len(required) > 1 or any(p.kind is p.KEYWORD_ONLY for p in required)
        reduces = any("__reduce__" in vars(cls) for cls in error.__mro__ if cls.__module__.startswith("c4lab"))
        if takes_fields and not reduces:
            missing.append(f"{error.__module__}.{error.__qualname__}{inspect.signature(init)}")
    assert not missing, missing


def test_the_errors_that_cross_processes_come_back_as_they_left() -> None:
    """The same class, message and fields after a pickle round trip."""
    import pickle

    from c4lab.engine.client import EngineIllegalMove
    from c4lab.engine.protocol import ProtocolError
    from c4lab.learning.ntuple import OptionWrongType
    from c4lab.server.errors import RoomError

    for error, fields in [
        (EngineIllegalMove("7x6", "z", "no such column"), ("position", "move", "reason")),
        (ProtocolError("bestmove", "no move", 8), ("line", "reason", "index")),
        (OptionWrongType("alpha", "a number, not 'x'"), ("field", "message")),
        (RoomError("bad-board", "no such board"), ("code", "message")),
    ]:
        again = pickle.loads(pickle.dumps(error))
        assert (type(again), str(again)) == (type(error), str(error))
        assert [getattr(again, f) for f in fields] == [getattr(error, f) for f in fields]
