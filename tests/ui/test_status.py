"""The status lines and the arena's bar of games on a terminal's stderr
(``c4lab.ui.status``)."""

from __future__ import annotations

import io
import re
import sys
import threading

import pytest

from c4lab.ui.status import StatusLine, games_bar


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_status_line_is_cut_to_the_terminal_s_width_so_that_it_is_rewritten_in_place(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: ``c4lab solve`` on a 60-column terminal wrote its 62-character
    progress line whole: it wrapped, and each rewrite (a carriage return,
    back to the start of the last row only) left a row behind."""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setenv("COLUMNS", "60")
    line = StatusLine("solving: ")
    line.show("6.0 s  11,429,020 nodes  score in [-33, 34], testing -17")
    shown = terminal.getvalue()
    assert shown == "\r\x1b[Ksolving: 6.0 s  11,429,020 nodes  score in [-33, 34], testi"
    assert len(shown) - len("\r\x1b[K") == 59


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


def test_the_plain_progress_line_says_how_long_so_far_and_about_how_long_is_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: under ``nohup`` the line ended in a bare "(74 s)", which could
    be the time so far or the time left.  The time left counts the games
    this run played, not those a resumed run found saved."""
    now = [0.0]
    monkeypatch.setattr("c4lab.ui.status.time.monotonic", lambda: now[0])
    log = io.StringIO()  # no terminal
    monkeypatch.setattr(sys, "stderr", log)
    with games_bar(400) as progress:
        progress(100, 400, "a 60 - 40 b")  # resumed: 100 games saved
        now[0] = 10.0
        progress(140, 400, "a 84 - 56 b")  # 40 games in 10 s: 260 left, about 65 s
        now[0] = 40.0
        progress(400, 400, "a 240 - 160 b")
    assert log.getvalue().splitlines() == [
        "games 100/400  a 60 - 40 b  (0 s)",
        "games 140/400  a 84 - 56 b  (10 s, about 65 s left)",
        "games 400/400  a 240 - 160 b  (40 s)",
    ]


def test_the_time_left_leaves_out_the_first_games_which_carry_the_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a first run's first pair took 19 s of compiling, and the line
    said "about 172 s left" of a run that ended 4 s later: once twice as
    many more games come, the rate is theirs (not at once: the other
    worker's first games end just after the first ones, and a resumed run
    said "about 4 s left" of 20 s)."""
    now = [0.0]
    monkeypatch.setattr("c4lab.ui.status.time.monotonic", lambda: now[0])
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with games_bar(20) as progress:
        progress(0, 20, "")
        now[0] = 19.0
        progress(2, 20, "a 1 - 1 b")  # the first pair, after the compiling: only its rate so far
        now[0] = 19.5
        progress(4, 20, "a 2 - 2 b")  # the other worker's first pair: still the whole run's rate
        now[0] = 20.5
        progress(6, 20, "a 3 - 3 b")  # 4 games in 1.5 s since the first pair: 14 left, about 5 s
    assert log.getvalue().splitlines() == [
        "games 2/20  a 1 - 1 b  (19 s, about 171 s left)",
        "games 4/20  a 2 - 2 b  (20 s, about 78 s left)",
        "games 6/20  a 3 - 3 b  (20 s, about 5 s left)",
    ]


def test_without_a_terminal_a_line_comes_every_so_often_even_while_no_game_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: under ``nohup`` a first run said nothing while its first pair
    waited for the agents' compile (and "at least every 60 s" held only
    while games ended): a line now comes every ``plain_every`` seconds
    whatever happens, saying that no game has ended yet if none has."""
    log = io.StringIO()
    monkeypatch.setattr(sys, "stderr", log)
    with games_bar(20, plain_every=0.05) as progress:
        progress(0, 20, "")
        for _ in range(200):  # until the first line comes (0.05 s on an idle machine; 10 s at most)
            if log.getvalue():
                break
            threading.Event().wait(0.05)
    first = log.getvalue().splitlines()[0]
    assert re.fullmatch(r"games 0/20  \(\d+ s: no game has ended yet \(a first run compiles the agents before "
                        r"their first moves\)\)", first), first


def _lines(terminal: io.StringIO) -> list[str]:
    """What a terminal shows, line by line, its control sequences left out."""
    clean = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", terminal.getvalue())
    return [line for line in re.split(r"[\r\n]", clean) if line.strip()]


def test_a_note_during_the_run_is_a_line_of_its_own_above_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: the arena's "note: ..." lines, written to stderr as they were,
    began on the bar's line ("0/40 -:--:--note: the 20 pairs ...")."""
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    with games_bar(4) as progress:
        progress(0, 4, "a 0 - 0 b")
        progress.say("note: the 4 pairs start from only 3 positions")
        progress(1, 4, "a 1 - 0 b")
    assert "note: the 4 pairs start from only 3 positions" in _lines(terminal)


def test_a_bar_that_waits_for_its_first_game_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a first run's bar stood at 0/120 for about a minute with
    nothing on the screen about the compiling (a log's lines said it)."""
    from c4lab.ui import status

    monkeypatch.setattr(status, "WAIT_SAID_AFTER", 0.05)
    for waited in (True, False):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        with games_bar(4) as progress:
            progress(0, 4, "a 0 - 0 b")
            if not waited:
                progress(2, 4, "a 2 - 0 b")  # the first games came at once: nothing to say
            threading.Event().wait(0.3)
        said = [line for line in _lines(terminal) if line.startswith("No game has ended yet")]
        assert said == (["No game has ended yet (a first run compiles the agents before their first moves)"]
                        if waited else [])
