"""A best move of a position, proven: the solver's service to the agents.

The ``solver`` and ``perfect`` agents play it every move; ``master`` and the
MCTS agents ask for it in the end game, where a node limit keeps it cheap
(and reproducible).  It first looks in the classic opening book, then
searches.  Among the moves that keep the exact score -- which prefers the
fastest win and the slowest loss, since the score counts how soon the game
ends -- the one nearest the centre is played.

It answers in the solver's own terms (a move, the moves that keep the score,
the score, the work done); the agents turn that into their ``Analysis``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from c4lab.rules.move import Move
from c4lab.rules.position import Position
from c4lab.solver.api import DEFAULT_TABLE_SIZE, Solver
from c4lab.solver.book import book_move


@dataclass(frozen=True)
class ProvenMove:
    """A move that keeps ``score``, and every move that does.

    ``score`` is exact, or with ``weak`` only its sign (1, 0 or -1);
    ``nodes`` is ``None`` for a book move.  ``note`` says how it was found."""

    move: Move
    keeping: tuple[Move, ...]
    score: int
    weak: bool
    nodes: int | None
    seconds: float
    note: str


def centre_first(position: Position, moves: tuple[Move, ...]) -> Move:
    """The move of ``moves`` nearest the centre column (plain moves before bans)."""
    width = position.variant.width
    return min(moves, key=lambda m: (abs(2 * m.column - (width - 1)), m.column, m.ban is not None, m.ban or 0))


def best_move(
    position: Position,
    *,
    timeout: float | None = None,
    max_nodes: int | None = None,
    book: bool = True,
    table_size: int = DEFAULT_TABLE_SIZE,
    weak: bool = False,
    solver: Solver | None = None,
) -> ProvenMove | None:
    """A best move of ``position`` with its exact score, or ``None`` if the
    solver did not finish within ``timeout`` seconds / ``max_nodes`` nodes.
    (A small search needs a small table: ``table_size`` entries.)  With
    ``max_nodes`` the answer depends on the position alone.  With ``weak``
    only win, draw or loss is proven (much cheaper), and ``keeping`` lists
    every move that keeps it.  ``solver``: the ``Solver`` to search with
    (by default a new one with ``table_size`` entries), for a caller that
    may stop it from another thread (``Solver.cancel``: then ``None``)."""
    start = time.perf_counter()
    found = book_move(position) if book else None
    if found is not None:
        score, best = found
        keeping = tuple(best)
        return ProvenMove(
            centre_first(position, keeping), keeping, score, False, None,
            time.perf_counter() - start, f"opening book: exact score {score}",
        )
    solver = solver or Solver(table_size)
    if max_nodes is not None:
        # A node limit promises the same answer every time, so the search
        # starts from an empty table: what earlier solves (this game's, or
        # the other agent's in the same process) left there would let it
        # finish sooner on one run than on another.
        solver.clear()
    solution = solver.solve(position, weak=weak, timeout=timeout, max_nodes=max_nodes, best_moves=True)
    if solution.score is None or not solution.best_moves:
        return None
    return ProvenMove(
        centre_first(position, solution.best_moves), solution.best_moves, solution.score, weak, solution.nodes,
        time.perf_counter() - start,
        f"solved: {'weak' if weak else 'exact'} score {solution.score} ({solution.nodes} nodes)",
    )
