"""c4lab: Connect Four on variant boards -- play it, search it, study it.

The public vocabulary (``Position``, ``Move``, ``Variant``, ``Cell`` and the
errors) lives in ``c4lab.rules`` and is re-exported here lazily, so that
``import c4lab`` (and ``c4lab --help``) stays fast: the compiled rules engine
loads on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from c4lab.lazy import lazy_dir, lazy_names

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


_HOMES = {name: "c4lab.rules" for name in __all__ if name != "__version__"}
__getattr__ = lazy_names(__name__, _HOMES)
__dir__ = lazy_dir(__name__, _HOMES)
