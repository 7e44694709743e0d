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

It also makes numba's inliner copy a function's scope once per inlining, not
once per block (see the end of this module): the same compiled code, a
quicker first start.
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numba
from numba.core import caching
from numba.core import inline_closurecall as _inliner
from numba.core import ir as _ir

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


# -- numba's inliner: one copy of the scope per inlined function, not per block
#
# ``inline="always"`` helpers are inlined at the IR level, and numba's inliner
# (``InlineWorker.inline_ir``, numba 0.68) copies the callee's IR block by
# block with ``copy.deepcopy``: each block's copy deep-copies the function's
# whole scope (every variable of the callee, its own inlined helpers'
# included) again.  That is quadratic in the size of the callee and was most
# of a first start's compile time (measured: 70 % of compiling the playout
# kernel went to ``deepcopy``).  Within one ``inline_ir`` call this makes the
# blocks of one copy share one copy of their scope -- as the original blocks
# share one scope, which the inliner requires anyway -- so the scope is
# copied once.  The compiled code is the same.

_copies = threading.local()


class _ScopeSharingCopy:
    """The ``copy`` module as the inliner sees it: ``deepcopy`` of a block,
    within an ``inline_ir`` call, reuses that call's copy of the block's scope."""

    def __getattr__(self, name: str) -> Any:
        import copy

        return getattr(copy, name)

    @staticmethod
    def deepcopy(x: Any, memo: dict[int, Any] | None = None) -> Any:
        import copy

        scopes = getattr(_copies, "scopes", None)
        if memo is not None or scopes is None or not isinstance(x, _ir.Block):
            return copy.deepcopy(x, memo)
        scope = x.scope
        known = scopes.get(id(scope))
        memo = {}
        if known is not None and known[0] is scope:
            memo[id(scope)] = known[1]
        out = copy.deepcopy(x, memo)
        if known is None and id(scope) in memo:
            scopes[id(scope)] = (scope, memo[id(scope)])  # the original kept alive: its id stays its own
        return out


_unshared_inline_ir = _inliner.InlineWorker.inline_ir


def _inline_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
    """numba's ``inline_ir``, its copies sharing one scope copy per scope."""
    outer = getattr(_copies, "scopes", None)
    _copies.scopes = {}
    try:
        return _unshared_inline_ir(self, *args, **kwargs)
    finally:
        _copies.scopes = outer


#: The numba versions whose inliner this was read against and measured on
#: (the patch reaches into its internals: another version is left alone).
SCOPE_SHARING_VERSIONS = ("0.68.",)

if (
    numba.__version__.startswith(SCOPE_SHARING_VERSIONS)
    and getattr(_inliner, "copy", None) is not None
    and _inliner.InlineWorker.inline_ir.__name__ != "_inline_ir"
):
    _inliner.copy = _ScopeSharingCopy()  # type: ignore[assignment]
    _inliner.InlineWorker.inline_ir = _inline_ir  # type: ignore[method-assign]
