"""The contract every agent passes, parametrised over every registered agent.

A new agent (a family of c4lab's, or another package's by its entry point)
is done when it passes these: a legal move on every kind of board (4x4 and
12x12, a forbidden cell, a bonus cell and its ban), the time budget kept,
the same move from the same seed on a fixed budget, an ``Analysis`` of the
documented shape, and a life in the arena's worker processes.  An agent
that cannot play a board says so with a ``ValueError`` of its own (the
Q-table agent plays the board it was trained on).  Budgets are small: the
whole contract takes seconds an agent.
"""

from __future__ import annotations

import json
import math
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import c4lab.engine.client  # noqa: F401  (registers engine:cmd=...)
from c4lab.agents import Agent, Analysis, Budget, agent_infos, make_agent
from c4lab.arena.executors import LocalExecutor
from c4lab.arena.schedule import PairTask
from c4lab.rules import Position

#: Our own engine program serving a seeded random player, and the seconds it
#: is given to start and get ready (its imports, its kernels: the defaults,
#: 15 s and 30 s, are for a machine of its own; on a loaded one the start
#: alone took 34 s).
ENGINE = shlex.join([sys.executable, "-m", "c4lab", "engine", "--agent", "random:seed=1"])
ENGINE_START = 120
UCT_FAMILY = ("uct", "normal", "hard", "impossible", "hybrid", "mcts-solver", "uct-tt", "uct-lgr", "uct-lgr2",
              "uct-smart")

#: The spec each registered agent is checked with: the parameters it needs
#: (``{table}``: a small 4x4 Q-table made for the session) and a seed.
SPECS: dict[str, str] = {
    **{name: f"{name}:seed=7" for name in UCT_FAMILY},
    "engine": f"engine:cmd={ENGINE},handshake={ENGINE_START},timeout={ENGINE_START}",
    "heuristic": "heuristic:seed=7",
    "master": "master:seed=7",
    "minimax": "minimax",
    "ntuple": "ntuple:seed=7",
    "ntuple-puct": "ntuple-puct:seed=7",
    "perfect": "perfect:seed=7",
    "qlearning": "qlearning:table={table},seed=7",
    "random": "random:seed=7",
    "solver": "solver:seed=7",
    "kaggle": "kaggle:seed=7",
}
#: Registered agents this suite does not play, and why.
NOT_HERE = {"human": "a person at a keyboard (tests/ui/test_terminal.py plays it from a script)"}
#: Agents whose move takes a fixed amount of work, whatever the budget, and
#: why: they are not timed here, and their description says so.
NO_CLOCK = {"kaggle": "Kaggle's negamax searches to depth 4 in their Python, with no clock (0.33 s a move on 9x8)"}
#: The boards an agent is limited to (every kind of board otherwise).
ONLY = {"qlearning": ("4x4",)}
#: Where an agent replays its move on a fixed budget, if not everywhere: the
#: solver where it proves the move (elsewhere its fallback thinks on time).
REPRODUCIBLE_ON = {"solver": ("4x4",), "perfect": ("4x4",)}
#: The solver's time there: its own (1 s a move, 0.6 s of it to solve) ran
#: out on a loaded machine (a 4x4 solve of milliseconds took 3 s just after
#: the compile), and the fallback then played on time, another move.
PROVING_TIME = 60.0

#: One position of each kind of board: the smallest and the largest, a
#: forbidden cell, a bonus cell the mover may land on (then ban), a ban played.
POSITIONS = ("4x4", "4x4:abcd", "12x12:fg", "7x6/Xd1:dd", "6x5/Xb2/Bd1", "6x5/Xb2/Bd1:d+ab", "9x8/Xd3/Bb1:b+ac")
#: The budget of a move in these checks, and what a move may overrun it by
#: on a loaded two-core machine (a process start, a garbage collection).
SECONDS = 0.05
SLACK = 0.6


def names() -> list[str]:
    return [info.name for info in agent_infos() if info.name not in NOT_HERE]


@pytest.fixture(scope="session")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from c4lab.learning.qlearning import TrainConfig, train

    path = tmp_path_factory.mktemp("conformance") / "q-4x4.npz"
    trained, _ = train(TrainConfig(board="4x4", episodes=3000, seed=1), eval_games=0)
    trained.save(path)
    return path


def is_ours(name: str) -> bool:
    """Whether ``name`` is one of c4lab's agents, not another package's
    (registered through its own ``c4lab.agents`` entry point)."""
    (info,) = [info for info in agent_infos() if info.name == name]
    return getattr(info.factory, "__module__", "").startswith("c4lab.")


def spec_of(name: str, table: Path) -> str:
    """The spec ``name`` is checked with: its entry in ``SPECS``, or for
    another package's agent its name, with a seed where it takes one (so
    that a student's installed agent is checked here as the docs say)."""
    if name in SPECS or is_ours(name):
        return SPECS[name].format(table=table)
    (info,) = [info for info in agent_infos() if info.name == name]
    return f"{name}:seed=7" if any(p.name == "seed" for p in info.params) else name


@pytest.fixture
def agent_of(table: Path) -> Iterator[object]:
    made: list[Agent] = []

    def make(name: str) -> Agent:
        info = next(i for i in agent_infos() if i.name == name)
        if info.unavailable:
            pytest.skip(f"{name} {info.unavailable}")
        agent = make_agent(spec_of(name, table))
        made.append(agent)
        return agent

    yield make
    for agent in made:
        agent.close()


def positions_of(name: str) -> list[Position]:
    boards = ONLY.get(name)
    return [Position.parse(p) for p in POSITIONS if boards is None or p.split(":")[0] in boards]


def test_every_registered_agent_is_checked_here() -> None:
    registered = {info.name for info in agent_infos() if is_ours(info.name)}
    assert registered == set(SPECS) | set(NOT_HERE), "give a new agent its spec in SPECS"


def check_shape(position: Position, move: object, analysis: Analysis) -> None:
    """``analysis`` is an ``Analysis`` as ``agents/base.py`` documents it."""
    assert isinstance(analysis, Analysis)
    legal = set(position.legal_moves())
    assert analysis.value is None or 0.0 <= analysis.value <= 1.0
    assert analysis.iterations is None or analysis.iterations >= 0
    assert analysis.seconds is None or (analysis.seconds >= 0 and math.isfinite(analysis.seconds))
    assert analysis.note is None or isinstance(analysis.note, str)
    for stats in analysis.moves:
        assert stats.move in legal
        assert stats.visits is None or stats.visits >= 0
        assert stats.value is None or 0.0 <= stats.value <= 1.0
    assert len({s.move for s in analysis.moves}) == len(analysis.moves), "one entry a move"
    if analysis.pv:
        assert analysis.pv[0] == move, "the principal variation starts with the move"
        position.play(*analysis.pv)  # a legal line
    json.dumps(analysis.to_dict())  # the server sends it as is


@pytest.mark.parametrize("name", names())
def test_a_legal_move_and_a_documented_analysis_on_every_kind_of_board(name: str, agent_of: object) -> None:
    agent = agent_of(name)  # type: ignore[operator]
    for position in positions_of(name):
        move, analysis = agent.analyse(position, Budget(time=SECONDS))
        assert move in position.legal_moves(), (name, position.notation, move)
        check_shape(position, move, analysis)
    assert agent.choose(position, Budget(time=SECONDS)) in position.legal_moves()
    for text in POSITIONS:  # a board it cannot play is refused with its reason
        if text.split(":")[0] not in ONLY.get(name, (text.split(":")[0],)):
            with pytest.raises(ValueError, match="cannot play"):
                agent.analyse(Position.parse(text), Budget(time=SECONDS))


def _timed(agent: object, position: Position) -> float:
    """Seconds ``agent`` takes to answer ``position`` on a budget of ``SECONDS``."""
    started = time.perf_counter()
    agent.analyse(position, Budget(time=SECONDS))  # type: ignore[attr-defined]
    return time.perf_counter() - started


@pytest.mark.parametrize("name", [name for name in names() if name not in NO_CLOCK])
def test_the_time_budget_is_kept(name: str, agent_of: object) -> None:
    agent = agent_of(name)  # type: ignore[operator]
    for position in positions_of(name)[-2:]:
        agent.analyse(position, Budget(time=SECONDS))  # compiled, loaded, warmed up: not timed
        took = min(_timed(agent, position) for _ in range(2))  # the quicker of two: a busy machine's pause is not the agent's
        assert took < SECONDS + SLACK, f"{name} took {took:.2f} s of {SECONDS} s on {position.notation}"


@pytest.mark.parametrize("name", sorted(NO_CLOCK))
def test_an_agent_with_no_clock_says_so_in_its_description(name: str) -> None:
    (info,) = [info for info in agent_infos() if info.name == name]
    assert "no clock" in info.help, NO_CLOCK[name]


@pytest.mark.parametrize("name", names())
def test_the_same_seed_plays_the_same_move_on_a_fixed_budget(name: str, agent_of: object) -> None:
    budget = Budget(time=PROVING_TIME, iterations=200) if name in REPRODUCIBLE_ON else Budget(iterations=200)
    first, second = agent_of(name), agent_of(name)  # type: ignore[operator]
    for position in positions_of(name):
        if position.variant.notation not in REPRODUCIBLE_ON.get(name, (position.variant.notation,)):
            continue
        assert first.analyse(position, budget)[0] == second.analyse(position, budget)[0], position.notation


def test_every_agent_plays_in_the_arenas_worker_processes(table: Path) -> None:
    playable = [n for n in names() if not next(i for i in agent_infos() if i.name == n).unavailable]
    # The margin is a loaded machine's (a Q-table's move once took 3.38 s at a
    # load of 15 on two cores): what is checked here is a life in the workers.
    tasks = [
        PairTask(i, spec_of(name, table), "random", 0, ONLY.get(name, ("5x4",))[0], limit=1.0, margin=60.0, seed=3)
        for i, name in enumerate(playable)
    ]
    executor = LocalExecutor(jobs=2)
    try:
        done = list(executor.run(tasks))
    finally:
        executor.close()
    assert len(done) == len(tasks)
    for task, games in done:
        for game in games:
            forfeit = game["forfeit"]
            assert forfeit is None, f"{task.first}: {forfeit}"
