"""The game itself: boards (``Variant``), moves (``Move``), positions
(``Position``), the notation, and the compiled rules engine behind them."""

from c4lab.rules.errors import IllegalMoveError, PositionError, VariantError
from c4lab.rules.move import Move
from c4lab.rules.position import Piece, Position, Result, Side
from c4lab.rules.variant import Cell, Variant

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
