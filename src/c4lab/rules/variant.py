"""Boards: cells, and the ``Variant`` (shape, forbidden cells, bonus cell).

A ``Variant`` is a plain immutable value.  It knows the board's shape and its
special cells, validates them against RULES.md, and prints its part of the
position notation (``9x8/Xd3/Bb1``).  It knows nothing about pieces or moves.
"""

from __future__ import annotations

import numbers
import random
from collections.abc import Iterable
from dataclasses import dataclass

from c4lab.rules.errors import VariantError, brief, quote

MIN_SIDE = 4
MAX_SIDE = 12
COLUMN_LETTERS = "abcdefghijkl"
#: The four directions of a line of four: along a row, up a column, and the two diagonals.
DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


#: The most bits an integer argument may have: 1,000 digits, far beyond any
#: board, budget or seed, and well within what Python writes out in a
#: message (4,300 digits).
_MAX_BITS = 3322


def integer(value: object, what: str, error: type[ValueError] = ValueError, *, text: str = "") -> int:
    """``value`` as an ``int``: any integer (NumPy's too: a column from
    ``argmax``), but not a bool, a float or a string; else ``error`` naming
    ``what`` it was meant to be, or saying it is far out of range (more
    than 1,000 digits, which no message could write out).  ``text`` is the
    call that reads a string given there instead (``"Move.parse({})"``),
    which the message shows."""
    if type(value) is int and value.bit_length() <= _MAX_BITS:  # the usual case, at once
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        hint = f" ({text.format(quote(value))} reads it)" if text and isinstance(value, str) else ""
        raise error(f"{what} must be an integer, not {value!r}{hint}")
    if int(value).bit_length() > _MAX_BITS:  # Python will not write it out: every message naming it failed
        raise error(f"{what} is far out of range: a number of about {int(value).bit_length() * 0.30103:,.0f} digits")
    return int(value)


def column_letter(col: int) -> str:
    """The letter of 0-based column ``col`` (``0 -> 'a'``)."""
    return COLUMN_LETTERS[col]


@dataclass(frozen=True, order=True, slots=True)
class Cell:
    """A cell, by 0-based column and row (row 0 is the bottom).

    Cells sort column first, then row: the canonical order of RULES.md
    (``a2 < a10 < b1``).
    """

    col: int
    row: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "col", integer(self.col, "a cell's column", VariantError))
        object.__setattr__(self, "row", integer(self.row, "a cell's row", VariantError))
        if not (0 <= self.col < MAX_SIDE and 0 <= self.row < MAX_SIDE):
            raise VariantError(f"no cell at column {self.col}, row {self.row}: Cell(col, row) counts from 0, "
                               f"each below {MAX_SIDE} (a1 is Cell(0, 0); Cell.parse('a1') reads a name)")

    @property
    def name(self) -> str:
        """The cell's name in the notation: column letter then row, ``'d3'``."""
        return f"{COLUMN_LETTERS[self.col]}{self.row + 1}"

    def __str__(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"Cell.parse({self.name!r})"

    @classmethod
    def parse(cls, name: str) -> Cell:
        """The cell named ``name`` (``'d3'``); strict: no spaces, no leading zeros.
        ``VariantError`` for a string that names no cell, ``TypeError`` for
        what is not a string (``Cell(col, row)`` takes numbers)."""
        if not isinstance(name, str):
            raise TypeError(f"a cell name must be a str like 'd3', not {name!r} "
                            f"(type {type(name).__name__}; Cell(col, row) takes 0-based numbers)")
        if (
            len(name) < 2
            or name[0] not in COLUMN_LETTERS
            or not name[1:].isdigit()
            or not name[1:].isascii()
            or name[1] == "0"
        ):
            if len(name) >= 2 and COLUMN_LETTERS[-1] < name[0] <= "z" and name[1:].isascii() and name[1:].isdigit():
                raise VariantError(f"{quote(name)} is not a cell name: columns go from a to {COLUMN_LETTERS[-1]}")
            raise VariantError(f"{quote(name)} is not a cell name (like 'd3')")
        if len(name) > 3 or int(name[1:]) > MAX_SIDE:  # (int() refuses thousands of digits)
            raise VariantError(f"{quote(name)} is not a cell name: rows go from 1 to {MAX_SIDE}")
        return cls(COLUMN_LETTERS.index(name[0]), int(name[1:]) - 1)


def _cell_shaped(name: str) -> bool:
    """Whether ``name`` is written as a cell name is, a lowercase letter
    then a row number (``'z9'``, ``'a13'``), whether or not a board has it."""
    return (len(name) >= 2 and name[0].isascii() and name[0].islower()
            and name[1:].isascii() and name[1:].isdigit() and name[1] != "0")


def _cell(cell: object, what: str) -> Cell:
    """``cell``, a ``Cell`` or a cell name, as a ``Cell``; ``VariantError``
    naming ``what`` it was meant to be for anything else."""
    if isinstance(cell, Cell):
        return cell
    if isinstance(cell, str):
        return Cell.parse(cell)
    raise VariantError(f"{what} must be a Cell or a cell name like 'd3', not {cell!r}")


def _cells(cells: Iterable[Cell | str] | Cell | str, what: str) -> tuple[Cell, ...]:
    """Cells given as ``Cell`` objects or names, as a tuple (order kept);
    ``VariantError`` naming ``what`` each is (``"a forbidden cell"``) for
    anything else."""
    if isinstance(cells, (str, Cell)):
        cells = [cells]
    elif not isinstance(cells, Iterable):
        raise VariantError(f"{what.replace('a ', 'the ', 1)}s must be cells or cell names like ['d3'], not {cells!r}")
    return tuple(_cell(c, what) for c in cells)


@dataclass(frozen=True, init=False)
class Variant:
    """A board: ``width`` x ``height``, its forbidden cells, its bonus cell.

    ``forbidden`` may be given in any order, as cells or names; it is stored
    sorted (the canonical order).  ``bonus`` is ``None`` outside bonus mode.

        >>> Variant(9, 8, forbidden=["d3"], bonus="b1").notation
        '9x8/Xd3/Bb1'
    """

    width: int
    height: int
    forbidden: tuple[Cell, ...]
    bonus: Cell | None

    def __init__(
        self,
        width: int = 7,
        height: int = 6,
        forbidden: Iterable[Cell | str] | Cell | str = (),
        bonus: Cell | str | None = None,
    ) -> None:
        """The board, checked against RULES.md (``VariantError`` naming what
        is wrong).  It takes cells or their names, in any iterable:
        ``Variant(9, 8, forbidden=["d3"], bonus="b1")``."""
        object.__setattr__(self, "width", width)
        object.__setattr__(self, "height", height)
        object.__setattr__(self, "forbidden", forbidden)
        object.__setattr__(self, "bonus", bonus)
        self._check()

    def _check(self) -> None:
        """The fields as the types they are stored as, checked."""
        for label in ("width", "height"):
            reader = "Position.parse({}).variant" if label == "width" else ""  # Variant("9x8"): a notation
            object.__setattr__(self, label, integer(getattr(self, label), f"the {label}", VariantError, text=reader))
        if not (MIN_SIDE <= self.width <= MAX_SIDE and MIN_SIDE <= self.height <= MAX_SIDE):
            raise VariantError(
                f"size {self.width}x{self.height} out of range: width and height "
                f"go from {MIN_SIDE} to {MAX_SIDE}"
            )
        forbidden = _cells(self.forbidden, "a forbidden cell")
        for cell in forbidden:
            self._check_on_board(cell, "forbidden cell")
        if len(set(forbidden)) != len(forbidden):
            seen: set[Cell] = set()
            repeated = next(c for c in forbidden if c in seen or seen.add(c))  # type: ignore[func-returns-value]
            raise VariantError(f"forbidden cell {repeated} is repeated")
        object.__setattr__(self, "forbidden", tuple(sorted(forbidden)))
        if self.bonus is not None:
            bonus = _cell(self.bonus, "the bonus cell")
            self._check_on_board(bonus, "bonus cell")
            if bonus in forbidden:
                raise VariantError(f"the bonus cell {bonus} is a forbidden cell")
            object.__setattr__(self, "bonus", bonus)

    def _check_on_board(self, cell: Cell, what: str) -> None:
        if not self.contains(cell):
            raise VariantError(f"{what} {cell} is off the {self.size} board")

    # -- constructors -----------------------------------------------------

    @classmethod
    def classic(cls) -> Variant:
        """The classic 7 x 6 board, no forbidden cell, no bonus."""
        return cls(7, 6)

    @classmethod
    def enhanced(
        cls,
        seed: int | random.Random | None = None,
        *,
        width: tuple[int, int] = (MIN_SIDE, MAX_SIDE),
        height: tuple[int, int] = (MIN_SIDE, MAX_SIDE),
        forbidden: int = 1,
        bonus: bool = False,
    ) -> Variant:
        """The "enhanced" random setup of RULES.md, reproducible from ``seed``.

        Width and height are uniform over the inclusive ranges given; then
        ``forbidden`` distinct cells (one by default) uniform over all cells;
        then, if ``bonus``, a bonus cell uniform over the other cells.
        ``seed`` is an integer (NumPy's too), a ``random.Random`` to draw
        from, or ``None`` for a fresh board each call; anything else (a
        string, a float, a bool) is a ``VariantError``, not a seed that
        ``random`` would quietly hash.
        """
        if isinstance(seed, random.Random):
            rng = seed
        else:
            rng = random.Random(None if seed is None else integer(seed, "an enhanced board's seed", VariantError))
        for label, bounds in (("width", width), ("height", height)):
            if not isinstance(bounds, tuple | list) or len(bounds) != 2:
                raise VariantError(f"the {label} range must be a pair (low, high), like (7, 7) for {label} 7 "
                                   f"only, not {bounds!r}")
            lo, hi = (integer(b, f"each bound of the {label} range", VariantError) for b in bounds)
            if not (MIN_SIDE <= lo <= hi <= MAX_SIDE):
                raise VariantError(
                    f"{label} range {lo}..{hi} must lie within {MIN_SIDE}..{MAX_SIDE}"
                )
        w = rng.randint(*width)
        h = rng.randint(*height)
        cells = [Cell(c, r) for c in range(w) for r in range(h)]
        forbidden = integer(forbidden, "the number of forbidden cells", VariantError)
        if not 0 <= forbidden < len(cells):
            raise VariantError(f"cannot forbid {forbidden} of the {len(cells)} cells of {w}x{h}")
        picked = rng.sample(cells, forbidden + (1 if bonus else 0))
        return cls(w, h, tuple(picked[:forbidden]), picked[forbidden] if bonus else None)

    # -- queries ----------------------------------------------------------

    @property
    def size(self) -> str:
        """``'WxH'``."""
        return f"{self.width}x{self.height}"

    @property
    def notation(self) -> str:
        """The board part of the position notation, canonical (``9x8/Xd3/Bb1``)."""
        parts = [self.size]
        parts += [f"X{c}" for c in self.forbidden]
        if self.bonus is not None:
            parts.append(f"B{self.bonus}")
        return "/".join(parts)

    @property
    def forbidden_pairs(self) -> frozenset[tuple[int, int]]:
        """The forbidden cells as ``(col, row)`` pairs: the form the board's
        geometry (lines, walks, columns) is computed in."""
        return frozenset((c.col, c.row) for c in self.forbidden)

    @property
    def is_mirror_symmetric(self) -> bool:
        """Is the board its own mirror image (left to right), its forbidden
        cells and bonus cell included?  Then a position and its mirror image
        have the same value, with mirrored moves."""
        w = self.width
        forbidden = self.forbidden_pairs
        if forbidden != {(w - 1 - col, row) for col, row in forbidden}:
            return False
        return self.bonus is None or self.bonus.col == w - 1 - self.bonus.col

    @property
    def playable_cells(self) -> int:
        """Cells that can ever hold a piece: all but the forbidden ones."""
        return self.width * self.height - len(self.forbidden)

    def contains(self, cell: Cell | str) -> bool:
        """Is ``cell`` (a ``Cell`` or a cell name, as everywhere a cell is
        asked for: ``'h1'``) on this board?  ``VariantError`` for a string
        that names no cell, ``TypeError`` for what is neither (a name was
        an ``AttributeError``: 'str' object has no attribute 'col')."""
        if not isinstance(cell, Cell):
            if not isinstance(cell, str):
                raise TypeError(f"a cell is a Cell or a cell name like 'd3', not {cell!r} "
                                "(Cell(col, row) from numbers)")
            cell = Cell.parse(cell)
        return cell.col < self.width and cell.row < self.height

    @property
    def extent(self) -> str:
        """Where its cells are, in their names: ``'columns a to i, rows 1 to 8'`` on 9x8."""
        return f"columns a to {COLUMN_LETTERS[self.width - 1]}, rows 1 to {self.height}"

    def cell(self, name: str) -> Cell:
        """The cell of this board named ``name``, as a person writes it for
        this board (a room's forbidden cell): one off it, a column or row
        past every board's included (``'z9'``, ``'a13'``), is a
        ``VariantError`` saying the board's own columns and rows, not the
        notation's general limit; what is no cell name at all
        (``'d3/Bb1'``, ``'D3'``) is ``Cell.parse``'s.

            >>> Variant(9, 8).cell("i8")
            Cell.parse('i8')
        """
        try:
            cell: Cell | None = Cell.parse(name)
        except VariantError:
            if not _cell_shaped(name):
                raise
            cell = None  # a column letter or a row number beyond every board
        if cell is None or not self.contains(cell):
            raise VariantError(f"cell {brief(name)} is off the {self.size} board ({self.extent})")
        return cell

    def cells(self) -> list[Cell]:
        """Every cell of the board, column by column, bottom up."""
        return [Cell(c, r) for c in range(self.width) for r in range(self.height)]

    def lines_of_four(self) -> list[tuple[tuple[int, int], ...]]:
        """Every line of four cells that a player can complete (none of them
        forbidden), as ``(col, row)`` pairs: what the evaluation, the
        solver's move order and the n-tuple learner weigh cells by."""
        return lines_of_four(self.width, self.height, self.forbidden_pairs)

    def __str__(self) -> str:
        return self.notation


def lines_of_four(width: int, height: int, forbidden: Iterable[tuple[int, int]] = ()) -> list[tuple[tuple[int, int], ...]]:
    """Every line of four cells of a ``width`` x ``height`` board that avoids
    the ``forbidden`` cells (``(col, row)`` pairs), as ``(col, row)`` pairs,
    by the column, then the row, of its first cell, then by ``DIRECTIONS``:
    69 on the classic board."""
    blocked = set(forbidden)
    lines = []
    for c in range(width):
        for r in range(height):
            for dc, dr in DIRECTIONS:
                if not (0 <= c + 3 * dc < width and 0 <= r + 3 * dr < height):
                    continue
                line = tuple((c + k * dc, r + k * dr) for k in range(4))
                if not blocked.intersection(line):
                    lines.append(line)
    return lines
