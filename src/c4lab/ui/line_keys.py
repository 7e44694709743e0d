"""The keys a person types at the terminal game's questions beyond a move:
``u`` (take back), ``r`` (play again) and ``s`` (solve on) on the analysis
board, ``u``, ``r`` (resign) and ``?`` (a hint) in a game, and the prompts
that name them.

A key that steps along the line raises ``LineStep`` (``SolveOn`` for the
analysis board's ``s``, ``HintAsked`` for a game's ``?``) out of the game
loop, which the terminal game catches and starts the loop again from where
the key took it; a game's ``r``, once confirmed, raises ``Resigned``, and
the game ends there.
"""

from __future__ import annotations

from collections.abc import Callable

from c4lab.agents.human import (
    BAN_PROMPT,
    CONFIRM_WORDS,
    DECLINE,
    DECLINE_OR_TAKE_BACK,
    EXIT_KEY,
    HINT_KEY,
    HINT_WORDS,
    LEAVE_ANSWERS,
    LEAVE_QUESTION,
    RESIGN_KEY,
    RESIGN_QUESTION,
    RESIGN_WORDS,
)

#: The analysis board's question for a lone ``e`` where the board has a column e: asked, as in a game, since
#: e is a move there too and leaving by mistake costs the command again and every score worked out (a first
#: start: a minute of compiling); nothing else is lost: the position is printed.  Within 80 columns.
LEAVE_BOARD_QUESTION = "Leave the board? " + LEAVE_ANSWERS


class SolveOn(Exception):
    """The analysis board's s: the columns left unknown, solved for longer."""


class HintAsked(Exception):
    """A game's ``?``: every column's score for the person to move, under
    the board drawn again, and the move asked again."""


class Resigned(Exception):
    """A game's r, confirmed: the side to move resigns."""


class LineStep(Exception):
    """The analysis board's u (one move back) or r (one forward); at the
    ban question, u (0: the drop on the bonus cell, not played yet, taken back)."""

    def __init__(self, delta: int) -> None:
        super().__init__(delta)
        self.delta = delta


def keyed_prompt(prompt: str, game: bool, take_back: bool = True) -> str:
    """A person's ``prompt`` as the terminal asks it, with the keys that
    step along the line (``with_line_keys``): the ban question's ``u``
    (the drop taken back), the move question's ``u`` in a ``game`` where
    there is a person's move to ``take_back`` (before it, ``u`` only says
    there is none, so the prompt does not offer it), its ``r`` (resign) and ``?`` (a hint),
    ``u`` and ``r`` on the analysis board; any other prompt as it is.  The keys
    go where ``move_prompt`` and ``ban_prompt`` put an interface's own
    (as ``c4lab connect`` asks them).  On the analysis board (not a
    ``game``), the question of a lone ``e`` names the board, not a game."""
    if prompt == LEAVE_QUESTION:
        return prompt if game else LEAVE_BOARD_QUESTION
    if prompt.startswith(BAN_PROMPT):
        # (a game's ? answers there too, unnamed: the question of a 12-column board stays within 80 columns)
        return prompt.replace(DECLINE, DECLINE_OR_TAKE_BACK)
    if game:
        return prompt.replace(EXIT_KEY, ("u to take back, " if take_back else "") + f"{RESIGN_KEY}, {HINT_KEY}, {EXIT_KEY}")
    return prompt.replace(EXIT_KEY, "u back, r forward, " + EXIT_KEY)


def with_line_keys(
    read: Callable[[str], str], game: bool = False, solve_ban: Callable[[], None] | None = None,
    offers_take_back: Callable[[], bool] = lambda: True, say: Callable[[str], None] = print,
    hint_ban: Callable[[], None] | None = None,
) -> Callable[[str], str]:
    """``read``, where ``u`` and ``r`` step along the analysis board's line
    (``LineStep``); ``e`` and ``exit`` go on to the person's prompt, which
    leaves as in a game (asking first where ``e`` is a column).  In a
    ``game``, the move prompt takes ``u`` (the person's last move and
    the replies to it taken back: ``TerminalGame.take_back``) and ``r``
    (resign, once ``RESIGN_QUESTION`` is answered y: ``Resigned``; anything
    else is ``say``'d to go on and the move is asked again, as ``c4lab
    connect`` and the page ask) and ``?`` (a hint: ``HintAsked``), and every other prompt (play again?) is
    ``read``'s own.  At the ban question,
    ``s`` calls ``solve_ban`` (the analysis board's: the ban choices'
    ``?`` solved on) and asks again, where there is one, and a game's
    ``?`` calls ``hint_ban`` (the ban choices' scores) and asks again.  A game's move
    prompt names ``u`` only where ``offers_take_back`` (a person has
    moved); before, ``u`` still answers, with why nothing was taken back."""

    def keyed(prompt: str) -> str:
        if game and not prompt.startswith(BAN_PROMPT):
            if EXIT_KEY not in prompt:  # not a move prompt (play again?)
                return read(prompt)
            while True:
                entry = read(keyed_prompt(prompt, game, take_back=offers_take_back()))
                word = entry.strip().lower()
                if word in ("u", "undo"):
                    raise LineStep(-1)
                if word in HINT_WORDS:
                    raise HintAsked
                if word not in RESIGN_WORDS:
                    return entry
                if read(RESIGN_QUESTION).strip().lower() in CONFIRM_WORDS:
                    raise Resigned
                say("You did not resign: the game goes on.")
        if prompt.startswith(BAN_PROMPT):
            # the drop on the bonus cell is not played yet: u takes it back (the same position, the same side to
            # move), not the move before it too; r is no column here, as the question says
            while True:
                entry = read(keyed_prompt(prompt, game))
                word = entry.strip().lower()
                if word in ("u", "undo"):
                    raise LineStep(0)
                if hint_ban is not None and word in HINT_WORDS:
                    hint_ban()
                    continue
                if solve_ban is None or word not in ("s", "solve"):
                    return entry
                solve_ban()
        entry = read(keyed_prompt(prompt, game))  # the move prompt names them
        word = entry.strip().lower()
        if word in ("u", "undo"):
            raise LineStep(-1)
        if word in ("r", "redo"):
            raise LineStep(1)
        if word in ("s", "solve"):
            raise SolveOn
        return entry

    return keyed
