"""The n-tuple network that the ``ntuple`` agent plays from: its features,
its value, its file.

A network is learnt by ``c4lab.learning.ntuple`` (the trainer, which writes
it) and read here by the agent, as the Q-table lives with what reads it.
The figures behind each choice are the trainer's (see that module).

Features
--------
An *n-tuple* is a list of ``n`` cells of the board (a random walk: each cell
next to one before it, diagonals included, started where the tuples so far
are scarcest for the lines of four through the cell; forbidden cells are
never in a tuple, they never change).  Each cell of a tuple is in one of ``P`` *cell
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
table lookup.  The tuple's states index a table of weights.  Read as a
number in base ``P`` they would need ``P ** n`` entries a tuple, most of
them states no game reaches (a piece above an empty cell); instead the
states a game can reach are ranked densely, a column at a time
(``segment_values``), and a side's tables lie one after the other: on the
classic board 12.6 times fewer entries (7.9 MB for the shipped network's
190 tuples instead of 100 MB), what training reads and writes now mostly
in the processor's cache, and training 1.6 times as fast (one core,
``c4lab bench``: 1,735-1,807 games a second before, 2,822-2,993 after,
the two alternated on a slow day of this machine).

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

Threat tables
-------------
An option (``Network.create(threats=True)``, ``c4lab train ntuple
--threats``): beside the tuples, one weight a column, from a table indexed
by the column's landing row and its *threats*, the empty cells of the six
above it where a piece of A, or of B, would complete four in a line
(``K.threat_windows``; 4,096 patterns a landing row).  A column and its
mirror image share a table on a symmetric board.  Their weights are added
to the tuples' sum before ``tanh`` and learn with the same TD step.  Why:
the values of many drawn and narrowly won positions turn on which rows
(odd or even) the threats are on, far down the game, and an 8-cell tuple
sees a line of four only in part.  Measured on the classic board (one
worker, 150 tuples, five sets of 400 probes, PUCT at a fixed number of
iterations): at 3 M games +1.6 and +0.9 points with PUCT on two seeds, at
10 M games +1.1 (97.9 against 96.8 %), greedy play the same; but two
30-minute runs on two workers kept 97.56 and 97.66 % with PUCT, against
98.0 and 97.9-98.2 % for the same seeds without them (``docs/ntuple.md``):
faster learning, not a higher end, for a fifth fewer games a second.
With 200 tuples, which learn more slowly than 150 and hold more, five
30-minute runs kept 98.02 to 98.56 % (98.37 % on average): the default
on the classic board since (``default_threats``).  The
index slots of a position come after its tuple instances' (``Layout.slots``,
``threat_slots``), so a TD update reads and moves them with the rest.

Incremental features
--------------------
The kernels below keep, for the position being played, each cell's state
and each tuple's index.  A move changes at most four cells (the piece, the
cell above it becoming playable, and with a ban the ban piece and the cell
above that), and every cell knows the tuples through it with what it adds
to their index in each of its states (``cell_ptr``/``cell_inst``/
``cell_add``, a CSR list): playing or taking back a move updates only
those indices.  Rules come from
the kernels only: ``legal_codes`` for the moves, ``apply`` for playing them,
``landing_row`` for the cells that become playable.

The file
--------
An ``.npz`` archive read with ``allow_pickle=False``: ``header`` (JSON:
format, variant, tuple length, cell states, mirror, games played, options),
``tuples`` (int16, ``T x n`` cells, ``col * 16 + row``) and ``weights``
(float32, ``2 x E``: each side's tables one after the other, ``E`` their
entries; ``Layout.bases`` says where each starts).  A file of the first
format (tables of ``P ** n`` entries) is read and re-indexed
(``reindex_v1``).
"""

from __future__ import annotations

import copy as _copy
import math
import random
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.arrayfile import load_arrays, save_arrays
from c4lab.rules import Position, Variant
from c4lab.rules import kernels as K

FORMAT = "c4lab-ntuple-2"
#: The first format: tables of ``P ** n`` entries, indexed in base ``P``.
FORMAT_V1 = "c4lab-ntuple-1"

# Cell states.
LATER = 0
STONE_A = 1
STONE_B = 2
NOW = 3
BANNED = 4

#: The largest table a tuple may have (entries): 5 ** 8 states of 8 cells.
MAX_TABLE = 5**8

#: Threat tables: the cells of a column they see, from its landing row up.
THREAT_REACH = 6
#: A threat table's entries for one landing row: A's and B's threats there.
THREAT_PATTERNS = 1 << (2 * THREAT_REACH)


class NetworkError(ValueError):
    """A network file that is missing, damaged, not a network, or for another board."""


# ---------------------------------------------------------------------------
# The tuples
# ---------------------------------------------------------------------------


def lines_through(variant: Variant) -> dict[tuple[int, int], int]:
    """How many lines of four cells, none of them forbidden, pass through
    each cell that is not forbidden (``(col, row)``): 3 in a corner of the
    classic board, 13 in the middle of its centre column."""
    forbidden = variant.forbidden_pairs
    count = {(c.col, c.row): 0 for c in variant.cells() if (c.col, c.row) not in forbidden}
    for line in variant.lines_of_four():
        for cell in line:
            count[cell] += 1
    return count


def random_walk_tuples(
    variant: Variant, count: int, length: int, seed: int, *, beside: np.ndarray | None = None
) -> np.ndarray:
    """``count`` tuples of ``length`` distinct cells, each a random walk over
    the board's cells that are not forbidden (a step goes to any of the up
    to eight neighbours; a walk stuck among visited cells starts over).

    Each walk starts at the cell furthest below its share of the cells the
    tuples hold so far, the share in proportion to the lines of four
    through the cell (``lines_through``; on a board that is its own mirror
    image a cell and its mirror image count together, as the network reads
    both), ties drawn at random.  Walks from random cells left holes that
    the seed decided: one seed's 150 tuples passed 8 times through the
    classic board's first centre cell, another's 27 times, and the first
    network learnt less in the same 30 minutes (the figures are in
    ``c4lab.learning.ntuple``).  ``beside``: tuples a network has already
    (``Network.grown``), whose cells count as held.  Reproducible from
    ``seed``.  Returns ``(count, length)`` cell indices."""
    lines = lines_through(variant)
    if length > len(lines):
        raise ValueError(f"a tuple of {length} cells does not fit the {len(lines)} playable cells of {variant}")
    rng = random.Random(seed)
    ordered = sorted(lines)
    mirror = variant.is_mirror_symmetric
    # Each cell's group: itself, and its mirror image where the network reads it too.
    group = {cell: sorted({cell, (variant.width - 1 - cell[0], cell[1])} if mirror else {cell}) for cell in ordered}
    total = max(sum(lines.values()), 1)
    share = {cell: sum(lines[g] for g in group[cell]) / total for cell in ordered}
    held = dict.fromkeys(ordered, 0)
    before = [] if beside is None else beside.ravel().tolist()
    for cell in before:
        held[(cell // 16, cell % 16)] += 1
    out = np.zeros((count, length), dtype=np.int16)
    for t in range(count):
        placed = len(before) + t * length + length
        deficit = {cell: share[cell] * placed - sum(held[g] for g in group[cell]) for cell in ordered}
        most = max(deficit.values())
        starts = [cell for cell in ordered if deficit[cell] >= most - 1e-9]
        while True:
            here = rng.choice(starts)
            walk = [here]
            for _ in range(length * 20):
                if len(walk) == length:
                    break
                c, r = walk[-1] if rng.random() < 0.5 else rng.choice(walk)
                step = (c + rng.choice((-1, 0, 1)), r + rng.choice((-1, 0, 1)))
                if step in lines and step not in walk:
                    walk.append(step)
            if len(walk) == length:
                break
        for cell in walk:
            held[cell] += 1
        out[t] = [c * 16 + r for c, r in walk]
    return out


def _stone_digit(state: int) -> int:
    """A filled cell's digit in a column segment's rank: A 0, B 1, ban 2."""
    return {STONE_A: 0, STONE_B: 1, BANNED: 2}[state]


def _segments(variant: Variant, cells: np.ndarray) -> list[list[tuple[int, bool]]]:
    """The tuple ``cells`` a column at a time, in the order the tuple first
    reaches each column: its cells there bottom up, each as ``(k, gap)``
    (``k`` its place in the tuple; ``gap`` whether a cell of the column
    that is neither forbidden nor in the tuple lies between it and the
    tuple's cell below it, or the floor)."""
    forbidden = variant.forbidden_pairs
    columns: dict[int, list[int]] = {}
    for k, cell in enumerate(int(c) for c in cells):
        columns.setdefault(cell // 16, []).append(k)
    out = []
    for col, members in columns.items():
        members.sort(key=lambda k: int(cells[k]) % 16)
        below, segment = -1, []
        for k in members:
            row = int(cells[k]) % 16
            segment.append((k, any((col, r) not in forbidden for r in range(below + 1, row))))
            below = row
        out.append(segment)
    return out


def segment_values(variant: Variant, cells: np.ndarray, states: int) -> tuple[np.ndarray, int]:
    """The table index of a tuple (or its mirror image) as a sum over its
    cells: ``values[k, s]`` is what cell ``k`` adds in state ``s``.  Returns
    ``(values, table size)``.

    Only states a game can reach get an index.  The cells of a tuple that
    share a column (a *segment*, bottom up) are filled from below: some
    pieces, then the cell a piece lands in next (``NOW``) or, when the
    column has an uncovered cell below it that is not in the tuple, a
    ``LATER`` one, then only ``LATER`` cells.  With ``S`` kinds of pieces
    (A, B and, with a bonus cell, the ban) and ``g_q`` = 1 where such a cell
    lies below segment cell ``q``, the reachable states of a segment of ``m``
    cells number ``sum(S**q * (1 + g_q)) + S**m``, and this sum over the
    cells ranks them densely: a ``LATER`` cell adds 0, a ``NOW`` cell
    ``S**q * g_q``, a piece ``S**q * (1 + g_q + digit)``.  The segments are
    digits of a mixed-radix number in the order the tuple first reaches
    their column.  On the classic board the 190 tables of the shipped
    network shrink from 65,536 entries each to 5,166 on average (961 to
    32,768): what training reads and writes fits the processor's cache.
    An unreachable state (only ever in the middle of playing a move, one
    cell changed and the next not yet) gets some index in the table, never
    read.
    """
    stones = states - 2
    values = np.zeros((len(cells), states), dtype=np.int64)
    mult = 1
    for segment in _segments(variant, cells):
        size, unit = 0, 1
        for k, gap in segment:
            values[k, NOW] = unit * gap * mult
            for state in (STONE_A, STONE_B, BANNED)[:stones]:
                values[k, state] = unit * (1 + gap + _stone_digit(state)) * mult
            size += unit * (1 + gap)
            unit *= stones
        mult *= size + unit
    return values, mult


@dataclass(frozen=True)
class Layout:
    """The arrays the kernels read a network's features through: one
    *instance* per tuple (and per mirror image on a symmetric board)."""

    inst_cells: np.ndarray  # (I, n) int64: the cells of each instance
    inst_tuple: np.ndarray  # (I,) int64: the table of each instance
    cell_ptr: np.ndarray  # (NCELLS + 1,) int64: CSR rows, one per cell
    cell_inst: np.ndarray  # the instances through each cell
    cell_add: np.ndarray  # (rows, P) int64: what that cell adds to that instance's index, per state
    sizes: np.ndarray  # (T,) int64: each table's entries (``segment_values``)
    bases: np.ndarray  # (T,) int64: where each table starts in a side's weights
    drop_ptr: np.ndarray  # (2 * NCELLS + 1,) int64: CSR rows, one per cell and side (``drops``)
    drop: np.ndarray  # (rows, 2) int64: an instance, and how much a plain drop there moves its index
    threat_base: np.ndarray  # (W,) int64: where each column's threat table starts (empty: no threat tables)
    threat_entries: int = 0  # the threat tables' entries, after the tuples' tables

    @property
    def entries(self) -> int:
        """A side's weights: the tuples' tables one after the other, then
        the threat tables."""
        return int(self.sizes.sum()) + self.threat_entries

    @property
    def slots(self) -> int:
        """The length of a position's index array: a table index per tuple
        instance, then one per column with threat tables."""
        return int(self.inst_cells.shape[0] + self.threat_base.shape[0])

    @classmethod
    def of(cls, variant: Variant, tuples: np.ndarray, states: int, mirror: bool, threats: bool = False) -> Layout:
        w = variant.width
        images = [tuples.astype(np.int64)]
        if mirror:
            cols, rows = tuples // 16, tuples % 16
            images.append(((w - 1 - cols) * 16 + rows).astype(np.int64))
        count, length = tuples.shape
        inst_cells = np.stack(images, axis=1).reshape(count * len(images), length)
        inst_tuple = np.repeat(np.arange(count, dtype=np.int64), len(images))
        sizes = np.zeros(count, dtype=np.int64)
        bases = np.zeros(count, dtype=np.int64)
        through: list[list[tuple[int, np.ndarray]]] = [[] for _ in range(K.NCELLS)]
        first = np.zeros(0, dtype=np.int64)
        for i, row in enumerate(inst_cells):
            values, size = segment_values(variant, row, states)
            t = int(inst_tuple[i])
            if i % len(images) == 0:
                sizes[t], first = size, values.copy()
                bases[t] = bases[t - 1] + sizes[t - 1] if t else 0
            elif not np.array_equal(values, first):  # a mirror image reads the same table: it must rank alike
                raise ValueError(f"tuple {t} and its mirror image rank their states differently on {variant}")
            values[0] += bases[t]  # the first cell carries the table's place, in every state
            for k, cell in enumerate(row):
                through[int(cell)].append((i, values[k]))
        ptr = np.zeros(K.NCELLS + 1, dtype=np.int64)
        ptr[1:] = np.cumsum([len(t) for t in through])
        inst = np.array([i for t in through for i, _ in t], dtype=np.int64)
        pw = np.array([v for t in through for _, v in t], dtype=np.int64).reshape(-1, states)
        drop_ptr, drop = drops(variant, through)
        threat_base = np.zeros(0, dtype=np.int64)
        threat_entries = 0
        if threats:  # a table per column (a column and its mirror image share one), after the tuples'
            per = THREAT_PATTERNS * (variant.height + 1)
            kinds = [min(c, w - 1 - c) if mirror else c for c in range(w)]
            threat_base = int(sizes.sum()) + per * np.array(kinds, dtype=np.int64)
            threat_entries = per * (max(kinds) + 1)
        return cls(inst_cells, inst_tuple, ptr, inst, pw, sizes, bases, drop_ptr, drop, threat_base, threat_entries)


def drops(variant: Variant, through: list[list[tuple[int, np.ndarray]]]) -> tuple[np.ndarray, np.ndarray]:
    """What a plain drop (no ban) does to the features, for every cell it
    can land on and each side: its cell turns from ``NOW`` into the side's
    stone and the next free cell above it (forbidden cells are skipped, as
    gravity skips them) from ``LATER`` into ``NOW``, so each instance
    through either cell moves its index by a fixed amount.  ``through[cell]``
    lists the ``(instance, index added per state)`` of each cell.  Returns
    a CSR of ``(instance, change)`` rows, row ``2 * cell + side``: an
    afterstate's value reads only these (``afterstate_values``), with no
    feature to change and undo."""
    forbidden = variant.forbidden_pairs
    rows: list[list[tuple[int, int]]] = []
    for cell in range(K.NCELLS):
        col, row = divmod(cell, 16)
        above = next((r for r in range(row + 1, variant.height) if (col, r) not in forbidden), None)
        for side in (0, 1):
            change: dict[int, int] = {}
            if col < variant.width and row < variant.height and (col, row) not in forbidden:
                for i, add in through[cell]:
                    change[i] = change.get(i, 0) + int(add[STONE_A + side] - add[NOW])
                if above is not None:
                    for i, add in through[col * 16 + above]:
                        change[i] = change.get(i, 0) + int(add[NOW] - add[LATER])
            rows.append(sorted(change.items()))
    ptr = np.zeros(len(rows) + 1, dtype=np.int64)
    ptr[1:] = np.cumsum([len(r) for r in rows])
    flat = np.array([pair for r in rows for pair in r], dtype=np.int64).reshape(-1, 2)
    return ptr, flat


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
        for j in range(ptr[cell], ptr[cell + 1]):
            idx[inst[j]] += pw[j, new] - pw[j, old]
        codes[cell] = new
    return old


@njit(inline="always")
def threat_slots(geo, st, thr, idx):
    """Write the threat tables' indices of ``st`` into the last
    ``len(thr)`` slots of ``idx`` (none without threat tables): for each
    column, its table (``thr[c]``) at the row of its landing row and its
    threats (``K.threat_windows``)."""
    nt = thr.shape[0]
    if nt > 0:
        off = idx.shape[0] - nt
        K.threat_windows(geo, st, THREAT_REACH, idx[off:])
        for c in range(nt):
            idx[off + c] += thr[c] + (np.int64(K.landing_row(st, c)) << (2 * THREAT_REACH))


@njit(cache=True)
def encode(geo, st, codes, idx, ptr, inst, pw, thr):
    """Fill ``codes`` (a cell state per cell) and ``idx`` (each instance's
    table index, then the threat tables' ``threat_slots``) from the kernel
    state ``st``."""
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
    for i in range(idx.shape[0]):
        idx[i] = 0
    for cell in range(ptr.shape[0] - 1):
        code = codes[cell]
        for j in range(ptr[cell], ptr[cell + 1]):
            idx[inst[j]] += pw[j, code]
    threat_slots(geo, st, thr, idx)


@njit(inline="always")
def _log_set(log, n, cell, new, codes, idx, ptr, inst, pw):
    """``set_cell``, with the cell and its old state written to ``log[n]``;
    returns ``n + 1``."""
    log[n, 0] = cell
    log[n, 1] = set_cell(cell, new, codes, idx, ptr, inst, pw)
    return n + 1


@njit(inline="always")
def scratch(geo, root, instances, ptr, inst, pw, thr):
    """A copy of ``root`` to play on, another to restore from, and its
    features for ``instances`` tuple instances and the threat tables
    ``thr``: ``(st, saved, codes, idx, log)``."""
    st = root.copy()
    saved = root.copy()
    codes = np.zeros(K.NCELLS, dtype=np.int64)
    idx = np.zeros(instances + thr.shape[0], dtype=np.int64)
    log = np.zeros((4, 2), dtype=np.int64)
    encode(geo, st, codes, idx, ptr, inst, pw, thr)
    return st, saved, codes, idx, log


@njit(inline="always")
def play_move(geo, st, code, codes, idx, ptr, inst, pw, log):
    """Play move ``code`` (legal) on ``st`` and on the features; the cells
    changed and their old states go to ``log`` (``(4, 2)``) for ``undo``.
    Returns ``(result, cells changed)``.  The threat slots of ``idx`` are
    not updated (``threat_slots`` does, where they are read)."""
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
def weight_sum(weights, side, idx):
    """The sum of ``side``'s active weights for the indices ``idx``."""
    return sum_of(weights, side, idx, 0, idx.shape[0])


@njit(inline="always")
def sum_of(weights, side, idx, lo, hi):
    """The sum of ``side``'s weights at ``idx[lo:hi]``."""
    s = 0.0
    for i in range(lo, hi):
        s += weights[side, idx[i]]
    return s


@njit(inline="always")
def outcome_value(result, side):
    """The exact value of a finished game for ``side``: +1, 0 or -1."""
    if result == K.DRAW:
        return 0.0
    return 1.0 if result == K.WIN_A + side else -1.0


@njit(inline="always")
def afterstate_values(geo, st, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                      weights, drop_ptr, drop, thr):
    """The value of each of the ``n`` moves ``moves`` for the side to move:
    the exact result of a move that ends the game, else its afterstate's
    learnt value.  ``saved`` holds a copy of ``st`` (``K.restore``).

    A plain drop's value is the position's sum of weights plus the change
    of the instances it moves (``drops``: about a third of them on the
    classic board), read without changing the features; a bonus move (a
    drop and a ban) plays on the features and takes them back.  The
    threat tables (``thr``) are read from each afterstate's board; the
    threat slots of ``idx`` are left as scratch."""
    side = np.int64(K.to_move(st))
    tuples = idx.shape[0] - thr.shape[0]
    here = sum_of(weights, side, idx, 0, tuples)
    for k in range(n):
        if moves[k] < K.STRIDE:
            cell, _, result = K.apply(geo, st, moves[k])
            row = 2 * np.int64(cell) + side
            if result == K.ONGOING:
                total = here
                for j in range(drop_ptr[row], drop_ptr[row + 1]):
                    i = drop[j, 0]
                    total += np.float64(weights[side, idx[i] + drop[j, 1]]) - np.float64(weights[side, idx[i]])
                threat_slots(geo, st, thr, idx)  # none without threat tables
                total += sum_of(weights, side, idx, tuples, idx.shape[0])
                values[k] = math.tanh(total)
        else:
            result, changed = play_move(geo, st, moves[k], codes, idx, ptr, inst, pw, log)
            if result == K.ONGOING:
                threat_slots(geo, st, thr, idx)
                values[k] = math.tanh(weight_sum(weights, side, idx))
            undo(changed, codes, idx, ptr, inst, pw, log)
        results[k] = result
        if result != K.ONGOING:
            values[k] = outcome_value(result, side)
        K.restore(geo, st, saved)


@njit(cache=True)
def move_values(geo, st, weights, inst_cells, ptr, inst, pw, drop_ptr, drop, states, thr, moves, values, results):
    """Every legal move of ``st`` (into ``moves``) with its value for the side
    to move (into ``values``) and the game's result after it (``results``).
    Returns how many."""
    n = K.legal_codes(geo, st, moves)
    work, saved, codes, idx, log = scratch(geo, st, inst_cells.shape[0], ptr, inst, pw, thr)
    afterstate_values(geo, work, saved, moves, n, values, results, codes, idx, ptr, inst, pw, log,
                      weights, drop_ptr, drop, thr)
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
#: ``c4lab.learning.ntuple``).  Since the forty-fifth session 200 on the
#: classic board, with threat tables (``default_threats``): five 30-minute
#: runs kept 98.02 to 98.56 % with PUCT at 0.2 s (98.37 % on average), where 150
#: tuples kept 97.5 to 98.64 % (97.8 % on average, ten runs) and 200
#: without the tables 96.8 to 98.8 %.
TUPLES = 70
TUPLES_BONUS = 120
TUPLES_CLASSIC = 200


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


def default_threats(variant: Variant) -> bool:
    """Whether a new network for ``variant`` gets threat tables by default:
    on the classic board, where they were measured (see "Threat tables"
    above and ``TUPLES_CLASSIC``)."""
    return variant == Variant.classic()


@dataclass
class Network:
    """A board's tuples and the two players' weight tables.

    Mutable on purpose: the trainer updates ``weights`` in place (and
    ``games``); the agent only reads it.
    """

    variant: Variant
    tuples: np.ndarray  # (T, n) int16 cells
    weights: np.ndarray  # (2, layout.entries) float32: each side's tables one after the other
    states: int
    mirror: bool
    games: int = 0
    options: dict[str, Any] = field(default_factory=dict)
    threats: bool = False  # threat tables beside the tuples
    layout: Layout = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.layout = Layout.of(self.variant, self.tuples, self.states, self.mirror, self.threats)

    @classmethod
    def create(cls, variant: Variant | str, tuples: int | None = None, length: int = 8, seed: int = 0,
               threats: bool | None = None) -> Network:
        """A new network for ``variant`` (a ``Variant``, or a board's notation:
        ``"6x5/Xc2"``), all weights zero: ``tuples`` random
        walks (``default_tuples``: 70, 120 with a bonus cell, 200 on the
        classic board) of
        ``length`` cells; ``cell_states`` (five where ban pieces can appear,
        four elsewhere); mirrored reading on a symmetric board; with
        ``threats`` (``default_threats``: on the classic board), a threat
        table per column beside the tuples (see "Threat tables" above)."""
        if isinstance(variant, str):  # a board's notation ("6x5/Xc2"), as Solver.prepare takes one
            board = Position.parse(variant)
            if board.ply:
                raise ValueError(f"Network.create: {variant!r} is a position with moves: give a board (6x5/Xc2)")
            variant = board.variant
        if not isinstance(variant, Variant):
            raise TypeError(f"Network.create: variant must be a Variant or a board's notation ('6x5/Xc2'), "
                            f"not {type(variant).__name__}")
        for name, value in (("tuples", tuples), ("length", length), ("seed", seed)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"Network.create: {name} must be a whole number, not {value!r}")
        if threats is None:
            threats = default_threats(variant)
        if not isinstance(threats, bool):
            raise TypeError(f"Network.create: threats must be True, False or None, not {threats!r}")
        if tuples is None:
            tuples = default_tuples(variant)
        if tuples < 1 or length < 1:
            raise ValueError(f"a network needs at least one tuple of one cell, not {tuples} of {length}")
        states = cell_states(variant)
        if states**length > MAX_TABLE:
            raise ValueError(f"tuples of {length} cells with {states} states are too large (at most {MAX_TABLE} "
                             "entries a table)")
        cells = random_walk_tuples(variant, tuples, length, seed)
        mirror = variant.is_mirror_symmetric
        weights = np.zeros((2, Layout.of(variant, cells, states, mirror, threats).entries), dtype=np.float32)
        return cls(variant, cells, weights, states, mirror, threats=threats)

    def grown(self, count: int, seed: int) -> Network:
        """This network with ``count`` more tuples (random walks of the same
        length drawn from ``seed``, started where its tuples are scarcest:
        ``random_walk_tuples``) whose weights are zero: it values every
        position as before, and further training spreads what it learns over
        more tables (more capacity, what was learnt kept)."""
        if count < 1:
            raise ValueError(f"a network grows by at least one tuple, not {count}")
        tuples = np.concatenate([self.tuples, random_walk_tuples(self.variant, count, self.length, seed, beside=self.tuples)])
        layout = Layout.of(self.variant, tuples, self.states, self.mirror, self.threats)
        weights = np.zeros((2, layout.entries), dtype=np.float32)
        old = self.layout.entries - self.layout.threat_entries
        weights[:, :old] = self.weights[:, :old]  # the new tuples' tables come after the old ones
        if self.threats:  # the threat tables stay last
            weights[:, layout.entries - layout.threat_entries:] = self.weights[:, old:]
        return Network(self.variant, tuples, weights, self.states, self.mirror, self.games, dict(self.options),
                       self.threats)

    @property
    def length(self) -> int:
        """The cells of each tuple (8 by default)."""
        return int(self.tuples.shape[1])

    def frozen(self) -> Network:
        """A copy whose weights do not move when this network's do (its
        tuples and layout shared): the network as it is now, to judge while
        training goes on."""
        copy = _copy.copy(self)
        copy.weights = self.weights.copy()
        copy.options = dict(self.options)
        return copy

    def arrays(self) -> list[Any]:
        """The arguments the kernels take after ``geo, st``: ``weights,
        inst_cells, cell_ptr, cell_inst, cell_add, drop_ptr, drop, states,
        threat_base``."""
        lay = self.layout
        return [self.weights, lay.inst_cells, lay.cell_ptr, lay.cell_inst, lay.cell_add, lay.drop_ptr, lay.drop,
                self.states, lay.threat_base]

    def move_values(self, position: Position) -> tuple[list[int], list[float], list[int]]:
        """Every legal move code of ``position``, its value for the side to
        move (+1 a win ... -1 a loss) and the result after it."""
        self.check_board(position.variant)
        geo, st = position.kernel_arrays()
        moves = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        values = np.empty(K.MAX_LEGAL, dtype=np.float64)
        results = np.empty(K.MAX_LEGAL, dtype=np.int64)
        n = move_values(geo, st, *self.arrays(), moves, values, results)  # type: ignore[call-arg]  # numba's Dispatcher type
        return [int(m) for m in moves[:n]], [float(v) for v in values[:n]], [int(r) for r in results[:n]]

    def check_board(self, variant: Variant, source: str | Path | None = None) -> None:
        """``NetworkError`` unless ``variant`` is the network's board
        (``source``: the network's file, named in the message)."""
        if variant != self.variant:
            which = "this network" if source is None else f"the network in {source}"
            raise NetworkError(f"{which} was trained for the board {self.variant}, not {variant}")

    # -- the file -------------------------------------------------------------

    def header(self) -> dict[str, Any]:
        """The file's JSON header: its format, board, tuples, cell states and
        what the network's runs recorded (games, options)."""
        return {
            "format": FORMAT,
            "variant": self.variant.notation,
            "tuples": int(self.tuples.shape[0]),
            "length": self.length,
            "states": self.states,
            "mirror": self.mirror,
            "threats": self.threats,
            "games": self.games,
            "options": self.options,
        }

    def save(self, path: Path | str) -> None:
        """Write the network to ``path`` (atomically: a temporary file, then a
        rename); a ``NetworkError``, and nothing written, where ``weights``
        is not the shape its tuples need (weights assigned from another
        network: the file would not load, called damaged)."""
        wanted = (2, self.layout.entries)
        if getattr(self.weights, "shape", None) != wanted:
            raise NetworkError(f"cannot save {path}: the weights are {getattr(self.weights, 'shape', self.weights)!r}, "
                               f"its tuples need {wanted} (weights of a network with other tuples?)")
        save_arrays(Path(path), self.header(), tuples=self.tuples, weights=self.weights)

    @classmethod
    def load(cls, path: Path | str) -> Network:
        """The network in ``path``; ``NetworkError`` saying what is wrong and
        with which file (missing, damaged, not a network, inconsistent)."""
        path = Path(path)
        if not path.exists():
            raise NetworkError(f"network file {path} does not exist")
        header, arrays = load_arrays(path, ("tuples", "weights"), fmt=(FORMAT, FORMAT_V1), what="n-tuple network",
                                     error=NetworkError)
        try:
            variant = Position.parse(str(header["variant"])).variant
            states = int(header["states"])
            mirror = header["mirror"]
            if not isinstance(mirror, bool):  # bool("false") would be True: the tuples read the other way
                raise TypeError(f"mirror is {mirror!r}, not true or false")
            threats = header.get("threats", False)  # not said: a file from before threat tables
            if not isinstance(threats, bool):
                raise TypeError(f"threats is {threats!r}, not true or false")
            games = header["games"]
            # int() took 1e300, 2.5 and true: a run resuming 1e300 failed on it ("seed must fit in a 64-bit integer")
            if isinstance(games, bool) or not isinstance(games, int):
                raise TypeError(f"games is {games!r}, not a whole number")
            options = dict(header.get("options") or {})
            said = (int(header.get("tuples", -1)), int(header.get("length", -1)))  # -1: not said (an early file)
            if not 0 <= games < 2**63:
                raise ValueError(f"games is {games}, not a count of games (0 to 2**63 - 1)")
            _check_options(options)
        except (KeyError, TypeError, ValueError) as exc:  # a KeyError's words were the name alone: "('variant')"
            why = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else exc
            raise NetworkError(f"{path}: its header is damaged ({why})") from None
        tuples, weights = arrays["tuples"], arrays["weights"]
        count, length = tuples.shape if tuples.ndim == 2 else (0, 0)
        playable = {c.col * 16 + c.row for c in variant.cells()} - {c.col * 16 + c.row for c in variant.forbidden}
        if (
            count < 1
            or said[0] not in (-1, count)
            or said[1] not in (-1, length)
            or states != cell_states(variant)  # the tables' columns: a ban piece's state on a bonus board
            or states**length > MAX_TABLE
            or not np.issubdtype(tuples.dtype, np.integer)
            or not set(np.unique(tuples).tolist()) <= playable
            or weights.dtype != np.float32
            or weights.ndim != (3 if header["format"] == FORMAT_V1 else 2)
            or weights.shape[0] != 2
            or not np.isfinite(weights).all()
            or mirror != variant.is_mirror_symmetric  # every network reads its tuples mirrored where the board is symmetric
        ):
            raise NetworkError(f"{path}: its tuples or weights do not match its header (a damaged file?)")
        tuples = tuples.astype(np.int16)
        layout = Layout.of(variant, tuples, states, mirror, threats)
        if header["format"] == FORMAT_V1:
            if weights.shape[1:] != (count, states**length):
                raise NetworkError(f"{path}: its tuples or weights do not match its header (a damaged file?)")
            weights = reindex_v1(variant, tuples, weights, states, layout)
        if weights.shape[1] != layout.entries:
            raise NetworkError(f"{path}: it has {weights.shape[1]} weights a side, its tuples need "
                               f"{layout.entries} (a damaged file?)")
        return cls(variant, tuples, weights, states, mirror, games, options, threats)


#: The training options a header may hold, and what each must be.
_NUMBERS = ("alpha", "epsilon", "lam", "average", "tcl", "seconds")
_OPTIONAL_NUMBERS = ("alpha_final", "epsilon_final")


#: A training run's name in a network's header options (``run``) and in its
#: curve's ``run`` column: random hexadecimal digits drawn when the network
#: is made, kept by every run that resumes or grows it, so that a resumed
#: run knows its own curve from another network's.
RUN_ID = re.compile(r"[0-9a-f]{8,32}")


def _check_options(options: dict[str, Any]) -> None:
    """``ValueError`` unless the header's training options are what a
    trainer wrote: finite numbers, a whole number of opening moves, and each
    worker's random state a decimal integer in 1 .. 2**64 - 1 (0 is the
    generator's fixed point: every draw would be 0)."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)

    for name in _NUMBERS + _OPTIONAL_NUMBERS:
        if name in options and not (number(options[name]) or (name in _OPTIONAL_NUMBERS and options[name] is None)):
            raise ValueError(f"option {name} is {options[name]!r}, not a number")
    if "opening" in options and not (isinstance(options["opening"], int) and not isinstance(options["opening"], bool)
                                     and options["opening"] >= 0):
        raise ValueError(f"option opening is {options['opening']!r}, not a number of moves")
    done = options.get("done")
    if done is not None and not (number(done) and 0 <= done <= 1):
        raise ValueError(f"option done is {done!r}, not a share of the run between 0 and 1")
    if "learn_from_random" in options and not isinstance(options["learn_from_random"], bool):
        raise ValueError(f"option learn_from_random is {options['learn_from_random']!r}, not true or false")
    run = options.get("run")
    if run is not None and not (isinstance(run, str) and RUN_ID.fullmatch(run)):
        raise ValueError(f"option run is {run!r}, not a run's name (8 to 32 hexadecimal digits)")
    rng = options.get("rng")
    if rng is not None and not (isinstance(rng, list) and rng and all(
            isinstance(x, str) and x.isdigit() and 0 < int(x) < 2**64 for x in rng)):
        raise ValueError(f"option rng is {rng!r}, not a list of random states (integers 1 to 2**64 - 1)")


def reachable(variant: Variant, cells: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """Which rows of ``digits`` (cell states of the tuple ``cells``, one
    column per cell) a game can reach: in each column, pieces from below,
    then the cell a piece lands in next (or a ``LATER`` one with an
    uncovered cell below it outside the tuple), then ``LATER`` cells."""
    ok = np.ones(digits.shape[0], dtype=bool)
    for segment in _segments(variant, cells):
        open_ = np.zeros(digits.shape[0], dtype=bool)  # an empty cell seen below
        for k, gap in segment:
            state = digits[:, k]
            first_empty = (state == NOW) | ((state == LATER) & gap)
            ok &= np.where(open_, state == LATER, np.isin(state, (STONE_A, STONE_B, BANNED)) | first_empty)
            open_ |= (state == NOW) | (state == LATER)
    return ok


def reindex_v1(variant: Variant, tuples: np.ndarray, weights: np.ndarray, states: int, layout: Layout) -> np.ndarray:
    """The weights of a first-format file (tables of ``P ** n`` entries, the
    cell states read in base ``P``) in this format's dense tables.  Entries
    of states no game reaches are dropped (training never wrote them)."""
    out = np.zeros((2, layout.entries), dtype=np.float32)
    powers = states ** np.arange(tuples.shape[1], dtype=np.int64)
    for t, cells in enumerate(tuples):
        old = np.flatnonzero(weights[:, t].any(axis=0))
        digits = old[:, None] // powers % states
        keep = reachable(variant, cells, digits)
        values, _ = segment_values(variant, cells, states)
        new = values[np.arange(len(cells)), digits[keep]].sum(axis=1)
        out[:, layout.bases[t] + new] = weights[:, t, old[keep]]
    return out


__all__ = ["FORMAT", "FORMAT_V1", "Layout", "Network", "NetworkError", "encode", "lines_through", "move_values",
           "random_walk_tuples", "reachable", "reindex_v1", "scratch", "segment_values"]
