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
