"""Kaggle's ConnectX: our agents as ConnectX agents, theirs as our opponents.

ConnectX (``kaggle_environments.make("connectx")``) hands an agent an
*observation* (``board``: the ``rows x columns`` cells top row first, ``0``
empty, ``1`` and ``2`` the players' marks; ``mark``: whose turn it is) and a
*configuration* (``columns``, ``rows``, ``inarow``, timeouts) and wants a
column number back.  Two bridges:

* ``connectx_agent(spec)`` wraps any of our agents as such a function.  The
  observation has no move history, so the position is rebuilt from the cells
  (``position_from_cells``): an order of the moves that respects gravity and
  alternation is searched for.  When the wrapper is called turn after turn
  of one game it follows the game instead (our last position plus the one
  new opponent piece), so the true history, and tree reuse, are kept.
* the ``kaggle`` agent spec (``kaggle:agent=negamax``, ``kaggle:agent=random``)
  lets Kaggle's built-in agents play any of our variants.  ``to_connectx``
  writes our position as a ConnectX observation in which forbidden cells and
  ban pieces are a third, non-player value (``3``): Kaggle's gravity (the
  lowest cell holding ``0``) then matches ours ("gravity skips it") and its
  line checks stop at them, as ours do.  A bonus landing declines the ban.

``kaggle_environments`` is optional and imported only when a Kaggle agent
is built (``pip install jsonschema requests && pip install --no-deps
kaggle-environments==1.33.2``: its full dependency list pulls in gigabytes
that ConnectX never uses).
"""

from __future__ import annotations

import contextlib
import io
import random
from collections.abc import Callable, Mapping
from typing import Any

from c4lab.agents.base import Agent, Analysis, Budget, Param, check_budget, make_agent, register
from c4lab.game import play_answer
from c4lab.rules import Cell, Move, Piece, Position, Variant

#: ConnectX cell values.
EMPTY = 0
MARK_A = 1  # ConnectX's first player
MARK_B = 2
#: The value we give forbidden cells and ban pieces: neither empty nor a mark.
BLOCKED = 3

#: ConnectX needs only jsonschema and requests of the package's long dependency list.
INSTALL_HINT = "pip install jsonschema requests && pip install --no-deps kaggle-environments==1.33.2"

KAGGLE_AGENTS = ("random", "negamax")

ConnectXAgent = Callable[[Any, Any], int]


class ConnectXError(ValueError):
    """A ConnectX observation or configuration that our rules cannot take."""


# ---------------------------------------------------------------------------
# Positions from cells
# ---------------------------------------------------------------------------


def position_from_cells(variant: Variant, cells: Mapping[Cell, Piece]) -> Position:
    """A position of ``variant`` whose board holds exactly ``cells`` (``'A'``
    and ``'B'`` pieces), reached by legal play from the empty board.

    Our positions are a board plus the moves played on it, so a bare board
    needs a history: the moves are replayed column by column in an order in
    which every piece rests on the one below it (gravity; forbidden cells
    are skipped) and A and B alternate, A first (so A has as many pieces as
    B, or one more).  Such an order is found by a depth-first search over
    the column heights, remembering the dead ends; it prefers a column whose
    next piece goes to the opponent, which keeps both sides supplied and
    almost never backtracks.  Any order that fits gives the same board, the
    same side to move and the same future, so which one is found does not
    matter (only agents that look at the move list could tell).

    Raises ``ConnectXError`` for a board that no game reaches: ban pieces
    (where they came from is not on the board), a piece floating above an
    empty cell, piece counts that break alternation, or a line of four that
    the game would have stopped at.
    """
    stacks = _column_stacks(variant, cells)
    count_a = sum(p == "A" for p in cells.values())
    count_b = sum(p == "B" for p in cells.values())
    if count_a not in (count_b, count_b + 1):
        raise ConnectXError(
            f"{count_a} pieces of A and {count_b} of B: A moves first, so A has as many pieces as B or one more"
        )
    order = _interleave(stacks)
    if order is None:
        raise ConnectXError("no order of the moves fits both gravity and alternation for this board")
    try:
        position = Position(variant).play(*(Move(c) for c in order))
    except ValueError as exc:  # the game ended before the last piece
        raise ConnectXError(f"the board holds a finished game: {exc}") from None
    return position


def _column_stacks(variant: Variant, cells: Mapping[Cell, Piece]) -> list[list[Piece]]:
    """Each column's pieces, bottom up; checks gravity."""
    forbidden = set(variant.forbidden)
    stacks: list[list[Piece]] = []
    for col in range(variant.width):
        stack: list[Piece] = []
        gap: Cell | None = None
        for row in range(variant.height):
            cell = Cell(col, row)
            if cell in forbidden:
                if cell in cells:
                    raise ConnectXError(f"cell {cell} is forbidden but holds a piece")
                continue
            piece = cells.get(cell)
            if piece is None:
                gap = gap or cell
            elif piece not in ("A", "B"):
                raise ConnectXError(
                    f"cell {cell} holds a {piece} piece: a board does not say how ban pieces came"
                )
            elif gap is not None:
                raise ConnectXError(f"the piece on {cell} floats above the empty cell {gap}")
            else:
                stack.append(piece)
        stacks.append(stack)
    return stacks


def _interleave(stacks: list[list[Piece]]) -> list[int] | None:
    """Columns to play, one per piece, so that each column's pieces come
    bottom up and the sides alternate from A; ``None`` if there is none."""
    total = sum(len(s) for s in stacks)
    heights = [0] * len(stacks)
    order: list[int] = []
    dead: set[tuple[int, ...]] = set()

    def search() -> bool:
        if len(order) == total:
            return True
        key = tuple(heights)
        if key in dead:
            return False
        side = "A" if len(order) % 2 == 0 else "B"
        candidates = [c for c, s in enumerate(stacks) if heights[c] < len(s) and s[heights[c]] == side]
        # First the columns whose next piece then goes to the opponent, the
        # longest first (they are the hardest to fit in later).
        candidates.sort(
            key=lambda c: (
                heights[c] + 1 < len(stacks[c]) and stacks[c][heights[c] + 1] != side,
                len(stacks[c]) - heights[c],
            ),
            reverse=True,
        )
        for c in candidates:
            heights[c] += 1
            order.append(c)
            if search():
                return True
            order.pop()
            heights[c] -= 1
        dead.add(key)
        return False

    return order if search() else None


# ---------------------------------------------------------------------------
# ConnectX observations <-> positions
# ---------------------------------------------------------------------------


def _field(obj: Any, name: str) -> Any:
    """``obj.name`` or ``obj[name]``: Kaggle passes dicts with attribute
    access, people pass plain dicts."""
    if isinstance(obj, Mapping):
        if name not in obj:
            raise ConnectXError(f"the ConnectX data has no {name!r}")
        return obj[name]
    try:
        return getattr(obj, name)
    except AttributeError:
        raise ConnectXError(f"the ConnectX data has no {name!r}") from None


def _check_configuration(configuration: Any) -> tuple[int, int]:
    """``(columns, rows)`` of a ConnectX configuration our rules can play."""
    columns, rows, inarow = (int(_field(configuration, k)) for k in ("columns", "rows", "inarow"))
    if inarow != 4:
        raise ConnectXError(f"only four in a row is supported (ConnectX inarow={inarow})")
    try:
        Variant(columns, rows)
    except ValueError as exc:
        raise ConnectXError(f"ConnectX board {columns} columns x {rows} rows: {exc}") from None
    return columns, rows


def from_connectx(observation: Any, configuration: Any) -> Position:
    """Our position for a ConnectX observation and configuration.

    ``board[r * columns + c]`` is column ``c`` of row ``r`` counted from the
    top; ``1`` is A (ConnectX's first player), ``2`` is B.  A ``3`` (what
    ``to_connectx`` writes for forbidden cells and ban pieces) is read as a
    forbidden cell, so boards with forbidden cells and no bans round-trip.
    The history is rebuilt by ``position_from_cells``; ``observation.mark``
    must be the side to move.
    """
    columns, rows = _check_configuration(configuration)
    board = list(_field(observation, "board"))
    if len(board) != columns * rows:
        raise ConnectXError(f"the board has {len(board)} cells, not {rows} rows x {columns} columns")
    cells: dict[Cell, Piece] = {}
    forbidden: list[Cell] = []
    for index, value in enumerate(board):
        cell = Cell(index % columns, rows - 1 - index // columns)
        if value == MARK_A:
            cells[cell] = "A"
        elif value == MARK_B:
            cells[cell] = "B"
        elif value == BLOCKED:
            forbidden.append(cell)
        elif value != EMPTY:
            raise ConnectXError(f"cell {cell} holds {value!r}: ConnectX cells are 0 (empty), 1 or 2")
    position = position_from_cells(Variant(columns, rows, tuple(forbidden)), cells)
    mark = int(_field(observation, "mark"))
    expected = MARK_A if position.to_move == "A" else MARK_B
    if mark != expected:
        raise ConnectXError(f"the observation says mark {mark} is to move, but the board says mark {expected}")
    return position


def to_connectx(position: Position, *, timeout: float = 2.0) -> tuple[dict[str, Any], dict[str, Any]]:
    """The ConnectX ``(observation, configuration)`` of ``position`` for its
    side to move (plain dicts; see the module docstring for the encoding).

    Forbidden cells and ban pieces are ``3``: not empty, so Kaggle's gravity
    skips them, and not a mark, so they break lines.  ``timeout`` fills the
    configuration's ``timeout``/``actTimeout`` (seconds per move)."""
    variant = position.variant
    if position.is_over:
        raise ValueError(f"the game is over in {position.notation}: ConnectX has no observation for it")
    values = {"A": MARK_A, "B": MARK_B, "ban": BLOCKED}
    board = [EMPTY] * (variant.width * variant.height)

    def index(cell: Cell) -> int:
        return (variant.height - 1 - cell.row) * variant.width + cell.col

    for cell in variant.forbidden:
        board[index(cell)] = BLOCKED
    for cell, piece in position.cells.items():
        board[index(cell)] = values[piece]
    observation = {
        "board": board,
        "mark": MARK_A if position.to_move == "A" else MARK_B,
        "step": position.ply,
        "remainingOverageTime": 60,
    }
    configuration = {
        "columns": variant.width,
        "rows": variant.height,
        "inarow": 4,
        "timeout": timeout,
        "actTimeout": timeout,
        "agentTimeout": 60,
    }
    return observation, configuration


class _Struct(dict[str, Any]):
    """A dict whose keys are also attributes, like Kaggle's ``Struct``
    (its agents read ``obs.board`` and ``config.columns``)."""

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


# ---------------------------------------------------------------------------
# Our agents in ConnectX
# ---------------------------------------------------------------------------


def connectx_agent(spec: str | Agent, budget: Budget | None = None) -> ConnectXAgent:
    """A ConnectX agent function ``(observation, configuration) -> column``
    playing like ``spec`` (an agent spec such as ``"master:time=0.5"``, or an
    ``Agent``), with ``budget`` per move (the agent's default if ``None``;
    Kaggle allows ``configuration.actTimeout`` seconds, 2 by default).

    Between calls it remembers the position it left: when the new board is
    that one plus one opponent piece, it continues the game; otherwise (a new
    game, a skipped turn) it rebuilds the position from the cells and tells
    the agent ``new_game()``.

    A ``spec`` that is neither, or a ``budget`` that is no ``Budget``, is a
    ``TypeError`` saying what to pass, here rather than at the first move
    of a Kaggle game (which Kaggle reports as the agent's error).
    """
    if isinstance(spec, str):
        agent = make_agent(spec)
    elif isinstance(spec, Agent):
        agent = spec
    else:
        raise TypeError(f"connectx_agent takes an agent spec like 'master:time=0.5' or an Agent, "
                        f"not {type(spec).__name__} {spec!r:.60}")
    check_budget(budget)
    last: list[Position] = []  # the position after our previous move, if any

    def play(observation: Any, configuration: Any) -> int:
        position = _continue(last[0], observation, configuration) if last else None
        if position is None:
            position = from_connectx(observation, configuration)
            agent.new_game()
        # ConnectX has no bans: a bonus landing is impossible without a bonus cell.
        after = play_answer(position, agent.choose(position, budget), f"agent {agent.spec or type(agent).__name__!r}")
        last[:] = [] if after.is_over else [after]
        return after.moves[-1].column

    play.__name__ = f"c4lab_{agent.spec or type(agent).__name__}"
    return play


def _continue(previous: Position, observation: Any, configuration: Any) -> Position | None:
    """``previous`` plus the opponent's move that gives the observed board,
    or ``None`` if no single move does."""
    try:
        target, _ = to_connectx(previous)
    except ValueError:
        return None
    board = list(_field(observation, "board"))
    if (int(_field(configuration, "columns")), int(_field(configuration, "rows"))) != (
        previous.variant.width,
        previous.variant.height,
    ) or len(board) != len(target["board"]):
        return None
    changed = [i for i, (old, new) in enumerate(zip(target["board"], board)) if old != new]
    if len(changed) != 1:
        return None
    column = changed[0] % previous.variant.width
    move = Move(column)
    if not previous.is_legal(move):
        return None
    following = previous.play(move)
    if following.is_over or to_connectx(following)[0]["board"] != board:
        return None
    if int(_field(observation, "mark")) != (MARK_A if following.to_move == "A" else MARK_B):
        return None
    return following


# ---------------------------------------------------------------------------
# Kaggle's agents as ours
# ---------------------------------------------------------------------------


def kaggle_agent_function(name: str) -> ConnectXAgent:
    """Kaggle's built-in ConnectX agent ``name`` (``random`` or ``negamax``),
    imported on demand."""
    if name not in KAGGLE_AGENTS:
        raise ValueError(f"Kaggle's ConnectX agents are {', '.join(KAGGLE_AGENTS)}, not {name!r}")
    try:
        # Importing it loads every Kaggle environment and prints a line on
        # stdout for each that fails ("Loading environment open_spiel_env
        # failed: No module named 'pyspiel'" without OpenSpiel): that line
        # broke `c4lab move`'s output (a move, or one JSON record a line).
        with contextlib.redirect_stdout(io.StringIO()):
            import kaggle_environments
    except ImportError as exc:
        raise ImportError(
            f"the 'kaggle' agent needs the kaggle-environments package ({exc}); install it with: {INSTALL_HINT}"
        ) from exc
    agents = kaggle_environments.make("connectx").agents
    return agents[name]  # type: ignore[no-any-return]


@register(
    "kaggle",
    "Kaggle ConnectX's built-in agents (random; negamax: depth 4, no clock: a move takes what depth 4 "
    "takes, 0.08 s on 7x6, 0.33 s on 9x8, whatever the time budget), on any variant; needs kaggle-environments",
    [
        Param("agent", str, "negamax", "which Kaggle agent", choices=KAGGLE_AGENTS),
        Param("seed", int, None, "seed for the Kaggle agent's random tie-breaks (default: unseeded)"),
    ],
    requires=("kaggle_environments", INSTALL_HINT),
)
class KaggleAgent(Agent):
    """Asks one of Kaggle's ConnectX agents for a column.

    The position goes out through ``to_connectx``.  Kaggle's agents only
    consider columns whose top cell holds ``0``, so a column capped by a
    forbidden cell looks full to them; if only such columns are left, the
    legal column nearest the centre is played instead (the analysis says so).
    A bonus landing declines the ban: Kaggle's agents know nothing of bans.
    """

    def __init__(self, agent: str = "negamax", seed: int | None = None) -> None:
        self.name = agent
        self._function = kaggle_agent_function(agent)
        self._rng = None if seed is None else random.Random(seed)

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        if position.is_over:
            raise ValueError(f"the game is over in {position.notation}: there is no move to choose")
        observation, configuration = to_connectx(position)
        width = position.variant.width
        if not any(observation["board"][c] == EMPTY for c in range(width)):
            legal = sorted({m.column for m in position.legal_moves()}, key=lambda c: (abs(2 * c - width + 1), c))
            return Move(legal[0]), Analysis(
                note=f"kaggle {self.name}: only columns capped by a forbidden cell are left; nearest the centre"
            )
        column = int(self._call(_Struct(observation), _Struct(configuration)))
        move = Move(column) if 0 <= column < width else None
        if move is None or not position.is_legal(move):
            raise RuntimeError(f"Kaggle's {self.name} agent chose column {column}, illegal in {position.notation}")
        return move, Analysis(note=f"kaggle {self.name}")

    def _call(self, observation: _Struct, configuration: _Struct) -> Any:
        """The Kaggle agent's answer; with a seed, its draws from Python's
        global ``random`` come from our own generator (the global state is
        put back afterwards)."""
        if self._rng is None:
            return self._function(observation, configuration)
        saved = random.getstate()
        random.setstate(self._rng.getstate())
        try:
            return self._function(observation, configuration)
        finally:
            self._rng.setstate(random.getstate())
            random.setstate(saved)
