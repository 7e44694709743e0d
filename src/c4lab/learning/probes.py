"""Probe sets: positions with the exact value of every move, to judge a
learner move by move.

A probe set for a board is made once: positions reached from the empty
board by uniformly random legal moves, at a ply drawn uniformly from
``plies``, kept only when *some move changes the result* (the legal moves
do not all keep the same sign of score: a position where every move wins,
or every move loses, tests nothing).  Every legal move of a kept position
is scored by c4lab's own solver (on the classic board down to the 12-ply
database), so a learner's move is right when it keeps the value of the best
move (``ScoredPosition.keeps_value``, as ``c4lab bench accuracy`` counts).
A position the solver cannot score within its time is left out.

The set is stored as JSON (``~/.c4lab/probes/`` by default) and read back
on the next run, so a learning curve is always measured on the same
positions and they are labelled once.  The learner never trains on them
(it only ever plays from the empty board).

Which plies, and how many positions, depend on how quickly the solver
labels them (:func:`default_plan`): 200 positions at plies 0-16 would take
the solver about an hour on 7x6/Bd1 and 45 minutes on 7x6/Xd4 (an
opening position's moves often need more than its 10 s there, and such a
position is left out after those 10 s), 15 and 30 s at plies 10-20.  The
candidates are labelled on every core this process may use, each thread
with a solver of its own, and kept in the order they were drawn, so the
set is the one a single thread would make; a candidate is given up at
its first move the solver cannot score in time (``all_or_none``).  100
probes of 8x6/Xc3/Bf4: 582 s before, 183 s on one core, 134 s on two.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path

from c4lab import atomic
from c4lab.arena.accuracy import ScoredPosition, first_labelled
from c4lab.cores import usable_cores
from c4lab.rules import Move, Position, Variant

PROBE_DIR = Path.home() / ".c4lab" / "probes"
FORMAT = "c4lab-probes-1"
#: The solver's limit for all the moves of one candidate position (seconds).
TIMEOUT = 10.0
#: Probe sets by board size (``default_plan``): boards up to ``EARLY_CELLS``
#: playable cells (and the classic board, scored down to its 12-ply
#: database) are probed from the empty board, larger ones from ply 10; up
#: to ``FULL_CELLS`` cells get 200 positions, up to ``MAX_CELLS`` 100 (on
#: 8x6/Xc3/Bf4 these take the solver 2 to 3 minutes at plies 10-20),
#: larger boards none (they are judged by play).
EARLY_CELLS = 30
FULL_CELLS = 42
MAX_CELLS = 48
EARLY_PLIES = (0, 16)
LATE_PLIES = (10, 20)


class ProbeError(ValueError):
    """A probe-set file that cannot be read."""


def random_position(variant: Variant, plies: tuple[int, int], rng: random.Random) -> Position | None:
    """A position at a random ply of ``plies`` reached by random legal moves,
    ``None`` when the game ended before it."""
    position = Position(variant)
    target = rng.randint(*plies)
    while position.ply < target:
        if position.is_over:
            return None
        position = position.play(rng.choice(position.legal_moves()))
    return None if position.is_over else position


def default_plan(variant: Variant) -> tuple[int, tuple[int, int]]:
    """How many probe positions ``variant`` gets by default, and at which
    plies: ``(0, plies)`` where the solver cannot label them in minutes."""
    cells = variant.playable_cells
    plies = EARLY_PLIES if cells <= EARLY_CELLS or variant == Variant.classic() else LATE_PLIES
    count = 200 if cells <= FULL_CELLS else (100 if cells <= MAX_CELLS else 0)
    return count, plies


def candidates(variant: Variant, plies: tuple[int, int], rng: random.Random, count: int) -> Iterator[Position]:
    """Distinct positions of ``variant`` at plies ``plies``
    (:func:`random_position`); ``ValueError`` after ``200 * count`` draws."""
    seen: set[str] = set()
    tries = 0
    while True:
        tries += 1
        if tries > 200 * count:
            raise ValueError(f"cannot find {count} probe positions on {variant} at plies {plies[0]}-{plies[1]}")
        position = random_position(variant, plies, rng)
        if position is None or position.notation in seen:
            continue
        seen.add(position.notation)
        yield position


def make(variant: Variant, count: int, seed: int, plies: tuple[int, int] = EARLY_PLIES,
         progress: Callable[[str], None] | None = None, threads: int | None = None) -> list[ScoredPosition]:
    """``count`` distinct probe positions of ``variant`` (see the module),
    labelled on ``threads`` threads (by default one a core)."""
    rng = random.Random(seed)
    said = None if progress is None else (
        lambda n: progress(f"probe positions of {variant}: {n}/{count} labelled by the solver"))
    return first_labelled(candidates(variant, plies, rng, count), count, threads or usable_cores(), TIMEOUT,
                          keep=lambda item: item.decides, said=said)


def default_path(variant: Variant, count: int, seed: int, plies: tuple[int, int]) -> Path:
    name = variant.notation.replace("/", "_")
    return PROBE_DIR / f"{name}-{count}-{seed}-p{plies[0]}-{plies[1]}.json"


def save(path: Path, items: list[ScoredPosition]) -> None:
    """Write a probe set as JSON (atomically)."""
    record = {"format": FORMAT, "positions": [
        {"position": i.position.notation, "scores": {m.token: v for m, v in i.scores.items()}} for i in items
    ]}
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_text(path, json.dumps(record, indent=0))


def _score(value: object) -> int:
    """A move's score as ``save`` writes it: a whole number.  ``int()`` took
    1.7 for 1 and failed on Infinity with an ``OverflowError`` nobody
    caught (a traceback in ``c4lab train ntuple``)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a score is a whole number, not {value!r}")
    return value


def load(path: Path, variant: Variant | None = None) -> list[ScoredPosition]:
    """A probe set written by ``save``; ``ProbeError`` naming the file and
    the entry when it is damaged, or (given ``variant``) holds a position
    of another board (a file copied or renamed: the network would be
    judged on positions it cannot play)."""
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:  # its reason alone: the file is named once
        raise ProbeError(f"cannot read probe set {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ProbeError(f"cannot read probe set {path}: {exc}") from None
    except RecursionError:  # brackets nested past what json reads: a RecursionError traceback in `train ntuple`
        raise ProbeError(f"cannot read probe set {path}: its JSON is nested deeper than any probe set's") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ProbeError(f"{path} is not a c4lab probe set")
    entries = record.get("positions")
    if not isinstance(entries, list):  # a number here was a traceback ("'int' object is not iterable")
        raise ProbeError(f"{path} is damaged: its \"positions\" is {type(entries).__name__}, not a list")
    out = []
    for i, entry in enumerate(entries):
        try:
            position = Position.parse(entry["position"])
            scores = {Move.parse(t): _score(v) for t, v in entry["scores"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProbeError(f"{path}: entry {i} is damaged ({exc})") from None
        if variant is not None and position.variant != variant:
            raise ProbeError(f"{path}: entry {i} is a position of {position.variant}, not of {variant}")
        if position.is_over:  # no move of it to judge: the run failed at its first point, minutes in
            raise ProbeError(f"{path}: entry {i} is a finished game ({position.notation}), no probe")
        if set(scores) != set(position.legal_moves()):
            raise ProbeError(f"{path}: entry {i} does not score every legal move of {position.notation}")
        out.append(ScoredPosition(position, scores))
    return out


def probe_path(variant: Variant, count: int = 200, seed: int = 7, plies: tuple[int, int] = EARLY_PLIES,
               directory: Path | None = None) -> Path:
    """Where :func:`probe_set` keeps the probe set of these settings."""
    return (directory or PROBE_DIR) / default_path(variant, count, seed, plies).name


def probe_set(variant: Variant, count: int = 200, seed: int = 7, plies: tuple[int, int] = EARLY_PLIES,
              directory: Path | None = None, progress: Callable[[str], None] | None = None,
              threads: int | None = None, warn: Callable[[str], None] | None = None) -> list[ScoredPosition]:
    """The probe set of ``variant``: read from its file if it was made
    before, else made (on ``threads`` threads, by default one a core) and
    stored (also where that file is damaged: it is only a cache of what
    the solver says).  A folder it cannot be stored in (a home that is a
    file or read-only) loses nothing but the cache: ``warn`` is told, and
    the set labelled is returned."""
    path = probe_path(variant, count, seed, plies, directory)
    if path.exists():
        try:
            return load(path, variant)
        except ProbeError:
            pass  # labelled again below, and the file replaced
    items = make(variant, count, seed, plies, progress, threads)
    try:
        save(path, items)
    except OSError as exc:
        if warn is not None:
            warn(f"the probe positions could not be kept in {path} ({exc.strerror or exc}): they are labelled "
                 "again next time")
    return items
