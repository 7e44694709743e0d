"""The terminal game: a coloured board, people and agents taking turns.

Who plays each side is an agent spec (``human`` for a person, so two people
can share a keyboard and two agents can play each other).  With ``analyse``
(``c4lab analyse --tui``) the session is the analysis board instead
(``analysis_board``: every column's score for the side to move above the
board before each move).  The game moves ``Position``s and move tokens
only, through the one game loop (``c4lab.game.play_game``: its hooks,
``turn_screen``, draw the board and pause between moves); the board is
drawn (``terminal_screen``) with rich when the output is a terminal and as
plain text otherwise (pipes, tests).
"""

from __future__ import annotations

import contextlib
import random
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass

from rich.console import Console

from c4lab.agents import Agent, QuitGame, make_agent
from c4lab.agents.base import warm_up
from c4lab.agents.catalogue import DEFAULT_LEVEL
from c4lab.game import failure_words, play_game
from c4lab.rules import Move, Position, Variant
from c4lab.rules.setup import check_start, starting_position
from c4lab.rules.sides import SIDE_NAMES, other, result_words, side_with_name
from c4lab.ui.analysis_board import AnalysisBoard
from c4lab.ui.board_view import hint_words, move_words, split_prompt
from c4lab.ui.line_keys import HintAsked, LineStep, Resigned, with_line_keys
from c4lab.ui.terminal_screen import result_line
from c4lab.ui.turn_screen import TurnScreen

#: The question after a game: y, the same options again; s, the other player
#: moves first (plays A); n (or e), no more games.  {other} is that player.
PLAY_AGAIN = "Play again? [y/n, s: {other} {plays}] "
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
    players: tuple[str, str] = ("human", DEFAULT_LEVEL)
    first: str = "random"  # "1", "2" or "random": which player plays A
    seed: int | None = None
    delay: float | None = None  # pause after an agent's move; None: automatic
    color: bool | None = None  # None: colours when the output is a terminal
    analyse: bool = False  # every column's score above the board before each move


class TerminalGame(AnalysisBoard):
    """One session of games at a terminal (``play again?`` loops here), or
    of the analysis board (``settings.analyse``: its methods are
    ``AnalysisBoard``'s)."""

    def __init__(
        self,
        settings: GameSettings,
        console: Console | None = None,
        read: Callable[[str], str] | None = None,
    ) -> None:
        super().__init__(settings, console)
        keyboard = read or self._keyboard
        # the analysis board's keys: u takes a move back, r plays it again (never a column: a-l); a game's: u,
        # r to resign and ? for a hint
        self.read = with_line_keys(keyboard, game=not settings.analyse,
                                   solve_ban=self.solve_ban if settings.analyse else None,
                                   offers_take_back=lambda: self.take_back_offered, say=self.say,
                                   hint_ban=None if settings.analyse else self.say_ban_hint)
        # who plays A: the settings' choice; "Play again?"'s s makes it the other player of the game before
        self.first = settings.first
        self.a_index = 0  # the player who played A in the game just played
        self.from_moves = False  # that game started from a position with moves
        self.rng = random.Random(settings.seed)
        # an agent's piece on the bonus cell is drawn before its ban (the analysis board's: with the ban's scores)
        show = self.draw_dropped if settings.analyse else self.draw_drop
        self.players: list[Agent] = [
            make_agent(spec, ask=self.read, say=self.say, show=show, hint_key=not settings.analyse)
            for spec in settings.players
        ]
        # "you" when one person plays an agent; the spec otherwise.
        one_person = sum(p.is_human for p in self.players) == 1
        self.names = ["you" if agent.is_human and one_person else spec
                      for agent, spec in zip(self.players, settings.players)]
        self.labels = [f"player {i + 1} ({name})" for i, name in enumerate(self.names)]
        check_start(settings.board, settings.bonus, finished=settings.analyse)  # fail early on a bad board
        self.warmup: threading.Thread | None = None
        self.held_notation: str | None = None  # a finished game's notation said after "Play again?" (a short terminal)

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

    def draw_drop(self, position: Position) -> None:
        """A game's ``show`` before the ban question: the board with the
        piece on the bonus cell (``draw_board``), the drop kept for a ``?``
        there (``say_ban_hint``)."""
        self._dropped = position
        self.draw_board(position)

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
                    if finished and self.held_notation is not None:  # the game's moves, to paste back, said last
                        self.say(self.held_notation)
                    return 0
                number += 1
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED

    def play_one(self, number: int) -> bool:
        """One game; False if a person quit in the middle ("Abandoned: you
        left." and the moves so far; Ctrl-C: then ``KeyboardInterrupt``
        again).  A person's confirmed ``r`` ends it as a game ends: the
        other side wins, "A (white) resigned"; a ``?`` says every column's
        score (the page's hint: ``AnalysisBoard.hint``) under the board
        drawn again, and the person moves."""
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
                f"{SIDE_NAMES['B']} is {seat['B']}; {SIDE_NAMES[start.to_move or 'A']} to move at the start."
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
        screen = TurnScreen(self, header, by_side, delay, start, title=f"Game {number} on {start.notation}.")
        if self.live:
            self.prepare_engines(start)
        here = start
        winner = self.winner_words(by_side)
        resigned = False
        try:
            while True:  # started again from where a person's u takes the game back to
                try:
                    record = play_game(
                        self.players[by_side["A"]], self.players[by_side["B"]], here,
                        on_turn=screen.before_move, on_move=screen.after_move,
                    )
                    position = record.final
                    result = result_line(position, winner)
                    break
                except LineStep as step:
                    here, said = self.take_back(screen.position, start.ply, by_side, step.delta)
                    screen.say_once(said)
                except HintAsked:  # the person's ?: the scores under the board, and the move asked again
                    here = screen.position
                    screen.hint_once(hint_words(here, self.hint(here)))
                except Resigned:  # the person to move resigned (r, confirmed): the other side wins
                    position = screen.position
                    assert position.to_move is not None
                    result = result_words(other(position.to_move), "resign", winner) + "."
                    resigned = True
                    break
                except QuitGame:  # the person's e, or the end of the input: the game is left (below)
                    raise
                except Exception as err:  # noqa: BLE001 - the computer player to move failed: it loses the game
                    # (an agent of one's own that raised or answered no legal move, an engine's program), as on
                    # the page and in the arena; a traceback ended the command
                    position = screen.position
                    assert position.to_move is not None
                    who = f"player {position.to_move} ({self.players[by_side[position.to_move]].spec})"
                    result = f"{result_words(other(position.to_move), 'failed', winner)}.\n{failure_words(err, who)}."
                    break
        except (QuitGame, KeyboardInterrupt) as stop:
            # the result's one sentence, as a game the page's players left ends; the moves, to paste back
            self.say(f"\n{result_words(None, 'abandoned', left='you')}.")
            self.say(f"The game so far in notation: {screen.position.notation}")
            if isinstance(stop, KeyboardInterrupt):
                raise
            return False
        finally:
            screen.stop_thinking()
        notation = f"The game in notation: {position.notation}"
        # (no row for a status line under the question: the next screen is drawn afresh, or the game is over)
        under = self.said_rows(result) + self.prompt_rows(self.play_again_prompt())
        self.held_notation = None
        if self.color and self.must_rows(position) + under + self.said_rows(notation) > self.console.height:
            self.held_notation = notation  # the board whole first; the notation follows the answer
        else:
            under += self.said_rows(notation)
        if self.color or not resigned:  # (printed as plain text, the board is above the question already)
            self.show(position, header, screen.next_note, title=screen.title, under=under)
        self.say(result)
        if self.held_notation is None:
            self.say(notation)
        return True

    def winner_words(self, by_side: dict[str, int]) -> Callable[[str], str]:
        """How a game's result line calls its winner, ``side``: the side
        and its player, the subject of "wins" (``result_words``)."""
        return lambda side: f"{side_with_name(side, self.labels[by_side[side]])},"

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


def run_terminal_game(settings: GameSettings) -> int:
    """``c4lab play --tui``."""
    return TerminalGame(settings).run()
