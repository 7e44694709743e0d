"""The array files (books, Q-tables, n-tuple networks): a write that fails
leaves the old file and nothing else; an output folder is checked before a
run that ends with a write."""

from __future__ import annotations

import os
import threading
import zipfile
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
    # /proc exists and refuses a new file with "No such file or directory": said as what it is
    with pytest.raises(ValueError, match="cannot write in the folder '/proc': it takes no new files$"):
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


def test_a_pipe_in_the_files_place_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    """A named pipe (made by mistake, or given for a file) was opened to be
    read: the command waited for ever for a writer that never came."""
    path = tmp_path / "net.npz"
    os.mkfifo(path)
    caught: list[BaseException] = []

    def load() -> None:
        try:
            arrayfile.load_arrays(path, ("values",), fmt="test-1", what="n-tuple network", error=ValueError)
        except BaseException as exc:  # noqa: BLE001 (what it raised is the test's to judge)
            caught.append(exc)

    reader = threading.Thread(target=load, daemon=True)
    reader.start()
    reader.join(60)
    if reader.is_alive():  # let the blocked open end, then fail
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail("load_arrays waited on the pipe for a writer")
    assert [str(exc) for exc in caught] == [
        f"{path} is not a c4lab n-tuple network file but a pipe or a device (an archive is read from a file on disk)"
    ]


def test_bytes_after_pk_that_are_no_archive_are_not_an_archive_not_a_pickle(tmp_path: Path) -> None:
    """Random bytes that happen to start with "PK" went on to NumPy, which
    took them for a pickle and advised loading it unsafely ("If you trust
    the file you can load it unsafely ...")."""
    path = tmp_path / "table.npz"
    path.write_bytes(b"PK" + bytes(range(256)) * 8)
    with pytest.raises(ValueError) as caught:
        arrayfile.load_arrays(path, ("keys",), fmt="test-1", what="Q-table", error=ValueError)
    assert str(caught.value) == f"{path} is not a c4lab Q-table (not an .npz archive)"


def test_an_output_that_is_a_pipe_is_refused_before_the_run(tmp_path: Path) -> None:
    """Opened to be written, a named pipe waits for a reader; a device
    takes the bytes and cannot be read back (a run cannot resume from it)."""
    os.mkfifo(tmp_path / "run.jsonl")
    with pytest.raises(ValueError) as caught:
        arrayfile.check_writable(tmp_path / "run.jsonl")
    assert str(caught.value) == (f"{str(tmp_path / 'run.jsonl')!r} is a pipe or a device, not a file: give the "
                                 "name of a file on disk")


@pytest.mark.parametrize(("written", "said"), [
    ("Infinity", "Infinity"), ("NaN", "NaN"), ("-Infinity", "-Infinity"), ("1e400", "1e400"),
    ("1" + "0" * 400, "a whole number of 401 digits"),
])
def test_a_header_number_no_c4lab_file_holds_is_damage_named_in_one_line(
    tmp_path: Path, written: str, said: str
) -> None:
    """An edited header's depth, states or rewards of Infinity (or a number
    too large for a float) passed the archive's checks, then the reader's
    ``int()`` or ``float()`` of it ended the command in a traceback
    (``OverflowError: cannot convert float infinity to integer``)."""
    path = tmp_path / "book.npz"
    header = '{"format": "test-1", "depth": ' + written + "}"
    with path.open("wb") as f:
        np.savez_compressed(f, header=np.array(header), keys=np.arange(3))
    with pytest.raises(ValueError) as caught:
        arrayfile.load_arrays(path, ("keys",), fmt="test-1", what="opening book", error=ValueError)
    assert str(caught.value) == (f"{path} is a damaged c4lab opening book: its header holds {said}, not a number "
                                 "c4lab writes")


def test_every_damaged_byte_and_every_cut_is_one_clear_error_or_harmless(tmp_path: Path) -> None:
    """A bit flipped anywhere in a file (a bad disk, a bad copy), or the file
    cut at any length, is either the caller's one-line error or leaves what
    is read unchanged.  Found by flipping every byte of a network: a flip in
    a zip header's flags or compression method was a ``NotImplementedError``
    traceback, one in an array's own header a ``tokenize.TokenError``."""
    path = tmp_path / "net.npz"
    arrayfile.save_arrays(path, {"format": "test-1", "games": 12}, values=np.arange(40), other=np.ones((3, 4)))
    good = path.read_bytes()
    rng = np.random.default_rng(1)
    damaged = [good[:i] + bytes([good[i] ^ (1 << int(rng.integers(8)))]) + good[i + 1:] for i in range(len(good))]
    cuts = [good[:i] for i in range(len(good))]
    refused = 0
    for blob in damaged + cuts:
        path.write_bytes(blob)
        try:
            header, arrays = arrayfile.load_arrays(path, ("values", "other"), fmt="test-1", what="n-tuple network",
                                                   error=LookupError)
        except LookupError as exc:
            assert str(path) in str(exc) and "\n" not in str(exc)
            refused += 1
            continue
        assert header == {"format": "test-1", "games": 12}
        assert np.array_equal(arrays["values"], np.arange(40)) and np.array_equal(arrays["other"], np.ones((3, 4)))
    assert refused > len(good)  # every cut, and most flips


@pytest.mark.parametrize(("header", "said"), [
    (b"{'descr': '<U5', 'fortran_order': False, 'shape': (", "an array's description in it cannot be read"),
    (b"{'descr': '<f8', 'fortran_order': False, 'shape': (10000000000000,), }",
     "an array's size in it is beyond any memory"),
])
def test_an_array_whose_own_header_is_damaged_is_one_clear_error(tmp_path: Path, header: bytes, said: str) -> None:
    body = header + b" " * ((64 - (11 + len(header)) % 64) % 64) + b"\n"
    path = tmp_path / "book.npz"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.npy", b"\x93NUMPY\x01\x00" + len(body).to_bytes(2, "little") + body)
    with pytest.raises(ValueError) as caught:
        arrayfile.load_arrays(path, (), fmt="test-1", what="opening book", error=ValueError)
    assert str(caught.value) == f"cannot read opening book {path}: it is damaged ({said})"


@pytest.mark.parametrize(("header", "says"), [
    ("{not json", "its header is not JSON (Expecting property name enclosed in double quotes: line 1 column 2"),
    ("", "its header is not JSON (Expecting value: line 1 column 1 (char 0))"),
    ("[" * 100_000 + "]" * 100_000, "its header's JSON is nested deeper than any c4lab writes"),
], ids=["not JSON", "empty", "nested too deep"])
def test_a_header_that_is_not_json_is_said_to_be_the_header(tmp_path: Path, header: str, says: str) -> None:
    """An archive whose header is damaged said only JSON's own words
    ("cannot read ...: Expecting value: line 1 column 1 (char 0)"), or,
    nested too deep, "(zip: maximum recursion depth exceeded ...)"."""
    path = tmp_path / "net.npz"
    with path.open("wb") as f:
        np.savez_compressed(f, header=np.array(header), values=np.arange(3))
    with pytest.raises(ValueError) as caught:
        arrayfile.load_arrays(path, ("values",), fmt="test-1", what="n-tuple network", error=ValueError)
    assert str(caught.value).startswith(f"{path} is a damaged c4lab n-tuple network: ")
    assert says in str(caught.value) and "\n" not in str(caught.value)

