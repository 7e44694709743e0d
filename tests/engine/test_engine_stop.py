"""``stop`` and ``quit`` during a search (docs/engine-protocol.md): ``stop``
makes the ``go`` answer now, with the best move found so far, and ``quit``
ends the search unanswered, leaving no thread thinking; an agent that never
looks at its stop request keeps to its budget."""

from __future__ import annotations

import io
import queue
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

from c4lab.agents import Analysis, Budget, base
from c4lab.agents.base import Agent, AgentInfo, agent_infos
from c4lab.engine import parse_reply
from c4lab.engine.protocol import BestMove, Info
from c4lab.engine.serve import serve
from c4lab.rules import Move, Position

if TYPE_CHECKING:
    from typing_extensions import Self

#: A ``go`` budget no test waits for: a stopped search answers well before.
LONG = "go time 60"
#: Seconds a stopped search may take to answer: far more than it does
#: (some milliseconds), far less than its budget, on a loaded machine too.
PROMPT = 15.0


class Driver:
    """``serve(spec)`` in a thread of this process, talked to a line at a
    time as a driver does: ``send`` writes lines, ``read`` waits for one."""

    def __init__(self, spec: str) -> None:
        self.commands: queue.Queue[str] = queue.Queue()
        self.replies: queue.Queue[str] = queue.Queue()
        driver = self

        class In(io.TextIOBase):
            def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
                return driver.commands.get()

        class Out(io.TextIOBase):
            def write(self, text: str) -> int:
                for line in text.splitlines():
                    driver.replies.put(line)
                return len(text)

        self.thread = threading.Thread(target=serve, args=(spec, In(), Out()), daemon=True)
        self.thread.start()

    def send(self, *lines: str) -> None:
        for line in lines:
            self.commands.put(line + "\n")

    def read(self, timeout: float = 120.0) -> str:
        return self.replies.get(timeout=timeout)

    def ready(self, position: str) -> None:
        """The position set and the agent warmed up for it (``isready``)."""
        self.send(f"position {position}", "isready")
        assert self.read() == "readyok"

    def until_bestmove(self, timeout: float) -> list[str]:
        """The lines up to ``bestmove``, each within ``timeout`` seconds."""
        lines = [self.read(timeout)]
        while not lines[-1].startswith("bestmove"):
            lines.append(self.read(timeout))
        return lines

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        self.send("quit")
        self.thread.join(timeout=PROMPT)
        self.commands.put("")  # the end of the input, for a loop that did not see 'quit'


def searches() -> Iterator[threading.Thread]:
    """The engine's search threads still alive."""
    return (t for t in threading.enumerate() if t.name == "c4lab-engine-go" and t.is_alive())


@pytest.mark.parametrize(
    ("spec", "position", "go", "most"),
    [
        ("uct:seed=1", "9x8/Xd3", LONG, None),
        ("uct:seed=1", "9x8/Xd3", "go iterations 1000000000000", None),  # an iterations-only search is cut too
        ("minimax", "9x8/Xd3", LONG, None),  # a depth there takes many seconds: the stop reaches into it
        ("master:seed=1", "9x8/Xd3", LONG, None),
        ("master:seed=1,time=none", "9x8/Xd3", "go iterations 1000000000000", None),
        # PUCT ends when its tree is full (about 190,000 iterations, 5.5 s here): stopped well before
        ("ntuple:search=puct,seed=1", "7x6:dd", LONG, 100_000),
        # the exact solver, which takes 60 % of the move before its fallback: its solve is cancelled
        ("perfect:seed=1", "9x8/Xd3", LONG, None),
    ],
)
def test_stop_during_go_answers_the_best_move_found_so_far_at_once(
    spec: str, position: str, go: str, most: int | None
) -> None:
    with Driver(spec) as driver:
        driver.ready(position)
        driver.send(go)
        time.sleep(0.1 if most else 0.5)
        stopped = time.monotonic()
        driver.send("stop")
        *infos, best = driver.until_bestmove(PROMPT)
        took = time.monotonic() - stopped
        info = parse_reply(infos[-1])
        move = parse_reply(best)
        assert isinstance(info, Info) and isinstance(move, BestMove)
        assert Position.parse(position).is_legal(move.move)
        assert took < PROMPT, took
        assert info.time is not None and info.time < PROMPT  # the search's own seconds: not its budget
        assert most is None or (info.iterations is not None and info.iterations < most)
        driver.send("stop", "isready")  # a stop after the answer, as with no search: nothing
        assert driver.read() == "readyok"


def test_stop_right_after_go_is_not_lost() -> None:
    # the engine clears the request before the search starts, not in it: a stop read at once is for this go
    with Driver("uct:seed=1") as driver:
        driver.ready("7x6:dd")
        driver.send(LONG, "stop")
        *_, best = driver.until_bestmove(PROMPT)
        assert isinstance(parse_reply(best), BestMove)


def test_a_stop_of_a_finished_search_does_not_cut_the_next_one() -> None:
    with Driver("uct:seed=1") as driver:
        driver.ready("7x6:dd")
        driver.send("go iterations 10", "stop", "go iterations 50000")  # the stop comes after the first answer
        first = driver.until_bestmove(PROMPT)
        info, _ = driver.until_bestmove(PROMPT)
        assert "iterations 10 " in first[0]
        assert "iterations 50000 " in info  # all of them: the request was cleared at this go


@pytest.mark.parametrize("spec", ["uct:seed=1", "minimax", "master:seed=1"])
def test_quit_during_a_search_in_process_leaves_no_thread_thinking(spec: str) -> None:
    driver = Driver(spec)
    driver.ready("9x8/Xd3")
    before = set(searches())
    driver.send(LONG)
    time.sleep(0.5)
    (search,) = set(searches()) - before
    driver.send("quit")
    driver.thread.join(timeout=PROMPT)
    assert not driver.thread.is_alive()  # serve returned at once
    search.join(timeout=PROMPT)
    assert not search.is_alive()  # and its search ended soon after, unanswered
    assert driver.replies.empty()


class IgnoresStop(Agent):
    """An agent of one's own that knows nothing of stop requests."""

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        time.sleep(budget.time if budget is not None and budget.time is not None else 0)
        return position.legal_moves()[0], Analysis(note="slept")


def test_an_agent_that_ignores_stop_answers_after_its_budget_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    agent_infos()  # the real families first
    monkeypatch.setitem(base._REGISTRY, "ignores-stop", AgentInfo("ignores-stop", "for tests", (), IgnoresStop))
    with Driver("ignores-stop") as driver:
        driver.ready("7x6")
        began = time.monotonic()
        driver.send("go time 1", "stop")
        info, best = driver.until_bestmove(PROMPT)
        assert time.monotonic() - began >= 1.0
        assert "string slept" in info and best == "bestmove a"
