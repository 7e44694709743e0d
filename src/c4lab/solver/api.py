"""The solver's Python API: exact scores, best moves and move analysis.

    >>> from c4lab import Position
    >>> from c4lab.solver import Solver
    >>> Solver().solve(Position.parse("4x4:dacd")).score
    0

A score is RULES.md's: positive, the side to move wins (the larger, the
sooner), 0 a draw, negative a loss.  A search that runs out of time gives no
score at all (``score is None``, ``timed_out``): never a wrong one.
"""

from __future__ import annotations

import functools
import math
import numbers
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from c4lab import compile_aside
from c4lab.ctrl_c import waited_on_a_thread
from c4lab.rules import kernels as K
from c4lab.rules.move import Move
from c4lab.rules.notation import PositionError, parse_position
from c4lab.rules.position import Position
from c4lab.rules.sides import game_over_error
from c4lab.rules.variant import Variant, integer
from c4lab.solver import database, negamax
from c4lab.solver.bitboard import Bitboards, is_wide

#: Transposition-table entries (32 bytes each: 128 MB), one table per thread.
DEFAULT_TABLE_SIZE = 1 << 22

_NO_LIMIT = (1 << 63) - 1


class SolverTimeout(Exception):
    """Raised inside the API when a search hits its deadline."""


@dataclass(frozen=True)
class Solution:
    """What the solver found out about one position.

    ``score`` is the exact score (with ``weak``: 1, 0 or -1), ``None`` when
    the search gave up at its time limit.  ``best_moves`` are the move tokens
    that keep the score (empty unless asked for, or when timed out).
    ``complete`` is whether everything asked for was found: False where
    the limit came before the score (``score`` is None), or after it but
    before the best moves asked for (``best_moves`` is then empty, and the
    score stands, found before the limit).
    """

    position: Position
    score: int | None
    weak: bool = False
    best_moves: tuple[Move, ...] = ()
    nodes: int = 0
    time_s: float = 0.0
    cpu_s: float = 0.0  # CPU time of the searches themselves (what benchmarks compare)
    complete: bool = True

    @property
    def timed_out(self) -> bool:
        """Did the search give up (its time or node limit) with no score?"""
        return self.score is None

    def to_dict(self) -> dict[str, Any]:
        """The ``c4lab solve --json`` record: ``timed_out`` where the limit
        came before all of it was found (the score, or the best moves after
        it: ``best_moves`` is then null, the score kept if it was found)."""
        return {
            "position": self.position.notation,
            "score": self.score,
            "weak": self.weak,
            "timed_out": not self.complete,
            "best_moves": [m.token for m in self.best_moves] if self.complete else None,
            "nodes": self.nodes,
            "time_s": round(self.time_s, 6),
        }


@dataclass
class _Table:
    """One thread's transposition table and the variant its entries are for."""

    size: int
    array: np.ndarray | None = None
    wide: bool = False
    generation: int = 0
    variant: object = None

    def needs_array(self, wide: bool) -> bool:
        """Whether a search of that width must first allocate the table."""
        return self.array is None or self.wide != wide

    def for_variant(self, variant: object, wide: bool) -> np.ndarray:
        """The table, ready for a search on ``variant`` (entries of another
        board are dropped by starting a new generation)."""
        array = self.array
        if array is None or self.needs_array(wide):
            array = self.array = negamax.new_table(self.size)
            array.fill(0)  # touch every page now, not during the first searches
            self.wide = wide
            self.generation = 0
        if variant != self.variant:
            self.generation += 1
            self.variant = variant
        return array


_tables = threading.local()


def _in_parallel(aside: Callable[[], object], here: Callable[[], object]) -> None:
    """Run ``aside`` on a new thread while ``here`` runs on this one; an
    exception of either is raised here once both have ended."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            aside()
        except BaseException as exc:  # noqa: BLE001 - re-raised by the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="c4lab-solver-table", daemon=True)
    thread.start()
    try:
        here()
    finally:
        thread.join()
    if failure:
        raise failure[0]


def _table(size: int) -> _Table:
    tables: dict[int, _Table] = getattr(_tables, "by_size", None) or {}
    _tables.by_size = tables
    if size not in tables:
        tables[size] = _Table(size)
    return tables[size]


def _ready_moves(position: Position) -> None:
    """The rules' kernels that list and play ``position``'s moves, compiled
    or loaded from numba's cache (a first move played) where this process
    runs them compiled; a process's first calls run them interpreted
    (``rules.interpreted``: nothing to prepare, nor compiled later)."""
    moves = position.legal_moves()
    if moves:
        position.play(moves[0])


#: Held while a child compiles negamax (``_recursion_aside``) and this
#: process waits for it: two threads (a server's) start one child, and the
#: second waits for the first rather than compile negamax itself.
_RECURSION_LOCK = threading.Lock()


#: The child compiling negamax of each width (True: three words), at most
#: one per process and width: a first search of that width waits for it
#: instead of compiling negamax itself.
_CHILDREN: dict[bool, compile_aside.Aside] = {}


def _recursion_aside(wide: bool, database: bool, reading_moves: bool = False) -> compile_aside.Aside | None:
    """A child process that compiles :func:`~c4lab.solver.negamax.negamax`
    of one width (``c4lab.compile_aside``) while this process compiles the
    rest of a first solve with its best moves: the root search, the
    database lookup, the rules' kernels that list and play moves (about 1.8
    s on the classic board, where negamax takes 2.5 s).  Started only where
    neither negamax nor those kernels are compiled here or on disk: for a
    plain solve, the rest is the root search alone (0.25 s), less than the
    child's start, and a child made no difference (measured: 3.79-4.01
    against 3.75-4.07 s for ``solve 6x5/Xc2`` on an empty cache).  The first
    ``master`` move on 7x6 (the database's exact move) on an empty cache:
    5.1-5.3 s without it, 3.95 s with it.  Where the search reads the
    ``database``, its lookup alone is enough work for a child to pay,
    whether or not the rules' kernels are ready (a server loads those
    first, ``rules.position.load_kernels``: its first ``master`` move on
    7x6 took 10.0-11.0 s instead of 7.9-8.1 s without a child); so is
    ``reading_moves``, the rules' kernels that play a position's moves
    before a solve (:func:`expect`).  Since 2026-12-06 a process's first
    calls of the rules' kernels run interpreted (``rules.interpreted``), so
    where those are not on disk the rest here is the root search alone; the
    child then made no clear difference (a first ``perfect`` move on
    6x5/Xc2:dc 2.84 and 3.47 s against 2.57 and 3.44 s without children,
    ``solve --analyse 6x5/Xc2`` 3.97 and 3.68 s against 4.06 and 3.98 s, a
    noisy hour) and is kept.  The caller holds ``_RECURSION_LOCK``."""
    if wide in _CHILDREN:
        return _CHILDREN[wide]
    if negamax.ready(wide) or on_disk(wide, recursion_only=True):
        return None
    if not (database or reading_moves) and (
        K.legal_codes.signatures or compile_aside.on_disk(K.legal_codes.py_func)
    ):
        return None
    aside = compile_aside.start(negamax.RECURSION_TARGET[wide])
    if aside is not None:
        _CHILDREN[wide] = aside
    return aside


def expect(text: str) -> None:
    """``text``, a position this process is about to read and then solve:
    if it has moves, start now the child that compiles negamax of its width
    (``_recursion_aside``, where one can help), so that the child
    compiles while this process compiles the rules' kernels that play the
    moves (0.9 s on a first start), not after them.  As the very first
    command (an empty cache, a middle day, 2026-12-06): ``solve
    6x5/Xc2:dc`` 2.94-2.96 → 2.35 s, ``move 6x5/Xc2:dc --agent perfect``
    3.45-3.56 → 2.57-2.67 s.  Since the moves are read interpreted
    (``rules.interpreted``, the same day), what the child overlaps is this
    process's imports and root search: that ``perfect`` move took 2.84 and
    3.47 s with children, 2.57 and 3.44 s with none (a noisy hour), within
    the noise.  Without moves, nothing: reading the position
    compiles nothing then, and the child of a first search with best moves
    starts as soon.  A ``text`` that is not a position is left to the
    reading, which says what is wrong."""
    try:
        parsed = parse_position(text)
    except PositionError:
        return
    if parsed.moves:
        with _RECURSION_LOCK:
            _recursion_aside(is_wide(parsed.variant), False, reading_moves=True)


@dataclass
class Solver:
    """Solves positions of any variant.

    The transposition table (``table_size`` entries, a power of two) belongs
    to the thread and is shared by the solvers of that thread: what it has
    learnt about a board stays valid until a position of another board is
    solved, so solving the positions of one game in turn is cheap.
    ``clear()`` forgets everything (benchmarks call it before each position).

    With ``book`` (the default), a classic position with at most 12 pieces is
    searched down to the 12-piece positions of the published database
    (``c4lab.solver.database``, loaded on the first such position) and
    scored there; without the package, or with ``book=False``, it is searched
    to the end like any other.
    """

    table_size: int = DEFAULT_TABLE_SIZE
    book: bool = True
    #: Called from another thread every ``progress_every`` seconds while a
    #: search runs (after the first such period): the :class:`Progress`.
    progress: Callable[[Progress], None] | None = None
    progress_every: float = 1.0
    _cleared: bool = field(default=False, init=False, repr=False)
    _cpu: float = field(default=0.0, init=False, repr=False)
    _nodes_left: int | None = field(default=None, init=False, repr=False)
    _searched: int = field(default=0, init=False, repr=False)  # nodes of every search of the last solve() or analyse(), given up or not
    _cancelled: bool = field(default=False, init=False, repr=False)
    _running: np.ndarray | None = field(default=None, init=False, repr=False)  # the context of the search under way

    def __post_init__(self) -> None:
        """``ValueError`` naming a bad setting now, not at the first solve."""
        size = integer(self.table_size, "Solver: table_size")
        if size <= 0 or size & (size - 1):
            raise ValueError(f"Solver: table_size must be a power of two, not {size}")
        self.table_size = size
        if self.progress is not None and not callable(self.progress):
            raise ValueError(f"Solver: progress must be a function of a Progress, not {self.progress!r}")
        _check_seconds(self.progress_every, "Solver: progress_every", zero=False)

    def clear(self) -> None:
        """Forget every stored result (costs nothing: a new generation)."""
        self._cleared = True

    def cancel(self) -> None:
        """Stop this solver's searches, from another thread: the one under
        way gives up as at its timeout (``solve``: no score; ``analyse``:
        ``None`` for the moves left), and so does every later one.  A
        server stops with it the search for a position nobody looks at any
        more."""
        self._cancelled = True
        running = self._running
        if running is not None:
            _stop(running)

    @property
    def cancelled(self) -> bool:
        """Whether ``cancel`` was called: every search of this solver gives up."""
        return self._cancelled

    def uses_database(self, position: Position) -> bool:
        """Whether a search of ``position`` reads the classic database at its
        leaves (the classic board, the database on, installed and readable)."""
        return self._database(Bitboards.of(position)) is not None

    def prepare(self, position: Position | str, moves: bool = False) -> None:
        """Compile (or load from numba's cache) what a solve of ``position``
        runs, and with ``moves`` what scoring its moves runs (the rules'
        kernels that list and play them): what ``solve`` and ``analyse`` do
        before their timeout starts, for a caller that wants it done before
        a first solve (``answer`` with ``analyse``: a first start then
        compiles the search in a child process while this one compiles the
        rules' kernels).  A string is read as a position, as ``solve`` reads it."""
        position = _as_position(position)
        if not position.is_over:
            self._prepare(Bitboards.of(position), position if moves else None)

    # -- internals -----------------------------------------------------------

    def _database(self, b: Bitboards) -> database.Database | None:
        """The classic database if the search of ``b`` can use it."""
        if not self.book or b.variant != Variant.classic() or b.empty < database.WIDTH * database.HEIGHT - database.PLY:
            return None
        try:
            return database.default()
        except database.DatabaseError as exc:
            _warn_once(f"{exc}; solving without it")
            return None

    def _prepare(self, b: Bitboards, moves_of: Position | None = None) -> None:
        """What a first search of ``b`` needs before it starts, done before
        any timeout runs: its code compiled (or loaded from numba's cache),
        the database read and its lookup compiled if the search uses them,
        the table allocated, and with ``moves_of`` the rules' kernels that
        list and play that position's moves (the best moves are its
        children's searches).  On a first start these took more than
        ``master``'s quarter-second probe of the classic opening (1.1 s
        beyond the search's compilation), which then gave up, and its
        fallback compiled minimax and UCT as well (6 s more)."""
        database = self._database(b)
        table = _table(self.table_size)
        aside = _CHILDREN.get(b.wide)
        if aside is None and moves_of is not None and not negamax.ready(b.wide):
            with _RECURSION_LOCK:  # one child, whatever the threads
                aside = _recursion_aside(b.wide, database is not None)

        def search_code() -> None:
            if aside is not None and not negamax.ready(b.wide):
                # The rest here while a child compiles negamax; another
                # thread waits for this one, then loads what it loaded.
                with _RECURSION_LOCK:
                    if not negamax.ready(b.wide):
                        negamax.prepare(b, book=database is not None, recursion=False)
                        if moves_of is not None:
                            _ready_moves(moves_of)
                        aside.wait()
                        negamax.prepare(b, book=database is not None)
            negamax.prepare(b, book=database is not None)

        if table.needs_array(b.wide):
            # Touching a new table's pages (0.26 s for the default 128 MB)
            # releases the GIL: done on another thread, it overlaps with the
            # search's compilation or loading.
            _in_parallel(lambda: table.for_variant(b.variant, b.wide), search_code)
        else:
            search_code()
            table.for_variant(b.variant, b.wide)
        if moves_of is not None:
            _ready_moves(moves_of)

    def _run(self, b: Bitboards, deadline: float | None, call: Any) -> tuple[int, int]:
        """Run ``call(X, tt)`` on ``b`` under ``deadline``; (value,
        nodes).  Adds the search's CPU time to ``self._cpu``."""
        table = _table(self.table_size)
        tt = table.for_variant(b.variant, b.wide)
        if self._cleared:
            table.generation += 1
            self._cleared = False
        negamax.prepare(b)
        X = negamax.context(b, self._database(b))
        X[negamax.X_GEN] = table.generation
        X[negamax.X_LIMIT] = _NO_LIMIT if self._nodes_left is None else max(self._nodes_left, 0)
        if self._cancelled:
            raise SolverTimeout
        timer = None
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SolverTimeout
            if left < threading.TIMEOUT_MAX:  # a wait longer than the platform's clock can count never ends
                timer = threading.Timer(left, _stop, (X,))
                timer.daemon = True
                timer.start()
        reporter = _Reporter(X, self.progress, self.progress_every) if self.progress is not None else None
        # the CPU time of the thread that runs the search: the process's (``process_time``) counted the start
        # of the thread a search from the main thread runs on (``_interruptible``), about 0.2 ms a search
        # where ``bench solver``'s easy sets take 5-30 us, and any other thread's work meanwhile
        spent = [0.0]

        def timed(X: np.ndarray, tt: np.ndarray) -> int:
            began = time.thread_time()
            try:
                return call(X, tt)
            finally:
                spent[0] = time.thread_time() - began

        self._running = X
        if self._cancelled:  # a cancel() since the test above, which did not see X: stop it here
            _stop(X)
        try:
            value = _interruptible(timed, X, tt)
        finally:
            self._running = None
            self._cpu += spent[0]
            if timer is not None:
                timer.cancel()
            if reporter is not None:
                reporter.stop()
        nodes = int(X[negamax.X_NODES])
        if self._nodes_left is not None:
            # The kernel counts the node past the limit, then gives up on it
            # unsearched: a limit of 1000 reported 1001 nodes.
            nodes = min(nodes, max(self._nodes_left, 0))
            self._nodes_left -= nodes
        self._searched += nodes
        if value == negamax.ABORTED:
            raise SolverTimeout
        return value, nodes

    # -- the API ---------------------------------------------------------------

    def solve(
        self,
        position: Position | str,
        *,
        weak: bool = False,
        timeout: float | None = None,
        best_moves: bool = False,
        max_nodes: int | None = None,
    ) -> Solution:
        """The exact score of ``position`` (``weak``: 1, 0 or -1), and with
        ``best_moves`` every move token that keeps it.  ``timeout`` (seconds)
        or ``max_nodes`` (the whole call) give up with ``score = None``; a
        node limit is reproducible, a timeout is not, and the solution's
        ``nodes`` is never more than ``max_nodes``.  A string is read as
        a position (``Position.parse``).  Ctrl-C stops the search at once
        (``KeyboardInterrupt``, on the main thread)."""
        position = _as_position(position)
        if timeout is not None:
            _check_seconds(timeout, "solve: timeout")
        if max_nodes is not None:
            max_nodes = _node_budget(max_nodes, "solve")
        b = Bitboards.of(position)
        self._prepare(b, position if best_moves else None)  # not part of the timeout
        start = time.monotonic()
        deadline = None if timeout is None else start + timeout
        self._cpu = 0.0
        self._searched = 0
        self._nodes_left = max_nodes
        try:
            score, _ = self._run(b, deadline, lambda X, tt: negamax.solve(b, weak, X, tt))
        except SolverTimeout:  # the nodes searched until then count too
            return Solution(position, None, weak, (), self._searched, time.monotonic() - start, self._cpu, False)
        best: tuple[Move, ...] = ()
        complete = True
        if best_moves:
            try:
                best, _ = self._best_moves(position, score, weak, deadline)
            except SolverTimeout:  # the score stands (it was found): only its moves are missing
                complete = False
        return Solution(position, score, weak, best, self._searched, time.monotonic() - start, self._cpu, complete)

    def _best_moves(
        self, position: Position, score: int, weak: bool, deadline: float | None
    ) -> tuple[tuple[Move, ...], int]:
        """The moves that keep ``score``: those whose child scores at most
        ``-score`` (weak: a loss, a draw, anything for the side to move)."""
        if weak and score < 0:
            return position.legal_moves(), 0
        bound = -score if not weak else (-1 if score > 0 else 0)
        win = (position.empty_cells + 1) // 2
        best = []
        nodes = 0
        for move in position.legal_moves():
            child = position.play(move)
            if child.is_over:
                worth = 0 if child.result == "draw" else (1 if weak else win)
                keeps = worth == score
            else:
                cb = Bitboards.of(child)
                value, used = self._run(cb, deadline, lambda X, tt, cb=cb: negamax.window(cb, bound, bound + 1, X, tt))
                nodes += used
                keeps = value <= bound
            if keeps:
                best.append(move)
        return tuple(best), nodes

    @property
    def nodes(self) -> int:
        """The nodes searched by the last ``solve`` or ``analyse`` (a
        ``Solution`` carries its own; an analysis answers scores alone)."""
        return self._searched

    def analyse(self, position: Position | str, *, timeout: float | None = None,
                all_or_none: bool = False, weak: bool = False, max_nodes: int | None = None) -> dict[Move, int | None]:
        """The exact score of every legal move (RULES.md: the move's worth to
        the side to move; ``weak``: only win, draw or loss, 1, 0 or -1, as
        ``solve(weak=True)`` scores a position).  Moves not scored before ``timeout`` map to
        ``None``.  The time is shared out: each move may use an equal part of
        what is left, so that one hard move does not leave the others
        unscored (a move solved early leaves its part to the next ones).
        ``max_nodes`` is a budget of nodes for the whole call, shared out
        the same way: reproducible where a timeout is not, and never
        overspent (``nodes`` after the call is at most ``max_nodes``).
        A move that wins at once, or that lets the opponent win at once, is
        scored without a search, so it is known whatever the clock leaves.
        ``all_or_none``: for a caller that has no use for a partial answer,
        the moves after the first one not scored in its part are not
        searched (they map to ``None``): the same moves are scored as
        without it, in a fraction of the time where one is not.  A string
        is read as a position (``Position.parse``).  A finished game is a
        ``ValueError``, as in ``solve``: it has no move to score, and an
        empty answer would read as "every move scored"."""
        position = _as_position(position)
        if position.is_over:
            raise game_over_error(position.notation, position.result, "no move to analyse")
        if timeout is not None:
            _check_seconds(timeout, "analyse: timeout")
        budget = None if max_nodes is None else _node_budget(max_nodes, "analyse")
        self.prepare(position, moves=True)  # outside the timeout, as in solve
        deadline = None if timeout is None else time.monotonic() + timeout
        self._nodes_left = None
        self._searched = 0
        win = 1 if weak else (position.empty_cells + 1) // 2
        out: dict[Move, int | None] = {}
        moves = position.legal_moves()
        for i, move in enumerate(moves):
            child = position.play(move)
            if child.is_over:
                out[move] = 0 if child.result == "draw" else win
                continue
            if (deadline is not None or budget is not None) and _wins_at_once(child):
                # the opponent wins with its next stone: exact without a search, so known
                # whatever the clock (a slow or busy machine) leaves, as a win at once is
                out[move] = -1 if weak else -((child.empty_cells + 1) // 2)
                continue
            if all_or_none and None in out.values():
                out[move] = None
                continue
            cb = Bitboards.of(child)
            mine = None
            if deadline is not None:
                now = time.monotonic()
                mine = now + (deadline - now) / (len(moves) - i)
            if budget is not None:
                self._nodes_left = part = budget // (len(moves) - i)
            try:
                value, _ = self._run(cb, mine, lambda X, tt, cb=cb: negamax.solve(cb, weak, X, tt))
                out[move] = -value
            except SolverTimeout:
                out[move] = None
            if budget is not None:
                budget -= part - max(self._nodes_left or 0, 0)
        self._nodes_left = None
        return out


def _check_seconds(value: object, what: str, *, zero: bool = True) -> None:
    """``ValueError`` naming ``what`` unless ``value`` is a number of seconds
    (a bool or a string is not: ``timeout='1'`` failed on a ``+`` inside),
    0 or more (more than 0 unless ``zero``): a negative timeout gave up at
    once, a score of ``None`` as for a position too hard to solve, and a
    ``progress_every`` of 0 or less called ``progress`` without a pause."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value):
        raise ValueError(f"{what} must be a number of seconds, not {value!r}")
    if value < 0 or (value == 0 and not zero):
        raise ValueError(f"{what} must be {'0 or more' if zero else 'more than 0'} seconds, not {value!r}")


def _node_budget(value: object, caller: str) -> int:
    """``max_nodes`` checked: a whole number, 0 or more (``ValueError``
    naming ``caller`` otherwise)."""
    nodes = integer(value, f"{caller}: max_nodes")
    if nodes < 0:
        raise ValueError(f"{caller}: max_nodes must be 0 or more, not {nodes}")
    return nodes


def _wins_at_once(position: Position) -> bool:
    """Can the side to move in ``position`` win with its next stone?  The
    rules' own moves, one a column: a ban never follows a winning piece,
    and the plain move (a bonus declined) is always legal where one is."""
    side = position.to_move
    return any((after := position.play(move)).is_over and after.result == side
               for move in position.legal_moves() if move.ban is None)


@dataclass(frozen=True)
class Progress:
    """A running search: its nodes so far, the seconds since it started, and
    what the root knows of the score (``low <= score <= high``; ``probe``:
    the value it is testing), ``None`` before the first test."""

    nodes: int
    seconds: float
    low: int | None
    high: int | None
    probe: int | None

    def describe(self) -> str:
        """One line: ``12.3 s  1,234,567 nodes  score in [-2, 3], testing 0``."""
        known = "" if self.low is None else f"  score in [{self.low}, {self.high}], testing {self.probe}"
        return f"{self.seconds:.1f} s  {self.nodes:,} nodes{known}"


class _Reporter:
    """Calls ``report`` with the search's progress every ``every`` seconds."""

    def __init__(self, X: np.ndarray, report: Callable[[Progress], None], every: float) -> None:
        self._X = X
        self._report = report
        self._every = every
        self._start = time.monotonic()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._done.wait(self._every):
            window = negamax.window_of(self._X)
            low, high, probe = window if window is not None else (None, None, None)
            self._report(Progress(int(self._X[negamax.X_NODES]), time.monotonic() - self._start, low, high, probe))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


@functools.cache
def _warn_once(message: str) -> None:
    warnings.warn(message, stacklevel=3)


def _stop(X: np.ndarray) -> None:
    """Stop the search running on context ``X`` (from the timer thread)."""
    X[negamax.X_LIMIT] = 0


def _interruptible(call: Callable[[np.ndarray, np.ndarray], int], X: np.ndarray, tt: np.ndarray) -> int:
    """``call(X, tt)``, a search on context ``X``.  On the main thread it
    runs on a thread of its own while this one waits, so that Ctrl-C (a
    notebook's interrupt too) stops it at once: ``KeyboardInterrupt`` stops
    the search (``_stop``) and is raised here.  Python runs a signal's
    handler only between the main thread's bytecodes, and the search, a
    compiled kernel that holds no GIL, can run for hours in one call: a
    ``solve("9x8")`` from a script ignored Ctrl-C.  Elsewhere (the
    commands' own worker thread, a server's pool) it runs in place."""
    if threading.current_thread() is not threading.main_thread():
        return call(X, tt)
    return waited_on_a_thread(lambda: call(X, tt), "c4lab-solve", on_interrupt=lambda: _stop(X))


def answer(
    solver: Solver, position: Position, *, weak: bool = False, analyse: bool = False,
    timeout: float | None = None, best_moves: bool = False,
) -> tuple[dict[str, Any], str]:
    """One answer of ``c4lab solve``: the JSON record and the text line.

    The text line starts with the position, so that answers read from a
    stream need not be counted: ``POSITION SCORE``.  With ``analyse`` every
    legal move is scored too (with ``weak``, each as 1, 0 or -1 like the
    position), in what is left of ``timeout``.  A position
    given up at the timeout answers ``POSITION timeout (not solved in T s)``
    and its record's score is null.  A move the analysis had no time left
    for shows ``?`` (null in the record), and the line says so; the
    record's ``timed_out`` is then true, as it is where the best moves
    were not all found in time (the score kept either way, found before
    the limit).  The record's ``nodes`` and ``time_s`` count the analysis
    too; its ``analysis`` is null where the score was not found.
    """
    if analyse:  # its moves' kernels too, before the first solve (not part of the timeout)
        solver.prepare(position, moves=True)
    start = time.monotonic()
    solution = solver.solve(position, weak=weak, timeout=timeout, best_moves=best_moves)
    record = solution.to_dict()
    if solution.timed_out:
        if analyse:
            record["analysis"] = None  # the same keys whatever the time allowed
        return record, f"{position.notation} timeout (not solved in {timeout:g} s)"
    plain = f"{position.notation} {solution.score}"
    if analyse:
        left = None if timeout is None else max(timeout - (time.monotonic() - start), 1e-3)
        scores = solver.analyse(position, timeout=left, weak=weak)
        record["analysis"] = {m.token: v for m, v in scores.items()}
        record["nodes"] += solver.nodes
        plain += "  " + " ".join(f"{m.token}:{'?' if v is None else v}" for m, v in scores.items())
        if None in scores.values():
            record["timed_out"] = True
            plain += f"  (?: not scored within {timeout:g} s)"
        record["time_s"] = round(time.monotonic() - start, 6)
    return record, plain


def solve(
    position: Position | str,
    *,
    weak: bool = False,
    timeout: float | None = None,
    best_moves: bool = True,
    max_nodes: int | None = None,
) -> Solution:
    """The exact score of ``position`` with its best moves: ``Solver.solve``
    on a new solver, the same arguments, but ``best_moves`` on by default
    (one position asked about; a ``Solver`` kept for many positions leaves
    them out unless asked, as they cost a search per move).  Ctrl-C stops
    it; without ``timeout`` or ``max_nodes`` a large board can take hours."""
    return Solver().solve(position, weak=weak, timeout=timeout, best_moves=best_moves, max_nodes=max_nodes)


def _as_position(position: Position | str) -> Position:
    """``position``, or the position its notation names; ``TypeError`` for
    anything else, saying what to pass."""
    if isinstance(position, Position):
        return position
    if isinstance(position, str):
        return Position.parse(position)
    raise TypeError(f"a position is a Position or its notation like '7x6:dd', not {position!r}")


def compile_search(variant: Variant | None = None) -> None:
    """Compile (or load from numba's cache) what a solve with its best moves
    runs on ``variant``'s kind of board: the one-word search, which serves
    every board of up to 64 bits (the default), or the three-word one.  A
    solve of the empty board stopped at its first node, with a small table:
    a few milliseconds once the cache holds the code.  ``c4lab.compile_aside``
    runs it in a child (``c4lab.solver.api:compile_search``)."""
    position = Position(variant or Variant(4, 4))
    Solver(table_size=1 << 10, book=False).solve(position, max_nodes=1, best_moves=True)


def on_disk(wide: bool = False, recursion_only: bool = False) -> bool:
    """Whether numba's cache on disk holds the solver's search of one
    width: one word (what :func:`compile_search` compiles by default), or
    with ``wide`` three; with ``recursion_only``, its recursive part
    (:func:`~c4lab.solver.negamax.negamax`) whatever of the root.  Reads
    the cache's indexes only; False where numba's compiler is off."""

    def of_width(signature: str) -> bool:
        return ("UniTuple" in signature) == wide  # three words are a tuple of three uint64

    kernels = (negamax.negamax,) if recursion_only else (negamax.negamax, negamax._search)
    functions = [getattr(f, "py_func", None) for f in kernels]
    return all(f is not None and compile_aside.on_disk(f, of_width) for f in functions)
