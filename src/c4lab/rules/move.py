"""``Move``: one whole move token (``d``, or ``d+a`` with a ban piece)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering

from c4lab.rules.errors import quote
from c4lab.rules.variant import COLUMN_LETTERS, MAX_SIDE, integer


@total_ordering
@dataclass(frozen=True, slots=True)
class Move:
    """A piece dropped in ``column`` and, after a bonus landing, a ban piece
    dropped in ``ban`` (``None``: no ban, which at a bonus landing means the
    bonus was declined).  Columns are 0-based.  Moves sort as
    ``Position.legal_moves`` lists them: by column, the decline first, then
    the bans by column.

        >>> Move.parse("d+a")
        Move.parse('d+a')
        >>> str(Move(3))
        'd'
    """

    column: int
    ban: int | None = None

    def __post_init__(self) -> None:
        column = integer(self.column, "a move's column", text="Move.parse({})")
        if not 0 <= column < MAX_SIDE:
            raise ValueError(f"a move's column must be in 0..{MAX_SIDE - 1}, not {column}")
        object.__setattr__(self, "column", column)
        if self.ban is not None:
            ban = integer(self.ban, "a ban column")
            if not 0 <= ban < MAX_SIDE:
                raise ValueError(f"a ban column must be in 0..{MAX_SIDE - 1}, not {ban}")
            object.__setattr__(self, "ban", ban)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Move):
            return NotImplemented
        return (self.column, -1 if self.ban is None else self.ban) < (
            other.column, -1 if other.ban is None else other.ban)

    @property
    def token(self) -> str:
        """The move in the notation: ``'d'`` or ``'d+a'``."""
        if self.ban is None:
            return COLUMN_LETTERS[self.column]
        return f"{COLUMN_LETTERS[self.column]}+{COLUMN_LETTERS[self.ban]}"

    def __str__(self) -> str:
        return self.token

    def __repr__(self) -> str:
        return f"Move.parse({self.token!r})"

    @property
    def code(self) -> int:
        """The kernels' integer code for this move."""
        return self.column + 16 * (0 if self.ban is None else self.ban + 1)

    @classmethod
    def from_code(cls, code: int) -> Move:
        """The move with kernel code ``code``."""
        code = int(code)
        ban = (code >> 4) - 1
        return cls(code & 15, None if ban < 0 else ban)

    @classmethod
    def parse(cls, token: str) -> Move:
        """The move written ``token``: a column letter, optionally ``+`` and a
        ban column letter.  Raises ``ValueError`` for any other string, and
        ``TypeError`` for what is not a string (a column number is ``Move(3)``)."""
        if not isinstance(token, str):
            raise TypeError(f"a move token must be a str like 'd' or 'd+a', not {token!r} "
                            f"(type {type(token).__name__}; a column number is Move(column))")
        if (
            len(token) in (1, 3)
            and token[0] in COLUMN_LETTERS
            and (len(token) == 1 or (token[1] == "+" and token[2] in COLUMN_LETTERS))
        ):
            ban = COLUMN_LETTERS.index(token[2]) if len(token) == 3 else None
            return cls(COLUMN_LETTERS.index(token[0]), ban)
        number = ""
        if token.isascii() and token.isdigit() and 1 <= int(token) <= len(COLUMN_LETTERS):
            # a column number, as other tools write moves: say which letter it is, counted from 1 as they do
            number = f"; column {int(token)}, counted from 1, is {quote(COLUMN_LETTERS[int(token) - 1])}"
        raise ValueError(
            f"{quote(token)} is not a move token: a column letter a..l, "
            f"optionally followed by '+' and a ban column letter (like 'd' or 'd+a'){number}"
        )
