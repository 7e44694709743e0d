"""``heuristic``: a fast rule-based player that looks one or two plies ahead.

Every legal move token (each ban column and the decline count as separate
moves) is played through ``Position`` and the position after it is scored:

1. a move that wins scores highest;
2. a move after which the opponent can win at once scores lowest.  This one
   rule blocks the opponent's immediate wins and refuses to play under the
   opponent's winning cell (the cell the next piece in that column lands on:
   gravity, forbidden cells and bans are the kernels' business);
3. a move that leaves two immediate wins for us (a double threat) is next
   best; one after which the opponent has a reply making two immediate wins
   of its own is avoided (this blocks an open two such as ``_AA__`` on the
   bottom row before it becomes an open three);
4. otherwise: the window evaluation (open windows, centre preference; see
   ``evaluation``), plus our threats (empty cells where our piece would
   complete four) not yet playable, worth more on our good rows (odd rows
   1, 3, 5... counting from 1 at the bottom for A, even rows for B, who then
   win the zugzwang fights of the end game), minus the opponent's.

At a bonus landing the same scoring picks the ban: a ban on the opponent's
winning cell makes the move safe, a ban in a window of theirs lowers their
evaluation, and declining wins when no ban helps.  Ties are broken at random
(``seed=``).  A threat is found with the kernels' own win test.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.agents.base import Agent, Analysis, Budget, MoveStats, Param, register, seed_value
from c4lab.agents.evaluation import evaluate
from c4lab.rules import Move, Position
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error

WINS = 1_000_000
LOSES = -1_000_000
DOUBLE_THREAT = 10_000
ALLOWS_DOUBLE_THREAT = -5_000
GOOD_ROW_THREAT = 40
OTHER_THREAT = 15


@njit(cache=True)
def _threats(geo, st, side, out):
    """The empty cells where a piece of ``side`` would complete four (the
    kernels' win test): ``out[i] = (cell, 1 if it is its column's landing
    cell, a win at once, else 0)``; returns how many."""
    n = 0
    side = K.U(side)
    for c in range(K.U(K.board_width(geo))):
        for r in range(K.U(K.board_height(geo))):
            cell = c * K.STRIDE + r
            if K.cell_code(st, cell) == K.EMPTY and K.would_win(geo, st, side, c, r):
                out[n, 0] = cell
                out[n, 1] = K.U(K.landing_row(st, c)) == r
                n += 1
    return n


@dataclass(frozen=True)
class Threats:
    """One side's threats: ``now`` the columns it would win in at once,
    ``later`` the rows (0-based) of its threat cells not yet playable."""

    now: tuple[int, ...]
    later: tuple[int, ...]


def threats(position: Position, side: int) -> Threats:
    """The threats of ``side`` (0 for A, 1 for B) in ``position``."""
    geo, st = position.kernel_arrays()
    out = np.empty((K.NCELLS, 2), dtype=np.int64)
    n = _threats(geo, st, side, out)
    now = tuple(int(cell) // 16 for cell, landing in out[:n] if landing)
    later = tuple(int(cell) % 16 for cell, landing in out[:n] if not landing)
    return Threats(now, later)


def _threat_worth(rows: tuple[int, ...], side: int) -> int:
    """Threat cells on ``side``'s good rows (0-based row parity = side) count more."""
    return sum(GOOD_ROW_THREAT if row % 2 == side else OTHER_THREAT for row in rows)


def _allows_double_threat(position: Position, me: int) -> bool:
    """Has the opponent (to move) a reply after which it has two immediate
    wins and we have none?"""
    for reply in position.legal_moves():
        after = position.play(reply)
        if after.is_over or threats(after, me).now:
            continue
        if len(threats(after, 1 - me).now) >= 2:
            return True
    return False


def score_after(position: Position, me: int) -> int:
    """How good ``position`` (just after our move; ``me``: 0 for A, 1 for B)
    is for us, by the rules of the module docstring."""
    if position.is_over:
        return WINS if position.result == "AB"[me] else 0
    theirs = threats(position, 1 - me)
    if theirs.now:
        return LOSES - len(theirs.now)
    ours = threats(position, me)
    score = -evaluate(position)  # evaluate() speaks for the opponent, to move
    if len(ours.now) >= 2:
        score += DOUBLE_THREAT
    elif _allows_double_threat(position, me):
        score += ALLOWS_DOUBLE_THREAT
    return score + _threat_worth(ours.later, me) - _threat_worth(theirs.later, 1 - me)


@register(
    "heuristic",
    "rule-based, one or two plies: win, block, never play under the opponent's "
    "winning cell, stop double threats, build threats on its good rows, centre",
    [Param("seed", int, None, "random seed for ties (default: fresh each run)")],
)
class HeuristicAgent(Agent):
    """Plays the best-scored move (``score_after``), ties broken at random."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng = random.Random(seed_value(seed, type(self).__name__))

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """The move, and every legal move's score (``score_after``)."""
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        me = 0 if position.to_move == "A" else 1
        scores = {move: score_after(position.play(move), me) for move in position.legal_moves()}
        best = max(scores.values())
        move = self._rng.choice([m for m, s in scores.items() if s == best])
        return move, Analysis(moves=tuple(MoveStats(m, score=s) for m, s in scores.items()))
