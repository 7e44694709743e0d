"""``uct`` and its variants: the agents around the compiled search of
``uct_search.py``.

One agent class, ``UCTAgent``, with every variant behind a parameter, and
names for the usual combinations (``uct-tt``, ``uct-lgr``, ``hybrid``,
``mcts-solver``, ...) and for the difficulty levels (``normal``, ``hard``,
``impossible``).  The agent owns the tree arrays, runs the search in chunks
(so that a time budget is kept, and a stop request seen, without a clock
inside the compiled loop),
picks the final move, reports its analysis, and can keep the tree from one
move of a game to the next.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from c4lab import compile_aside
from c4lab.agents import uct_search as S
from c4lab.agents.base import MAX_SECONDS, Agent, Analysis, Budget, MoveStats, Param, register, seed_value
from c4lab.agents.solver_agent import solved_move
from c4lab.rules import Move, Position
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error
from c4lab.solver import api as solver_api
from c4lab.solver.bitboard import is_wide

#: How late a time-budgeted search may return, beyond its budget: the last
#: chunk of iterations (after the first chunk of 256, at most half of what
#: was left of the budget, at least 16 iterations) and the bookkeeping
#: after it.  A process's first timed search loads the compiled search
#: before its clock starts (about 20 ms on 7x6), and returns that much later.
TIME_MARGIN = 0.02

#: How long a chunk of the search runs (iterations at the rate measured so
#: far): how late it sees its deadline or a stop request.  Each chunk is a
#: call of the compiled search, some microseconds.
CHUNK_SECONDS = 0.01

DEFAULT_ITERATIONS = 1000
DEFAULT_NODES = 2_000_000


@dataclass(frozen=True)
class SearchConfig:
    """The variant of UCT an agent runs."""

    c: float = 1 / math.sqrt(2)
    final: str = "mean"  # or "visits"
    tt: bool = False
    solver: bool = False
    policy: str = "random"  # or "smart"
    lgr: int = 0  # 0, 1 or 2
    reuse: bool = False

    def flags(self) -> np.ndarray:
        flags = np.zeros(S.FLAGS_LEN, dtype=np.int64)
        flags[S.FL_TT] = int(self.tt)
        flags[S.FL_SOLVER] = int(self.solver)
        flags[S.FL_SMART] = int(self.policy == "smart")
        flags[S.FL_LGR] = self.lgr
        return flags


class Tree:
    """The search tree's arrays, sized once for a number of nodes.

    Memory is about 100 bytes a node.  When the arrays are full the search
    goes on without growing the tree (its leaves keep gaining playouts).
    """

    def __init__(self, nodes: int, use_tt: bool) -> None:
        nodes = max(16, nodes)
        edges = 3 * nodes + 64
        # The table has room for twice the nodes (it is never over 3/4 full).
        tt_size = 1 << max(4, (2 * nodes - 1).bit_length()) if use_tt else 16
        self.capacity = nodes
        self.nf = np.empty((nodes, S.NF_FIELDS), dtype=np.float64)
        self.ni = np.empty((nodes, S.NI_FIELDS), dtype=np.int32)
        self.nkey = np.empty(nodes, dtype=np.uint64)
        self.emove = np.empty(edges, dtype=np.uint8)
        self.echild = np.empty(edges, dtype=np.int32)
        self.meta = np.zeros(S.META_LEN, dtype=np.int64)
        self.tt_keys = np.empty(tt_size, dtype=np.uint64)
        self.tt_nodes = np.empty(tt_size, dtype=np.int32)
        self.st = np.empty(K.STATE_LEN, dtype=np.uint16)
        self.path = np.empty(S.MAX_PATH, dtype=np.int64)
        self.moves = np.empty(S.MAX_PATH, dtype=np.uint8)
        self.lgr1 = np.full((2, 256), S.NO_MOVE, dtype=np.uint8)
        self.lgr2 = np.full((2, 256, 256), S.NO_MOVE, dtype=np.uint8)

    @property
    def root(self) -> int:
        return int(self.meta[S.M_ROOT])

    @property
    def nodes_used(self) -> int:
        return int(self.meta[S.M_NODES])

    def reset(self, position: Position, use_tt: bool) -> None:
        """Make ``position`` the root of an empty tree."""
        geo, state = position.kernel_arrays()
        # The readers' Python functions: called from Python, the compiled
        # ones would each be compiled for this alone (0.04 s apiece).
        S.new_root(
            self.nf, self.ni, self.nkey, self.meta, self.tt_keys, self.tt_nodes,
            int(K.to_move.py_func(state)), int(K.result_of.py_func(state)), np.uint64(K.board_key(geo, state)),
            use_tt,
        )

    def subtree(self, node: int, use_tt: bool) -> Tree:
        """A new tree of the same size holding the part of this one below
        ``node`` (its root), with the same Last-Good-Reply tables."""
        copy = Tree(self.capacity, use_tt)
        copy.lgr1, copy.lgr2 = self.lgr1, self.lgr2
        remap = np.empty(self.capacity, dtype=np.int32)
        S.compact(
            self.nf, self.ni, self.nkey, self.emove, self.echild, node,
            copy.nf, copy.ni, copy.nkey, copy.emove, copy.echild, copy.meta,
            copy.tt_keys, copy.tt_nodes, use_tt, remap,
        )
        return copy

    def forget_replies(self) -> None:
        self.lgr1.fill(S.NO_MOVE)
        self.lgr2.fill(S.NO_MOVE)

    def children(self, node: int) -> list[tuple[Move, int]]:
        """The expanded children of ``node``: (move, child node)."""
        first = int(self.ni[node, S.I_FIRST_EDGE])
        if self.ni[node, S.I_N_EDGES] < 0:
            return []
        return [
            (Move.from_code(int(self.emove[e])), int(self.echild[e]))
            for e in range(first, first + int(self.ni[node, S.I_EXPANDED]))
        ]

    def child(self, node: int, move: Move) -> int | None:
        for m, child in self.children(node):
            if m == move:
                return child
        return None


@functools.cache
def _compile_reuse(use_tt: bool) -> None:
    """Compile (or load) what a kept tree runs when the game moves on
    (``reuse``): the copy of the new root's subtree, and with a table the
    lookup by key.  A warm-up's two moves never reach it (one iteration
    leaves no child to move to): ``master`` compiled it in the middle of a
    game on 9x8/Xd3, a move of 2.26 s at 0.2 s a move."""
    tree = Tree(16, use_tt)
    tree.reset(Position.parse("4x4"), use_tt)
    tree.subtree(tree.root, use_tt)
    if use_tt:
        S.tt_lookup(tree.tt_keys, tree.tt_nodes, np.uint64(0))


#: What the child of :func:`_endgame_solver_aside` runs: the solver, then
#: the random playouts of every other kind of board.
_SOLVER = "c4lab.solver.api:compile_search"
_PLAYOUTS = "c4lab.rules.kernels:compile_playouts"


#: Held while :func:`_endgame_solver_aside` is first called: two threads
#: (a server's warm-ups) start one child, not two.
_ASIDE_LOCK = threading.Lock()


@functools.cache
def _endgame_solver_aside() -> compile_aside.Aside | None:
    """A child process that compiles the exact solver (one-word boards, up
    to 64 bits) into numba's cache, started at the first search of a UCT
    with an exact end game (the levels ``hard`` and ``impossible``, the
    ``uct-*`` presets that have one) where the solver is not on disk yet,
    once per process (under ``_ASIDE_LOCK``): a first start compiles UCT
    here meanwhile, on the other core.  The end game needs the
    solver some twenty moves later, and a person who has played a level
    often asks for an exact answer next (``c4lab solve``, the analysis
    board, the review: 3.4-4.4 s of compiling when it is not on disk).
    It then compiles the random playouts of the other kinds of board
    (``rules.kernels.compile_playouts``): the level's first move on a board
    of another kind compiled its playout there, 2.3 s of a first ``hard``
    move on 9x8/Xd3 after one on 7x6 (3.9 s in all, on a slow day).
    Nobody waits for it in a single move (``c4lab move``): it finishes
    alone and leaves its work on disk.  A warm-up waits for its solver
    (``UCTAgent.compile_rest``), at most ``AHEAD_WAIT_LIMIT`` seconds,
    then compiles the solver itself."""
    if solver_api.on_disk():
        return None
    return compile_aside.start(_SOLVER, _PLAYOUTS, ahead=True)


class UCTAgent(Agent):
    """UCT with optional transposition table, Last-Good-Reply, MCTS-Solver,
    smart playouts and tree reuse.  See ``uct_search.py`` for the algorithm."""

    def __init__(
        self,
        iterations: int | None = None,
        time: float | None = None,
        c: float = 1 / math.sqrt(2),
        final: str = "mean",
        tt: bool = False,
        solver: bool = False,
        policy: str = "random",
        lgr: int = 0,
        reuse: bool = False,
        nodes: int = DEFAULT_NODES,
        seed: int | None = None,
        endgame: int = 0,
    ) -> None:
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        if time is not None and not time > 0:
            raise ValueError(f"time must be positive, not {time}")
        self.iterations = iterations
        self.time = time
        self.config = SearchConfig(c, final, tt, solver, policy, lgr, reuse)
        self.max_nodes = nodes
        if endgame < 0:
            raise ValueError(f"endgame must be at least 0, not {endgame}")
        self.endgame = endgame
        self._rng = np.array([K.seed_state(seed_value(seed, type(self).__name__))], dtype=np.uint64)
        self._tree: Tree | None = None
        self._root_position: Position | None = None
        self.last_iterations = 0
        self.leaf: S.Leaf | None = None  # a learnt value at the leaves (``uct_search.Leaf``)

    @property
    def tree(self) -> Tree | None:
        """The search tree kept from the last move (``None`` before one): with
        ``reuse``, the next move's search starts from its subtree."""
        return self._tree

    # -- the budget -----------------------------------------------------------

    def _limits(self, budget: Budget | None) -> tuple[int | None, float | None]:
        iterations, seconds = self.iterations, self.time
        if budget is not None and (budget.iterations is not None or budget.time is not None):
            iterations, seconds = budget.iterations, budget.time
        if iterations is None and seconds is None:
            iterations = DEFAULT_ITERATIONS
        return iterations, seconds

    def _tree_for(self, iterations: int | None, seconds: float | None) -> Tree:
        """A tree with room for this move's search (reused when it fits)."""
        if iterations is not None:
            wanted = iterations + 2
        else:
            wanted = int(3_000_000 * (seconds or 0.0)) + 1024
        if self.config.reuse:
            wanted *= 2  # the kept subtree, and room for this search
        wanted = min(wanted, self.max_nodes)
        tree = self._tree
        if tree is None or tree.capacity < wanted:
            tree = self._tree = Tree(wanted, self.config.tt)
            self._root_position = None
        return tree

    # -- the search -------------------------------------------------------------

    def new_game(self) -> None:
        self._root_position = None
        if self._tree is not None:
            self._tree.forget_replies()

    def _place_root(self, tree: Tree, position: Position) -> Tree:
        """Make ``position`` the root: with ``reuse``, the node the previous
        search reached for it (the tree is compacted to that node's subtree
        first), else a new tree.  Returns the tree to search."""
        previous = self._root_position
        node = None
        if (
            self.config.reuse
            and previous is not None
            and previous.variant == position.variant
            and position.moves[: previous.ply] == previous.moves
        ):
            if self.config.tt:
                geo, state = position.kernel_arrays()
                found = int(S.tt_lookup(tree.tt_keys, tree.tt_nodes, np.uint64(K.board_key(geo, state))))
                node = found if found >= 0 else None
            else:
                node = tree.root
                for move in position.moves[previous.ply :]:
                    node = tree.child(node, move) if node is not None else None
        self._root_position = position
        if node is None:
            if previous is None or previous.variant != position.variant:
                tree.forget_replies()
            tree.reset(position, self.config.tt)
            return tree
        if node == tree.root:
            return tree
        self._tree = copy = tree.subtree(node, self.config.tt)
        return copy

    def search(self, position: Position, budget: Budget | None = None) -> Tree:
        """Run the search for ``position`` within the budget, or until a
        stop request (``Agent.request_stop``: at least one chunk runs); the
        tree."""
        if position.is_over:
            raise game_over_error(position.notation, position.result)
        iterations, seconds = self._limits(budget)
        start = time.perf_counter()
        tree = self._place_root(self._tree_for(iterations, seconds), position)
        geo, state = position.kernel_arrays()
        flags = self.config.flags()
        if seconds is not None:
            # Numba loads a compiled search from its cache on its first call in a process (about 20 ms on 7x6):
            # a call of no iterations does it off the clock, as the budget is the search's.  Before, a first
            # ``uct:time=0.01`` spent its budget on the load and ran one chunk of 256 iterations, later ones 13,000.
            loading = time.perf_counter()
            self._run(tree, geo, state, flags, 0)
            start += time.perf_counter() - loading
        left = iterations if iterations is not None else 1 << 62
        # the whole budget: the chunks shrink toward its end (half what is left each), so the search ends at it
        # within a chunk of 16 iterations; ending TIME_MARGIN / 2 early, a budget of 10 ms ran one chunk of 256
        # iterations and stopped (0.6 ms), and every budget lost 10 ms, against minimax's and PUCT's whole one
        deadline = None if seconds is None else start + seconds
        stop = self.stop_request
        chunk = 256
        done = 0
        while left > 0:
            n = min(chunk, left)
            ran = self._run(tree, geo, state, flags, n)
            done += ran
            left -= ran
            now = time.perf_counter()
            if ran < n or stop or (deadline is not None and now >= deadline):
                break
            # The next chunk: about CHUNK_SECONDS of the rate measured so far
            # (half what is left of a deadline at most), so that a deadline or
            # a stop request is seen that soon after it comes.
            rate = done / max(now - start, 1e-6)
            room = CHUNK_SECONDS if deadline is None else min(CHUNK_SECONDS, (deadline - now) / 2)
            chunk = max(16, int(rate * room))
        self.last_iterations = done
        return tree

    def _run(self, tree: Tree, geo: np.ndarray, state: np.ndarray, flags: np.ndarray, n: int) -> int:
        """Run ``n`` iterations of the compiled search on ``tree``; how many
        ran."""
        return S.search(
            geo, state, tree.nf, tree.ni, tree.nkey, tree.emove, tree.echild, tree.meta,
            tree.tt_keys, tree.tt_nodes, tree.lgr1, tree.lgr2, tree.st, tree.path, tree.moves,
            self._rng, n, self.config.c, flags, self.leaf,
        )

    # -- the answer ---------------------------------------------------------------

    def _ranked(self, tree: Tree) -> list[tuple[Move, int]]:
        """The root's children, best first, by the final-move rule."""
        children = tree.children(tree.root)
        solver = self.config.solver

        def key(item: tuple[Move, int]) -> tuple[float, ...]:
            _, node = item
            visits = float(tree.nf[node, S.F_VISITS])
            mean = float(tree.nf[node, S.F_MEAN])
            proven = int(tree.ni[node, S.I_PROVEN]) if solver else S.UNPROVEN
            # Proven wins first (an immediate one before a later one), proven
            # losses last; then the final-move rule.
            rank = {S.PROVEN_WIN: 2, S.PROVEN_LOSS: 0}.get(proven, 1)
            immediate = float(tree.ni[node, S.I_RESULT] != K.ONGOING)
            if self.config.final == "visits":
                return (rank, immediate, visits, mean)
            return (rank, immediate, mean, visits)

        return sorted(children, key=key, reverse=True)

    def compile_rest(self, start: Position) -> None:
        """What the warm-up's moves do not reach: with ``reuse``, moving a
        kept tree's root down (:func:`_compile_reuse`); with ``endgame``,
        the exact solver on ``start``'s kind of board: compiled in the
        game's first move of the end game, it took 4.4 s there (with a 1 s
        limit in the arena, a forfeit on time).  Where a child compiles it
        (:func:`_endgame_solver_aside`), after the child."""
        if self.config.reuse:
            _compile_reuse(self.config.tt)
        if not self.endgame:
            return
        with _ASIDE_LOCK:
            aside = _endgame_solver_aside() if _endgame_solver_aside.cache_info().currsize else None
        if aside is not None:  # its solver: the playouts it compiles next are for other boards
            aside.wait(compile_aside.AHEAD_WAIT_LIMIT, done=solver_api.on_disk)
        solver_api.compile_search(start.variant)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        start = time.perf_counter()
        if self.endgame and position.empty_cells > self.endgame and not is_wide(position.variant):
            with _ASIDE_LOCK:
                _endgame_solver_aside()
        if position.empty_cells <= self.endgame:
            # The end game: the exact solver, when it is cheap (a node limit
            # keeps it so, and keeps the agent reproducible).
            found = solved_move(position, max_nodes=ENDGAME_NODES, book=False, table_size=ENDGAME_TABLE)
            if found is not None:
                return found
        tree = self.search(position, budget)
        ranked = self._ranked(tree)
        if ranked:
            move = ranked[0][0]
        else:  # not a single child expanded (a tree with no room at all)
            move = position.legal_moves()[0]
        stats = tuple(
            MoveStats(
                move=m,
                visits=int(tree.nf[node, S.F_VISITS]),
                value=float(tree.nf[node, S.F_MEAN]),
                score=_proven_score(int(tree.ni[node, S.I_PROVEN])) if self.config.solver else None,
            )
            for m, node in ranked
        )
        value = stats[0].value if stats else None
        if stats and self.config.solver and stats[0].score is not None:
            value = (stats[0].score + 1) / 2
        return move, Analysis(
            moves=stats,
            value=value,
            pv=tuple(self._principal_variation(tree, move)),
            iterations=self.last_iterations,
            seconds=time.perf_counter() - start,
        )

    def _principal_variation(self, tree: Tree, first: Move, length: int = 12) -> list[Move]:
        """The move chosen (``first``), then the most visited line below it:
        a line always starts with the move it goes with (the chosen move
        need not be the most visited one: a proven result ranks first)."""
        pv = [first]
        node = next((child for move, child in tree.children(tree.root) if move == first), None)
        while node is not None and len(pv) < length:
            children = tree.children(node)
            if not children:
                break
            move, node = max(children, key=lambda mc: tree.nf[mc[1], S.F_VISITS])
            pv.append(move)
        return pv


def _proven_score(proven: int) -> int | None:
    """A proven value as a score for the mover: 1 win, 0 draw, -1 loss."""
    return {S.PROVEN_WIN: 1, S.PROVEN_DRAW: 0, S.PROVEN_LOSS: -1}.get(proven)


#: The end game of the MCTS variants: the solver is tried with this many
#: empty cells or fewer, and gives up after ``ENDGAME_NODES`` nodes (a few
#: milliseconds).  Plain ``uct`` stays the classic pseudo-code (endgame=0).
ENDGAME_CELLS = 14
ENDGAME_NODES = 100_000
ENDGAME_TABLE = 1 << 17  # entries (4 MB a thread)
_EG = str(ENDGAME_CELLS)

_PARAMS = [
    Param("iterations", int, None, f"iterations per move (default {DEFAULT_ITERATIONS} when no time is given)",
          minimum=1),
    Param("time", float, None, "seconds per move", minimum=0, above=True, maximum=MAX_SECONDS),
    Param("c", float, 1 / math.sqrt(2), "exploration constant of UCB1 (default 1/sqrt 2)", minimum=0),
    Param("final", str, "mean", "final move: best mean (BESTCHILD(root, 0)) or most visits", ("mean", "visits")),
    Param("tt", bool, False, "transposition table: statistics shared by transpositions"),
    Param("solver", bool, False, "MCTS-Solver: back up proven wins, losses and draws"),
    Param("policy", str, "random", "playouts: random, or smart (take wins, block losses)", ("random", "smart")),
    Param("lgr", int, 0, "Last-Good-Reply playouts: 0 off, 1 or 2 previous moves", (0, 1, 2)),
    Param("reuse", bool, False, "keep the tree between the moves of a game"),
    Param("nodes", int, DEFAULT_NODES, "most tree nodes kept (about 100 bytes each)", minimum=1),
    Param("seed", int, None, "random seed (default: fresh each run)"),
    Param("endgame", int, 0, "with this many empty cells or fewer, play the exact solver's move when it "
          f"proves one within {ENDGAME_NODES} nodes (0: never)"),
]


register(
    "uct",
    "UCT as the classic pseudo-code; variants by parameter (rewards: win 1, draw 0.5, loss 0)",
    _PARAMS,
    presets={
        "uct-tt": ("UCT with a transposition table", {"tt": "1", "endgame": _EG}),
        "uct-lgr": ("UCT with Last-Good-Reply playouts (previous move)", {"lgr": "1", "endgame": _EG}),
        "uct-lgr2": ("UCT with Last-Good-Reply playouts (two previous moves)", {"lgr": "2", "endgame": _EG}),
        "hybrid": ("UCT with a transposition table and Last-Good-Reply playouts",
                   {"tt": "1", "lgr": "1", "endgame": _EG}),
        "mcts-solver": ("MCTS-Solver: UCT that proves wins and losses", {"solver": "1", "endgame": _EG}),
        "uct-smart": ("UCT with playouts that take wins and block losses", {"policy": "smart", "endgame": _EG}),
        "normal": ("level normal: UCT, 250 iterations", {"iterations": "250"}),
        "hard": ("level hard: UCT, 750 iterations, exact end game", {"iterations": "750", "endgame": _EG}),
        "impossible": ("level impossible: UCT, 1500 iterations, exact end game",
                       {"iterations": "1500", "endgame": _EG}),
    },
)(UCTAgent)


def bench_uct(board: str, iterations: int = 100_000, repeats: int = 5, seed: int = 1) -> dict[str, Any]:
    """UCT iterations per second from the empty ``board``: plain UCT, default
    ``c``, random playouts, one core, a fresh tree of ``iterations``
    iterations each run; the median of ``repeats`` runs (CPU time; wall time
    beside it)."""
    position = Position.parse(board)
    agent = UCTAgent(iterations=iterations, seed=seed)
    agent.search(position, Budget(iterations=1000))  # compile / load from the cache
    runs = []
    for _ in range(repeats):
        agent.new_game()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        agent.search(position)
        runs.append((time.process_time() - cpu0, time.perf_counter() - wall0))
    cpu, wall = sorted(runs)[repeats // 2]
    return {
        "iterations": iterations,
        "iterations_per_s": iterations / cpu,
        "cpu_s": cpu,
        "wall_s": wall,
        "runs_per_s": [iterations / c for c, _ in runs],
    }
