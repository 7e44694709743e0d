"""c4lab: Connect Four on variant boards -- play it, search it, study it.

The public vocabulary (``Position``, ``Move``, ``Variant``, ``Cell`` and the
errors) lives in ``c4lab.rules`` and is re-exported here lazily, so that
``import c4lab`` (and ``c4lab --help``) stays fast: the compiled rules engine
loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Cell",
    "IllegalMoveError",
    "Move",
    "Position",
    "PositionError",
    "Variant",
    "VariantError",
    "__version__",
]

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules import (
        Cell,
        IllegalMoveError,
        Move,
        Position,
        PositionError,
        Variant,
        VariantError,
    )


def __getattr__(name: str) -> Any:
    if name in __all__:
        from c4lab import rules  # lazy: ``import c4lab`` must not load numba

        return getattr(rules, name)
    raise AttributeError(f"module 'c4lab' has no attribute {name!r}")
