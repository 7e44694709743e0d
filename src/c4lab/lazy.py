"""Names a package re-exports but loads on first use.

``c4lab``, ``c4lab.rules``, ``c4lab.agents`` and ``c4lab.engine`` offer their
main names at the package level, yet importing a light module of theirs
(``c4lab.engine.protocol``, ``c4lab.rules.move``) must not load the compiled
rules engine and numba.  A package sets ``__getattr__ = lazy_names(...)``
(PEP 562): a name is imported from its module when it is first read; and
``__dir__ = lazy_dir(...)``, so that ``dir()`` and an interactive shell's
completion list those names before they are read.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any


def lazy_names(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that reads each name of
    ``homes`` from its module (``{"Move": "c4lab.rules.move"}``)."""

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(import_module(home), name)  # lazy: the point of this module

    return __getattr__


def lazy_dir(package: str, homes: dict[str, str]) -> Callable[[], list[str]]:
    """A module ``__dir__`` for ``package``: its own names and those of
    ``homes``, none of them imported."""

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(homes))

    return __dir__
