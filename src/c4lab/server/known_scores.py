"""The exact scores the server's solver has found, kept so that a position
seen again is not scored worse than before.

On the analysis board a person steps into a line, where the solver settles
positions with fewer empty cells, then steps back: the position before
showed the engine's estimate for the move that led there, and asked again it
was solved again from nothing, within the same time, and showed the same
estimate, while the exact score of the position after that move was known.
RULES.md's score makes it the move's: a move that neither wins nor draws at
once is worth ``-score(P after m)``.  So every exact score a hint or a
review finds is kept here, for the position it scores and for the position
after each solved move; a move the solver leaves open takes the score of the
position it leads to where that is known (``fill``).

The scores are facts about positions (the notation names the board, the
cells and the moves), the same for every room and every person: one table
for the process, bounded (the least recently used go first), safe for the
server's worker threads.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from c4lab.rules import Position

#: Positions kept: about a hundred bytes each.
CAPACITY = 100_000


class KnownScores:
    """Exact scores by position notation, at most ``capacity`` of them."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self.capacity = capacity
        self._scores: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._scores)

    def clear(self) -> None:
        """Forget every score kept."""
        with self._lock:
            self._scores.clear()

    def get(self, position: Position) -> int | None:
        """``position``'s exact score for its side to move, if one was kept."""
        with self._lock:
            score = self._scores.get(position.notation)
            if score is not None:
                self._scores.move_to_end(position.notation)
            return score

    def keep(self, position: Position, score: int) -> None:
        """Keep ``position``'s exact ``score`` (for its side to move)."""
        with self._lock:
            self._scores[position.notation] = score
            self._scores.move_to_end(position.notation)
            while len(self._scores) > self.capacity:
                self._scores.popitem(last=False)

    def learn(self, position: Position, scores: dict[str, int | None], value: int | None) -> None:
        """Keep what the moves' ``scores`` of ``position`` (by token, None:
        not solved) and its ``value`` (None: not known) say: the value, and
        the score of the position after each solved move that does not end
        the game (minus the move's)."""
        if value is not None:
            self.keep(position, value)
        for move in position.legal_moves():
            score = scores.get(move.token)
            if score is None:
                continue
            after = position.play(move)
            if not after.is_over:
                self.keep(after, -score)

    def fill(self, position: Position, scores: dict[str, int | None]) -> dict[str, int | None]:
        """``scores`` of ``position``'s moves with each one left open (None)
        scored from the position it leads to, where that one's score is
        kept (a move that ends the game is always solved)."""
        filled = dict(scores)
        for move in position.legal_moves():
            if filled.get(move.token) is None:
                after = self.get(position.play(move))
                if after is not None:
                    filled[move.token] = -after
        return filled


#: The server process's table (the hints' and the reviews' solver).
KNOWN = KnownScores()
