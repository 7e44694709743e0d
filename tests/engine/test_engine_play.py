"""An engine program in the terminal game: ``c4lab play --tui`` with
``engine:cmd=...`` (docs/engine-protocol.md, "Engines as agents")."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"


def c4lab(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-m", "c4lab", *args], input=stdin, capture_output=True, text=True,
                          timeout=300, check=False, env=env)


@pytest.mark.slow  # two starts of c4lab (8 s on a loaded machine)
def test_an_engine_program_plays_a_terminal_game() -> None:
    engine = "engine:cmd=" + shlex.join([sys.executable, "-m", "c4lab", "engine", "--agent", "heuristic:seed=1"])
    done = c4lab("play", "--tui", "-1", "human", "-2", engine, "--first", "1", "--seed", "1", "--no-color",
                 stdin="a\na\na\na\na\na\nn\n")
    assert done.returncode == 0, done.stderr
    assert f"player 2 ({engine}), plays" in done.stdout
    assert "The game in notation: 7x6:a" in done.stdout


def test_the_page_of_c4lab_play_starts_no_program_and_says_where_one_plays() -> None:
    done = c4lab("play", "--no-browser", "-2", "engine:cmd=true")
    assert done.returncode == 2
    assert "unknown agent 'engine'" in done.stderr and "`c4lab play --tui` import it" in done.stderr
