"""A tournament's standings: every agent's totals, the cross table of who
scored what against whom, the ranking, and each agent's Elo against the
field (a performance: its overall score against the average of the
opponents it met; the ratings fitted to the whole tournament are
``c4lab.arena.ratings``).  ``c4lab arena`` reports with it; the intervals
are ``c4lab.arena.stats``'s trinomial ones.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from c4lab.arena.stats import GAME_SCORES, Record, Trinomial

__all__ = ["Cell", "Outcome", "Standing", "Table", "rank"]

#: ``(agent playing A, agent playing B, result)`` with result "A", "B" or "draw".
Outcome = tuple[str, str, str]


@dataclass(frozen=True)
class Cell:
    """A cell of the cross table: ``row``'s score against ``column``."""

    row: str
    column: str
    score: float
    games: int

    @property
    def fraction(self) -> float:
        """The score over the games (``nan`` without games)."""
        return self.score / self.games if self.games else math.nan


@dataclass(frozen=True)
class Standing(Record):
    """One agent's totals over all its games, and its Elo against the field.

    ``elo`` is the Elo of its overall score fraction: its strength relative
    to the average of the opponents it met (a performance, not a fitted
    rating: in a gauntlet or an unbalanced schedule the fields differ).
    The interval is the trinomial one of its pooled games."""

    agent: str
    wins: int
    draws: int
    losses: int
    elo: float
    elo_low: float
    elo_high: float


@dataclass(frozen=True)
class Table:
    """A tournament's standings (best first) and its cross table (every
    ordered pair of distinct agents, rows and columns in ranking order;
    pairs that never met have 0 games)."""

    standings: tuple[Standing, ...]
    cells: tuple[Cell, ...]

    @property
    def agents(self) -> tuple[str, ...]:
        """The agents in ranking order."""
        return tuple(s.agent for s in self.standings)

    def standing(self, agent: str) -> Standing:
        """``agent``'s standing; ``KeyError`` for an agent of no game here."""
        for s in self.standings:
            if s.agent == agent:
                return s
        raise KeyError(agent)

    def cell(self, row: str, column: str) -> Cell:
        """``row``'s score against ``column``."""
        for c in self.cells:
            if c.row == row and c.column == column:
                return c
        raise KeyError((row, column))


def rank(outcomes: Iterable[Outcome], *, level: float = 0.95) -> Table:
    """Totals, cross table and ranking of a list of games.

    Agents are ranked by score fraction, highest first; equal fractions by
    name, so the order never depends on the order of the games."""
    records: dict[str, list[int]] = {}  # wins, draws, losses
    cross: dict[tuple[str, str], list[float]] = {}  # score, games
    for outcome in outcomes:
        a, b, result = outcome
        if result not in ("A", "B", "draw"):
            raise ValueError(f"a result is 'A', 'B' or 'draw', not {result!r} in {outcome!r}")
        if a == b:
            raise ValueError(f"an agent does not play itself: {outcome!r}")
        score_a = 1.0 if result == "A" else 0.0 if result == "B" else 0.5
        for me, other, score in ((a, b, score_a), (b, a, 1.0 - score_a)):
            records.setdefault(me, [0, 0, 0])[GAME_SCORES.index(score)] += 1
            cell = cross.setdefault((me, other), [0.0, 0])
            cell[0] += score
            cell[1] += 1
    standings = []
    for agent, (wins, draws, losses) in records.items():
        record = Trinomial(wins, draws, losses)
        standings.append(Standing(agent, wins, draws, losses, record.elo, *record.elo_interval(level)))
    standings.sort(key=lambda s: (-s.fraction, s.agent))
    order = [s.agent for s in standings]
    cells = []
    for row in order:
        for column in order:
            if row != column:
                score, games = cross.get((row, column), (0.0, 0))
                cells.append(Cell(row, column, score, int(games)))
    return Table(tuple(standings), tuple(cells))
