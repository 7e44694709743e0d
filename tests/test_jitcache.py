"""numba's on-disk cache stays right when processes compile at once.

Two compiled versions of one function saved at the same moment must each
find their own code again: numba alone can give both the same data file
(the index then sends one key to the other's code), c4lab.jitcache
serialises the save with a file lock.  The window is widened on purpose
(a pause between reading and writing the index), so without the lock this
test fails every time."""

from __future__ import annotations

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


def test_without_the_lock_the_race_is_real(tmp_path: Path, slow_index: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check above would catch the race: numba's own save mixes them up."""
    monkeypatch.setattr(caching.IndexDataCacheFile, "save", c4lab.jitcache._unlocked_save)
    cache = caching.IndexDataCacheFile(str(tmp_path), "kernel-1.py311", source_stamp=(0.0, 0))
    entries = {"kernel for bitboards": "code A", "kernel for line masks": "code B"}
    _save_at_once(cache, entries)
    assert [cache.load(key) for key in entries] != list(entries.values())
