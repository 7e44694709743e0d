"""The classic 7x6 opening book: exact scores computed by this solver.

The early positions of the classic board are the expensive ones to solve, so
their scores can be computed once, ahead of time, by ``c4lab book build``,
into a compact data file (``~/.c4lab/classic-book.npz``, or
``$C4LAB_BOOK``: two sorted arrays, 9 bytes a position, no pickle).  None
ships with the package: the published 12-ply database
(``c4lab.solver.database``) answers the classic opening, and a book of
your own is looked in first where there is one.  A position's key is Pons' ``cur + mask + bottom`` (unique on the
classic board), the smaller of the key of the position and of its mirror
image: the board is symmetric, so a mirrored position shares its entry.

What the book holds is a *strategy* for each side: starting from the empty
board (for the first player) and from each first move (for the second), the
position where that side is to move, its exact score, and the score of one
best reply; then every answer of the opponent to that reply, and so on down
to ``depth`` plies.  ``book_move`` finds, for a position in the book, the
moves that keep its score.

Regenerate (or deepen) it with ``c4lab book build``; the builder can resume
from the file it is writing, and saves as it goes.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from c4lab.arrayfile import load_arrays, save_arrays
from c4lab.rules.move import Move
from c4lab.rules.position import Position
from c4lab.rules.variant import Variant
from c4lab.solver import database
from c4lab.solver.api import Solver
from c4lab.solver.bitboard import Bitboards

#: Where ``c4lab book build`` writes and the agents look (``$C4LAB_BOOK`` first).
USER_BOOK = Path.home() / ".c4lab" / "classic-book.npz"
FORMAT = "c4lab-book-1"
#: The builder saves what it has every this many seconds (and at the end).
SAVE_EVERY = 30.0
#: The deepest a book can go: the last ply of a classic game with a move to
#: play (its 42nd move fills the board).  ``c4lab book build --depth`` is 0 to this.
DEEPEST = 41
#: The largest score of a classic position either way (RULES.md: at most
#: ``floor((E + 1) / 2)`` for E empty cells, 42 at most).
HIGHEST = (42 + 1) // 2


def book_path() -> Path:
    """The book the agents use: ``$C4LAB_BOOK``, else ``~/.c4lab/classic-book.npz``."""
    return Path(os.environ["C4LAB_BOOK"]) if os.environ.get("C4LAB_BOOK") else USER_BOOK


class BookError(ValueError):
    """A book file that cannot be used: says which file and why."""


def _mirror(x: int, width: int, stride: int) -> int:
    column = (1 << stride) - 1
    out = 0
    for c in range(width):
        out |= ((x >> (c * stride)) & column) << ((width - 1 - c) * stride)
    return out


def book_key(position: Position) -> int:
    """The key of a classic position (shared with its mirror image)."""
    b = Bitboards.of(position)
    key = b.cur + b.mask + b.bottom
    mirrored = _mirror(b.cur, b.width, b.stride) + _mirror(b.mask, b.width, b.stride) + b.bottom
    return min(key, mirrored)


@dataclass(frozen=True)
class OpeningBook:
    """Exact scores of classic positions, looked up by ``book_key``."""

    keys: np.ndarray  # uint64, sorted
    scores: np.ndarray  # int8
    depth: int
    info: dict

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def score(self, position: Position) -> int | None:
        """The exact score of ``position`` if the book has it."""
        if position.variant != Variant.classic() or position.is_over or position.ply > self.depth:
            return None
        key = np.uint64(book_key(position))
        i = int(np.searchsorted(self.keys, key))
        if i < len(self.keys) and self.keys[i] == key:
            return int(self.scores[i])
        return None

    @classmethod
    def from_entries(cls, entries: dict[int, int], depth: int, info: dict) -> OpeningBook:
        keys = np.array(sorted(entries), dtype=np.uint64)
        scores = np.array([entries[int(k)] for k in keys], dtype=np.int8)
        return cls(keys, scores, depth, info)

    def entries(self) -> dict[int, int]:
        return {int(k): int(s) for k, s in zip(self.keys, self.scores)}

    def save(self, path: Path) -> None:
        """Write the book (atomically: a temporary file, then a rename)."""
        save_arrays(path, {"format": FORMAT, "depth": self.depth, **self.info}, keys=self.keys, scores=self.scores)

    @classmethod
    def load(cls, path: Path) -> OpeningBook:
        """Read a book file; ``BookError`` if it is missing or damaged."""
        header, arrays = load_arrays(path, ("keys", "scores"), fmt=FORMAT, what="opening book", error=BookError)
        keys, scores = arrays["keys"], arrays["scores"]
        if keys.dtype != np.uint64 or scores.dtype != np.int8 or keys.shape != scores.shape:
            raise BookError(f"opening book {path} is damaged: bad arrays")
        if keys.size and not bool(np.all(keys[1:] > keys[:-1])):
            raise BookError(f"opening book {path} is damaged: keys not sorted")
        if scores.size and int(np.abs(scores.astype(np.int16)).max()) > HIGHEST:
            wrong = int(scores[np.argmax(np.abs(scores.astype(np.int16)))])
            raise BookError(f"opening book {path} is damaged: a score of {wrong}, where no classic position "
                            f"scores beyond {HIGHEST} either way")
        if "depth" not in header:
            raise BookError(f"opening book {path} is damaged: no depth in its header")
        depth = header.pop("depth")
        if isinstance(depth, bool) or not isinstance(depth, int) or not 0 <= depth <= DEEPEST:
            # int() took 1e300 (a resumed build wrote back 301 digits, a book no c4lab reads), 2.5 and true
            raise BookError(f"opening book {path} is damaged: its depth is {depth!r}, not a ply from 0 to {DEEPEST}")
        header.pop("format")
        return cls(keys, scores, depth, header)


@lru_cache(maxsize=4)
def _load_cached(path: Path, mtime: float) -> OpeningBook:
    return OpeningBook.load(path)


def default_book() -> OpeningBook | None:
    """The agents' book (see ``book_path``), ``None`` if there is none yet.
    A damaged file raises ``BookError`` (it is never silently ignored)."""
    path = book_path()
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return None
    return _load_cached(path, mtime)


def describe_books(path: Path | None = None) -> list[str]:
    """``c4lab book info``: which books are in use and where they come from.

    Without ``path``: the classic 12-ply database and the book file the
    agents use (if there is one).  With ``path``: that book file, which must
    exist.  A missing or damaged file raises :class:`BookError`.
    """
    lines = []
    where = path or book_path()
    if path is None:
        lines.append(f"classic database: {database.status()}")
        if not where.exists():
            return [*lines, (
                f"book file: none at {where} (`c4lab book build --depth N` makes one; "
                "books are for the classic 7x6 board only)"
            )]
    if not where.exists():
        raise BookError(f"no opening book at {where} (build one with `c4lab book build`)")
    made = OpeningBook.load(where)
    return [*lines, f"{where}: {len(made)} positions, depth {made.depth}, {json.dumps(made.info)}"]


def book_move(position: Position, book: OpeningBook | None = None) -> tuple[int, dict[Move, int]] | None:
    """``(score, {move: score})`` for a position in the book: its exact score
    and the moves the book proves keep it (a move's score is what it is
    worth to the side to move).  ``None`` when the book cannot tell."""
    book = book or default_book()
    if book is None:
        return None
    score = book.score(position)
    if score is None:
        return None
    win = (position.empty_cells + 1) // 2
    best: dict[Move, int] = {}
    for move in position.legal_moves():
        child = position.play(move)
        if child.is_over:
            worth: int | None = 0 if child.result == "draw" else win
        else:
            child_score = book.score(child)
            worth = None if child_score is None else -child_score
        if worth == score:
            best[move] = worth
    return (score, best) if best else None


# -- building -------------------------------------------------------------------


def _replies(position: Position) -> Iterator[Position]:
    for move in position.legal_moves():
        child = position.play(move)
        if not child.is_over:
            yield child


def check_start(root: Position, depth: int) -> None:
    """``BookError`` for a start of a book's strategies that is not on the
    classic board, is a finished game, or lies beyond ``depth``."""
    if root.variant != Variant.classic():
        raise BookError(f"the opening book is for the classic 7x6 board, not {root.variant.notation}")
    if root.is_over:
        raise BookError(f"the game is over in {root.notation}")
    if root.ply > depth:
        raise BookError(f"depth {depth} ends before the start {root.notation}, at ply {root.ply}: "
                        f"the book would be empty (give a depth of at least {root.ply})")


def build(
    depth: int,
    path: Path,
    *,
    start: Position | None = None,
    timeout: float | None = None,
    budget: float | None = None,
    log: Callable[[str], None] = print,
) -> OpeningBook:
    """Build (or resume) the strategy book down to ``depth`` plies, saving to
    ``path`` as it goes (every ``SAVE_EVERY`` seconds).  The strategies start at ``start``
    (default: the empty board) for the side to move and at each of its
    children for the other side.  ``timeout``: give up on a position after
    that many seconds (it and what lies below it stay out of the book);
    ``budget``: stop after that many seconds in all.  A book resumed keeps
    its own depth if that is the deeper.  The file's ``complete`` says
    whether every position down to ``depth`` was reached (not when the
    budget or a stop ended the run: the depth alone did not tell a book cut
    short from a finished one).  A run from another start adds its
    strategies to the book's: the file's ``starts`` gives each start the
    depth its strategies are complete to, and the book is ``complete`` when
    each reaches the book's depth.  ``BookError``
    for a start that is not classic, is over, or lies beyond ``depth``."""
    began = saved = time.monotonic()
    entries: dict[int, int] = {}
    root = start if start is not None else Position(Variant.classic())
    check_start(root, depth)
    info: dict = {"variant": "7x6", "unsolved": 0, "complete": False, "budget_spent": False}
    starts: dict[str, int | None] = {}
    if path.exists():
        old = OpeningBook.load(path)
        entries = old.entries()
        log(f"resuming from {path}: {len(old)} positions, depth {old.depth}")
        # The book's depth is how deep its lookups go: a shallower run must not hide what is there.
        depth_saved = max(depth, old.depth)
        starts = _starts(old.info, old.depth)
    else:
        depth_saved = depth
    starts.setdefault(root.notation, None)
    info["starts"] = starts
    solver = Solver()
    # The side to move's positions, and the other side's (one ply later).
    queue = [root, *list(_replies(root))]
    seen: set[int] = set()
    unsolved = 0
    try:
        while queue:
            queue.sort(key=lambda p: p.ply)
            position = queue.pop(0)
            key = book_key(position)
            if position.ply > depth or key in seen:
                continue
            seen.add(key)
            if key in entries:
                score: int | None = entries[key]
                solution = None
            else:
                if budget is not None and time.monotonic() - began > budget:
                    log("time budget spent: stopping")
                    info["budget_spent"] = True
                    break
                solution = solver.solve(position, timeout=timeout, best_moves=True)
                score = solution.score
                if score is None:
                    unsolved += 1
                    log(f"ply {position.ply} {position.notation}: not solved in {timeout} s, left out")
                    continue
                entries[key] = score
            assert score is not None
            # One best reply (the book's choice) and every answer to it.
            best = solution.best_moves if solution is not None else _known_best(position, score, entries)
            if not best:
                best = solver.solve(position, best_moves=True).best_moves
            width = position.variant.width
            move = min(best, key=lambda m: (abs(2 * m.column - (width - 1)), m.column))
            child = position.play(move)
            if child.is_over or child.ply > depth:
                continue
            entries[book_key(child)] = -score
            queue.extend(reply for reply in _replies(child) if reply.ply <= depth)
            if solution is not None:
                if time.monotonic() - saved > SAVE_EVERY:
                    info["unsolved"] = unsolved
                    OpeningBook.from_entries(entries, depth_saved, info).save(path)
                    saved = time.monotonic()
                log(f"ply {position.ply} {position.notation}: score {score} "
                    f"({solution.time_s:.1f} s, {solution.nodes} nodes); {len(entries)} positions")
        else:  # every position reached: not stopped by the budget
            starts[root.notation] = max(depth, starts[root.notation] or 0)
    finally:  # also on Ctrl-C: keep what was solved
        info["complete"] = all(reached is not None and reached >= depth_saved for reached in starts.values())
        info["unsolved"] = unsolved
        OpeningBook.from_entries(entries, depth_saved, info).save(path)
    return OpeningBook.from_entries(entries, depth_saved, info)


def _starts(info: dict, depth: int) -> dict[str, int | None]:
    """The starts whose strategies a book holds, each with the depth down to
    which they are complete (``None``: a run cut short before any).  A book
    of before ``starts`` had one ``start`` (the empty board where none is
    said), complete to the book's ``depth`` if the book was."""
    starts = info.get("starts")
    if isinstance(starts, dict) and all(isinstance(key, str) and (reached is None or isinstance(reached, int))
                                        for key, reached in starts.items()):
        return dict(starts)
    start = info.get("start")
    return {start if isinstance(start, str) else Variant.classic().notation:
            depth if info.get("complete") is True else None}


def _known_best(position: Position, score: int | None, entries: dict[int, int]) -> tuple[Move, ...]:
    """The moves of ``position`` whose child's stored score keeps ``score``."""
    out = []
    for move in position.legal_moves():
        child = position.play(move)
        if not child.is_over and entries.get(book_key(child)) == (None if score is None else -score):
            out.append(move)
    return tuple(out)
