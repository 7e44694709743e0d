"""``solver`` and ``perfect``: play what the exact solver proves best.

A position is solved within the move's time (after a look in the classic
opening book); among the moves that keep the exact score -- which prefers the
fastest win and the slowest loss, since the score counts how soon the game
ends -- the one nearest the centre is played.  When the solve does not finish
in time, the move comes from ``master`` with the time that is left, and the
analysis says so.

``solved_move`` is also what the MCTS agents call in the end game.
"""

from __future__ import annotations

import time

from c4lab.agents.base import Agent, Analysis, Budget, MoveStats, Param, register
from c4lab.rules import Move, Position
from c4lab.solver.api import DEFAULT_TABLE_SIZE

DEFAULT_TIME = 1.0
#: Share of the move's time the solver may use before ``master`` takes over.
SOLVE_SHARE = 0.6


def _centre_first(position: Position, moves: tuple[Move, ...]) -> Move:
    width = position.variant.width
    return min(moves, key=lambda m: (abs(2 * m.column - (width - 1)), m.column, m.ban is not None, m.ban or 0))


def _value(score: int) -> float:
    return 1.0 if score > 0 else (0.0 if score < 0 else 0.5)


def solved_move(
    position: Position,
    *,
    timeout: float | None = None,
    max_nodes: int | None = None,
    book: bool = True,
    table_size: int = DEFAULT_TABLE_SIZE,
    weak: bool = False,
) -> tuple[Move, Analysis] | None:
    """A best move of ``position`` with its exact score, or ``None`` if the
    solver did not finish within ``timeout`` seconds / ``max_nodes`` nodes.
    (A small search needs a small table: ``table_size`` entries.)  With
    ``max_nodes`` the answer depends on the position alone.  With
    ``weak`` only win, draw or loss is proven (much cheaper), and the
    analysis lists every move that keeps it."""
    from c4lab.solver import Solver
    from c4lab.solver.book import book_move

    start = time.perf_counter()
    found = book_move(position) if book else None
    if found is not None:
        score, best = found
        move = _centre_first(position, tuple(best))
        return move, Analysis(
            moves=tuple(MoveStats(m, score=s) for m, s in best.items()), value=_value(score), pv=(move,),
            seconds=time.perf_counter() - start, note=f"opening book: exact score {score}",
        )
    solver = Solver(table_size)
    if max_nodes is not None:
        # A node limit promises the same answer every time, so the search
        # starts from an empty table: what earlier solves (this game's, or
        # the other agent's in the same process) left there would let it
        # finish sooner on one run than on another.
        solver.clear()
    solution = solver.solve(position, weak=weak, timeout=timeout, max_nodes=max_nodes, best_moves=True)
    if solution.score is None or not solution.best_moves:
        return None
    move = _centre_first(position, solution.best_moves)
    return move, Analysis(
        moves=tuple(MoveStats(m, score=solution.score) for m in solution.best_moves),
        value=_value(solution.score),
        pv=(move,),
        iterations=solution.nodes,
        seconds=time.perf_counter() - start,
        note=f"solved: {'weak' if weak else 'exact'} score {solution.score} ({solution.nodes} nodes)",
    )


@register(
    "solver",
    "plays a move that keeps the exact score (fastest win, slowest loss) when the position "
    "solves in time, else master's move (the analysis says which)",
    [
        Param("time", float, DEFAULT_TIME, "seconds per move"),
        Param("book", bool, True, "use the classic opening book"),
        Param("seed", int, None, "random seed of the fallback (master)"),
    ],
    presets={"perfect": ("level perfect: the solver with the classic opening book, 1 s a move", {})},
)
class SolverAgent(Agent):
    """The exact solver first, ``master`` when it cannot finish in time."""

    def __init__(self, time: float = DEFAULT_TIME, book: bool = True, seed: int | None = None) -> None:
        if not time > 0:
            raise ValueError(f"time must be positive, not {time}")
        from c4lab.agents.master import MasterAgent

        self.time = time
        self.book = book
        self.fallback = MasterAgent(time=time, seed=seed)

    def new_game(self) -> None:
        self.fallback.new_game()

    def choose(self, position: Position, budget: Budget | None = None) -> Move:
        return self.analyse(position, budget)[0]

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        start = time.perf_counter()
        seconds = budget.time if budget is not None and budget.time is not None else self.time
        found = solved_move(position, timeout=SOLVE_SHARE * seconds, book=self.book)
        if found is not None:
            return found
        left = max(seconds - (time.perf_counter() - start), 0.02)
        move, analysis = self.fallback.analyse(position, Budget(time=left))
        note = f"not solved in {SOLVE_SHARE * seconds:.2f} s: master's move"
        return move, Analysis(
            analysis.moves, analysis.value, analysis.pv, analysis.iterations, time.perf_counter() - start, note
        )
