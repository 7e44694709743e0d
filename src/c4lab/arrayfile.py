"""Data files of NumPy arrays with a JSON header: the opening book, Q-tables.

One ``.npz`` archive (compressed) holding the named arrays and ``header``,
a JSON object with at least ``format``.  Written atomically (a temporary
file, then a rename: a crash leaves the old file or the new one, never half
of one) and read strictly: never unpickled, and every way a file can be
wrong (missing, a folder, a pipe or a device, not an archive, cut short,
its compressed data damaged, a zip or array header damaged, another format, a missing array) is
raised as the caller's own error class, saying what and which file.
"""

from __future__ import annotations

import errno
import json
import math
import stat
import tempfile
import tokenize
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from c4lab.atomic import replacing

#: How a zip archive starts: a file's local header, or the end of an
#: archive with no file.  ``np.load`` reads anything else as a pickle, and
#: refused random bytes after "PK" as "pickled (object) data. If you trust
#: the file ...".
_ZIP_STARTS = (b"PK\x03\x04", b"PK\x05\x06")


class _BadNumber(ValueError):
    """A number in a header that no file c4lab writes holds."""


def _read_header(text: str) -> Any:
    """The header's JSON, its numbers checked as they are read: Infinity,
    NaN, 1e400 (read as infinity) and a whole number past 64 bits are
    ``_BadNumber``.  No header c4lab writes holds one, and the readers'
    ``int()`` and ``float()`` of them raised ``OverflowError``, a traceback
    ("cannot convert float infinity to integer")."""

    def constant(name: str) -> float:
        raise _BadNumber(name)

    def real(digits: str) -> float:
        value = float(digits)
        if not math.isfinite(value):
            raise _BadNumber(digits)
        return value

    def whole(digits: str) -> int:
        if len(digits.lstrip("-")) > 19:  # 2**63 has 19 digits
            raise _BadNumber(f"a whole number of {len(digits.lstrip('-'))} digits")
        return int(digits)

    return json.loads(text, parse_constant=constant, parse_float=real, parse_int=whole)


def save_arrays(path: Path, header: dict[str, Any], **arrays: np.ndarray) -> None:
    """Write ``arrays`` and ``header`` (which holds the format) to ``path``;
    a write that fails or is interrupted leaves ``path`` as it was and no
    temporary file behind."""
    with replacing(path, "wb") as f:
        np.savez_compressed(f, header=np.array(json.dumps(header)), **arrays)  # type: ignore[arg-type]


def check_writable(path: Path) -> None:
    """``ValueError``, saying which folder (or file) and why, unless a file
    can be written at ``path``: its folder exists and takes a new file (a
    temporary one is made and removed).  Checked before a long run that ends with a
    write, so that the run is not lost to a typo or a folder nobody may
    write in.  A pipe or a device at ``path`` (``--out /dev/null``) is
    refused too: an arena run wrote its header there, then failed to sync
    it with a traceback, and a pipe waited for a reader."""
    path = path.expanduser()
    if path.exists() and not path.is_dir() and not path.is_file():
        raise ValueError(f"{str(path)!r} is a pipe or a device, not a file: give the name of a file on disk")
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"{str(folder)!r} is a file, not a folder")
    if not folder.is_dir():
        raise ValueError(f"the folder {str(folder)!r} does not exist")
    try:
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as exc:
        # a folder that exists but makes no files (/proc says "No such file or directory", which is false)
        why = "it takes no new files" if exc.errno == errno.ENOENT else exc.strerror or str(exc)
        raise ValueError(f"cannot write in the folder {str(folder)!r}: {why}") from None


def check_npz_name(path: Path, what: str, read_back: str) -> None:
    """``ValueError`` unless ``path`` ends in ``.npz``: the file is a NumPy
    archive, and ``--out net.txt`` wrote one under a text file's name.
    ``what`` names the file ("a network file"), ``read_back`` what reads
    it again; the message gives the name to use."""
    if path.suffix != ".npz":
        raise ValueError(f"{path}: {what}'s name ends in .npz (it is a NumPy archive, read back by {read_back}): "
                         f"give --out {path.with_suffix('.npz')}")


def load_arrays(
    path: Path, names: Sequence[str], *, fmt: str | tuple[str, ...], what: str, error: type[Exception]
) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The header and the arrays ``names`` of a file of format ``fmt`` (or of
    one of the formats ``fmt``, the current one first); anything else raises
    ``error`` naming ``what`` the file should be ("opening book", "Q-table")
    and the file.  The arrays' shapes and types are the caller's to check."""
    formats = (fmt,) if isinstance(fmt, str) else fmt
    if path.is_dir():  # "[Errno 21] Is a directory: 'x'" said it in Python's words
        raise error(f"{path} is a folder, not a c4lab {what} file")
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # a pipe: reading it waited for ever for a writer
            raise error(f"{path} is not a c4lab {what} file but a pipe or a device (an archive is read "
                        "from a file on disk)")
        with path.open("rb") as f:
            if f.read(4) not in _ZIP_STARTS:  # "PK" alone let bytes that are no archive reach the pickle
                raise error(f"{path} is not a c4lab {what} (not an .npz archive)")
        with np.load(path, allow_pickle=False) as data:
            if "header" not in data.files:  # another program's archive
                raise error(f"{path} is not a c4lab {what} (an .npz archive without c4lab's header)")
            text = str(data["header"])
            try:
                header = _read_header(text)
            except _BadNumber as exc:
                raise error(f"{path} is a damaged c4lab {what}: its header holds {exc}, not a number c4lab "
                            "writes") from None
            except ValueError as exc:  # it was "cannot read ...: Expecting value: line 1 column 1 (char 0)"
                raise error(f"{path} is a damaged c4lab {what}: its header is not JSON ({exc})") from None
            except RecursionError:  # it was "... is damaged (zip: maximum recursion depth exceeded ...)"
                raise error(f"{path} is a damaged c4lab {what}: its header's JSON is nested deeper than any "
                            "c4lab writes") from None
            if not isinstance(header, dict) or header.get("format") not in formats:
                found = header.get("format") if isinstance(header, dict) else None
                raise error(f"{path} is not a c4lab {what} (format {found!r}, expected {formats[0]!r})")
            missing = [name for name in names if name not in data.files]
            if missing:
                raise error(f"{path} is not a whole c4lab {what}: it has no array {missing[0]!r}")
            arrays = {name: data[name] for name in names}
    except error:
        raise
    except OSError as exc:  # its reason alone: the file is named once
        raise error(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    except zipfile.BadZipFile as exc:  # it starts as an archive (PK): "File is not a zip file" alone misled
        raise error(f"cannot read {what} {path}: it starts as an .npz archive but is cut short or damaged "
                    f"(zip: {exc})") from None
    except (ValueError, KeyError, EOFError, zlib.error) as exc:  # zlib: data damaged
        raise error(f"cannot read {what} {path}: {exc}") from None
    except (NotImplementedError, RuntimeError) as exc:  # a zip header's damaged byte: "That compression method
        # is not supported", "File 'x.npy' is encrypted, password required for extraction"
        raise error(f"cannot read {what} {path}: it starts as an .npz archive but is damaged (zip: {exc})") from None
    except (tokenize.TokenError, SyntaxError, MemoryError) as exc:  # an array's own header damaged
        why = ("an array's size in it is beyond any memory" if isinstance(exc, MemoryError)
               else "an array's description in it cannot be read")
        raise error(f"cannot read {what} {path}: it is damaged ({why})") from None
    return header, arrays
