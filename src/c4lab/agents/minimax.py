"""``minimax``: negamax with alpha-beta, a transposition table and iterative
deepening, compiled with numba over the kernels' state arrays.

Search
    ``_search`` is one depth-limited negamax, written as a loop over an
    explicit stack (numba calls are not free, and a loop keeps every array in
    registers).  Each ply copies the state before it plays a move (copy-make
    through ``K.apply``; a node's state is saved once and restored before
    each further child), updates the Zobrist key from the cells ``apply``
    returns, and updates the window evaluation incrementally (see
    ``evaluation``).  Rules come only from the kernels: ``legal_codes`` for
    the moves (ban moves are ordinary moves), ``apply`` for playing them,
    ``would_win`` on each column's landing cell for "the side to move wins
    at once", which is scored exactly without searching further.

Scores
    From the side to move's point of view.  A win is worth ``WIN`` plus the
    RULES.md score ``floor((E + 1) / 2)`` (``E``: empty cells before the
    winning move), so every proven result lies above every heuristic score
    (below ``WIN`` in absolute value), faster wins score higher and slower
    losses lose less.  The score depends on the position only, not on the
    path to it, so the transposition table stores it as is.

Ordering
    The table's move first, then by history (cut-offs found at this depth
    and side) and by closeness to the centre column.

Time
    numba cannot read the clock cheaply, so each depth of the iterative
    deepening runs with a node limit: the node rate measured so far times
    the time left.  A depth that hits it is dropped; the move of the last
    completed depth is played.  A stop request (``Agent.request_stop``) ends
    the depth under way in the same way: the kernel reads a flag in an array
    that another thread sets.  The table and history are cleared at every
    move, so a search with a fixed depth (or node budget) is a pure function
    of the position.
"""

from __future__ import annotations

import math
import time as _time
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab import compile_aside
from c4lab.agents.base import MAX_SECONDS, Agent, Analysis, Budget, MoveStats, Param, StopRequest, register
from c4lab.agents.evaluation import INC, _add, _remove, load_codes, windows
from c4lab.rules import Move, Position
from c4lab.rules import kernels as K
from c4lab.rules.sides import game_over_error

#: A proven win scores ``WIN + floor((E + 1) / 2)``; heuristic scores stay below.
WIN = 1_000_000
INF = 2 * WIN
#: Seconds per move when neither ``depth`` nor ``time`` is given.
DEFAULT_TIME = 1.0
#: Scale of the logistic that maps a heuristic score to a value in [0, 1].
VALUE_SCALE = 100.0
TT_BITS = 20

U = K.U
U0 = K.U0
EXACT, LOWER, UPPER = 0, 1, 2
NO_MOVE = 255
ENTER, NEXT, RETURN = 0, 1, 2
#: How often (in nodes, a power of two) a search reads its stop flag: some
#: 0.3 ms at 13 million nodes a second.
STOP_EVERY = 4096
#: The stop flag of a search nothing stops (depth 1, which always completes).
_NEVER = np.zeros(1, dtype=np.uint8)


@njit(inline="always")
def _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, slot, key, value, depth, flag, move):
    """Write one table entry (a deeper entry of the same position is kept)."""
    if tt_key[slot] != key or depth >= tt_depth[slot]:
        tt_key[slot] = key
        tt_val[slot] = value
        tt_depth[slot] = depth
        tt_flag[slot] = flag
        tt_move[slot] = move
    # Keep the arrays alive to one exit (see "Inlined helpers" in kernels.py).
    tt_key, tt_val, tt_depth, tt_flag, tt_move = tt_key, tt_val, tt_depth, tt_flag, tt_move  # noqa: PLW0127


@njit(inline="always")
def _winning_column(geo, st, side):
    """A column where ``side`` wins at once (its landing cell completes four
    by the kernels' win test), or -1."""
    columns = K.winning_columns(geo, st, U(side))
    found = -1
    for c in range(np.int64(K.board_width(geo))):
        if (columns >> U(c)) & K.U1:
            found = c
            break
    return found


@njit(cache=True, nogil=True)
def _search(geo, root, depth, node_limit, stop, full_root, root_key, root_eval,
            codes, through, count, centre, tt_key, tt_val, tt_depth, tt_flag, tt_move,
            history, root_moves, root_scores):
    """One negamax search of ``depth`` plies from state ``root``.

    ``codes`` holds the window codes of ``root`` (restored on exit unless
    aborted); ``root_eval`` is A's evaluation of ``root``.  With
    ``full_root`` every root move is searched with a full window, so
    ``root_scores`` holds its exact score (else a bound for all but the best).
    Returns ``(score, best move code, number of root moves, nodes, aborted)``;
    the search aborts rather than visit more than ``node_limit`` nodes, and
    once ``stop[0]`` is set (from another thread: the kernel runs without
    the GIL), which it reads every ``STOP_EVERY`` nodes.
    """
    width = np.int64(K.board_width(geo))
    mask = K.U(tt_key.shape[0] - 1)
    n_ply = depth + 1
    cur = root.copy()
    saved = np.empty((n_ply, K.STATE_LEN), dtype=np.uint16)
    moves = np.empty((n_ply, K.MAX_LEGAL), dtype=np.uint8)
    buf = np.empty(K.MAX_LEGAL, dtype=np.uint8)
    keys_buf = np.empty(K.MAX_LEGAL, dtype=np.int64)
    alpha = np.empty(n_ply, dtype=np.int64)
    beta = np.empty(n_ply, dtype=np.int64)
    alpha0 = np.empty(n_ply, dtype=np.int64)
    best = np.empty(n_ply, dtype=np.int64)
    best_move = np.empty(n_ply, dtype=np.uint8)
    n_moves = np.empty(n_ply, dtype=np.int64)
    index = np.empty(n_ply, dtype=np.int64)
    sides = np.empty(n_ply, dtype=np.uint64)
    piece_cell = np.empty(n_ply, dtype=np.uint64)
    ban_cell = np.empty(n_ply, dtype=np.uint64)
    key = np.empty(n_ply, dtype=np.uint64)
    ev = np.empty(n_ply, dtype=np.int64)
    rank = np.zeros(16, dtype=np.int64)
    for c in range(width):
        rank[c] = width - abs(2 * c - (width - 1))

    key[0] = root_key
    ev[0] = root_eval
    alpha[0] = -INF
    beta[0] = INF
    n_root = 0
    root_best = NO_MOVE
    nodes = 0
    aborted = False
    value = np.int64(0)
    ply = 0
    phase = ENTER
    while True:
        if phase == ENTER:
            if nodes >= node_limit or ((nodes & (STOP_EVERY - 1)) == 0 and stop[0] != 0):
                aborted = True
                break
            nodes += 1
            side = U(K.to_move(cur))
            remaining = depth - ply
            phase = RETURN
            over = K.result_of(cur) != K.ONGOING
            win_col = -1 if over else _winning_column(geo, cur, side)
            if over:  # a draw: a winning move is caught on entering its parent
                value = np.int64(0)
            elif win_col >= 0:
                value = WIN + (np.int64(K.empty_cells(cur)) + 1) // 2
                if ply == 0:
                    root_best = win_col
                    n_root = 1
                    root_moves[0] = win_col
                    root_scores[0] = value
            elif remaining == 0:
                value = ev[ply] if side == U0 else -ev[ply]
            else:
                slot = key[ply] & mask
                tt_best = NO_MOVE
                cut = False
                if tt_key[slot] == key[ply] and tt_depth[slot] >= 0:
                    tt_best = tt_move[slot]
                    if ply > 0 and tt_depth[slot] >= remaining:
                        v = np.int64(tt_val[slot])
                        flag = tt_flag[slot]
                        if flag == EXACT or (flag == LOWER and v >= beta[ply]) or (
                            flag == UPPER and v <= alpha[ply]
                        ):
                            value = v
                            cut = True
                if not cut:
                    n = K.legal_codes(geo, cur, buf)
                    for i in range(n):  # insertion sort, best first
                        code = buf[i]
                        if code == tt_best:
                            order = np.int64(1) << 62
                        else:
                            order = history[side, code] + rank[code & 15]
                        j = i
                        while j > 0 and keys_buf[j - 1] < order:
                            keys_buf[j] = keys_buf[j - 1]
                            moves[ply, j] = moves[ply, j - 1]
                            j -= 1
                        keys_buf[j] = order
                        moves[ply, j] = code
                    if ply == 0:
                        n_root = n
                        for i in range(n):
                            root_moves[i] = moves[0, i]
                    n_moves[ply] = n
                    index[ply] = 0
                    alpha0[ply] = alpha[ply]
                    best[ply] = -INF
                    best_move[ply] = moves[ply, 0]
                    sides[ply] = side
                    for i in range(K.STATE_LEN):
                        saved[ply, i] = cur[i]
                    phase = NEXT
        elif phase == RETURN:
            if ply == 0:
                break
            ply -= 1
            side = sides[ply]
            _remove(codes, through, count, piece_cell[ply], INC[K.U(K.PIECE_A) + side])
            if ban_cell[ply] != K.NO_CELL:
                _remove(codes, through, count, ban_cell[ply], INC[K.BAN])
            v = -value
            i = index[ply]
            code = moves[ply, i]
            if ply == 0 and full_root:
                root_scores[i] = v
            if v > best[ply]:
                best[ply] = v
                best_move[ply] = code
            alpha[ply] = max(alpha[ply], v)
            if alpha[ply] >= beta[ply]:
                remaining = depth - ply
                history[side, code] += remaining * remaining
                _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, key[ply] & mask, key[ply],
                       best[ply], remaining, LOWER, code)
                value = best[ply]
            else:
                index[ply] = i + 1
                phase = NEXT
        else:  # NEXT: play the next move of the node at ply, or finish it
            i = index[ply]
            remaining = depth - ply
            if i >= n_moves[ply]:
                flag = UPPER if best[ply] <= alpha0[ply] else EXACT
                _store(tt_key, tt_val, tt_depth, tt_flag, tt_move, key[ply] & mask, key[ply],
                       best[ply], remaining, flag, best_move[ply])
                value = best[ply]
                phase = RETURN
                continue
            if i > 0:
                for k in range(K.STATE_LEN):
                    cur[k] = saved[ply, k]
            code = moves[ply, i]
            side = sides[ply]
            cell, banned, _ = K.apply(geo, cur, code)
            piece_cell[ply] = cell
            ban_cell[ply] = banned
            k1 = key[ply] ^ K.ZOBRIST[K.U(K.PIECE_A) + side, cell]
            delta = _add(codes, through, count, cell, INC[K.U(K.PIECE_A) + side])
            delta += centre[cell] if side == U0 else -centre[cell]
            if banned != K.NO_CELL:
                k1 ^= K.ZOBRIST[K.BAN, banned]
                delta += _add(codes, through, count, banned, INC[K.BAN])
            ply += 1
            key[ply] = k1
            ev[ply] = ev[ply - 1] + delta
            if full_root and ply == 1:
                alpha[1] = -INF
                beta[1] = INF
            else:
                alpha[ply] = -beta[ply - 1]
                beta[ply] = -alpha[ply - 1]
            phase = ENTER
    if aborted:
        return np.int64(0), NO_MOVE, n_root, nodes, True
    move = root_best if root_best != NO_MOVE else best_move[0]
    return value, move, n_root, nodes, False



# ---------------------------------------------------------------------------
# Iterative deepening and the agent
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchResult:
    """What iterative deepening found: the last completed depth's move and
    score, the root moves' scores, and the work done (all depths)."""

    move: Move
    score: int
    depth: int
    scores: dict[Move, int]
    nodes: int
    seconds: float


class SearchTable:
    """The transposition table and the history counters: allocated once per
    agent, cleared at every search."""

    def __init__(self, bits: int = TT_BITS) -> None:
        size = 1 << bits
        self.key = np.zeros(size, dtype=np.uint64)
        self.val = np.zeros(size, dtype=np.int32)
        self.depth = np.full(size, -1, dtype=np.int16)
        self.flag = np.zeros(size, dtype=np.uint8)
        self.move = np.zeros(size, dtype=np.uint8)
        self.history = np.zeros((2, 256), dtype=np.int64)

    def clear(self) -> None:
        self.depth.fill(-1)
        self.history.fill(0)

    def best_move(self, position: Position) -> Move | None:
        """The table's move for ``position``, if it has a legal one."""
        geo, st = position.kernel_arrays()
        key = np.uint64(K.board_key(geo, st))
        slot = int(key & np.uint64(len(self.key) - 1))
        if self.depth[slot] < 0 or self.key[slot] != key:
            return None
        move = Move.from_code(int(self.move[slot]))
        return move if position.is_legal(move) else None


def search(
    position: Position,
    table: SearchTable,
    depth: int | None = None,
    seconds: float | None = None,
    nodes: int | None = None,
    full_root: bool = False,
    stop: StopRequest | None = None,
) -> SearchResult:
    """Iterative deepening from ``position`` (not over) up to ``depth`` plies,
    within ``seconds`` of wall time and ``nodes`` nodes (``None``: no limit;
    with no limit at all it searches to the end of the game), or until
    ``stop`` is set (from another thread), which ends the depth under way as
    the deadline does.

    Depth 1 always completes, so a legal move is always found.
    """
    if position.is_over:
        raise game_over_error(position.notation, position.result)
    start = _time.perf_counter()
    geo, st = position.kernel_arrays()
    win = windows(geo, st)
    codes = np.zeros(len(win.cells), dtype=np.uint8)
    root_eval = load_codes(st, win.cells, win.centre, codes)
    root_key = np.uint64(K.board_key(geo, st))
    root_moves = np.zeros(K.MAX_LEGAL, dtype=np.uint8)
    root_scores = np.zeros(K.MAX_LEGAL, dtype=np.int64)
    table.clear()
    max_depth = position.empty_cells if depth is None else min(depth, position.empty_cells)
    total = 0
    searching = 0.0
    done: tuple[int, int, int, int] = (0, 0, 0, 0)  # depth, score, move code, root moves
    d = 1
    while d <= max_depth:
        limit = 1 << 62  # depth 1 always completes
        if d > 1:
            if seconds is not None:
                left = seconds - (_time.perf_counter() - start)
                limit = int(total / searching * left)  # the node rate measured so far
            if nodes is not None:
                limit = min(limit, nodes - total)
            if limit <= 0:
                break
        t0 = _time.perf_counter()
        score, code, n_root, used, aborted = _search(
            geo, st, d, limit, _NEVER if d == 1 or stop is None else stop.flag, full_root, root_key, root_eval,
            codes, win.through, win.count,
            win.centre, table.key, table.val, table.depth, table.flag, table.move,
            table.history, root_moves, root_scores,
        )
        searching += _time.perf_counter() - t0
        total += used
        if aborted:
            if seconds is not None and not (stop is not None and stop.flag[0]):
                # Stopped by the limit its node rate gave, with time left (else the loop's top ends it): the
                # rate of the first few milliseconds, which one pause of this process on a loaded machine
                # made 100 times too low (a 0.25 s search ended at depth 2 after 0.07 s).  The same depth
                # again, at the rate that counts this try's nodes and time too.
                continue
            break
        done = (d, int(score), int(code), int(n_root))
        if abs(score) >= WIN:  # proven: deeper searches find the same result
            break
        d += 1
    d, score, code, n_root = done
    scores = {Move.from_code(int(root_moves[i])): int(root_scores[i]) for i in range(n_root)}
    return SearchResult(Move.from_code(code), score, d, scores if full_root else {}, total,
                        _time.perf_counter() - start)


def exact_score(score: int | None) -> int | None:
    """The RULES.md score of a proven search score, or ``None`` for a
    heuristic one (or none)."""
    if score is None:
        return None
    if score >= WIN:
        return score - WIN
    if score <= -WIN:
        return score + WIN
    return None


def value_of(score: int) -> float:
    """A search score as an expected result in [0, 1]: 1 or 0 when proven, a
    logistic of the heuristic score otherwise (0.5 for a draw)."""
    if abs(score) >= WIN:
        return 1.0 if score > 0 else 0.0
    return 1.0 / (1.0 + math.exp(-score / VALUE_SCALE))


def on_disk() -> bool:
    """Whether numba's cache on disk holds the search that
    :func:`compile_search` compiles (``c4lab.compile_aside``)."""
    return compile_aside.on_disk(_search.py_func)


@lru_cache(maxsize=1)
def compile_search() -> None:
    """Compile (or load from numba's cache) the search once per process,
    before a first timed search (the compiler is not thinking time).  An
    agent calls it before its first search, not when it is made: ``master``
    makes one but its first move on 7x6 comes from the solver (2.5 s of
    compiling saved there)."""
    search(Position.parse("4x4"), SearchTable(bits=4), depth=2)


@register(
    "minimax",
    "negamax alpha-beta with a transposition table and iterative deepening; "
    f"{DEFAULT_TIME:g} s per move unless depth= or time= is given",
    [
        Param("depth", int, None, "maximum depth in plies (alone: a fixed-depth search)", minimum=1),
        Param("time", float, None, f"seconds per move (default {DEFAULT_TIME:g} without depth=)", minimum=0, above=True, maximum=MAX_SECONDS),
    ],
)
class MinimaxAgent(Agent):
    """Plays the move of the deepest completed search.

    A ``Budget.time`` replaces ``time=``; ``Budget.iterations`` caps the
    nodes searched.  The move returns within the time plus a few
    milliseconds (measured with 0.2 s on boards from 4x4 to 12x12: at most
    5 ms over on an idle machine, up to 22 ms while other processes slowed
    the search down after its node rate was measured).  A stop request
    (``request_stop``) answers as soon: the last completed depth's move.
    """

    def __init__(self, depth: int | None = None, time: float | None = None) -> None:
        if depth is not None and depth < 1:
            raise ValueError(f"depth must be at least 1, not {depth}")
        if time is not None and not time > 0:
            raise ValueError(f"time must be positive, not {time}")
        self.depth = depth
        self.time = DEFAULT_TIME if depth is None and time is None else time
        self._table: SearchTable | None = None

    def _search(self, position: Position, budget: Budget | None, full_root: bool) -> SearchResult:
        compile_search()
        if self._table is None:
            self._table = SearchTable()
        budget = budget or Budget()
        seconds = budget.time if budget.time is not None else self.time
        return search(position, self._table, self.depth, seconds, budget.iterations, full_root,
                      self.stop_request)

    def choose(self, position: Position, budget: Budget | None = None) -> Move:
        # The game loop's question: no full-window root, the cheaper search.
        return self._search(position, budget, full_root=False).move

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """The move, with the exact (full-window) score of every root move
        at the last completed depth; ``score`` is the search score (see
        ``exact_score`` for proven ones)."""
        found = self.search_root(position, budget)
        return found.move, self.analysis(position, found)

    def search_root(self, position: Position, budget: Budget | None = None) -> SearchResult:
        """The search ``analyse`` runs (every root move with a full window),
        for a caller that wants its analysis later or not at all."""
        return self._search(position, budget, full_root=True)

    def analysis(self, position: Position, found: SearchResult) -> Analysis:
        """``found`` (this agent's last ``search_root`` of ``position``) as
        ``analyse`` answers it.  Its line is read from the table of that
        search, so ask before the next one.  (Reading it plays moves through
        ``Position``, whose kernels a first move need not compile when it
        does not show the line: ``master`` asks only when its answer is
        minimax's.)"""
        moves = tuple(
            MoveStats(move, score=score, value=value_of(score)) for move, score in found.scores.items()
        )
        return Analysis(
            moves=moves,
            value=value_of(found.score),
            pv=self._pv(position, found),
            iterations=found.nodes,
            seconds=found.seconds,
        )

    def _pv(self, position: Position, found: SearchResult) -> tuple[Move, ...]:
        """The principal variation: the best move, then the table's moves."""
        assert self._table is not None
        pv = [found.move]
        position = position.play(found.move)
        while len(pv) < found.depth and not position.is_over:
            move = self._table.best_move(position)
            if move is None:
                break
            pv.append(move)
            position = position.play(move)
        return tuple(pv)


def bench_minimax(board: str, seconds: float) -> dict[str, float]:
    """Search the empty ``board`` for ``seconds``: nodes, nodes per CPU
    second (one core), the depth completed, CPU and wall time."""
    position = Position.parse(board)
    agent = MinimaxAgent(time=seconds)
    compile_search()
    cpu0, wall0 = _time.process_time(), _time.perf_counter()
    found = agent._search(position, None, full_root=False)
    cpu, wall = _time.process_time() - cpu0, _time.perf_counter() - wall0
    return {
        "nodes": found.nodes,
        "nodes_per_s": found.nodes / cpu,
        "depth": found.depth,
        "cpu_s": cpu,
        "wall_s": wall,
    }
