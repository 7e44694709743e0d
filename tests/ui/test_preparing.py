"""The notice of a first start's compiling in a log (a pipe, a file): said
once the compiling has taken a second, with how long it took; a kernel
numba cannot cache, compiled in a fraction of a second on every start, is
not announced as a first start."""

from __future__ import annotations

import re
import time

import pytest
from numba.core import event

from c4lab.ui import preparing


def compiling(seconds: float) -> None:
    """What numba's compiler tells its listeners, for ``seconds``."""
    event.start_event("numba:compile", data={})
    time.sleep(seconds)
    event.end_event("numba:compile", data={})


def test_a_long_compile_is_said_when_it_begins_and_how_long_it_took_when_done(capsys: pytest.CaptureFixture[str],
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    with preparing.preparing_on_stderr(logged=True):
        compiling(0.4)
        compiling(0.9)  # a second in all: said while it runs (looked at every tenth of a second)
        err = ""
        for _ in range(50):
            err += capsys.readouterr().err
            if err:
                break
            time.sleep(0.1)
        assert err == "preparing the engine, first start only (compiling, then kept on disk)...\n"
    assert re.fullmatch(r"ready after \d+ s\n", capsys.readouterr().err)


def test_a_short_compile_says_nothing(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    with preparing.preparing_on_stderr(logged=True):
        compiling(0.2)
        time.sleep(1.0)  # the rest of the block: loading from the cache, no compiling
    assert capsys.readouterr().err == ""
    with preparing.preparing_on_stderr():  # a command that did not ask for the lines: none in a log
        compiling(1.2)
    assert capsys.readouterr().err == ""
