"""Strict reading of the position notation of RULES.md.

``<W>x<H>[/X<cell>]...[/B<cell>][:<moves>]`` -- this module reads the text into
a ``Variant`` and a list of move tokens, checking everything that can be
checked without playing the moves (characters, syntax, sizes, cells).  Whether
the moves are legal is the rules engine's business: ``Position.parse`` plays
them through the kernels and reports the first illegal one.

Every error is a ``PositionError`` naming the offending token and its
character offset.
"""

from __future__ import annotations

from dataclasses import dataclass

from c4lab.rules.errors import PositionError, VariantError, brief, quote
from c4lab.rules.variant import MAX_SIDE, MIN_SIDE, Cell, Variant

_LOWER = "abcdefghijklmnopqrstuvwxyz"


@dataclass(frozen=True, slots=True)
class MoveToken:
    """A move token as written: its text, its character offset, and its
    columns as letter indices (``a`` = 0; may exceed the board's width)."""

    text: str
    index: int
    column: int
    ban: int | None


@dataclass(frozen=True, slots=True)
class ParsedPosition:
    """What the text says, before any move is played."""

    variant: Variant
    moves: tuple[MoveToken, ...]


class _Reader:
    """A cursor over the text that raises precise errors."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(
        self, reason: str, token: str | None = None, index: int | None = None, move_index: int | None = None
    ) -> PositionError:
        return PositionError(
            self.text, reason, token=token, index=self.pos if index is None else index, move_index=move_index
        )

    def unexpected(self, reason: str, part: int) -> PositionError:
        """An error at the cursor: the character found is the offending
        token or, at the end of the text, the unfinished part that began at
        ``part`` (``'7x'``, ``'/'``, ``'Xa'``)."""
        if self.peek():
            return self.fail(reason, token=self.peek())
        return self.fail(reason, token=self.text[part : self.pos] or None, index=part)

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def found(self) -> str:
        char = self.peek()
        return f"found {char!r}" if char else "found the end of the text"

    def number(self, what: str, part: int) -> int:
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        digits = self.text[start : self.pos]
        if not digits:
            raise self.unexpected(f"expected {what}, {self.found()}", part)
        if digits[0] == "0" and len(digits) > 1:
            raise self.fail(
                f"{what} {quote(digits)} has a leading zero", token=digits, index=start
            )
        # Three digits or more are beyond every board (and int() refuses
        # thousands of them): the caller reports the size or cell off range.
        return int(digits) if len(digits) <= 2 else MAX_SIDE + 1

    def cell(self, marker: str, start: int) -> tuple[Cell | None, str]:
        """Read a cell name after a ``/X`` or ``/B`` marker.

        Returns the cell (``None`` if it is off every board) and the part's
        token (``'Xd3'``).
        """
        letter = self.peek()
        if not letter or letter not in _LOWER:
            raise self.unexpected(f"expected a cell (like 'd3') after '/{marker}', {self.found()}", start + 1)
        self.pos += 1
        row = self.number("a row number", start + 1)
        token = self.text[start + 1 : self.pos]
        col = _LOWER.index(letter)
        if col >= MAX_SIDE or not 1 <= row <= MAX_SIDE:
            return None, token
        return Cell(col, row - 1), token


def _check_characters(text: str) -> None:
    for i, char in enumerate(text):
        if "\udc80" <= char <= "\udcff":  # a byte that is not UTF-8 (Python's surrogateescape, argv and stdin)
            raise PositionError(
                text, f"a byte 0x{ord(char) - 0xDC00:02X} that is not UTF-8 text (the notation is ASCII)",
                token=char, index=i,
            )
        if not char.isascii():
            raise PositionError(
                text, f"non-ASCII character U+{ord(char):04X}", token=char, index=i
            )
        if char.isspace() or not char.isprintable():
            raise PositionError(
                text, f"whitespace or a control character (the notation has none){_benchmark_line(text, i)}",
                token=char, index=i,
            )


def _as_letters(moves: str, width: int = 7) -> str | None:
    """Moves written as column numbers from 1, as other tools write them
    (``4453``), in this notation's letters (``ddec``); None when ``moves``
    is not such a string (on a board ``width`` columns wide)."""
    if len(moves) < 2 or not all("1" <= char <= "9" and int(char) <= width for char in moves):
        return None
    return "".join(_LOWER[int(char) - 1] for char in moves)


def _numbered_moves(moves: str, before: str, width: int = 7) -> str:
    """A hint for moves written as column numbers from 1: what they are in
    this notation, after ``before`` (the board, ``width`` columns); ""
    when ``moves`` is not such a string."""
    letters = _as_letters(moves, width)
    if letters is None:
        return ""
    return f" (moves numbered from 1, as other tools write them? {quote(moves)} is {quote(before + letters)} here)"


def _benchmark_line(text: str, space: int) -> str:
    """A hint for a line of Pascal Pons' benchmark files (the moves as
    column numbers from 1, a space, the score: ``4453 -1``), whose first
    whitespace is at ``space``; "" for anything else."""
    letters = _as_letters(text[:space])
    if text[space] != " " or not text[space + 1:].lstrip("-").isdigit() or letters is None:
        return ""
    return (f"; a line of Pons' benchmark files (moves numbered from 1, then the score)? its position is "
            f"{quote('7x6:' + letters)} here, and `c4lab bench solver FILE` checks such a file's scores")


def parse_position(text: str) -> ParsedPosition:
    """Read ``text``; raise ``PositionError`` at the first thing that is wrong."""
    if not isinstance(text, str):
        raise TypeError(f"a position string must be a str like '7x6:dd', not {text!r:.60} (type {type(text).__name__})")
    _check_characters(text)
    reader = _Reader(text)
    if not reader.peek().isdigit():
        raise reader.unexpected(f"expected the board size (like '7x6'), {reader.found()}", 0)
    width = reader.number("the width", 0)
    if reader.peek() != "x":
        raise reader.unexpected(f"expected 'x' after the width, {reader.found()}{_numbered_moves(text, '7x6:')}", 0)
    reader.pos += 1
    height = reader.number("the height", 0)
    size = text[: reader.pos]
    if not (MIN_SIDE <= width <= MAX_SIDE and MIN_SIDE <= height <= MAX_SIDE):
        raise reader.fail(
            f"size {brief(size)} out of range: width and height go from {MIN_SIDE} to {MAX_SIDE}",
            token=size, index=0,
        )

    forbidden: list[Cell] = []
    bonus: Cell | None = None
    shape = Variant(width, height)
    while reader.peek() == "/":
        start = reader.pos
        reader.pos += 1
        marker = reader.peek()
        if marker not in ("X", "B"):
            raise reader.unexpected(
                f"expected 'X' (a forbidden cell) or 'B' (the bonus cell) after '/', {reader.found()}", start
            )
        reader.pos += 1
        cell, token = reader.cell(marker, start)
        index = start + 1
        if cell is None or not shape.contains(cell):
            raise reader.fail(f"cell {brief(token[1:])} is off the {size} board", token=token, index=index)
        if marker == "X":
            if bonus is not None:
                raise reader.fail(
                    "forbidden cells come before the bonus cell", token=token, index=index
                )
            if cell in forbidden:
                raise reader.fail(f"forbidden cell {cell} is repeated", token=token, index=index)
            forbidden.append(cell)
        else:
            if bonus is not None:
                raise reader.fail(
                    f"a second bonus cell (the first is {bonus})", token=token, index=index
                )
            if cell in forbidden:
                raise reader.fail(
                    f"the bonus cell {cell} is a forbidden cell", token=token, index=index
                )
            bonus = cell
    try:
        variant = Variant(width, height, tuple(forbidden), bonus)
    except VariantError as exc:  # pragma: no cover - everything is checked above
        raise reader.fail(str(exc), index=0) from exc

    moves: list[MoveToken] = []
    if reader.peek():
        if reader.peek() != ":":
            raise reader.fail(
                f"expected '/' or ':' after the board, {reader.found()}", token=reader.peek()
            )
        reader.pos += 1
        if not reader.peek():
            raise reader.fail(
                "':' must be followed by at least one move", token=":", index=reader.pos - 1
            )
        while reader.peek():
            start = reader.pos
            letter = reader.peek()
            if letter not in _LOWER:
                hint = _numbered_moves(text[reader.pos:], text[:reader.pos], width) if not moves else ""
                raise reader.fail(
                    f"expected a column letter (a move), {reader.found()}{hint}", token=letter, move_index=len(moves)
                )
            reader.pos += 1
            ban: int | None = None
            if reader.peek() == "+":
                reader.pos += 1
                ban_letter = reader.peek()
                if not ban_letter or ban_letter not in _LOWER:
                    raise reader.fail(
                        f"'+' must be followed by a ban column letter, {reader.found()}",
                        token=text[start : reader.pos + 1],
                        index=start,
                        move_index=len(moves),
                    )
                reader.pos += 1
                ban = _LOWER.index(ban_letter)
            moves.append(MoveToken(text[start : reader.pos], start, _LOWER.index(letter), ban))
    return ParsedPosition(variant, tuple(moves))
