"""What the terminal game draws: its screen, fitted to the terminal.

The board with a header, a note on the last move and, on the analysis
board, every column's score (``show``); on a colour terminal the screen
is drawn afresh in place, fitted to the terminal's rows (``screen_fit``),
or, where it is too narrow for the coloured board, the plain board with a
line that says why; elsewhere (pipes, tests) as plain text.  The words
spoken under it (``say``) and the rows a question takes are measured here
too, so that a screen leaves room for them.  ``TerminalGame`` (the game)
and ``AnalysisBoard`` (its analysis board) draw through this class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from rich.console import Console

from c4lab.agents.human import ban_offer, ban_prompt, move_prompt
from c4lab.rules import Position
from c4lab.rules.sides import result_words
from c4lab.ui.board_view import (
    board_columns,
    board_text,
    draws_in_colour,
    game_console,
    legend,
    scores_line,
    scores_row,
    split_prompt,
    wrap_words,
)
from c4lab.ui.line_keys import keyed_prompt
from c4lab.ui.screen_fit import MUST, Part, fit, text_rows

if TYPE_CHECKING:  # the settings are the game's; this module draws what they ask for
    from c4lab.ui.terminal import GameSettings


class TerminalScreen:
    """The screen of one session at a terminal (a game's or the analysis
    board's): where it draws, whether in colour, and how."""

    def __init__(self, settings: GameSettings, console: Console | None = None) -> None:
        self.settings = settings
        self.console = console or game_console(settings.color)
        self.color = draws_in_colour(self.console)
        # a terminal that redraws a status line in place (not a pipe, nor TERM=dumb): colours or not, an
        # agent's turn and a hint say there that they are under way (without colours the first move's seven
        # seconds on a first start were a silent screen)
        self.live = self.console.is_terminal and not self.console.is_dumb_terminal
        # a game's move prompt offers u once a person has a move to take back (``TurnScreen.before_move``)
        self.take_back_offered = False
        self._on_screen: tuple[str, str, str] | None = None  # the colour screen's header, title and note
        # a line the screen left out to keep the board whole on a short terminal (the ban question's offer):
        # ``say`` skips it once
        self._left_out: str | None = None

    def prompt_rows(self, prompt: str) -> int:
        """The rows ``prompt`` takes as ``TerminalGame._keyboard`` asks it."""
        above, last = split_prompt(prompt, self.console.width)
        return text_rows("\n".join([*above, last]), self.console.width)

    def said_rows(self, message: str) -> int:
        """The rows ``message`` takes as ``say`` prints it."""
        return text_rows(wrap_words(message, self.console.width), self.console.width)

    def move_rows(self, position: Position, human: bool) -> int:
        """The rows to keep free under the screen of ``position``: a
        ``human``'s move prompt, as asked here, and a row under it (the
        status line while the next screen is worked out); an agent's turn:
        its "thinking" line only."""
        if position.to_move is None or not human:
            return 1
        prompt = keyed_prompt(move_prompt(position.variant, position.to_move), game=not self.settings.analyse,
                              take_back=self.take_back_offered)
        return self.prompt_rows(prompt) + 1

    def draw_board(
        self, position: Position, ban_scores: tuple[list[dict[str, Any]], tuple[str, str]] | None = None,
        hint: str = "",
    ) -> None:
        """The board alone (the piece on the bonus cell before the ban
        question): on a terminal, coloured or plain (a terminal without
        colours was shown no board, where ``c4lab connect`` draws one);
        piped output shows the boards of the game loop only.  On the
        analysis board, with the ban choices' scores (``ban_scores``): on
        a colour terminal in the row over the board and in words, as the
        move question's, elsewhere in words under the board.  ``hint``: a
        game's ``?`` at the ban question, said under the board drawn again,
        just above the question asked again, with its rows kept (said under
        the question, its lines scrolled the board's top off a short
        screen); the offer is not said again."""
        if self.color and self._on_screen is not None:  # the screen again, room for the question
            header, title, note = self._on_screen
            assert position.variant.bonus is not None  # the piece on it waits for the ban question
            columns = {move.column for move in position.legal_moves()}  # about the columns it names
            asked = keyed_prompt(ban_prompt(columns), game=not self.settings.analyse)
            under = self.prompt_rows(asked) + 1
            scores, words = ban_scores or (None, None)
            offer = ban_offer(position.variant.bonus, hint=not self.settings.analyse)
            if hint:
                under += self.said_rows(hint)
            elif self.must_rows(position, scores) + self.said_rows(offer) + under <= self.console.height:
                under += self.said_rows(offer)
            else:  # the board and its scores first: the question itself says what to type
                self._left_out = offer
            self.show(position, header, note, scores, title=title, under=under, words=words)
            if hint:
                self.say(hint)
            return
        if hint:
            self.say(hint)
            return
        if self._in_colour(position):
            self.console.print(board_text(position, wide=self.settings.analyse))
        elif self.console.is_terminal:
            self.console.print(position.render(), highlight=False, markup=False)
        if ban_scores is not None:
            self.say(ban_scores[1][0])

    def forget_note(self, keep: str = "") -> None:
        """The note under the screen drawn last is said: a redraw of that
        screen (``draw_board``: the piece on the bonus cell before the ban
        question) leaves it out, and shows ``keep`` alone (the note on the
        move just played, which still holds)."""
        if self._on_screen is not None:
            header, title, _ = self._on_screen
            self._on_screen = (header, title, keep)

    def _in_colour(self, position: Position) -> bool:
        """Whether ``position`` is drawn as the coloured board: on a colour
        terminal wide enough for it (a 12x12 analysis board needs 51
        columns); on a narrower one the coloured rows would wrap into an
        unreadable board, and the plain one (two characters a column) is
        drawn with a line that says why."""
        return self.color and self.console.width >= board_columns(position.variant, wide=self.settings.analyse)

    def must_rows(self, position: Position, scores: list[dict[str, Any]] | None = None) -> int:
        """The rows of what a colour screen of ``position`` never leaves out:
        the board, and with ``scores`` the scores over it."""
        if self._in_colour(position):
            return (1 if scores else 0) + position.variant.height + 1
        return text_rows(position.render(), self.console.width)

    def say(self, message: str) -> None:
        if message == self._left_out:  # left out to keep the board whole (``draw_board``)
            self._left_out = None
            return
        if self.console.is_terminal:  # broken between words at the terminal's edge, not in the middle of one
            message = wrap_words(message, self.console.width)
        self.console.print(message, highlight=False, markup=False, soft_wrap=True)

    def show(
        self, position: Position, header: str, note: str, scores: list[dict[str, Any]] | None = None,
        title: str = "", under: int = 1, words: tuple[str, str] | None = None,
    ) -> None:
        """Draw the board (with ``scores``: every column's, above it, and in
        ``words``, listed and the key alone: by default the move question's,
        ``scores_line``; the ban question's are its own); on a
        colour terminal, redraw the screen in place, fitted to its rows with
        ``under`` rows left free under it (for the prompt): where it does
        not fit, the scores in words become their key (the scores are over
        the board), the ``header`` its ``title``, and then the board's key,
        the scores' key, the title and the ``note`` on the last move are
        left out, in that order, so that the board's top never scrolls away
        (on a colour terminal too narrow for the coloured board, the plain
        one: the line that says why is shortened after the header, and it
        and the scores in words, which are the only ones shown, go last)."""
        if scores and words is None:
            words = scores_line(position, scores), scores_line(position, scores, listed=False)
        if self.color:
            self._on_screen = (header, title, note)
            if self._in_colour(position):
                self._draw_screen(position, header, note, scores, words, title, under)
            else:
                self._draw_plain_screen(position, header, note, words, title, under)
            return
        if note:
            self.say(note)
        self.console.print(position.render(), highlight=False, markup=False)
        key = position.legend()  # the rules' own key to render's symbols
        if key:
            self.say("   " + key)
        if words:
            self.say(words[0])

    def _draw_plain_screen(
        self, position: Position, header: str, note: str, words: tuple[str, str] | None, title: str, under: int,
    ) -> None:
        """The screen of ``show`` on a colour terminal too narrow for the
        coloured board: the plain board, with a line that says why."""
        width = self.console.width
        needed = board_columns(position.variant, wide=self.settings.analyse)
        why = (f"(The terminal is {width} columns wide and the coloured board needs {needed}: "
               "the plain board is shown until it is wider.)")
        short_why = f"(The coloured board needs {needed} columns.)"
        board = position.render()
        key = "   " + position.legend()  # the rules' own key to render's symbols
        parts = [self._header_part(header, title),
                 Part(self.said_rows(why), 4, lambda: self.say(why),
                      shorter=Part(self.said_rows(short_why), 7, lambda: self.say(short_why)))]
        if note:
            parts.append(Part(self.said_rows(note), 6, lambda: self.say(note)))
        parts.append(Part(text_rows(board, width), MUST,
                          lambda: self.console.print(board, highlight=False, markup=False)))
        if key.strip():
            parts.append(Part(self.said_rows(key), 3, lambda: self.say(key)))
        if words:
            listed = words[0]
            parts.append(Part(self.said_rows(listed), 8, lambda: self.say(listed)))
        self._draw_fitted(parts, under)

    def _header_part(self, header: str, title: str) -> Part:
        """The screen's ``header``, shortened to its ``title`` (if any) before it goes."""
        shorter = Part(self.said_rows(title), 5, lambda: self.say(title)) if title else None
        return Part(self.said_rows(header), 2, lambda: self.say(header), shorter=shorter)

    def _draw_fitted(self, parts: list[Part], under: int) -> None:
        """A screen of ``parts`` drawn afresh, fitted to the terminal's rows with ``under`` rows free."""
        self.console.clear()
        for part in fit(parts, self.console.height - under):
            part.draw()

    def _draw_screen(
        self, position: Position, header: str, note: str, scores: list[dict[str, Any]] | None,
        words: tuple[str, str] | None, title: str, under: int,
    ) -> None:
        """The coloured screen of ``show``, its parts ranked for ``fit``."""
        key = legend(position)
        width = self.console.width
        parts = [self._header_part(header, title)]
        if scores:
            parts.append(Part(1, MUST, lambda: self.console.print(scores_row(position, scores))))
        parts.append(Part(position.variant.height + 1, MUST,  # one width all along
                          lambda: self.console.print(board_text(position, wide=self.settings.analyse))))
        parts.append(Part(text_rows(key.plain, width), 3, lambda: self.console.print(key)))
        if note:
            parts.append(Part(self.said_rows(note), 6, lambda: self.say(note)))
        if scores and words:
            listed, short = words
            parts.append(Part(self.said_rows(listed), 1, lambda: self.say(listed),
                              shorter=Part(self.said_rows(short), 4, lambda: self.say(short))))
        self._draw_fitted(parts, under)


def result_line(position: Position, who: Callable[[str], str]) -> str:
    """How a finished game ended, in the sentence of every screen
    (``rules.sides.result_words``; ``who``: the winner's name, the subject
    of "wins")."""
    assert position.result is not None
    line = " ".join(c.name for c in position.win_line)
    return result_words(position.result, None, who, win_line=line) + "."  # the rules' ends: four, or full
