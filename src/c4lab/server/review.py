"""The exact solver's verdicts for the page: the score of every column (the
hint) and the review of a finished game, move by move -- a service that
takes a position and returns the answer (``Reviewer``, for the room
manager; ``hint`` and ``review_game``, the blocking work).

Scores are RULES.md's, for the side to move: positive a win (the larger,
the sooner), 0 a draw, negative a loss.  On the classic board the opening
database and a search answer every position, quickly; on other boards
each position has a time budget, and what the solver did not finish in it
is ``None`` ("unknown"), never a guess.  These functions block: the server
runs them in its executor, off the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import threading
import time
from concurrent.futures import Executor
from typing import Any

from c4lab.agents import make_agent
from c4lab.agents.base import Agent, Analysis, Budget, board_kind
from c4lab.agents.base import warm_up as warm_up_agent
from c4lab.rules import Move, Position
from c4lab.rules.variant import Variant
from c4lab.server.errors import REVIEW_FAILED, RoomError
from c4lab.server.known_scores import KNOWN
from c4lab.server.limits import AgentLimits
from c4lab.solver import Solver
from c4lab.solver.best_move import centre_first

log = logging.getLogger(__name__)

#: Transposition-table entries of the page's solver (32 bytes each: 32 MB a
#: worker thread): enough with the opening book, and for 0.5 s searches.
TABLE_SIZE = 1 << 20
#: Seconds the solver may spend on one position off the classic board.
PER_POSITION = 0.5
#: Seconds for one classic position (the book and a search answer far sooner).
CLASSIC_PER_POSITION = 10.0
#: Seconds a whole review may take; positions left then are "unknown".
REVIEW_TOTAL = 20.0
#: Seconds of the solver's further passes over a hint's unknown columns,
#: when the page asks for them (``deeper``: the analysis board), while the
#: position stays on screen; each at most the server's think-time limit.
DEEPER = (4.0, 30.0)

VERDICTS = ("best", "inaccuracy", "blunder", "unknown")
#: The agent behind a hint's move while the solver has not settled it (``--hint-agent``).
HINT_SPEC = "master:time=0.5"
#: Reviews kept (by position), so that asking again, or from another page, costs nothing.
REVIEWS_KEPT = 64


def _sign(value: int) -> int:
    return (value > 0) - (value < 0)


def budget_for(position: Position) -> float:
    """The solver's seconds for one position of this board."""
    return CLASSIC_PER_POSITION if position.variant == Variant.classic() else PER_POSITION


def warm_up(solver: Solver, position: Position) -> None:
    """Compile (or load) the search of this board, and load the opening
    book if it applies, before any clock starts: a one-node search."""
    if not position.is_over:
        solver.solve(position, max_nodes=1)


def move_scores(position: Position, timeout: float, solver: Solver | None = None) -> dict[str, int | None]:
    """The exact score of every legal move of ``position`` by its token (its
    worth to the side to move, RULES.md), ``None`` for those not solved in
    ``timeout`` seconds (shared out among the moves: :meth:`Solver.analyse`)
    nor known from an earlier answer (``known_scores``: a position after
    the move solved before, such as a line the analysis board stepped into
    and back out of); what was solved is kept there for the next answers."""
    solver = solver or Solver(TABLE_SIZE)
    warm_up(solver, position)
    solved = solver.analyse(position, timeout=max(timeout, 1e-3))
    scores = KNOWN.fill(position, {move.token: score for move, score in solved.items()})
    KNOWN.learn(position, scores, position_score(position, scores))
    return scores


def position_score(position: Position, scores: dict[str, int | None]) -> int | None:
    """The exact score of ``position`` from its moves' ``scores`` (None:
    not solved): the best of them when every one is known, and also when
    the best known one is worth at least what any other move could be
    (only a win at once, which the solver always scores, is worth more
    than ``(E - 1) // 2``: the mover's next stone at the soonest).  On
    a large board the solver often settles only the winning move of the
    game's last position; without this rule that move was "unknown"."""
    known = [v for v in scores.values() if v is not None]
    if not known:
        return None
    best = max(known)
    if len(known) == len(scores) or best >= (position.empty_cells - 1) // 2:
        return best
    return None


def column_scores(
    position: Position, analysis: Analysis | None, timeout: float | None = None, favourite: str | None = None
) -> dict[str, Any]:
    """What the hint shows above each column: the best exact score of the
    column's moves (with the bonus, a column has one move per ban choice),
    else the engine's estimate from ``analysis`` (its expected result for the
    side to move, 0..1), else nothing.  ``best``: the columns to highlight,
    those with the best exact score when every column is solved (or when the
    best known score is a win: nothing beats a win), else the engine's
    favourite (the columns whose estimate shows best, rounded to a whole per
    cent as the page shows it: two that both show 59 % are both ringed, or
    the column of its move ``favourite``)."""
    scores = move_scores(position, budget_for(position) if timeout is None else timeout)
    return columns_of(scores, estimates_of(analysis), favourite)


def estimates_of(analysis: Analysis | None) -> dict[str, float]:
    """The engine's estimate of each move (by its token) from its
    ``analysis``: the expected result, 0..1, for the side to move (with the
    bonus, each ban choice has its own: the page shows them while the ban
    piece is chosen)."""
    estimates: dict[str, float] = {}
    for stats in analysis.moves if analysis is not None else ():
        value = stats.value
        if value is None and stats.score is not None:
            value = 1.0 if stats.score > 0 else 0.5 if stats.score == 0 else 0.0
        if value is not None:
            estimates[stats.move.token] = value
    return estimates


def columns_of(scores: dict[str, int | None], estimates: dict[str, float], favourite: str | None) -> dict[str, Any]:
    """``column_scores``'s answer from every move's exact score (``None``:
    not solved) and the engine's estimate of each move (by its token): a
    column's estimate is the best of its moves'; ``estimates`` in the answer
    keeps those of the moves left unsolved (a ban choice's own)."""
    columns: list[dict[str, Any]] = []
    for letter in sorted({token[0] for token in scores}):
        mine = [v for t, v in scores.items() if t[0] == letter]
        exact = all(v is not None for v in mine)
        score = max(v for v in mine if v is not None) if exact else None
        guesses = [v for t, v in estimates.items() if t[0] == letter and t in scores]
        columns.append({
            "column": letter,
            "score": score,
            "exact": exact,
            "estimate": None if exact or not guesses else max(guesses),
        })
    if columns and all(c["exact"] for c in columns):
        top = max(c["score"] for c in columns)
        best = [c["column"] for c in columns if c["score"] == top]
        best_score: int | None = top
    else:
        best_score = None
        solved = [c["score"] for c in columns if c["exact"]]
        estimated = [c for c in columns if c["estimate"] is not None]
        if solved and max(solved) > 0:
            best = [c["column"] for c in columns if c["exact"] and c["score"] == max(solved)]
        elif estimated:  # every column that shows the best estimate: a whole per cent, as the page rounds it
            shown = {c["column"]: math.floor(c["estimate"] * 100 + 0.5) for c in estimated}
            best = [column for column, per_cent in shown.items() if per_cent == max(shown.values())]
        else:
            best = [favourite[0]] if favourite else []
    unsolved = {token: value for token, value in estimates.items() if token in scores and scores[token] is None}
    return {"columns": columns, "best": best, "score": best_score, "moves": scores, "estimates": unsolved}


def verdict(before: int | None, played: int | None, scores: dict[str, int | None]) -> str:
    """``best`` (keeps the exact score), ``inaccuracy`` (keeps the result but
    wins later or loses sooner), ``blunder`` (changes the result: a win into
    a draw or a loss, a draw into a loss) or ``unknown``."""
    if played is None:
        return "unknown"
    known = [v for v in scores.values() if v is not None]
    if any(_sign(v) > _sign(played) for v in known):
        return "blunder"
    if before is None:
        return "unknown"
    return "best" if played >= before else "inaccuracy"


def better_moves(played: int | None, scores: dict[str, int | None]) -> list[str]:
    """The moves known to keep a better result (a win, a draw) than the
    move ``played``: a blunder's own, shown where the position's exact
    score, and so its best moves, are not known (moves left unsolved).

    >>> better_moves(-2, {"a": -2, "b": None, "c": 1, "d": 0, "e": 3})
    ['c', 'd', 'e']
    """
    if played is None:
        return []
    return sorted(t for t, v in scores.items() if v is not None and _sign(v) > _sign(played))


#: The verdicts of a move that kept the exact result (a win, a draw or a loss).
KEPT = ("best", "inaccuracy")


def summary(entries: list[dict[str, Any]], start_ply: int = 0) -> dict[str, dict[str, Any]]:
    """Each side's tally of a review's ``entries`` after the first
    ``start_ply`` moves (those of a pasted starting position, which nobody
    played in this game): ``moves``, ``known`` (a verdict other than
    ``unknown``), ``kept`` (the exact result kept: ``best`` or
    ``inaccuracy``), ``blunders``, ``inaccuracies``, ``best``, and
    ``accuracy``: the share of its known moves that kept the result (0..1,
    rounded to three places; None when no move of that side is known).
    An inaccuracy keeps the result, so it counts as accurate: the
    ``inaccuracies`` are given beside it, so that "accuracy 100%" next to
    a move marked ?! reads as it is meant.

    >>> entries = [{"ply": 1, "side": "A", "verdict": "best"}, {"ply": 2, "side": "B", "verdict": "blunder"},
    ...            {"ply": 3, "side": "A", "verdict": "inaccuracy"}, {"ply": 4, "side": "B", "verdict": "unknown"}]
    >>> summary(entries)["A"]
    {'moves': 2, 'known': 2, 'kept': 2, 'blunders': 0, 'inaccuracies': 1, 'best': 1, 'accuracy': 1.0}
    >>> summary(entries, start_ply=2)["B"]  # a game pasted after two moves: B's blunder was not played in it
    {'moves': 1, 'known': 0, 'kept': 0, 'blunders': 0, 'inaccuracies': 0, 'best': 0, 'accuracy': None}
    """
    tally: dict[str, dict[str, Any]] = {}
    for side in ("A", "B"):
        verdicts = [e["verdict"] for e in entries if e["side"] == side and e["ply"] > start_ply]
        known = sum(v != "unknown" for v in verdicts)
        kept = sum(v in KEPT for v in verdicts)
        tally[side] = {
            "moves": len(verdicts), "known": known, "kept": kept, "blunders": verdicts.count("blunder"),
            "inaccuracies": verdicts.count("inaccuracy"), "best": verdicts.count("best"),
            "accuracy": round(kept / known, 3) if known else None,
        }
    return tally


def review_game(
    position: Position,
    start_ply: int = 0,
    *,
    per_position: float | None = None,
    total: float = REVIEW_TOTAL,
) -> dict[str, Any]:
    """The review of every move of ``position``: one entry a move (see
    ``docs/protocol.md``, the ``review`` message).  The first ``start_ply``
    moves are those of a pasted starting position (a room's ``start_ply``):
    they have their entries, so the move list shows their verdicts too, but
    each side's ``summary`` counts only the moves played after them.  The
    positions are solved from the last one back (the end game is cheap, and
    what is learnt there helps earlier), within ``total`` seconds."""
    solver = Solver(TABLE_SIZE)
    warm_up(solver, Position(position.variant))
    started = time.monotonic()
    deadline = started + total
    each = budget_for(position) if per_position is None else per_position
    moves = position.moves
    prefixes = [Position(position.variant)]
    for move in moves:
        prefixes.append(prefixes[-1].play(move))
    analysed: dict[int, dict[str, int | None]] = {}
    complete = True
    for ply in range(len(moves) - 1, -1, -1):
        left = deadline - time.monotonic()
        if left <= 0:
            complete = False
            break
        analysed[ply] = move_scores(prefixes[ply], min(each, left), solver)
    entries = []
    for ply in range(len(moves)):
        scores = analysed.get(ply, {t.token: None for t in prefixes[ply].legal_moves()})
        token = moves[ply].token
        played = scores.get(token)
        before = position_score(prefixes[ply], scores)
        after_position = prefixes[ply + 1]
        after: int | None = None
        if not after_position.is_over:
            following = analysed.get(ply + 1)
            if played is not None:
                after = -played
            elif following is not None and all(v is not None for v in following.values()):
                after = -max(v for v in following.values() if v is not None)
                played = -after
        best = sorted(t for t, v in scores.items() if before is not None and v == before)
        judged = verdict(before, played, scores)
        entries.append({
            "ply": ply + 1,
            "move": token,
            "side": "A" if ply % 2 == 0 else "B",
            "before": before,
            "played": played,
            "after": after,
            "best": best,
            "better": better_moves(played, scores) if judged == "blunder" and not best else [],
            "scores": scores,
            "verdict": judged,
        })
        complete = complete and None not in scores.values()
    return {
        "position": position.notation,
        "start_ply": start_ply,
        "entries": entries,
        "summary": summary(entries, start_ply),
        "complete": complete,
        "seconds": round(time.monotonic() - started, 3),
    }


class HintCancelled(Exception):
    """The hint's solver was cancelled (``Solver.cancel``) before it settled
    every move: the position was left, and nobody waits for its answer."""


def hint(position: Position, adviser: Agent, timeout: float | None = None, solver: Solver | None = None) -> dict[str, Any]:
    """The ``hint`` message's answer (without ``type``): the exact score of
    every column (``column_scores``, within ``timeout`` seconds) and of
    every move (``moves``: with the bonus, the page shows the ban choices'
    own while one is chosen), the engine's move and value.  The solver
    goes first: where it solves every move, the value is exact and the move
    the solver's choice among the best (``centre_first``), and the engine
    is not asked at all (on a first start it would have compiled its
    search for nothing, some seconds before the first scores); else the
    engine's analysis gives the move, the value and the unsolved columns'
    estimates.  The first time the engine is needed on a kind of board in
    this process, its kernels are compiled (or loaded) in a thread of
    their own, and on a position of at most ``SOLVABLE_CELLS`` empty cells
    the solver goes on meanwhile with the moves it left open
    (``_solve_while_preparing``): on a first start that is tens of
    seconds, in which it often settles every move.

    ``solver`` (a new one if None) lets another thread stop the work
    (``Solver.cancel``): the search under way gives up, the wait for the
    engine ends, and unless every move was settled by then the hint raises
    ``HintCancelled`` without asking the engine."""
    solver = Solver(TABLE_SIZE) if solver is None else solver
    scores = move_scores(position, budget_for(position) if timeout is None else timeout, solver)
    if not _complete(scores) and adviser.spec:
        ready = _engine_ready(adviser.spec, position)
        if not ready.is_set() and position.empty_cells <= SOLVABLE_CELLS:
            scores = _solve_while_preparing(position, scores, solver, ready)
        if not _complete(scores):
            _wait_ready(ready, solver)
    if not _complete(scores) and solver.cancelled:
        raise HintCancelled(f"the hint for {position.notation} was cancelled")
    if _complete(scores):
        best = max(score for score in scores.values() if score is not None)
        move = centre_first(position, tuple(m for m in position.legal_moves() if scores[m.token] == best))
        return _hint_answer(position, move, 0.5, columns_of(scores, {}, move.token))
    move, analysis = adviser.analyse(position, None)
    estimates = estimates_of(analysis)
    estimates.update(_gap_estimates(position, adviser, scores, estimates))
    columns = columns_of(scores, estimates, move.token)
    return _hint_answer(position, move, 0.5 if analysis.value is None else analysis.value, columns)


#: Seconds in all that the hint engine may spend on the columns its own
#: analysis left without an estimate (``_gap_estimates``).
GAP_TIME = 0.3


def _gap_estimates(position: Position, adviser: Agent, scores: dict[str, int | None],
                   estimates: dict[str, float]) -> dict[str, float]:
    """An estimate for each move that has neither an exact score nor one in
    the engine's analysis: the engine's value of the position after it,
    seen from the side to move here, within ``GAP_TIME`` seconds shared
    among them.  An engine that proves a win at once (``master`` on a win
    in one) lists only the winning moves, and every other column stayed
    "?" above the board (with the bonus, so did each ban choice the page
    shows while the ban piece is chosen)."""
    gaps = [m for m in position.legal_moves() if scores.get(m.token) is None and m.token not in estimates]
    found: dict[str, float] = {}
    for move in gaps:
        after = position.play(move)
        if after.is_over:  # the solver scores every move that ends the game: not reached
            continue
        _, analysis = adviser.analyse(after, Budget(time=GAP_TIME / len(gaps)))
        if analysis.value is not None:
            found[move.token] = 1.0 - analysis.value
    return found


def _complete(scores: dict[str, int | None]) -> bool:
    return bool(scores) and all(score is not None for score in scores.values())


#: The most empty cells of a position whose moves the solver goes on
#: solving while the hint engine compiles: 6x6 (36 cells) takes it 11 s
#: here, 8x4 (32) 19 s, and a first start's compile 15-50 s; on a larger
#: board it would only take the core the compile's second process uses.
SOLVABLE_CELLS = 36
#: Seconds between a hint's looks at its solver's cancel while it waits for
#: the engine's warm-up.
CANCEL_CHECK = 0.05

#: The hint engine's warm-up of each kind of board (``board_kind``) in this
#: process: set once it is done.  One warm-up each, however many hints ask.
_engines: dict[str, threading.Event] = {}
_engines_lock = threading.Lock()
#: The name of the hint engine's warm-up threads, before the kind of board.
ENGINE_THREAD = "c4lab-hint-engine-"


def prepares_the_engine(thread: threading.Thread) -> bool:
    """Whether ``thread`` is a warm-up of the hint engine (``_engine_ready``):
    work a hint may wait for, whose compiling the terminal's status line
    announces as the hint's own (``ui.preparing.announce_preparation``)."""
    return thread.name.startswith(ENGINE_THREAD)


def _engine_ready(spec: str, position: Position) -> threading.Event:
    """Set once the hint engine ``spec`` is ready on ``position``'s kind of
    board: the first call starts its warm-up (``agents.base.warm_up``: a
    throwaway move, which compiles its kernels or loads them from numba's
    cache) in a thread of its own, later ones find it under way or done."""
    kind = board_kind(spec, position)
    with _engines_lock:
        ready = _engines.get(kind)
        if ready is not None:
            return ready
        ready = _engines[kind] = threading.Event()

    def prepare() -> None:
        try:
            warm_up_agent(spec, position)
        finally:
            ready.set()

    threading.Thread(target=prepare, name=f"{ENGINE_THREAD}{kind}", daemon=True).start()
    return ready


def _wait_ready(ready: threading.Event, solver: Solver, over: threading.Event | None = None) -> None:
    """Wait for the engine's warm-up (``ready``) in steps of ``CANCEL_CHECK``,
    so that ``solver``'s cancel (or ``over``) ends the wait too."""
    while not ready.wait(CANCEL_CHECK) and not solver.cancelled and not (over is not None and over.is_set()):
        pass


def _solve_while_preparing(
    position: Position, scores: dict[str, int | None], solver: Solver, ready: threading.Event
) -> dict[str, int | None]:
    """``scores`` with the moves left open solved again, for twice as long
    each pass (the solver keeps what it learnt in its table), until every
    move is scored (the engine's warm-up goes on, for the next hint) or
    the engine is ready or ``solver`` is cancelled (the search under way
    is then stopped).  The passes are a solver of their own (the same
    table: this thread's), cancelled at the engine's readiness: a cancel of
    ``solver`` itself says the position was left (``HintCancelled``), and
    the engine's readiness must not say so.  The solver's search runs
    without Python's lock, so it takes the other core while the compiler
    holds this one."""
    passes = Solver(solver.table_size, book=solver.book)
    over = threading.Event()  # the passes are over: the watch below ends

    def stop_when_ready() -> None:
        _wait_ready(ready, solver, over)
        passes.cancel()

    threading.Thread(target=stop_when_ready, name="c4lab-hint-solver-stop", daemon=True).start()
    scores = dict(scores)
    seconds = PER_POSITION
    try:
        while not ready.is_set() and not _complete(scores) and not passes.cancelled and not solver.cancelled:
            seconds *= 2
            more = passes.analyse(position, timeout=seconds)
            scores.update({move.token: score for move, score in more.items() if score is not None})
    finally:
        over.set()
    KNOWN.learn(position, scores, position_score(position, scores))
    return scores


def deeper_hint(position: Position, answer: dict[str, Any], timeout: float, solver: Solver) -> dict[str, Any]:
    """The hint ``answer`` for ``position`` with its moves solved again in
    ``timeout`` seconds (by ``solver``, which another thread may
    ``cancel``): the columns it left unknown, now exact where the solver
    answered.  The engine's move, value and estimates are the first
    answer's; a move it had solved keeps its score."""
    scores = move_scores(position, timeout, solver)
    for token, score in answer["moves"].items():
        if scores.get(token) is None:
            scores[token] = score
    return _rescored(position, answer, scores)


def known_hint(position: Position, answer: dict[str, Any]) -> dict[str, Any]:
    """The hint ``answer`` for ``position``, given before, with the moves it
    left open scored where the positions they lead to were solved since
    (``known_scores``: the terminal's analysis board keeps its hints, and
    shows one again when ``u`` steps back to it); ``answer`` itself when
    nothing new is known."""
    scores = KNOWN.fill(position, answer["moves"])
    return answer if scores == answer["moves"] else _rescored(position, answer, scores)


def _rescored(position: Position, answer: dict[str, Any], scores: dict[str, int | None]) -> dict[str, Any]:
    """The hint ``answer`` for ``position`` with its moves' ``scores`` as
    given; the engine's move, value and estimates are the answer's."""
    estimates = answer.get("estimates", {})
    adviser = next(m for m in position.legal_moves() if m.token == answer["move"])
    return _hint_answer(position, adviser, answer["value"], columns_of(scores, estimates, adviser.token))


def _hint_answer(position: Position, move: Move, value: float, columns: dict[str, Any]) -> dict[str, Any]:
    """The ``hint`` answer from the engine's ``move`` and ``value`` and the
    solver's ``columns``: exact, when every column is solved."""
    exact = columns["score"]
    if exact is not None:
        value = 1.0 if exact > 0 else 0.5 if exact == 0 else 0.0
        if columns["moves"].get(move.token) != exact:
            keeping = tuple(m for m in position.legal_moves() if columns["moves"].get(m.token) == exact)
            move = centre_first(position, keeping)
    evaluation = (2 * value - 1) * (1 if position.to_move == "A" else -1)
    return {
        "position": position.notation, "move": move.token, "value": value, "evaluation": evaluation,
        "columns": columns["columns"], "best": columns["best"], "moves": columns["moves"],
        "estimates": columns["estimates"],
    }


class Reviewer:
    """Hints and reviews for a server: the blocking work above run in the
    agent pool (``executor``), each position within the think-time limit of
    ``limits``, never more reviews at once than half the pool, and each
    finished game's review computed once."""

    def __init__(self, executor: Executor, limits: AgentLimits, hint_spec: str = HINT_SPEC) -> None:
        self.executor = executor
        self.limits = limits
        self.hint_spec = hint_spec
        limits.make(hint_spec, listed=False)  # the hints keep the same limits: a bad one stops the server at start
        self._reviewing = asyncio.Semaphore(max(1, limits.threads // 2))
        #: The further passes over hints (``deeper``: seconds each) likewise: the
        #: other threads stay for agents' moves and first answers.
        self._deepening = asyncio.Semaphore(max(1, limits.threads // 2))
        self._reviews: dict[str, asyncio.Future[dict[str, Any]]] = {}

    async def hint(self, position: Position, solver: Solver | None = None) -> dict[str, Any]:
        """The hint for ``position`` (a game still going on); ``solver``
        cancelled, ``HintCancelled`` (``hint``)."""
        adviser = make_agent(self.hint_spec)  # within the limits: checked at start
        timeout = min(budget_for(position), self.limits.max_time)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, hint, position, adviser, timeout, solver)

    def deeper_budgets(self, position: Position) -> list[float]:
        """The seconds of each further pass over a hint's unknown columns
        (``DEEPER``, within the think-time limit), each longer than the last."""
        budgets: list[float] = []
        for seconds in DEEPER:
            seconds = min(seconds, self.limits.max_time)
            if seconds > max(budgets, default=budget_for(position)):
                budgets.append(seconds)
        return budgets

    async def deeper(self, position: Position, answer: dict[str, Any], timeout: float, solver: Solver) -> dict[str, Any]:
        """``answer``, the hint for ``position``, solved again in ``timeout``
        seconds (``deeper_hint``; ``solver.cancel()`` stops it), in at most
        half the pool's threads (one if it has one) with the other rooms'."""
        async with self._deepening:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self.executor, deeper_hint, position, answer, timeout, solver)

    async def review(self, position: Position, start_ply: int = 0) -> dict[str, Any]:
        """The review of the finished game ``position`` whose first
        ``start_ply`` moves were its pasted start (``docs/protocol.md``),
        within ``REVIEW_TOTAL`` seconds; ``RoomError`` (``review-failed``) if
        the solver failed."""
        key = f"{position.notation} {start_ply}"
        future = self._reviews.get(key)
        if future is None or (future.done() and (future.cancelled() or future.exception() is not None)):
            future = asyncio.ensure_future(self._review_in_pool(position, start_ply))
            self._reviews[key] = future
            while len(self._reviews) > REVIEWS_KEPT:  # forget the oldest
                self._reviews.pop(next(iter(self._reviews)))
        try:
            return await asyncio.shield(future)
        except Exception as exc:  # noqa: BLE001  (the solver failed: say so, keep the server up)
            log.warning("%s: the review failed: %s", key, exc)
            raise RoomError(REVIEW_FAILED, f"the review could not be computed: {exc}") from None

    async def _review_in_pool(self, position: Position, start_ply: int) -> dict[str, Any]:
        each = min(budget_for(position), self.limits.max_time)
        async with self._reviewing:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self.executor, functools.partial(review_game, position, start_ply, per_position=each)
            )
