"""Fuzzing the arena's results file (JSON lines, ``c4lab.arena.results``)
with hypothesis.

A results file cut at any byte, a line replaced by garbage or by JSON of
any shape, a game record whose fields have the wrong types: reading it
either gives the games (a last line cut short is dropped, and a run
resumes from the whole pairs before it) or a ``ResultsError`` naming the
file and the line -- never another exception -- and nothing is lost: a file
that is refused is left as it was, and a resumed run keeps every good
record it had.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from c4lab.arena.executors import LocalExecutor
from c4lab.arena.results import ResultsError, open_results, read_results
from c4lab.arena.runner import run_arena
from c4lab.arena.schedule import ArenaConfig

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
CONFIG = ArenaConfig(("random:seed=1", "random:seed=2"), games=6, board="5x4", seed=3)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole results file of ``CONFIG`` (a header and six games)."""
    path = tmp_path_factory.mktemp("arena") / "full.jsonl"
    run_arena(CONFIG, path, executor=LocalExecutor(1))
    return path


def read_or_error(path: Path) -> Any:
    """The results, or the ResultsError, which names the file and a line
    (or the whole file)."""
    try:
        return read_results(path)
    except ResultsError as exc:
        text = str(exc)
        assert str(path) in text, text
        assert "\n" not in text, text
        return exc


@FUZZ
@given(cut=st.integers(min_value=0, max_value=10_000))
def test_a_file_cut_at_any_byte_resumes_keeping_every_whole_pair(full: Path, tmp_path: Path, cut: int) -> None:
    raw = full.read_bytes()
    cut = cut % (len(raw) + 1)
    path = tmp_path / f"cut-{cut}.jsonl"
    path.write_bytes(raw[:cut])
    got = read_or_error(path)
    whole_lines = raw[:cut].split(b"\n")[:-1]  # the lines that end with their newline
    if isinstance(got, ResultsError):
        assert not whole_lines, f"cut at {cut}: {got}"  # only a file without one whole line is refused
        assert path.read_bytes() == raw[:cut]  # and it is left as it was
        return
    assert len(got.games) == len(whole_lines) - 1
    kept = {json.dumps(g.to_dict(), sort_keys=True) for g in got.whole_pairs()}
    again = run_arena(CONFIG, path, executor=LocalExecutor(1))
    assert len(again.games) == CONFIG.total_games
    after = read_results(path)
    assert kept <= {json.dumps(g.to_dict(), sort_keys=True) for g in after.games}  # nothing good was lost
    assert sorted(g.position for g in after.games) == sorted(g.position for g in read_results(full).games)


def damaged(full: Path, tmp_path: Path, line: int, text: str) -> tuple[Path, int]:
    lines = full.read_text().splitlines(keepends=True)
    at = line % (len(lines) + 1)
    lines[at:at + 1] = [text.replace("\n", " ").replace("\r", " ") + "\n"]
    path = tmp_path / "damaged.jsonl"
    path.write_text("".join(lines))
    return path, at + 1


def check_damage(path: Path, number: int) -> None:
    before = path.read_bytes()
    got = read_or_error(path)
    if isinstance(got, ResultsError):
        assert f"{path}:" in str(got), str(got)
        try:
            open_results(path, CONFIG)
        except ResultsError:
            pass
        else:  # pragma: no cover
            raise AssertionError("read_results refused the file but open_results took it")
        assert path.read_bytes() == before  # a refused file is not touched


@FUZZ
@given(line=st.integers(min_value=0, max_value=8), text=st.text(max_size=60) | json_values.map(json.dumps))
def test_a_line_of_garbage_or_of_any_json_is_an_error_naming_the_line(
    full: Path, tmp_path: Path, line: int, text: str
) -> None:
    path, number = damaged(full, tmp_path, line, text)
    check_damage(path, number)
    got = read_or_error(path)
    if isinstance(got, ResultsError) and number <= len(full.read_text().splitlines()):
        assert f"{path}:{number}:" in str(got) or "twice" in str(got), str(got)


FIELD_NAMES = ["position", "result", "A", "B", "start", "pairing", "pair", "game", "times", "forfeit", "config",
               "specs", "games", "board", "seed", "limit", "margin", "plies", "bonus", "gauntlet", "openings"]


@FUZZ
@given(line=st.integers(min_value=0, max_value=6), field=st.sampled_from(FIELD_NAMES), value=json_values,
       drop=st.booleans())
def test_a_record_with_a_field_of_the_wrong_type_is_an_error_naming_the_line(
    full: Path, tmp_path: Path, line: int, field: str, value: Any, drop: bool
) -> None:
    lines = full.read_text().splitlines()
    at = line % len(lines)
    record = json.loads(lines[at])
    target = record["config"] if at == 0 and field not in ("config", "c4lab_arena") else record
    if drop:
        target.pop(field, None)
    else:
        target[field] = value
    path, number = damaged(full, tmp_path, at, json.dumps(record))
    check_damage(path, number)


def test_numbers_json_cannot_make_integers_of_are_errors_naming_the_line(full: Path, tmp_path: Path) -> None:
    lines = full.read_text().splitlines()
    for field in ("pairing", "pair", "game"):
        for value in ("1e999", "-1e999", "NaN", "-1", "99", "1.5"):
            record = lines[1].replace(f'"{field}":{json.loads(lines[1])[field]}', f'"{field}":{value}')
            path, number = damaged(full, tmp_path, 1, record)
            with pytest.raises(ResultsError, match=f":{number}:"):
                read_results(path)
    deep = "[" * 5000 + "]" * 5000
    for at in (0, 1):
        path, number = damaged(full, tmp_path, at, deep)
        with pytest.raises(ResultsError, match=f":{number}:"):
            read_results(path)


def test_a_cut_inside_a_multibyte_character_is_a_cut_line(full: Path, tmp_path: Path) -> None:
    path = tmp_path / "cut.jsonl"
    shutil.copy(full, path)
    with path.open("ab") as file:
        file.write('{"position": "é'.encode()[:-1])  # half a character, as a killed write leaves it
    assert read_results(path).cut_line
