"""Quick paired matches, and the random starts they (and the arena) use.

A *paired* match plays every opening twice, sides swapped, so that neither
agent profits from a lucky board or from moving first.  Each game is played
by the one game loop (``c4lab.game.play_game``), errors raised.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from c4lab.agents import Budget, make_agent
from c4lab.agents.base import check_budget
from c4lab.agents.spec_names import canonical_spec
from c4lab.game import GameRecord, play_game
from c4lab.rules import Position
from c4lab.rules.setup import RANDOM, starting_position
from c4lab.rules.variant import integer


@dataclass
class MatchResult:
    """Scores of a match between two specs (win 1, draw 0.5)."""

    first: str
    second: str
    games: list[GameRecord] = field(default_factory=list)

    def score(self, spec: str) -> float:
        """The points of ``spec`` (one of the two, in any spelling of it:
        ``canonical_spec``): a win 1, a draw ½.  ``ValueError`` for another
        spec (it would score 0, or a draw's ½)."""
        named = canonical_spec(spec)
        if named not in (self.first, self.second):
            raise ValueError(f"{spec!r} did not play this match (its specs: {self.first!r}, {self.second!r})")
        return sum(1.0 if g.winner == named else 0.5 if g.winner is None else 0.0 for g in self.games)

    @property
    def wins(self) -> tuple[int, int, int]:
        """(wins of the first spec, draws, wins of the second)."""
        first = sum(g.winner == self.first for g in self.games)
        second = sum(g.winner == self.second for g in self.games)
        return first, len(self.games) - first - second, second

    def rate(self, spec: str) -> float:
        """The score of ``spec`` as a fraction of the games (0 before any
        game); ``ValueError`` for another spec, as ``score``'s, with games
        or not."""
        points = self.score(spec)
        return points / len(self.games) if self.games else 0.0


def paired_match(
    first: str,
    second: str,
    openings: Iterable[Position],
    budget: Budget | None = None,
) -> MatchResult:
    """Every opening twice, ``first`` playing A then B, each agent asked
    with ``budget`` (``None``: its spec's own).

    Quick and in this process: each spec's agent is built once and plays
    every game (``new_game`` between them), so a spec without ``seed=``
    plays differently on every call; give seeds for a match that replays.
    The arena (``c4lab.arena.runner.run_arena``) seeds them itself, builds
    fresh agents for every game, judges forfeits and time, and runs on
    several cores.  The specs are named in their canonical form
    (``c4lab.agents.canonical_spec``), as in the arena: the result's
    ``first``, ``second`` and games name ``uct:iterations=0200`` as
    ``uct:iterations=200``.  ``openings`` is any iterable of positions (a
    generator is read once, before the games; a generator's openings were
    used up by their check and no game was played).  ``ValueError`` for a
    finished opening (its two games would count a result nobody played) or
    two specs of one agent; ``TypeError`` for an opening that is not a
    ``Position``, one position or string where the list goes, or a budget
    that is not a ``Budget``."""
    if isinstance(openings, Position | str):
        raise TypeError(f"openings are a list of Positions, not one {type(openings).__name__} {openings!r:.60} "
                        "([position] for one)")
    check_budget(budget, "paired_match: the budget")  # before any agent is built (and compiled)
    openings = list(openings)
    given = (first, second)
    first, second = canonical_spec(first), canonical_spec(second)
    if first == second:
        shown = f"{given[0]!r} and {given[1]!r} are" if given[0] != given[1] else f"{given[0]!r} twice is"
        raise ValueError(f"a match needs two different agents: {shown} the same agent ({first})")
    for index, opening in enumerate(openings):
        if not isinstance(opening, Position):
            raise TypeError(f"opening {index} must be a Position, not {opening!r}"
                            + (f" (Position.parse({opening!r}) reads it)" if isinstance(opening, str) else ""))
        if opening.is_over:
            raise ValueError(f"opening {index} ({opening.notation}) is a finished game: there is nothing to play")
    agents = {first: make_agent(first), second: make_agent(second)}
    result = MatchResult(first, second)
    for opening in openings:
        for a_spec, b_spec in ((first, second), (second, first)):
            result.games.append(play_game(agents[a_spec], agents[b_spec], opening, budget, a_spec, b_spec))
    return result


def random_moves(rng: random.Random, position: Position, plies: int) -> Position:
    """``position`` after ``plies`` random moves drawn from ``rng``, fewer if
    the game ends (the caller decides whether to draw again)."""
    for _ in range(plies):
        if position.is_over:
            break
        position = position.play(rng.choice(position.legal_moves()))
    return position


def random_openings(n: int, seed: int, *, boards: list[str] | None = None, plies: int = 0) -> list[Position]:
    """``n`` starting positions: boards drawn from ``boards`` (position
    strings: ``rules.setup.starting_position``) or the enhanced setup, then
    ``plies`` random moves.  ``seed`` is an integer: a string or a float
    would seed another set quietly, so they are a ``ValueError``."""
    rng = random.Random(integer(seed, "random_openings: seed"))
    openings: list[Position] = []
    while len(openings) < n:
        board = rng.choice(boards) if boards else RANDOM
        position = random_moves(rng, starting_position(board, False, rng), plies)
        if not position.is_over:
            openings.append(position)
    return openings
