"""The one game loop: two agents move in turn from a start position to the
end of the game.

The arena, the terminal game, the Q-learning evaluation and the tests all
play through ``play_game``; what differs between them is a parameter:

- the *policy* for a bad answer of an agent: ``"raise"`` lets the error
  propagate (the agent's own exception, ``IllegalMoveError`` for an answer
  that is no move or not a legal one, ``SlowMoveError`` for a move over the
  time limit), for callers that trust their agents and want a traceback;
  ``"judge"`` turns it into a lost game, a *forfeit*, whose record says
  which side lost it and why (the arena: one broken agent must not stop a
  run);
- the time ``limit`` (with a ``margin``) a move may take, if any.  It is
  measured, not imposed: a compiled search cannot be interrupted in the
  middle, so a slow move is played out and then judged.  Agents that wait
  for something outside (engine programs) are told it
  (``Agent.set_move_limit``) and give up waiting at ``limit + margin``.
  With a limit, each agent gets ready (``Agent.prepare``: numba compiles
  its kernels, an engine gets its ``isready``) before the clock of its
  first move starts: compile time is not thinking time.
- hooks: ``on_turn(position)`` before an agent is asked for a move (the
  terminal game draws the board there) and ``on_move(turn)`` after a move
  is played.  An error in a hook is the caller's and always propagates.

Every move is timed, under either policy, and the record keeps the times.
An agent's own exceptions are classified too: a ``SlowMoveError`` it raises
(an engine that sent no move in time) is a ``time`` forfeit, an
``AgentError`` that is an ``IllegalMoveError`` (an engine's illegal
``bestmove``) an ``illegal`` one, anything else a ``crash`` (an
``IllegalMoveError`` from within an agent's own search is a bug, not a
move).
"""

from __future__ import annotations

import math
import numbers
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from c4lab.agents import Agent, AgentError, Budget
from c4lab.agents.base import AnswerError, check_budget
from c4lab.rules import IllegalMoveError, Move, Position

#: What a bad answer of an agent does: end the game with a forfeit, or raise.
Policy = Literal["judge", "raise"]
POLICIES: tuple[Policy, ...] = ("judge", "raise")


class SlowMoveError(TimeoutError):
    """A move that took longer than the limit plus its margin (raised under
    the ``"raise"`` policy; ``"judge"`` records a forfeit instead)."""


class NotReadyError(SlowMoveError):
    """An agent not ready within the time it has to get ready (an engine
    program's ``readyok``): a judged game records it as ``time``, whether
    it happens as the agent starts or before a move."""


@dataclass(frozen=True)
class Forfeit:
    """Who lost the game without finishing it, and why."""

    side: str  # "A" or "B"
    reason: str  # "crash", "illegal", "time"
    detail: str

    def to_dict(self) -> dict[str, str]:
        """The forfeit as plain JSON values (a results file's record)."""
        return {"side": self.side, "reason": self.reason, "detail": self.detail}


@dataclass(frozen=True)
class Turn:
    """One move as ``on_move`` sees it: ``side`` played ``move`` in
    ``before``, which gave ``after``; the agent thought ``seconds``."""

    before: Position
    side: str
    move: Move
    after: Position
    seconds: float


class MoveTimes(Mapping[str, tuple[float, ...]]):
    """The seconds each side took per move: ``"A"`` and ``"B"`` to a tuple
    of seconds, read-only.  A record's times are part of the record: a
    value, hashable and picklable as the record's positions are, not a dict
    of lists that whoever holds the record (or a copy of it, the arena's
    ``Game``) could change.  Equal to a mapping with the same tuples."""

    __slots__ = ("_times",)

    def __init__(self, times: Mapping[str, Iterable[float]] | None = None) -> None:
        self._times = {side: tuple(float(t) for t in seconds) for side, seconds in (times or {}).items()}

    def __getitem__(self, side: str) -> tuple[float, ...]:
        return self._times[side]

    def __iter__(self) -> Iterator[str]:
        return iter(self._times)

    def __len__(self) -> int:
        return len(self._times)

    def __hash__(self) -> int:
        return hash(frozenset(self._times.items()))

    def __repr__(self) -> str:
        return f"MoveTimes({self._times!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (MoveTimes, (self._times,))


@dataclass(frozen=True)
class GameRecord:
    """A finished game: who played A and B (their specs), where it started
    and ended, the seconds each side took per move, and the forfeit that
    ended it early, if one did.  A value, as its positions are: ``times``
    given as a dict of lists is kept as ``MoveTimes`` (tuples), so a
    record is hashable and nothing of it changes after the fact."""

    a: str
    b: str
    start: Position
    final: Position
    times: MoveTimes = field(default_factory=MoveTimes)
    forfeit: Forfeit | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.times, MoveTimes):
            object.__setattr__(self, "times", MoveTimes(self.times))

    @property
    def result(self) -> str:
        """"A", "B" or "draw"; a forfeit gives the game to the other side."""
        if self.forfeit is not None:
            return "B" if self.forfeit.side == "A" else "A"
        return self.final.result or "draw"

    @property
    def winner(self) -> str | None:
        """The name of the side that won (``a`` or ``b``: its spec, or what
        ``play_game`` named an agent built without one), or None for a
        draw: a non-empty string, so ``if record.winner`` tells a decisive
        game from a draw."""
        result = self.result
        return self.a if result == "A" else self.b if result == "B" else None


def play_game(
    a: Agent,
    b: Agent,
    start: Position,
    budget: Budget | None = None,
    a_spec: str = "",
    b_spec: str = "",
    *,
    policy: Policy = "raise",
    limit: float | None = None,
    margin: float = 0.0,
    on_turn: Callable[[Position], None] | None = None,
    on_move: Callable[[Turn], None] | None = None,
) -> GameRecord:
    """Play ``start`` to the end, ``a`` moving for A and ``b`` for B (each
    asked with ``budget``), and deal with a bad answer as ``policy`` says.
    ``a_spec`` and ``b_spec`` name the sides in the record (the agents'
    own specs by default; an agent built directly, with no spec, is named
    by its class, ``RandomAgent``, and ``RandomAgent (A)``/``(B)`` when
    both sides would have the same name; never ``""``, so that a decisive
    game's ``winner`` is never read as false, like a draw's ``None``).  ``TypeError`` for an agent that is not an
    ``Agent`` (a spec is built by ``make_agent``) or a start that is not a
    ``Position``, or a budget that is not a ``Budget``; ``ValueError`` for
    a finished start (its record would count a result nobody played, as
    ``paired_match`` says), a ``limit`` that is not a positive number of
    seconds or a ``margin`` that is not 0 or more.  These are the caller's
    mistakes, raised before any move under either policy: ``"judge"``
    blamed them on player A as a forfeit."""
    _check_players(a, b, start)
    if start.is_over:
        raise ValueError(f"play_game: the start ({start.notation}) is a finished game: there is nothing to play")
    _check_settings(budget, limit, margin)
    if policy not in POLICIES:
        raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {policy!r}")
    agents = {"A": a, "B": b}
    specs = {"A": a_spec or a.spec, "B": b_spec or b.spec}
    names = _names(agents, specs)
    times: dict[str, list[float]] = {"A": [], "B": []}
    forfeit = _get_ready(agents, specs, start, policy, limit, margin)
    if forfeit is not None:
        return GameRecord(names["A"], names["B"], start, start, MoveTimes(times), forfeit)
    position = start
    while not position.is_over:
        side = position.to_move
        assert side is not None
        agent = agents[side]
        who = f"player {side} ({specs[side] or type(agent).__name__})"
        if on_turn is not None:
            on_turn(position)
        began = time.perf_counter()
        try:
            answer = agent.choose(position, budget)
        except (Exception, SystemExit) as err:  # any failure of the agent (sys.exit too): raised, or it loses its game
            if policy == "raise":
                raise
            if isinstance(err, SlowMoveError):  # it gave up waiting (an engine): a slow move
                times[side].append(round(time.perf_counter() - began, 5))
                forfeit = Forfeit(side, "time", f"{_move_by(position, who)}: {err}")
            elif isinstance(err, IllegalMoveError) and isinstance(err, AgentError):  # an engine's bestmove
                times[side].append(round(time.perf_counter() - began, 5))  # timed, as an agent's illegal answer is
                forfeit = Forfeit(side, "illegal", f"{_move_by(position, who)}: {err}")
            else:
                forfeit = Forfeit(side, "crash", f"move {position.ply + 1} of the game: {crash_detail(err, who)}")
            break
        elapsed = time.perf_counter() - began
        times[side].append(round(elapsed, 5))  # 10 µs: as the arena saves it, so a record reads back equal
        try:
            after = _judge(position, answer, who, elapsed, limit, margin)
        except SlowMoveError as err:
            if policy == "raise":
                raise
            forfeit = Forfeit(side, "time", str(err))
            break
        except IllegalMoveError as err:
            if policy == "raise":
                raise
            forfeit = Forfeit(side, "illegal", f"move {position.ply + 1} of the game: {err}")
            break
        if on_move is not None:
            on_move(Turn(position, side, after.moves[-1], after, elapsed))
        position = after
    return GameRecord(names["A"], names["B"], start, position, MoveTimes(times), forfeit)


def _names(agents: dict[str, Agent], specs: dict[str, str]) -> dict[str, str]:
    """The names of the sides in a game's record, by side: the spec (given
    or the agent's own), else the agent's class name; a side named by its
    class gets its letter too when the other side has the same name, so
    that a record's ``winner`` says which side won."""
    names = {side: specs[side] or type(agent).__name__ for side, agent in agents.items()}
    if names["A"] == names["B"]:
        names = {side: name if specs[side] else f"{name} ({side})" for side, name in names.items()}
    return names


def _check_players(a: object, b: object, start: object) -> None:
    """``TypeError`` saying what to pass unless ``a`` and ``b`` are agents
    and ``start`` a position: a spec or a position string would otherwise
    fail deep in the loop, on an attribute it lacks."""
    for side, agent in (("A", a), ("B", b)):
        if not isinstance(agent, Agent):
            hint = f" (make_agent({agent!r}) builds it)" if isinstance(agent, str) else ""
            raise TypeError(f"play_game: player {side} must be an Agent, not {agent!r}{hint}")
    if not isinstance(start, Position):
        hint = f" (Position.parse({start!r}) reads it)" if isinstance(start, str) else ""
        raise TypeError(f"play_game: the start must be a Position, not {start!r}{hint}")


def _check_settings(budget: Budget | None, limit: float | None, margin: float) -> None:
    """``check_budget``'s ``TypeError``; ``ValueError`` for a ``limit`` that
    is not a positive number of seconds (or ``None``) or a ``margin`` that
    is not a number of seconds, 0 or more: each named, with what to pass."""
    check_budget(budget, "play_game: the budget")

    def seconds(value: object) -> bool:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)

    if limit is not None and not (seconds(limit) and limit > 0):
        raise ValueError(f"play_game: limit must be a positive number of seconds (or None: no limit), not {limit!r}")
    if not (seconds(margin) and margin >= 0):
        raise ValueError(f"play_game: margin must be a number of seconds, 0 or more, not {margin!r}")


def _get_ready(
    agents: dict[str, Agent], specs: dict[str, str], start: Position, policy: Policy,
    limit: float | None, margin: float,
) -> Forfeit | None:
    """Each agent's ``set_move_limit``, ``new_game`` and, when a limit is
    judged, ``prepare`` (before any clock runs).  An agent that fails here
    (an engine program that exited) loses the game under ``"judge"``: the
    forfeit is returned (``time`` for one that gave up waiting, an engine
    not ready within its ``timeout``; ``crash`` otherwise); under
    ``"raise"`` its error propagates."""
    for side, agent in agents.items():
        try:
            agent.set_move_limit(limit + margin if limit is not None else None)
            agent.new_game()
            if limit is not None:
                agent.prepare(start)
        except (Exception, SystemExit) as err:
            if policy == "raise":
                raise
            return unready_forfeit(side, f"player {side} ({specs[side] or type(agent).__name__})", err)
    return None


def _move_by(position: Position, who: str) -> str:
    """Which move ``who`` was to play in ``position``, for a forfeit's
    detail: the game's move number, said as the game's ("move 3 of player
    A" read as A's third move, where it was A's second)."""
    return f"move {position.ply + 1} of the game, by {who}"


def _judge(position: Position, answer: object, who: str, elapsed: float, limit: float | None, margin: float) -> Position:
    """The position after ``answer``, or the error that makes it a bad one:
    ``SlowMoveError`` over the time limit, ``IllegalMoveError`` for an
    answer that is not a move (``None``, a number, ...) or not a legal one.
    ``who`` names the agent in the message."""
    if limit is not None and elapsed > limit + margin:
        raise SlowMoveError(
            f"{_move_by(position, who)}, took {elapsed:.2f} s (limit {limit:g} s + {margin:g} s)"
        )
    return play_answer(position, answer, who)


def play_answer(position: Position, answer: object, who: str) -> Position:
    """The position after ``answer``, the move an agent chose, or
    ``IllegalMoveError`` naming ``who`` for an answer that is not a move
    (``None``, a number, ...) or not a legal one.  Everything that takes an
    agent's word for a move (the game loop, ``c4lab move``, ``c4lab
    engine``) checks it here: an agent of one's own may answer anything."""
    if not isinstance(answer, Move | str):
        raise IllegalMoveError(
            position.notation, repr(answer), f"{who} answered {answer!r}, which is not a move"
        )
    try:
        return position.play(answer)
    except IllegalMoveError as err:
        raise IllegalMoveError(err.position, err.move, f"{err.reason} (played by {who})") from None


def answer_move(position: Position, answer: object, who: str) -> Move:
    """The move ``answer``, an agent's choice, names, checked as
    :func:`play_answer` checks it but not played: for the callers that
    only say the move (``c4lab move``, ``c4lab engine``, the accuracy
    count).  The legality test is the rules' ``check`` kernel, which a
    first start compiles in 0.4 s where ``play`` takes 1.3 s (this
    machine, 2026-12-02), at the end of a first ``c4lab move``; since
    2026-12-06 a process's first ones run interpreted, compiling nothing
    (``rules.interpreted``).  An
    answer that is no legal move goes through :func:`play_answer`, whose
    error says why (the column is full, the ban is not allowed...)."""
    if isinstance(answer, Move | str):
        try:
            move = answer if isinstance(answer, Move) else Move.parse(answer)
        except ValueError:  # no move token: play_answer says so
            pass
        else:
            if position.is_legal(move):
                return move
    return play_answer(position, answer, who).moves[-1]  # raises, naming the fault


def unready_forfeit(side: str, who: str, err: BaseException) -> Forfeit:
    """The forfeit of ``who`` (on ``side``), whose getting ready for a game
    failed with ``err``: ``time`` for one not ready in its time (an engine's
    ``readyok``), ``crash`` otherwise, both "before the first move"."""
    reason = "time" if isinstance(err, SlowMoveError) else "crash"
    return Forfeit(side, reason, "before the first move: " + crash_detail(err, who))


def failure_words(err: BaseException, who: str) -> str:
    """What went wrong with ``who``, an agent asked for a move, in one
    line: an illegal answer's own words (``answer_move``'s, which name the
    agent already), else :func:`crash_detail`.  For the callers where a
    failed agent loses a position or a game but the run goes on: the
    accuracy count, a server's room, the terminal game."""
    return str(err) if isinstance(err, IllegalMoveError) else crash_detail(err, who)


def crash_detail(err: BaseException, who: str) -> str:
    """The error ``who`` raised and where (its innermost frame) -- or, for an
    ``AgentError`` (an engine program's fault, told in full by its message)
    and an ``AnswerError`` (``analyse`` returned no ``(Move, Analysis)``),
    the message alone: the line of c4lab that noticed it says nothing."""
    if isinstance(err, AgentError | AnswerError):
        return f"{who} failed: {err}"
    last = traceback.extract_tb(err.__traceback__)[-1:]
    where = f" at {last[0].filename}:{last[0].lineno}" if last else ""
    return f"{who} raised {type(err).__name__}: {err}{where}"
