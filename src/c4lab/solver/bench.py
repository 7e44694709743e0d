"""``c4lab bench solver``: the solver on the public classic benchmark sets.

The sets (Pascal Pons' ``Test_L?_R?`` files, ../shared/bench/classic) hold
1000 classic 7x6 positions each, as moves ``1``..``7`` from the empty board,
with their exact scores.  Per set the benchmark reports how many positions
were solved exactly, and the mean CPU time and nodes per position; the
transposition table is cleared before each position (outside the timing:
a new table generation, which costs nothing) and the time is the search's own
CPU time, as Pons' benchmark times his solve call.  The classic database
is not used: the sets measure the search.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from c4lab.rules.position import Position
from c4lab.rules.variant import Variant
from c4lab.solver.api import Solver

#: The sets, easiest first (``Test_L1_R3`` takes hours without a book).
SETS = ("Test_L3_R1", "Test_L2_R1", "Test_L2_R2", "Test_L1_R1", "Test_L1_R2", "Test_L1_R3")
DEFAULT_SETS = SETS[:5]


class BenchSetError(ValueError):
    """A benchmark file that cannot be read: says which file and line.
    ``missing``: the file itself could not be opened (the folder may be the
    wrong one), not a line of it that is no position."""

    def __init__(self, message: str, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


@dataclass(frozen=True)
class BenchPosition:
    position: Position
    score: int
    line: int


def default_directory() -> Path:
    """``$C4LAB_BENCH_DIR``, else ../shared/bench/classic beside the checkout
    (or beside the current directory)."""
    if "C4LAB_BENCH_DIR" in os.environ:
        return Path(os.environ["C4LAB_BENCH_DIR"])
    checkout = Path(__file__).resolve().parents[3]
    for base in (checkout, Path.cwd()):
        candidate = base.parent / "shared" / "bench" / "classic"
        if candidate.is_dir():
            return candidate
    return checkout.parent / "shared" / "bench" / "classic"


def read_set(path: Path, limit: int | None = None) -> list[BenchPosition]:
    """The positions of one benchmark file (the first ``limit`` ones); a
    ``BenchSetError`` naming the file (and the line) where it is not one:
    a finished game is no position to solve (it was a traceback when the
    solver met it), a file of no position no set (a table of zeros, status
    0), a score no game from that position can have (RULES.md: from
    ``-floor(E/2)`` to ``floor((E+1)/2)`` with ``E`` empty cells) no
    score (it was counted as the solver's mistake)."""
    classic = Variant.classic()
    out: list[BenchPosition] = []
    try:
        lines = path.read_text(encoding="ascii").split("\n")
    except OSError as exc:  # its reason alone: the file is named once
        raise BenchSetError(f"cannot read benchmark set {path}: {exc.strerror or exc}",
                            missing=isinstance(exc, FileNotFoundError)) from None  # (a folder in its place: no hint)
    except UnicodeDecodeError as exc:  # the line, not a byte offset of the whole file
        at = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise BenchSetError(f"{path}:{at}: not ASCII text (byte 0x{exc.object[exc.start]:02x})") from None
    for number, line in enumerate(lines, 1):
        if limit is not None and len(out) >= limit:
            break
        if not line:
            continue
        fields = line.split(" ")
        if len(fields) != 2 or not fields[0].isdigit() or not fields[1].lstrip("-").isdigit():
            raise BenchSetError(f"{path}:{number}: expected '<moves> <score>', got {line!r}")
        moves, score = fields
        if any(ch not in "1234567" for ch in moves):
            raise BenchSetError(f"{path}:{number}: moves must be digits 1..7, got {moves!r}")
        try:
            position = Position(classic).play(*("abcdefg"[int(ch) - 1] for ch in moves))
        except ValueError as exc:
            raise BenchSetError(f"{path}:{number}: {exc}") from None
        if position.is_over:
            raise BenchSetError(f"{path}:{number}: {moves} is a finished game ({position.notation}): nothing to solve")
        lowest, highest = -(position.empty_cells // 2), (position.empty_cells + 1) // 2
        if not lowest <= int(score) <= highest:
            raise BenchSetError(f"{path}:{number}: score {score} is no score of {moves} ({position.notation}: "
                                f"{position.empty_cells} empty cells, scores {lowest} to {highest})")
        out.append(BenchPosition(position, int(score), number))
    if not out:
        raise BenchSetError(f"the benchmark set {path} holds no position")
    return out


def run_set(
    positions: list[BenchPosition], weak: bool = False, step: Callable[[bool], None] | None = None,
    timeout: float | None = None, each: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Solve every position (table cleared before each); the set's numbers.
    ``timeout``: seconds of search a position, after which it counts as not
    solved (``timed_out``), never as a wrong score.  ``each`` is called with
    every position's answer (:func:`answer_line` prints one)."""
    solver = Solver(book=False)  # the search itself is measured, as the sets are meant for
    correct = 0
    timed_out = 0
    cpu = 0.0
    nodes = 0
    worst = 0.0
    wrong: list[dict[str, int | None]] = []
    for item in positions:
        solver.clear()
        solution = solver.solve(item.position, weak=weak, timeout=timeout)
        expected = (item.score > 0) - (item.score < 0) if weak else item.score
        good = solution.score == expected
        correct += good
        timed_out += solution.timed_out
        if not good and not solution.timed_out:
            wrong.append({"line": item.line, "expected": expected, "solver": solution.score})
        cpu += solution.cpu_s
        worst = max(worst, solution.cpu_s)
        nodes += solution.nodes
        if each is not None:
            each({"line": item.line, "position": item.position.notation, "expected": expected,
                  "solver": solution.score, "nodes": solution.nodes, "cpu_s": solution.cpu_s})
        if step is not None:
            step(good)
    n = max(len(positions), 1)
    return {
        "positions": len(positions),
        "correct": correct,
        "timed_out": timed_out,
        "mean_cpu_s": cpu / n,
        "mean_nodes": nodes / n,
        "max_cpu_s": worst,
        "total_cpu_s": cpu,
        "wrong_lines": [w["line"] for w in wrong[:20]],
        "wrong": wrong[:20],
    }


def answer_line(where: str, answer: dict[str, Any]) -> str:
    """One position's answer for ``bench solver --each``: ``FILE:LINE``,
    the position, the solver's score and the file's, nodes and CPU time."""
    got = "timeout" if answer["solver"] is None else answer["solver"]
    mark = "" if answer["solver"] in (None, answer["expected"]) else "  (differs)"
    return (f"{where}:{answer['line']} {answer['position']} {got} (the file's {answer['expected']}) "
            f"{answer['nodes']:,} nodes {_time(answer['cpu_s'])}{mark}")


def report(results: dict[str, dict[str, Any]], weak: bool, folder: Path | None = None,
           timeout: float | None = None) -> str:
    """The results as a table, then each position (of the first 20 a set)
    where the solver's score is not the file's, by file and line: a
    ``correct`` short of ``positions`` said no more than that.  With a
    ``timeout``, a column counts the positions given up at it."""
    head = f"{'set':<12} {'positions':>9} {'correct':>8} {'mean CPU':>12} {'mean nodes':>12} {'max CPU':>10}"
    if timeout is not None:
        head += f" {'timeouts':>9}"
    title = (f"classic 7x6 benchmark sets, {'weak' if weak else 'strong'} solve, table cleared per position, "
             "no database; the search's CPU time and nodes per position"
             + (f" (a position not solved in {timeout:g} s of search counts as a timeout)" if timeout is not None
                else ""))
    rows = [title, head]
    for name, r in results.items():
        rows.append(
            f"{name:<12} {r['positions']:>9} {r['correct']:>8} {_time(r['mean_cpu_s']):>12} "
            f"{r['mean_nodes']:>12.0f} {_time(r['max_cpu_s']):>10}"
            + (f" {r['timed_out']:>9}" if timeout is not None else "")
        )
    for name, r in results.items():
        where = folder / name if folder is not None else Path(name)
        for wrong in r.get("wrong", []):
            got = "none (not solved)" if wrong["solver"] is None else wrong["solver"]
            rows.append(f"{where}:{wrong['line']}: the solver's {'sign' if weak else 'score'} {got}, "
                        f"the file's {wrong['expected']}")
    return "\n".join(rows)


def _time(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"
