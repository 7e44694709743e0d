"""The board as c4lab draws it in a terminal, and a move in words: shared
by the terminal game (``c4lab play --tui``, ``c4lab analyse --tui``) and
the online client (``c4lab connect``).  Drawn with rich: white and black
pieces on a blue board, the forbidden cell a red X, the bonus cell a
yellow diamond, ban pieces grey squares; the column scores of the analysis
board in a row over it; messages and prompts broken between words at the
terminal's edge."""

from __future__ import annotations

import textwrap
from typing import IO, Any

from rich.console import Console
from rich.text import Text

from c4lab.rules import Cell, Move, Position, Variant
from c4lab.rules.sides import SIDE_NAMES
from c4lab.rules.variant import column_letter


def game_console(color: bool | None, file: IO[str] | None = None) -> Console:
    """The console a game draws on (standard output, or ``file``): ``color``
    True or False as asked (``--color``, ``--no-color``); None leaves it to
    the terminal and the environment, where ``NO_COLOR``
    (https://no-color.org) turns colours off.  ``--no-color`` turns the
    colours off only: a terminal stays one (its lines broken between words
    at its edge, as with ``NO_COLOR``), where it was taken for a pipe and
    a line broke in the middle of a word."""
    return Console(
        file=file, force_terminal=True if color else None, no_color=None if color is None else not color,
        highlight=False,
        emoji=False,  # a position and a colon ("4x4:b: ...") is no emoji code
    )


def draws_in_colour(console: Console) -> bool:
    """Whether a game on ``console`` draws the coloured board, rather than
    the plain one with its ``A`` and ``B``: a terminal that shows colours
    only, since without them both players' pieces are the same ``●`` (so
    not with ``NO_COLOR`` set, nor on a terminal without colours, ``TERM=dumb``)."""
    return console.is_terminal and not console.no_color and console.color_system is not None

_STYLE = {
    "A": ("●", "bold bright_white on blue"),
    "B": ("●", "bold black on blue"),
    "ban": ("■", "grey62 on blue"),
    "forbidden": ("X", "bold red on blue"),
    "bonus": ("◆", "bold yellow on blue"),
    "empty": ("·", "bright_blue on blue"),
}
_WIN_STYLE = {"A": "bold bright_white on green", "B": "bold black on green"}


def board_columns(variant: Variant, wide: bool = False) -> int:
    """How many columns of the terminal ``board_text`` takes on ``variant``:
    the row numbers, then three characters a column (four if ``wide``)."""
    return 3 + variant.width * (4 if wide else 3)


def board_text(position: Position, wide: bool = False) -> Text:
    """The board in colour: white and black pieces on a blue board, the
    forbidden cell a red X, the bonus cell a yellow diamond, ban pieces grey
    squares, the winning line on green, the last piece underlined, column
    letters below.  ``wide``: four characters a column instead of three,
    room for a score such as ``-18`` and a space over each (``scores_row``)."""
    cell_text = "  {} " if wide else " {} "
    variant = position.variant
    cells = position.cells
    win = set(position.win_line)
    forbidden = set(variant.forbidden)
    text = Text()
    for r in range(variant.height - 1, -1, -1):
        text.append(f"{r + 1:>2} ", style="dim")
        for c in range(variant.width):
            cell = Cell(c, r)
            piece = cells.get(cell)
            if piece is not None:
                symbol, style = _STYLE[piece]
                if cell in win:
                    style = _WIN_STYLE[piece]
                if cell == position.last_cell:
                    style += " underline"
            elif cell in forbidden:
                symbol, style = _STYLE["forbidden"]
            elif cell == variant.bonus:
                symbol, style = _STYLE["bonus"]
            else:
                symbol, style = _STYLE["empty"]
            text.append(cell_text.format(symbol), style=style)
        text.append("\n")
    text.append("   " + "".join(cell_text.format(column_letter(c)) for c in range(variant.width)), style="bold")
    return text


def _score_cell(column: dict[str, Any]) -> tuple[str, str]:
    """A column's score and its style, in the four characters of a wide
    board's column (``board_text``), its last character over the piece and
    a space after it, so that no two run together: `` +3 ``, ``  0 ``,
    ``-18 `` (exact), ``~57 `` (the engine's estimate, in %), ``  ? ``."""
    if column["exact"]:
        score = column["score"]
        return f"{f'{score:+d}' if score else '0':>3} ", "bold"
    if column["estimate"] is not None:
        return f"~{min(99, round(column['estimate'] * 100)):02d} ", "italic dim"
    return "  ? ", "dim"


def scores_row(position: Position, columns: list[dict[str, Any]]) -> Text:
    """The hint's ``columns`` in a row aligned over the columns of
    ``board_text(position, wide=True)``."""
    by_letter = {c["column"]: c for c in columns}
    text = Text("   ")
    for c in range(position.variant.width):
        column = by_letter.get(column_letter(c))
        cell, style = _score_cell(column) if column else ("    ", "")
        text.append(cell, style=style)
    return text


def scores_line(
    position: Position, columns: list[dict[str, Any]], listed: bool = True, solve_on: bool = True,
) -> str:
    """The hint's ``columns`` in words, one line (for every output); with a
    column not solved, what its sign means, ``~N`` (the engine's estimate)
    or ``?`` (no estimate either: the page's "and no estimate"), each only
    where one is shown, and how to solve on (the analysis board's ``s``,
    where there is one: ``solve_on``):
    not where every score is exact, where it explained a sign shown
    nowhere (on 80 columns, a line of three for two).  Not ``listed``: the
    key to the signs of the scores above the board only, for a screen short
    of rows."""
    parts = [f"{c['column']} {score_sign(c)}" for c in columns]
    scores = f": {', '.join(parts)}" if listed else ", above the board"
    key = scores_key(columns, solve_on)
    return f"Scores for {SIDE_NAMES[position.to_move or 'A']}, to move{scores}  ({key})"


def hint_words(position: Position, answer: dict[str, Any]) -> str:
    """The hint ``answer`` (``server.review.hint``) for ``position`` in
    words, as a game in the terminal says it under the board: the move,
    as the page's hint says it ("drop in column d and put the ban piece
    in column e"), then every column's score (``scores_line``; a game has
    no ``s`` to solve on)."""
    move = Move.parse(answer["move"])
    words = f"Hint: drop in column {column_letter(move.column)}"
    after = position.play(move)
    if move.ban is not None:
        words += f" and put the ban piece in column {column_letter(move.ban)}"
    elif after.last_cell == position.variant.bonus and not after.is_over:
        words += " and decline the ban"
    return f"{words}. {scores_line(position, answer['columns'], solve_on=False)}"


def score_sign(column: dict[str, Any]) -> str:
    """A column's score as the lines of words write it: ``+3``, ``0``,
    ``-2``; not solved, the engine's estimate ``~57`` (in %), else ``?``."""
    return _score_cell(column)[0].strip()


def scores_key(columns: list[dict[str, Any]], solve_on: bool = True) -> str:
    """The key to the signs of the scores ``columns`` (the hint's, or the
    ban choices' with declining): what ``+``, ``0`` and ``-`` mean, and
    with a score not solved, what its sign means, ``~N`` (the engine's
    estimate) or ``?`` (no estimate either: the page's "and no
    estimate"), each only where one is shown, and how to solve on (the
    analysis board's ``s``, where there is one: ``solve_on``)."""
    left = [c for c in columns if not c["exact"]]
    signs = ["~N: not solved in time, the engine's N %"] if any(c["estimate"] is not None for c in left) else []
    if any(c["estimate"] is None for c in left):
        signs.append("?: not solved in time, and no estimate")
    if solve_on:
        signs.append("s solves on")
    unsolved = "".join(f"; {sign}" for sign in signs) if left else ""
    return f"+ a win, the larger the sooner; 0 a draw; - a loss{unsolved}"


def legend(position: Position) -> Text:
    """The key under the board: the pieces, and the forbidden cells, the
    bonus cell (while it is empty) and ban pieces only where this board can
    show them."""
    bonus = position.variant.bonus
    shown = {
        "forbidden": bool(position.variant.forbidden),
        "bonus": bonus is not None and position.piece_at(bonus) is None,
        "ban": bonus is not None,
    }
    text = Text()
    for key, label in (("A", "A"), ("B", "B"), ("forbidden", "forbidden"), ("bonus", "bonus"), ("ban", "ban")):
        if not shown.get(key, True):
            continue
        symbol, style = _STYLE[key]
        text.append(f" {symbol} ", style=style)
        text.append(f" {label}  ")
    return text


def move_words(before: Position, move: Move, after: Position) -> str:
    """``move``, played in ``before`` to give ``after``, for the line under
    the board: its column, and on the bonus cell, what became of the ban
    (the notation's ``b+c`` says it to those who know it only).  A landing
    that won or filled the board offers no ban (RULES.md): nothing was
    declined."""
    column = column_letter(move.column)
    if after.last_cell is None or after.last_cell != before.variant.bonus:
        return column
    if move.ban is None:
        return f"{column}, on the bonus cell" if after.is_over else f"{column}, on the bonus cell, and declines the ban piece"
    return f"{column}, on the bonus cell, and drops the ban piece in {column_letter(move.ban)}"


def wrap_words(message: str, width: int) -> str:
    """``message`` with each of its lines broken between words to fit
    ``width``; a word longer than a line (a position string) is never cut,
    so that it can be copied whole."""
    return "\n".join(
        textwrap.fill(line, width, break_long_words=False, break_on_hyphens=False) for line in message.split("\n")
    )


def split_prompt(prompt: str, width: int) -> tuple[list[str], str]:
    """``prompt`` broken between words (``wrap_words``) for a terminal
    ``width`` columns wide, two columns kept for the cursor: its lines but
    the last, printed first, and the last one, the entry typed after it
    (with the prompt's trailing space).  The terminal game's prompts and
    ``c4lab connect``'s line editor both ask so; the terminal broke a
    prompt where its edge fell, in the middle of a word."""
    body = prompt.rstrip()
    lines = wrap_words(body, max(20, width - 2)).split("\n")
    return lines[:-1], lines[-1] + prompt[len(body):]
