"""The analysis board in the terminal (``c4lab analyse POSITION --tui``):
every column's score for the side to move above the board before each
move (the page's hint, ``server.review``: exact where the solver answers
in time, else the engine's estimate), the ban choices' scores at the ban
question, ``s`` to solve on the columns left unknown, and ``u`` and ``r``
to step along the position's line.

It is one mode of the terminal game (``TerminalGame`` inherits it): the
game loop, the players and the keyboard are the game's.
"""

from __future__ import annotations

import contextlib
import random
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from rich.console import Console

from c4lab.agents import Agent, QuitGame, make_agent
from c4lab.agents.human import QUIT_WORDS, ban_offer, not_a_key
from c4lab.ctrl_c import waited_on_a_thread
from c4lab.game import Turn, play_game
from c4lab.rules import Move, Position
from c4lab.rules.setup import starting_position
from c4lab.rules.sides import SIDE_NAMES
from c4lab.rules.variant import column_letter
from c4lab.ui.ban_scores import ban_columns, ban_scores_line
from c4lab.ui.board_view import move_words
from c4lab.ui.line_keys import LineStep, SolveOn
from c4lab.ui.terminal_screen import TerminalScreen, result_line
from c4lab.ui.turn_screen import TurnScreen

if TYPE_CHECKING:  # the board's turns are the game's (``TerminalGame`` inherits the board)
    from c4lab.ui.terminal import GameSettings, TerminalGame

#: The analysis board's status line while it works out the scores.
SCORING = "working out every column's score"
#: The analysis board's question at the end of its line, and what it says before it: no r, as a finished
#: game is always the end of its line (r there says "Nothing to play again"); any other answer is told
#: the keys (``not_a_key``).
LINE_OVER_KEYS = "u takes the last move back, e leaves"
LINE_OVER = f"The game is over: {LINE_OVER_KEYS}."
LINE_OVER_PROMPT = "u or e: "


#: The name of the thread a hint is worked out in (``AnalysisBoard.hint``).
HINT_THREAD = "c4lab-hint"

class AnalysisBoard(TerminalScreen):
    """The analysis board's half of a session at a terminal: its hints,
    kept by position, and its line of moves."""

    # the game's, set by ``TerminalGame``: the keyboard (with the board's keys), both players (people), the draw
    read: Callable[[str], str]
    players: list[Agent]
    rng: random.Random

    def __init__(self, settings: GameSettings, console: Console | None = None) -> None:
        super().__init__(settings, console)
        self.adviser: Agent | None = None  # the hint's engine, for the analysis board's estimates
        self.hints: dict[str, dict[str, Any]] = {}  # the analysis board's hints, by position (the line's)
        self._dropped: Position | None = None  # the piece on the bonus cell whose ban question is open

    def hint(self, position: Position) -> dict[str, Any]:
        """The page's hint for ``position``: every column's score for the side
        to move.  Kept for the positions of the line (u and r come back to
        them; ``s`` solves on from it), and scored again from what was
        solved since (``known_hint``: the line stepped into and back)."""
        # lazy: only the analysis board needs the server's hint
        from c4lab.server.review import HINT_SPEC, TABLE_SIZE, hint, known_hint, prepares_the_engine
        from c4lab.solver import Solver  # lazy: as above

        if position.notation not in self.hints:
            if self.adviser is None:
                self.adviser = make_agent(HINT_SPEC)
            adviser, solver = self.adviser, Solver(TABLE_SIZE)
            # a second or two, a minute on the first start: never a silent screen; the engine's warm-up,
            # in a thread of its own, is announced as this hint's (it may wait for it).  In a thread, so that
            # Ctrl-C ends the board at once: the solver's search holds this thread up to its 0.5 s, and the
            # first hint waits for the engine's compile

            def give_up() -> bool:  # Ctrl-C: the work told to stop, the board left at once
                solver.cancel()
                return False

            with self._busy(SCORING, helpers=lambda thread: thread.name == HINT_THREAD or prepares_the_engine(thread)):
                self.hints[position.notation] = waited_on_a_thread(
                    lambda: hint(position, adviser, solver=solver), HINT_THREAD, give_up, join=False)
        else:  # a move left open is exact once the position it leads to was solved (a line stepped into)
            self.hints[position.notation] = known_hint(position, self.hints[position.notation])
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
        said = self.solve_on(_before_drop(dropped), none_left="Every choice is solved already: each ban column, "
                                                           "and declining.")
        if self.color and self._on_screen is not None:
            header, title, _ = self._on_screen
            self._on_screen = (header, title, said)  # the line under the board, as after the move question's s
        else:
            self.say(said)
        self.draw_dropped(dropped)
        self.say(ban_offer(dropped.variant.bonus))

    def solve_on(self, position: Position, none_left: str = "Every column is solved already.") -> str:
        """The analysis board's ``s``: the columns of ``position`` left
        unknown, solved again for up to the page's longest further pass
        (30 s), on a thread of its own that Ctrl-C stops (``Solver.cancel``),
        keeping what was solved by then.  What happened, in words
        (``none_left``: where nothing was left; at the ban question the
        choices are ban columns and declining)."""
        from c4lab.server.review import DEEPER, TABLE_SIZE, deeper_hint  # lazy: only the analysis board's s
        from c4lab.solver import Solver  # lazy: as above

        if position.is_over:
            return "The game is over: there is nothing to solve."
        answer = self.hint(position)
        left = [c["column"] for c in answer["columns"] if not c["exact"]]
        if not left:
            return none_left
        seconds = DEEPER[-1]
        self.say(f"Solving {', '.join(left)} for up to {seconds:g} s (Ctrl-C stops)...")
        solver = Solver(TABLE_SIZE)
        stops: list[bool] = []

        def stop() -> bool:  # Ctrl-C: the search stops, and what it solved by then is kept
            solver.cancel()
            stops.append(True)
            return True

        self.hints[position.notation] = answer = waited_on_a_thread(
            lambda: deeper_hint(position, answer, seconds, solver), "c4lab-solve-on", stop)
        stopped = bool(stops)
        still = [c["column"] for c in answer["columns"] if not c["exact"]]
        solved = [column for column in left if column not in still]
        said = f"Solved {', '.join(solved)}" if solved else "Nothing more solved"
        if still:
            said += f"; {', '.join(still)} not solved in {'the time before Ctrl-C' if stopped else f'{seconds:g} s'}"
        return said + "."

    def draw_dropped(self, position: Position) -> None:
        """The analysis board's ``show`` before the ban question: the board
        with the piece on the bonus cell (``draw_board``) and the ban
        choices' scores (``ban_scores``); the drop is kept for ``s`` there
        (``solve_ban``)."""
        self._dropped = position
        self.draw_board(position, self.ban_scores(position))

    def say_ban_hint(self) -> None:
        """A game's ``?`` at the ban question: the ban choices' scores, and
        declining's, in words (``ban_scores``: the hint of the position
        before the drop), under the board drawn again (``draw_board``), just
        above the question, which is then asked again."""
        dropped = self._dropped
        assert dropped is not None  # the game's show drew the drop before its question
        self.draw_board(dropped, hint=self.ban_scores(dropped, solve_on=False)[1][0])

    def ban_scores(
        self, dropped: Position, solve_on: bool = True,
    ) -> tuple[list[dict[str, Any]], tuple[str, str]]:
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
        return columns, (ban_scores_line(side, columns, declined, declined_estimate=guess, solve_on=solve_on),
                         ban_scores_line(side, columns, declined, False, guess, solve_on=solve_on))

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
        notice = ""  # what the last u, r or s did: under the board drawn next only (``TurnScreen.say_once``)
        title = f"Analysis board on {start.notation}."
        while True:
            here = empty.play(*line[:ply])
            # the board's turns are a game's (``TerminalGame``, the only class that inherits the board)
            screen = TurnScreen(cast("TerminalGame", self), header, {"A": 0, "B": 1}, 0.0, here, named=False,
                                title=title)
            screen.say_once(notice)

            def on_move(turn: Turn, screen: TurnScreen = screen) -> None:
                nonlocal ply, line
                if ply >= len(line) or line[ply] != turn.move:
                    line = [*line[:ply], turn.move]  # off the line: it ends here
                ply += 1
                screen.after_move(turn)

            try:
                if not here.is_over:
                    play_game(self.players[0], self.players[1], here, on_turn=screen.before_move, on_move=on_move)
                over = empty.play(*line[:ply])
                result = result_line(over, lambda side: SIDE_NAMES[side])
                under = self.said_rows(result) + self.said_rows(LINE_OVER) + self.prompt_rows(LINE_OVER_PROMPT) + 1
                self.show(over, header, screen.next_note, title=title, under=under)
                self.say(result)
                self.say(LINE_OVER)
                while True:  # u and r end this wait (``LineStep``), and e; Enter alone asks again, no reproach
                    answer = self.read(LINE_OVER_PROMPT).strip()
                    if answer.lower() in QUIT_WORDS:
                        raise QuitGame
                    if answer:  # what was not understood, as the move question says it of a column
                        self.say(not_a_key(answer, LINE_OVER_KEYS))
            except SolveOn:
                notice = self.solve_on(empty.play(*line[:ply]))
            except LineStep as step:
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
