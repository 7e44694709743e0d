"""numba's on-disk cache stays right when processes compile at once.

Two compiled versions of one function saved at the same moment must each
find their own code again: numba alone can give both the same data file
(the index then sends one key to the other's code), c4lab.jitcache
serialises the save with a file lock.  The window is widened on purpose
(a pause between reading and writing the index), so without the lock this
test fails every time."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from numba.core import caching

import c4lab.jitcache


def _save_at_once(cache: caching.IndexDataCacheFile, entries: dict[str, str]) -> None:
    start = threading.Barrier(len(entries))

    def save(key: str, data: str) -> None:
        start.wait()
        cache.save(key, data)

    threads = [threading.Thread(target=save, args=item) for item in entries.items()]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


@pytest.fixture
def slow_index(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the index takes a while: both savers read it before either writes."""
    load = caching.IndexDataCacheFile._load_index

    def slow(self: caching.IndexDataCacheFile) -> dict:
        found = load(self)
        time.sleep(0.2)
        return found

    monkeypatch.setattr(caching.IndexDataCacheFile, "_load_index", slow)


def test_two_versions_saved_at_once_each_load_their_own_code(tmp_path: Path, slow_index: None) -> None:
    assert caching.IndexDataCacheFile.save is c4lab.jitcache._locked_save
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", source_stamp=(0.0, 0))
    entries = {"kernel for bitboards": "code A", "kernel for line masks": "code B", "with a bonus cell": "code C"}
    _save_at_once(cache, entries)
    for key, data in entries.items():
        assert cache.load(key) == data


def test_without_the_lock_the_race_is_real(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above would catch the race: numba's own save mixes them up.
    Here each saver waits for the other to have read the index before it
    writes (a barrier, not a pause: on a loaded machine one thread could
    start 0.2 s after the other, and there would be no race to see)."""
    load = caching.IndexDataCacheFile._load_index
    both_read = threading.Barrier(2)
    savers = threading.Semaphore(2)  # the two saves' reads wait; the loads after them do not

    def read_by_both(self: caching.IndexDataCacheFile) -> dict:
        found = load(self)
        if savers.acquire(blocking=False):
            both_read.wait(timeout=60)
        return found

    monkeypatch.setattr(caching.IndexDataCacheFile, "_load_index", read_by_both)
    monkeypatch.setattr(caching.IndexDataCacheFile, "save", c4lab.jitcache._unlocked_save)
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", source_stamp=(0.0, 0))
    entries = {"kernel for bitboards": "code A", "kernel for line masks": "code B"}
    _save_at_once(cache, entries)
    assert [cache.load(key) for key in entries] != list(entries.values())


# -- a damaged cache file: compiled again -----------------------------------------


@pytest.mark.parametrize("damage", ["cut short", "garbage", "empty"])
def test_a_damaged_index_is_an_empty_cache_and_the_next_save_writes_it_anew(tmp_path: Path, damage: str) -> None:
    """numba unpickled the index and let the failure through: every command
    compiling the function failed ("UnpicklingError: pickle data was
    truncated") until the cache was found and deleted."""
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", source_stamp=(0.0, 0))
    cache.save("kernel for bitboards", "code A")
    index = tmp_path / "kernel-1.py311.nbi"
    whole = index.read_bytes()
    index.write_bytes({"cut short": whole[: len(whole) // 2], "garbage": bytes(range(256)), "empty": b""}[damage])
    assert cache.load("kernel for bitboards") is None  # a miss: the function is compiled again
    cache.save("kernel for bitboards", "code B")
    assert cache.load("kernel for bitboards") == "code B"


@pytest.mark.parametrize("damage", ["cut short", "garbage"])
def test_a_damaged_data_file_is_a_miss_and_the_next_save_writes_it_anew(tmp_path: Path, damage: str) -> None:
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", source_stamp=(0.0, 0))
    cache.save("kernel for bitboards", "code A")
    data = tmp_path / "kernel-1.py311.1.nbc"
    whole = data.read_bytes()
    data.write_bytes(whole[: len(whole) // 2] if damage == "cut short" else bytes(range(200)))
    assert cache.load("kernel for bitboards") is None
    cache.save("kernel for bitboards", "code B")
    assert cache.load("kernel for bitboards") == "code B"


def test_a_process_whose_cache_files_are_damaged_compiles_again_and_runs(tmp_path: Path) -> None:
    """The whole path, as a command meets it: a function cached by a first
    process, every cache file then damaged, a second process gets the right
    answer (it was numba's unpickling traceback), and a third reads the
    cache the second wrote."""
    import subprocess
    import sys

    (tmp_path / "kernel.py").write_text(
        "import c4lab.jitcache\nfrom numba import njit\n\n\n@njit(cache=True)\ndef triple(x):\n    return 3 * x\n")
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": os.pathsep.join(
        [str(tmp_path), *sys.path])}
    code = "from kernel import triple; print(triple(14), triple.stats.cache_hits[triple.signatures[0]])"

    def run() -> list[str]:
        return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True,
                              timeout=120).stdout.split()

    assert run() == ["42", "0"]
    files = sorted(p for p in (tmp_path / "cache").rglob("*") if p.suffix in (".nbi", ".nbc"))
    assert {p.suffix for p in files} == {".nbi", ".nbc"}
    for path in files:
        path.write_bytes(path.read_bytes()[:7])
    assert run() == ["42", "0"]  # compiled again
    assert run() == ["42", "1"]  # and cached again


# -- the front-end shortcuts: the same compiled code, sooner ----------------------


def test_the_front_end_shortcuts_are_in_place_on_this_numba() -> None:
    import numba
    from numba.core import inline_closurecall, ir, typeinfer
    from numba.core.types import functions

    if not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("another numba: its own front end, untouched")
    assert inline_closurecall.InlineWorker.inline_function is c4lab.jitcache._inline_function
    assert inline_closurecall.InlineWorker.inline_ir is c4lab.jitcache._inline_ir
    assert typeinfer.TypeInferer.return_types_from_partial is c4lab.jitcache._declared_return_type
    assert functions.Function.get_call_type is c4lab.jitcache._remembered_call_type
    assert ir.Loc.__deepcopy__ is c4lab.jitcache._shared_loc


def test_a_source_location_is_shared_by_the_inliner_s_copies_and_copied_elsewhere() -> None:
    import copy

    import numba
    from numba.core import ir

    if not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("another numba: its own copies, untouched")
    loc = ir.Loc("kernels.py", 12, col=4)
    loc.lines = ["def f():\n", "    return 1\n"]
    elsewhere = copy.deepcopy(loc)
    assert elsewhere is not loc and elsewhere == loc and elsewhere.lines == loc.lines
    assert elsewhere.lines is not loc.lines
    c4lab.jitcache._copies.scopes = {}
    try:
        assert copy.deepcopy(loc) is loc
    finally:
        c4lab.jitcache._copies.scopes = None


def test_a_recursion_with_a_declared_signature_and_one_without_both_compile_right() -> None:
    """The declared return type answers a recursive call; a function with no
    declared type still has numba's own partial typing."""
    from numba import njit

    @njit("int64(int64)")
    def declared(n):  # type: ignore[no-untyped-def]
        return n if n < 2 else declared(n - 1) + declared(n - 2)

    @njit
    def inferred(n):  # type: ignore[no-untyped-def]
        return n if n < 2 else inferred(n - 1) + inferred(n - 2)

    assert declared(20) == inferred(20) == 6765


def test_an_inlined_closure_keeps_its_own_constants_and_calls_keep_their_types() -> None:
    """Two closures of one source, inlined into two kernels, each keep their
    constant (the untyped IR is remembered per function, not per source);
    one operator on two argument types gives each its own result type."""
    import numpy as np
    from numba import njit

    def make(k: int):  # type: ignore[no-untyped-def]
        @njit(inline="always")
        def scaled(x):  # type: ignore[no-untyped-def]
            return x * k

        @njit
        def kernel(x):  # type: ignore[no-untyped-def]
            return scaled(x) + scaled(x)

        return kernel

    assert make(3)(5) == 30 and make(7)(5) == 70

    @njit
    def both(a, b, c, d):  # type: ignore[no-untyped-def]
        return a & b, c & d

    wide, narrow = both(np.uint64(6), np.uint64(3), np.int8(6), np.int8(3))
    assert wide == narrow == 2
    assert isinstance(wide, (int, np.integer))
    assert both.nopython_signatures[0].return_type.types[0].bitwidth == 64


def test_an_error_message_is_marked_up_as_numba_marks_it_up() -> None:
    """The markup without colorama's stream wrapping is numba's string, in
    every theme and style, and numba uses it where colorama is installed."""
    import numba
    from numba.core import errors

    scheme = getattr(errors, "HighlightColorScheme", None)
    if scheme is None or not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("no colorama, or another numba: numba's own markup")
    assert scheme._markup is c4lab.jitcache._markup_unwrapped
    from colorama import Fore, Style

    for theme in errors.themes.values():
        colours = scheme(theme)
        for args in [("Cannot determine Numba type",), ("x {}", Fore.RED), ("é", None, None), ("m", Fore.BLUE, Style.DIM)]:
            assert colours._markup(*args) == c4lab.jitcache._wrapping_markup(colours, *args)
        assert colours.errmsg("typing failed") == c4lab.jitcache._wrapping_markup(colours, "typing failed", theme["errmsg"])


def test_an_overload_compiles_without_a_c_entry_point_and_still_runs() -> None:
    """numba's overloads and c4lab's own run as before without the C entry
    point nobody calls; a C function (``cfunc``) keeps its own."""
    import numba
    import numpy as np
    from numba import cfunc, njit, types
    from numba.core.typing import templates
    from numba.extending import overload

    if not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("another numba: its own overloads, untouched")
    assert templates._OverloadFunctionTemplate._get_jit_decorator is c4lab.jitcache._jit_without_c_entry

    def twice(x):  # type: ignore[no-untyped-def]
        """Twice ``x`` (an overload made for this test)."""

    @overload(twice)
    def _twice(x):  # type: ignore[no-untyped-def]
        return lambda x: x + x

    @njit
    def kernel(n):  # type: ignore[no-untyped-def]
        out = np.zeros(n, dtype=np.int64)
        for i in range(n):
            out[i] = twice(i) + min(i, 1)
        return out

    assert kernel(4).tolist() == [0, 3, 5, 7]

    @cfunc(types.int64(types.int64))
    def plus_one(x):  # type: ignore[no-untyped-def]
        return x + 1

    assert plus_one.address and plus_one.ctypes(41) == 42


def test_numba_loads_its_numpy_implementations_without_scipy_and_keeps_its_blas_check() -> None:
    """A process that compiles (or loads) c4lab's kernels does not import
    SciPy's linear algebra; numba's answer on BLAS is the one it would have
    given, and its own check is back in place (which imports SciPy when
    linear algebra is compiled)."""
    import subprocess
    import sys

    import numba

    if not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("another numba: its own imports, untouched")
    code = (
        "import importlib.util, sys\n"
        "from c4lab.rules import Position\n"
        "Position.parse('5x4:cc').legal_moves()\n"
        "import numba.np.arraymath as arraymath, numba.np.linalg as linalg\n"
        "print('scipy.linalg' in sys.modules, arraymath._HAVE_BLAS == (importlib.util.find_spec('scipy') is not None),"
        " arraymath.ensure_blas is linalg.ensure_blas)\n"
        "if importlib.util.find_spec('scipy') is not None:\n"
        "    linalg.ensure_blas()\n"
        "    print('scipy.linalg' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split()[:3] == ["False", "True", "True"]
    assert out.split()[3:] in ([], ["True"])


def test_a_kernel_call_does_not_import_numpy_ma_and_a_masked_array_is_still_refused() -> None:
    """numba's check that an array argument is not a masked one imported
    ``numpy.ma`` at the first kernel call (0.07-0.10 s of every process);
    an exact ``np.ndarray`` skips it and gets the type numba gives it, and a
    masked array is still refused with numba's own error."""
    import subprocess
    import sys

    import numba
    import numpy as np
    from numba.core.typing import typeof

    if not numba.__version__.startswith(c4lab.jitcache.SCOPE_SHARING_VERSIONS):
        pytest.skip("another numba: its own check, untouched")
    code = ("import sys\nfrom c4lab.rules import Position\nPosition.parse('5x4:cc').legal_moves()\n"
            "print('numpy.ma' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]
    fixed = np.zeros((3, 4), dtype=np.float32)
    fixed.flags.writeable = False
    for array in (np.arange(6), np.zeros((2, 3), order="F"), np.zeros(8)[::2], fixed):
        assert typeof.typeof(array) == c4lab.jitcache._numba_typeof_ndarray(array, None)
    with pytest.raises(numba.core.errors.NumbaTypeError, match="MaskedArray"):
        numba.njit(lambda a: a.sum())(np.ma.array([1, 2]))
