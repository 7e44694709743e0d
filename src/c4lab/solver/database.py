"""The published 12-ply database of the classic board (PyPI ``bitbully-databases``).

The MIT-licensed data package ``bitbully-databases`` ships an exact database
of the classic 7 x 6 board: every position with 12 pieces that is still
being played (4,200,899 of them, one of each mirror pair), with its value
and the distance to the end.  c4lab reads the data file with this reader,
written from the format's documentation; it never imports the package (nor
the BitBully solver), it only finds the file through the installed
package's metadata.

The file (``assets/book_12ply_distances.dat``) is a run of 5-byte records,
sorted by key:

* 4 bytes, big-endian, signed: the position's key.  Going through the
  columns left to right, each column bottom to top, a first player's piece
  writes the bits ``10``, a second player's ``11``, and the end of the
  column (an empty cell, or the top of a full column) a ``0``; one more
  ``0`` ends the board.  With 12 pieces that is 24 + 7 + 1 = 32 bits.
* 1 byte, signed: the value for the first player (who is to move: 12
  pieces are an even number): ``0`` a draw, ``100 - d`` a win and
  ``-(100 - d)`` a loss, the game ending ``d`` plies from the position.

Only one of a position and its mirror image is stored: a lookup tries the
position, then its mirror.

RULES.md's score gives the winner ``(E + 1) // 2`` with ``E`` the empty
cells before the winning move; the winning move is ply ``12 + d``, so
``E = 42 - (12 + d - 1)`` and the score is ``(31 - d + 1) // 2`` for the
winner (:func:`score_of_value`).

The table is loaded lazily, on the first classic position that asks for it
(about 21 MB: ``int32`` keys and ``int8`` values); lookups run inside the
compiled search (:func:`find`), so that a search down to the 12-piece
frontier reads it at its leaves.

>>> score_of_value(0), score_of_value(71), score_of_value(-88)
(0, 1, -10)
"""

from __future__ import annotations

import functools
import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.rules.position import Position
from c4lab.rules.variant import Variant

#: The PyPI distribution that holds the data file, and the file inside it.
DISTRIBUTION = "bitbully-databases"
ASSET = "bitbully_databases/assets/book_12ply_distances.dat"

#: Every stored position has this many pieces.
PLY = 12

#: The classic board's size (the only one the database knows).
WIDTH, HEIGHT = 7, 6

#: What :func:`find` returns for a position the database does not hold.
NOT_FOUND = -128

_RECORD = np.dtype([("key", ">i4"), ("value", "i1")])


class DatabaseError(ValueError):
    """The database is missing or its file is damaged (the message says
    which file, and where)."""


@dataclass(frozen=True)
class Database:
    """The loaded database: sorted keys and their values."""

    keys: np.ndarray  # int32, strictly increasing
    values: np.ndarray  # int8, the first player's value (0, +-(100 - d))
    path: Path
    version: str

    def __len__(self) -> int:
        return int(self.keys.size)

    @property
    def empty(self) -> int:
        """The empty cells of every stored position (30)."""
        return WIDTH * HEIGHT - PLY

    def covers(self, variant: Variant, empty: int) -> bool:
        """Whether a search of a position of ``variant`` with ``empty`` empty
        cells can end on the database's positions (a classic position with at
        most 12 pieces)."""
        return variant == Variant.classic() and empty >= self.empty

    @property
    def nbytes(self) -> int:
        """The memory the arrays take."""
        return int(self.keys.nbytes + self.values.nbytes)

    def describe(self) -> str:
        """One line for ``c4lab book info``."""
        return (
            f"{DISTRIBUTION} {self.version}: {len(self):,} classic positions with {PLY} pieces, "
            f"exact values with distances ({self.path})"
        )

    def value(self, position: Position) -> int | None:
        """The stored value of ``position`` (or of its mirror image), ``None``
        when it is not in the database (another board, another number of
        pieces, or a finished game)."""
        if position.variant != Variant.classic() or position.ply != PLY or position.is_over:
            return None
        first, mask = _bitboards(position)
        found = lookup(self.keys, self.values, np.uint64(first), np.uint64(mask))
        return None if found == NOT_FOUND else int(found)

    def score(self, position: Position) -> int | None:
        """RULES.md's score of ``position`` for the side to move (the first
        player), ``None`` when the database does not hold it."""
        value = self.value(position)
        return None if value is None else score_of_value(value)


def score_of_value(value: int, ply: int = PLY) -> int:
    """RULES.md's score, for the side to move, of a stored ``value`` of a
    position with ``ply`` pieces on the classic board."""
    return int(score_at.py_func(value, WIDTH * HEIGHT - ply))


@njit(inline="always")
def _key(first, mask, mirror):
    """The file's key of the position (``first``: the first player's pieces,
    ``mask``: every piece; the bitboard layout of :mod:`c4lab.solver.bitboard`
    with 7 bits a column), read left to right or (``mirror``) right to left."""
    key = np.uint64(0)
    for i in range(WIDTH):
        col = WIDTH - 1 - i if mirror else i
        for row in range(HEIGHT):
            bit = np.uint64(1) << np.uint64(col * (HEIGHT + 1) + row)
            if not (mask & bit):
                break
            key = (key << np.uint64(2)) | (np.uint64(2) if first & bit else np.uint64(3))
        key = key << np.uint64(1)
    key = key << np.uint64(1)
    # 12 pieces give exactly 32 bits; the key is their signed 32-bit value.
    return np.int64(key) - (np.int64(1) << np.int64(32)) if key >> np.uint64(31) else np.int64(key)


@njit(inline="always")
def _lower_bound(keys, key):
    """The first index of the sorted ``keys`` whose key is ``key`` or more
    (``np.searchsorted``'s): a plain binary search, because numba's generic
    ``searchsorted`` took 0.9 s to compile into the solver's search, a fifth
    of a first exact answer, for the same loop."""
    low = np.int64(0)
    high = np.int64(keys.size)
    while low < high:
        mid = (low + high) >> 1
        if np.int64(keys[mid]) < key:
            low = mid + 1
        else:
            high = mid
    return low


@njit(inline="always")
def find(keys, values, first, mask):
    """The stored value of the 12-piece classic position (``first``,
    ``mask``) or of its mirror image; :data:`NOT_FOUND` otherwise."""
    for mirror in (False, True):
        key = _key(first, mask, mirror)
        i = _lower_bound(keys, key)
        if i < keys.size and keys[i] == key:
            return np.int64(values[i])
    return np.int64(NOT_FOUND)


@njit(cache=True)
def lookup(keys, values, first, mask):
    """:func:`find`, called from Python."""
    return find(keys, values, first, mask)


@njit(inline="always")
def score_at(value, empty):
    """RULES.md's score, for the side to move, of a stored ``value`` of a
    position with ``empty`` empty cells (the win comes ``100 - |value|``
    plies later: the winner's ``E`` before it is ``empty - (d - 1)``)."""
    if value == 0:
        return np.int64(0)
    distance = 100 - abs(value)
    winner = (empty - distance + 2) // 2
    return winner if value > 0 else -winner


def _bitboards(position: Position) -> tuple[int, int]:
    """The first player's pieces and every piece, as 7x6 bitboards."""
    first = mask = 0
    for cell, piece in position.cells.items():
        bit = 1 << (cell.col * (HEIGHT + 1) + cell.row)
        mask |= bit
        if piece == "A":
            first |= bit
    return first, mask


def reaches(position: Position) -> bool:
    """Whether a search of ``position`` ends on the database's positions (a
    classic position with at most 12 pieces, the package installed): such a
    position is solved exactly in a fraction of a second."""
    return (
        position.variant == Variant.classic()
        and position.ply <= PLY
        and not position.is_over
        and locate() is not None
    )


def locate() -> tuple[Path, str] | None:
    """The installed data file and the package's version, ``None`` when
    ``bitbully-databases`` is not installed."""
    try:
        dist = importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        return None
    path = Path(str(dist.locate_file(ASSET)))
    return (path, dist.version) if path.is_file() else None


def load(path: Path | str, version: str = "unknown") -> Database:
    """Read and check a database file.

    Raises :class:`DatabaseError` when the file cannot be read, is not a
    whole number of records, is not sorted, or holds an impossible value.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise DatabaseError(f"cannot read the database {path}: {exc.strerror}") from None
    if size == 0 or size % _RECORD.itemsize:
        raise DatabaseError(
            f"{path} is not a database file: {size} bytes is not a whole number of "
            f"{_RECORD.itemsize}-byte records"
        )
    records = np.memmap(path, dtype=_RECORD, mode="r")
    try:
        keys = records["key"].astype(np.int32)
        values = records["value"].astype(np.int8)
    finally:
        del records
    unsorted = np.flatnonzero(keys[1:] <= keys[:-1])
    if unsorted.size:
        at = int(unsorted[0]) + 1
        raise DatabaseError(
            f"{path} is damaged: record {at} (byte {at * _RECORD.itemsize}) is not after the one before it"
        )
    bad = np.flatnonzero((values > 100) | (values < -100) | ((values != 0) & (np.abs(values.astype(np.int16)) < 100 - (WIDTH * HEIGHT - PLY))))
    if bad.size:
        at = int(bad[0])
        raise DatabaseError(
            f"{path} is damaged: record {at} (byte {at * _RECORD.itemsize}) holds the impossible value {int(values[at])}"
        )
    return Database(keys, values, path, version)


MISSING = (
    f"the classic database is not installed (pip install {DISTRIBUTION}): classic positions "
    "are solved by search alone, which takes minutes in the opening"
)


def status() -> str:
    """One line on the classic database: what is loaded and where it comes
    from, or that it is missing or damaged (``c4lab book info``)."""
    try:
        found = default()
    except DatabaseError as exc:
        return f"the classic database is damaged: {exc}"
    return MISSING if found is None else found.describe()


@functools.cache
def default() -> Database | None:
    """The installed database, loaded once (``None`` when the package is
    not installed)."""
    found = locate()
    if found is None:
        return None
    return load(*found)
