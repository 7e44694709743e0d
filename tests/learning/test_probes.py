"""Probe sets: which positions a board gets, their labels, their file."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from c4lab.learning import probes as P
from c4lab.rules import Position
from c4lab.solver.api import Solver


@pytest.mark.parametrize(("board", "plan"), [
    ("7x6", (200, (0, 16))),  # scored down to the 12-ply database
    ("6x5/Xc2", (200, (0, 16))),  # 29 cells: the solver labels an opening position in milliseconds
    ("6x5/Xc2/Bd1", (200, (0, 16))),
    ("6x6/Xc3", (200, (10, 20))),  # 35 cells: 4 minutes for 200 from the empty board, 4 s from ply 10
    ("7x6/Bd1", (200, (10, 20))),  # 57 minutes for 200 from the empty board, 15 s from ply 10
    ("7x6/Xd4", (200, (10, 20))),
    ("8x6/Xc3/Bf4", (100, (10, 20))),
    ("7x7/Xd4/Bb2", (100, (10, 20))),
    ("10x9/Xe5", (0, (10, 20))),  # beyond the solver: judged by play
])
def test_a_board_gets_the_probes_its_solver_can_label_in_minutes(board: str, plan: tuple[int, tuple[int, int]]) -> None:
    assert P.default_plan(Position.parse(board).variant) == plan


def test_every_probe_decides_and_carries_the_solvers_score_of_every_move() -> None:
    variant = Position.parse("5x4/Xb1").variant
    items = P.make(variant, 6, seed=3, threads=1)
    assert len({i.position.notation for i in items}) == 6
    solver = Solver()
    for item in items:
        assert 0 <= item.position.ply <= 16 and not item.position.is_over
        assert item.decides  # some move changes the result
        assert item.scores == solver.analyse(item.position)


def test_labelling_on_two_threads_makes_the_set_one_thread_makes(monkeypatch: pytest.MonkeyPatch) -> None:
    # Time enough for every candidate: on a busy machine the empty board's moves took two threads more than the
    # solver's 10 s, so the set of two threads left it out and the test failed on the machine's speed alone.
    monkeypatch.setattr(P, "TIMEOUT", 3600.0)
    variant = Position.parse("6x5/Xc2").variant
    one = P.make(variant, 12, seed=5, threads=1)
    two = P.make(variant, 12, seed=5, threads=2)
    assert [(i.position.notation, i.scores) for i in one] == [(i.position.notation, i.scores) for i in two]


def test_a_board_without_enough_positions_is_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="cannot find 5 probe positions on 4x4 at plies 0-0"):
        P.make(Position.parse("4x4").variant, 5, seed=1, plies=(0, 0), threads=2)


def test_a_probe_set_is_labelled_once_and_read_back(tmp_path: Path) -> None:
    variant = Position.parse("5x4").variant
    made = P.probe_set(variant, 4, seed=2, directory=tmp_path)
    (path,) = tmp_path.iterdir()
    assert path == P.probe_path(variant, 4, seed=2, directory=tmp_path)
    assert [(i.position, i.scores) for i in P.probe_set(variant, 4, seed=2, directory=tmp_path)] == \
        [(i.position, i.scores) for i in made]
    path.write_text("{")  # a damaged file is only a cache of the solver's answers: labelled again, replaced
    assert [(i.position, i.scores) for i in P.probe_set(variant, 4, seed=2, directory=tmp_path)] == \
        [(i.position, i.scores) for i in made]
    assert len(P.load(path)) == 4 and sorted(tmp_path.iterdir()) == [path]


@pytest.mark.parametrize(("text", "says"), [
    ("{", "cannot read probe set"),
    ('{"format": "other"}', "is not a c4lab probe set"),
    ('{"format": "c4lab-probes-1", "positions": [{"position": "5x4:zz", "scores": {}}]}', "entry 0 is damaged"),
    ('{"format": "c4lab-probes-1", "positions": [{"position": "5x4", "scores": {"a": 1}}]}',
     "entry 0 does not score every legal move"),
    ('{"format": "c4lab-probes-1", "positions": 5}', 'is damaged: its "positions" is int, not a list'),
    ('{"format": "c4lab-probes-1"}', 'is damaged: its "positions" is NoneType, not a list'),
    (('{"format": "c4lab-probes-1", "positions": [{"position": "4x4", "scores": '
      '{"a": Infinity, "b": 1, "c": 1, "d": 1}}]}'), "entry 0 is damaged (a score is a whole number, not inf)"),
    (('{"format": "c4lab-probes-1", "positions": [{"position": "4x4", "scores": '
      '{"a": 1.7, "b": 1, "c": 1, "d": 1}}]}'), "entry 0 is damaged (a score is a whole number, not 1.7)"),
    ('{"format": "c4lab-probes-1", "positions": [{"position": "4x4:abababa", "scores": {}}]}',
     "entry 0 is a finished game (4x4:abababa), no probe"),  # read as a probe, train ntuple failed at its first point
    pytest.param('{"format": "c4lab-probes-1", "positions": ' + "[" * 100_000 + "]" * 100_000 + "}",
                 "its JSON is nested deeper than any probe set's", id="nested-too-deep"),  # a RecursionError
])
def test_a_damaged_probe_file_names_the_file_and_the_entry(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "p.json"
    path.write_text(text)
    with pytest.raises(P.ProbeError, match=re.escape(says)) as caught:
        P.load(path)
    assert str(path) in str(caught.value)
    json.dumps(str(caught.value))  # one printable line
    assert "\n" not in str(caught.value)


def test_a_probe_file_of_another_board_is_labelled_again_not_used(tmp_path: Path) -> None:
    """The probe set is a cache kept by name: a file of another board's
    positions under this board's name (copied, renamed) would judge the
    network on positions it cannot play, so it counts as damaged: named
    with the entry, then labelled again and replaced."""
    small, other = Position.parse("4x4").variant, Position.parse("5x4").variant
    made = P.probe_set(small, 4, seed=2, directory=tmp_path)
    path = P.probe_path(other, 4, seed=2, directory=tmp_path)
    P.probe_path(small, 4, seed=2, directory=tmp_path).rename(path)
    assert len(P.load(path)) == 4  # read without a board, it is a whole probe set
    with pytest.raises(P.ProbeError, match="entry 0 is a position of 4x4, not of 5x4"):
        P.load(path, other)
    again = P.probe_set(other, 4, seed=2, directory=tmp_path)
    assert {i.position.variant for i in again} == {other} and len(again) == 4
    assert {i.position.variant for i in P.load(path, other)} == {other} and made


def test_a_probe_set_that_cannot_be_kept_is_still_used_and_the_loss_of_the_cache_said(tmp_path: Path) -> None:
    """The labels took the solver minutes; a home whose folder cannot be
    made or written (a file where the folder would be, a read-only home)
    loses only the cache: the set is returned and ``warn`` says why it was
    not kept (before, the run ended in a traceback after the labelling)."""
    (tmp_path / "home").write_text("a file, not a folder")
    folder = tmp_path / "home" / ".c4lab" / "probes"
    said: list[str] = []
    items = P.probe_set(Position.parse("4x4").variant, 3, seed=2, directory=folder, threads=1, warn=said.append)
    assert len(items) == 3 and all(i.decides for i in items)
    assert len(said) == 1 and str(P.probe_path(items[0].position.variant, 3, seed=2, directory=folder)) in said[0]
    assert "labelled again next time" in said[0] and "\n" not in said[0]
