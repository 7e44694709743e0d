"""The solver's three-word instance (``c4lab.solver.negamax`` over bitboards
of three 64-bit words, boards up to 12x12) gives RULES.md's scores: on the
public small cases, in agreement with the one-word instance wherever both
apply, and against a plain negamax
straight from RULES.md near the end of big boards.  A search stopped
by its node limit says so (``ABORTED``) and never gives a wrong score."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from numba import njit

from c4lab.rules import Cell, Position
from c4lab.solver import negamax
from c4lab.solver import words as ops
from c4lab.solver.bench import read_set
from c4lab.solver.bitboard import Bitboards, words
from testkit import BENCH_CLASSIC, CASES, brute_score

NO_LIMIT = (1 << 63) - 1


def searched(position: Position, *, three_words: bool, weak: bool = False,
             table: np.ndarray | None = None, generation: int = 1) -> tuple[int, int]:
    """(score, nodes) of the instance of one width."""
    b = Bitboards.of(position)
    X = negamax.context(b)
    X[negamax.X_LIMIT] = NO_LIMIT
    X[negamax.X_GEN] = generation
    table = negamax.new_table(1 << 16) if table is None else table
    score = negamax.solve(b, weak, X, table, three_words=three_words)
    return score, int(X[negamax.X_NODES])


def wide_score(position: Position, *, weak: bool = False, table: np.ndarray | None = None, generation: int = 1) -> int:
    return searched(position, three_words=True, weak=weak, table=table, generation=generation)[0]


def sign(x: int) -> int:
    return (x > 0) - (x < 0)


def has_win(position: Position) -> bool:
    """Can the side to move win at once?"""
    return any(position.play(m).result not in (None, "draw") for m in position.legal_moves())


def near_end(
    start: str,
    left: int,
    rng: np.random.Generator,
    *,
    quiet: float = 0.8,
    keep_bonus: float = 1.0,
    last: tuple[int, ...] = (),
) -> Position:
    """A position of ``start`` with at most ``left`` empty cells, where the
    side to move cannot win at once, reached by random moves that do not end
    the game.  With probability ``quiet`` a move is one that lands on a cell
    of the mover's colour in a pattern without four in a line (so the
    endgame still has something to play for); a move onto the bonus cell is
    avoided with probability ``keep_bonus`` (so bans stay in the game); the
    columns ``last`` are filled only when the others are full."""
    variant = Position.parse(start).variant
    while True:
        p: Position | None = Position.parse(start)
        while p is not None and (p.empty_cells > left or has_win(p)):
            moves = list(p.legal_moves())
            rng.shuffle(moves)
            if any(m.column not in last for m in moves):
                moves = [m for m in moves if m.column not in last]
            patterned = rng.random() < quiet
            avoid_bonus = rng.random() < keep_bonus
            chosen = None
            for move in moves:
                child = p.play(move)
                if child.is_over:
                    continue
                cell = child.last_cell
                assert cell is not None
                if avoid_bonus and cell == variant.bonus:
                    continue
                if chosen is None:
                    chosen = child
                if not patterned or (cell.row // 2 + cell.col) % 2 == (0 if p.to_move == "A" else 1):
                    chosen = child
                    break
            p = chosen
        if p is not None:
            return p


def random_start(rng: np.random.Generator, width: int, height: int, bonus: bool) -> str:
    """A board with 0 to 3 forbidden cells (in one column at times) and
    maybe a bonus cell."""
    cells = [Cell(c, r) for c in range(width) for r in range(height)]
    forbidden = [cells[i] for i in rng.permutation(len(cells))[: int(rng.integers(0, 4))]]
    if forbidden and rng.random() < 0.3:  # a stack of two
        low = forbidden[0]
        if low.row + 1 < height and Cell(low.col, low.row + 1) not in forbidden:
            forbidden.append(Cell(low.col, low.row + 1))
    text = f"{width}x{height}" + "".join(f"/X{f}" for f in forbidden)
    if bonus:
        free = [c for c in cells if c not in forbidden]
        text += f"/B{free[int(rng.integers(len(free)))]}"
    return text


# -- the public cases --------------------------------------------------------


def _solve_small() -> list[dict]:
    with (CASES / "solve_small.jsonl").open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


SMALL = _solve_small()


def test_every_small_case_gets_exactly_its_score_and_weak_sign() -> None:
    assert len(SMALL) == 60
    for case in SMALL:
        position = Position.parse(case["position"])
        assert wide_score(position) == case["score"], case["position"]
        assert wide_score(position, weak=True) == sign(case["score"]), case["position"]


# -- three-word arithmetic ------------------------------------------------------

FULL = (1 << 192) - 1


@njit
def _three_word_ops(a, b, s, stride):
    return ops.add(a, b), ops.shl(a, s), ops.shr(a, s), ops.completing(a, stride)


def test_three_word_arithmetic_matches_python_integers() -> None:
    """Carries and shifts cross the words; the win test is K.completing_cells
    on 192 bits (vertical, horizontal and both diagonals, 3 + 1 and 2 + 2)."""
    rng = np.random.default_rng(1)

    def number() -> int:
        x = int.from_bytes(rng.bytes(24), "little")
        if rng.random() < 0.4:  # long runs of ones: carries through whole words
            x |= ((1 << int(rng.integers(1, 150))) - 1) << int(rng.integers(0, 40))
        return x & FULL

    def as_words(x: int) -> tuple:
        return tuple(np.uint64(w) for w in words(x))

    def value(t: tuple) -> int:
        return sum(int(w) << (64 * i) for i, w in enumerate(t))

    def shift(x: int, k: int) -> int:
        return (x << k) & FULL if k > 0 else x >> -k

    for _ in range(400):
        a, b, s, stride = number(), number(), int(rng.integers(1, 64)), int(rng.integers(5, 14))
        add, left, right, completing = _three_word_ops(as_words(a), as_words(b), np.uint64(s), np.uint64(stride))
        assert value(add) == (a + b) & FULL
        assert value(left) == (a << s) & FULL
        assert value(right) == a >> s
        expected = shift(a, 1) & shift(a, 2) & shift(a, 3)
        for d in (stride, stride - 1, stride + 1):
            three = shift(a, d) & shift(a, 2 * d)
            expected |= three & (shift(a, 3 * d) | shift(a, -d))
            three = shift(a, -d) & shift(a, -2 * d)
            expected |= three & (shift(a, d) | shift(a, -3 * d))
        assert value(completing) == expected


@njit
def _bit_ops(a, b):
    X = np.zeros(8, dtype=np.uint64)
    ops.store(X, 1, a)
    return (ops.and_(a, b), ops.or_(a, b), ops.xor(a, b), ops.andnot(a, b), ops.nonzero(a), ops.equal(a, b),
            ops.equal(a, a), ops.popcount(a), ops.several(a), ops.low_index(a), ops.load(X, 1, a), ops.zero(a),
            ops.add(a, b), ops.shl(a, np.uint64(9)), ops.shr(a, np.uint64(9)))


@pytest.mark.parametrize("width", [1, 3])
def test_the_bit_operations_of_each_width_match_python_integers(width: int) -> None:
    """Each operation on one word and on three, against Python's integers:
    the logic, the count and lowest index of the bits set (0 when none), the
    round trip through the context array, on random words and on the edge
    cases (no bit, one bit in each word, every bit)."""
    rng = np.random.default_rng(7)
    bits = 64 * width
    full = (1 << bits) - 1
    edge = [0, 1, 1 << (bits - 1), full] + [1 << (64 * k + 5) for k in range(width)]
    numbers = edge + [int.from_bytes(rng.bytes(8 * width), "little") >> int(rng.integers(0, bits)) for _ in range(200)]

    def word(x: int):  # type: ignore[no-untyped-def]
        return np.uint64(x) if width == 1 else tuple(np.uint64(w) for w in words(x))

    def value(w) -> int:  # type: ignore[no-untyped-def]
        return int(w) if width == 1 else sum(int(part) << (64 * i) for i, part in enumerate(w))

    for a in numbers:
        for b in (numbers[int(rng.integers(0, len(numbers)))], a):
            got = _bit_ops(word(a), word(b))
            low = (a & -a).bit_length()
            assert [value(got[i]) for i in (0, 1, 2, 3)] == [a & b, a | b, a ^ b, a & ~b & full], (a, b)
            assert (bool(got[4]), bool(got[5]), bool(got[6])) == (a != 0, a == b, True), (a, b)
            assert (int(got[7]), bool(got[8]), int(got[9])) == (a.bit_count(), a.bit_count() > 1, low), a
            assert (value(got[10]), value(got[11])) == (a, 0), a
            assert value(got[12]) == (a + b) & full, (a, b)
            assert (value(got[13]), value(got[14])) == ((a << 9) & full, a >> 9), a


# -- agreement with the one-word solver ----------------------------------------

ONE_WORD_BOARDS = [(4, 4), (5, 4), (6, 5), (7, 6), (8, 7), (9, 6), (4, 12), (5, 10), (6, 8)]


def test_both_widths_give_the_same_scores() -> None:
    """One search, two instances: on boards that fit one word, the three-word
    instance finds every score the one-word instance finds, with a large
    table and with a table of one row (every probe collides)."""
    rng = np.random.default_rng(2024)
    checked = 0
    scores = set()
    for round_ in range(36):
        width, height = ONE_WORD_BOARDS[round_ % len(ONE_WORD_BOARDS)]
        assert width * (height + 1) <= 64
        start = random_start(rng, width, height, bonus=round_ % 2 == 1)
        for _ in range(8):
            position = near_end(start, int(rng.integers(8, 21)), rng, quiet=rng.random(), keep_bonus=rng.random())
            for weak in (True, False):
                one = searched(position, three_words=False, weak=weak)
                assert one[0] == wide_score(position, weak=weak), (position.notation, weak)
                for three in (False, True):
                    tiny = searched(position, three_words=three, weak=weak, table=negamax.new_table(1))
                    assert tiny[0] == one[0], (position.notation, weak, three)
            scores.add(one[0])
            checked += 1
    assert checked == 288
    assert {-1, 0, 1} <= {sign(s) for s in scores}


def test_both_widths_agree_on_classic_positions_and_windows() -> None:
    for item in read_set(BENCH_CLASSIC / "Test_L2_R2", 12):
        assert searched(item.position, three_words=False)[0] == item.score
        assert searched(item.position, three_words=True)[0] == item.score
        b = Bitboards.of(item.position)
        for three in (False, True):
            X = negamax.context(b)
            X[negamax.X_LIMIT] = NO_LIMIT
            X[negamax.X_GEN] = 1
            value = negamax.window(b, item.score - 1, item.score + 1, X, negamax.new_table(1 << 16), three_words=three)
            assert value == item.score


def test_a_board_too_big_for_one_word_is_refused_for_it() -> None:
    b = Bitboards.of(Position.parse("9x8"))
    with pytest.raises(ValueError, match="does not fit one word"):
        negamax.solve(b, False, negamax.context(b), negamax.new_table(8), three_words=False)


# -- big boards against RULES.md itself ----------------------------------------

BIG_BOARDS = ["12x12/Xe3/Xj12/Be10", "9x8/Xd3/Bh6", "10x7/Xa1/Xg5/Bc5", "12x12/Xb1/Xk7/Bl12"]


@pytest.mark.parametrize("start", BIG_BOARDS)
def test_big_boards_near_the_end_get_rules_md_scores(start: str) -> None:
    rng = np.random.default_rng(len(start))
    for k in range(5):
        position = near_end(start, 10 + k % 3, rng, quiet=0.5 + 0.1 * k)
        assert Bitboards.of(position).wide
        expected = brute_score(position)
        assert wide_score(position) == expected, position.notation
        # a table of one or two entries: every probe collides, no score changes
        assert wide_score(position, table=negamax.new_table(1)) == expected, position.notation
        assert wide_score(position, table=negamax.new_table(2), weak=True) == sign(expected), position.notation


@pytest.mark.parametrize(
    ("start", "last"),
    [
        ("12x12/Xe3/Bk11", (9, 10, 11)),  # the third word: columns j (bits 117-129), k and l
        ("12x12/Xb1", (9, 10, 11)),
        ("12x12/Bf9", (3, 4, 5)),  # column e: bits 52-64, its guard in the second word
        ("9x8/Bb2", (6, 7, 8)),  # column h: bits 63-71
        ("11x11/Xd5/Bj9", (4, 5, 9, 10)),  # 132 bits: column k in the third word
    ],
)
def test_endgames_across_the_word_boundaries(start: str, last: tuple[int, ...]) -> None:
    rng = np.random.default_rng(11)
    for k in range(4):
        position = near_end(start, 10 + k % 3, rng, quiet=0.7, keep_bonus=0.8, last=last)
        assert wide_score(position) == brute_score(position), position.notation


@pytest.mark.parametrize(
    "start",
    ["4x4/Xb2/Xb3", "5x4/Xb2/Xb3/Xd1/Xd2", "5x5/Xc2/Xc3/Xc4", "5x4/Xb2/Xb3/Bd1", "12x12/Xe2/Xe3/Xe4/Bf11"],
)
def test_stacked_forbidden_cells(start: str) -> None:
    """A move is unsafe when the next piece of its column, past any number of
    forbidden cells, would land on an opponent's winning cell."""
    rng = np.random.default_rng(7)
    for k in range(12):
        position = near_end(start, 7 + k % 4, rng, quiet=0.6)
        assert wide_score(position) == brute_score(position), position.notation


def test_a_known_position_with_two_forbidden_cells_stacked() -> None:
    # B to move wins with its last stone (a or d).  In column b, b4 lands
    # right after b1, past the two forbidden cells: a safe-move test that
    # looks only one cell past a forbidden cell gets this wrong.
    position = Position.parse("4x4/Xb2/Xb3:dcc")
    assert brute_score(position) == 1
    assert wide_score(position) == 1


# -- windows ----------------------------------------------------------------


def test_window_is_fail_soft_negamax_around_the_score() -> None:
    rng = np.random.default_rng(5)
    for start in ["12x12/Xe3/Xj12/Be10", "7x6", "6x5/Xc4/Bb5"]:
        for _ in range(4):
            position = near_end(start, 12, rng, quiet=0.6)
            b = Bitboards.of(position)
            score = wide_score(position)
            for alpha, beta in [(score - 1, score + 1), (score, score + 1), (score - 1, score), (-99, 99)]:
                X = negamax.context(b)
                X[negamax.X_LIMIT] = NO_LIMIT
                value = negamax.window(b, alpha, beta, X, negamax.new_table(1 << 12), three_words=True)
                if alpha < score < beta:
                    assert value == score
                elif score >= beta:
                    assert beta <= value <= score
                else:
                    assert score <= value <= alpha


def test_window_sees_an_immediate_win_at_the_root() -> None:
    position = Position.parse("12x12:ababab")  # A wins at a4
    b = Bitboards.of(position)
    X = negamax.context(b)
    X[negamax.X_LIMIT] = NO_LIMIT
    win = (position.empty_cells + 1) // 2
    assert negamax.window(b, win - 1, win + 1, X, negamax.new_table(1 << 10), three_words=True) == win
    assert wide_score(position) == win


# -- stopping a search --------------------------------------------------------


def test_a_node_limit_aborts_and_never_gives_a_wrong_score() -> None:
    position = Position.parse("9x8/Xd3/Bh6:ed")  # far from solved in 5000 nodes
    b = Bitboards.of(position)
    assert not has_win(position)
    X = negamax.context(b)
    assert X[negamax.X_LIMIT] == 0  # the context comes with no node budget
    assert negamax.solve(b, False, X, negamax.new_table(1 << 10), three_words=True) == negamax.ABORTED
    assert X[negamax.X_ABORTED] == 1
    for limit in [1, 2, 10, 100, 1000, 5000]:
        X = negamax.context(b)
        X[negamax.X_LIMIT] = limit
        assert negamax.solve(b, False, X, negamax.new_table(1 << 10), three_words=True) == negamax.ABORTED
        assert X[negamax.X_NODES] == limit + 1
    rng = np.random.default_rng(3)
    for _ in range(6):
        position = near_end("12x12/Xe3/Xj12/Be10", 14, rng, quiet=0.5)
        b = Bitboards.of(position)
        exact = wide_score(position)
        for limit in [3, 30, 300, 3000]:
            X = negamax.context(b)
            X[negamax.X_LIMIT] = limit
            assert negamax.solve(b, False, X, negamax.new_table(1 << 10), three_words=True) in (negamax.ABORTED, exact)


def test_another_thread_stops_a_running_search() -> None:
    b = Bitboards.of(Position.parse("12x12:fg"))  # far too hard to finish
    X = negamax.context(b)
    X[negamax.X_LIMIT] = NO_LIMIT
    stopper = threading.Timer(0.3, lambda: X.__setitem__(negamax.X_LIMIT, 0))
    start = time.monotonic()
    stopper.start()
    assert negamax.solve(b, False, X, negamax.new_table(1 << 16), three_words=True) == negamax.ABORTED
    assert time.monotonic() - start < 5
    assert X[negamax.X_NODES] > 0


# -- interface -----------------------------------------------------------------


def test_the_context_and_the_table_have_their_shapes() -> None:
    X = negamax.context(Bitboards.of(Position.parse("12x12")))
    assert X.dtype == np.uint64 and X.shape == (negamax.X_LEN,)
    assert negamax.new_table(8).shape == (8, 4)
    for size in [0, 3, 12]:
        with pytest.raises(ValueError):
            negamax.new_table(size)


def test_the_compiled_search_reloads_from_numba_s_cache_in_a_new_process() -> None:
    # numba crashed reloading a recursion compiled as several versions.
    code = (
        "from c4lab.rules import Position\n"
        "from c4lab.solver import negamax\n"
        "from c4lab.solver.bitboard import Bitboards\n"
        "b = Bitboards.of(Position.parse('4x4:dacd'))\n"
        "for three in (False, True):\n"
        "    X = negamax.context(b); X[negamax.X_LIMIT] = 1 << 40\n"
        "    print(negamax.solve(b, False, X, negamax.new_table(1 << 10), three_words=three))\n"
    )
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert run.stdout.split() == ["0", "0"]



def _four_with(position: Position, target: Cell) -> bool:
    """Whether a piece of the side to move on ``target`` would complete four
    in a line with its pieces on the board now."""
    mine = {(cell.col, cell.row) for cell, piece in position.cells.items() if piece == position.to_move}
    for dc, dr in ((1, 0), (0, 1), (1, 1), (1, -1)):
        run = 1
        for way in (1, -1):
            k = 1
            while (target.col + way * k * dc, target.row + way * k * dr) in mine:
                run += 1
                k += 1
        if run >= 4:
            return True
    return False


def has_stacked_threats(position: Position) -> bool:
    """Whether the side to move has a move right below two empty cells, one
    on the other, where it would complete four: where the solver's shortcut
    (a win in two, without a search) can apply."""
    height = position.variant.height
    for move in position.legal_moves():
        cell = position.play(move).last_cell
        assert cell is not None
        if cell.row + 2 < height and all(_four_with(position, Cell(cell.col, cell.row + k)) for k in (1, 2)):
            return True
    return False


@pytest.mark.parametrize("start", ["6x5/Bc3", "7x6/Xd1/Bd4", "6x6/Bb4", "7x6/Xc3"])
def test_stacked_threats_next_to_bonus_and_forbidden_cells_get_rules_md_scores(start: str) -> None:
    # The shortcut must not fire where a bonus cell lets the opponent ban the
    # upper threat, nor miss a forbidden cell between them.
    rng = np.random.default_rng(5)
    found = 0
    for _ in range(5000):
        position = Position.parse(start)
        left = 12 + int(rng.integers(0, 4))
        while position.empty_cells > left and not position.is_over:
            moves = position.legal_moves()
            position = position.play(moves[int(rng.integers(len(moves)))])
        if position.is_over or has_win(position) or not has_stacked_threats(position):
            continue
        found += 1
        expected = brute_score(position)
        assert searched(position, three_words=False)[0] == expected, position.notation
        assert searched(position, three_words=True)[0] == expected, position.notation
        if found == 6:
            break
    assert found >= 3, "too few positions with stacked threats to test"
