"""The engine agrees with every public rule trace in ../shared/cases."""

from __future__ import annotations

import pytest

from c4lab.rules import Cell, Move, Position
from testkit import load_traces

TRACES = load_traces()


def test_the_public_traces_are_all_there() -> None:
    assert len(TRACES) == 30


@pytest.mark.parametrize("trace", TRACES, ids=[t["final"][:40] for t in TRACES])
def test_a_trace_replays_exactly(trace: dict) -> None:
    start = Position.parse(trace["start"])
    assert start.notation == trace["start"]
    if "start_alt" in trace:
        assert Position.parse(trace["start_alt"]) == start
        assert Position.parse(trace["start_alt"]).notation == trace["start"]

    position = start
    assert position.result == trace["prefix_results"][0]
    for k, (token, landing) in enumerate(zip(trace["moves"], trace["landing"])):
        before = position.cells
        position = position.play(token)
        added = {c.name: p for c, p in position.cells.items() if c not in before}
        piece = "A" if k % 2 == 0 else "B"
        assert added.pop(landing[0]) == piece, f"move {k} {token}"
        assert position.last_cell == Cell.parse(landing[0])
        if len(landing) == 2:
            assert added == {landing[1]: "ban"}
        else:
            assert added == {}
        assert position.result == trace["prefix_results"][k + 1]
        # The same prefix, parsed in one go, is the same position.
        assert Position.parse(position.notation) == position

    assert position.notation == trace["final"]
    assert position.result == trace["result"]
    assert [c.name for c in position.win_line] == trace["win_line"]
    run_cells = sorted({cell for run in trace["win_runs"] for cell in run}, key=Cell.parse)
    assert [c.name for c in position.win_line] == run_cells
    assert position.empty_cells == trace["final_E"]
    assert position.legal_moves() == ()
    assert position.to_move is None


@pytest.mark.parametrize("trace", TRACES, ids=[t["final"][:40] for t in TRACES])
def test_sample_positions_have_the_listed_legal_moves(trace: dict) -> None:
    for sample in trace["samples"]:
        position = Position.parse(sample["position"])
        assert position.notation == sample["position"]
        assert [m.token for m in position.legal_moves()] == sample["legal"]
        assert position.to_move == sample["side"]
        assert position.empty_cells == sample["E"]
        assert all(position.is_legal(Move.parse(t)) for t in sample["legal"])
