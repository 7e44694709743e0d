"""Every command meets bad input with a one-line error and a non-zero exit
status: never a traceback, and nothing written by a command that only reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from c4lab.cli import main

BAD = [
    ("show", "7x6:zz"),
    ("move", "7x6", "--agent", "master:time=-1"),
    ("move", "7x6", "--agent", "master:time=0"),
    ("move", "7x6", "--agent", "uct:c=nan"),
    ("move", "7x6", "--time", "inf"),
    ("move", "7x6", "--agent", "human"),  # no one at the keyboard
    ("move", "7x6", "--agent", "engine:cmd=/nonexistent/engine"),
    ("solve", "7x6:zz"),
    ("solve", "--timeout", "-1", "7x6"),
    ("agents", "--bogus"),
    ("play", "--port", "99999"),
    ("play", "--tui", "--board", "99x99"),
    ("serve", "--port", "99999"),
    ("connect", "not a link"),
    ("games", "--db", "/nonexistent-folder/games.sqlite"),
    ("engine", "--agent", "nobody"),
    ("train", "qlearning", "--board", "9x9"),
    ("book", "build", "--depth", "99"),
    ("book", "info", "/nonexistent-folder/book.npz"),
    ("bench", "solver", "--sets", "nope"),
    ("bench", "accuracy", "nobody"),
    ("arena", "random"),
    ("arena", "random", "random", "--out", "/nonexistent-folder/run.jsonl"),
    ("report", "/nonexistent-folder/run.jsonl"),
]


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a))
def test_bad_input_is_an_error_message_never_a_traceback(args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, list(args), input="")
    assert result.exit_code not in (0, None), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.output.strip(), "no message at all"


def test_a_listing_creates_no_file(tmp_path: Path) -> None:
    missing = tmp_path / "games.sqlite"
    result = CliRunner().invoke(main, ["games", "--db", str(missing)])
    assert result.exit_code != 0 and "no game database" in result.output
    assert not missing.exists()


def test_an_agent_whose_package_is_missing_is_listed_as_unavailable_with_its_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kaggle_environments" else real(name, *a))
    listing = CliRunner().invoke(main, ["agents"])
    line = next(x for x in listing.output.splitlines() if x.startswith("kaggle:"))
    assert "[unavailable: needs kaggle_environments" in line and "pip install" in line
    result = CliRunner().invoke(main, ["move", "7x6", "--agent", "kaggle"])
    assert result.exit_code == 2 and "pip install" in result.output and "Traceback" not in result.output


def test_a_first_start_says_that_the_engine_is_being_prepared() -> None:
    import io

    from numba import njit
    from rich.console import Console

    from c4lab.ui.preparing import MESSAGE, announce_preparation

    out = io.StringIO()
    with announce_preparation(Console(file=out, force_terminal=True)):

        @njit
        def fresh(x: int) -> int:  # compiled here, never cached
            return x + 1

        assert fresh(1) == 2
    assert MESSAGE in out.getvalue()

