"""Files written whole or not at all (``c4lab.atomic``): a failure while
writing, or while renaming, leaves every old file as it was and no
temporary file behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from c4lab import atomic


def test_a_file_is_replaced_only_when_its_block_ends_without_an_error(tmp_path: Path) -> None:
    path = tmp_path / "net.npz"
    path.write_text("old")
    with pytest.raises(KeyboardInterrupt), atomic.replacing(path) as f:
        f.write("half of the n")
        raise KeyboardInterrupt
    assert path.read_text() == "old" and sorted(tmp_path.iterdir()) == [path]
    atomic.write_text(path, "new")
    assert path.read_text() == "new" and sorted(tmp_path.iterdir()) == [path]


def test_a_rename_that_fails_leaves_no_temporary_file(tmp_path: Path) -> None:
    taken = tmp_path / "curve.csv"
    (taken / "inside").mkdir(parents=True)  # a folder where the file should go: the rename fails
    with pytest.raises(OSError):
        atomic.write_bytes(taken, b"games,accuracy\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["curve.csv"] and taken.is_dir()


def test_files_written_together_are_all_new_or_all_old(tmp_path: Path) -> None:
    paths = [tmp_path / name for name in ("report.html", "elo.png", "scores.png")]
    for path in paths:
        path.write_bytes(b"run 1")
    broken = {paths[0]: b"run 2", paths[1]: b"run 2", paths[2]: "not bytes"}
    with pytest.raises(TypeError):
        atomic.write_all(broken)  # type: ignore[dict-item]
    assert [p.read_bytes() for p in paths] == [b"run 1"] * 3
    assert sorted(tmp_path.iterdir()) == sorted(paths)
    (tmp_path / "blocked").mkdir()
    (tmp_path / "blocked" / "inside").touch()
    with pytest.raises(OSError):  # a rename fails: no temporary file is left
        atomic.write_all({paths[0]: b"run 3", tmp_path / "blocked": b"run 3"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["blocked", "elo.png", "report.html", "scores.png"]
    atomic.write_all({path: b"run 4" for path in paths})
    assert [p.read_bytes() for p in paths] == [b"run 4"] * 3


def test_a_file_that_cannot_be_made_is_named_as_asked_not_by_its_temporary_twin(tmp_path: Path) -> None:
    """``Network.save("/nonexistent/x.npz")`` said "No such file or
    directory: '/nonexistent/x.npz.tmp'", a name nobody gave."""
    target = tmp_path / "missing" / "x.npz"
    with pytest.raises(FileNotFoundError) as caught:
        atomic.write_bytes(target, b"data")
    assert caught.value.filename == str(target)
    assert str(caught.value) == f"[Errno 2] the folder {str(target.parent)!r} does not exist: {str(target)!r}"
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError) as caught:
        atomic.write_bytes(tmp_path / "file" / "x.npz", b"data")
    assert caught.value.filename == str(tmp_path / "file" / "x.npz")
    assert ".tmp" not in str(caught.value)
