"""Fitting one screen of the terminal game into the terminal's rows.

The terminal game clears the screen and draws it again before each move:
a header, the board (on the analysis board, every column's score above
it), its key, a line on the last move, the scores in words, and under all
of it the prompt.  On a small terminal (a 12x12 analysis board at 60x24)
that was more rows than the terminal has, and the top of the screen
scrolled away: the header, then the board's top rows.  ``fit`` chooses
what is drawn: the parts that must stay (the board) always, the others
shortened, then left out, the least important first, until the screen
fits the rows it has.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

#: The rank of a part that is never left out (the board, the scores over it).
MUST = 1_000_000


@dataclass(frozen=True)
class Part:
    """One part of a screen: the ``rows`` it takes, how much it matters
    (``rank``: the lowest goes first; ``MUST`` never goes), how it is drawn,
    and a ``shorter`` version of it to try before leaving it out."""

    rows: int
    rank: int
    draw: Callable[[], None]
    shorter: Part | None = None


def fit(parts: Sequence[Part], rows: int) -> list[Part]:
    """``parts`` (in the screen's order) that fit in ``rows``: while they
    take more, the least important one that may go is replaced by its
    shorter version, or else left out; the order is kept.  Parts that must
    stay are kept even where they alone take more rows than there are."""
    kept = list(parts)
    while sum(part.rows for part in kept) > rows:
        movable = [index for index, part in enumerate(kept) if part.rank < MUST]
        if not movable:
            break
        index = min(movable, key=lambda i: kept[i].rank)
        shorter = kept[index].shorter
        if shorter is None:
            del kept[index]
        else:
            kept[index] = shorter
    return kept


def text_rows(text: str, width: int) -> int:
    """The rows ``text`` takes on a terminal ``width`` columns wide: each of
    its lines one row, or more where it is wider (a position string longer
    than a row, which is never cut)."""
    return sum(max(1, math.ceil(len(line) / max(width, 1))) for line in text.split("\n"))
