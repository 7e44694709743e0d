"""The scripts of benchmarks/ refuse bad options with one clear line (no
traceback, no hang, no minutes of work first)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def run_script(name: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(BENCHMARKS / name), *args], check=False, capture_output=True,
                          text=True, timeout=120, env=env)


def one_error(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one error line of a refused run (argparse's usage lines aside)."""
    assert done.returncode != 0, done.stdout
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, done.stderr
    for word in words:
        assert word in errors[0], errors[0]
    return errors[0]


@pytest.mark.parametrize(("args", "words"), [
    (["--pairs", "0"], ["--pairs", "got 0"]),                       # was: ZeroDivisionError
    (["--seconds", "0"], ["--seconds", "above 0"]),                 # was: OpenSpiel searched without end
    (["--seconds", "inf"], ["--seconds"]),
    (["--boards", "7x6,7x6/Xd1"], ["--boards", "7x6/Xd1", "plain boards only"]),
    (["--boards", "7y6"], ["--boards", "invalid position '7y6'"]),
    (["--agent", "nosuch"], ["--agent", "unknown agent 'nosuch'"]),
    (["--agent", "master:time=-1"], ["--agent", "time"]),
])
def test_vs_openspiel_refuses_bad_options(args: list[str], words: list[str]) -> None:
    one_error(run_script("vs_openspiel.py", *args), *words)
