"""The n-tuple network that the ``ntuple`` agent plays from: its features,
its value, its file.

A network is learnt by ``c4lab.learning.ntuple`` (the trainer, which writes
it) and read here by the agent, as the Q-table lives with what reads it.
The figures behind each choice are the trainer's (see that module).

Features
--------
An *n-tuple* is a list of ``n`` cells of the board (a random walk: each cell
next to the one before, diagonals included; forbidden cells are never in a
tuple, they never change).  Each cell of a tuple is in one of ``P`` *cell
states*:

=====  ==============================================================
0      empty, and no piece can land there now (the cell below is empty)
1      a piece of A
2      a piece of B
3      empty, and the next piece in its column lands there
4      a ban piece (only on boards with a bonus cell: ``P = 5``, else 4)
=====  ==============================================================

Telling an empty cell that can be played now from one that cannot is
Thill's fourth state: it carries gravity (which threats are live) into a
table lookup.  The tuple's states, read as a number in base ``P``, index a
table of weights (``P ** n`` entries per tuple).

Value
-----
The network values *afterstates*: the position just after a move, for the
player who made it.  Each player has its own tables (``weights[p]``, ``p``
= 0 for A, 1 for B: a position reached by A's move is valued with A's
tables), so no colour is flipped and the parity of the board (who owns the
odd rows) is learnt for each side.  ``V(s) = tanh(sum of the active
weights)``: +1 a sure win for the mover, -1 a sure loss, 0 a draw.  A move
that ends the game is not looked up: it is worth +1 (a win) or 0 (a draw).
On a board that is its own mirror image each tuple is read twice, as it is
and mirrored (the same table), so a position and its mirror image have the
same value and learn together.  A bonus move (a piece on the bonus cell,
then the ban) is one afterstate: the position after both pieces.

Incremental features
--------------------
The kernels below keep, for the position being played, each cell's state
and each tuple's index.  A move changes at most four cells (the piece, the
cell above it becoming playable, and with a ban the ban piece and the cell
above that), and every cell knows the tuples through it with the power of
``P`` it contributes (``cell_ptr``/``cell_inst``/``cell_pow``, a CSR list):
playing or taking back a move updates only those indices.  Rules come from
the kernels only: ``legal_codes`` for the moves, ``apply`` for playing them,
``landing_row`` for the cells that become playable.

The file
--------
An ``.npz`` archive read with ``allow_pickle=False``: ``header`` (JSON:
format, variant, tuple length, cell states, mirror, games played, options),
``tuples`` (int16, ``T x n`` cells, ``col * 16 + row``) and ``weights``
(float32, ``2 x T x P ** n``).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.arrayfile import load_arrays, save_arrays
from c4lab.rules import Position, Variant
from c4lab.rules import kernels as K

FORMAT = "c4lab-ntuple-1"

# Cell states.
LATER = 0
STONE_A = 1
STONE_B = 2
NOW = 3
BANNED = 4

#: The largest table a tuple may have (entries): 5 ** 8 states of 8 cells.
MAX_TABLE = 5**8


class NetworkError(ValueError):
    """A network file that is missing, damaged, not a network, or for another board."""


# ---------------------------------------------------------------------------
# The tuples
# ---------------------------------------------------------------------------


def random_walk_tuples(variant: Variant, count: int, length: int, seed: int) -> np.ndarray:
    """``count`` tuples of ``length`` distinct cells, each a random walk over
    the board's cells that are not forbidden (a step goes to any of the up
    to eight neighbours; a walk stuck among visited cells starts over).
    Reproducible from ``seed``.  Returns ``(count, length)`` cell indices."""
    cells = {(c.col, c.row) for c in variant.cells()} - {(c.col, c.row) for c in variant.forbidden}
    if length > len(cells):
        raise ValueError(f"a tuple of {length} cells does not fit the {len(cells)} playable cells of {variant}")
    rng = random.Random(seed)
    ordered = sorted(cells)
    out = np.zeros((count, length), dtype=np.int16)
    for t in range(count):
        while True:
            here = rng.choice(ordered)
            walk = [here]
            for _ in range(length * 20):
                if len(walk) == length:
                    break
                c, r = walk[-1] if rng.random() < 0.5 else rng.choice(walk)
                step = (c + rng.choice((-1, 0, 1)), r + rng.choice((-1, 0, 1)))
                if step in cells and step not in walk:
                    walk.append(step)
            if len(walk) == length:
                break
        out[t] = [c * 16 + r for c, r in walk]
    return out


@dataclass(frozen=True)
class Layout:
    """The arrays the kernels read a network's features through: one
    *instance* per tuple (and per mirror image on a symmetric board)."""

    inst_cells: np.ndarray  # (I, n) int64: the cells of each instance
    inst_tuple: np.ndarray  # (I,) int64: the table of each instance
    cell_ptr: np.ndarray  # (NCELLS + 1,) int64: CSR rows, one per cell
    cell_inst: np.ndarray  # the instances through each cell
    cell_pow: np.ndarray  # the power of P that cell has in that instance

    @classmethod
    def of(cls, variant: Variant, tuples: np.ndarray, states: int, mirror: bool) -> Layout:
        w = variant.width
        images = [tuples.astype(np.int64)]
        if mirror:
            cols, rows = tuples // 16, tuples % 16
            images.append(((w - 1 - cols) * 16 + rows).astype(np.int64))
        count, length = tuples.shape
        inst_cells = np.stack(images, axis=1).reshape(count * len(images), length)
        inst_tuple = np.repeat(np.arange(count, dtype=np.int64), len(images))
        through: list[list[tuple[int, int]]] = [[] for _ in range(K.NCELLS)]
        for i, row in enumerate(inst_cells):
            for k, cell in enumerate(row):
                through[int(cell)].append((i, states**k))
        ptr = np.zeros(K.NCELLS + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(t) for t in through])
        inst = np.array([i for t in through for i, _ in t], dtype=np.int64)
        pw = np.array([p for t in through for _, p in t], dtype=np.int64)
        return cls(inst_cells, inst_tuple, ptr, inst, pw)


# ---------------------------------------------------------------------------
# Kernels: features, values, updates (inlined into the agent's and the
# trainer's loops)
# ---------------------------------------------------------------------------


@njit(inline="always")
def copy_into(dst, src):
    """``dst[:] = src`` for two arrays of one length, as a loop: numba's
    slice assignment compiles its shape-mismatch error (a message built
    with ``str`` of the shapes) into the first kernel that uses it, 1.3 s
    of a first PUCT search and 1.5 s of a first training run."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


@njit(inline="always")
def largest(values, n):
    """The largest of ``values[:n]`` (``n`` at least 1), as a loop: numba's
    ``max`` of an array compiles its empty-array error and a ``take`` (0.7 s
    of a first PUCT search)."""
    top = values[0]
    for k in range(1, n):
        top = max(top, values[k])
    return top


@njit(inline="always")
def set_cell(cell, new, codes, idx, ptr, inst, pw):
    """Give ``cell`` the state ``new``: update its code and the index of every
    instance through it.  Returns the old state."""
    old = codes[cell]
    if old != new:
        d = np.int64(new) - np.int64(old)
        for j in range(ptr[cell], ptr[cell + 1]):
            idx[inst[j]] += d * pw[j]
        codes[cell] = new
    return old


@njit(cache=True)
def encode(geo, st, codes, idx, inst_cells, states):
    """Fill ``codes`` (a cell state per cell) and ``idx`` (each instance's
    table index) from the kernel state ``st``."""
    width = np.int64(K.board_width(geo))
    height = np.int64(K.board_height(geo))
    codes[:] = LATER
    for c in range(width):
        landing = np.int64(K.landing_row(st, c))
        for r in range(height):
            cell = c * 16 + r
            code = K.cell_code(st, cell)
            if code == K.PIECE_A:
                codes[cell] = STONE_A
            elif code == K.PIECE_B:
                codes[cell] = STONE_B
            elif code == K.BAN:
                codes[cell] = BANNED
            elif code == K.EMPTY and r == landing:
                codes[cell] = NOW
    for i in range(inst_cells.shape[0]):
        x = np.int64(0)
        for k in range(inst_cells.shape[1] - 1, -1, -1):
            x = x * states + codes[inst_cells[i, k]]
        idx[i] = x


@njit(inline="always")
def _log_set(log, n, cell, new, codes, idx, ptr, inst, pw):
    """``set_cell``, with the cell and its old state written to ``log[n]``;
    returns ``n + 1``."""
    log[n, 0] = cell
    log[n, 1] = set_cell(cell, new, codes, idx, ptr, inst, pw)
    return n + 1


@njit(inline="always")
def scratch(geo, root, inst_cells, states):
    """A copy of ``root`` to play on, another to restore from, and its
    features: ``(st, saved, codes, idx, log)``."""
    st = root.copy()
    saved = root.copy()
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(inst_cells.shape[0], dtype=np.int64)
    log = np.zeros((4, 2), dtype=np.int64)
    encode(geo, st, codes, idx, inst_cells, states)
    return st, saved, codes, idx, log


@njit(inline="always")
def play_move(geo, st, code, codes, idx, ptr, inst, pw, log):
    """Play move ``code`` (legal) on ``st`` and on the features; the cells
    changed and their old states go to ``log`` (``(4, 2)``) for ``undo``.
    Returns ``(result, cells changed)``."""
    side = np.int64(K.to_move(st))
    cell, ban_cell, result = K.apply(geo, st, code)
    cell = np.int64(cell)
    ban_cell = np.int64(ban_cell)
    height = np.int64(K.board_height(geo))
    n = _log_set(log, 0, cell, STONE_A + side, codes, idx, ptr, inst, pw)
    if ban_cell != K.NO_CELL:
        n = _log_set(log, n, ban_cell, BANNED, codes, idx, ptr, inst, pw)
    # The cells that became playable: above the piece, and above the ban in another column.
    for column in (cell // 16, ban_cell // 16 if ban_cell != K.NO_CELL else cell // 16):
        r = np.int64(K.landing_row(st, column))
        if r < height and codes[column * 16 + r] != NOW:
            n = _log_set(log, n, column * 16 + r, NOW, codes, idx, ptr, inst, pw)
    return np.int64(result), n


@njit(inline="always")
def undo(n, codes, idx, ptr, inst, pw, log):
    """Take back the feature changes of ``play_move`` (its log, ``n`` cells)."""
    for k in range(n - 1, -1, -1):
        set_cell(log[k, 0], log[k, 1], codes, idx, ptr, inst, pw)


@njit(inline="always")
def weight_sum(weights, side, idx, inst_tuple):
    """The sum of ``side``'s active weights for the instance indices ``idx``."""
    s = 0.0
    for i in range(idx.shape[0]):
        s += weights[side, inst_tuple[i], idx[i]]
    return s


@njit(inline="always")
def outcome_value(result, side):
    """The exact value of a finished game for ``side``: +1, 0 or -1."""
    if result == K.DRAW:
        return 0.0
    return 1.0 if result == K.WIN_A + side else -1.0


@njit(inline="always")
def afterstate_values(geo, st, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                      weights, inst_tuple):
    """The value of each of the ``n`` moves ``moves`` for the side to move:
    the exact result of a move that ends the game, else its afterstate's
    learnt value.  ``saved`` holds a copy of ``st`` (``K.restore``)."""
    side = np.int64(K.to_move(st))
    for k in range(n):
        result, changed = play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
        results[k] = result
        if result != K.ONGOING:
            values[k] = outcome_value(result, side)
        else:
            values[k] = math.tanh(weight_sum(weights, side, idx, inst_tuple))
        undo(changed, codes, idx, ptr, inst, pw, log)
        K.restore(geo, st, saved)


@njit(cache=True)
def move_values(geo, st, weights, inst_cells, inst_tuple, ptr, inst, pw, states, moves, values, results):
    """Every legal move of ``st`` (into ``moves``) with its value for the side
    to move (into ``values``) and the game's result after it (``results``).
    Returns how many."""
    n = K.legal_codes(geo, st, moves)
    work, saved, codes, idx, log = scratch(geo, st, inst_cells, states)
    afterstate_values(geo, work, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                      weights, inst_tuple)
    return n


# ---------------------------------------------------------------------------
# The network and its file
# ---------------------------------------------------------------------------


#: The number of tuples of a new network: Thill's 70, 120 on boards with a
#: bonus cell, where five cell states spread what is learnt over more table
#: entries and 70 fell short (15 minutes: 8x6/Xc3/Bf4 90.6 % against 88 %,
#: 7x7/Xd4 with a bonus cell 94.0 % against 92.0 %), and 150 on the classic
#: board, where 70 are full long before the README's 30 minutes are up
#: (30 minutes on two workers: 150 tuples, 16.1 M games, keep 94.3 % of
#: 1,200 probes greedy and 97.2 % with PUCT at 0.2 s; 70 tuples, 27.5 M
#: games, 90.4 and 93.9 %; 200 tuples, 12.1 M games, 92.8 and 96.4 %;
#: ``c4lab.learning.ntuple``).
TUPLES = 70
TUPLES_BONUS = 120
TUPLES_CLASSIC = 150


def cell_states(variant: Variant) -> int:
    """A cell's states on ``variant``: five where ban pieces can appear (a
    bonus cell), else four."""
    return 5 if variant.bonus is not None else 4


def default_tuples(variant: Variant) -> int:
    """The number of tuples a new network for ``variant`` gets by default
    (``TUPLES``, ``TUPLES_BONUS``, ``TUPLES_CLASSIC``)."""
    if cell_states(variant) == 5:
        return TUPLES_BONUS
    return TUPLES_CLASSIC if variant == Variant.classic() else TUPLES


@dataclass
class Network:
    """A board's tuples and the two players' weight tables.

    Mutable on purpose: the trainer updates ``weights`` in place (and
    ``games``); the agent only reads it.
    """

    variant: Variant
    tuples: np.ndarray  # (T, n) int16 cells
    weights: np.ndarray  # (2, T, P ** n) float32
    states: int
    mirror: bool
    games: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    layout: Layout = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.layout = Layout.of(self.variant, self.tuples, self.states, self.mirror)

    @classmethod
    def create(cls, variant: Variant, tuples: int | None = None, length: int = 8, seed: int = 0) -> Network:
        """A new network for ``variant`` (all weights zero): ``tuples`` random
        walks (``default_tuples``: 70, 120 with a bonus cell, 150 on the
        classic board) of
        ``length`` cells; ``cell_states`` (five where ban pieces can appear,
        four elsewhere); mirrored reading on a symmetric board."""
        if tuples is None:
            tuples = default_tuples(variant)
        if tuples < 1 or length < 1:
            raise ValueError(f"a network needs at least one tuple of one cell, not {tuples} of {length}")
        states = cell_states(variant)
        if states**length > MAX_TABLE:
            raise ValueError(f"tuples of {length} cells with {states} states are too large (at most {MAX_TABLE} "
                             "entries a table)")
        cells = random_walk_tuples(variant, tuples, length, seed)
        weights = np.zeros((2, tuples, states**length), dtype=np.float32)
        return cls(variant, cells, weights, states, variant.is_mirror_symmetric)

    def grown(self, count: int, seed: int) -> Network:
        """This network with ``count`` more tuples (random walks of the same
        length drawn from ``seed``) whose weights are zero: it values every
        position as before, and further training spreads what it learns over
        more tables (more capacity, what was learnt kept)."""
        if count < 1:
            raise ValueError(f"a network grows by at least one tuple, not {count}")
        added = random_walk_tuples(self.variant, count, self.length, seed)
        zeros = np.zeros((self.weights.shape[0], count, self.weights.shape[2]), dtype=self.weights.dtype)
        return Network(self.variant, np.concatenate([self.tuples, added]), np.concatenate([self.weights, zeros], axis=1),
                       self.states, self.mirror, self.games, dict(self.options))

    @property
    def length(self) -> int:
        return int(self.tuples.shape[1])

    def arrays(self) -> list[Any]:
        """The arguments the kernels take after ``geo, st``: ``weights,
        inst_cells, inst_tuple, cell_ptr, cell_inst, cell_pow, states``."""
        lay = self.layout
        return [self.weights, lay.inst_cells, lay.inst_tuple, lay.cell_ptr, lay.cell_inst, lay.cell_pow,
                self.states]

    def move_values(self, position: Position) -> tuple[list[int], list[float], list[int]]:
        """Every legal move code of ``position``, its value for the side to
        move (+1 a win ... -1 a loss) and the result after it."""
        self.check_board(position)
        geo, st = position.kernel_arrays()
        moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        values = np.empty(K.MAX_LEGAL, dtype=np.float64)
        results = np.empty(K.MAX_LEGAL, dtype=np.int64)
        n = move_values(geo, st, *self.arrays(), moves, values, results)  # type: ignore[call-arg]  # numba's Dispatcher type
        return [int(m) for m in moves[:n]], [float(v) for v in values[:n]], [int(r) for r in results[:n]]

    def check_board(self, position: Position) -> None:
        """``NetworkError`` unless ``position`` is on the network's board."""
        if position.variant != self.variant:
            raise NetworkError(f"this network was trained for the board {self.variant}, not {position.variant}")

    # -- the file -------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "variant": self.variant.notation,
            "tuples": int(self.tuples.shape[0]),
            "length": self.length,
            "states": self.states,
            "mirror": self.mirror,
            "games": self.games,
            "options": self.options,
        }

    def save(self, path: Path | str) -> None:
        """Write the network to ``path`` (atomically: a temporary file, then a rename)."""
        save_arrays(Path(path), self.header(), tuples=self.tuples, weights=self.weights)

    @classmethod
    def load(cls, path: Path | str) -> Network:
        """The network in ``path``; ``NetworkError`` saying what is wrong and
        with which file (missing, damaged, not a network, inconsistent)."""
        path = Path(path)
        if not path.exists():
            raise NetworkError(f"network file {path} does not exist")
        header, arrays = load_arrays(path, ("tuples", "weights"), fmt=FORMAT, what="n-tuple network",
                                     error=NetworkError)
        try:
            variant = Position.parse(str(header["variant"])).variant
            states = int(header["states"])
            mirror = bool(header["mirror"])
            games = int(header["games"])
            options = dict(header.get("options") or {})
        except (KeyError, TypeError, ValueError) as exc:
            raise NetworkError(f"{path}: its header is damaged ({exc})") from None
        tuples, weights = arrays["tuples"], arrays["weights"]
        count, length = tuples.shape if tuples.ndim == 2 else (0, 0)
        playable = {c.col * 16 + c.row for c in variant.cells()} - {c.col * 16 + c.row for c in variant.forbidden}
        if (
            count < 1
            or states not in (4, 5)
            or not np.issubdtype(tuples.dtype, np.integer)
            or not set(np.unique(tuples).tolist()) <= playable
            or weights.dtype != np.float32
            or weights.shape != (2, count, states**length)
            or not np.isfinite(weights).all()
            or (mirror and not variant.is_mirror_symmetric)
        ):
            raise NetworkError(f"{path}: its tuples or weights do not match its header (a damaged file?)")
        return cls(variant, tuples.astype(np.int16), weights, states, mirror, games, options)


__all__ = ["FORMAT", "Layout", "Network", "NetworkError", "encode", "move_values", "random_walk_tuples", "scratch"]
