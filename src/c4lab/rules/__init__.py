"""The game itself: boards (``Variant``), moves (``Move``), positions
(``Position``), the notation, and the compiled rules engine behind them.

The names are loaded on first use (``__getattr__``): importing a light part
of the rules (``c4lab.rules.move``, ``c4lab.rules.errors``) does not load the
compiled engine and numba, which only ``Position`` needs.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules.errors import IllegalMoveError, PositionError, VariantError
    from c4lab.rules.move import Move
    from c4lab.rules.position import Piece, Position, Result, Side
    from c4lab.rules.variant import Cell, Variant

#: Each public name and the module that defines it.
_HOMES = {
    "IllegalMoveError": "errors",
    "PositionError": "errors",
    "VariantError": "errors",
    "Move": "move",
    "Piece": "position",
    "Position": "position",
    "Result": "position",
    "Side": "position",
    "Cell": "variant",
    "Variant": "variant",
}

__all__ = [
    "Cell",
    "IllegalMoveError",
    "Move",
    "Piece",
    "Position",
    "PositionError",
    "Result",
    "Side",
    "Variant",
    "VariantError",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'c4lab.rules' has no attribute {name!r}")
    return getattr(import_module(f"c4lab.rules.{home}"), name)
