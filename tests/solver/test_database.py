"""The published 12-ply classic database (``bitbully-databases``), read by
c4lab's own reader: its values are RULES.md's scores, as c4lab's solver
finds them, and a damaged file is refused with a message that says where."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from c4lab.agents import make_agent
from c4lab.rules import Move, Position
from c4lab.solver import Solver
from c4lab.solver import database as D


@pytest.fixture(scope="module")
def db() -> D.Database:
    found = D.default()
    assert found is not None, "bitbully-databases is a dependency: it must be installed"
    return found


# -- the format's documented examples ---------------------------------------------

DOCUMENTED = {"7x6:bdbfccdccddg": -10, "7x6:acbbcbbedeec": 2, "7x6:bdccdccddfee": 0}


@pytest.mark.parametrize(("notation", "score"), DOCUMENTED.items())
def test_the_documented_examples_get_their_scores(db: D.Database, notation: str, score: int) -> None:
    assert db.score(Position.parse(notation)) == score


@pytest.mark.parametrize(("notation", "score"), DOCUMENTED.items())
def test_c4lab_s_own_solver_agrees_on_the_documented_examples(notation: str, score: int) -> None:
    assert Solver().solve(Position.parse(notation)).score == score


def test_a_stored_value_is_a_distance_to_the_end_turned_into_rules_md_s_score() -> None:
    assert D.score_of_value(0) == 0
    # the first player wins with the last piece of the board (ply 41): E = 2 before it
    assert D.score_of_value(100 - 29) == 1
    # the second player wins with the 24th piece: E = 19 before it, (19 + 1) // 2
    assert D.score_of_value(-(100 - 12)) == -10
    # the fastest possible: the first player's next piece wins (E = 30)
    assert D.score_of_value(100 - 1) == 15


def test_a_position_and_its_mirror_image_read_the_same_value(db: D.Database) -> None:
    position = Position.parse("7x6:bdbfccdccddg")
    mirror = Position.parse("7x6:" + "".join("abcdefg"[6 - "abcdefg".index(m.token)] for m in position.moves))
    assert db.value(mirror) == db.value(position) == -88


def test_what_the_database_does_not_hold_reads_none(db: D.Database) -> None:
    assert db.value(Position.parse("7x6:dddd")) is None  # not 12 pieces
    assert db.value(Position.parse("8x7:bdbfccdccddg")) is None  # another board
    # the side to move wins at once: such positions are not stored
    assert db.value(Position.parse("7x6:egfbccedgede")) is None


def test_the_default_database_says_where_it_comes_from(db: D.Database) -> None:
    assert len(db) == 4_200_899
    assert "bitbully-databases" in db.describe() and str(db.path) in db.describe()


def test_a_missing_package_is_reported_as_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(name: str) -> None:
        raise D.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(D.importlib.metadata, "distribution", missing)
    assert D.locate() is None
    assert not D.reaches(Position.parse("7x6:dd"))
    monkeypatch.setattr(D, "default", lambda: None)
    assert "not installed (pip install bitbully-databases)" in D.status()
    assert not Solver().uses_database(Position.parse("7x6:dd"))  # the search alone


# -- damaged files -----------------------------------------------------------------


def _write(path: Path, keys: list[int], values: list[int]) -> Path:
    records = np.zeros(len(keys), dtype=[("key", ">i4"), ("value", "i1")])
    records["key"], records["value"] = keys, values
    path.write_bytes(records.tobytes())
    return path


def test_a_file_that_is_not_whole_records_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "cut.dat"
    path.write_bytes(b"\x00" * 12)
    with pytest.raises(D.DatabaseError, match=r"cut\.dat.*12 bytes.*5-byte records"):
        D.load(path)


def test_an_unsorted_file_is_refused_naming_the_record(tmp_path: Path) -> None:
    path = _write(tmp_path / "unsorted.dat", [-5, 3, 2, 9], [0, 0, 0, 0])
    with pytest.raises(D.DatabaseError, match=r"record 2 \(byte 10\)"):
        D.load(path)


def test_an_impossible_value_is_refused_naming_the_record(tmp_path: Path) -> None:
    path = _write(tmp_path / "value.dat", [1, 2, 3], [0, 71, 40])
    with pytest.raises(D.DatabaseError, match=r"record 2 \(byte 10\).*impossible value 40"):
        D.load(path)


def test_a_missing_file_is_refused_naming_it(tmp_path: Path) -> None:
    with pytest.raises(D.DatabaseError, match=r"cannot read the database .*nothing\.dat"):
        D.load(tmp_path / "nothing.dat")


# -- random entries against the solver ---------------------------------------------


def _position_of(key: int) -> Position:
    """The position a key stands for, decoded independently of the reader's
    encoder: the columns from the key's bits, then any order of play that
    alternates the players and respects gravity."""
    bits = format(key & 0xFFFF_FFFF, "032b")
    columns: list[list[str]] = []
    i = 0
    for _ in range(7):
        column = []
        while bits[i] == "1":
            column.append("A" if bits[i + 1] == "0" else "B")
            i += 2
        i += 1
        columns.append(column)

    def order(placed: list[int], moves: str) -> str | None:
        if len(moves) == 12:
            return moves
        side = "AB"[len(moves) % 2]
        for c, column in enumerate(columns):
            if placed[c] < len(column) and column[placed[c]] == side:
                placed[c] += 1
                found = order(placed, moves + "abcdefg"[c])
                placed[c] -= 1
                if found:
                    return found
        return None

    moves = order([0] * 7, "")
    assert moves is not None, f"key {key} decodes to no reachable position"
    return Position.parse("7x6:" + moves)


@pytest.mark.slow
def test_two_hundred_random_entries_match_c4lab_s_solver(db: D.Database) -> None:
    rng = random.Random(12)
    solver = Solver()
    for index in rng.sample(range(len(db)), 200):
        position = _position_of(int(db.keys[index]))
        expected = D.score_of_value(int(db.values[index]))
        assert db.score(position) == expected, position.notation
        assert solver.solve(position).score == expected, f"entry {index}: {position.notation}"


# -- the search down to the database --------------------------------------------


def test_the_empty_board_s_first_moves_get_their_exact_scores() -> None:
    scores = Solver().analyse(Position.parse("7x6"))
    assert [scores[Move(c)] for c in range(7)] == [-2, -1, 0, 1, 0, -1, -2]


def test_a_search_down_to_the_database_agrees_with_a_search_to_the_end() -> None:
    rng = random.Random(5)
    with_book, without = Solver(), Solver(book=False)
    checked = 0
    while checked < 12:
        position = Position.parse("7x6")
        for _ in range(rng.randint(9, 12)):
            position = position.play(rng.choice(position.legal_moves()))
            if position.is_over:
                break
        if position.is_over:
            continue
        with_book.clear()
        without.clear()
        assert with_book.solve(position).score == without.solve(position).score, position.notation
        checked += 1


def test_the_database_is_used_only_for_the_classic_board_and_can_be_turned_off() -> None:
    position = Position.parse("7x6:dddd")
    assert Solver().solve(position).nodes < 100_000  # the database answers at ply 12
    other = Position.parse("7x6/Xa1:dd")
    assert not Solver().uses_database(other)
    assert not Solver(book=False).uses_database(position) and Solver().uses_database(position)


# -- the agents that use it --------------------------------------------------------


def test_master_s_opening_move_from_the_database_compiles_neither_minimax_nor_uct() -> None:
    """Its first move on 7x6 is the solver's (down to the database): a
    process that plays only that move does not compile the searches it does
    not run (on a first start, 6 s of a 10 s move)."""
    code = (
        "from c4lab.agents import make_agent; from c4lab.rules import Position\n"
        "import c4lab.agents.minimax as m, c4lab.agents.uct_search as u\n"
        "move, analysis = make_agent('master:time=none,iterations=100').analyse(Position.parse('7x6'))\n"
        "print(move.token, analysis.note.split(':')[0], m.compile_search.cache_info().currsize,"
        " u._search_kernel.cache_info().currsize, u._policy_function.cache_info().currsize)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["d", "solved", "0", "0", "0"]


def test_perfect_says_what_each_board_has_the_classic_database_and_nothing_elsewhere() -> None:
    """``c4lab agents`` and the page's picker said "the solver with the
    classic opening book": no book ships, and no board but the classic one
    has a database.  What it says now holds: the classic search ends at the
    database whatever ``book=`` (the opening solves in a few nodes), another
    7x6 board has none (the same budget does not solve its opening)."""
    from c4lab.agents import agent_infos
    from c4lab.solver.best_move import best_move

    info = next(i for i in agent_infos() if i.name == "perfect")
    assert "classic opening book" not in info.help
    assert "On the classic 7x6 board the search ends at the published 12-ply database" in info.help
    assert "other boards have neither" in info.help and "master's move" in info.help
    found = best_move(Position.parse("7x6"), book=False, max_nodes=1_000_000, table_size=1 << 20)
    assert found is not None and found.move == Move.parse("d") and found.note.startswith("solved")
    assert best_move(Position.parse("7x6/Xd3"), book=False, max_nodes=1_000_000, table_size=1 << 20) is None


@pytest.mark.parametrize("spec", ["perfect", "master"])
def test_perfect_and_master_play_the_exact_move_of_the_classic_opening(spec: str) -> None:
    agent = make_agent(spec)
    move, analysis = agent.analyse(Position.parse("7x6"))
    assert move == Move.parse("d")  # the only winning first move
    assert analysis.note is not None and analysis.note.startswith("solved")
    rng = random.Random(9)
    solver = Solver()
    for _ in range(6):
        position = Position.parse("7x6")
        for _ in range(rng.randint(1, 11)):
            position = position.play(rng.choice(position.legal_moves()))
        if position.is_over:
            continue
        scores = solver.analyse(position)
        move = agent.choose(position)
        assert scores[move] == max(scores.values()), position.notation


def test_master_gives_the_classic_opening_s_solve_three_quarters_of_a_timed_move(monkeypatch: pytest.MonkeyPatch) -> None:
    """The exact move is worth more than what minimax and UCT find in the
    rest: at ``time=0.5`` a quarter (0.125 s) left the empty board unsolved
    on a busy machine, where its search takes 0.1-0.2 s."""
    from c4lab.agents import master

    asked: list[float | None] = []
    solved = master.solved_move

    def timed(position: Position, **options: Any) -> Any:
        asked.append(options.get("timeout"))
        return solved(position, **options)

    monkeypatch.setattr(master, "solved_move", timed)
    move, analysis = make_agent("master:time=0.5").analyse(Position.parse("7x6"))
    assert asked == [0.375] and move == Move.parse("d") and analysis.note.startswith("solved")


def test_master_s_warm_up_on_the_classic_board_still_compiles_minimax_and_uct() -> None:
    """The warm-up's moves on 7x6 are the solver's; ``compile_rest`` then
    compiles the searches the moves after the database run, so that a
    prepared ``master`` (a room's, the arena's) meets no compiler under the
    clock, and ``perfect``'s fallback is prepared the same way."""
    code = (
        "from c4lab.agents.base import warm_up\nfrom c4lab.rules import Position\n"
        "import c4lab.agents.minimax as m, c4lab.agents.uct_search as u\n"
        "warm_up(SPEC, Position.parse('7x6'))\n"
        "print(m.compile_search.cache_info().currsize, u._search_kernel.cache_info().currsize,"
        " u._policy_function.cache_info().currsize)\n"
    )
    for spec in ("master", "perfect"):
        run = subprocess.run([sys.executable, "-c", code.replace("SPEC", repr(spec))], capture_output=True, text=True, check=True)
        assert run.stdout.split() == ["1", "1", "1"], spec
