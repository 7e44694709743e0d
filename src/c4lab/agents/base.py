"""What every agent is: the ``Agent`` protocol, its ``Budget`` and
``Analysis``, and the registry behind agent specs (``NAME[:key=value,...]``).

An agent gets a ``Position`` and a ``Budget`` and returns a legal ``Move``;
search agents also return an ``Analysis`` (per-move statistics, expected
value, principal variation) so that UIs can show hints and evaluations.
Agents register themselves by name with their parameters; ``make_agent``
builds one from a spec string, checking every key and value.  The registry
finds the agent families through the ``c4lab.agents`` entry points (see
``pyproject.toml``): it imports each listed module once, on first use, and
the module registers its agents.  So the registry depends on no agent, and
an adapter or another package adds agents by declaring an entry point.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib.util
import inspect
import math
import numbers
import os
import re
import sys
import threading
import traceback
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from c4lab.rules.errors import quote
from c4lab.rules.move import Move
from c4lab.rules.sides import game_over_error
from c4lab.rules.variant import integer

if TYPE_CHECKING:  # pragma: no cover
    from c4lab.rules.position import Position
    from c4lab.rules.variant import Variant


class SpecError(ValueError):
    """An agent spec that names no agent, or has a bad key or value."""


class AgentError(RuntimeError):
    """An agent's failure that its message tells in full: something outside
    this process went wrong (an engine program exited, hung or broke its
    protocol).  A judged game quotes the message alone, without the line of
    c4lab's source that raised it (which would say nothing about the fault)."""


class AnswerError(TypeError):
    """An agent's ``analyse`` that returned something other than ``(Move,
    Analysis)`` (``Agent.analysed``), or an ``Analysis`` or ``MoveStats``
    whose field is not what it documents (a value outside [0, 1], a
    principal variation of strings): the fault is in what it returned, not
    where c4lab noticed it (``c4lab move --json``, the engine's ``info``
    line, the page's hint)."""


#: The bound of every integer an agent's kernels count with (64 bits).
INT_LIMIT = 2**63
#: How a spec writes a number, in ASCII digits only: Python's ``int()`` and
#: ``float()`` also take spaces around it, ``_`` between digits and the
#: digits of every script (``seed=1_0``, ``seed= 1``, ``seed=١``), so one
#: agent had many specs, which the arena keeps and compares as text.
SPEC_INT = re.compile(r"[+-]?[0-9]+")
SPEC_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:inf|infinity|nan)", re.IGNORECASE)
#: The longest time budget: a year (a clock's waits overflow far beyond it;
#: a search meant to run for ever counts iterations instead).
MAX_SECONDS = 365 * 24 * 3600


def seed_value(seed: object, agent: str) -> int:
    """``seed`` as the integer an agent seeds its generator with: a fresh
    one for ``None`` (a new game each run), else an integer (NumPy's too).
    ``ValueError`` naming ``agent`` for anything else: a class built
    directly, not from a spec, gets no spec's checks, and a string or a float
    otherwise failed deep in the kernels' seeding, or seeded quietly."""
    if seed is None:
        return int.from_bytes(os.urandom(8), "little")
    return integer(seed, f"{agent}: seed")


@dataclass(frozen=True, kw_only=True)
class Budget:
    """How much an agent may think about one move.

    ``time`` is in seconds of wall-clock time, ``iterations`` counts the
    agent's own unit of work (playouts, nodes); ``None`` means "no limit from
    this side".  An agent with neither uses its own default.  Both are
    keywords: ``Budget(1000)`` read as 1,000 seconds where 1,000 iterations
    were meant (a ``TypeError`` now).
    """

    time: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        time = self.time
        if time is not None and (
            isinstance(time, bool) or not isinstance(time, numbers.Real) or not 0 < time <= MAX_SECONDS
        ):
            raise ValueError(f"a time budget must be a positive number of seconds, at most a year "
                             f"({MAX_SECONDS:,}), not {time!r}")
        if self.iterations is not None:
            iterations = integer(self.iterations, "an iteration budget")
            if not 1 <= iterations < INT_LIMIT:  # the kernels count in 64 bits
                raise ValueError(f"an iteration budget must be from 1 to {INT_LIMIT - 1:,}, not {iterations!r}")
            object.__setattr__(self, "iterations", iterations)


def _whole(value: object, what: str) -> int:
    """``value`` as an ``int`` (NumPy's too); ``AnswerError`` naming ``what`` else."""
    try:
        return integer(value, what)
    except ValueError as exc:
        raise AnswerError(str(exc)) from None


def _count(value: object, what: str) -> int | None:
    """``None``, or ``value`` as an ``int`` of 0 or more."""
    if value is None:
        return None
    count = _whole(value, what)
    if count < 0:
        raise AnswerError(f"{what} must be 0 or more, not {count}")
    return count


#: How far past 0 or 1 an expected score may be and still be taken (as 0 or 1): float rounding.
ROUNDING = 1e-9


def _unit_value(value: object, what: str) -> float | None:
    """``None``, or ``value`` as a ``float`` in [0, 1]: an expected score
    (win 1, draw 0.5, loss 0); NaN, a percentage or a string is refused.  A
    value a rounding error past an end (``1.0000000000000002``, from a
    mean of wins) is that end: no search's arithmetic is refused."""
    if value is None:
        return None
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not -ROUNDING <= float(value) <= 1 + ROUNDING):
        raise AnswerError(f"{what} must be an expected score for the side to move in [0, 1] "
                          f"(win 1, draw 0.5, loss 0), not {value!r:.60}")
    return min(1.0, max(0.0, float(value)))


@dataclass(frozen=True)
class MoveStats:
    """What a search learnt about one legal move."""

    move: Move
    visits: int | None = None
    value: float | None = None  # expected score for the side to move, in [0, 1]
    score: int | None = None  # exact or heuristic score, when the agent has one

    def __post_init__(self) -> None:
        """Each field checked (``AnswerError`` naming it), NumPy's numbers
        made Python's: they go out as JSON and in the engine's ``info``."""
        if not isinstance(self.move, Move):
            raise AnswerError(f"MoveStats.move must be a Move (like Move.parse('d')), not {self.move!r:.60}")
        object.__setattr__(self, "visits", _count(self.visits, "MoveStats.visits"))
        object.__setattr__(self, "value", _unit_value(self.value, "MoveStats.value"))
        if self.score is not None:
            object.__setattr__(self, "score", _whole(self.score, "MoveStats.score"))


@dataclass(frozen=True)
class Analysis:
    """An agent's view of the position it was asked about.

    ``value`` is the expected score of the side to move in [0, 1] (win 1,
    draw 0.5, loss 0), when the agent estimates one.
    """

    moves: Sequence[MoveStats] = ()  # a tuple once made (a list or any iterable is taken)
    value: float | None = None
    pv: Sequence[Move] = ()  # a tuple once made
    iterations: int | None = None
    seconds: float | None = None
    note: str | None = None  # how the move was found, when it matters (a fallback, a book move)
    fallback: str | None = None  # the agent that chose the move instead, when this one could not

    def __post_init__(self) -> None:
        """Each field checked as the class documents it (``AnswerError``
        naming the field and what it got), so that an agent of one's own
        that fills one wrongly fails where it builds its answer, not in
        what shows it (a JSON ``NaN``, a traceback of ``c4lab move`` or
        ``c4lab engine``); ``moves`` and ``pv`` may be any iterables (a
        list), kept as tuples, and NumPy's numbers become Python's."""
        for name, kind in (("moves", MoveStats), ("pv", Move)):
            items = getattr(self, name)
            if isinstance(items, str | bytes) or not isinstance(items, Iterable):
                raise AnswerError(f"Analysis.{name} must be a tuple of {kind.__name__}, not {items!r:.60}")
            items = tuple(items)
            wrong = next((item for item in items if not isinstance(item, kind)), None)
            if wrong is not None:
                hint = f" (Move.parse({wrong!r}) reads a token)" if isinstance(wrong, str) and kind is Move else ""
                raise AnswerError(f"Analysis.{name} must hold {kind.__name__} objects, not {wrong!r:.60}{hint}")
            object.__setattr__(self, name, items)
        object.__setattr__(self, "value", _unit_value(self.value, "Analysis.value"))
        object.__setattr__(self, "iterations", _count(self.iterations, "Analysis.iterations"))
        if self.seconds is not None:
            seconds = self.seconds
            if isinstance(seconds, bool) or not isinstance(seconds, numbers.Real) or not 0 <= float(seconds) < math.inf:
                raise AnswerError(f"Analysis.seconds must be a number of seconds, 0 or more, not {seconds!r:.60}")
            object.__setattr__(self, "seconds", float(seconds))
        for name in ("note", "fallback"):
            text = getattr(self, name)
            if text is not None and not isinstance(text, str):
                raise AnswerError(f"Analysis.{name} must be a str or None, not {text!r:.60}")

    def to_dict(self) -> dict[str, Any]:
        """The analysis as plain JSON values, moves as tokens: the
        ``analysis`` of ``c4lab move --json``."""
        return {
            "note": self.note,
            "value": self.value,
            "pv": [m.token for m in self.pv],
            "iterations": self.iterations,
            "seconds": self.seconds,
            "moves": [
                {"move": s.move.token, "visits": s.visits, "value": s.value, "score": s.score}
                for s in self.moves
            ],
        }


def check_arguments(position: object, budget: object) -> None:
    """``TypeError`` saying what to pass unless ``position`` is a
    ``Position`` and ``budget`` a ``Budget`` or ``None``."""
    from c4lab.rules.position import Position  # lazy: the rules engine (numba) only once an agent is asked

    if not isinstance(position, Position):
        hint = f" (Position.parse({position!r}))" if isinstance(position, str) else ""
        raise TypeError(f"an agent is asked about a Position{hint}, not {type(position).__name__} {position!r:.60}")
    check_budget(budget)


def check_budget(budget: object, what: str = "an agent's budget") -> None:
    """``TypeError`` saying what to pass unless ``budget`` is a ``Budget``
    or ``None``: at once where a budget is kept for later moves
    (``connectx_agent``), not at the first move.  ``what`` names it as the
    caller knows it (``"play_game: the budget"``)."""
    if budget is not None and not isinstance(budget, Budget):
        raise TypeError(f"{what} is a Budget (Budget(iterations=N) or Budget(time=SECONDS)) or None, "
                        f"not {type(budget).__name__} {budget!r:.60}")


def check_not_over(position: Position) -> None:
    """``ValueError`` for a finished game: it has no move to choose.  The
    words are the built-in agents' own, so that an agent of one's own, which
    is promised a game in play (docs/writing-agents.md), is refused the same
    way, and not with what its code does on no legal move (``min() arg is
    an empty sequence``)."""
    if position.is_over:
        raise game_over_error(position.notation, position.result)


def _checking(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` (an agent's ``analyse`` or ``choose``) after
    ``check_arguments`` and ``check_not_over``."""

    @functools.wraps(method)
    def checked(self: Agent, position: Position, budget: Budget | None = None) -> Any:
        check_arguments(position, budget)
        check_not_over(position)
        return method(self, position, budget)

    checked.checks_its_arguments = True  # type: ignore[attr-defined]
    return checked


class StopRequest:
    """A request that the search under way finish now and answer the best
    move it has found, as its deadline reached now would (``Agent.request_stop``:
    the engine protocol's ``stop``, a driver's "move now").

    Set from another thread while the search runs, read by the search where
    it already reads its clock: ``bool(request)`` between the chunks of its
    work, and ``request.flag`` (one ``uint8``, 1 once set) inside a compiled
    kernel, which runs without the GIL and sees it set.  A search that has
    a stop of its own (the exact solver's ``Solver.cancel``) registers it
    for its duration (``calls``).  The engine clears it before each ``go``,
    before the search starts, so that a ``stop`` sent at once after ``go``
    is not lost."""

    __slots__ = ("_calls", "flag")

    def __init__(self) -> None:
        import numpy as np  # lazy: the registry loads without NumPy

        self.flag = np.zeros(1, dtype=np.uint8)
        self._calls: list[Callable[[], object]] = []

    def set(self) -> None:
        """Ask for the stop (any thread), and call what a search under way
        registered (``calls``)."""
        self.flag[0] = 1
        for call in list(self._calls):
            call()

    @contextlib.contextmanager
    def calls(self, stop: Callable[[], object]) -> Iterator[None]:
        """Within the block, ``set`` also calls ``stop`` (a search's own way
        to stop: ``Solver.cancel``); called at once if the request is set
        already.  ``stop`` must be safe to call twice, from any thread."""
        self._calls.append(stop)
        try:
            if self:
                stop()
            yield
        finally:
            self._calls.remove(stop)

    def clear(self) -> None:
        """Withdraw the request: the next search runs to its budget."""
        self.flag[0] = 0

    def __bool__(self) -> bool:
        """Whether a stop is asked for."""
        return bool(self.flag[0])

    def __repr__(self) -> str:
        return f"<StopRequest {'set' if self else 'clear'}>"


class Agent(ABC):
    """A player.  Subclasses implement ``analyse``; the rest has defaults.

    Every registered agent family passes the project's conformance tests
    (``tests/agents/test_conformance.py`` in the source tree): legal moves
    on every kind of board, the time budget kept, the same move from the
    same seed, an ``Analysis`` of the documented shape, and a life in the
    arena's worker processes."""

    #: The spec that built this agent (set by ``make_agent``).
    spec: str = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Every agent's own ``analyse`` and ``choose`` first check what they
        are given, so that ``agent.analyse(position, 100)`` or
        ``agent.choose("7x6")`` is a ``TypeError`` that says what to pass,
        not an ``AttributeError`` from inside a search, and a finished game
        a ``ValueError`` (an agent of one's own is checked too)."""
        super().__init_subclass__(**kwargs)
        for name in ("analyse", "choose"):
            own = cls.__dict__.get(name)
            if own is not None and not getattr(own, "checks_its_arguments", False) \
                    and not getattr(own, "__isabstractmethod__", False):
                setattr(cls, name, _checking(own))

    @abstractmethod
    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        """A legal move for ``position``, with what the agent knows about it
        (an empty ``Analysis()`` if nothing).  A finished game never gets
        here: the call is a ``ValueError`` before this code runs."""

    #: The analysis of the move ``choose`` answered last (None before, or
    #: where an agent chose without one): what a game's screen says of a
    #: move found another way (a fallback's).
    last_analysis: Analysis | None = None

    def choose(self, position: Position, budget: Budget | None = None) -> Move:
        """The move alone: what the arena and the game loop ask.  An agent
        with a cheaper way to its move than a full analysis may override it
        (``minimax`` skips the full-window root scores).  Its analysis is
        kept in ``last_analysis``."""
        move, self.last_analysis = self.analysed(position, budget)  # the move: anything; the caller judges it
        if isinstance(move, str):  # a token, as the arena and ``c4lab move`` take it: the caller gets a Move
            try:
                return Move.parse(move)
            except ValueError:
                pass  # not a token: the caller's judgement names it
        return move  # type: ignore[return-value]

    def analysed(self, position: Position, budget: Budget | None = None) -> tuple[object, Analysis]:
        """``analyse``'s answer, checked for its shape: ``TypeError``, saying
        what came back, unless it is a pair whose second half is an
        ``Analysis`` (the move itself is the caller's to judge:
        ``c4lab.game.play_answer``).  For callers that show the analysis
        (``c4lab move``, ``c4lab engine``), where an agent of one's own
        that returned something else would otherwise fail inside c4lab."""
        return checked_answer(self, self.analyse(position, budget))

    def new_game(self) -> None:
        """Forget anything tied to the previous game (trees, histories)."""

    def check_board(self, variant: Variant) -> None:
        """``ValueError`` that says why, if this agent cannot play on
        ``variant`` at all (what it learnt is for another board).  The
        arena, the terminal game and the server's rooms ask before a game,
        so that such a game is refused with one line, not forfeited at its
        first move.  By default: every board."""

    def plays_instead(self, variant: Variant) -> str | None:
        """The spec of the agent whose moves this one plays on ``variant``
        instead of its own (a network learnt for another board falls back
        to ``heuristic``), or None: its own moves.  The arena says so
        before its games, so that a ranking never silently measures another
        agent."""
        return None

    def prepare(self, start: Position) -> None:
        """Get ready to move on ``start``'s kind of board before any clock
        runs, so that a judged move counts thinking only.  By default: one
        throwaway move of a fresh agent of the same spec, once per kind of
        board in this process (``warm_once``), which compiles the
        kernels (or loads them from numba's cache).  A fresh agent, not this
        one: a seeded agent's games must not depend on whether its process
        had warmed up before.  An engine program overrides it (``position``
        and ``isready``: the program gets ready in its own process)."""
        if self.spec and not self.is_human:
            warm_once(self.spec, start)

    def expect(self, text: str) -> None:
        """``text``, a position this process is about to read (and play its
        moves, which compiles the rules' kernels on a first start) and then
        ask this agent to move in: start in the background what the agent's
        first move there will compile.  By default nothing."""

    def compile_rest(self, start: Position) -> None:
        """Compile (or load from numba's cache) what this agent may run
        later in a game on ``start``'s kind of board but a warm-up's
        throwaway moves on ``start`` do not reach; ``warm_up`` calls it
        after them.  By default nothing: the first moves reach everything."""

    @property
    def stop_request(self) -> StopRequest:
        """This agent's ``StopRequest``: a search checks it where it
        checks its clock (an agent that never does keeps to its budget, as
        before).  Made on first use, so that an agent of one's own needs no
        ``super().__init__()``; an agent that searches with others (``master``,
        a fallback) shares its own with them (``share_stop``)."""
        request = self.__dict__.get("_stop_request")
        if request is None:
            request = self.__dict__.setdefault("_stop_request", StopRequest())
        return request

    def request_stop(self) -> None:
        """Ask the search under way, from another thread, to finish now and
        answer the best move found so far (``stop`` in the engine protocol).
        The request stays until ``stop_request.clear()``: a search that starts
        afterwards finishes at once too (its least: one chunk, one depth)."""
        self.stop_request.set()

    def share_stop(self, *others: Agent) -> None:
        """Make ``others`` (the searches this agent runs: ``master``'s UCT
        and minimax, a fallback) stop when this agent is asked to: they, and
        the agents they share theirs with (``perfect``'s ``master``'s UCT),
        read this agent's ``StopRequest`` from now on."""
        self.__dict__.setdefault("_stop_sharers", []).extend(others)
        for other in others:
            other._take_stop(self.stop_request)

    def _take_stop(self, request: StopRequest) -> None:
        """Read ``request`` from now on, and so do the agents this one shares its own with."""
        self.__dict__["_stop_request"] = request
        for other in self.__dict__.get("_stop_sharers", ()):
            other._take_stop(request)

    def set_move_limit(self, seconds: float | None) -> None:
        """The longest a move may take before it loses the game (a judge's
        limit plus its margin), or ``None`` for no such limit.  A search in
        this process is judged after it returns, so by default this does
        nothing; an agent that waits for something
        outside (an engine program) stops waiting then."""

    def close(self) -> None:
        """Let go of what the agent holds outside this process (an engine's
        program); the agent is not used afterwards."""

    @property
    def is_human(self) -> bool:
        """Does a person choose this agent's moves (the terminal game's
        player)?  The terminal and the server then wait for the person's
        move, and ``prepare`` warms nothing up."""
        return False

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.spec or '?'}>"


# ---------------------------------------------------------------------------
# The registry of agent specs
# ---------------------------------------------------------------------------


#: The types a spec's ``key=value`` is read as (``Param.convert``).
SPEC_TYPES = (int, float, bool, str)


@dataclass(frozen=True)
class Param:
    """One ``key=value`` an agent spec accepts."""

    name: str
    type: type
    default: Any
    help: str
    choices: tuple[Any, ...] = ()
    nullable: bool = False  # "none" is a value (always so when the default is None)
    minimum: float | None = None  # the smallest value allowed (numbers)
    above: bool = False  # ``minimum`` itself is not allowed (a time must be > 0)
    maximum: float | None = None  # the largest value allowed (numbers; a time: ``MAX_SECONDS``)

    def __post_init__(self) -> None:
        """``TypeError`` at the ``Param(...)`` line for a type a spec cannot
        give: a spec's values are text, read with ``int``, ``float``, the
        words of a ``bool`` or as they are (``str``); so not ``int | None``
        (a default of ``None`` says "may be left out") nor ``list``."""
        if self.type not in SPEC_TYPES:
            shown = getattr(self.type, "__name__", None) or repr(self.type)
            raise TypeError(
                f"Param({self.name!r}, {shown}, ...): a spec gives a parameter as text, so its type is one of "
                "int, float, bool or str (one that may be left out has the default None, and 'none' in a spec "
                f"gives None: Param({self.name!r}, int, None, ...))"
            )

    def convert(self, agent: str, raw: str) -> Any:
        """The spec's text ``raw`` as this parameter's value (``none`` as
        ``None`` where allowed), checked against its choices and bounds;
        ``SpecError`` naming ``agent`` and the parameter otherwise."""
        if (self.nullable or self.default is None) and raw.lower() == "none":
            return None  # e.g. master:time=none,iterations=20000,depth=6
        try:
            if self.type is bool:
                if raw.lower() in ("1", "true", "yes", "on"):
                    value: Any = True
                elif raw.lower() in ("0", "false", "no", "off"):
                    value = False
                else:
                    raise ValueError(raw)
            else:
                written = {int: SPEC_INT, float: SPEC_FLOAT}.get(self.type)
                if written is not None and not written.fullmatch(raw):
                    raise ValueError(raw)
                value = self.type(raw)
        except ValueError:
            raise SpecError(
                f"agent {agent!r}: {self.name}={quote(raw)} is not a valid {self.type.__name__}"
            ) from None
        self.check(agent, value, quote(raw))
        return value

    def check(self, agent: str, value: Any, shown: str) -> None:
        """``SpecError`` naming ``agent`` and the parameter unless ``value``
        (written ``shown`` in the message) obeys this parameter's bounds and
        choices: a spec's value, and a default (``register`` checks them)."""
        if isinstance(value, float) and not math.isfinite(value):
            raise SpecError(f"agent {agent!r}: {self.name} must be a finite number, not {shown}")
        if isinstance(value, int) and not -INT_LIMIT <= value < INT_LIMIT:  # the kernels count in 64 bits
            raise SpecError(f"agent {agent!r}: {self.name} must fit in a 64-bit integer (below {INT_LIMIT:,}), "
                            f"not {shown}")
        low = self.minimum
        if low is not None and isinstance(value, (int, float)) and (value < low or (self.above and value == low)):
            bound = f"greater than {low:g}" if self.above else f"at least {low:g}"
            raise SpecError(f"agent {agent!r}: {self.name} must be {bound}, not {shown}")
        high = self.maximum
        if high is not None and isinstance(value, (int, float)) and value > high:
            raise SpecError(f"agent {agent!r}: {self.name} must be at most {high:,.10g}, not {shown}")
        if self.choices and value not in self.choices:
            allowed = ", ".join(str(c) for c in self.choices)
            raise SpecError(f"agent {agent!r}: {self.name} must be one of {allowed}, not {shown}")


@dataclass(frozen=True)
class AgentInfo:
    """A registered agent: its name, what it is, its parameters, its factory.
    ``defaults`` (a preset's own values) is read-only: the registry hands
    out these very objects (``agent_infos``), and a change to one changed
    what its name builds everywhere in the process."""

    name: str
    help: str
    params: tuple[Param, ...]
    factory: Callable[..., Agent]
    defaults: Mapping[str, str] = field(default_factory=dict)  # for named presets
    requires: tuple[str, str] | None = None  # (a module it imports, how to install it)

    def __post_init__(self) -> None:
        object.__setattr__(self, "defaults", MappingProxyType(dict(self.defaults)))

    @property
    def unavailable(self) -> str | None:
        """Why the agent cannot be made here (its package is missing, and how
        to install it), ``None`` when it can."""
        if self.requires is None:
            return None
        module, install = self.requires
        try:
            if importlib.util.find_spec(module) is not None:
                return None
        except (ImportError, ValueError):  # a module blocked or broken: not usable either
            pass
        return f"needs {module}, which is not installed ({install})"


_REGISTRY: dict[str, AgentInfo] = {}


def register(
    name: str,
    help: str,
    params: Iterable[Param] = (),
    presets: dict[str, tuple[str, dict[str, str]]] | None = None,
    requires: tuple[str, str] | None = None,
) -> Callable[[Callable[..., Agent]], Callable[..., Agent]]:
    """Class or function decorator: make ``factory(**params)`` reachable as
    the spec ``name``.  ``presets`` adds more names that fix some parameters
    (``{"hard": ("UCT, 750 iterations", {"iterations": "750"})}``);
    ``requires`` names an optional module the agent needs and how to install
    it (the agent is listed as unavailable without it)."""

    def wrap(factory: Callable[..., Agent]) -> Callable[..., Agent]:
        params_tuple = tuple(params)
        for spec_name in (name, *(presets or {})):
            _check_name(spec_name)
        _check_defaults(name, params_tuple)
        _check_factory(name, factory, params_tuple)
        _add(AgentInfo(name, help, params_tuple, factory, requires=requires))
        for preset, (preset_help, values) in (presets or {}).items():
            _add(AgentInfo(preset, preset_help, params_tuple, factory, dict(values)))
        return factory

    return wrap


def _check_name(name: object) -> None:
    """``ValueError`` at the ``@register`` line for a name no spec can
    give: empty, or holding a space or one of the spec's own marks (``:``
    ``,`` ``=``): ``register("uct:x", ...)`` was taken, and
    ``make_agent("uct:x")`` then read ``x`` as a parameter."""
    if not isinstance(name, str) or not name or any(ch.isspace() or ch in ":,=" for ch in name):
        raise ValueError(f"agent name {name!r}: a spec names an agent with one word, without spaces, ':', ',' or "
                         "'=' (like 'myagent' or 'my-agent')")


def _check_defaults(name: str, params: tuple[Param, ...]) -> None:
    """``TypeError`` at the ``@register`` line for a parameter whose
    default is not a value of its type (``None`` is always one: it makes the
    parameter one that may be left out; a ``float`` takes an ``int``, not a
    ``bool``): ``make_agent`` passes the default as it is, so
    ``Param("depth", int, "x", ...)`` built the agent with ``depth="x"``
    whenever a spec left it out, and the error came from deep in a game."""
    seen: set[str] = set()
    for param in params:
        if param.name in seen:  # a spec's key=value sets one parameter: the second declaration hid the first
            raise TypeError(f"agent {name!r}: Param({param.name!r}, ...) is declared twice")
        seen.add(param.name)
        default = param.default
        if default is None:
            continue
        kinds: tuple[type, ...] = (int, float) if param.type is float else (param.type,)
        if isinstance(default, bool) != (param.type is bool) or not isinstance(default, kinds):
            def article(kind: type) -> str:  # "an int", "a str"
                return f"{'an' if kind.__name__[0] in 'aeiou' else 'a'} {kind.__name__}"

            raise TypeError(
                f"agent {name!r}: Param({param.name!r}, {param.type.__name__}, {default!r}, ...): its default "
                f"is {article(type(default))}, not {article(param.type)} (the default is a value of the "
                f"parameter's type, or None for one that may be left out)"
            )
        try:  # the default obeys the parameter's own rules, or a spec that leaves it out builds what one giving it
            param.check(name, default, quote(str(default)))  # could not ("n=3" refused, the default 3 taken)
        except SpecError as exc:
            rule = str(exc).removeprefix(f"agent {name!r}: ")
            raise TypeError(f"agent {name!r}: Param({param.name!r}, ...): its default {default!r} breaks its own "
                            f"rule ({rule})") from None


def _check_factory(name: str, factory: Callable[..., Agent], params: tuple[Param, ...]) -> None:
    """``TypeError`` at the ``@register`` line unless ``factory`` takes
    every declared parameter by its name and needs no other: ``make_agent``
    passes exactly the ``Param``s, and a mismatch otherwise surfaced as
    ``__init__() got an unexpected keyword argument`` in a traceback at the
    first spec that named the agent."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # a builtin or a C callable: nothing to compare
        return
    accepted = signature.parameters
    kinds = {p.kind for p in accepted.values()}
    if inspect.Parameter.VAR_KEYWORD not in kinds:
        by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        missing = [p.name for p in params if p.name not in accepted or accepted[p.name].kind not in by_name]
        if missing:
            raise TypeError(
                f"agent {name!r}: {factory.__name__} takes no keyword parameter {', '.join(missing)}, which "
                f"its Param list declares (make_agent passes each by name: def __init__(self, {missing[0]}=...))"
            )
    declared = {p.name for p in params}
    required = [key for key, p in accepted.items()
                if p.default is p.empty and key not in declared and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if required:
        raise TypeError(
            f"agent {name!r}: {factory.__name__} needs {', '.join(required)}, which no Param declares "
            f"(a spec can give only declared parameters: add Param({required[0]!r}, ...) or a default)"
        )


def _origin(factory: Callable[..., Agent]) -> str:
    """Where ``factory`` was defined: ``module.QualifiedName``."""
    return f"{getattr(factory, '__module__', '?')}.{getattr(factory, '__qualname__', repr(factory))}"


def _add(info: AgentInfo) -> None:
    """Add ``info`` under its name.  The same class defined again (a
    notebook's cell run a second time, a module reloaded) replaces its
    earlier self; another one under a taken name is a ``ValueError`` naming
    both, so that the one to rename is plain (a script's ``random`` meets
    c4lab's only when the built-in agents load)."""
    if not _families_loaded and not _loading and not str(getattr(info.factory, "__module__", "")).startswith("c4lab."):
        # a script's or a notebook's agent, registered before any lookup: c4lab's own are loaded first, so
        # that a taken name is refused here, at its @register line (loaded after, c4lab's own module raised,
        # and every lookup of any agent failed from then on)
        _load_agent_families()
    old = _REGISTRY.get(info.name)
    if old is not None and _origin(old.factory) != _origin(info.factory):
        raise ValueError(f"agent name {info.name!r} is registered twice: by {_origin(old.factory)} and by "
                         f"{_origin(info.factory)}; give one of them another name")
    _REGISTRY[info.name] = info


#: Agents that no entry point registers, and how a script gets them: each is
#: registered by importing its module, which only local commands do (a
#: server must never start programs), so that ``make_agent("engine:cmd=...")``
#: from Python is not a bare "unknown agent".
REGISTERED_ON_IMPORT = {
    "engine": "it is registered by `import c4lab.engine.client` (local use only: a server, and so the page of "
              "`c4lab play`, never starts programs; the arena, `c4lab move` and `c4lab play --tui` import it "
              "themselves)",
}

#: The entry-point group that lists the modules registering agents.
ENTRY_POINT_GROUP = "c4lab.agents"
_families_loaded = False
_loading = False  # the entry points' modules are being imported (their agents register as they are)


def _load_agent_families() -> None:
    """Import every module of the ``c4lab.agents`` entry points (once):
    c4lab's own first, then other packages' (plugins), so that a plugin
    that takes a built-in name is the one refused, whatever the order of
    the entry points' names (one sorted before c4lab's made c4lab's own
    module raise, and every command failed)."""
    global _families_loaded, _loading
    if _families_loaded or _loading:
        return
    found = entry_points(group=ENTRY_POINT_GROUP)
    if not any(ep.value.startswith("c4lab.") for ep in found):
        raise RuntimeError(
            "c4lab's agents are not registered: its package metadata is missing; "
            "install it (python3 -m pip install -e .) rather than running it from the source folder"
        )
    _loading = True
    try:
        _load_entry_points(sorted(found, key=lambda ep: (not ep.value.startswith("c4lab."), ep.name)))
    finally:
        _loading = False
    _families_loaded = True


def _load_entry_points(found: list[Any]) -> None:
    """Import the modules of ``found`` in order: c4lab's own raising is
    c4lab's bug (raised); a plugin's fault is one warning on stderr."""
    for ep in found:
        if ep.value.startswith("c4lab."):
            ep.load()  # the module registers its agents as it is imported
            continue
        try:  # another package's: its fault must not stop every command, c4lab's own agents included
            ep.load()
        except Exception as exc:  # noqa: BLE001 - any error of a plugin's import is reported, one line
            where = _plugin_frame(exc)
            broken_plugins[ep.name] = (f"the agent plugin {ep.name!r} ({ep.value}) did not load{where}: "
                                       f"{type(exc).__name__}: {exc}")
            print(f"warning: {broken_plugins[ep.name]}; its agents are left out", file=sys.stderr)


#: Agent plugins (entry points of other packages) whose import failed: the
#: entry point's name, and one line that says why and where.
broken_plugins: dict[str, str] = {}


def _plugin_frame(exc: BaseException) -> str:
    """`` at FILE:LINE``: the deepest frame of ``exc`` outside c4lab and
    the import machinery (the plugin's own line), or nothing.  Code with no
    file (``<string>``: the ``__init__`` a dataclass writes, ``Param``'s)
    is no one's line: it named ``<string>:12`` for a ``Param`` refused at
    the plugin's ``@register`` line."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # c4lab's own folder
    found = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith("<"):
            continue
        if "importlib" not in frame.filename and not os.path.abspath(frame.filename).startswith(package + os.sep):
            found = f" at {frame.filename}:{frame.lineno}"
    return found


def agent_infos() -> list[AgentInfo]:
    """Every registered agent, by name."""
    _load_agent_families()
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def parse_spec(spec: str) -> tuple[str, dict[str, str]]:
    """Split ``NAME[:key=value,...]`` into the name and its raw values.
    ``SpecError`` for a string that is no spec, ``TypeError`` for what is
    not a string (a caller's slip, as everywhere in the API)."""
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a str like 'hard' or 'uct:iterations=1000', not {spec!r:.60} "
                        f"(type {type(spec).__name__})")
    if not spec:
        raise SpecError("an agent spec must be a non-empty string like 'hard' or 'uct:iterations=1000'")
    name, _, rest = spec.partition(":")
    if not name:
        raise SpecError(f"agent spec {spec!r} has no agent name before ':'")
    values: dict[str, str] = {}
    if rest or spec.endswith(":"):
        for i, item in enumerate(rest.split(",")):
            key, eq, value = item.partition("=")
            if not key or not eq:
                raise SpecError(
                    f"agent spec {spec!r}: item {i} ({item!r}) is not key=value"
                )
            if key in values:
                raise SpecError(f"agent spec {spec!r}: {key!r} is given twice")
            values[key] = value
    return name, values


def make_agent(spec: str, **context: Any) -> Agent:
    """The agent named by ``spec``, e.g. ``make_agent("random:seed=3")``.

    ``context`` passes things that are not parameters but that some agents
    need (the human agent's input and output functions); agents that do not
    take them ignore them.  A parameter of the agent given there
    (``make_agent("uct", seed=3)``) is a ``SpecError`` that shows the spec
    meant (``"uct:seed=3"``): parameters are checked in the spec only.
    A ``spec`` that is not a string (``None``, an agent already built) is
    a ``TypeError`` that says what to pass.
    """
    _load_agent_families()
    name, raw = parse_spec(spec)
    info = _REGISTRY.get(name)
    if info is None:
        known = ", ".join(sorted(_REGISTRY))
        broken = "".join(f"; {line}" for line in broken_plugins.values())
        where = f": {REGISTERED_ON_IMPORT[name]}" if name in REGISTERED_ON_IMPORT else ""
        meant = next((n for n in sorted(_REGISTRY) if n.lower() == name.strip().lower()), None)
        hint = f" (did you mean {meant!r}? names are lower case, with no spaces)" if meant and meant != name else ""
        if not hint and (near := difflib.get_close_matches(name.strip().lower(), sorted(_REGISTRY), n=1, cutoff=0.7)):
            hint = f" (did you mean {near[0]!r}?)"  # review: `arena uct hrd` gave the list alone
        raise SpecError(f"unknown agent {name!r}{hint}{where} (known agents: {known}){broken}")
    if info.unavailable:
        raise SpecError(f"agent {name!r} {info.unavailable}")
    known_params = {p.name: p for p in info.params}
    misplaced = [key for key in context if key in known_params]
    if misplaced:  # make_agent("uct", seed=3): the factory got seed twice, a TypeError that named no way out
        given = ", ".join(f"{key}={context[key]!r}" for key in misplaced)
        spec_meant = spec + ("," if raw else ":") + ",".join(f"{key}={context[key]}" for key in misplaced)
        raise SpecError(f"make_agent({spec!r}, {given}): an agent's parameters go in its spec: "
                        f"make_agent({spec_meant!r})")
    values: dict[str, Any] = {p.name: p.default for p in info.params}
    for key, value in {**info.defaults, **raw}.items():
        param = known_params.get(key)
        if param is None:
            allowed = ", ".join(known_params) or "none"
            spaced = " (a spec has no spaces: uct:iterations=100,seed=1)" if key != key.strip() else ""
            raise SpecError(f"agent {name!r} has no parameter {key!r}{spaced} (parameters: {allowed})")
        values[key] = param.convert(name, value)
    accepted = inspect.signature(info.factory).parameters
    extra = {k: v for k, v in context.items() if k in accepted}
    agent = info.factory(**values, **extra)
    agent.spec = spec
    return agent


def refuse_a_person(agent: Agent, where: str) -> Agent:
    """``agent``, unless a person chooses its moves (``human``): then a
    ``SpecError`` saying that ``where`` (the arena, a benchmark) plays
    agents only, the agent closed.  Such a run has no one to ask: the
    human agent read standard input and ended it in a traceback."""
    if agent.is_human:
        agent.close()
        raise SpecError(f"agent {agent.spec!r} is a human: {where} plays agents only")
    return agent


# ---------------------------------------------------------------------------
# Warming up: numba's compile time is not thinking time
# ---------------------------------------------------------------------------

_warmed: set[str] = set()
_warmed_lock = threading.Lock()


def board_kind(spec: str, start: Position) -> str:
    """What a warm-up is done once for: the agent's name (not its options)
    and the board's size and bonus (not its cells), which is what the
    compiled kernels are specialised on (``uct@9x8B``)."""
    variant = start.variant
    return f"{spec.split(':', 1)[0]}@{variant.width}x{variant.height}{'B' if variant.bonus else ''}"


def claim(kind: str) -> bool:
    """True the first time ``kind`` (a :func:`board_kind`) is claimed for a
    warm-up in this process: numba keeps what it compiled for the process's
    lifetime, so one warm-up each is enough."""
    with _warmed_lock:
        if kind in _warmed:
            return False
        _warmed.add(kind)
        return True


#: The throwaway moves of a warm-up: one on iterations, one on time (a timed
#: search can take other compiled paths: a solver with a deadline).
WARM_UP_BUDGETS = (Budget(iterations=1), Budget(time=0.01))


def warm_up(spec: str, start: Position) -> None:
    """Throwaway moves of a fresh ``spec`` agent on ``start``
    (``WARM_UP_BUDGETS``), each checked and played as a judge does: the
    agent's kernels and the rules' are compiled, or loaded from numba's
    cache, and then what it may run later (``Agent.compile_rest``).  The
    rules' ``check`` and ``play`` are compiled first and used compiled from
    then on (``position.load_play``): a process runs its first positions'
    kernels interpreted (``rules.interpreted``), and a long run (a training
    run's games, a match) would otherwise compile them in its middle, after
    its notice.  A warm-up only: any error is left to the real move."""
    from c4lab.rules.position import load_play  # lazy: base is imported without numba's kernels

    with contextlib.suppress(Exception):
        load_play()
        agent = make_agent(spec)
        try:
            if not agent.is_human:
                for budget in WARM_UP_BUDGETS:
                    move = agent.choose(start, budget)
                    if start.is_legal(move):
                        start.play(move)
                agent.compile_rest(start)
        finally:
            agent.close()


def warm_once(spec: str, start: Position) -> None:
    """:func:`warm_up`, the first time this process meets ``spec``'s kind of
    board (:func:`board_kind`); at once otherwise."""
    if claim(board_kind(spec, start)):
        warm_up(spec, start)


def checked_answer(agent: object, answer: object) -> tuple[object, Analysis]:
    """``answer``, what ``agent.analyse`` returned, if it is a pair whose
    second half is an ``Analysis``; else an ``AnswerError`` saying what came
    back (``Agent.analysed``; the server's rooms check a computer player's
    answer so too)."""
    if not isinstance(answer, tuple) or len(answer) != 2:
        raise AnswerError(f"{type(agent).__name__}.analyse must return (Move, Analysis), not {answer!r}")
    if not isinstance(answer[1], Analysis):
        swapped = isinstance(answer[0], Analysis)
        raise AnswerError(
            f"{type(agent).__name__}.analyse must return (Move, Analysis), not an analysis {answer[1]!r} "
            + ("(the pair is the other way round: the move first)" if swapped else "(Analysis() is an empty one)")
        )
    return answer
