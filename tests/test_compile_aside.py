"""Compiling on the second core: a child process fills numba's cache while
the process that needs the work compiles something else, and the work is
never lost: whatever the child does not deliver, the caller compiles."""

from __future__ import annotations

import importlib
import io
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from numba.core import config

from c4lab import compile_aside
from c4lab.solver import api
from testkit import run_counting_compiles


def test_on_disk_reads_the_index_of_numbas_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing on disk before the first compilation, the compiled version
    after it."""
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "aside_probe_module.py"
    source.write_text(textwrap.dedent("""
        from numba import njit

        @njit(cache=True)
        def twice(x):
            return 2 * x
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("aside_probe_module")
    assert not compile_aside.on_disk(module.twice.py_func)
    assert module.twice(21) == 42
    assert compile_aside.on_disk(module.twice.py_func)
    assert compile_aside.on_disk(module.twice.py_func, lambda signature: "int64" in signature)
    assert not compile_aside.on_disk(module.twice.py_func, lambda signature: "float64" in signature)


def test_a_closure_is_on_disk_only_for_the_values_it_was_compiled_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A closure's versions share one index, each under its closure's
    values (the policy playouts of each win-test encoding, the search
    kernels): the version compiled for ``times=2`` says nothing of
    ``times=3``."""
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path / "cache"))
    source = tmp_path / "aside_closure_module.py"
    source.write_text(textwrap.dedent("""
        from numba import njit

        def scaled(times):
            def scale(x):
                return times * x
            return scale
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("aside_closure_module")
    from numba import njit

    assert njit(cache=True)(module.scaled(2))(21) == 42
    assert compile_aside.on_disk(module.scaled(2))
    assert not compile_aside.on_disk(module.scaled(3))
    assert njit(cache=True)(module.scaled(3))(21) == 63
    assert compile_aside.on_disk(module.scaled(3))


def test_a_function_without_a_cache_is_not_on_disk() -> None:
    assert not compile_aside.on_disk(lambda x: x)


def test_no_child_where_it_cannot_help(monkeypatch: pytest.MonkeyPatch) -> None:
    """Turned off, one core, or every core busy: no child."""
    monkeypatch.setattr(compile_aside, "_cores", lambda: 2)
    monkeypatch.setattr(compile_aside, "_load", lambda: 0.0)  # nothing else runs
    monkeypatch.delenv(compile_aside.ENV, raising=False)
    assert compile_aside.enabled()
    monkeypatch.setenv(compile_aside.ENV, "0")
    assert compile_aside.start("c4lab.agents.master:_compile_uct") is None
    monkeypatch.delenv(compile_aside.ENV)
    monkeypatch.setattr(compile_aside, "_load", lambda: 1.0)  # one other job computes
    assert not compile_aside.enabled()
    monkeypatch.setenv(compile_aside.ENV, "1")  # whatever the load
    assert compile_aside.enabled()
    monkeypatch.setattr(compile_aside, "_cores", lambda: 1)
    assert not compile_aside.enabled()
    assert compile_aside.start("c4lab.agents.master:_compile_uct") is None


def test_other_work_is_what_runs_now_not_the_last_minutes_average(monkeypatch: pytest.MonkeyPatch) -> None:
    """The load is the tasks runnable now besides this process (the fewest
    over a few readings of /proc/loadavg), so that what a person ran a
    moment ago does not count; the minute's average only where there is no
    /proc."""
    readings = iter(["1.92 1.40 0.70 3/120 999\n", "1.92 1.40 0.70 1/120 999\n", "1.92 1.40 0.70 2/120 999\n"])
    real_open = open

    def fake_open(path: str, *args: object, **kwargs: object) -> object:
        if path == "/proc/loadavg":
            return io.StringIO(next(readings))
        return real_open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", fake_open)
    assert compile_aside._others_running(samples=3, pause=0.0) == 0  # the fewest: only the reader ran
    monkeypatch.setattr("builtins.open", real_open)
    monkeypatch.setattr(compile_aside, "_others_running", lambda: 1)
    monkeypatch.setattr(compile_aside, "_ahead_running", lambda: 0)  # (not a child compiling ahead now on this machine)
    assert compile_aside._load() == 1.0
    monkeypatch.setattr(compile_aside, "_others_running", lambda: None)
    monkeypatch.setattr(os, "getloadavg", lambda: (1.7, 1.0, 0.5))
    assert compile_aside._load() == pytest.approx(0.7)  # the average, this process counted out


def test_a_child_compiling_ahead_is_not_other_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that compiles what a later command may need (``ahead``)
    runs at a low priority and ends within seconds: a later first move
    still starts its own child beside it.  Such children are found by
    their command line."""
    monkeypatch.setattr(compile_aside, "_others_running", lambda: 1)
    monkeypatch.setattr(compile_aside, "_ahead_running", lambda: 1)
    assert compile_aside._load() == 0.0
    monkeypatch.undo()
    looks_alike = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "c4lab.compile_aside",
                                    compile_aside.AHEAD, "c4lab.x:y"])
    plain = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "c4lab.compile_aside", "c4lab.x:y"])
    listed = [str(looks_alike.pid), str(plain.pid), str(os.getpid()), "self", "999999999"]
    real_listdir = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path: listed if path == "/proc" else real_listdir(path))
    try:
        assert compile_aside._ahead_running() == 1  # the one with --ahead; a process gone is skipped
    finally:
        for child in (looks_alike, plain):
            child.kill()
            child.wait()


def test_a_child_that_fails_reports_it_and_the_caller_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compile_aside, "_cores", lambda: 2)
    monkeypatch.setenv(compile_aside.ENV, "1")
    aside = compile_aside.start("c4lab.no_such_module:compile")
    assert aside is not None
    assert aside.wait() is False
    assert aside.wait() is False  # waited for once: nothing left to wait for


def test_a_child_runs_its_targets_in_turn_and_a_failing_one_fails_the_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Targets are run in the order given: the work of those before a
    failing one is on disk, and the child reports the failure."""
    from c4lab.rules import kernels

    monkeypatch.setattr(compile_aside, "_cores", lambda: 2)
    monkeypatch.setenv(compile_aside.ENV, "1")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(config, "CACHE_DIR", str(tmp_path))
    assert not compile_aside.on_disk(kernels.play.py_func)
    aside = compile_aside.start("c4lab.rules.position:load_play", "c4lab.no_such_module:compile")
    assert aside is not None
    assert aside.wait() is False
    assert compile_aside.on_disk(kernels.play.py_func)


def test_a_wait_for_part_of_a_childs_work_ends_when_that_part_is_done(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A level's warm-up waits for the solver its child compiles, not for the
    playouts of other boards the child compiles next: ``wait`` with
    ``done`` returns once ``done()`` holds, the child going on alone."""
    monkeypatch.setattr(compile_aside, "_cores", lambda: 2)
    monkeypatch.setenv(compile_aside.ENV, "1")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))  # every kind's playout to compile: seconds of work
    aside = compile_aside.start("c4lab.rules.kernels:compile_playouts", ahead=True)
    assert aside is not None
    assert aside.wait(60, done=lambda: True) is True
    assert not aside._ended.is_set()  # still compiling
    assert aside._ended.wait(120) and aside._child.returncode == 0


def test_a_levels_child_compiles_the_solver_then_the_other_boards_playouts(monkeypatch: pytest.MonkeyPatch) -> None:
    """After a level's first move on 7x6, its first move on 9x8/Xd3 compiled
    the playout of that kind of board: 2.3 of its 3.9 s (a slow day).  The
    child that compiles the solver ahead compiles the playouts of every
    kind next."""
    from c4lab.agents import uct
    from c4lab.solver import api as solver_api

    started: list[tuple[tuple[str, ...], bool]] = []
    monkeypatch.setattr(solver_api, "on_disk", lambda: False)
    monkeypatch.setattr(compile_aside, "start", lambda *targets, ahead=False: started.append((targets, ahead)))
    uct._endgame_solver_aside.cache_clear()
    try:
        uct._endgame_solver_aside()
    finally:
        uct._endgame_solver_aside.cache_clear()
    assert started == [(("c4lab.solver.api:compile_search", "c4lab.rules.kernels:compile_playouts"), True)]


def test_a_child_nobody_waits_for_is_reaped(monkeypatch: pytest.MonkeyPatch) -> None:
    """A child compiling ahead, which nobody may ever wait for, leaves no
    zombie behind once it ends: a thread of the parent reaps it."""
    monkeypatch.setattr(compile_aside, "_cores", lambda: 2)
    monkeypatch.setenv(compile_aside.ENV, "1")
    aside = compile_aside.start("c4lab.no_such_module:compile", ahead=True)
    assert aside is not None
    assert aside._ended.wait(60)
    assert not os.path.exists(f"/proc/{aside._child.pid}")  # a zombie would still be listed there


def test_the_child_runs_only_c4labs_own_functions() -> None:
    with pytest.raises(SystemExit, match="not a c4lab function"):
        compile_aside.run("os:getcwd")
    with pytest.raises(SystemExit, match="not a c4lab function"):
        compile_aside.run("c4lab.agents.master")


#: Run in a fresh process: master's first move, with the compilations this
#: process made itself (``run_counting_compiles``) printed as JSON.
FIRST_MOVE = """
import json
from c4lab.agents import make_agent
from c4lab.agents.minimax import on_disk as minimax_on_disk
from c4lab.agents.uct_search import on_disk
from c4lab.rules import Position
position = Position.parse("9x8/Xd3")  # beyond the solver's probe, which compiles play itself
move = make_agent("master:time=0.3").choose(position)
print(json.dumps({"legal": position.is_legal(move), "compiled": compiled,  # (``c4lab move``'s check of its answer)
                  "on_disk": on_disk(False) and minimax_on_disk()}))
"""

#: What a level's first move leaves on disk: UCT's search (not its policy playouts).
LEVEL_FIRST = """
import json
from c4lab.agents import make_agent
from c4lab.rules import Position
make_agent("hard:iterations=10").choose(Position.parse("6x5/Xc2"))
print(json.dumps({"compiled": compiled}))
"""

UCT_SEARCH = "c4lab.agents.uct_search._search_kernel.<locals>.search_kernel"
POLICY = "c4lab.agents.uct_search._policy_source.<locals>.policy_playout_function"
MINIMAX = "c4lab.agents.minimax._search"
PLAY = "c4lab.rules.kernels.play"


@pytest.mark.slow
@pytest.mark.parametrize(("after_a_level", "aside", "made_here"), [
    (False, "1", {UCT_SEARCH, POLICY}),  # the child compiles the rules' check, minimax, then play
    (True, "1", {POLICY}),  # UCT's search is on disk: this process compiles its playouts and searches
    (False, "0", {UCT_SEARCH, POLICY, MINIMAX}),  # no child: everything here (the answer checked, not played)
])
def test_masters_first_move_compiles_one_search_in_a_child(
    tmp_path: Path, after_a_level: bool, aside: str, made_here: set[str]
) -> None:
    """On an empty cache with two cores, master's first move compiles
    minimax's search in a child while this process compiles UCT (its
    search and policy playouts, or only the playouts where a level left
    the search on disk) and searches with it; the child then compiles the
    rules' ``play``, which a game's next move needs (the move waits for
    minimax only, and ``c4lab move`` checks its answer with ``check``,
    which the child compiles first).  With the child turned
    off, this process compiles everything.  The policy playouts are those
    of the board's win-test encoding alone.  Either way the move is legal
    and the work ends up on disk."""
    if compile_aside._cores() < 2:
        pytest.skip("one core: no child is started")
    if after_a_level:  # (no child of its own: nothing else compiles into the cache meanwhile)
        assert UCT_SEARCH in run_counting_compiles(LEVEL_FIRST, tmp_path, **{compile_aside.ENV: "0"})["compiled"]
    report = run_counting_compiles(FIRST_MOVE, tmp_path, **{compile_aside.ENV: aside})
    assert report["legal"] and report["on_disk"]
    assert {UCT_SEARCH, POLICY, MINIMAX, PLAY} & set(report["compiled"]) == made_here, report["compiled"]
    # The policy playouts of 9x8's encoding only (line masks), not those of one-word boards too.
    assert report["compiled"].count(POLICY) == 1, report["compiled"]


#: Run in a fresh process: a level's first move (``hard``: UCT with an
#: exact end game), then what became of the child that compiles the solver.
LEVEL_MOVE = """
import json
from c4lab.agents import make_agent
from c4lab.agents.uct import _endgame_solver_aside
from c4lab.rules import Position
from c4lab.solver.api import on_disk
make_agent("hard:iterations=10").choose(Position.parse("6x5/Xc2"))
aside = _endgame_solver_aside()
done = aside is not None and aside.wait()
print(json.dumps({"compiled": compiled, "child": aside is not None, "done": done, "on_disk": on_disk()}))
"""

@pytest.mark.slow
@pytest.mark.parametrize("aside", ["1", "0"])
def test_a_levels_first_move_leaves_the_solver_to_a_child(tmp_path: Path, aside: str) -> None:
    """On an empty cache, a level with an exact end game starts a child
    that compiles the solver while this process compiles UCT: the solver
    is on disk once the child is done (for the end game, ``c4lab solve``,
    the analysis board; ``test_compile_search_leaves_every_one_word_solve_on_disk``
    shows that a later solve then compiles none of it).  With the child
    turned off, nothing compiles the solver before it is needed."""
    if compile_aside._cores() < 2:
        pytest.skip("one core: no child is started")
    report = run_counting_compiles(LEVEL_MOVE, tmp_path, **{compile_aside.ENV: aside})
    assert report["child"] == report["done"] == report["on_disk"] == (aside == "1")


#: Run in a fresh process: ``SPEC``'s warm-up on ``BOARD`` (what the arena's
#: referee, a room and the terminal game do before the first move), then
#: four moves of a fresh agent playing both sides from ``CELLS`` empty cells
#: on (its kept tree moves on, its end game begins); what it compiled there.
AFTER_WARM_UP = """
import json, random
from c4lab.agents import make_agent
from c4lab.agents.base import warm_up
from c4lab.rules import Position
start = Position.parse(BOARD)
warm_up(SPEC, start)
rng = random.Random(1)
position = start
def quiet(p):  # under way, and no move ends the game at once
    return not p.is_over and not any(p.play(m).is_over for m in p.legal_moves())
while position.empty_cells > CELLS or not quiet(position):
    position = start if position.is_over else position.play(rng.choice(position.legal_moves()))
compiled.clear()
agent = make_agent(SPEC)
legal, played = True, 0
while played < 4 and not position.is_over:
    move = agent.choose(position)
    legal = legal and position.is_legal(move)
    position = position.play(move)
    played += 1
print(json.dumps({"compiled": compiled, "legal": legal, "played": played}))
"""


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "board", "cells"), [
    ("hard", "6x5/Xc2", 14),  # the exact end game
    ("master:time=0.2", "9x8/Xd3", 30),  # the solver's probe
    ("master:time=0.2", "9x8/Xd3", 56),  # the kept tree moved on
])
def test_a_warmed_up_agent_meets_no_compiler_later_in_the_game(tmp_path: Path, spec: str, board: str,
                                                                cells: int) -> None:
    """What an agent runs only later in a game is compiled by the warm-up
    (``Agent.compile_rest``), not in the first move that needs it: the end
    game's exact solver (``hard``'s last 14 cells, ``master``'s probe from
    32) took 3-4.4 s there, and ``hard`` lost the first game of an arena
    after an install on time (move 29: 3.17 s against a 1 s limit);
    ``master``'s kept tree, moved on, 2.26 s at 0.2 s a move."""
    script = AFTER_WARM_UP.replace("BOARD", repr(board)).replace("SPEC", repr(spec))
    report = run_counting_compiles(script.replace("CELLS", str(cells)), tmp_path, **{compile_aside.ENV: "0"})
    assert report["legal"] and report["played"] >= 2
    assert [name for name in report["compiled"] if name.startswith("c4lab.")] == []


#: Run in a fresh process: a first solve with its best moves (what ``perfect``
#: and ``master``'s database move run), or a first analysis (every move's
#: score: ``solve --analyse``, the analysis board), then what this process
#: compiled.
FIRST_BEST_MOVES = """
import json
from c4lab.rules import Position
from c4lab.solver import Solver
from c4lab.solver.api import on_disk
position = Position.parse("6x5/Xc2")
if ANALYSE:
    scores = Solver(book=False).analyse(position)
    best = [m.token for m, score in scores.items() if score == max(scores.values())]
    score = max(scores.values())
else:
    solution = Solver(book=False).solve(position, best_moves=True)
    score, best = solution.score, [m.token for m in solution.best_moves]
print(json.dumps({"compiled": compiled, "score": score, "best": best, "on_disk": on_disk()}))
"""
NEGAMAX = "c4lab.solver.negamax.negamax"
LEGAL_CODES = "c4lab.rules.kernels.legal_codes"


@pytest.mark.slow
@pytest.mark.parametrize("analyse", [False, True])
@pytest.mark.parametrize("aside", ["1", "0"])
def test_a_first_solve_with_best_moves_compiles_negamax_in_a_child(tmp_path: Path, aside: str, analyse: bool) -> None:
    """On an empty cache with two cores, a first solve that also lists the
    best moves, or scores every move, compiles the recursive search in a
    child while this process compiles the rest (the root search; the
    rules' move kernels run interpreted, ``rules.interpreted``); with the
    child turned off, everything here.  The answer is the same."""
    if compile_aside._cores() < 2:
        pytest.skip("one core: no child is started")
    script = FIRST_BEST_MOVES.replace("ANALYSE", str(analyse))
    report = run_counting_compiles(script, tmp_path, **{compile_aside.ENV: aside})
    assert (report["score"], report["best"], report["on_disk"]) == (2, ["a", "b", "d", "e", "f"], True)
    assert LEGAL_CODES not in report["compiled"]
    assert (NEGAMAX in report["compiled"]) == (aside == "0")


#: Run in a fresh process: a first solve of a position with moves, told in
#: advance (``c4lab solve`` and ``c4lab move`` do so before reading it).
EXPECTED_SOLVE = """
import json
from c4lab.agents import make_agent
from c4lab.rules import Position
from c4lab.solver import Solver
from c4lab.solver.api import expect
text = "6x5/Xc2:dc"
if AGENT:
    agent = make_agent("perfect")
    agent.expect(text)
    answer = agent.choose(Position.parse(text)).token
else:
    expect(text)
    answer = Solver(book=False).solve(Position.parse(text)).score
print(json.dumps({"compiled": compiled, "answer": answer}))
"""
PLAY_ALL = "c4lab.rules.kernels.play_all"


@pytest.mark.slow
@pytest.mark.parametrize("agent", [False, True])
@pytest.mark.parametrize("aside", ["1", "0"])
def test_a_solve_told_of_a_position_with_moves_compiles_negamax_in_a_child_while_the_moves_are_read(
    tmp_path: Path, aside: str, agent: bool
) -> None:
    """Told that a position with moves comes (``solver.api.expect``, the
    ``perfect`` agent's ``expect``), a first solve on an empty cache with
    two cores has a child compile the recursive search while this process
    reads the moves (interpreted: nothing compiled, ``rules.interpreted``)
    and compiles the root search, even for a plain solve (no best moves);
    with the child turned off, everything here.  The answer is the same."""
    if compile_aside._cores() < 2:
        pytest.skip("one core: no child is started")
    report = run_counting_compiles(EXPECTED_SOLVE.replace("AGENT", str(agent)), tmp_path, **{compile_aside.ENV: aside})
    assert report["answer"] == ("c" if agent else 2)
    assert PLAY_ALL not in report["compiled"]
    assert (NEGAMAX in report["compiled"]) == (aside == "0")


@pytest.mark.parametrize("text", ["6x5/Xc2", "6x5/Xc2:d9", "6x5/Xq2:dc", "not a position"])
def test_a_position_without_moves_or_unreadable_starts_no_child(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing to read before the solve (no moves: the solve's own child,
    if any, starts as soon), or a string that is not a position (its
    reading says what is wrong): ``expect`` starts nothing and raises
    nothing."""
    started: list[tuple[str, ...]] = []
    monkeypatch.setattr(compile_aside, "start", lambda *targets, **_: started.append(targets))
    monkeypatch.setattr(api, "_CHILDREN", {})
    api.expect(text)
    assert started == []
