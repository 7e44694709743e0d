"""``Position``: an immutable game position, a thin wrapper over the kernels.

A position is a ``Variant`` plus the move tokens played from its empty board.
Its board state lives in a read-only kernel state array; every rule (gravity,
the bonus, wins, draws, legality) is answered by ``c4lab.rules.kernels``.

>>> p = Position.parse("7x6:dd")
>>> p.to_move, p.play("c").notation
('A', '7x6:ddc')
"""

from __future__ import annotations

import numbers
from functools import cache, lru_cache
from typing import Any, Literal

import numpy as np

from c4lab.rules import interpreted
from c4lab.rules import kernels as K
from c4lab.rules.errors import IllegalMoveError, PositionError, VariantError
from c4lab.rules.move import Move
from c4lab.rules.notation import MoveToken, parse_position
from c4lab.rules.sides import result_clause, result_words
from c4lab.rules.variant import Cell, Variant, column_letter, integer

Side = Literal["A", "B"]
Result = Literal["A", "B", "draw"]
Piece = Literal["A", "B", "ban"]

_RESULTS: dict[int, Result | None] = {K.ONGOING: None, K.WIN_A: "A", K.WIN_B: "B", K.DRAW: "draw"}
_PIECES: dict[int, Piece] = {K.PIECE_A: "A", K.PIECE_B: "B", K.BAN: "ban"}
_MOVES = [Move.from_code(code) if (code & 15) < 12 and (code >> 4) <= 12 else None for code in range(256)]


def _cell_index(cell: Cell) -> int:
    return cell.col * 16 + cell.row


def _cell_at(index: int) -> Cell:
    return Cell(int(index) // 16, int(index) % 16)


def _readonly(array: np.ndarray) -> np.ndarray:
    """``array`` read-only for good: a read-only view of it, whose
    ``flags.writeable`` cannot be set back to ``True`` (the array's own
    could, and the geometry is shared by every position of a board, so
    one such line in a user's agent changed them all)."""
    array.flags.writeable = False
    return array.view()


@lru_cache(maxsize=512)
def _tables(variant: Variant) -> tuple[np.ndarray, np.ndarray]:
    """The kernels' geometry and empty-board state of ``variant`` (cached)."""
    forbidden = np.array([_cell_index(c) for c in variant.forbidden], dtype=np.int64)
    bonus = K.NO_CELL if variant.bonus is None else _cell_index(variant.bonus)
    geo = K.new_geometry(variant.width, variant.height, forbidden, bonus)
    start = K.new_state(geo, forbidden)
    return _readonly(geo), _readonly(start)


class Position:
    """A position: a board (``Variant``) and the moves played on it.

    Immutable and hashable; two positions are equal when they have the same
    board and the same moves.  Build one with ``Position(variant)`` (the empty
    board; the classic one by default), ``Position.parse(text)`` or ``play``.
    """

    __slots__ = ("_moves", "_state", "_variant")

    _variant: Variant
    _moves: tuple[Move, ...]
    _state: np.ndarray

    def __init__(self, variant: Variant | None = None) -> None:
        """The empty board of ``variant`` (the classic 7x6 when left out),
        with no move played; ``Position.parse`` reads a position with moves,
        ``play`` plays on.  Not a ``Variant`` (a position string, say) is a
        ``TypeError`` saying so."""
        variant = Variant.classic() if variant is None else variant
        if not isinstance(variant, Variant):
            hint = f" (Position.parse({variant!r}) reads a position string)" if isinstance(variant, str) else ""
            raise TypeError(f"Position(variant) takes a Variant (or nothing: the classic board), not {variant!r}{hint}")
        object.__setattr__(self, "_variant", variant)
        object.__setattr__(self, "_moves", ())
        object.__setattr__(self, "_state", _tables(variant)[1])

    @classmethod
    def _make(cls, variant: Variant, moves: tuple[Move, ...], state: np.ndarray) -> Position:
        self = cls.__new__(cls)
        object.__setattr__(self, "_variant", variant)
        object.__setattr__(self, "_moves", moves)
        object.__setattr__(self, "_state", _readonly(state))
        return self

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Position is immutable: play() returns a new position")

    __delattr__ = __setattr__  # type: ignore[assignment]

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as its notation (read back with ``parse``): a position
        goes to another process (``multiprocessing``) or into a file."""
        return (Position.parse, (self.notation,))

    def __copy__(self) -> Position:
        return self  # immutable: a copy would be the same position

    def __deepcopy__(self, memo: dict[int, Any]) -> Position:
        return self

    # -- reading and writing the notation ----------------------------------

    @classmethod
    def parse(cls, text: str) -> Position:
        """The position written ``text`` (RULES.md notation).

        Raises ``PositionError`` (a ``ValueError``) naming the offending
        token and its index for anything malformed or illegal, and
        ``TypeError`` for ``text`` that is not a ``str`` (bytes, ``None``).
        """
        parsed = parse_position(text)
        variant = parsed.variant
        geo, start = _tables(variant)
        tokens = parsed.moves
        # Letters beyond 'l' clamp to 15: still beyond every board, so the
        # kernel reports them in order, as any other out-of-range column.
        codes = np.array(
            [min(t.column, 15) + 16 * (0 if t.ban is None else min(t.ban, 15) + 1) for t in tokens],
            dtype=np.int64,
        )
        state = start.copy()
        # A board with no moves needs no kernel; a process's first moves
        # are played interpreted (``rules.interpreted``: no compiling).
        done, err = interpreted.call(K.play_all, geo, state, codes, work=len(codes)) if tokens else (0, K.OK)
        if err != K.OK:
            token = tokens[done]
            before = start.copy()
            interpreted.call(K.play_all, geo, before, codes[:done], work=done)
            raise PositionError(
                text,
                _reason(err, variant, before, token),
                token=token.text,
                index=token.index,
                move_index=done,
            )
        moves = tuple(_MOVES[c] for c in codes)  # type: ignore[misc]
        return cls._make(variant, moves, state)

    @property
    def notation(self) -> str:
        """The canonical position string."""
        if not self._moves:
            return self._variant.notation
        return self._variant.notation + ":" + "".join(m.token for m in self._moves)

    def __str__(self) -> str:
        return self.notation

    def __repr__(self) -> str:
        return f"Position.parse({self.notation!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Position):
            return NotImplemented
        return self._variant == other._variant and self._moves == other._moves

    def __hash__(self) -> int:
        return hash((self._variant, self._moves))

    # -- the game -----------------------------------------------------------

    @property
    def variant(self) -> Variant:
        """The board: shape, forbidden cells, bonus cell."""
        return self._variant

    @property
    def moves(self) -> tuple[Move, ...]:
        """The move tokens played from the empty board."""
        return self._moves

    @property
    def ply(self) -> int:
        """How many move tokens have been played."""
        return len(self._moves)

    @property
    def result(self) -> Result | None:
        """``'A'`` or ``'B'`` (who won), ``'draw'``, or ``None`` while the game goes on."""
        return _RESULTS[int(self._state[K.S_RESULT])]

    @property
    def is_over(self) -> bool:
        """Has the game ended (a win or a draw)?"""
        return int(self._state[K.S_RESULT]) != K.ONGOING

    @property
    def to_move(self) -> Side | None:
        """The side to move, or ``None`` when the game is over."""
        if self.is_over:
            return None
        return "B" if self._state[K.S_TURN] else "A"

    @property
    def empty_cells(self) -> int:
        """E: the cells that are empty and not forbidden."""
        return int(self._state[K.S_EMPTY])

    def legal_moves(self) -> tuple[Move, ...]:
        """Every legal move token, by column; at a bonus landing the plain
        move (the decline) comes first, then one move per ban column."""
        geo = _tables(self._variant)[0]
        out = np.empty(K.MAX_LEGAL, dtype=np.uint8)
        n = interpreted.call(K.legal_codes, geo, self._state, out)
        return tuple(_MOVES[c] for c in out[:n])  # type: ignore[misc]

    def is_legal(self, move: Move | str) -> bool:
        """Is ``move`` (a ``Move`` or a token) legal here?  ``False`` for a
        string that is no move token; ``TypeError`` for what is neither."""
        try:
            move = _as_move(move)
        except ValueError:
            return False
        return bool(interpreted.call(K.check, _tables(self._variant)[0], self._state, move.code) == K.OK)

    def play(self, *moves: Move | str) -> Position:
        """The position after ``moves`` (``Move`` objects or tokens like ``'d+a'``).

        Raises ``IllegalMoveError`` if any of them is not legal (a string
        that is no move token included; with more than one move, its
        ``given`` and message say which of them), ``TypeError`` for what is
        neither a ``Move`` nor a string (a column number is ``Move(3)``).
        """
        position = self
        for i, move in enumerate(moves):
            try:
                position = position._play_one(move)
            except IllegalMoveError as exc:
                if len(moves) == 1:
                    raise
                raise IllegalMoveError(exc.position, exc.move, exc.reason, given=(i, len(moves))) from None
        return position

    def undo(self, plies: int = 1) -> Position:
        """The position ``plies`` move tokens earlier: the last move taken
        back (a bonus move with its ban is one token).  A new position, as
        ``play``'s are; ``ValueError`` for more moves than were played."""
        plies = integer(plies, "the number of moves to take back")
        if plies < 0:
            raise ValueError(f"the number of moves to take back must be 0 or more, not {plies}")
        if plies > len(self._moves):
            raise ValueError(f"cannot take back {plies} move{'s' if plies != 1 else ''} of "
                             f"{self.notation}: it has {len(self._moves)}")
        if plies == 0:
            return self
        moves = self._moves[: len(self._moves) - plies]
        geo, start = _tables(self._variant)
        state = start.copy()
        if moves:
            interpreted.call(K.play_all, geo, state, np.array([m.code for m in moves], dtype=np.int64), work=len(moves))
        return Position._make(self._variant, moves, state)

    def _play_one(self, move: Move | str) -> Position:
        try:
            parsed = _as_move(move)
        except ValueError as exc:  # "a column letter a..l": and this board's own
            raise IllegalMoveError(self.notation, str(move), f"{exc}; this board's {_letters(self._variant)}") from None
        geo = _tables(self._variant)[0]
        state = self._state.copy()
        err = interpreted.call(K.play, geo, state, parsed.code)
        if err != K.OK:
            token = MoveToken(parsed.token, 0, parsed.column, parsed.ban)
            raise IllegalMoveError(
                self.notation, parsed.token, _reason(err, self._variant, self._state, token)
            )
        return Position._make(self._variant, self._moves + (parsed,), state)

    @property
    def last_cell(self) -> Cell | None:
        """The cell of the last piece dropped (not of a ban piece)."""
        last = int(self._state[K.S_LAST])
        return None if last == K.NO_LAST else _cell_at(last)

    @property
    def win_line(self) -> tuple[Cell, ...]:
        """Every cell of every line of four or more through the winning
        piece, sorted by column then row; empty unless someone has won."""
        if self.result not in ("A", "B"):  # no kernel call (nor its compile) for a board still in play
            return ()
        out = np.empty(K.NCELLS, dtype=np.int64)
        n = interpreted.call(K.win_cells, _tables(self._variant)[0], self._state, out)
        return tuple(_cell_at(i) for i in out[:n])

    @property
    def win_lines(self) -> tuple[tuple[Cell, ...], ...]:
        """Each line of four or more through the winning piece, its cells
        from one end to the other (the end with the smaller column, or row,
        first): one line, or two or more for a move that completes several
        at once (a double win).  Empty unless someone has won."""
        if self.result not in ("A", "B"):
            return ()
        ends = np.empty(8, dtype=np.int64)
        n = interpreted.call(K.win_runs, _tables(self._variant)[0], self._state, ends)
        lines = []
        for k in range(n):
            a, b = _cell_at(int(ends[2 * k])), _cell_at(int(ends[2 * k + 1]))
            dc, dr = (b.col > a.col) - (b.col < a.col), (b.row > a.row) - (b.row < a.row)
            steps = max(abs(b.col - a.col), abs(b.row - a.row))
            lines.append(tuple(Cell(a.col + s * dc, a.row + s * dr) for s in range(steps + 1)))
        return tuple(lines)

    def piece_at(self, cell: Cell | str) -> Piece | None:
        """``'A'``, ``'B'``, ``'ban'``, or ``None`` for an empty or forbidden cell.
        ``cell`` is a ``Cell`` or a cell name (``'d3'``); one off the board is
        a ``VariantError`` (a ``ValueError``), as ``Variant``'s own check."""
        if not isinstance(cell, Cell | str):
            raise TypeError(f"a cell is a Cell or a cell name like 'd3', not {cell!r} (Cell(col, row) from numbers)")
        cell = cell if isinstance(cell, Cell) else Cell.parse(cell)
        if not self._variant.contains(cell):
            raise VariantError(f"cell {cell} is off the {self._variant.size} board")
        return _PIECES.get(int(self._state[K.S_BOARD + _cell_index(cell)]))

    @property
    def cells(self) -> dict[Cell, Piece]:
        """The occupied cells and what each holds."""
        board = self._state[K.S_BOARD :]
        out: dict[Cell, Piece] = {}
        for c in range(self._variant.width):
            for r in range(self._variant.height):
                piece = _PIECES.get(int(board[c * 16 + r]))
                if piece is not None:
                    out[Cell(c, r)] = piece
        return out

    # -- presentation -------------------------------------------------------

    def render(self) -> str:
        """The board as plain text, top row first.

        ``A`` and ``B`` are the players' pieces, ``#`` a ban piece, ``X`` a
        forbidden cell, ``*`` the empty bonus cell, ``.`` an empty cell.
        """
        variant = self._variant
        cells = self.cells
        forbidden = set(variant.forbidden)
        symbol = {"A": "A", "B": "B", "ban": "#"}
        lines = []
        for r in range(variant.height - 1, -1, -1):
            row = []
            for c in range(variant.width):
                cell = Cell(c, r)
                if cell in cells:
                    row.append(symbol[cells[cell]])
                elif cell in forbidden:
                    row.append("X")
                elif cell == variant.bonus:
                    row.append("*")
                else:
                    row.append(".")
            lines.append(f"{r + 1:>2} " + " ".join(row))
        lines.append("   " + " ".join(column_letter(c) for c in range(variant.width)))
        return "\n".join(lines)

    def legend(self) -> str:
        """What ``render``'s symbols mean, for the ones on this board (""
        when only pieces and empty cells are shown)."""
        shown = set(self.render().split())
        words = [(sym, text) for sym, text in (("X", "forbidden cell"), ("*", "bonus cell (empty)"), ("#", "ban piece"))
                 if sym in shown]
        return "; ".join(f"{sym} {text}" for sym, text in words)

    def describe(self) -> str:
        """The board with its legend and one line of facts: who is to move
        (or how the game ended, in the words of every other screen: "A
        (white) wins: four in a row (a1 a2 a3 a4)", "Draw: the board is
        full"), the empty cells, the legal moves.  The text answer of
        ``c4lab show``."""
        if self.result:
            state = result_words(self.result, None, win_line=" ".join(c.name for c in self.win_line))
        else:
            state = f"{self.to_move} to move"
        legend = self.legend()
        return (
            f"{self.notation}\n{self.render()}\n" + (f"{legend}\n" if legend else "") +
            f"{state}; {self.empty_cells} empty cells; legal: "
            f"{' '.join(m.token for m in self.legal_moves()) or '-'}\n"
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (the ``c4lab show --json`` record)."""
        variant = self._variant
        return {
            "position": self.notation,
            "width": variant.width,
            "height": variant.height,
            "forbidden": [c.name for c in variant.forbidden],
            "bonus": None if variant.bonus is None else variant.bonus.name,
            "ply": self.ply,
            "to_move": self.to_move,
            "result": self.result,
            "win_line": [c.name for c in self.win_line],
            "win_lines": [[c.name for c in line] for line in self.win_lines],
            "legal_moves": [m.token for m in self.legal_moves()],
            "empty_cells": self.empty_cells,
            "cells": {c.name: p for c, p in sorted(self.cells.items())},
        }

    # -- access for agents that run their own kernels -------------------------

    def kernel_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """The read-only ``(geometry, state)`` arrays for kernel calls (they
        cannot be made writeable: copy the state to play on it)."""
        return _tables(self._variant)[0], self._state


#: The kernels ``Position``'s methods call (a process's first calls run
#: them interpreted: ``rules.interpreted``).
_KERNELS = (K.play_all, K.play, K.check, K.legal_codes, K.win_cells, K.win_runs)


@cache
def load_kernels() -> None:
    """Every kernel that ``Position``'s methods call, compiled (the first
    start after an install) or loaded from numba's cache, in this thread,
    and used compiled from now on (not interpreted, ``rules.interpreted``).

    A server's threads that may compile an agent call it first: numba
    compiles under one lock a process, so a request that met a kernel for
    the first time while an agent compiled in another thread waited for the
    whole of that compiling (on a first start the page of a game whose
    ``master`` moved first showed "Connecting..." for 6 s, its state
    waiting for ``win_line``).  Once a process: a thread that finds it done
    goes on at once."""
    interpreted.use_compiled(*_KERNELS)
    won = Position.parse("5x5/Bb1:b+eacacac").play("a")  # a ban, then a win
    for position in (won, Position.parse("4x4/Xa1:b")):
        position.to_dict()
        position.is_legal("b")
        position.describe()
    Position.parse("5x5/Bb1").play("b+c", "d")


@cache
def load_play() -> None:
    """The kernels that :meth:`Position.is_legal` and :meth:`Position.play`
    call, compiled (0.4 and 0.5-1.3 s on a first start) or loaded from
    numba's cache, and used compiled from now on.  A child compiling aside
    runs it after its main work (``c4lab.compile_aside``): a process's
    first calls run them interpreted (``rules.interpreted``), but a game
    that goes on compiles them, and then loads them from the cache."""
    interpreted.use_compiled(K.check, K.play)
    start = Position.parse("4x4")
    start.is_legal("a")
    start.play("a")


def _as_move(move: Move | str) -> Move:
    """``move``, or the move its token names; ``TypeError`` for anything
    else (a column number is ``Move(3)``, not ``3``)."""
    if isinstance(move, Move):
        return move
    if isinstance(move, str):
        return Move.parse(move)
    if isinstance(move, numbers.Integral) and not isinstance(move, bool):
        hint = f"column {move} is Move({move})"
    else:
        hint = f"a {type(move).__name__}"
    raise TypeError(f"a move is a Move or a token like 'd' or 'd+a', not {move!r} ({hint})")


def _letters(variant: Variant) -> str:
    return f"columns a..{column_letter(variant.width - 1)}"


def _reason(err: int, variant: Variant, state: np.ndarray, token: MoveToken) -> str:
    """Words for kernel error ``err`` on ``token`` in ``state`` (the state before it)."""
    letter = token.text[0]
    ban = token.text[2:] if token.ban is not None else ""
    if err == K.ERR_GAME_OVER:
        result = _RESULTS[int(state[K.S_RESULT])]  # the rules end a game by four in a row or a full board
        return f"the game is already over ({result_clause(result, None)})"
    if err == K.ERR_COLUMN_RANGE:
        return f"column {letter} is beyond the board's width {variant.width} ({_letters(variant)})"
    if err == K.ERR_COLUMN_FULL:
        return f"column {letter} is full"
    if err == K.ERR_BAN_RANGE:
        return f"ban column {ban} is beyond the board's width {variant.width} ({_letters(variant)})"
    if err == K.ERR_BAN_NOT_BONUS:
        row = int(state[K.S_HEIGHT + token.column])
        landing = Cell(token.column, row).name
        where = "this board has no bonus cell" if variant.bonus is None else f"the bonus cell is {variant.bonus}"
        return f"'+{ban}' but the piece lands on {landing}, not on the bonus cell ({where})"
    if err == K.ERR_BAN_AFTER_WIN:
        return f"the piece wins on the bonus cell, so no '+{ban}' ban is allowed"
    if err == K.ERR_BAN_BOARD_FULL:
        return f"the piece fills the last playable cell, so no '+{ban}' ban is allowed"
    if err == K.ERR_BAN_COLUMN_FULL:
        return f"ban column {ban} is full"
    raise AssertionError(f"unknown kernel error {err}")  # pragma: no cover
