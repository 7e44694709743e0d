"""The Q-table that the ``qlearning`` agent plays from: its keys, its file.

A table is learnt by ``c4lab.learning.qlearning`` (the trainer, which writes
it) and read here by the agent: it lives with what reads it, so an agent never
imports the trainer.

Keys and symmetry
-----------------
A position's key is a uint64 built from its board: per column, the pieces
from the bottom (forbidden cells skipped) as bits (1 for B; A and a ban piece
0) under a sentinel bit, ``H + 1`` bits a column, plus the ban piece's cell
in the top 8 bits when the board has a bonus cell.  The board alone fixes the
side to move (A has as many pieces as B, or one more) and whether the bonus
is still to take, so the key identifies the position.  It needs ``W * (H + 1)
<= 64`` bits (``<= 56`` with a bonus cell).  When the variant is mirror-
symmetric (its forbidden cells and bonus cell, if any, are their own mirror
images) a position and its mirror image share one row: the smaller of the two
keys is used, and the actions of a mirrored row are mirrored columns.

Actions are numbered ``0 .. W - 1`` for a piece in a column and ``W + b`` for
a piece on the bonus cell followed by a ban in column ``b`` (only one column
can land on the bonus cell at a time, so the ban column identifies the move).

The file
--------
An ``.npz`` archive read with ``allow_pickle=False``: ``header`` (JSON: format,
variant, start position, symmetry, rewards, options, episodes, states),
``keys`` (uint64, sorted), ``q`` (float32, one row of ``2 W`` values per key)
and ``visits`` (uint32, how often training met each position).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

import c4lab.jitcache  # noqa: F401  (numba's cache made safe for concurrent processes)
from c4lab.arrayfile import load_arrays, save_arrays
from c4lab.rules import Move, Position, Variant
from c4lab.rules import kernels as K

FORMAT = "c4lab-qtable-1"


class TableError(ValueError):
    """A Q-table file that is missing, damaged, not a Q-table, or for another board."""



# ---------------------------------------------------------------------------
# Keys and actions (compiled: the training loop calls them on every move)
# ---------------------------------------------------------------------------


@njit(cache=True)
def position_keys(geo, st):
    """The key of ``st`` and the key of its mirror image (see the module docstring)."""
    w = np.uint64(K.board_width(geo))
    h = np.uint64(K.board_height(geo))
    stride = h + K.U1
    key = K.U0
    mirror = K.U0
    ban = K.U0
    mirror_ban = K.U0
    for ci in range(K.board_width(geo)):
        c = np.uint64(ci)
        code = K.U0
        n = K.U0
        for ri in range(K.board_height(geo)):
            r = np.uint64(ri)
            piece = K.cell_code(st, c * K.STRIDE + r)
            if piece == K.PIECE_B:
                code |= K.U1 << n
            elif piece == K.BAN:
                ban = c * K.STRIDE + r + K.U1
                mirror_ban = (w - K.U1 - c) * K.STRIDE + r + K.U1
            elif piece != K.PIECE_A:
                continue  # empty or forbidden: no slot
            n += K.U1
        code |= K.U1 << n
        key |= code << (c * stride)
        mirror |= code << ((w - K.U1 - c) * stride)
    return key | (ban << np.uint64(56)), mirror | (mirror_ban << np.uint64(56))


@njit(inline="always")
def action_index(code, w, mirrored):
    """The action index of move ``code`` in a row stored mirrored or not."""
    c = np.int64(code & 15)
    if code < 16:
        return w - 1 - c if mirrored else c
    b = np.int64(code >> 4) - 1
    return w + (w - 1 - b if mirrored else b)





# ---------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------


def check_board(variant: Variant) -> None:
    """Raise ``TableError`` if positions of ``variant`` do not fit a 64-bit key."""
    bits = variant.width * (variant.height + 1) + (8 if variant.bonus is not None else 0)
    if bits > 64:
        raise TableError(
            f"{variant.notation} is too large for a Q-table: its keys need {bits} bits, at most 64 fit "
            "(W * (H + 1), plus 8 with a bonus cell); a table covers small boards only (4x4, 5x4, 5x5)"
        )


def check_rewards(win: float, draw: float, loss: float) -> None:
    """``ValueError`` unless the rewards of a win, a draw and a loss are
    finite with ``loss <= draw <= win`` and ``loss < win`` (the agent's
    values are read on that scale)."""
    if not all(math.isfinite(r) for r in (win, draw, loss)):
        raise ValueError(f"rewards must be finite numbers, not {win}, {draw}, {loss}")
    if not loss <= draw <= win or loss == win:
        raise ValueError("rewards must satisfy loss <= draw <= win, with loss < win")


def _check_start(start: object, variant: Variant, path: Path) -> None:
    """``TableError`` for a header's ``start`` (where the table's games
    began: ``evaluate`` and the report play from it) that is not a position
    on the table's own board with a move to play; ``None``: the empty board."""
    if start is None:
        return
    if not isinstance(start, str):
        raise TableError(f"Q-table {path} is damaged: its start ({start!r} is not a position)")
    try:
        position = Position.parse(start)
        if position.variant != variant:
            raise ValueError(f"{start} is not on the table's {variant.notation}")
        if position.is_over:
            raise ValueError(f"the game is over in {start}")
    except ValueError as exc:  # PositionError, IllegalMoveError: a ValueError each
        raise TableError(f"Q-table {path} is damaged: its start ({exc})") from None


@dataclass
class QTable:
    """A learnt table: ``keys`` (sorted uint64), ``q`` (float32, ``2 W`` values a
    key) and ``visits`` (uint32), for positions of ``variant``.

    ``info`` holds what the file header says about the training (options,
    episodes, start position, rewards).
    """

    variant: Variant
    keys: np.ndarray
    q: np.ndarray
    visits: np.ndarray
    symmetric: bool
    rewards: tuple[float, float, float] = (1.0, 0.5, 0.0)
    info: dict[str, Any] = field(default_factory=dict)
    path: str = "(in memory)"

    def __len__(self) -> int:
        return int(self.keys.shape[0])

    def check_board(self, variant: Variant, what: str | None = None) -> None:
        """``TableError`` unless ``variant`` is the table's board (``what``:
        the position or board the message names, the board by default)."""
        if variant != self.variant:
            raise TableError(
                f"the Q-table {self.path} was trained on {self.variant.notation} boards; "
                f"it cannot play {what or variant.notation} (train a table for that board)"
            )

    def lookup(self, position: Position) -> tuple[int, bool]:
        """The row of ``position`` (``-1`` when training never met it) and
        whether that row is stored mirrored."""
        self.check_board(position.variant, position.notation)
        geo, st = position.kernel_arrays()
        key, mirror = position_keys(geo, st)
        mirrored = self.symmetric and mirror < key
        key = mirror if mirrored else key
        i = int(np.searchsorted(self.keys, key))
        if i < len(self.keys) and self.keys[i] == key:
            return i, mirrored
        return -1, mirrored

    def values(self, position: Position) -> dict[Move, float] | None:
        """``Q`` of every legal move of ``position`` (for the side to move), or
        ``None`` when the table does not know the position."""
        row, mirrored = self.lookup(position)
        if row < 0:
            return None
        w = self.variant.width
        out = {}
        for move in position.legal_moves():
            if move.ban is None:
                a = w - 1 - move.column if mirrored else move.column
            else:
                a = w + (w - 1 - move.ban if mirrored else move.ban)
            out[move] = float(self.q[row, a])
        return out

    def header(self) -> dict[str, Any]:
        return {
            **self.info,
            "format": FORMAT,
            "variant": self.variant.notation,
            "symmetric": self.symmetric,
            "rewards": list(self.rewards),
            "states": len(self),
        }

    def save(self, path: str | Path) -> None:
        """Write the table (atomically: a temporary file, then a rename)."""
        save_arrays(Path(path), self.header(), keys=self.keys, q=self.q, visits=self.visits)

    @classmethod
    def load(cls, path: str | Path) -> QTable:
        """Read a table file; ``TableError`` saying what is wrong and where
        (``table=~/q.npz``: the home folder, as a shell would read it)."""
        path = Path(path).expanduser()
        if not path.exists():
            raise TableError(
                f"no Q-table at {path}: train one first, e.g. `c4lab train qlearning --board 4x4 --out {path}`"
            )
        header, arrays = load_arrays(path, ("keys", "q", "visits"), fmt=FORMAT, what="Q-table", error=TableError)
        keys, q, visits = arrays["keys"], arrays["q"], arrays["visits"]
        try:
            variant = Position.parse(str(header["variant"])).variant
            symmetric = header["symmetric"]
            if not isinstance(symmetric, bool):
                raise TypeError(f"'symmetric' is {symmetric!r}, not true or false")
            r_win, r_draw, r_loss = (float(r) for r in header["rewards"])
        except (KeyError, ValueError, TypeError) as exc:  # a KeyError's words were the name alone: "('variant')"
            why = f"it has no {exc.args[0]!r}" if isinstance(exc, KeyError) else exc
            raise TableError(f"Q-table {path} is damaged: bad header ({why})") from None
        try:
            check_rewards(r_win, r_draw, r_loss)
        except ValueError as exc:
            raise TableError(f"Q-table {path} is damaged: bad rewards {header['rewards']!r} ({exc})") from None
        try:
            check_board(variant)
        except TableError as exc:
            raise TableError(f"Q-table {path} is damaged: {exc}") from None
        _check_start(header.get("start"), variant, path)
        n, w = keys.shape[0] if keys.ndim == 1 else -1, variant.width
        if (
            keys.dtype != np.uint64
            or keys.ndim != 1
            or q.dtype != np.float32
            or q.shape != (n, 2 * w)
            or visits.dtype != np.uint32
            or visits.shape != (n,)
        ):
            raise TableError(f"Q-table {path} is damaged: its arrays do not match a {variant.notation} table")
        if n and not bool(np.all(keys[1:] > keys[:-1])):
            raise TableError(f"Q-table {path} is damaged: keys not sorted")
        if not bool(np.all(np.isfinite(q))):
            raise TableError(f"Q-table {path} is damaged: values that are not finite numbers")
        if symmetric and not variant.is_mirror_symmetric:
            raise TableError(f"Q-table {path} is damaged: mirrored keys on the asymmetric {variant.notation}")
        info = {k: v for k, v in header.items() if k not in ("format", "variant", "symmetric", "rewards", "states")}
        return cls(variant, keys, q, visits, symmetric, (r_win, r_draw, r_loss), info, str(path))
