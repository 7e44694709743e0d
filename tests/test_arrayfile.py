"""The array files (books, Q-tables, n-tuple networks): a write that fails
leaves the old file and nothing else; an output folder is checked before a
run that ends with a write."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from c4lab import arrayfile


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "t.npz"
    arrayfile.save_arrays(path, {"format": "test-1"}, values=np.arange(3))
    before = path.read_bytes()

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # a second Ctrl-C, or a full disk

    monkeypatch.setattr(np, "savez_compressed", interrupted)
    with pytest.raises(KeyboardInterrupt):
        arrayfile.save_arrays(path, {"format": "test-1"}, values=np.arange(5))
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.npz"]


def test_an_output_folder_must_exist_and_take_a_file(tmp_path: Path) -> None:
    arrayfile.check_writable(tmp_path / "new.npz")  # nothing raised, nothing left
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(ValueError, match="does not exist"):
        arrayfile.check_writable(tmp_path / "missing" / "new.npz")
    with pytest.raises(ValueError, match="cannot write in the folder '/proc'"):
        arrayfile.check_writable(Path("/proc/new.npz"))


def test_a_file_cut_short_is_called_cut_short_not_not_a_zip_file(tmp_path: Path) -> None:
    """A network or table whose copy stopped part way starts as an archive
    but has lost its end: it was "cannot read ...: File is not a zip file",
    which sent a reader looking for the wrong kind of file."""
    path = tmp_path / "net.npz"
    arrayfile.save_arrays(path, {"format": "test-1"}, values=np.arange(10_000))
    path.write_bytes(path.read_bytes()[:2000])
    with pytest.raises(ValueError) as caught:
        arrayfile.load_arrays(path, ("values",), fmt="test-1", what="n-tuple network", error=ValueError)
    assert str(caught.value) == (f"cannot read n-tuple network {path}: it starts as an .npz archive but is cut "
                                 "short or damaged (zip: File is not a zip file)")
