"""numba's on-disk cache, made safe for processes that compile at once.

Every compiled function of c4lab is cached on disk (``cache=True``), and
several functions have more than one compiled version in one cache file:
the search kernels specialised by kind of board (closures over constants),
the solver's two widths.  numba writes a new version by reading the file's
index, picking the first unused data-file number, and writing the index and
the data -- without a lock.  Two processes that compile two versions at the
same moment (the arena's workers, on a first run) can pick the same number:
the index then sends one version's key to the other version's code, and
every later run loads the wrong kernel.  For closures with the same argument
types that is silent: a search compiled for another kind of board plays on,
and plays badly.  (Seen here: a fixed-budget gauntlet scored 0.64 with the
cache a loaded first run of two workers had written, 0.93 with it deleted.)

Importing this module makes numba's save hold an exclusive ``flock`` on a
lock file beside the index while it reads the index, picks the number and
writes both files.  Loading needs no lock: the data is written (atomically,
by rename) before the lock is released, and an index entry whose data is
not there yet is a cache miss.  The rules kernels import it, so it is in
place before any c4lab function is compiled.  Without ``fcntl`` (Windows)
nothing changes.
"""

from __future__ import annotations

import os
from typing import Any

from numba.core import caching

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: numba's own behaviour
    fcntl = None  # type: ignore[assignment]

_unlocked_save = caching.IndexDataCacheFile.save


def _locked_save(self: Any, key: Any, data: Any) -> None:
    """numba's ``IndexDataCacheFile.save`` under an exclusive file lock."""
    try:
        fd = os.open(self._index_path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a read-only cache folder: numba copes (or warns) as before
        _unlocked_save(self, key, data)
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _unlocked_save(self, key, data)
    finally:
        os.close(fd)  # releases the lock


if fcntl is not None and getattr(caching.IndexDataCacheFile.save, "__name__", "") != "_locked_save":
    caching.IndexDataCacheFile.save = _locked_save  # type: ignore[method-assign]
