"""What the terminal game shows between moves, as hooks of the game loop
(``c4lab.game.play_game``): the board before each move, a note on the
move just played, a status line while an agent thinks, and a pause after
an agent's move so that people can follow it."""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from c4lab.game import Turn
from c4lab.rules import Position
from c4lab.rules.sides import SIDE_NAMES, side_with_name
from c4lab.ui.board_view import move_words
from c4lab.ui.typed_keys import discard_typed_keys, not_taken

if TYPE_CHECKING:  # the hooks draw the game's screens; the game makes them
    from c4lab.ui.terminal import TerminalGame


class TurnScreen:
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
        self.note = ""  # the move just played: under every board until the next move
        self._once = ""  # what a key did (u, r, s), or what was typed and not taken: under the next board only
        self._hint = ""  # a game's ?: said under the next board, above its question, never left out
        self.thinking: _Thinking | None = None

    def say_once(self, note: str) -> None:
        """``note`` (what a key did: u, r, s) under the board drawn next,
        and no other: a drop on the bonus cell then draws the board again
        for the ban question, where "Taken back: A (white) plays a." stayed
        as if it spoke of the drop.  The note on a move played stays there
        (the last move before the drop)."""
        self.note, self._once = "", note

    def hint_once(self, words: str) -> None:
        """A game's ``?``: ``words`` said under the board drawn next, just
        above its question, and room kept for them (a note under the board
        is left out first on a short screen: on 12x12 at 80x16 the hint
        was never seen)."""
        self._hint = words

    @property
    def next_note(self) -> str:
        """The note under the board drawn next: the move just played, and
        under it what is said once (``say_once``, keys ``not_taken``)."""
        return "\n".join(part for part in (self.note, self._once) if part)

    def before_move(self, position: Position) -> None:
        self.position = position
        scores = self.game.column_scores(position) if self.game.settings.analyse else None
        assert position.to_move is not None
        index = self.by_side[position.to_move]
        if not self.game.settings.analyse and self.game.players[index].is_human:  # the board's u: always
            before = self.game.last_person_move(position, self.start_ply, self.by_side)
            self.game.take_back_offered = before is not None
        under = self.game.move_rows(position, self.game.players[index].is_human)
        hint, self._hint = self._hint, ""
        if hint:
            under += self.game.said_rows(hint)
        self.game.show(position, self.header, self.next_note, scores, title=self.title, under=under)
        if hint:
            self.game.say(hint)
        if self._once:  # said: the ban question's board, drawn next, keeps the move's note alone
            self._once = ""
            self.game.forget_note(keep=self.note)
        if self.game.live and not self.game.players[index].is_human:
            self.thinking = _Thinking(self.game, self.game.labels[index])

    def stop_thinking(self) -> None:
        if self.thinking is not None:
            self.thinking.stop()
            self.thinking = None

    def after_move(self, turn: Turn) -> None:
        index = self.by_side[turn.side]
        self.stop_thinking()
        who = f"{side_with_name(turn.side, self.game.labels[index])}," if self.named else SIDE_NAMES[turn.side]
        agent = self.game.players[index]
        analysis = None if agent.is_human else agent.last_analysis
        how = f" ({analysis.note})" if analysis is not None and analysis.fallback and analysis.note else ""
        # a move found another way than the agent's own (perfect's, when the solver ran out of time) says so
        self.note, self._once = f"{who} plays {move_words(turn.before, turn.move, turn.after)}{how}.", ""
        if not agent.is_human:
            if self.delay:
                time.sleep(self.delay)
            typed = discard_typed_keys()  # keys pressed while the agent thought do not count
            said = not_taken(typed, self.game.labels[index]) if any(p.is_human for p in self.game.players) else ""
            # under the board drawn next only (the redraw wiped the typing and the status line's "do not
            # count"); a drop on the bonus cell then draws the board again for the ban question, where it
            # stayed as if it spoke of that drop
            self._once = said


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
