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
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from pathlib import Path

from c4lab.arena.accuracy import ScoredPosition, scored
from c4lab.rules import Move, Position, Variant
from c4lab.solver.api import Solver

PROBE_DIR = Path.home() / ".c4lab" / "probes"
FORMAT = "c4lab-probes-1"
#: The solver's limit for all the moves of one candidate position (seconds).
TIMEOUT = 10.0


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


def make(variant: Variant, count: int, seed: int, plies: tuple[int, int] = (0, 16),
         progress: Callable[[str], None] | None = None) -> list[ScoredPosition]:
    """``count`` distinct probe positions of ``variant`` (see the module)."""
    rng = random.Random(seed)
    solver = Solver()
    out: list[ScoredPosition] = []
    seen: set[str] = set()
    tries = 0
    while len(out) < count:
        tries += 1
        if tries > 200 * count:
            raise ValueError(f"cannot find {count} probe positions on {variant} at plies {plies[0]}-{plies[1]}")
        position = random_position(variant, plies, rng)
        if position is None or position.notation in seen:
            continue
        seen.add(position.notation)
        item = scored(position, solver, TIMEOUT)
        if item is None or not item.decides:
            continue
        out.append(item)
        if progress is not None:
            progress(f"probe positions of {variant}: {len(out)}/{count} labelled by the solver")
    return out


def default_path(variant: Variant, count: int, seed: int, plies: tuple[int, int]) -> Path:
    name = variant.notation.replace("/", "_")
    return PROBE_DIR / f"{name}-{count}-{seed}-p{plies[0]}-{plies[1]}.json"


def save(path: Path, items: list[ScoredPosition]) -> None:
    """Write a probe set as JSON (atomically)."""
    record = {"format": FORMAT, "positions": [
        {"position": i.position.notation, "scores": {m.token: v for m, v in i.scores.items()}} for i in items
    ]}
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(record, indent=0))
    tmp.replace(path)


def load(path: Path) -> list[ScoredPosition]:
    """A probe set written by ``save``; ``ProbeError`` naming the file and
    the entry when it is damaged."""
    try:
        record = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ProbeError(f"cannot read probe set {path}: {exc}") from None
    if not isinstance(record, dict) or record.get("format") != FORMAT:
        raise ProbeError(f"{path} is not a c4lab probe set")
    out = []
    for i, entry in enumerate(record.get("positions", [])):
        try:
            position = Position.parse(entry["position"])
            scores = {Move.parse(t): int(v) for t, v in entry["scores"].items()}
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ProbeError(f"{path}: entry {i} is damaged ({exc})") from None
        if set(scores) != set(position.legal_moves()):
            raise ProbeError(f"{path}: entry {i} does not score every legal move of {position.notation}")
        out.append(ScoredPosition(position, scores))
    return out


def probe_path(variant: Variant, count: int = 200, seed: int = 7, plies: tuple[int, int] = (0, 16),
               directory: Path | None = None) -> Path:
    """Where :func:`probe_set` keeps the probe set of these settings."""
    return (directory or PROBE_DIR) / default_path(variant, count, seed, plies).name


def probe_set(variant: Variant, count: int = 200, seed: int = 7, plies: tuple[int, int] = (0, 16),
              directory: Path | None = None, progress: Callable[[str], None] | None = None
              ) -> list[ScoredPosition]:
    """The probe set of ``variant``: read from its file if it was made
    before, else made and stored."""
    path = probe_path(variant, count, seed, plies, directory)
    if path.exists():
        return load(path)
    items = make(variant, count, seed, plies, progress)
    save(path, items)
    return items
