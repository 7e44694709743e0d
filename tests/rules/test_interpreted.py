"""The rules' kernels run by the interpreter from their own source play
exactly as the compiled kernels, and reading a process's first positions
compiles nothing."""

from __future__ import annotations

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


def test_reading_a_process_first_positions_compiles_nothing_until_its_budget_is_spent(tmp_path: Path) -> None:
    script = """
import json
from c4lab.rules import Position, PositionError
from c4lab.rules import interpreted
won = Position.parse("5x5/Bb1:b+eacacaca")
assert won.result == "B", won.result  # four in column a
assert Position.parse("9x8/Xd3:dd").undo(1).notation == "9x8/Xd3:d"
try:
    Position.parse("6x5/Xc2:ccccc")
except PositionError as exc:
    error = str(exc)
first = list(compiled)
interpreted.INTERPRETED_MOVES = interpreted._played + 3
Position.parse("7x6:dddd")
print(json.dumps({"first": first, "then": compiled[len(first):], "error": error}))
"""
    out = run_counting_compiles(script, tmp_path / "numba")
    assert out["first"] == []
    assert "c4lab.rules.kernels.play_all" in out["then"]
    assert out["error"].endswith("move 4 (the 5th) 'c' at character 12: column c is full")
