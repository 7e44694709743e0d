"""``human``: a person at a keyboard, asked for each move.

The agent only asks and checks; what the person sees (the board) is the
interface's business.  Input: a column letter or number, then, when the
piece lands on the bonus cell, a ban column or Enter to decline (or both
at once as the notation writes them, ``d+e``); ``e`` or
``exit`` quits at any prompt (``QuitGame``), so column e is typed as 5 (the
prompt says so).  Where the board has a column e, a lone ``e`` asks first
(a person who meant the column keeps the game).  A bad entry is explained
and asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from c4lab.agents.base import Agent, Analysis, Budget, register
from c4lab.rules import Cell, Move, Position, Variant
from c4lab.rules.sides import SIDE_NAMES
from c4lab.rules.variant import column_letter

QUIT_WORDS = ("e", "exit")
#: A person resigns with these (the terminal game and ``c4lab connect``; never a column: boards are a-l),
#: after ``RESIGN_QUESTION`` is answered with one of ``CONFIRM_WORDS``.
RESIGN_WORDS = ("r", "resign")
CONFIRM_WORDS = ("y", "yes")
#: How a move question names the resign key (``move_prompt``'s ``keys``).
RESIGN_KEY = "r to resign"
#: A person asks the terminal game for a hint with these (``?``: never a column, where ``h`` is one from 8x
#: boards on), and how its move question names the key.
HINT_WORDS = ("?", "hint")
HINT_KEY = "? for a hint"
RESIGN_QUESTION = "Really resign (you lose the game)? y to resign, Enter to go on: "
#: The answers to the question a lone ``e`` asks where the board has a column e.
LEAVE_ANSWERS = "y leaves; anything else goes on (column e is typed 5): "
#: Asked for a lone ``e`` where the board has a column e (the terminal game and ``c4lab connect``).
LEAVE_QUESTION = "Leave the game? " + LEAVE_ANSWERS
#: How the ban question begins (the terminal's analysis board tells it from the move question by it).
BAN_PROMPT = "Ban column:"
#: How the move question ends (the terminal game puts its ``u`` before it).
EXIT_KEY = "e to exit"
#: How the ban question ends: without a ban piece; and where ``u`` takes the drop back too.
DECLINE = "or Enter to decline"
DECLINE_OR_TAKE_BACK = "Enter to decline, or u to take the drop back"


def column_ranges(columns: Iterable[int]) -> str:
    """``columns`` (0-based) as a prompt lists them: a run of three or more
    as a range, the others one by one (``a-l``; ``a, b, d-l``).  The ban
    question named every column, 107 characters on a 12-column board: it
    broke in the middle of a phrase on an 80-column terminal."""
    runs: list[list[int]] = []
    for column in sorted(set(columns)):
        if runs and column == runs[-1][-1] + 1:
            runs[-1].append(column)
        else:
            runs.append([column])
    parts: list[str] = []
    for run in runs:
        if len(run) >= 3:
            parts.append(f"{column_letter(run[0])}-{column_letter(run[-1])}")
        else:
            parts.extend(column_letter(column) for column in run)
    return ", ".join(parts)


def move_prompt(variant: Variant, side: str, keys: Sequence[str] = ()) -> str:
    """The question for a move of ``side`` on ``variant``, the side named
    as every screen names it ("A (white) to move"): its columns by
    letter and number, an interface's own ``keys`` (``c4lab connect``'s
    ``r to resign``), and how to leave ('e' means exit, so column e is
    typed as its number).  A function of its own: the terminal game keeps
    room for it under the board, and ``c4lab connect`` asks the same."""
    last = column_letter(variant.width - 1)
    e_note = " (column e: 5)" if variant.width >= 5 else ""
    said = "".join(f"{key}, " for key in keys)
    return f"{SIDE_NAMES[side]} to move: column a-{last} or 1-{variant.width}{e_note}, {said}{EXIT_KEY}: "


def ban_offer(bonus: Cell, hint: bool = False) -> str:
    """What a person whose piece lands on the ``bonus`` cell is told before
    the ban question (the terminal game and ``c4lab connect``); with
    ``hint``, that ``?`` gives a hint there (a game in the terminal: the
    question itself does not name the key, as it would pass 80 columns)."""
    blocks = "it blocks both players; ? for a hint" if hint else "it blocks both players"
    return f"Your piece lands on the bonus cell {bonus}: you may drop a ban piece ({blocks})."


def ban_prompt(bans: Iterable[int], take_back: bool = False) -> str:
    """The ban question, the columns ``bans`` (0-based) that can take the
    ban piece listed as ranges; with ``take_back``, the ``u`` of an
    interface that takes the drop on the bonus cell back (``c4lab connect``,
    the terminal's ``keyed_prompt``)."""
    columns = set(bans)
    e_note = " (column e: 5)" if 4 in columns else ""
    way_out = DECLINE_OR_TAKE_BACK if take_back else DECLINE
    return f"{BAN_PROMPT} {column_ranges(columns)}{e_note}, {way_out}: "


def not_a_column(entry: str, width: int) -> str:
    """Why ``entry`` (stripped) is no column of a board ``width`` columns wide."""
    return f"{entry!r} is not a column: type a letter a-{column_letter(width - 1)} or a number 1-{width}."


def not_a_key(entry: str, keys: str) -> str:
    """Why ``entry`` (stripped) answers a question whose answers are keys
    with none of them (``keys``: the keys and what each does, in words), as
    ``not_a_column`` says it of a column: the terminal analysis board at
    the end of its line, ``c4lab connect`` after a game."""
    return f"{entry!r} is not a key here: {keys}."


def column_full(column: int) -> str:
    """Why a move in ``column`` (0-based), which is full, is refused."""
    return f"Column {column_letter(column)} is full: choose another one."


def not_a_ban(entry: str, bans: Iterable[int]) -> str:
    """Why ``entry`` (stripped) answers the ban question with no column of ``bans``."""
    return f"{entry!r} is not a column that can take the ban piece: choose one of {column_ranges(bans)}, or Enter."


class QuitGame(Exception):
    """The person asked to leave the game."""


def _read_column(entry: str, width: int) -> int | None:
    """A column from a letter (``d``) or a 1-based number (``4``), else None."""
    entry = entry.strip().lower()
    if len(entry) == 1 and "a" <= entry <= "z":
        col = ord(entry) - ord("a")
    elif entry.isdigit() and entry.isascii():
        col = int(entry) - 1
    else:
        return None
    return col if 0 <= col < width else None


def read_move_with_ban(entry: str, legal: Sequence[str], width: int) -> str:
    """The legal move token ``entry`` writes as the notation does, ``d+e`` (a
    piece in d that lands on the bonus cell, the ban piece in e; numbers
    too: ``4+5``), as a person who read the notation types it (the terminal
    game and ``c4lab connect`` both read it so).  ``ValueError`` saying why
    where it is no legal move."""
    column, _, ban = entry.strip().lower().partition("+")
    col, ban_col = _read_column(column, width), _read_column(ban, width)
    if col is None or ban_col is None:
        raise ValueError(f"{entry.strip()!r} is not a move: type a column, or for a piece on the bonus cell its "
                         f"column and the ban column as the notation writes them (d+e).")
    letter = column_letter(col)
    token = f"{letter}+{column_letter(ban_col)}"
    if token in legal:
        return token
    in_column = [t for t in legal if t == letter or t.startswith(letter + "+")]
    if not in_column:
        raise ValueError(column_full(col))
    if all("+" not in t for t in legal):  # a board without a bonus cell, or one whose bonus cell is taken
        raise ValueError(f"No move drops a ban piece here: there is no bonus cell to take. Type {letter} alone.")
    if all("+" not in t for t in in_column):
        raise ValueError(f"A piece in column {letter} does not land on the bonus cell here, so it drops "
                         f"no ban piece: type {letter} alone.")
    raise ValueError(f"Column {column_letter(ban_col)} has no room for the ban piece: choose another one.")


@register("human", "a person at the keyboard (terminal game)")
class HumanAgent(Agent):
    """Asks through ``ask(prompt) -> str`` and explains through ``say(text)``."""

    def __init__(
        self,
        ask: Callable[[str], str] = input,
        say: Callable[[str], None] = print,
        show: Callable[[Position], None] | None = None,
        hint_key: bool = False,
    ) -> None:
        self._ask = ask
        self._say = say
        self._show = show  # draws a position (the piece on the bonus cell before the ban question)
        self._hint_key = hint_key  # ``ask`` answers ? with a hint (a game in the terminal): the ban offer says so

    @property
    def is_human(self) -> bool:
        return True

    def _read(self, prompt: str) -> str:
        try:
            return self._ask(prompt)
        except EOFError:
            raise QuitGame() from None

    def _prompt(self, prompt: str, e_is_column: bool) -> str:
        """The person's entry; ``QuitGame`` for ``exit``, and for ``e``
        (where ``e_is_column``: once the person confirms)."""
        while True:
            entry = self._read(prompt)
            word = entry.strip().lower()
            if word not in QUIT_WORDS:
                return entry
            if word != "e" or not e_is_column:
                raise QuitGame()
            answer = self._read(LEAVE_QUESTION)
            if answer.strip().lower() in ("y", "yes"):
                raise QuitGame()

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        return self._ask_move(position), Analysis()

    def _ask_move(self, position: Position) -> Move:
        variant = position.variant
        legal = position.legal_moves()
        assert position.to_move is not None  # a game over asks no move
        prompt = move_prompt(variant, position.to_move)
        while True:
            entry = self._prompt(prompt, variant.width >= 5)
            if "+" in entry:  # the notation's bonus move, column and ban at once: d+e
                move = self._move_with_ban(entry, legal, variant.width)
                if move is not None:
                    return move
                continue
            col = _read_column(entry, variant.width)
            if col is None and not entry.strip():  # Enter alone: the question again, no reproach
                continue
            if col is None:
                self._say(not_a_column(entry.strip(), variant.width))
                continue
            options = [m for m in legal if m.column == col]
            if not options:
                self._say(column_full(col))
                continue
            if len(options) == 1:
                return options[0]
            return self._choose_ban(position, options)

    def _move_with_ban(self, entry: str, legal: Sequence[Move], width: int) -> Move | None:
        """The legal move ``entry`` writes as the notation does (``d+e``);
        None, once said why, where it is none (``read_move_with_ban``)."""
        try:
            token = read_move_with_ban(entry, [move.token for move in legal], width)
        except ValueError as exc:
            self._say(str(exc))
            return None
        return next(move for move in legal if move.token == token)

    def _choose_ban(self, position: Position, options: list[Move]) -> Move:
        bans = {m.ban: m for m in options if m.ban is not None}
        if self._show is not None:
            self._show(position.play(options[0]))  # the piece on the bonus cell, no ban yet
        assert position.variant.bonus is not None  # a move with a ban lands on it
        self._say(ban_offer(position.variant.bonus, self._hint_key))
        while True:
            entry = self._prompt(ban_prompt(bans), 4 in bans)
            if not entry.strip():
                return options[0]
            col = _read_column(entry, position.variant.width)
            if col in bans:
                return bans[col]
            self._say(not_a_ban(entry.strip(), bans))
