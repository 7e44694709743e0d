"""The two sides and the end of a game in words: the one vocabulary of the
terminal game, ``c4lab connect``, ``c4lab games`` and the server's lines
(the page's ``describe.js`` says the same in the browser).

RULES.md names the sides by letter: "Player A holds white pieces and moves
first; player B holds black pieces."  So a side is its letter first, the
colour of its pieces as a helper: "A (white)", "B (black)"; a player's
name follows the side, "A (white), Ann".  A result is one sentence:
"A (white), Ann, wins: four in a row", "... wins: B (black) resigned",
"... wins: B (black) forfeited (away too long)", "Draw: the board is
full", "Abandoned: the players left".

Light: no numba, no engine (``c4lab games`` and the server's storage read it).
"""

from __future__ import annotations

from collections.abc import Callable

#: The sides, A first (it moves first).
SIDES = ("A", "B")
#: The colour of each side's pieces (RULES.md; the terminal draws them so).
COLOURS = {"A": "white", "B": "black"}
#: Each side by name: its letter, its colour as a helper.
SIDE_NAMES = {side: f"{side} ({COLOURS[side]})" for side in SIDES}
#: Each side by its letter alone: where no colour is meant (the server's
#: log and messages, which no board stands beside).
LETTERS = {side: side for side in SIDES}


def other(side: str) -> str:
    """The side that is not ``side``."""
    return "B" if side == "A" else "A"


def side_with_name(side: str, name: str, names: dict[str, str] = SIDE_NAMES) -> str:
    """``side`` and its player: "A (white), Ann" (``names``: how the
    sides are called, the letter alone where no colour is meant)."""
    return f"{names[side]}, {name}"


def result_words(
    result: str | None,
    reason: str | None,
    winner: Callable[[str], str] | None = None,
    names: dict[str, str] = SIDE_NAMES,
    win_line: str = "",
    left: str = "the players",
) -> str:
    """How a game ended, one sentence without its full stop: "A (white)
    wins: four in a row", "B (black) wins: A (white) resigned", "A
    (white) wins: B (black) forfeited (away too long)", "Draw: the board
    is full", "Abandoned: the players left".  ``winner``: how to call the
    winner, as the subject of "wins" ("A (white), Ann," with its closing
    comma), else by ``names``; the loser is named by ``names``
    (its player is in the line already).  ``win_line``: the four cells,
    said after "four in a row".  ``left``: who left a game abandoned (the
    terminal game a person quit: "Abandoned: you left").

    >>> result_words("B", "four")
    'B (black) wins: four in a row'
    >>> result_words("A", "resign", names=LETTERS)
    'A wins: B resigned'
    """
    if result == "draw":
        return "Draw: the board is full" if reason in (None, "full") else f"Draw ({reason})"
    if result in SIDES:
        who = winner(result) if winner else names[result]
        loser = names[other(result)]
        reason = reason or "four"
        how = {"four": "four in a row", "resign": f"{loser} resigned",
               "forfeit": f"{loser} forfeited (away too long)",
               "failed": f"{loser} failed (its player raised an error or gave no legal move)"}.get(reason, reason)
        if reason == "four" and win_line:
            how += f" ({win_line})"
        return f"{who} wins: {how}"
    if reason == "abandoned":
        return f"Abandoned: {left} left"
    return "No result" + (f" ({reason})" if reason else "")


def result_clause(result: str | None, reason: str | None, names: dict[str, str] = SIDE_NAMES) -> str:
    """``result_words`` for a message's parentheses, begun in lower case
    where it does not begin with a side: "the game is already over (A
    (white) wins: four in a row)", "(draw: the board is full)".

    >>> result_clause("draw", "full")
    'draw: the board is full'
    """
    words = result_words(result, reason, names=names)
    return words if result in SIDES else words[0].lower() + words[1:]


def game_over_error(notation: str, result: str | None, nothing: str = "no move to choose") -> ValueError:
    """What an agent or the solver raises when asked about a finished game
    (its ``notation``, its ``result``): the game, who won, and that there
    is ``nothing`` to do there.  "the game is over in 4x4:abababa (A
    (white) wins: four in a row): there is no move to choose"."""
    return ValueError(f"the game is over in {notation} ({result_clause(result, None)}): there is {nothing}")
