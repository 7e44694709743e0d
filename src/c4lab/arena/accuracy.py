"""``c4lab bench accuracy``: how often an agent's move keeps the position's value.

A move is *right* when it keeps the result that the best move keeps: a win
stays a win, a draw a draw (a loss is lost whatever is played, so every move
of a lost position is right, as in the usual definition).  The exact value
of every legal move comes from the solver (:meth:`Solver.analyse`); a
position whose every move the solver cannot score within its limit is left
out of the set, so a figure is never computed against a guess.  The
positions are labelled on every core (:func:`labelled`), in their order.

The sets:

* ``classic-begin`` and ``classic-middle``: the first positions of Pascal
  Pons' ``Test_L1_R2`` and ``Test_L2_R2`` (hard positions at the beginning
  and the middle of the classic game; ../shared/bench/classic);
* ``variants``: positions at ply 6 to 12 of random small boards (5x4 to
  7x6) with a forbidden cell and a bonus cell, reached by seeded random
  play.

OpenSpiel's C++ MCTS (``pyspiel.MCTSBot``: random rollouts, UCT) is the
yardstick where it is installed: it plays the plain classic sets at the
same time a move (it has no forbidden cells nor bonus).
"""

from __future__ import annotations

import itertools
import queue
import random
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from c4lab.adapters.openspiel import OpenSpielMCTS
from c4lab.adapters.openspiel import available as openspiel_available
from c4lab.agents.base import Agent, Budget, make_agent, parse_spec, refuse_a_person
from c4lab.cores import usable_cores
from c4lab.game import answer_move, failure_words
from c4lab.rules.move import Move
from c4lab.rules.position import Position
from c4lab.rules.variant import Variant
from c4lab.solver.api import Solver
from c4lab.solver.bench import default_directory, read_set

#: The classic sets: name -> benchmark file.
CLASSIC_SETS = {"classic-begin": "Test_L1_R2", "classic-middle": "Test_L2_R2"}
SETS = (*CLASSIC_SETS, "variants")

#: The solver's limit for one move of a candidate position (seconds).
SCORING_TIMEOUT = 20.0


@dataclass(frozen=True)
class ScoredPosition:
    """A position with the exact score of each of its legal moves."""

    position: Position
    scores: dict[Move, int]

    @property
    def best(self) -> int:
        return max(self.scores.values())

    @property
    def decides(self) -> bool:
        """Whether some move changes the result (the moves' scores do not
        all have one sign): a position that tests a player."""
        return len({_sign(v) for v in self.scores.values()}) > 1

    def keeps_value(self, move: Move) -> bool:
        """Whether ``move`` keeps the result (win, draw or loss) of the best move."""
        return _sign(self.scores[move]) == _sign(self.best)


@dataclass
class Tally:
    """One agent on one set."""

    right: int = 0
    played: int = 0
    wrong: list[str] = field(default_factory=list)  # "position: move" of the wrong ones ("?": the agent failed)
    failed: list[str] = field(default_factory=list)  # "position: what went wrong" where it did

    @property
    def share(self) -> float:
        return self.right / self.played if self.played else float("nan")


def _sign(score: int) -> int:
    return (score > 0) - (score < 0)


def scored(position: Position, solver: Solver, timeout: float = SCORING_TIMEOUT) -> ScoredPosition | None:
    """``position`` with every move's exact score, ``None`` if one of them
    could not be scored within ``timeout`` seconds (for the whole position)."""
    scores = solver.analyse(position, timeout=timeout, all_or_none=True)
    if any(score is None for score in scores.values()):
        return None
    return ScoredPosition(position, {move: score for move, score in scores.items() if score is not None})


def labelled(positions: Iterator[Position], threads: int = 1,
             timeout: float = SCORING_TIMEOUT) -> Iterator[ScoredPosition | None]:
    """Each of ``positions`` :func:`scored` within ``timeout`` (``None``
    for a position the solver could not score), in their order, on
    ``threads`` threads with a solver each (the search releases Python's
    lock; one position a thread is in flight).  A daemon thread still
    scoring when the caller stops (or presses Ctrl-C) ends with that
    position, or with the process."""
    if threads <= 1:
        solver = Solver()
        for position in positions:
            yield scored(position, solver, timeout)
        return
    jobs: queue.SimpleQueue[tuple[int, Position] | None] = queue.SimpleQueue()
    done: dict[int, ScoredPosition | None | BaseException] = {}
    ready = threading.Condition()

    def work() -> None:
        solver = Solver()
        while (job := jobs.get()) is not None:
            index, position = job
            try:
                result: ScoredPosition | None | BaseException = scored(position, solver, timeout)
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                result = exc
            with ready:
                done[index] = result
                ready.notify()

    workers = [threading.Thread(target=work, name=f"c4lab-labelling-{k}", daemon=True) for k in range(threads)]
    for worker in workers:
        worker.start()
    sent = 0
    try:
        for position in positions:
            jobs.put((sent, position))
            sent += 1
            if sent >= threads:
                break
        for index in itertools.count():
            if index >= sent:
                return
            with ready:
                while index not in done:
                    ready.wait(0.1)  # a wait that Ctrl-C interrupts
                result = done.pop(index)
            nxt = next(positions, None)
            if nxt is not None:
                jobs.put((sent, nxt))
                sent += 1
            if isinstance(result, BaseException):
                raise result
            yield result
    finally:
        for _ in workers:
            jobs.put(None)


def classic_positions(name: str, count: int, directory: Path | None = None) -> list[Position]:
    """The first ``count`` positions of a classic set (whose every move is
    not already decided: positions with one legal move are skipped)."""
    path = (directory or default_directory()) / CLASSIC_SETS[name]
    out = []
    for item in read_set(path):
        if len(item.position.legal_moves()) > 1:
            out.append(item.position)
        if len(out) == count:
            break
    return out


def variant_positions(count: int, seed: int) -> Iterator[Position]:
    """Positions at ply 6 to 12 of random boards from 5x4 to 7x6 with a
    forbidden cell and a bonus cell, reached by random play (seeded); as
    many as asked for, finished games and single-move positions skipped."""
    rng = random.Random(seed)
    made = 0
    while made < count:
        variant = Variant.enhanced(rng, width=(5, 7), height=(4, 6), bonus=True)
        position = Position(variant)
        plies = rng.randint(6, 12)
        while position.ply < plies and not position.is_over:
            position = position.play(rng.choice(position.legal_moves()))
        if position.is_over or len(position.legal_moves()) < 2:
            continue
        made += 1
        yield position


def first_labelled(
    positions: Iterator[Position], count: int, threads: int, timeout: float = SCORING_TIMEOUT,
    keep: Callable[[ScoredPosition], bool] = lambda item: True, said: Callable[[int], None] | None = None,
) -> list[ScoredPosition]:
    """The first ``count`` of ``positions`` that the solver scores within
    ``timeout`` and ``keep`` keeps (:func:`labelled` on ``threads``
    threads); ``said(n)`` after the n-th is kept (a progress line)."""
    out: list[ScoredPosition] = []
    for item in labelled(positions, threads, timeout):
        if item is None or not keep(item):
            continue
        out.append(item)
        if said is not None:
            said(len(out))
        if len(out) == count:
            break
    return out


def build_set(
    name: str, count: int, seed: int, progress: Callable[[str], None] | None = None, threads: int | None = None
) -> list[ScoredPosition]:
    """The positions of set ``name`` with their exact move scores, labelled
    on ``threads`` threads (by default one a core)."""
    candidates: Iterator[Position]
    if name == "variants":
        candidates = variant_positions(10 * count, seed)
    else:
        candidates = iter(classic_positions(name, 10 * count))
    said = None if progress is None else (lambda n: progress(f"{name}: scored {n}/{count}"))
    return first_labelled(candidates, count, threads or usable_cores(), said=said)


def measure(agent: Agent, positions: list[ScoredPosition], budget: Budget | None = None) -> Tally:
    """How many of ``positions`` ``agent`` answers with a value-keeping move.
    Where its answer is no legal move or it fails (an engine's program that
    hangs, exits or breaks the protocol, a network made for another board),
    the position is a miss (``?`` for its move), as a bad answer in a game
    is a lost game, and ``failed`` says what went wrong; the rest is still
    measured (one failure lost the whole run, every agent's figures)."""
    tally = Tally()
    who = f"agent {agent.spec!r}"
    for item in positions:
        tally.played += 1
        try:
            agent.new_game()
            move = answer_move(item.position, agent.choose(item.position, budget), who)
        except (Exception, SystemExit) as err:  # noqa: BLE001  (any failure of the agent, as the game loop)
            tally.wrong.append(f"{item.position.notation}: ?")
            tally.failed.append(f"{item.position.notation}: {failure_words(err, who)}")
            continue
        if item.keeps_value(move):
            tally.right += 1
        else:
            tally.wrong.append(f"{item.position.notation}: {move.token}")
    return tally


def run_accuracy(
    specs: list[str],
    *,
    sets: tuple[str, ...] = SETS,
    count: int = 50,
    seed: int = 1,
    openspiel: bool = True,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Every agent of ``specs`` on every set; OpenSpiel at the time of the
    first timed agent on the classic sets (when installed and ``openspiel``;
    not installed, or no agent timed, the record's ``note`` says so)."""
    agents: dict[str, Agent] = {}
    results: dict[str, dict[str, Tally]] = {}
    try:
        for spec in specs:  # a bad spec, or a person's, fails before the long part
            agents[spec] = refuse_a_person(make_agent(spec), "c4lab bench accuracy")
        built = {name: build_set(name, count, seed, progress) for name in sets}
        for spec, agent in agents.items():
            results[spec] = {}
            for name, positions in built.items():
                if progress is not None:
                    progress(f"{spec} on {name}")
                results[spec][name] = measure(agent, positions)
    finally:  # an engine's program ends with the run
        for agent in agents.values():
            agent.close()
    seconds = next((float(p["time"]) for _, p in map(parse_spec, specs) if "time" in p), None)
    measured: dict[str, Any] = {"sets": {name: len(positions) for name, positions in built.items()}, "results": results}
    openspiel = openspiel and any(name in CLASSIC_SETS for name in built)
    if openspiel and seconds is None:
        # Said too: ``c4lab bench accuracy master`` (no ``time=``) lost the row without a word.
        measured["note"] = (
            "no SPEC gives a time a move (time=T), the time OpenSpiel's MCTS, the yardstick, would play at: "
            "no row for it (--no-openspiel hides this note)"
        )
    elif openspiel and not openspiel_available():
        # Said, not left out silently: the docs promise the yardstick's row.
        measured["note"] = (
            "OpenSpiel's MCTS, the yardstick, is not installed: no row for it "
            "(python3 -m pip install open-spiel; --no-openspiel hides this note)"
        )
    elif openspiel:
        assert seconds is not None
        player = OpenSpielMCTS(seconds, seed)
        results[player.spec] = {}
        for name, positions in built.items():
            if name in CLASSIC_SETS:
                if progress is not None:
                    progress(f"{player.spec} on {name}")
                results[player.spec][name] = measure(player, positions)
    return measured


def report(measured: dict[str, Any]) -> str:
    """A table: one row per agent, the share of value-keeping moves per set.
    The agents' column is as wide as its longest spec (an engine program's
    ``engine:cmd=...`` pushed its row's shares out of their columns)."""
    names = list(measured["sets"])
    width = max([28, *(len(spec) + 2 for spec in measured["results"])])
    lines = [
        "share of moves that keep the value (exact move scores from the solver); in brackets, a set's positions",
        f"{'agent':<{width}}" + "".join(f"{n + ' (' + str(measured['sets'][n]) + ')':>22}" for n in names),
    ]
    failures = []
    for spec, per_set in measured["results"].items():
        cells = []
        for name in names:
            tally = per_set.get(name)
            if tally is None:
                cells.append(f"{'n/a':>22}")
                continue
            whole = tally.played and len(tally.failed) == tally.played
            cells.append(f"{'failed':>22}" if whole else f"{tally.share:>21.1%}" + ("*" if tally.failed else " "))
            if tally.failed:
                failures.append(f"{spec} on {name}: {len(tally.failed)} of {tally.played} positions failed"
                                f" (counted as misses), the first: {tally.failed[0]}")
        lines.append(f"{spec:<{width}}" + "".join(cells))
    lines += [f"* {line}" for line in failures]
    if measured.get("note"):
        lines.append(f"note: {measured['note']}")
    return "\n".join(lines)


def to_dict(measured: dict[str, Any]) -> dict[str, Any]:
    """The ``c4lab bench accuracy --json`` record: per agent and set, the
    moves that kept the value, the moves played, the share and the wrong ones."""
    record: dict[str, Any] = {
        "sets": measured["sets"],
        "results": {
            spec: {name: {"right": t.right, "played": t.played, "share": t.share, "wrong": t.wrong, "failed": t.failed}
                   for name, t in per.items()}
            for spec, per in measured["results"].items()
        },
    }
    if measured.get("note"):
        record["note"] = measured["note"]
    return record
