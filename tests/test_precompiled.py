"""The kernels shipped compiled (``c4lab.precompiled``): a first start on an
empty cache loads them instead of compiling, plays as the code compiled
here plays, and never trusts a shipped cache that is not that of the
sources; ``c4lab prepare`` still compiles for this machine's CPU."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from numba.core import caching

from c4lab import compile_aside, precompiled
from c4lab.agents import minimax
from testkit import run_counting_compiles

pytestmark = pytest.mark.skipif(not precompiled._has_features(), reason="this processor cannot run the shipped code")
#: The tests that load the shipped code: where it does not match (another
#: numba or Python, or sources edited since it was made, which the first
#: test below reports), there is nothing to load.
loads_it = pytest.mark.skipif(not precompiled._matches(), reason="the shipped code is not that of these sources")

#: A first start's questions: a first ``master`` move (on iterations, so
#: that two runs play alike), a level's, the solver's, on boards of three
#: kinds, with what was compiled meanwhile.
FIRST_START = """
import json
from c4lab.agents import make_agent
from c4lab.agents.base import Budget
from c4lab.rules import Position
from c4lab.solver.api import Solver
answers = [
    str(make_agent("master:time=none,iterations=3000,seed=7").choose(Position.parse("9x8/Xd3:dd"))),
    str(make_agent("uct-smart:seed=3").choose(Position.parse("8x7/Bc1:d"), Budget(iterations=3000))),
    Solver().solve(Position.parse("6x5/Xc2:dc")).score,
]
print(json.dumps({"answers": answers, "compiled": compiled}))
"""


def test_the_shipped_code_is_that_of_these_sources() -> None:
    """Made from these sources with this numba (a kernel changed without
    ``python -m c4lab.precompiled`` fails here, not silently at a user's)."""
    manifest = json.loads(precompiled.MANIFEST.read_text(encoding="utf-8"))
    build = precompiled.this_build()
    for made_with in ("python", "numba"):  # elsewhere the shipped code is not used, and everything compiles
        if manifest[made_with] != build[made_with]:
            pytest.skip(f"the shipped code is made with {made_with} {manifest[made_with]}, this is {build[made_with]}")
    assert manifest["sources"] == build["sources"], "the kernels changed: run `python -m c4lab.precompiled`"
    assert manifest == build
    assert precompiled._matches()


@loads_it
def test_a_first_start_on_an_empty_cache_compiles_nothing_and_plays_as_code_compiled_here(tmp_path: Path) -> None:
    shipped = run_counting_compiles(FIRST_START, tmp_path / "empty", C4LAB_PRECOMPILED="1")
    assert shipped["compiled"] == []
    assert not list((tmp_path / "empty").rglob("*.nbi"))  # nothing written: every kernel came from the shipped cache
    compiled_here = run_counting_compiles(FIRST_START, tmp_path / "own", C4LAB_PRECOMPILED="0")
    assert compiled_here["compiled"]  # the same questions compile without it
    assert shipped["answers"] == compiled_here["answers"]


@loads_it
def test_code_compiled_for_this_cpu_comes_first_and_prepare_compiles_it(tmp_path: Path) -> None:
    """``c4lab prepare`` compiles for this CPU though code is shipped, and a
    later process loads that, not the shipped code."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path), C4LAB_PRECOMPILED="1")
    subprocess.run([sys.executable, "-m", "c4lab", "prepare", "--agent", "minimax", "--jobs", "1"],
                   env=env, capture_output=True, text=True, check=True)
    indexes = list(tmp_path.rglob("minimax._search-*.nbi"))
    assert len(indexes) == 1
    with open(indexes[0], "rb") as f:
        pickle.load(f)
        _, overloads = pickle.loads(f.read())
    from llvmlite import binding

    assert overloads and all(key[1][1] == binding.get_host_cpu_name() for key in overloads)  # not the baseline's
    script = """
import json
from c4lab import precompiled
from c4lab.agents import make_agent
from c4lab.rules import Position
shipped = []
load = precompiled.load
def recording(cache, sig, target_context):
    found = load(cache, sig, target_context)
    if found is not None:
        shipped.append(f"{cache._py_func.__module__}.{cache._py_func.__qualname__}")
    return found
precompiled.load = recording
make_agent("minimax:depth=3").choose(Position.parse("7x6"))
print(json.dumps({"compiled": compiled, "shipped": shipped}))
"""
    out = run_counting_compiles(script, tmp_path, C4LAB_PRECOMPILED="1")
    assert out["compiled"] == []
    assert "c4lab.agents.minimax._search" not in out["shipped"]  # this CPU's, from numba's cache


@loads_it
def test_the_shipped_code_counts_as_on_disk_where_it_is_usable(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """So that no child process is started to compile what is shipped
    (``compile_aside``)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr("numba.core.config.CACHE_DIR", str(tmp_path))
    monkeypatch.setenv(precompiled.ENV, "1")
    assert compile_aside.on_disk(minimax._search.py_func)
    monkeypatch.setenv(precompiled.ENV, "0")
    assert not compile_aside.on_disk(minimax._search.py_func)


@loads_it
@pytest.mark.parametrize("fault", [None, "another numba", "other sources", "no manifest", "damaged index",
                                   "damaged data"])
def test_a_shipped_cache_that_does_not_match_or_is_damaged_is_a_miss(
    fault: str | None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Never an error, never code of other sources: the kernel is compiled
    as if nothing were shipped.  (Without a fault, minimax's search loads.)"""
    monkeypatch.setenv(precompiled.ENV, "1")
    (sig, _, _), = precompiled.index(caching.FunctionCache(minimax._search.py_func))  # the signature it was shipped for
    copy = tmp_path / "precompiled"
    shutil.copytree(precompiled.SHIPPED, copy)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    index = next((copy / "agents").glob("minimax._search-*.nbi"))
    if fault == "another numba":
        manifest["numba"] = "0.1.0"
    elif fault == "other sources":
        manifest["sources"] = "0" * 64
    if fault == "no manifest":
        (copy / "manifest.json").unlink()
    else:
        (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    if fault == "damaged index":
        index.write_bytes(b"not a pickle")
    if fault == "damaged data":
        for data in (copy / "agents").glob("minimax._search-*.nbc"):
            data.write_bytes(data.read_bytes()[:100])
    monkeypatch.setattr(precompiled, "SHIPPED", copy)
    monkeypatch.setattr(precompiled, "MANIFEST", copy / "manifest.json")
    precompiled._matches.cache_clear()
    try:
        usable = precompiled.usable()
        found = precompiled.index(caching.FunctionCache(minimax._search.py_func))
        minimax._search.targetctx.refresh()  # as numba's load_overload does first (the runtime's symbols defined)
        loaded = precompiled.load(caching.FunctionCache(minimax._search.py_func), sig, minimax._search.targetctx)
    finally:
        precompiled._matches.cache_clear()
    assert usable == (fault in (None, "damaged index", "damaged data"))
    assert (loaded is not None) == (fault is None)
    assert bool(found) == (fault in (None, "damaged data"))


def test_bench_measures_the_code_compiled_for_this_cpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """``c4lab bench`` (and its commands) turn the shipped code off, as
    after ``c4lab prepare``, unless told otherwise."""
    from click.testing import CliRunner

    from c4lab.cli import main

    monkeypatch.delenv(precompiled.ENV, raising=False)
    CliRunner().invoke(main, ["bench", "solver", "--dir", str(tmp_path), "--sets", "none"])
    assert os.environ[precompiled.ENV] == "0"
    monkeypatch.setenv(precompiled.ENV, "1")
    CliRunner().invoke(main, ["bench", "solver", "--dir", str(tmp_path), "--sets", "none"])
    assert os.environ[precompiled.ENV] == "1"
