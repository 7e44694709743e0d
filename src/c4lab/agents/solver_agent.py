"""``solver`` and ``perfect``: play what the exact solver proves best.

A position is solved within the move's time (after a look in the classic
opening book: ``c4lab.solver.best_move``).  When the solve does not finish in
time, the move comes from the fallback agent (``master`` by default) with the
time that is left, and the analysis says so.

On a board too big to solve, most of a game's positions are out of reach,
and a solve that spends 60 % of every move before it gives up would leave
the fallback 40 % of its time all game.  So after a solve ran out of time,
the next moves give the solver only a probe (``PROBE_SHARE``, a tenth:
enough to see when the game comes within its reach, as a solve's cost falls
several times over with each pair of moves) and the whole share again only
``2 ** (k + 1)`` plies after the k-th failure in a row (``_due``); any
finished solve starts over.  On 12x12/Xf4 at 1 s a move the fallback has
about 0.87 s of most moves instead of 0.4 s, and against
``master`` it went from 1 game won of 20 to 6 (docs/agents.md).

``solved_move`` (the solver's proven move as an ``Analysis``) is also what
``master`` and the MCTS agents call in the end game.
"""

from __future__ import annotations

import contextlib
import random
import time

from c4lab.agents.base import (
    MAX_SECONDS,
    Agent,
    Analysis,
    Budget,
    MoveStats,
    Param,
    StopRequest,
    make_agent,
    register,
    seed_value,
)
from c4lab.rules import Move, Position
from c4lab.solver.api import DEFAULT_TABLE_SIZE, Solver
from c4lab.solver.api import expect as expect_position
from c4lab.solver.best_move import best_move

DEFAULT_TIME = 1.0
#: Share of the move's time the solver may use before the fallback takes over.
SOLVE_SHARE = 0.6
#: The share of a move the solver gets while it keeps running out of time
#: (see the module's docstring).
PROBE_SHARE = 0.1
#: On a budget of iterations (``Budget(iterations=N)``, ``c4lab move
#: --iterations``), no clock: the solves stop at these node counts, so that a
#: move is the same on every machine, and the fallback searches its N
#: iterations.  About 0.6 s and 0.06 s at the solver's 3-4 million nodes a
#: second here (9x8/Xd3, 12x12/Xf4), the shares of a 1 s move.
SOLVE_NODES = 2_000_000
PROBE_NODES = 200_000


#: What ``perfect`` is, board by board: only the classic board has a database (and a book, if one was built);
#: it said "the solver with the classic opening book", as though there were one on every board, shipped.
PERFECT_HELP = (
    "level perfect: the solver, 1 s a move: a move that keeps the exact score where the position solves in "
    "time, else master's move. On the classic 7x6 board the search ends at the published 12-ply database (after "
    "a look in a book of your own from `c4lab book build`, if any); other boards have neither, and their early "
    "positions (7x6/Xd3, 9x8) get master's moves"
)


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
    stop: StopRequest | None = None,
) -> tuple[Move, Analysis] | None:
    """``c4lab.solver.best_move.best_move`` (same arguments) as an agent's
    answer: the move, and an analysis that lists every move keeping the
    score; ``None`` if the solver did not finish, or gave up at ``stop``
    (an agent's ``stop_request``: the solve is cancelled when it is set)."""
    solver = Solver(table_size)
    with stop.calls(solver.cancel) if stop is not None else contextlib.nullcontext():
        found = best_move(
            position, timeout=timeout, max_nodes=max_nodes, book=book, table_size=table_size, weak=weak,
            solver=solver,
        )
    if found is None:
        return None
    return found.move, Analysis(
        moves=tuple(MoveStats(m, score=found.score) for m in found.keeping),
        value=_value(found.score),
        pv=(found.move,),
        iterations=found.nodes,
        seconds=found.seconds,
        note=found.note,
    )


@register(
    "solver",
    "plays a move that keeps the exact score (fastest win, slowest loss) when the position "
    "solves in time, else master's move (the analysis says which)",
    [
        Param("time", float, DEFAULT_TIME, "seconds per move", minimum=0, above=True, maximum=MAX_SECONDS),
        Param("book", bool, True, "look first in a classic 7x6 book built with `c4lab book build`, if there is "
              "one (the 12-ply database is read in any case; other boards have neither)"),
        Param("seed", int, None, "random seed of the fallback (master) and of random ties"),
        Param("ties", str, "centre", "among the moves that keep the exact score: the one nearest the centre, "
              "or one at random (a perfect opponent that varies its games, as GBG's evaluator's)",
              choices=("centre", "random")),
    ],
    presets={"perfect": (PERFECT_HELP, {})},
)
class SolverAgent(Agent):
    """The exact solver first, the fallback agent when it cannot finish in time.

    A stop request (``request_stop``) cancels the solve under way and
    reaches the fallback, which it shares (``share_stop``): the fallback
    then answers at once.  A solve cut short so does not count as one that
    ran out of time (``_share``'s schedule)."""

    def __init__(
        self, time: float = DEFAULT_TIME, book: bool = True, seed: int | None = None, fallback: Agent | None = None,
        ties: str = "centre",
    ) -> None:
        """``fallback`` plays when the solver cannot finish in time; by
        default ``master`` with the same time (and ``seed``)."""
        if not time > 0:
            raise ValueError(f"time must be positive, not {time}")
        self.time = time
        self.book = book
        self.ties = ties
        self._rng = random.Random(seed_value(seed, type(self).__name__))
        self.fallback = fallback or make_agent(f"master:time={time:g}" + ("" if seed is None else f",seed={seed}"))
        self.share_stop(self.fallback)
        self._failures = 0  # solves with the whole share that ran out of time in a row
        self._due: tuple[object, int] | None = None  # (board, empty cells) from which the whole share is due

    def new_game(self) -> None:
        self.fallback.new_game()
        self._failures = 0
        self._due = None

    def _share(self, position: Position) -> float:
        """The share of the move the solver gets here: the whole
        ``SOLVE_SHARE`` unless the last whole solves on this board ran out of
        time and the game is not yet ``_due`` plies further on."""
        if self._due is None:
            return SOLVE_SHARE
        variant, cells = self._due
        if variant != position.variant or position.empty_cells <= cells:
            return SOLVE_SHARE
        return PROBE_SHARE

    def _count(self, position: Position, share: float, solved: bool) -> None:
        """Keep the schedule of whole solves (``_share``) after a solve."""
        if solved:
            self._failures, self._due = 0, None
        elif share == SOLVE_SHARE:
            self._failures += 1
            self._due = (position.variant, position.empty_cells - 2 ** (self._failures + 1))

    def expect(self, text: str) -> None:
        """The solver's search, compiled by a child while the moves are read
        (``solver.api.expect``)."""
        expect_position(text)

    def compile_rest(self, start: Position) -> None:
        """The fallback's searches, which the warm-up's solved moves do not
        reach but a solve that runs out of time does."""
        self.fallback.compile_rest(start)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """The solver's move within its share of the move: of the time (the
        budget's, else the spec's ``time``), or, on a budget of iterations,
        of ``SOLVE_NODES`` (reproducible); else the fallback's with what is
        left (on iterations: the budget's iterations)."""
        start = time.perf_counter()
        iterations = budget.iterations if budget is not None else None
        seconds = budget.time if budget is not None and budget.time is not None else (
            None if iterations is not None else self.time)
        share = self._share(position)
        nodes = None if iterations is None else (SOLVE_NODES if share == SOLVE_SHARE else PROBE_NODES)
        found = solved_move(position, timeout=None if seconds is None else share * seconds, max_nodes=nodes,
                            book=self.book, stop=self.stop_request)
        stopped = found is None and bool(self.stop_request)
        if not stopped:
            self._count(position, share, found is not None)
        if found is not None:
            move, analysis = found
            keeping = [stats.move for stats in analysis.moves]
            if self.ties == "random" and len(keeping) > 1:
                move = self._rng.choice(keeping)
                analysis = Analysis(analysis.moves, analysis.value, (move,), analysis.iterations, analysis.seconds,
                                    f"{analysis.note}; a random one of the {len(keeping)} moves that keep it")
            return move, analysis
        solving = time.perf_counter() - start
        left = None if seconds is None else max(seconds - solving, 0.02)
        move, analysis = self.fallback.analyse(position, Budget(time=left, iterations=iterations))
        name = self.fallback.spec.partition(":")[0] or "the fallback"
        limits = ([] if seconds is None else [f"{share * seconds:.2f} s"]) + ([] if nodes is None else [f"{nodes:,} nodes"])
        limit = " or ".join(limits)
        tried = f"stopped after {solving:.2f} s" if stopped else f"not solved in {limit}"
        note = f"{tried}: {name}'s move"
        return move, Analysis(
            analysis.moves, analysis.value, analysis.pv, analysis.iterations, time.perf_counter() - start, note,
            fallback=self.fallback.spec or name,
        )
