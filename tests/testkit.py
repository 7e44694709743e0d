"""Helpers shared by the tests: the public cases and benchmarks in
../shared (read in place, never copied into the project), and a scripted
keyboard.  (Not in conftest.py: tests/browser has a conftest of its own,
and ``import conftest`` would be ambiguous.)"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from c4lab.agents import Agent, Analysis, Budget, Param
from c4lab.agents import base as registry
from c4lab.agents.base import AgentInfo, agent_infos
from c4lab.rules import Cell, Move, Position, Variant

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
CASES = SHARED / "cases"
BENCH_CLASSIC = SHARED / "bench" / "classic"


@contextmanager
def one_at_a_time(name: str) -> Iterator[None]:
    """A block that one test process at a time runs (the suite's workers,
    ``-n auto``, or two runs at once): what a session installs once, such
    as chromium or a package, is installed by the first to come; the
    others wait, then find it there."""
    with FileLock(str(Path(tempfile.gettempdir()) / f"c4lab-tests-{name}.lock")):
        yield


def _need(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: the tests read ../shared beside the project checkout")
    return path


def load_traces() -> list[dict]:
    with _need(CASES / "rules_traces.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_bad_positions() -> list[tuple[str, str, str]]:
    """``(string, category, why)`` for every line of bad_positions.txt.

    Lines are split on the tab only: the strings may start or end with spaces.
    """
    rows = []
    with _need(CASES / "bad_positions.txt").open(encoding="utf-8", newline="\n") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            text, _, note = line.partition("\t")
            category = note[1 : note.index("]")]
            rows.append((text, category, note[note.index("]") + 1 :].strip()))
    return rows


class Script:
    """A person at the keyboard, scripted: answers prompts from a list (end
    of input after the last one) and records the prompts and what was said."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []
        self.said: list[str] = []

    def ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)

    __call__ = ask

    def say(self, text: str) -> None:
        self.said.append(text)


def brute_score(position: Position) -> int:
    """RULES.md's score, straight from its definition: the best over every
    legal move token of (E + 1) // 2 for a win, 0 for a draw, else minus the
    child's score.  Memoised on what the cells that are empty now hold."""
    cells = [
        Cell(c, r)
        for c in range(position.variant.width)
        for r in range(position.variant.height)
        if position.piece_at(Cell(c, r)) is None and Cell(c, r) not in position.variant.forbidden
    ]

    memo: dict[tuple, int] = {}

    def score(p: Position) -> int:
        key = (tuple(p.piece_at(c) for c in cells), p.to_move)
        if key not in memo:
            win = (p.empty_cells + 1) // 2
            best = -1000
            for move in p.legal_moves():
                child = p.play(move)
                if child.is_over:
                    value = 0 if child.result == "draw" else win
                else:
                    value = -score(child)
                best = max(best, value)
            memo[key] = best
        return memo[key]

    return score(position)


@contextmanager
def cheap_server(tmp_path: Path) -> Iterator[Any]:
    """The game server in-process (a ``TestClient``) on a fresh database in
    ``tmp_path``, one agent thread and a hint that costs nothing."""
    from fastapi.testclient import TestClient

    from c4lab.server.app import create_app
    from c4lab.server.storage import GameStore

    store = GameStore(tmp_path / "games.sqlite")
    try:
        with TestClient(create_app(store, hint_spec="random", agent_workers=1)) as client:
            yield client
    finally:
        store.close()


# -- positions for the search agents' tests ---------------------------------------


def winning_moves(position: Position) -> list[str]:
    """The moves that win at once."""
    return [m.token for m in position.legal_moves() if position.play(m).result == position.to_move]


def safe_moves(position: Position) -> list[str]:
    """The moves after which the opponent cannot win at once."""
    return [m.token for m in position.legal_moves() if not winning_moves(position.play(m))]


def random_positions(rng: random.Random, count: int) -> list[Position]:
    """Positions reached by random play on random enhanced boards, none of
    them over; half of the boards have a bonus cell, and half of those walks
    stop at a bonus landing (where ban moves are legal)."""
    positions: list[Position] = []
    while len(positions) < count:
        variant = Variant.enhanced(rng, forbidden=rng.randint(0, 2), bonus=rng.random() < 0.5)
        to_bonus = variant.bonus is not None and rng.random() < 0.5
        position = Position(variant)
        cells = variant.width * variant.height
        for _ in range(cells if to_bonus else rng.randint(0, cells)):
            if position.is_over or (to_bonus and any(m.ban is not None for m in position.legal_moves())):
                break
            position = position.play(rng.choice(position.legal_moves()))
        if not position.is_over:
            positions.append(position)
    return positions


#: The ``c4lab`` command as its console script runs it, saying "main
#: starts" on stderr just before it calls ``main``: a press before that line
#: falls in the interpreter's own start-up and the import of the package
#: (hundredths of a second, tenths on a loaded machine), where it is
#: Python's, before any code of c4lab's runs.
STARTED = ("import sys; from c4lab.__main__ import main; print('main starts', file=sys.stderr, flush=True); "
           "main()")


def ctrl_c_once_ready(args: list[str], ready: str, inherited: str, after: float,
                      presses: int = 1, env: dict[str, str] | None = None, signum: int | None = None,
                      group: bool = False) -> tuple[int, str, str]:
    """Run ``python -m c4lab ARGS``, press Ctrl-C (SIGINT to the process)
    ``after`` seconds after a line of its stderr matches ``ready`` (a
    regular expression, searched for in the line) (``presses``
    times, a tenth of a second apart: an impatient person), and return its
    ``(status, stdout, stderr)``; ``ready="main starts"`` (:data:`STARTED`):
    ``after`` seconds after the command's ``main`` is called.  ``inherited="ignored"`` starts it with
    SIGINT ignored, as a script's background job (``&``) is: the shell
    ignores SIGINT, then execs.  ``env``: the process's environment (by
    default this one's).  ``signum``: another signal than SIGINT (a kill's
    SIGTERM, a closed terminal's SIGHUP); ``group``: sent to the process's
    whole group (its own session), workers included, as a terminal does."""
    import re
    import signal
    import time

    command = [sys.executable, *(["-c", STARTED] if ready == "main starts" else ["-m", "c4lab"]), *args]
    if inherited == "ignored":
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            start_new_session=group)
    try:
        # Generous: on an empty numba cache and a loaded machine, what comes before ``ready`` took minutes.
        deadline = time.monotonic() + 600
        line = ""
        while not re.search(ready, line) and time.monotonic() < deadline:
            line = proc.stderr.readline() if proc.stderr else ""
            if not line and proc.poll() is not None:
                break  # it ended without saying it
        time.sleep(after)
        for press in range(presses):
            if press:
                time.sleep(0.1)
            if proc.poll() is None:
                (os.killpg if group else os.kill)(proc.pid, signal.SIGINT if signum is None else signum)
        stdout, stderr = proc.communicate(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, stdout, line + stderr


def alive(pid: int) -> bool:
    """Whether ``pid`` is a live process (not gone, not a zombie: one dead
    but not yet reaped by the container's init counts as gone); Linux's /proc."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def stop_process(proc: Any) -> None:
    """Stop a command started by a test (``subprocess.Popen``): SIGTERM, a
    kill if it lingers, and its pipes read to the end."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    proc.communicate(timeout=10)



#: Put before the script ``run_counting_compiles`` runs: the names
#: (``module.qualname``) of the functions numba compiles in that process
#: (its compile events), in order, in the list ``compiled``.
_COMPILE_LISTENER = """
from numba.core import event
compiled = []
class _Listener(event.Listener):
    def on_start(self, ev):
        d = ev.data.get("dispatcher")
        f = getattr(d, "py_func", None) or getattr(d, "_pyfunc", d)  # a jit function's, or a cfunc's
        compiled.append(f"{getattr(f, '__module__', '')}.{getattr(f, '__qualname__', str(d))}")
    def on_end(self, ev):
        pass
event.register("numba:compile", _Listener())
"""


def run_counting_compiles(script: str, cache_dir: Path, **env: str) -> Any:
    """Run ``script`` in a fresh Python process on the numba cache
    ``cache_dir`` (and ``env``), with ``compiled`` listing what numba
    compiles there; the JSON that the script prints last."""
    out = subprocess.run([sys.executable, "-c", _COMPILE_LISTENER + script],
                         env=dict(os.environ, NUMBA_CACHE_DIR=str(cache_dir), **env),
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


class Misbehaving(Agent):
    """An agent of one's own that answers wrongly, as ``how`` says (asked
    in ``7x6:aaaaaa``, where column a is full)."""

    def __init__(self, how: str = "full") -> None:
        self.how = how

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        answers = {
            "full": (Move.parse("a"), Analysis()),
            "none": (None, Analysis()),
            "number": (3, Analysis()),
            "alone": position.legal_moves()[0],
            "no-analysis": (position.legal_moves()[0], None),
        }
        if self.how == "percent":  # a value in per cent, not in [0, 1]: refused where it is built
            return position.legal_moves()[0], Analysis(value=75.0)
        if self.how not in answers:
            raise RuntimeError("my agent's own bug")
        return answers[self.how]  # type: ignore[return-value]


def register_misbehaving(monkeypatch: pytest.MonkeyPatch) -> str:
    """Register ``Misbehaving`` as the spec ``misbehaving:how=...`` for one
    test (``monkeypatch`` takes it away again); returns the name."""
    agent_infos()  # the real families first
    how = Param("how", str, "full", "full, none, number, alone, no-analysis, percent or raise")
    monkeypatch.setitem(registry._REGISTRY, "misbehaving", AgentInfo("misbehaving", "for tests", (how,), Misbehaving))
    return "misbehaving"


def as_a_user() -> list[str]:
    """The prefix that runs a command with the file permissions a user
    meets: none for a user; for root (who writes any file), root without
    the capabilities that override permissions (``setpriv``)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("root, and no setpriv to drop the capabilities that override file permissions")
    caps = "-dac_override,-dac_read_search,-fowner"
    return [setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}"]


def progress_line(columns: tuple[Any, ...], width: int, description: str, total: float, completed: float,
                  **fields: Any) -> str:
    """The line a rich progress bar of ``columns`` draws for one task on a
    terminal ``width`` columns wide (colours left out)."""
    import io  # lazy: only the progress bars' tests

    from rich.console import Console
    from rich.progress import Progress

    console = Console(file=io.StringIO(), width=width, force_terminal=True, color_system=None)
    progress = Progress(*columns, console=console, auto_refresh=False)
    task = progress.add_task(description, total=total, **fields)
    progress.update(task, completed=completed)
    console.print(progress.make_tasks_table(progress.tasks))
    return console.file.getvalue().rstrip("\n")  # type: ignore[attr-defined]


def hold_moves(monkeypatch: pytest.MonkeyPatch, agent_class: type[Agent]) -> threading.Event:
    """Every move of an ``agent_class`` agent waits (in the server's thread)
    until the returned event is set: what a page or a client is shown while
    the computer thinks is looked at before its move comes, on any machine
    however slow or busy (an agent's own think time, a few seconds, was not
    enough for that on a loaded one). Set the event in a ``finally``: the
    server stops once the move is done."""
    released = threading.Event()
    real = agent_class.analyse

    def held(self: Agent, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        released.wait(60)
        return real(self, position, budget)

    monkeypatch.setattr(agent_class, "analyse", held)
    return released


def first_pass_solves_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """A hint's first pass (its ``PER_POSITION``, here a millionth of a
    second: the least a pass is given is 1 ms) settles no move, nor does
    the solver go on while the engine compiles; ``s``'s longer passes are
    the real ones.  In 1 ms the solver settled some of a 5x4 board's moves
    or none, as the machine ran."""
    from c4lab.server import review

    real = review.move_scores

    def nothing_at_first(position: Position, timeout: float, solver: object = None) -> dict:
        if timeout <= 1e-3:
            return {move.token: None for move in position.legal_moves()}
        return real(position, timeout, solver)  # type: ignore[arg-type]

    monkeypatch.setattr(review, "PER_POSITION", 1e-6)
    monkeypatch.setattr(review, "move_scores", nothing_at_first)
    monkeypatch.setattr(review, "SOLVABLE_CELLS", 0)
