"""The rules' kernels run by the interpreter from their own source play
exactly as the compiled kernels, and reading a process's first positions
compiles nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_properties import variants

from c4lab.rules import Position, Variant
from c4lab.rules import kernels as K
from c4lab.rules.interpreted import interpreted
from c4lab.rules.position import _tables
from testkit import run_counting_compiles


@st.composite
def variant_and_codes(draw: st.DrawFn) -> tuple[Variant, list[int]]:
    """A board and move codes for it: mostly legal play, then (often) one
    code that may be anything, a ban on a plain move or a column off the
    board among them; or codes drawn at random from the start."""
    variant = draw(variants())
    if draw(st.booleans()):
        anything = st.integers(0, 15).flatmap(lambda c: st.integers(0, 13).map(lambda b: c + 16 * b))
        return variant, draw(st.lists(anything, max_size=60))
    position = Position(variant)
    codes = []
    for _ in range(draw(st.integers(0, 150))):
        legal = position.legal_moves()
        if not legal:
            break
        move = draw(st.sampled_from(legal))
        codes.append(move.code)
        position = position.play(move)
    if draw(st.booleans()):
        codes.append(draw(st.integers(0, 15)) + 16 * draw(st.integers(0, 13)))
    return variant, codes


@settings(max_examples=400, deadline=None)
@given(variant_and_codes())
def test_the_interpreted_kernels_play_as_the_compiled_ones(case: tuple[Variant, list[int]]) -> None:
    variant, codes = case
    geo, start = _tables(variant)
    array = np.array(codes, dtype=np.int64)
    by_interpreter, compiled = start.copy(), start.copy()
    answer = interpreted(K.play_all)(geo, by_interpreter, array)
    expected = K.play_all(geo, compiled, array)
    assert (int(answer[0]), int(answer[1])) == (int(expected[0]), int(expected[1]))
    assert np.array_equal(by_interpreter, compiled)


@settings(max_examples=200, deadline=None)
@given(variant_and_codes())
def test_the_interpreted_kernels_judge_a_position_as_the_compiled_ones(case: tuple[Variant, list[int]]) -> None:
    """Every move's legality, the legal moves, one more move played, and
    the winning line: the same answers and the same arrays both ways."""
    variant, codes = case
    geo, state = _tables(variant)
    state = state.copy()
    K.play_all(geo, state, np.array(codes, dtype=np.int64))
    for code in range(16 * 14):
        assert interpreted(K.check)(geo, state, code) == K.check(geo, state, code)
    for kernel, size in ((K.legal_codes, K.MAX_LEGAL), (K.win_cells, K.NCELLS), (K.win_runs, 8)):
        dtype = np.uint8 if kernel is K.legal_codes else np.int64
        out, expected = np.zeros(size, dtype=dtype), np.zeros(size, dtype=dtype)
        assert interpreted(kernel)(geo, state, out) == kernel(geo, state, expected)
        assert np.array_equal(out, expected)
    for code in codes[-1:] + [0, 3, 16 * 2 + 1]:
        played, expected_state = state.copy(), state.copy()
        assert interpreted(K.play)(geo, played, code) == K.play(geo, expected_state, code)
        assert np.array_equal(played, expected_state)


def test_a_process_first_positions_compile_nothing_until_its_budget_is_spent(tmp_path: Path) -> None:
    """Reading positions, their moves, legality, play and winning lines
    run interpreted (nothing compiled), until the process has done
    ``INTERPRETED_MOVES`` of that work; and ``load_kernels``, a server's
    warm-up, compiles every kernel ``Position`` calls."""
    script = """
import json
from c4lab.rules import Position, PositionError
from c4lab.rules import interpreted
from c4lab.rules import kernels as K
from c4lab.rules.position import load_kernels
won = Position.parse("5x5/Bb1:b+eacacaca")
assert won.result == "B" and len(won.win_lines) == 1 and won.win_line, won.to_dict()
position = Position.parse("9x8/Xd3:dd").undo(1)
assert position.notation == "9x8/Xd3:d" and position.is_legal("e") and len(position.legal_moves()) == 9
assert position.play("e", "f").notation == "9x8/Xd3:def"
try:
    Position.parse("6x5/Xc2:ccccc")
except PositionError as exc:
    error = str(exc)
first = list(compiled)
interpreted.INTERPRETED_MOVES = interpreted._played + 3
Position.parse("7x6:dddd")
then = compiled[len(first):]
load_kernels()
kernels = [K.play_all, K.play, K.check, K.legal_codes, K.win_cells, K.win_runs]
print(json.dumps({"first": first, "then": then, "error": error,
                  "loaded": [k.py_func.__name__ for k in kernels if k.overloads]}))
"""
    out = run_counting_compiles(script, tmp_path / "numba")
    assert out["first"] == []
    assert "c4lab.rules.kernels.play_all" in out["then"]
    assert out["error"].endswith("move 4 (the 5th) 'c' at character 12: column c is full")
    assert out["loaded"] == ["play_all", "play", "check", "legal_codes", "win_cells", "win_runs"]


def test_with_numbas_compiler_off_positions_still_play() -> None:
    """``NUMBA_DISABLE_JIT=1`` (a debugging session) leaves the kernels
    plain Python functions: ``Position`` calls them as they are."""
    script = (
        "from c4lab.rules import Position\n"
        "p = Position.parse('5x5/Bb1:b+eacacaca')\n"
        "print(p.result, Position.parse('7x6:dd').play('c').is_legal('c'), len(p.win_line))\n"
    )
    out = subprocess.run([sys.executable, "-c", script], env=dict(os.environ, NUMBA_DISABLE_JIT="1"),
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["B", "True", "4"]
