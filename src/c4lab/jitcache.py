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
not there yet is a cache miss.  So is a damaged index or data file (numba's
unpickling error stopped every command that compiled the function): the
function is compiled again and its entry written anew.  The rules kernels import it, so it is in
place before any c4lab function is compiled.  Without ``fcntl`` (Windows)
nothing changes.

It also makes six of numba's front-end steps cheaper (see the end of this
module), each giving the same compiled code and a quicker first start:
the inliner copies a function's scope once per inlining, not once per
block; the untyped IR of an ``inline="always"`` function is built once per
process, not once per call site; a self-recursive call in a function
compiled with an explicit return type takes that type instead of typing the
whole function again (the solver's search: 7.3 s to 4.3 s of CPU); and the
type of a call of a function (an operator, a cast, a helper) with the same
argument types is worked out once per process, not at each of its
thousands of uses (about a fifth of the rest); and the message of an error
that typing raises and catches itself (thousands a kernel) is marked up
without colorama re-wrapping the standard streams each time (5 %); and
numba's own overloads (``np.empty``, ``min``...), compiled into the code
that calls them, get no C entry point nobody calls.  And numba's NumPy
implementations load without importing SciPy's linear algebra, which no
c4lab kernel uses (0.23 s of every process where SciPy is installed).
"""

from __future__ import annotations

import os
import threading
from typing import Any

import numba
from numba.core import caching
from numba.core import errors as _errors
from numba.core import inline_closurecall as _inliner
from numba.core import ir as _ir
from numba.core import typeinfer as _typeinfer
from numba.core import types as _types
from numba.core.types import functions as _functions
from numba.core.typing import templates as _templates

from c4lab import precompiled

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


# -- a damaged cache file is a cache miss
#
# numba unpickles the index and the data files and lets any failure through
# but a missing data file: one damaged file (a disk error, a copy cut short,
# another program's write) made every command that compiles the function
# fail ("agent 'ntuple:...' raised UnpicklingError: pickle data was
# truncated") until someone found and deleted the cache.  Here an index that
# cannot be read is an empty one, and a data file that cannot be read a
# miss: the function is compiled again and its entry written anew, as for a
# cache of another numba version.  The cache is only ever a cache.

_numba_load_index = caching.IndexDataCacheFile._load_index
_numba_load = caching.IndexDataCacheFile.load


def _load_index_or_none(self: Any) -> dict[Any, Any]:
    """numba's index, or none (``{}``) where the file cannot be unpickled."""
    try:
        found: dict[Any, Any] = _numba_load_index(self)
    except Exception:  # noqa: BLE001 (unpickling bytes that are no pickle raises almost anything)
        return {}
    return found


def _load_or_miss(self: Any, key: Any) -> Any:
    """numba's cached entry for ``key``, or a miss (``None``) where its data
    file cannot be unpickled."""
    try:
        return _numba_load(self, key)
    except Exception:  # noqa: BLE001 (as above)
        return None


if getattr(caching.IndexDataCacheFile.load, "__name__", "") != "_load_or_miss":
    caching.IndexDataCacheFile._load_index = _load_index_or_none  # type: ignore[method-assign]
    caching.IndexDataCacheFile.load = _load_or_miss  # type: ignore[method-assign]


# -- the kernels shipped compiled, where this cache has nothing yet
#
# numba looks in its cache on disk before it compiles; where that finds
# nothing, the shipped cache of ``c4lab.precompiled`` (every kernel compiled
# for a baseline CPU) is looked in too, and the compiler runs only where
# neither has the function.

_numba_load_overload = caching.Cache._load_overload


def _load_overload_or_shipped(self: Any, sig: Any, target_context: Any) -> Any:
    """numba's cached overload of ``sig``, else the shipped one, else None."""
    found = _numba_load_overload(self, sig, target_context)
    if found is None and self._enabled:
        found = precompiled.load(self, sig, target_context)
    return found


if getattr(caching.Cache._load_overload, "__name__", "") != "_load_overload_or_shipped":
    caching.Cache._load_overload = _load_overload_or_shipped  # type: ignore[method-assign]


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
#
# ``inline_ir`` then copies its own copy a second time, "an unmutated copy
# of the callee_ir to return", which every caller of numba 0.68 drops
# (``InlineInlinables`` and ``InlineOverloads`` keep only the new blocks):
# a block this call has just made is handed back as it is, not copied again.
# And the blocks' source locations are shared with the callee's, not copied
# (see ``_shared_loc``): inlining on a first ``master`` move copied 0.47 s
# worth of IR, now 0.29-0.33 s.

_copies = threading.local()


class _ScopeSharingCopy:
    """The ``copy`` module as the inliner sees it: ``deepcopy`` of a block,
    within an ``inline_ir`` call, reuses that call's copy of the block's
    scope, and gives back a block that call made itself."""

    def __getattr__(self, name: str) -> Any:
        import copy

        return getattr(copy, name)

    @staticmethod
    def deepcopy(x: Any, memo: dict[int, Any] | None = None) -> Any:
        import copy

        scopes = getattr(_copies, "scopes", None)
        if memo is not None or scopes is None or not isinstance(x, _ir.Block):
            return copy.deepcopy(x, memo)
        made = _copies.made
        if id(x) in made and made[id(x)] is x:
            return x  # the second copy, for the unused "unmutated" IR
        scope = x.scope
        known = scopes.get(id(scope))
        memo = {}
        if known is not None and known[0] is scope:
            memo[id(scope)] = known[1]
        out = copy.deepcopy(x, memo)
        if known is None and id(scope) in memo:
            scopes[id(scope)] = (scope, memo[id(scope)])  # the original kept alive: its id stays its own
        made[id(out)] = out
        return out


def _shared_loc(self: Any, memo: dict[int, Any]) -> Any:
    """A source location, deep-copied: within an ``inline_ir`` call, the
    location itself, as numba's own ``Var``, ``Const`` and ``FreeVar``
    copies share theirs.  (Once an error message has quoted it, a location
    holds its file's lines, and each copy of it copied them all: nine tenths
    of the list items the inliner copied on a first ``master`` move.)
    Elsewhere a copy, as before."""
    if getattr(_copies, "scopes", None) is not None:
        return self
    import copy

    out = object.__new__(type(self))
    memo[id(self)] = out
    out.__dict__.update(copy.deepcopy(self.__dict__, memo))
    return out


_unshared_inline_ir = _inliner.InlineWorker.inline_ir


def _inline_ir(self: Any, *args: Any, **kwargs: Any) -> Any:
    """numba's ``inline_ir``, its copies sharing one scope copy per scope
    (and its second copy not made)."""
    outer = getattr(_copies, "scopes", None), getattr(_copies, "made", None)
    _copies.scopes, _copies.made = {}, {}
    try:
        return _unshared_inline_ir(self, *args, **kwargs)
    finally:
        _copies.scopes, _copies.made = outer


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
    if "__deepcopy__" not in vars(_ir.Loc):
        _ir.Loc.__deepcopy__ = _shared_loc  # type: ignore[attr-defined]


# -- numba's inliner: the callee's untyped IR built once per process
#
# ``InlineWorker.inline_function`` (the ``inline="always"`` pass) runs the
# whole untyped pipeline over the callee again at every call site, although
# the result depends on the function and the compile flags only, and
# ``inline_ir`` deep-copies it before it changes anything.  The kernels
# inline a few helpers at hundreds of sites (``K.U`` casts aside: ``_drop``,
# ``apply_encoded``, the word operations), so this kept the same IR being
# rebuilt.  Here it is built once per (function, flags) and every site gets
# its own copy, as before.

_untyped: dict[tuple[Any, Any], Any] = {}
_untyped_lock = threading.Lock()


def _inline_function(self: Any, caller_ir: Any, block: Any, i: int, function: Any, arg_typs: Any = None) -> Any:
    """numba's ``inline_function`` with the callee's untyped IR memoised."""
    self.flags.enable_ssa = False  # as ``run_untyped_passes`` sets it, so that the key is the flags used
    try:
        key = (function, self.flags.copy())
        hash(key)
    except TypeError:  # flags that cannot be a key: numba's own way
        return _unmemoised_inline_function(self, caller_ir, block, i, function, arg_typs)
    with _untyped_lock:
        callee_ir = _untyped.get(key)
    if callee_ir is None:
        callee_ir = self.run_untyped_passes(function)
        with _untyped_lock:
            _untyped[key] = callee_ir
    return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs)


_unmemoised_inline_function = _inliner.InlineWorker.inline_function


# -- numba's typing of a recursive call: the declared return type
#
# At a self-recursive call numba types the whole function again, from the
# start, to learn its return type (``TypeInferer.return_types_from_partial``,
# once per recursive call site and more while it propagates).  When the
# function is compiled with an explicit signature (the solver's ``negamax``),
# its return variables are locked to the declared type: whatever the partial
# typing finds must be that type or the compilation fails, so that type is
# the answer.  Functions without a declared return type keep numba's way.

_partial_return_types = _typeinfer.TypeInferer.return_types_from_partial


def _declared_return_type(self: Any) -> Any:
    """The return type seeded by an explicit signature, else numba's partial typing."""
    found = set()
    for var in self._get_return_vars():
        typevar = self.typevars[var.name]
        if not typevar.locked or not typevar.defined:
            return _partial_return_types(self)
        found.add(_types.unliteral(typevar.getone()))
    if len(found) != 1:
        return _partial_return_types(self)
    return found.pop()


# -- numba's typing of a call: once per function and argument types
#
# Typing ``a & b`` (or ``U(x)``, or a call of a helper) asks every template
# registered for the function in turn -- for an operator, dozens, among them
# numpy's ufunc loops -- and the kernels have thousands of such calls, most
# with the same few argument types (uint64, uint64).  The answer depends on
# the function, the typing context and the argument types only: numba keeps
# what lowering needs (the implementation's key) on the function type at the
# first resolution, so later ones can return the same signature.  Measured:
# 12,100 of 14,100 resolutions answered here, a fifth of a first ``master``
# move's compile time.  A call that fails, or gives no signature, is not
# remembered (numba asks again, as before).

_call_types: dict[tuple[Any, ...], Any] = {}
_call_types_lock = threading.Lock()
_resolve_call_type = _functions.Function.get_call_type


def _remembered_call_type(self: Any, context: Any, args: Any, kws: Any) -> Any:
    """numba's ``Function.get_call_type``, remembered per (function, context, argument types)."""
    try:
        # (the number of templates: an overload registered later is asked too)
        key = (self, len(self.templates), id(context), tuple(args), tuple(sorted(kws.items())) if kws else ())
        hash(key)
    except TypeError:
        return _resolve_call_type(self, context, args, kws)
    with _call_types_lock:
        found = _call_types.get(key)
    if found is not None and found[0] is context:
        return found[1]
    sig = _resolve_call_type(self, context, args, kws)
    if sig is not None:
        with _call_types_lock:
            _call_types[key] = (context, sig)
    return sig


if numba.__version__.startswith(SCOPE_SHARING_VERSIONS):
    if _functions.Function.get_call_type.__name__ != "_remembered_call_type":
        _functions.Function.get_call_type = _remembered_call_type  # type: ignore[method-assign]
    if _inliner.InlineWorker.inline_function.__name__ != "_inline_function":
        _inliner.InlineWorker.inline_function = _inline_function  # type: ignore[method-assign]
    if _typeinfer.TypeInferer.return_types_from_partial.__name__ != "_declared_return_type":
        _typeinfer.TypeInferer.return_types_from_partial = _declared_return_type  # type: ignore[method-assign]


# -- numba's error messages: marked up without re-wrapping the streams
#
# Typing tries what may fail and catches the errors: a value that is not a
# literal, a global that has no numba type, a template that does not match --
# about 20,000 errors for a first ``master`` move, every one built with its
# message marked up (numba's ``HighlightColorScheme``, in use whenever
# colorama is installed, even in the default theme, "no_color").  Each piece
# of markup called ``colorama.init()`` and ``deinit()``, which wrap and
# unwrap ``sys.stdout`` and ``sys.stderr`` and read the environment: a
# twentieth of a first start's compile time, for strings nobody prints.
# The markup is the same string without that: the style, the message and
# the reset code (nothing is written to a stream in between, so the
# wrapping never converted anything).

_scheme = getattr(_errors, "HighlightColorScheme", None)  # only where colorama is installed
_wrapping_markup = getattr(_scheme, "_markup", None)  # numba's own (the tests compare the two)


def _markup_unwrapped(self: Any, msg: str, color: str | None = None, style: str | None = "\x1b[1m") -> str:
    """numba's ``HighlightColorScheme._markup`` (whose default style is
    colorama's ``Style.BRIGHT``): the same string, the streams left alone."""
    return (color or "") + (style or "") + msg + "\x1b[0m"  # colorama's Style.RESET_ALL


if (
    numba.__version__.startswith(SCOPE_SHARING_VERSIONS)
    and _scheme is not None
    and _scheme._markup.__name__ != "_markup_unwrapped"
):
    _scheme._markup = _markup_unwrapped  # type: ignore[method-assign]


# -- numba's overloads: no C entry point
#
# The implementation of an ``@overload`` (numba's ``np.empty``, ``np.zeros``,
# ``min``, ``carray``...) is compiled as a jit function of its own, the
# first time a kernel uses it, and called from compiled code only: numba
# builds it no Python entry point, but a C one, lowered, optimised and
# compiled for nothing (about a third of compiling such a small function:
# 0.2 s of a first ``master`` move).  Here the CPU ``jit`` an overload's
# template compiles with leaves it out unless the overload asks for one.
# (c4lab's own overloads say so themselves: ``solver.words.INTERNAL``.)

_overload_template = getattr(_templates, "_OverloadFunctionTemplate", None)
_template_jit = getattr(_overload_template, "_get_jit_decorator", None)  # numba's own (absent: no patch)


def _jit_without_c_entry(self: Any) -> Any:
    """numba's ``_get_jit_decorator`` of an overload's template; its CPU
    ``jit`` builds no C entry point unless told to."""
    assert _template_jit is not None  # patched only where numba has it
    jitter = _template_jit(self)
    if jitter is not numba.jit:
        return jitter

    def jit(*args: Any, **options: Any) -> Any:
        return jitter(*args, **{"no_cfunc_wrapper": True, **options})

    return jit


if (
    numba.__version__.startswith(SCOPE_SHARING_VERSIONS)
    and _template_jit is not None
    and _template_jit.__name__ != "_jit_without_c_entry"
):
    _overload_template._get_jit_decorator = _jit_without_c_entry  # type: ignore[union-attr]


# -- numba's BLAS check: SciPy imported when linear algebra is compiled
#
# numba loads its NumPy implementations (``numba.np.arraymath``) the first
# time a process compiles a function or loads one from the cache, and that
# module asks at once whether BLAS is there by importing SciPy's BLAS
# (``scipy.linalg``, and through it ``numpy.f2py``): 0.23 s of CPU in every
# c4lab process where SciPy is installed (the ``kaggle`` and ``openspiel``
# extras bring it), though no c4lab kernel does linear algebra.  The answer
# only picks how ``np.cov`` and the like take inner products, and numba's
# linear algebra imports SciPy itself when it is compiled.  Here
# ``arraymath`` is loaded with that question answered by whether SciPy is
# installed, without importing it; the real check is back in place
# afterwards for everything that calls it.


def _blas_installed() -> None:
    """numba's ``ensure_blas`` as ``arraymath``'s import asks it: an
    ``ImportError`` when SciPy is not installed, SciPy left unimported."""
    import importlib.util

    if importlib.util.find_spec("scipy") is None:
        raise ImportError("scipy 0.16+ is required for linear algebra")


def _load_arraymath_without_scipy() -> None:
    """Import ``numba.np.arraymath`` with :func:`_blas_installed` as its
    BLAS check, then give it numba's own check back."""
    import sys

    from numba.np import linalg as _linalg

    ensure_blas = getattr(_linalg, "ensure_blas", None)
    if ensure_blas is None or "numba.np.arraymath" in sys.modules or "scipy.linalg" in sys.modules:
        return
    _linalg.ensure_blas = _blas_installed
    try:
        import numba.np.arraymath as _arraymath
    finally:
        _linalg.ensure_blas = ensure_blas
    if getattr(_arraymath, "ensure_blas", None) is _blas_installed:
        _arraymath.ensure_blas = ensure_blas


if numba.__version__.startswith(SCOPE_SHARING_VERSIONS):
    _load_arraymath_without_scipy()


# -- numba's masked-array check: numpy.ma imported at the first kernel call
#
# numba types each array argument with a check that it is not a masked
# array, ``isinstance(val, np.ma.MaskedArray)``, and ``np.ma`` is NumPy's
# lazily imported module: the first call of any kernel imports it, 0.07-0.10 s
# of every c4lab process (a warm ``c4lab move`` takes 0.5 s).  An array of
# the exact type ``np.ndarray`` is never a masked one, so for those the type
# is made here as numba makes it (its dtype, dimensions, layout, and whether
# it is read-only); any other array (a subclass: perhaps a masked one) goes
# through numba's own function, check included.


def _typeof_exact_ndarray(val: Any, c: Any) -> Any:
    """numba's type of an array argument, without importing ``numpy.ma``
    for an exact ``np.ndarray``."""
    if type(val) is not np.ndarray:
        return _numba_typeof_ndarray(val, c)
    try:
        dtype = _numpy_support.from_dtype(val.dtype)
    except _errors.NumbaNotImplementedError:
        raise _errors.NumbaValueError(f"Unsupported array dtype: {val.dtype}") from None
    return _types.Array(dtype, val.ndim, _numpy_support.map_layout(val), readonly=not val.flags.writeable)


if numba.__version__.startswith(SCOPE_SHARING_VERSIONS):
    import numpy as np
    from numba.core.typing import typeof as _typeof
    from numba.np import numpy_support as _numpy_support

    _numba_typeof_ndarray = _typeof.typeof_impl.dispatch(np.ndarray)
    _typeof.typeof_impl.register(np.ndarray)(_typeof_exact_ndarray)
