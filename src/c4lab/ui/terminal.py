"""The terminal game: a coloured board, people and agents taking turns.

Who plays each side is an agent spec (``human`` for a person, so two people
can share a keyboard and two agents can play each other).  With ``analyse``
(``c4lab analyse --tui``) every column's score for the side to move is
shown above the board before each move: the page's hint (``server.review``),
exact where the solver answers in time, else the engine's estimate.  The game moves
``Position``s and move tokens only, through the one game loop
(``c4lab.game.play_game``: its hooks draw the board and pause between
moves); the board is drawn with rich when the output is a terminal and as
plain text otherwise (pipes, tests).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.console import Console

from c4lab.agents import Agent, QuitGame, make_agent
from c4lab.agents.base import warm_up
from c4lab.agents.human import (
    BAN_PROMPT,
    DECLINE,
    DECLINE_OR_TAKE_BACK,
    EXIT_KEY,
    LEAVE_ANSWERS,
    LEAVE_QUESTION,
    QUIT_WORDS,
    ban_offer,
    ban_prompt,
    move_prompt,
)
from c4lab.game import Turn, play_game
from c4lab.rules import Move, Position, Variant
from c4lab.rules.setup import check_start, starting_position
from c4lab.rules.variant import column_letter
from c4lab.ui.ban_scores import ban_columns, ban_scores_line
from c4lab.ui.board_view import (
    SIDE_NAMES,
    board_columns,
    board_text,
    draws_in_colour,
    game_console,
    legend,
    move_words,
    scores_line,
    scores_row,
    split_prompt,
    wrap_words,
)
from c4lab.ui.screen_fit import MUST, Part, fit, text_rows

#: The analysis board's status line while it works out the scores.
SCORING = "working out every column's score"
#: The question after a game: y, the same options again; s, the other player
#: moves first (plays A); n (or e), no more games.  {other} is that player.
PLAY_AGAIN = "Play again? [y/n, s: {other} {plays}] "
#: The analysis board's question at the end of its line, and what it says before it: no r, as a finished
#: game is always the end of its line (r there says "Nothing to play again").
LINE_OVER = "The game is over: u takes the last move back, e leaves."
LINE_OVER_PROMPT = "u or e: "
#: The analysis board's question for a lone ``e`` where the board has a column e: asked, as in a game, since
#: e is a move there too and leaving by mistake costs the command again and every score worked out (a first
#: start: a minute of compiling); nothing else is lost: the position is printed.  Within 80 columns.
LEAVE_BOARD_QUESTION = "Leave the board? " + LEAVE_ANSWERS
#: The exit status of a game Ctrl-C ended, as of every interrupted command
#: (``c4lab connect`` too): 128 + SIGINT.
EXIT_INTERRUPTED = 130
#: The pause after an agent's move when two agents play on a colour terminal
#: (``--delay`` left out), so that a person can follow the game.
WATCH_DELAY = 0.5


@dataclass(frozen=True)
class GameSettings:
    """What ``c4lab play --tui`` was asked for."""

    board: str = "7x6"
    bonus: bool = False
    players: tuple[str, str] = ("human", "hard")
    first: str = "random"  # "1", "2" or "random": which player plays A
    seed: int | None = None
    delay: float | None = None  # pause after an agent's move; None: automatic
    color: bool | None = None  # None: colours when the output is a terminal
    analyse: bool = False  # every column's score above the board before each move


# ---------------------------------------------------------------------------
# The game
# ---------------------------------------------------------------------------


class TerminalGame:
    """One session of games at a terminal (``play again?`` loops here)."""

    def __init__(
        self,
        settings: GameSettings,
        console: Console | None = None,
        read: Callable[[str], str] | None = None,
    ) -> None:
        self.settings = settings
        self.console = console or game_console(settings.color)
        self.color = draws_in_colour(self.console)
        # a terminal that redraws a status line in place (not a pipe, nor TERM=dumb): colours or not, an
        # agent's turn and a hint say there that they are under way (without colours the first move's seven
        # seconds on a first start were a silent screen)
        self.live = self.console.is_terminal and not self.console.is_dumb_terminal
        keyboard = read or self._keyboard
        # the analysis board's keys: u takes a move back, r plays it again (never a column: a-l); a game's: u
        self.read = _with_line_keys(keyboard, game=not settings.analyse,
                                    solve_ban=self.solve_ban if settings.analyse else None,
                                    offers_take_back=lambda: self.take_back_offered)
        # a game's move prompt offers u once a person has a move to take back (``_Screen.before_move``)
        self.take_back_offered = False
        # who plays A: the settings' choice; "Play again?"'s s makes it the other player of the game before
        self.first = settings.first
        self.a_index = 0  # the player who played A in the game just played
        self.from_moves = False  # that game started from a position with moves
        self.rng = random.Random(settings.seed)
        self.players: list[Agent] = [
            make_agent(spec, ask=self.read, say=self.say, show=self.draw_board) for spec in settings.players
        ]
        # "you" when one person plays an agent; the spec otherwise.
        one_person = sum(p.is_human for p in self.players) == 1
        self.names = ["you" if agent.is_human and one_person else spec
                      for agent, spec in zip(self.players, settings.players)]
        self.labels = [f"player {i + 1} ({name})" for i, name in enumerate(self.names)]
        check_start(settings.board, settings.bonus, finished=settings.analyse)  # fail early on a bad board
        self.warmup: threading.Thread | None = None
        self.adviser: Agent | None = None  # the hint's engine, for the analysis board's estimates
        self.hints: dict[str, dict[str, Any]] = {}  # the analysis board's hints, by position (the line's)
        self._on_screen: tuple[str, str, str] | None = None  # the colour screen's header, title and note
        self._dropped: Position | None = None  # the piece on the bonus cell whose ban question is open

    def _keyboard(self, prompt: str) -> str:
        """``keyboard_line``, with a prompt wider than the terminal broken
        between words as ``say``'s lines are (the terminal broke it in the
        middle of a word: "u back, r forwa" / "rd"): its lines but the last
        printed, the last one given to ``input``, as readline redraws only
        that one."""
        if self.console.is_terminal:
            above, prompt = split_prompt(prompt, self.console.width)
            if above:
                self.console.print("\n".join(above), highlight=False, markup=False, soft_wrap=True)
        return keyboard_line(prompt)

    def prompt_rows(self, prompt: str) -> int:
        """The rows ``prompt`` takes as ``_keyboard`` asks it."""
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

    def hint(self, position: Position) -> dict[str, Any]:
        """The page's hint for ``position``: every column's score for the side
        to move.  Kept for the positions of the line (u and r come back to
        them; ``s`` solves on from it)."""
        # lazy: only the analysis board needs the server's hint
        from c4lab.server.review import HINT_SPEC, hint, prepares_the_engine

        if position.notation not in self.hints:
            # a second or two, a minute on the first start: never a silent screen; the engine's warm-up,
            # in a thread of its own, is announced as this hint's (it may wait for it)
            with self._busy(SCORING, helpers=prepares_the_engine):
                if self.adviser is None:
                    self.adviser = make_agent(HINT_SPEC)
                self.hints[position.notation] = hint(position, self.adviser)
        return self.hints[position.notation]

    def _busy(
        self, doing: str, helpers: Callable[[threading.Thread], bool] | None = None
    ) -> contextlib.AbstractContextManager[None]:
        """On a terminal (``live``), a status line while ``doing`` (and "preparing
        the engine" while numba compiles for it, in this thread or one of
        its ``helpers``); nothing elsewhere."""
        if not self.live:
            return contextlib.nullcontext()
        from c4lab.ui.preparing import announce_preparation  # lazy: numba's events, for a hint only

        return announce_preparation(self.console, busy=doing, helpers=helpers)

    def column_scores(self, position: Position) -> list[dict[str, Any]]:
        columns: list[dict[str, Any]] = self.hint(position)["columns"]
        return columns

    def solve_ban(self) -> None:
        """The analysis board's ``s`` at the ban question: the moves of the
        position before the drop left unknown (the ban choices' ``?`` among
        them) solved on as the move question's ``s`` does, and the ban
        question's screen drawn again with what was found (the question
        is then asked again: the drop stays where it was)."""
        dropped = self._dropped
        assert dropped is not None and dropped.variant.bonus is not None  # only asked at the ban question
        said = self.solve_on(_before_drop(dropped))
        if self.color and self._on_screen is not None:
            header, title, _ = self._on_screen
            self._on_screen = (header, title, said)  # the line under the board, as after the move question's s
        else:
            self.say(said)
        self.draw_board(dropped)
        self.say(ban_offer(dropped.variant.bonus))

    def solve_on(self, position: Position) -> str:
        """The analysis board's ``s``: the columns of ``position`` left
        unknown, solved again for up to the page's longest further pass
        (30 s), on a thread of its own that Ctrl-C stops (``Solver.cancel``),
        keeping what was solved by then.  What happened, in words."""
        from c4lab.server.review import DEEPER, TABLE_SIZE, deeper_hint  # lazy: only the analysis board's s
        from c4lab.solver import Solver  # lazy: as above

        if position.is_over:
            return "The game is over: there is nothing to solve."
        answer = self.hint(position)
        left = [c["column"] for c in answer["columns"] if not c["exact"]]
        if not left:
            return "Every column is solved already."
        seconds = DEEPER[-1]
        self.say(f"Solving {', '.join(left)} for up to {seconds:g} s (Ctrl-C stops)...")
        solver = Solver(TABLE_SIZE)
        found: list[dict[str, Any]] = []
        worker = threading.Thread(target=lambda: found.append(deeper_hint(position, answer, seconds, solver)),
                                  name="solve-on", daemon=True)
        worker.start()
        stopped = False
        while worker.is_alive():
            try:
                worker.join(0.1)
            except KeyboardInterrupt:
                solver.cancel()
                stopped = True
        if found:
            self.hints[position.notation] = answer = found[0]
        still = [c["column"] for c in answer["columns"] if not c["exact"]]
        solved = [column for column in left if column not in still]
        said = f"Solved {', '.join(solved)}" if solved else "Nothing more solved"
        if still:
            said += f"; {', '.join(still)} not solved in {'the time before Ctrl-C' if stopped else f'{seconds:g} s'}"
        return said + "."

    def seat_label(self, index: int, variant: Variant) -> str:
        """Player ``index``'s label in a game's header on ``variant``; for
        an agent that plays another's moves there (``ntuple`` on a board its
        network was not learnt for plays ``heuristic``'s), whose moves, in
        the words of the page's seat, so that nobody plays a stand-in unawares."""
        instead = self.players[index].plays_instead(variant)
        if instead is None:
            return self.labels[index]
        return f"player {index + 1} ({self.names[index]}, {instead.partition(':')[0]}'s moves on this board)"

    def prepare_engines(self, start: Position) -> None:
        """Compile the agents' code (numba's first start; later starts load it
        from the cache) in the background while the person thinks: one move
        of a throwaway copy of each agent, on the starting board."""
        specs = [spec for agent, spec in zip(self.players, self.settings.players) if not agent.is_human]
        if not specs or self.warmup is not None:
            return

        # The person's prompt lists the legal moves: their kernel is compiled
        # here, first.  numba compiles one function at a time, in any thread,
        # so a prompt that waited for it behind the warm-up's search kernels
        # came seconds after the board on a first start.
        legal = start.legal_moves()

        def warm() -> None:
            if legal:
                start.play(legal[0])  # the person's move next: before the agents' search kernels
            for spec in specs:
                warm_up(spec, start)  # a warm-up only: the real move reports any error

        self.warmup = threading.Thread(target=warm, name="prepare-engines", daemon=True)
        self.warmup.start()

    def draw_board(self, position: Position) -> None:
        """The board alone (the piece on the bonus cell before the ban
        question): on a terminal, coloured or plain (a terminal without
        colours was shown no board, where ``c4lab connect`` draws one);
        piped output shows the boards of the game loop only.  On the
        analysis board, with the ban choices' scores (``ban_scores``): on
        a colour terminal in the row over the board and in words, as the
        move question's, elsewhere in words under the board."""
        self._dropped = position
        ban_scores = self.ban_scores(position) if self.settings.analyse else None
        if self.color and self._on_screen is not None:  # the screen again, room for the question
            header, title, note = self._on_screen
            assert position.variant.bonus is not None  # the piece on it waits for the ban question
            columns = {move.column for move in position.legal_moves()}  # about the columns it names
            asked = keyed_prompt(ban_prompt(columns), game=not self.settings.analyse)
            under = self.said_rows(ban_offer(position.variant.bonus)) + self.prompt_rows(asked) + 1
            scores, words = ban_scores or (None, None)
            self.show(position, header, note, scores, title=title, under=under, words=words)
            return
        if self._in_colour(position):
            self.console.print(board_text(position, wide=self.settings.analyse))
        elif self.console.is_terminal:
            self.console.print(position.render(), highlight=False, markup=False)
        if ban_scores is not None:
            self.say(ban_scores[1][0])

    def ban_scores(self, dropped: Position) -> tuple[list[dict[str, Any]], tuple[str, str]]:
        """The analysis board's scores at the ban question, ``dropped``
        the position with the piece on the bonus cell (the ban not chosen):
        the ban choices as the scores row draws columns, and in words
        (listed, and the key alone), from the hint of the position before
        the drop (kept: its screen was drawn from it)."""
        before = _before_drop(dropped)
        assert before.to_move is not None  # a drop was made there
        answer = self.hint(before)
        moves: dict[str, int | None] = answer.get("moves", {})
        estimates: dict[str, float] = answer.get("estimates", {})  # the engine's, of the moves not solved
        letter = column_letter(dropped.moves[-1].column)
        columns = ban_columns(moves, letter, estimates)
        side = SIDE_NAMES[before.to_move]
        declined, guess = moves.get(letter), estimates.get(letter)
        return columns, (ban_scores_line(side, columns, declined, declined_estimate=guess),
                         ban_scores_line(side, columns, declined, False, guess))

    def _in_colour(self, position: Position) -> bool:
        """Whether ``position`` is drawn as the coloured board: on a colour
        terminal wide enough for it (a 12x12 analysis board needs 51
        columns); on a narrower one the coloured rows would wrap into an
        unreadable board, and the plain one (two characters a column) is
        drawn with a line that says why."""
        return self.color and self.console.width >= board_columns(position.variant, wide=self.settings.analyse)

    def say(self, message: str) -> None:
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

    def play_again_prompt(self) -> str:
        """The question after a game, naming who moves first (plays A, in a
        game started from a position with moves) if the person answers s."""
        other = self.labels[1 - self.a_index]
        return PLAY_AGAIN.format(other=other, plays=f"plays {SIDE_NAMES['A']}" if self.from_moves else "moves first")

    def ask_play_again(self) -> bool:
        """"Play again?": True for another game (``s``: with the other player
        moving first, from then on), False for none (``n``, ``e``, the end
        of the input)."""
        prompt = self.play_again_prompt()
        while True:
            try:
                entry = self.read(prompt).strip().lower()
            except EOFError:
                self.say("")  # the end of the prompt's line: what comes next (the shell's prompt) starts a line
                return False
            except KeyboardInterrupt:  # the caller's, status 130
                self.say("")
                raise
            if entry in ("y", "yes"):
                return True
            if entry in ("s", "swap"):
                self.first = str(2 - self.a_index)  # the other player, fixed from now on (not drawn again)
                return True
            if entry in ("n", "no", "e", "exit"):
                return False
            self.say("Please answer y, n or s.")

    def run(self) -> int:
        """Play games until the person declines another one (the analysis
        board: until they leave); exit status: 0, or 130 after Ctrl-C (the
        game's moves so far are printed first)."""
        try:
            if self.settings.analyse:
                self.analyse()
                return 0
            number = 1
            while True:
                finished = self.play_one(number)
                if not finished or not self.ask_play_again():
                    return 0
                number += 1
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED

    def play_one(self, number: int) -> bool:
        """One game; False if a person quit in the middle (Ctrl-C: the moves
        so far, then ``KeyboardInterrupt`` again)."""
        start = starting_position(self.settings.board, self.settings.bonus, self.rng)
        for agent in self.players:  # one that cannot play on this board: refused before the board is drawn
            agent.check_board(start.variant)
        first = self.first
        a_index = self.rng.randrange(2) if first == "random" else int(first) - 1
        self.a_index, self.from_moves = a_index, bool(start.ply)
        by_side = {"A": a_index, "B": 1 - a_index}
        seat = {side: self.seat_label(index, start.variant) for side, index in by_side.items()}
        if start.ply:  # a game from a position with moves: who is to move there, not who moved first
            header = (
                f"Game {number} on {start.notation}: {SIDE_NAMES['A']} is {seat['A']}; "
                f"{SIDE_NAMES['B']} is {seat['B']}; {SIDE_NAMES[start.to_move or 'A']} to move."
            )
        else:
            header = (
                f"Game {number} on {start.notation}: "
                f"{SIDE_NAMES['A']} is {seat['A']} and moves first; "
                f"{SIDE_NAMES['B']} is {seat['B']}."
            )
        if not self.color:
            self.say("\n" + header)
        delay = self.settings.delay
        if delay is None:
            delay = WATCH_DELAY if self.color and not any(p.is_human for p in self.players) else 0.0
        screen = _Screen(self, header, by_side, delay, start, title=f"Game {number} on {start.notation}.")
        if self.live:
            self.prepare_engines(start)
        here = start
        try:
            while True:  # started again from where a person's u takes the game back to
                try:
                    record = play_game(
                        self.players[by_side["A"]], self.players[by_side["B"]], here,
                        on_turn=screen.before_move, on_move=screen.after_move,
                    )
                    break
                except _LineStep as step:
                    here, screen.note = self.take_back(screen.position, start.ply, by_side, step.delta)
        except (QuitGame, KeyboardInterrupt) as stop:
            self.say(f"\nGame abandoned. The moves so far: {screen.position.notation}")
            if isinstance(stop, KeyboardInterrupt):
                raise
            return False
        finally:
            screen.stop_thinking()
        position = record.final
        result = _result_line(position, lambda side: f"{SIDE_NAMES[side]}, {self.labels[by_side[side]]},")
        notation = f"The game in notation: {position.notation}"
        under = self.said_rows(result) + self.said_rows(notation) + self.prompt_rows(self.play_again_prompt()) + 1
        self.show(position, header, screen.note, title=screen.title, under=under)
        self.say(result)
        self.say(notation)
        return True


    def take_back(
        self, position: Position, start_ply: int, by_side: dict[str, int], delta: int
    ) -> tuple[Position, str]:
        """A game's ``u`` in ``position`` (a person to move): the position
        before that person's side's last move, which the person then plays
        again (the agent's reply taken back with it; between two people, the
        last move), never before the game's first ``start_ply`` moves (those
        of the position it started from); at the ban question (``delta``
        0), the drop on the bonus cell, not played yet.  With what the line
        under the board says."""
        if delta == 0:
            return position, "The drop on the bonus cell is taken back."
        before = self.last_person_move(position, start_ply, by_side)
        if before is None:
            return position, "Nothing to take back: no move of a person since the game began."
        taken = position.ply - before.ply
        return before, f"{taken} move{'s' if taken > 1 else ''} taken back: {_moves_words(before, position.moves[before.ply:])}."

    def last_person_move(self, position: Position, start_ply: int, by_side: dict[str, int]) -> Position | None:
        """The position before the last move a person played since the game's
        first ``start_ply`` moves (where ``u`` takes the game back to), or
        None: no person has moved yet (the agent moved first, or the game
        started from a position with a person to move)."""
        empty = Position(position.variant)
        moves = position.moves
        for ply in range(len(moves) - 1, start_ply - 1, -1):
            before = empty.play(*moves[:ply])
            assert before.to_move is not None
            if self.players[by_side[before.to_move]].is_human:
                return before
        return None

    def analyse(self) -> None:
        """The analysis board: the position's line, played from where the
        person stands on it (the game loop, started again after each undo
        or redo); a move off the line ends the line there."""
        start = starting_position(self.settings.board, self.settings.bonus, self.rng)
        line = list(start.moves)
        ply = len(line)
        empty = Position(start.variant)
        header = (
            f"Analysis board on {start.notation}: "
            "you play both sides; "
            + ("above the board" if self.color else "before each move, a line gives")
            + " every column's score for the side to move. "
            "u takes a move back, r plays it again, s solves on where a score is an estimate, e leaves."
        )
        if not self.color:
            self.say("\n" + header)
        notice = ""  # why the last u or r did nothing: under the board until the next move
        title = f"Analysis board on {start.notation}."
        while True:
            here = empty.play(*line[:ply])
            screen = _Screen(self, header, {"A": 0, "B": 1}, 0.0, here, named=False, title=title)
            screen.note, notice = notice, ""

            def on_move(turn: Turn, screen: _Screen = screen) -> None:
                nonlocal ply, line
                if ply >= len(line) or line[ply] != turn.move:
                    line = [*line[:ply], turn.move]  # off the line: it ends here
                ply += 1
                screen.after_move(turn)

            try:
                if not here.is_over:
                    play_game(self.players[0], self.players[1], here, on_turn=screen.before_move, on_move=on_move)
                over = empty.play(*line[:ply])
                result = _result_line(over, lambda side: SIDE_NAMES[side])
                under = self.said_rows(result) + self.said_rows(LINE_OVER) + self.prompt_rows(LINE_OVER_PROMPT) + 1
                self.show(over, header, screen.note, title=title, under=under)
                self.say(result)
                self.say(LINE_OVER)
                while True:  # u and r end this wait (``_LineStep``), and e
                    if self.read(LINE_OVER_PROMPT).strip().lower() in QUIT_WORDS:
                        raise QuitGame
                    self.say(LINE_OVER)
            except _SolveOn:
                notice = self.solve_on(empty.play(*line[:ply]))
            except _LineStep as step:
                moved = max(0, min(len(line), ply + step.delta))
                if step.delta == 0:
                    notice = "The drop on the bonus cell is taken back."
                elif moved == ply:  # said under the board drawn next
                    notice = ("Nothing to play again: this is the end of the line." if step.delta > 0
                              else "Nothing to take back: this is the start.")
                else:  # which move went or came back (the board alone did not say: a plain board, a long line)
                    notice = _step_words(empty.play(*line[:min(ply, moved)]), line[min(ply, moved)], step.delta)
                ply = moved
            except (QuitGame, KeyboardInterrupt, EOFError) as stop:
                self.say(f"\nThe position on the board: {empty.play(*line[:ply]).notation}")
                if ply < len(line):  # the moves u took back, which r would have played again, are not lost either
                    back = len(line) - ply
                    self.say(f"The whole line (u took back its last {back} move{'s' if back > 1 else ''}): "
                             f"{empty.play(*line).notation}")
                if isinstance(stop, KeyboardInterrupt):
                    raise
                return


def keyboard_line(prompt: str) -> str:
    """The line typed after ``prompt``, edited as a shell's is where standard
    input is a terminal (readline): an arrow key moves along the line, Up
    brings back an entry typed before; without it an arrow typed ``^[[A``
    into the entry, which was then "not a column".  The prompt goes to
    ``input`` itself, so that readline, which redraws the line, knows it."""
    if sys.stdin.isatty():
        with contextlib.suppress(ImportError):
            import readline  # noqa: F401  (lazy: loading it gives input() its line editing; not on every platform)
    return input(prompt)


def _moves_words(before: Position, moves: tuple[Move, ...]) -> str:
    """``moves``, played one after another from ``before``, in words
    (a game's ``u`` says which went: an agent's ban piece too, gone from
    the board with nothing said)."""
    words = []
    for move in moves:
        after = before.play(move)
        assert before.to_move is not None
        words.append(f"{SIDE_NAMES[before.to_move]} plays {move_words(before, move, after)}")
        before = after
    return "; ".join(words)


def _step_words(before: Position, move: Move, delta: int) -> str:
    """What the analysis board's u (``delta`` -1: ``move``, played in
    ``before``, taken back) or r (1: played again) did, in words."""
    assert before.to_move is not None
    words = f"{SIDE_NAMES[before.to_move]} plays {move_words(before, move, before.play(move))}"
    return f"Taken back: {words}." if delta < 0 else f"Played again: {words}."


def _before_drop(dropped: Position) -> Position:
    """The position before the last piece of ``dropped`` (the piece on the
    bonus cell whose ban is being chosen)."""
    return Position(dropped.variant).play(*dropped.moves[:-1])


def _result_line(position: Position, who: Callable[[str], str]) -> str:
    """How a finished game ended, in words (``who``: a side's name)."""
    if position.result == "draw":
        return "The game is a draw: the board is full."
    assert position.result is not None
    line = " ".join(c.name for c in position.win_line)
    return f"{who(position.result)} wins with {line}!"


class _SolveOn(Exception):
    """The analysis board's s: the columns left unknown, solved for longer."""


class _LineStep(Exception):
    """The analysis board's u (one move back) or r (one forward); at the
    ban question, u (0: the drop on the bonus cell, not played yet, taken back)."""

    def __init__(self, delta: int) -> None:
        super().__init__(delta)
        self.delta = delta


def keyed_prompt(prompt: str, game: bool, take_back: bool = True) -> str:
    """A person's ``prompt`` as the terminal asks it, with the keys that
    step along the line (``_with_line_keys``): the ban question's ``u``
    (the drop taken back), the move question's ``u`` in a ``game`` where
    there is a person's move to ``take_back`` (before it, ``u`` only says
    there is none, so the prompt does not offer it), ``u`` and ``r`` on
    the analysis board; any other prompt as it is.  The keys
    go where ``move_prompt`` and ``ban_prompt`` put an interface's own
    (as ``c4lab connect`` asks them).  On the analysis board (not a
    ``game``), the question of a lone ``e`` names the board, not a game."""
    if prompt == LEAVE_QUESTION:
        return prompt if game else LEAVE_BOARD_QUESTION
    if prompt.startswith(BAN_PROMPT):
        return prompt.replace(DECLINE, DECLINE_OR_TAKE_BACK)
    if game and not take_back:
        return prompt
    return prompt.replace(EXIT_KEY, ("u to take back, " if game else "u back, r forward, ") + EXIT_KEY)


def _with_line_keys(
    read: Callable[[str], str], game: bool = False, solve_ban: Callable[[], None] | None = None,
    offers_take_back: Callable[[], bool] = lambda: True,
) -> Callable[[str], str]:
    """``read``, where ``u`` and ``r`` step along the analysis board's line
    (``_LineStep``); ``e`` and ``exit`` go on to the person's prompt, which
    leaves as in a game (asking first where ``e`` is a column).  In a
    ``game``, the move prompt takes ``u`` only (the person's last move and
    the replies to it taken back: ``TerminalGame.take_back``), and every
    other prompt (play again?) is ``read``'s own.  At the ban question,
    ``s`` calls ``solve_ban`` (the analysis board's: the ban choices'
    ``?`` solved on) and asks again, where there is one.  A game's move
    prompt names ``u`` only where ``offers_take_back`` (a person has
    moved); before, ``u`` still answers, with why nothing was taken back."""

    def keyed(prompt: str) -> str:
        if game and not prompt.startswith(BAN_PROMPT):
            if EXIT_KEY not in prompt:  # not a move prompt (play again?)
                return read(prompt)
            entry = read(keyed_prompt(prompt, game, take_back=offers_take_back()))
            if entry.strip().lower() in ("u", "undo"):
                raise _LineStep(-1)
            return entry
        if prompt.startswith(BAN_PROMPT):
            # the drop on the bonus cell is not played yet: u takes it back (the same position, the same side to
            # move), not the move before it too; r is no column here, as the question says
            while True:
                entry = read(keyed_prompt(prompt, game))
                word = entry.strip().lower()
                if word in ("u", "undo"):
                    raise _LineStep(0)
                if solve_ban is None or word not in ("s", "solve"):
                    return entry
                solve_ban()
        entry = read(keyed_prompt(prompt, game))  # the move prompt names them
        word = entry.strip().lower()
        if word in ("u", "undo"):
            raise _LineStep(-1)
        if word in ("r", "redo"):
            raise _LineStep(1)
        if word in ("s", "solve"):
            raise _SolveOn
        return entry

    return keyed


class _Screen:
    """What one game shows between moves, as hooks of the game loop: the
    board before each move, a note on the move just played, a pause after
    an agent's move so that people can follow it."""

    def __init__(
        self, game: TerminalGame, header: str, by_side: dict[str, int], delay: float, start: Position,
        named: bool = True, title: str = "",
    ) -> None:
        self.game = game
        self.header = header
        self.title = title  # the header in one short line, for a screen short of rows
        self.named = named  # a move's note names its player (not on the analysis board: one person plays both)
        self.by_side = by_side
        self.delay = delay
        self.position = start  # the last position shown: where an abandoned game stopped
        self.start_ply = start.ply  # u never takes back the moves the game started from
        self.note = ""
        self.thinking: _Thinking | None = None

    def before_move(self, position: Position) -> None:
        self.position = position
        scores = self.game.column_scores(position) if self.game.settings.analyse else None
        assert position.to_move is not None
        index = self.by_side[position.to_move]
        if not self.game.settings.analyse and self.game.players[index].is_human:  # the board's u: always
            before = self.game.last_person_move(position, self.start_ply, self.by_side)
            self.game.take_back_offered = before is not None
        under = self.game.move_rows(position, self.game.players[index].is_human)
        self.game.show(position, self.header, self.note, scores, title=self.title, under=under)
        if self.game.live and not self.game.players[index].is_human:
            self.thinking = _Thinking(self.game, self.game.labels[index])

    def stop_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.stop()
            self.thinking = None

    def after_move(self, turn: Turn) -> None:
        index = self.by_side[turn.side]
        self.stop_thinking()
        who = f"{SIDE_NAMES[turn.side]}, {self.game.labels[index]}," if self.named else SIDE_NAMES[turn.side]
        self.note = f"{who} plays {move_words(turn.before, turn.move, turn.after)}."
        if not self.game.players[index].is_human:
            if self.delay:
                time.sleep(self.delay)
            typed = _discard_typed_keys()  # keys pressed while the agent thought do not count
            said = _not_taken(typed, self.game.labels[index]) if any(p.is_human for p in self.game.players) else ""
            if said:  # under the board drawn next: the redraw wiped the typing and the status line's "do not count"
                self.note += "\n" + said


class _Thinking:
    """A status line while an agent thinks: who, and for how long; while the
    engine is still being prepared (a first start), it says so."""

    def __init__(self, game: TerminalGame, label: str) -> None:
        self.game = game
        self.label = label
        self.start = time.monotonic()
        self.status = game.console.status(self.text(), spinner="dots")
        self.status.start()
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.tick, daemon=True)
        self.thread.start()

    def text(self) -> str:
        elapsed = time.monotonic() - self.start
        warmup = self.game.warmup
        if warmup is not None and warmup.is_alive():
            return f"preparing the engine, first start only... {elapsed:.0f} s"
        return f"{self.label} is thinking... {elapsed:.1f} s (keys typed meanwhile do not count)"

    def tick(self) -> None:
        while not self.done.wait(0.1):
            self.status.update(self.text())

    def stop(self) -> None:
        self.done.set()
        self.thread.join()
        self.status.stop()


def _discard_typed_keys() -> str:
    """Drop what was typed at the terminal while an agent thought, so that a
    key pressed too early is not read as the next move; what was dropped,
    as typed ("" where standard input is no terminal).  It is read before
    it goes, the line being typed too (the terminal's line mode off for a
    moment), so that the person can be told what was not taken: the next
    screen wipes what the terminal echoed."""
    if not sys.stdin.isatty():
        return ""
    try:
        import termios  # lazy: not on every platform
    except ImportError:
        return ""
    typed = b""
    try:
        fd = sys.stdin.fileno()
        saved, keys = termios.tcgetattr(fd), termios.tcgetattr(fd)
        keys[3] &= ~(termios.ICANON | termios.ECHO)  # every key typed readable, a line finished or not
        keys[6][termios.VMIN], keys[6][termios.VTIME] = 0, 0  # a read returns what there is, never waits
        termios.tcsetattr(fd, termios.TCSANOW, keys)
        try:
            while len(typed) < _TYPED_READ and (chunk := os.read(fd, _TYPED_READ)):
                typed += chunk
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
            termios.tcflush(fd, termios.TCIFLUSH)  # beyond what was read, if more was typed
    except (OSError, termios.error):
        pass
    return typed.decode(errors="replace")


#: The most of the keys typed while an agent thought that are read to be shown.
_TYPED_READ = 4096
#: A key's escape sequence (an arrow: ``ESC [ A``), no text of what was typed.
_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?")


def _not_taken(typed: str, label: str) -> str:
    """The line saying that what was ``typed`` while ``label`` thought was
    not taken (``_discard_typed_keys``), its lines quoted (the last three,
    each cut at 20 characters; arrow keys and other controls left out);
    "" where nothing but Enter or spaces was typed."""
    lines = [_ESCAPE.sub("", line) for line in typed.replace("\r", "\n").split("\n")]
    shown = ["".join(c for c in line if c.isprintable()).strip() for line in lines]
    shown = [line if len(line) <= 20 else line[:19] + "…" for line in shown if line]
    if not shown:
        return ""
    earlier = "..., " if len(shown) > 3 else ""
    return (f"Not taken: {earlier}{', '.join(map(repr, shown[-3:]))}, typed while {label} thought; "
            "type it again at the question if you meant it.")


def run_terminal_game(settings: GameSettings) -> int:
    """``c4lab play --tui``."""
    return TerminalGame(settings).run()
