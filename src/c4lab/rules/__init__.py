"""The game itself: boards (``Variant``), moves (``Move``), positions
(``Position``), the notation, and the compiled rules engine behind them.

The names are loaded on first use (``__getattr__``): importing a light part
of the rules (``c4lab.rules.move``, ``c4lab.rules.errors``) does not load the
compiled engine and numba, which only ``Position`` needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from c4lab.lazy import lazy_dir, lazy_names

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules.errors import IllegalMoveError, PositionError, SecondBonusCellError, VariantError
    from c4lab.rules.move import Move
    from c4lab.rules.position import Piece, Position, Result, Side
    from c4lab.rules.variant import Cell, Variant

#: Each public name and the module that defines it.
_HOMES = {
    "IllegalMoveError": "c4lab.rules.errors",
    "PositionError": "c4lab.rules.errors",
    "SecondBonusCellError": "c4lab.rules.errors",
    "VariantError": "c4lab.rules.errors",
    "Move": "c4lab.rules.move",
    "Piece": "c4lab.rules.position",
    "Position": "c4lab.rules.position",
    "Result": "c4lab.rules.position",
    "Side": "c4lab.rules.position",
    "Cell": "c4lab.rules.variant",
    "Variant": "c4lab.rules.variant",
}

__all__ = [
    "Cell",
    "IllegalMoveError",
    "Move",
    "Piece",
    "Position",
    "PositionError",
    "Result",
    "SecondBonusCellError",
    "Side",
    "Variant",
    "VariantError",
]


__getattr__ = lazy_names(__name__, _HOMES)
__dir__ = lazy_dir(__name__, _HOMES)
