"""Where a training run stops its workers so that its network can be
judged at an exact number of games: the points of a curve given in games.

A run of ``c4lab train ntuple --games N`` measures its curve every
twentieth of the run.  Judged while the workers trained on, a point landed
wherever the workers happened to be when the judging began, and on a
short run (4x4, 20,000 games: a few seconds of training, a point taking
longer than that) only the first and the last point were left.  So a run
given in games pauses instead: no worker takes a game past the next
multiple of ``every`` until the trainer has judged the network there, and
the seconds spent paused are not training seconds.  A run given in
seconds does not pause (its points are placed by the clock).
"""

from __future__ import annotations

import threading
import time


class Pauses:
    """The pauses of one ``Trainer.run``: after every ``every`` games of
    the run (None: never), up to ``total`` games (at the end the run
    ends, it does not pause).  The trainer's lock guards it: ``room`` and
    ``wait`` are called with it held."""

    def __init__(self, every: int | None, total: int, lock: threading.Lock) -> None:
        self.every = every
        self.total = total
        #: the run's games no worker may take beyond until the pause there is over
        self.limit = total if not every else min(every, total)
        self.turn = threading.Condition(lock)
        #: the seconds spent paused, taken off the run's clock
        self.seconds = 0.0
        #: the run's games played to the end (a chunk counts when it ends)
        self.played = 0

    def room(self, taken: int) -> int:
        """How many games may be taken when ``taken`` of the run's are."""
        return self.limit - taken

    def due(self) -> bool:
        """Whether a pause has come: the run's games up to it are all
        played, and the run goes on after it."""
        return self.limit < self.total and self.played >= self.limit

    def wait(self) -> None:
        """A worker with no room waits (the lock released meanwhile) for
        the pause to end, or a fifth of a second: its caller then looks
        whether the run was stopped (Ctrl-C, a failed worker)."""
        self.turn.wait(0.2)

    def resume(self, began: float) -> None:
        """The pause that began at ``began`` (``time.monotonic``) is over:
        the workers go on to the next one."""
        with self.turn:
            assert self.every is not None
            self.limit = min(self.limit + self.every, self.total)
            self.seconds += time.monotonic() - began
            self.turn.notify_all()


__all__ = ["Pauses"]
