"""Kernels shipped compiled: numba's cache of every agent's kernels, made
for a baseline x86-64 CPU, that a process loads where its own cache has
nothing yet.

numba compiles each kernel the first time a process runs it and keeps the
machine code in its cache on disk.  On a fresh install that cache is empty,
and the first move of an agent waited for the compiler: a first ``master``
move on 9x8/Xd3 took 6.7-8.4 s on a slow day of this project's 2-core
machine, after every saving in compiling that issue 27's passes found
(``docs/speed.md``).  So c4lab ships the cache that ``c4lab prepare``
fills (every agent on every kind of board), compiled for the CPU
``x86-64-v2`` (every x86-64 processor since 2009: SSE4.2 and POPCNT), in
``data/precompiled``.  numba's own lookup comes first (code compiled on
this machine, for its CPU); where it finds nothing, :func:`load` looks
here, with the same key but the baseline CPU's name.  The first
``master`` move then takes about 2 s.

The shipped code is used only where it is what these sources compile to:
its manifest names the numba and Python it was made with and a digest of
every c4lab module that holds compiled code (:func:`sources_digest`); the
processor must have the baseline's features; ``C4LAB_PRECOMPILED=0`` turns
it off.  Otherwise, and for any kernel it lacks, numba compiles as before.
A damaged shipped file is a miss, never an error.

Code for the baseline runs slower than code for this machine's CPU (see
``docs/speed.md``), so ``c4lab prepare`` (and the prepare that ``c4lab
play`` runs in the background once) still compiles every kernel for this
CPU, with the shipped code turned off; later processes find that first.

``python -m c4lab.precompiled`` makes the shipped cache again (a
``prepare`` for the baseline CPU in an empty cache, about a minute on two
cores); a test fails while the shipped cache is not that of the sources.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import os
import pickle
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from numba.core import caching

PACKAGE = Path(__file__).resolve().parent
#: Where the shipped cache lives: one folder per package of c4lab that has
#: kernels (``agents``, ``rules``...), holding numba's index and data files.
SHIPPED = PACKAGE / "data" / "precompiled"
MANIFEST = SHIPPED / "manifest.json"
#: ``0`` turns the shipped code off (``c4lab prepare`` does, to compile for this CPU).
ENV = "C4LAB_PRECOMPILED"
#: The CPU the shipped code is compiled for, and the features of it the
#: processor must have (LLVM's names).
CPU_NAME = "x86-64-v2"
CPU_FEATURES = ("cx16", "popcnt", "sahf", "sse3", "sse4.1", "sse4.2", "ssse3")
#: A module whose source has any of these holds compiled code (a jit
#: function, an intrinsic, an overload, a cfunc), or changes how numba
#: compiles (``jitcache``): its text is part of :func:`sources_digest`.
_COMPILED_SOURCE = re.compile(
    rb"^\s*@(njit|intrinsic|overload|register_jitable|generated_jit)|\b(cfunc|njit|CFunc)\(|\bcaching\.", re.MULTILINE
)


def sources_digest() -> str:
    """A digest of every c4lab module that holds compiled code, by path
    and content (this module aside): the shipped cache is used only where
    its manifest has this one.  (numba's own cache checks a function's own
    file only, not the kernels it inlines from others.)  Read once a
    process, and only where numba's cache missed: about 20 ms."""
    digest = hashlib.sha256()
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_bytes()
        if path.name != "precompiled.py" and _COMPILED_SOURCE.search(text):
            digest.update(f"{path.relative_to(PACKAGE).as_posix()}\n".encode())
            digest.update(text)
    return digest.hexdigest()


def _python() -> str:
    """Python's version as numba's cache files name it (``py311``)."""
    return f"py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"


def this_build() -> dict[str, str]:
    """What a shipped cache must have been made with to be used here."""
    import numba  # lazy: loaded with the kernels anyway

    return {"numba": numba.__version__, "python": _python(), "cpu": CPU_NAME, "sources": sources_digest()}


def _has_features() -> bool:
    """Whether this processor runs code compiled for :data:`CPU_NAME`."""
    from llvmlite import binding  # lazy: loaded with numba

    try:
        features = binding.get_host_cpu_features()
    except RuntimeError:  # LLVM cannot tell (not an x86 processor, among others)
        return False
    return all(features.get(name, False) for name in CPU_FEATURES)


@functools.cache
def _matches() -> bool:
    """Whether the shipped cache was made from these sources with this
    numba and Python, for a CPU this processor can run (read once a
    process)."""
    try:
        manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return manifest == this_build() and _has_features()


def usable() -> bool:
    """Whether a process may load the shipped code: not turned off
    (:data:`ENV`), and it matches (see the module's docstring)."""
    return os.environ.get(ENV, "") != "0" and _matches()


def measure_this_cpu() -> None:
    """Unless :data:`ENV` says otherwise, this process and the processes
    it starts compile for this machine's CPU instead of loading the shipped
    code, as after ``c4lab prepare``: what a measurement of speed wants
    (``c4lab bench``, the scripts of ``benchmarks/``)."""
    os.environ.setdefault(ENV, "0")


class _ShippedFile(caching.IndexDataCacheFile):  # type: ignore[misc]
    """numba's index and data files of one function, read from the shipped
    cache: the index's stamp of the source is not compared (the manifest's
    digest covers every source), and any fault reading it is a miss."""

    def __init__(self, folder: Path, filename_base: str) -> None:
        super().__init__(cache_path=str(folder), filename_base=filename_base, source_stamp=None)

    def _load_index(self) -> dict[Any, str]:
        try:
            with open(self._index_path, "rb") as f:
                if pickle.load(f) != self._version:
                    return {}
                _, overloads = pickle.loads(f.read())
        except Exception:  # noqa: BLE001 - missing or damaged: nothing shipped for it
            return {}
        return overloads if isinstance(overloads, dict) else {}

    def save(self, key: Any, data: Any) -> None:  # pragma: no cover - never written
        raise OSError("the shipped cache is read-only")


def _shipped_file(cache: Any) -> _ShippedFile | None:
    """The shipped index of the function of numba's ``cache`` (a
    ``caching.Cache``), or None for a function outside c4lab."""
    try:
        source = Path(inspect.getfile(cache._py_func)).resolve()
        source.relative_to(PACKAGE)
    except (TypeError, ValueError, OSError):
        return None
    return _ShippedFile(SHIPPED / source.parent.name, cache._impl.filename_base)


def _key(cache: Any, sig: Any, codegen: Any) -> Any:
    """numba's index key of ``sig`` in ``cache``, for the baseline CPU."""
    sig_key, magic, hashes = cache._index_key(sig, codegen)
    return sig_key, (magic[0], CPU_NAME, ""), hashes


def load(cache: Any, sig: Any, target_context: Any) -> Any:
    """The compiled overload of ``sig`` for numba's ``cache`` from the
    shipped cache, or None (not usable, not shipped, damaged).  Called
    inside numba's ``Cache.load_overload`` (``jitcache``), after its
    ``target_context.refresh()``: the code it loads calls numba's runtime,
    whose symbols that defines."""
    if not usable():
        return None
    files = _shipped_file(cache)
    if files is None:
        return None
    try:
        data = files.load(_key(cache, sig, target_context.codegen()))
        return None if data is None else cache._impl.rebuild(target_context, data)
    except Exception:  # noqa: BLE001 - a damaged data file: compiled as usual
        return None


def index(cache: Any) -> dict[Any, str]:
    """The shipped index entries of the function of numba's ``cache`` (a
    ``caching.FunctionCache``, which :func:`c4lab.compile_aside.on_disk`
    has made already); empty where the shipped code is not usable."""
    if not usable():
        return {}
    files = _shipped_file(cache)
    if files is None:
        return {}
    return {key: name for key, name in files._load_index().items() if key[1][1:] == (CPU_NAME, "")}


def build(out: Path = SHIPPED) -> int:
    """Make the shipped cache again: ``c4lab prepare`` for the baseline CPU
    in an empty cache, whose files are copied to ``out`` with a manifest.
    Returns the number of functions shipped."""
    with tempfile.TemporaryDirectory(prefix="c4lab-precompiled-") as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache, NUMBA_CPU_NAME=CPU_NAME, NUMBA_CPU_FEATURES="", **{ENV: "0"})
        subprocess.run([sys.executable, "-m", "c4lab", "prepare"], env=env, check=True)
        shutil.rmtree(out, ignore_errors=True)
        count = 0
        for folder in sorted(Path(cache).iterdir()):  # numba's folders: "<package>_<hash of its path>"
            if not folder.is_dir():
                continue
            target = out / folder.name.rsplit("_", 1)[0]
            target.mkdir(parents=True, exist_ok=True)
            for file in sorted(folder.glob("*.nb[ic]")):
                shutil.copyfile(file, target / file.name)
                count += file.suffix == ".nbi"
    (out / "manifest.json").write_text(json.dumps(this_build(), indent=1) + "\n", encoding="utf-8")
    return count


if __name__ == "__main__":
    print(f"shipped the compiled kernels of {build()} functions in {SHIPPED}")
