"""Files written whole or not at all.

Every file c4lab writes that a person keeps (a network, a table, a curve, a
probe set, a results file being rewritten) is written to a temporary file
beside it and renamed over it: a crash, a full disk or Ctrl-C leaves the
old file or the new one, never half of one, and no temporary file behind.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any


def _temporary(path: Path) -> Path:
    """Where ``path``'s new content is written before it is renamed over it."""
    return path.with_name(path.name + ".tmp")


@contextmanager
def _renamed_together(paths: list[Path]) -> Iterator[None]:
    """Within the block each path's temporary file is written; when the
    block ends without an error, each is renamed over its path; on an error
    (or Ctrl-C), in the block or a rename, every temporary file is removed."""
    try:
        yield
        for path in paths:
            os.replace(_temporary(path), path)
    except BaseException:
        for path in paths:
            with suppress(OSError):  # the error to report is the write's, not the clean-up's
                _temporary(path).unlink(missing_ok=True)
        raise


@contextmanager
def _synced(path: Path, mode: str, **kwargs: Any) -> Iterator[IO[Any]]:
    """``path``'s temporary file, open for writing, flushed to disk when the
    block ends without an error."""
    try:
        opened = _temporary(path).open(mode, **kwargs)
    except OSError as exc:  # said of the file asked for: its temporary twin's name ("x.npz.tmp") means nothing
        why = exc.strerror or str(exc)
        if isinstance(exc, FileNotFoundError) and not path.parent.is_dir():
            why = f"the folder {str(path.parent)!r} does not exist"
        raise type(exc)(exc.errno, why, str(path)) from None
    with opened as f:
        yield f
        f.flush()
        os.fsync(f.fileno())


@contextmanager
def replacing(path: Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """A file opened with ``mode`` (``"w"`` or ``"wb"``; ``kwargs`` as for
    ``open``) whose content replaces ``path`` when the block ends without an
    error (flushed to disk first); on an error (or Ctrl-C) ``path`` stays as
    it was and the temporary file is removed."""
    path = Path(path)
    with _renamed_together([path]), _synced(path, mode, **kwargs) as f:
        yield f


def write_bytes(path: Path, data: bytes) -> None:
    """``path`` holds ``data``, written whole (:func:`replacing`)."""
    with replacing(path, "wb") as f:
        f.write(data)


def write_text(path: Path, text: str) -> None:
    """``path`` holds ``text`` (UTF-8), written whole (:func:`replacing`)."""
    with replacing(path, "w", encoding="utf-8") as f:
        f.write(text)


def write_all(files: Mapping[Path, bytes]) -> None:
    """Each path holds its bytes, all of them or none: every file is written
    whole to its temporary file (flushed to disk) before the first is
    renamed over its path, so a full disk or Ctrl-C while writing leaves
    every old file as it was (a report's plots and its page stay of one
    run), and no temporary file behind."""
    paths = [Path(path) for path in files]
    with _renamed_together(paths):
        for path, data in zip(paths, files.values(), strict=True):
            with _synced(path, "wb") as f:
                f.write(data)
