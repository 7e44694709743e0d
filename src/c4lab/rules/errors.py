"""The errors of the rules package: bad position strings, bad boards, illegal moves.

All are ``ValueError`` subclasses, so a caller that only wants "bad input" can
catch ``ValueError``.  Each carries the facts a program needs to point at the
problem (the offending token, its index), not only a message.
"""

from __future__ import annotations

_SHOWN = 60  # characters of a long input quoted in a message


def _cut(text: str) -> tuple[str, str]:
    """``text`` cut short for a message if it is long, and what to say after it."""
    if len(text) > _SHOWN:
        return text[:_SHOWN] + "...", f" ({len(text)} characters)"
    return text, ""


def quote(text: str) -> str:
    """``text`` quoted for a message, cut short if it is long."""
    shown, more = _cut(text)
    return repr(shown) + more


def brief(text: str) -> str:
    """``text`` for a message, unquoted, cut short if it is long."""
    shown, more = _cut(text)
    return shown + more


def _ordinal(n: int) -> str:
    """``n`` as an ordinal: 1st, 2nd, 3rd, 4th, 11th, 12th, 13th, 21st, 102nd, 111th."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class VariantError(ValueError):
    """A board that RULES.md does not allow (size, cells off the board, ...)."""


class PositionError(ValueError):
    """A position string that breaks the notation or the rules.

    Attributes:
        text: the string that was parsed.
        reason: what is wrong, in words.
        token: the offending token (a size, a ``/X`` or ``/B`` part, a move
            token, or a single character).
        index: the token's 0-based character offset in ``text``.
        move_index: the 0-based index of the offending move token, when the
            problem is a move (the message says both: "move 1 (the 2nd)").
    """

    def __init__(
        self,
        text: str,
        reason: str,
        *,
        token: str | None = None,
        index: int | None = None,
        move_index: int | None = None,
    ) -> None:
        self.text = text
        self.reason = reason
        self.token = token
        self.index = index
        self.move_index = move_index
        where = []
        if move_index is not None:  # 0-based, as RULES.md's cases count; the ordinal for a person
            where.append(f"move {move_index} (the {_ordinal(move_index + 1)})")
        if token is not None and not (token == text and index in (0, None)):  # the whole string, quoted already
            where.append(quote(token))
        if index is not None:
            where.append(f"at character {index}")
        location = " ".join(where)
        super().__init__(
            f"invalid position {quote(text)}: "
            + (f"{location}: " if location else "")
            + reason
        )

    def __reduce__(self) -> tuple[object, ...]:
        # Keyword-only fields: the default pickling would call
        # ``PositionError(message)`` and fail (an error raised in an arena
        # worker or a Ray task comes back by pickle).
        return (_position_error, (type(self), self.text, self.reason, self.token, self.index, self.move_index))


def _position_error(
    kind: type[PositionError], text: str, reason: str, token: str | None, index: int | None, move_index: int | None
) -> PositionError:
    """A :class:`PositionError` (or a subclass) rebuilt from its fields (unpickling)."""
    return kind(text, reason, token=token, index=index, move_index=move_index)


class IllegalMoveError(ValueError):
    """A move that is not legal in a position (or not a move at all)."""

    def __init__(self, position: str, move: str, reason: str, given: tuple[int, int] | None = None) -> None:
        self.position = position
        self.move = move
        self.reason = reason
        #: ``(i, n)``: the move was the ``i``-th (from 0) of ``n`` given to one ``Position.play`` call, which
        #: the message names ("the 3rd of the 5 moves given"); None for a move given alone.
        self.given = given
        which = f" (the {_ordinal(given[0] + 1)} of the {given[1]} moves given)" if given else ""
        super().__init__(f"illegal move {quote(move)}{which} in {quote(position)}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        # an engine's illegal move stays one
        return (type(self), (self.position, self.move, self.reason, self.given))


class SecondBonusCellError(ValueError):
    """A random bonus cell asked for (``bonus=True``: ``--bonus``, the
    page's Bonus cell box) on a board whose position string names its own
    (``6x5/Xc2/Bb2``): a board has one bonus cell, so one of the two would
    be dropped without a word.  The one refusal of every front end
    (``rules.setup.starting_position``); each words it with its own names
    for the two settings (``worded``).

    Attributes:
        board: the board as it was given.
        cell: the name of the bonus cell it names (``b2``).
    """

    def __init__(self, board: str, cell: str) -> None:
        self.board = board
        self.cell = cell
        super().__init__(self.worded())

    def worded(self, board: str = "the board", bonus: str = "the bonus asked for") -> str:
        """The message with the two settings called ``board`` and ``bonus``
        (``c4lab play``: ``--board`` and ``--bonus``)."""
        return (f"{board} {brief(self.board)} has its bonus cell ({self.cell}) already, and {bonus} would draw "
                "another: give one or the other")

    def __reduce__(self) -> tuple[object, ...]:
        return (SecondBonusCellError, (self.board, self.cell))
