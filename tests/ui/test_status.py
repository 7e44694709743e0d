"""The status lines and the arena's bar of games on a terminal's stderr
(``c4lab.ui.status``)."""

from __future__ import annotations

import io
import sys

import pytest

from c4lab.ui.status import games_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_games_bar_shows_a_spec_with_brackets_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue review: on a terminal the bar read its running summary ("leader
    SPEC (score)") as rich markup: ``engine:cmd=./e[v2]/x.sh`` showed as
    ``./e/x.sh``, and a spec with "[/b]" ended the arena in a MarkupError
    traceback."""
    for summary in ("leader engine:cmd=./e[v2]/x.sh (1)", "leader engine:cmd=./a[/b] (2)"):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        with games_bar(4) as progress:
            progress(2, 4, summary)
        assert summary in terminal.getvalue()
