"""``master``: our strongest player under a time budget (1 s a move).

Three searches, each doing what it is best at:

0. The exact solver: in the classic opening (at most 12 pieces) its exact
   move, read from the published 12-ply database at the search's frontier
   (within ``CLASSIC_SHARE`` of the time);
   in the middle game as soon as it is cheap, a weak
   solve (win, draw or loss) with a node or time limit: a proven win is
   played without UCT (minimax's tactics first look for a quicker win than
   the probe's move, which keeps the win but may take long), and in a proven
   draw only the moves that keep the draw are left to the searches below.  (In a proven loss every move loses
   against perfect play; the searches below pick the one that is hardest to
   answer.)
1. ``minimax`` (alpha-beta, exact wins) to depth 6 (``FIXED_DEPTH``, or
   ``depth=``), within ``share`` of the time at most, with every root move
   searched to an exact score: a proven win is played at once, and moves
   proven to lose within its horizon are ruled out.  Alpha-beta sees the
   short forced lines that sampling misses.  On an open board depth 6
   takes a few hundredths of a second, and UCT gets the rest of the move:
   deepening through the whole share instead (about 0.3 s of 1 s) scored
   41 % against this (49.5 of 120 paired games, 0.5 s a move, random
   enhanced boards, 2026-12-01), so the depth stays.
2. UCT for the rest, in the variant that won our paired matches at equal
   time: MCTS-Solver, playouts that take wins and block losses with
   Last-Good-Reply-2, c = 0.5, the most visited move, the tree kept between
   moves.  It plays the best of its moves that minimax did not rule out.
   (A first timed move whose minimax a child process compiles runs UCT
   first, while the child compiles: ``_aside``.)

Choices measured with paired games on random enhanced boards: smart
playouts beat random ones 0.66, Last-Good-Reply-2 on top scored 0.70,
c = 0.5 scored 0.62 against 1/sqrt(2), a transposition table 0.38 (worse);
the UCT part alone lost a third of its games to ``minimax`` at equal time,
which the tactical check is there to stop.
"""

from __future__ import annotations

import functools
import time
from dataclasses import replace

from c4lab import compile_aside
from c4lab.agents.base import MAX_SECONDS, Agent, Analysis, Budget, Param, register
from c4lab.agents.minimax import WIN, MinimaxAgent, compile_search
from c4lab.agents.minimax import on_disk as minimax_on_disk
from c4lab.agents.solver_agent import solved_move
from c4lab.agents.uct import DEFAULT_ITERATIONS, ENDGAME_CELLS, ENDGAME_NODES, ENDGAME_TABLE, UCTAgent
from c4lab.agents.uct_search import NO_LEAF, Leaf
from c4lab.agents.uct_search import on_disk as uct_on_disk
from c4lab.rules import Move, Position, Variant
from c4lab.rules import kernels as K
from c4lab.rules.position import load_play
from c4lab.solver.api import Solver
from c4lab.solver.api import compile_search as compile_solver
from c4lab.solver.database import reaches

DEFAULT_TIME = 1.0
#: How late a timed move may come back: minimax's last depth overruns by a
#: few milliseconds (up to about 20 ms on a busy machine), UCT's last chunk
#: by up to ``uct.TIME_MARGIN``.
TIME_MARGIN = 0.05
DEFAULT_SHARE = 0.3
#: minimax's depth, on a clock as on iterations (a tactics check: see above).
FIXED_DEPTH = 6
#: The solver probe: tried with this many empty cells or fewer (beyond that
#: it seldom finishes within a move), with a node limit when master runs on
#: iterations (reproducible) and a share of the time when it runs on time.
PROBE_CELLS = 32
PROBE_NODES = 200_000
PROBE_SHARE = 0.25
PROBE_TABLE = 1 << 20  # entries (32 MB a thread)
#: The classic opening's solve (down to the 12-ply database): this share of
#: a timed move.  Its exact move is worth far more than what minimax and UCT
#: find in the rest, and the searches nearest the empty board take 0.02-0.05 s
#: here, 0.1-0.2 s on a busy machine: a quarter of ``time=0.5`` left the
#: empty board unsolved in four fresh runs of four on such a machine (UCT
#: then played c, a draw, once).
CLASSIC_SHARE = 0.75


#: A board of each win-test encoding (``K.board_kind``: one-word bitboards
#: or not), for a throwaway iteration that compiles that encoding's policy
#: playouts.
_ENCODING_BOARD = {True: "7x6", False: "9x8"}


def _bitboard(position: Position) -> bool:
    """Whether ``position``'s board uses one-word bitboards (``K.board_kind``):
    the encoding whose policy playouts master's UCT runs there."""
    return K.board_kind(position.kernel_arrays()[0])[1]


def _throwaway_iteration(leaf: Leaf | None, bitboard: bool) -> None:
    """One iteration of a fresh search configured as master's UCT, with
    ``leaf`` at its leaves, on a board of the encoding ``bitboard``: what
    compiles (or loads) its kernels, the search for every board and the
    policy playouts for the boards of that encoding."""
    agent = UCTAgent(solver=True, policy="smart", lgr=2, c=0.5, final="visits", seed=0)
    agent.leaf = leaf
    agent.search(Position.parse(_ENCODING_BOARD[bitboard]), Budget(iterations=1))


#: The ``(valued, bitboard)`` pairs ``_compile_uct`` has prepared in this process.
_uct_ready: set[tuple[bool, bool]] = set()


def _compile_uct(bitboard: bool, valued: bool = False) -> None:
    """master's UCT search, with its policy playouts for the boards of the
    encoding ``bitboard``, compiled or loaded from numba's cache, once per
    process; ``valued``: the search with a network's value at its leaves (a
    kernel of its own, ``uct_search._search_kernel``), outside any timed
    move: the empty stand-in network's arrays have a network's types."""
    if (valued, bitboard) not in _uct_ready:
        _throwaway_iteration(NO_LEAF if valued else None, bitboard)
        _uct_ready.add((valued, bitboard))


#: What a child compiles: minimax's search, then the rules' ``check`` for
#: compiled callers (the policy playouts call it: a later process loads it
#: from the cache), then ``check`` for ``Position``'s arrays and ``play``
#: (``rules.position.load_play``: what a game needs once its first moves,
#: run interpreted, are past: ``rules.interpreted``).
_CHECK = f"{K.compile_check.__module__}:compile_check"
_MINIMAX = f"{compile_search.__module__}:compile_search"
_PLAY = f"{load_play.__module__}:load_play"


@functools.cache
def _aside(bitboard: bool) -> compile_aside.Aside | None:
    """A child process that compiles minimax's search into numba's cache
    (``c4lab.compile_aside``) while this one compiles UCT (its search, or
    only its policy playouts where a level left the search on disk), started
    the first time a search here needs both and neither is compiled in this
    process or on disk.  A first timed move then searches with UCT while the
    child compiles, and with minimax after it (``MasterAgent._search``): the
    child's start (about 0.5 s) and minimax's compiling (about 2.8 s) lie
    under UCT's compiling and its share of the move.  On an empty cache
    this is the larger share here (UCT's search and playouts, about 4.4 s),
    as before; after a level, the child took the playouts and this process
    compiled minimax, and the move waited for both in turn (the first
    ``master`` move on 9x8/Xd3 after ``hard``: 4.9-5.1 s, 4.3-4.6 s now).
    The child compiled the rules' ``check`` for compiled callers
    (``_CHECK``, 0.25-0.4 s) first, for this process's policy playouts to
    load; on a slow day this process had begun compiling it itself before
    it was on disk (traced, 2026-12-06), and the move waited for the
    child's minimax 0.6 s longer: minimax comes first now (the first
    ``master`` move after ``hard``, three cold runs of each, alternated: on
    9x8/Xd3 5.28-5.74 and 5.76-6.11 → 4.94-5.32 and 5.06-5.78 s, on
    12x12/Xf4/Bc2 5.19-6.03 → 5.06-5.19 s; the very first on 9x8/Xd3
    6.18-6.84 → 6.00-6.68 s).  After minimax, ``_CHECK``, then ``check`` for ``Position``
    and ``play`` (``_PLAY``): ``c4lab move`` checks the answer it prints,
    and compiled that after the search.  A first timed move waits for
    minimax only, not for ``play`` (2026-12-05: with the policy playouts of
    one encoding and ``check`` from the child, this process's share shrank
    below the child's, and the move waited 0.2-0.4 s for ``play``).  The
    very first ``master`` move on 9x8/Xd3 went from 5.66-6.47 to 4.80-5.23 s
    (three pairs of two cold runs, alternated, a middle day; 4.80-5.44 s in
    thirteen runs that evening)."""
    if (False, bitboard) in _uct_ready or uct_on_disk(bitboard):
        return None
    if compile_search.cache_info().currsize or minimax_on_disk():
        return None
    return compile_aside.start(_MINIMAX, _CHECK, _PLAY)


def _ready_minimax(bitboard: bool) -> None:
    """minimax's search compiled, or loaded from the cache; where a child
    compiles it (``_aside``), this process compiles UCT (with the policy
    playouts of the encoding ``bitboard``) meanwhile, then waits for the
    child."""
    aside = _aside(bitboard)
    if aside is not None:
        _compile_uct(bitboard)
        aside.wait()
    compile_search()


@register(
    "master",
    f"our strongest: the exact solver's win, draw or loss with {PROBE_CELLS} empty cells or fewer, "
    "minimax for proven wins and losses, then UCT (MCTS-Solver, "
    "smart + Last-Good-Reply-2 playouts, tree reuse); 1 s a move",
    [
        Param("time", float, DEFAULT_TIME, "seconds per move (none: use iterations and depth)", nullable=True,
              minimum=0, above=True, maximum=MAX_SECONDS),
        Param("iterations", int, None, "UCT iterations per move instead of a time share", minimum=1),
        Param("depth", int, None, f"minimax's depth (default {FIXED_DEPTH})", minimum=1),
        Param("share", float, DEFAULT_SHARE, "at most this share of the time for minimax (its depth usually comes first)"),
        Param("seed", int, None, "random seed of the UCT part"),
        Param("weights", str, None, "an n-tuple network file (`c4lab train ntuple`) whose learnt value UCT "
              "mixes into its playouts' results at the leaves (on that network's board only)"),
        Param("mix", float, 0.5, "with weights: the learnt value's share of a leaf's value, at most 1 "
              "(1: no playouts)", minimum=0, above=True),
    ],
)
class MasterAgent(Agent):
    """Minimax's proofs first, then UCT's judgement."""

    def __init__(
        self,
        time: float | None = DEFAULT_TIME,
        iterations: int | None = None,
        depth: int | None = None,
        share: float = DEFAULT_SHARE,
        seed: int | None = None,
        weights: str | None = None,
        mix: float = 0.5,
    ) -> None:
        if not 0.0 < share < 1.0:
            raise ValueError(f"agent 'master': share= (minimax's share of the time) must lie strictly between "
                             f"0 and 1, not {share:g}")
        if not 0.0 < mix <= 1.0:
            raise ValueError(f"agent 'master': mix must lie in (0, 1], not {mix:g}")
        self.time = time
        self.iterations = iterations
        self.depth = depth
        self.share = share
        self.uct = UCTAgent(
            solver=True, policy="smart", lgr=2, c=0.5, final="visits", reuse=True, seed=seed,
            iterations=iterations,
        )
        self.minimax = MinimaxAgent(depth=depth or FIXED_DEPTH)
        self.share_stop(self.uct, self.minimax)  # a stop request ends the phase under way, and each after it at once
        self.network = None
        self.source: str | None = None  # the network's file, named when it is for another board
        if weights is not None:
            from c4lab.agents.ntuple import load_network  # lazy: only master with a network reads one

            self.network = net = load_network(weights)
            self.source = weights
            lay = net.layout
            self.uct.leaf = Leaf(net.weights, lay.cell_ptr, lay.cell_inst, lay.cell_add, lay.threat_base,
                                 len(lay.inst_tuple), mix)

    def new_game(self) -> None:
        self.uct.new_game()
        self.minimax.new_game()

    def check_board(self, variant: Variant) -> None:
        """With a network: ``NetworkError`` unless ``variant`` is its board."""
        if self.network is not None:
            self.network.check_board(variant, self.source)

    def compile_rest(self, start: Position) -> None:
        """minimax and UCT: on the classic opening the warm-up's moves are
        the exact solver's (down to the database) and reach neither, but
        the moves after the database do, under the clock.  Then what the
        warm-up's moves reach nowhere: UCT's kept tree moved on, and the
        solver's probe (from ``PROBE_CELLS`` empty cells on).  Compiled in
        a judged move, each took 2.3-4 s: a forfeit under a time limit."""
        bitboard = _bitboard(start)
        _ready_minimax(bitboard)
        _compile_uct(bitboard)
        if self.network is not None:
            _compile_uct(bitboard, valued=True)
        self.uct.compile_rest(start)  # its kept tree, moved on
        compile_solver(start.variant)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """With a time (the spec's, or the budget's): minimax to ``depth``
        (6 by default) within ``share`` of it at most, UCT the rest.  With
        iterations (``time=none`` or a budget of iterations): minimax to
        ``depth``, then that many UCT iterations -- reproducible with a seed.  The analysis is the
        search's that chose the move; its ``pv`` always starts with the
        move (a line of a move that was overruled -- ruled out by a proof,
        or not the strongest resistance -- is cut to the move alone).
        A stop request (``request_stop``) ends minimax's and UCT's search
        at once: the move is what the phases found so far (minimax's
        completed depths, UCT's tree)."""
        self.check_board(position.variant)
        move, analysis = self._search(position, budget)
        if analysis.pv[:1] != (move,):
            analysis = replace(analysis, pv=(move,))
        return move, analysis

    def _search(self, position: Position, budget: Budget | None) -> tuple[Move, Analysis]:
        """The move and the analysis of the search that chose it (``analyse``)."""
        start = time.perf_counter()
        if position.empty_cells <= ENDGAME_CELLS:  # the end game: exact, when cheap
            found = solved_move(position, max_nodes=ENDGAME_NODES, book=False, table_size=ENDGAME_TABLE)
            if found is not None:
                return found
        seconds = self.time
        iterations = self.iterations
        if budget is not None and (budget.time is not None or budget.iterations is not None):
            seconds, iterations = budget.time, budget.iterations
        clock = seconds if iterations is None else None  # None: run on iterations
        ruled_out: set[Move] = set()  # moves proven worse than another
        drawn = False
        # A win the weak probe proved: its move keeps the win, not always the
        # quickest one; minimax's tactics below look for a quicker one first.
        won: tuple[Move, Analysis] | None = None
        classic_opening = reaches(position)
        # A first search in this process compiles minimax and UCT: not
        # thinking time.  Where a child compiles minimax on another core
        # (``_aside``, started before the probe below: on 6x5/Xc2 after
        # ``hard`` the child otherwise ended 0.6 s after UCT), a first timed
        # move compiles UCT and searches with it meanwhile, then with
        # minimax: the same two searches with the same shares of the move,
        # in the other order.  Only then: later moves, and every move on
        # iterations (reproducible: a cold start must not change a seeded
        # game), keep the usual order, where a proven win skips UCT.  Not in
        # the classic opening, which the solver answers alone.
        first = self.network is None and not classic_opening and not compile_search.cache_info().currsize
        bitboard = _bitboard(position)
        aside = _aside(bitboard) if first else None
        if classic_opening or position.empty_cells <= PROBE_CELLS:
            # The probe's one-time preparation (its search compiled or loaded, the database read, the table
            # allocated: 0.3-0.7 s in a new process) is not thinking time either.  Counted, it took the whole
            # of a short move (``c4lab move 7x6:dd --agent master --time 0.2``: the fallback's UCT had 256
            # iterations and played a losing move in three runs out of four).
            preparing = time.perf_counter()
            Solver(PROBE_TABLE).prepare(position, moves=True)
            start += time.perf_counter() - preparing
        if classic_opening:  # exact from the database, at once
            found = solved_move(position, book=False, table_size=PROBE_TABLE, timeout=CLASSIC_SHARE * clock if clock else None,
                                stop=self.stop_request)
            if found is not None:
                return found
        elif position.empty_cells <= PROBE_CELLS:
            limit = PROBE_SHARE * clock if clock is not None else None
            found = solved_move(
                position, book=False, table_size=PROBE_TABLE, weak=True,
                timeout=limit, max_nodes=PROBE_NODES if limit is None else None, stop=self.stop_request,
            )
            if found is not None:
                verdict = found[1]
                if verdict.value == 1.0:
                    won = found
                if verdict.value == 0.5:
                    drawn = True
                    drawing = {s.move for s in verdict.moves}
                    ruled_out = {m for m in position.legal_moves() if m not in drawing}
        judgement: Analysis | None = None
        compiling = time.perf_counter()
        if aside is not None and clock is not None:
            _compile_uct(bitboard)
            start += time.perf_counter() - compiling
            judgement = self._judge(position, clock, iterations, start, 1.0 - self.share)
            compiling = time.perf_counter()
            aside.wait(done=minimax_on_disk)  # not for the rest of its work (the rules' play)
        elif aside is not None:
            _ready_minimax(bitboard)  # UCT compiled here while the child compiles minimax
        compile_search()
        start += time.perf_counter() - compiling
        tactics = None
        if clock is not None:
            share = self.share if judgement is None else 1.0  # minimax last: the rest of the move
            tactics = Budget(time=max(share * (clock - (time.perf_counter() - start)), 0.005))
        # Its analysis (whose line is read from its table, which UCT leaves
        # alone) is made only where it is the answer.
        searched = self.minimax.search_root(position, tactics)
        scores = dict(searched.scores)
        best = max(scores, key=lambda m: scores[m])
        if scores[best] >= WIN:  # a proven win: no need to look further
            return best, self.minimax.analysis(position, searched)
        if won is not None:
            return won
        ruled_out |= {m for m, score in scores.items() if score <= -WIN}
        if judgement is None:
            valued = self.network is not None
            if (valued, bitboard) not in _uct_ready:
                compiling = time.perf_counter()
                _compile_uct(bitboard, valued)
                start += time.perf_counter() - compiling
            judgement = self._judge(position, clock, iterations, start, 1.0)
        if drawn:
            judgement = replace(judgement, note="proven draw (weak solve): UCT's choice among the drawing moves")
        for stats in judgement.moves:
            if stats.move not in ruled_out:
                return stats.move, judgement
        kept = [m for m in position.legal_moves() if m not in ruled_out]
        if kept:  # a drawing move UCT did not rank (its tree had no room)
            return max(kept, key=lambda m: scores.get(m, -WIN)), self.minimax.analysis(position, searched)
        # Every move loses by force: resist the longest.
        return best, self.minimax.analysis(position, searched)

    def _judge(
        self, position: Position, clock: float | None, iterations: int | None, start: float, share: float
    ) -> Analysis:
        """UCT's analysis of ``position``: with a clock, ``share`` of what is
        left of the move begun at ``start``; else its iterations."""
        if clock is not None:
            rest = Budget(time=max(share * (clock - (time.perf_counter() - start)), 0.01))
        else:
            rest = Budget(iterations=iterations or DEFAULT_ITERATIONS)
        return self.uct.analyse(position, rest)[1]
