"""The exact solver: scores as RULES.md defines them, on the public cases and
the classic benchmark sets (read in place from ../shared)."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from c4lab.rules import Move, Position
from c4lab.solver import Solver, solve
from c4lab.solver.bench import read_set
from testkit import BENCH_CLASSIC, CASES, brute_score, run_counting_compiles


def _solve_small() -> list[dict]:
    with (CASES / "solve_small.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


# -- the public cases ------------------------------------------------------------


@pytest.mark.parametrize("case", _solve_small(), ids=lambda c: c["position"])
def test_every_small_case_gets_exactly_its_score(case: dict) -> None:
    position = Position.parse(case["position"])
    assert position.empty_cells == case["E"]
    assert Solver().solve(position).score == case["score"]


def test_weak_solving_gives_the_sign_of_every_small_case() -> None:
    solver = Solver()
    for case in _solve_small():
        sign = (case["score"] > 0) - (case["score"] < 0)
        assert solver.solve(Position.parse(case["position"]), weak=True).score == sign, case["position"]


# -- the classic benchmark sets (a sample of each; `c4lab bench solver` runs them whole)

SAMPLES = {"Test_L3_R1": 60, "Test_L2_R1": 60, "Test_L2_R2": 25, "Test_L1_R1": 40, "Test_L1_R2": 3}


@pytest.mark.parametrize("name", list(SAMPLES))
def test_a_sample_of_each_classic_set_gets_exactly_its_listed_scores(name: str) -> None:
    solver = Solver()
    for item in read_set(BENCH_CLASSIC / name, SAMPLES[name]):
        solver.clear()
        assert solver.solve(item.position).score == item.score, f"{name} line {item.line}"


@pytest.mark.parametrize("name", list(SAMPLES))
def test_weak_solving_gets_the_sign_on_each_classic_set(name: str) -> None:
    solver = Solver()
    for item in read_set(BENCH_CLASSIC / name, max(SAMPLES[name] // 3, 2)):
        solver.clear()
        sign = (item.score > 0) - (item.score < 0)
        assert solver.solve(item.position, weak=True).score == sign, f"{name} line {item.line}"


@pytest.mark.slow
def test_the_hardest_classic_set_beginning_positions() -> None:
    solver = Solver()
    for item in read_set(BENCH_CLASSIC / "Test_L1_R3", 2):
        solver.clear()
        assert solver.solve(item.position).score == item.score, f"Test_L1_R3 line {item.line}"


# -- empty boards: the values known from the literature (Tromp; Steininger's table)

# first player: +1 wins, 0 draw, -1 loses
KNOWN = {"4x4": 0, "5x4": 0, "6x4": -1, "4x5": 0, "5x5": 0, "6x5": 0}


@pytest.mark.parametrize("board", list(KNOWN))
def test_empty_plain_boards_up_to_6x5_have_their_known_value(board: str) -> None:
    solution = Solver().solve(Position.parse(board), weak=True)
    assert solution.score == KNOWN[board]


def test_on_6x4_every_first_move_loses() -> None:
    position = Position.parse("6x4")
    assert all(score < 0 for score in Solver().analyse(position).values())


# -- best moves, analysis, timeouts ---------------------------------------------------


def _random_position(board: str, plies: int, rng: np.random.Generator) -> Position:
    while True:
        position = Position.parse(board)
        for _ in range(plies):
            moves = position.legal_moves()
            position = position.play(moves[rng.integers(len(moves))])
            if position.is_over:
                break
        if not position.is_over:
            return position


@pytest.mark.parametrize("board", ["5x4", "5x4/Xc2", "4x4/Bb2", "5x4/Xa1/Bd2"])
def test_analysis_and_best_moves_agree_with_the_definition(board: str) -> None:
    rng = np.random.default_rng(5)
    solver = Solver()
    for _ in range(5):
        position = _random_position(board, int(rng.integers(9, 12)), rng)
        scores = solver.analyse(position)
        expected = {}
        for move in position.legal_moves():
            child = position.play(move)
            win = (position.empty_cells + 1) // 2
            expected[move] = (0 if child.result == "draw" else win) if child.is_over else -brute_score(child)
        assert scores == expected, position.notation
        solution = solver.solve(position, best_moves=True)
        assert solution.score == max(expected.values()) == brute_score(position)
        assert set(solution.best_moves) == {m for m, s in expected.items() if s == solution.score}


@pytest.mark.parametrize("board", ["5x4", "4x4/Bb2", "5x4/Xa1/Bd2"])
def test_a_weak_analysis_gives_each_move_its_win_draw_or_loss(board: str) -> None:
    rng = np.random.default_rng(7)
    solver = Solver()
    for _ in range(4):
        position = _random_position(board, int(rng.integers(9, 12)), rng)
        exact = solver.analyse(position)
        sign = {move: (score > 0) - (score < 0) for move, score in exact.items() if score is not None}
        assert solver.analyse(position, weak=True) == sign, position.notation


def test_a_bonus_cell_makes_each_ban_a_separate_move() -> None:
    position = Position.parse("4x4/Bb1:a")
    scores = Solver().analyse(position)
    assert {m.token for m in scores} == {m.token for m in position.legal_moves()}
    assert any(m.ban is not None for m in scores)


def test_a_bonus_landing_with_one_cell_left_may_ban_it_and_save_the_draw() -> None:
    """RULES.md: only a bonus landing that fills the last playable cell has
    no ban, and the ban may go into the column just played.  A's only
    column is c: its piece lands on the bonus c3 below the last empty cell
    c4, where B would complete a4-d4.  Declining loses with B's last stone
    (-1); banning c4 fills the board, a draw (0)."""
    position = Position.parse("4x4/Bc3:ddabbabbcdadca")
    assert [m.token for m in position.legal_moves()] == ["c", "c+c"]
    assert Solver().analyse(position) == {Move.parse("c"): -1, Move.parse("c+c"): 0}
    assert Solver().solve(position).score == 0 == brute_score(position)


def test_a_timeout_gives_no_score_never_a_wrong_one() -> None:
    # (Early classic positions are answered by the database: a bigger board.)
    solution = Solver().solve(Position.parse("9x8:dc"), timeout=0.05)
    assert solution.score is None and solution.timed_out and solution.best_moves == ()
    assert solution.to_dict()["best_moves"] is None  # not found, as where the best moves alone ran out


def test_a_node_limit_gives_no_score_either() -> None:
    solution = Solver().solve(Position.parse("9x8:dc"), max_nodes=1000)
    assert solution.timed_out and solution.score is None


def test_a_search_given_up_counts_the_nodes_it_searched_never_more_than_its_limit() -> None:
    # the node that found the limit reached was counted too: max_nodes=5000 reported 5001 nodes
    for limit in (0, 1, 5000):
        solution = Solver().solve(Position.parse("9x8:dc"), max_nodes=limit)
        assert solution.timed_out and solution.nodes == limit
        assert not solution.complete  # review: complete=True read wrong beside no score at all
    again = Solver().solve(Position.parse("9x8:dc"), max_nodes=5000, best_moves=True)
    assert again.timed_out and again.nodes == 5000


def test_a_limit_that_runs_out_among_the_best_moves_keeps_the_score_and_counts_only_the_nodes_searched() -> None:
    """Review: ``--json`` (which asks for the best moves) threw away a
    score found in time when its moves' searches ran out of time, and
    answered "timeout" where the plain command answered the score."""
    solver, position = Solver(), Position.parse("6x4:dd")
    solver.clear()  # no stored result: each search below takes the same nodes
    solved = solver.solve(position)
    solver.clear()
    given_up = solver.solve(position, best_moves=True, max_nodes=solved.nodes + 1)  # the score, then one node
    assert given_up.nodes == solved.nodes + 1
    assert given_up.score == solved.score and not given_up.timed_out and not given_up.complete
    record = given_up.to_dict()
    assert record["score"] == solved.score and record["timed_out"] is True and record["best_moves"] is None
    assert solver.solve(position, best_moves=True).to_dict()["best_moves"]  # with no limit: found, a list


def test_an_analysis_under_a_node_budget_is_reproducible_never_overspent_and_exact_where_it_answers() -> None:
    """Review: ``analyse`` had a timeout but no node budget, so an analysis
    could not be repeated to the node as ``solve(max_nodes=...)`` can."""
    position = Position.parse("6x5:dc")
    exact = Solver().analyse(position)
    assert None not in exact.values()
    partial = 0
    for budget in (0, 1_000_000, 2_000_000):  # all of it takes 1.9 M nodes
        runs = []
        for _ in range(2):
            solver = Solver()
            solver.clear()  # no stored result: the same search each time
            runs.append(solver.analyse(position, max_nodes=budget))
            assert solver.nodes <= budget
        assert runs[0] == runs[1]  # to the node: the same moves scored, the same scores
        assert all(score is None or score == exact[move] for move, score in runs[0].items())
        partial += 0 < sum(score is not None for score in runs[0].values()) < len(exact)
    assert partial == 2  # the two budgets short of it each scored some moves and not others
    assert Solver().analyse(position, max_nodes=10**9) == exact
    # a move that lets the opponent win at once is scored without a search, whatever the budget
    threat = Position.parse("4x4:ababa")  # A threatens a4: every move but a lets A win
    scores = Solver().analyse(threat, max_nodes=0)
    assert scores[Move.parse("c")] == -((threat.play(Move.parse("c")).empty_cells + 1) // 2) == scores[Move.parse("d")]


def test_a_timeout_beyond_what_the_clock_can_count_is_no_timeout() -> None:
    """Review: ``--timeout 1e10`` printed a traceback from the timer's
    thread (OverflowError), which died, and the limit was not kept."""
    import threading

    failures: list[object] = []
    previous, threading.excepthook = threading.excepthook, failures.append
    try:
        assert Solver().solve(Position.parse("6x4:dd"), timeout=1e10).score is not None
        assert solve("6x4:dd", timeout=1e300).score is not None
    finally:
        threading.excepthook = previous
    assert failures == []


def test_an_analysis_all_or_none_stops_at_its_first_unscored_move() -> None:
    solver = Solver()
    easy = Position.parse("6x5/Xc2:dd")
    assert solver.analyse(easy, timeout=60, all_or_none=True) == solver.analyse(easy)
    hard = Position.parse("9x8:dc")  # no move of it is solved in a twentieth of a second
    searched = []
    search = solver._run
    solver._run = lambda *args: searched.append(args[0]) or search(*args)  # type: ignore[method-assign]
    scores = solver.analyse(hard, timeout=0.05, all_or_none=True)
    assert set(scores) == set(hard.legal_moves()) and set(scores.values()) == {None}
    assert len(searched) == 1  # the moves after the first miss were not searched


def test_a_cancelled_solver_gives_up_its_search_and_every_later_one() -> None:
    """``cancel()`` from another thread stops the search under way as a
    timeout does (an analysis of a position that takes hours, with no clock
    at all, returns), and the solver searches nothing more: a server stops
    the search of a position nobody looks at any more."""
    import threading

    solver = Solver()
    hard = Position.parse("9x8:dc")
    answers: list[dict] = []
    worker = threading.Thread(target=lambda: answers.append(solver.analyse(hard)), daemon=True)
    worker.start()
    while solver._running is None and worker.is_alive():  # its first move's search has started
        threading.Event().wait(0.01)
    solver.cancel()
    worker.join(60)
    assert not worker.is_alive()
    assert set(answers[0]) == set(hard.legal_moves()) and set(answers[0].values()) == {None}
    assert solver.solve(Position.parse("6x5/Xc2:dd")).timed_out  # no search after the cancel


def test_a_move_that_wins_at_once_or_lets_the_opponent_win_at_once_is_known_whatever_the_clock() -> None:
    solver = Solver()
    # A threatens c1 and g1: whatever B plays, A wins with its next stone
    lost = Position.parse("9x8:ddeeffa")
    starved = solver.analyse(lost, timeout=1e-9)  # a clock that runs out before any search
    assert starved == solver.analyse(lost)
    assert set(starved.values()) == {-(lost.empty_cells // 2)}
    # one threat (f1, B holds b1): B's f blocks it and needs a search; every other move is known at once
    one = Position.parse("6x5:cbdde")
    known = {m.token: v for m, v in solver.analyse(one, timeout=1e-9).items() if v is not None}
    assert "f" not in known and len(known) == len(one.legal_moves()) - 1
    assert known == {m.token: v for m, v in solver.analyse(one).items() if m.token != "f"}
    win = Position.parse("7x6:ddeeff")  # A to move: c and g win at once, at any clock
    assert {m.token: v for m, v in solver.analyse(win, timeout=1e-9).items() if v is not None} == {"c": 18, "g": 18}



def test_the_python_api_takes_a_string_and_gives_the_best_moves() -> None:
    solution = solve("7x6:ddddddcc")
    assert solution.score == 16
    assert [m.token for m in solution.best_moves] == ["b", "e"]  # both win with the next piece
    record = solution.to_dict()
    assert record["score"] == 16 and record["best_moves"] == ["b", "e"] and record["nodes"] > 0


def test_the_function_takes_the_solvers_arguments_with_the_best_moves_on_by_default() -> None:
    """Review: ``solve("7x6", best_moves=False)`` was a ``TypeError``, and
    ``max_nodes`` too, though the page shows both with ``Solver.solve``."""
    assert solve("7x6:ddddddcc", best_moves=False).best_moves == ()
    assert Solver().solve("7x6:ddddddcc").best_moves == ()  # a kept solver asks for them
    given_up = solve("8x7", max_nodes=1000)
    assert given_up.score is None and 0 < given_up.nodes <= 1000


def test_ctrl_c_stops_a_long_solve_called_from_a_script_at_once() -> None:
    """Review: ``solve("9x8")`` from a script or a notebook ignored Ctrl-C,
    for the hours the search takes (the kernel runs without Python's signal
    handlers); now the search stops and ``KeyboardInterrupt`` is raised.
    The solver stays usable."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    code = textwrap.dedent("""
        import signal, threading
        signal.signal(signal.SIGINT, signal.default_int_handler)  # as at a terminal: a background job ignores it
        from c4lab.solver import Solver
        solver = Solver(table_size=1 << 16)
        solver.prepare("9x8")
        try:
            print("solving", flush=True)
            solver.solve("9x8")
        except KeyboardInterrupt:
            print("interrupted", flush=True)
        print(solver.solve("5x4:cc").score, [t.name for t in threading.enumerate()])
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        assert child.stdout.readline() == "solving\n"
        time.sleep(1.0)  # into the search (hours long: 9x8 is not solved here)
        child.send_signal(signal.SIGINT)
        child.wait(60)  # before: the search went on, and this ran out
        out = child.stdout.read()
    finally:
        child.kill()
        child.wait()
    assert out == f"interrupted\n{Solver().solve('5x4:cc').score} ['MainThread']\n"
    assert child.returncode == 0


def test_a_solver_takes_a_position_or_its_notation_and_says_what_else_to_pass() -> None:
    """Review: ``Solver().solve("4x4")`` raised ``AttributeError`` where the
    module's ``solve`` took the string."""
    solver = Solver()
    assert solver.solve("5x4:cc").score == solver.solve(Position.parse("5x4:cc")).score
    assert solver.analyse("5x4:cc") == solver.analyse(Position.parse("5x4:cc"))
    with pytest.raises(TypeError, match="a position is a Position or its notation like '7x6:dd', not 3"):
        solver.solve(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="column z"):
        solver.analyse("5x4:z")


def test_a_finished_game_has_nothing_to_solve() -> None:
    with pytest.raises(ValueError, match="game is over"):
        Solver().solve(Position.parse("4x4:abababa"))


@pytest.mark.parametrize(("finished", "result"), [("4x4:abababa", "A (white) wins: four in a row"),
                                                  ("4x4:dcbacaaaddbcdbcb", "draw: the board is full")],
                         ids=["won", "drawn"])
def test_a_finished_game_has_no_move_to_analyse_as_it_has_nothing_to_solve(finished: str, result: str) -> None:
    """Review: ``analyse`` answered ``{}`` (a position with no moves, read as
    "every move scored") where ``solve`` says the game is over; and who won
    it was not said (review 158)."""
    said = f"the game is over in {finished} ({result}): there is"
    for call in (lambda: Solver().analyse(finished), lambda: Solver().analyse(Position.parse(finished), timeout=1.0,
                                                                                weak=True)):
        with pytest.raises(ValueError) as refused:
            call()
        assert str(refused.value) == f"{said} no move to analyse"
    with pytest.raises(ValueError) as refused:
        Solver().solve(finished)
    assert str(refused.value) == f"{said} nothing to solve"


def test_a_long_search_reports_its_progress() -> None:
    reports = []
    solver = Solver(progress=reports.append, progress_every=0.05)
    assert solver.solve(Position.parse("9x8:dc"), timeout=0.6).timed_out
    assert reports, "no progress reported during a 0.6 s search"
    assert [r.nodes for r in reports] == sorted(r.nodes for r in reports) and reports[-1].nodes > 0
    for report in reports:
        if report.low is not None:
            assert report.low <= report.probe <= report.high  # type: ignore[operator]
        assert "nodes" in report.describe()


def _search(position: Position, *, mirror: bool, table: np.ndarray, generation: int = 1) -> tuple[int, int]:
    """(score, nodes) of the one-word search with mirror sharing forced on
    from the first node at every position, or off."""
    from c4lab.solver import negamax
    from c4lab.solver.bitboard import Bitboards

    b = Bitboards.of(position)
    X = negamax.context(b)
    X[negamax.X_LIMIT] = (1 << 63) - 1
    X[negamax.X_GEN] = generation
    if mirror:
        assert X[negamax.X_MIRROR] == negamax.MIRROR_EMPTY  # a symmetric board
        X[negamax.X_MIRROR] = 0
        X[negamax.X_MIRROR_AFTER] = 0
    else:
        X[negamax.X_MIRROR] = negamax.NO_MIRROR
    return negamax.solve(b, False, X, table), int(X[negamax.X_NODES])


@pytest.mark.parametrize("name", ["Test_L2_R2", "Test_L1_R1"])
def test_sharing_entries_with_mirror_images_keeps_every_score(name: str) -> None:
    from c4lab.solver import negamax

    table = negamax.new_table(1 << 16)
    for generation, item in enumerate(read_set(BENCH_CLASSIC / name, limit=40), start=1):
        shared, _ = _search(item.position, mirror=True, table=table, generation=2 * generation)
        own, _ = _search(item.position, mirror=False, table=table, generation=2 * generation + 1)
        assert shared == own == item.score, item.position.notation


def test_a_position_finds_what_its_mirror_image_stored() -> None:
    from c4lab.solver import negamax

    position = Position.parse("7x6:cdcde")
    mirror = Position.parse("7x6:ededc")
    table = negamax.new_table(1 << 18)
    score, first = _search(position, mirror=True, table=table)
    again, second = _search(mirror, mirror=True, table=table)
    assert again == score
    # The positions with many empty cells are found (the smaller ones are
    # stored under their own key): without sharing, the mirror image takes
    # about as long as the first search.
    assert second < first / 3


def test_boards_that_are_not_symmetric_do_not_share() -> None:
    from c4lab.solver import negamax
    from c4lab.solver.bitboard import Bitboards

    for text, shares in [("7x6", True), ("7x6/Xd2", True), ("7x6/Xa1", False), ("6x5/Bb2", False), ("9x8", False)]:
        X = negamax.context(Bitboards.of(Position.parse(text)))
        assert (X[negamax.X_MIRROR] != negamax.NO_MIRROR) == shares, text


#: Run in a fresh process: ``compile_search`` (what a child compiles aside)
#: and whether the solver's search was on disk before and after.
COMPILE_SEARCH = """
import inspect
import json
from c4lab.solver.api import compile_search, on_disk
before = on_disk()
compile_search()
print(json.dumps({"before": before, "after": on_disk()}))
"""

#: Then, in another process: an exact answer with its best moves.
SOLVE = """
import inspect
import json
from c4lab.solver import solve
print(json.dumps({"score": solve("6x5/Xc2:dcdc").score, "compiled": compiled}))
"""


@pytest.mark.slow
def test_compile_search_leaves_every_one_word_solve_on_disk(tmp_path: Path) -> None:
    """``compile_search`` on the default (a 4x4 board) compiles what any
    board of up to 64 bits needs: a later process solves a 6x5 board with a
    forbidden cell and compiles nothing of the solver's."""
    assert run_counting_compiles(COMPILE_SEARCH, tmp_path) == {"before": False, "after": True}
    report = run_counting_compiles(SOLVE, tmp_path)
    assert report["score"] == solve("6x5/Xc2:dcdc").score
    assert [name for name in report["compiled"] if name.startswith("c4lab.solver")] == []


def test_a_solver_is_built_from_its_public_settings_only() -> None:
    # help(Solver) showed _cleared, _cpu, _nodes_left, ... as constructor arguments
    assert list(inspect.signature(Solver).parameters) == ["table_size", "book", "progress", "progress_every"]
    with pytest.raises(TypeError, match="_searched"):
        Solver(_searched=3)  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: Solver(table_size="x"), r"^Solver: table_size must be an integer, not 'x'$"),
        (lambda: Solver(table_size=3), r"^Solver: table_size must be a power of two, not 3$"),
        (lambda: Solver(progress_every="1"), r"^Solver: progress_every must be a number of seconds, not '1'$"),
        (lambda: Solver(progress=3), r"^Solver: progress must be a function of a Progress, not 3$"),
        (lambda: Solver().solve("4x4:dacd", timeout="1"), r"^solve: timeout must be a number of seconds, not '1'$"),
        (lambda: Solver().solve("4x4:dacd", max_nodes=5.5), r"^solve: max_nodes must be an integer, not 5.5$"),
        (lambda: Solver().analyse("4x4:dacd", timeout=True), r"^analyse: timeout must be a number of seconds, not True$"),
        # Review: these ran: a negative timeout or node budget gave up at once (score None, as for a position too
        # hard), a progress_every of 0 or less called progress without a pause
        (lambda: Solver().solve("4x4:dacd", timeout=-1), r"^solve: timeout must be 0 or more seconds, not -1$"),
        (lambda: Solver().analyse("4x4:dacd", timeout=-0.5), r"^analyse: timeout must be 0 or more seconds, not -0.5$"),
        (lambda: Solver().solve("4x4:dacd", max_nodes=-5), r"^solve: max_nodes must be 0 or more, not -5$"),
        (lambda: Solver().analyse("4x4:dacd", max_nodes=-1), r"^analyse: max_nodes must be 0 or more, not -1$"),
        (lambda: Solver().analyse("4x4:dacd", max_nodes="9"), r"^analyse: max_nodes must be an integer, not '9'$"),
        (lambda: Solver(progress_every=0), r"^Solver: progress_every must be more than 0 seconds, not 0$"),
        (lambda: Solver(progress_every=-1.0), r"^Solver: progress_every must be more than 0 seconds, not -1.0$"),
    ],
)
def test_a_bad_setting_or_budget_is_refused_at_once_naming_it(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_the_cpu_time_of_a_solve_is_its_search_thread_s_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a solve from the main thread runs its search on a thread of
    its own (so that Ctrl-C stops it), and ``cpu_s`` was the process's CPU
    time: it counted that thread's start, about 0.2 ms a search, so that
    ``c4lab bench solver`` gave 315 us a position for a set the search
    solves in 26.  It is the CPU time of the thread that ran the search
    (a clock that counts 0.25 s of it here, whatever else the process does)."""
    import time
    from types import SimpleNamespace

    from c4lab.solver import api

    ticks = iter([10.0, 10.25])
    monkeypatch.setattr(api, "time", SimpleNamespace(monotonic=time.monotonic, thread_time=lambda: next(ticks)))
    solution = Solver(table_size=1 << 10, book=False).solve(Position.parse("4x4:abab"))
    assert solution.cpu_s == 0.25
