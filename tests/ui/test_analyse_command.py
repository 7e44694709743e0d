"""``c4lab analyse POSITION`` (issue 27, part 3): the page's analysis board
opened on the position (``--no-browser`` prints its link), ``--tui`` the
same scores in the terminal game (with undo and redo along the line), and a
bad position: one line that says where, nothing started."""

from __future__ import annotations

import io
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from c4lab.agents.base import Analysis, MoveStats
from c4lab.agents.human import LEAVE_QUESTION
from c4lab.cli import main
from c4lab.rules import Move, Position
from c4lab.solver import Solver
from c4lab.ui.board_view import board_text, scores_line, scores_row
from c4lab.ui.line_keys import LEAVE_BOARD_QUESTION
from c4lab.ui.terminal import GameSettings, TerminalGame
from testkit import Script, first_pass_solves_nothing, stop_process


def exact(position: str) -> dict[str, int]:
    return {move.token: score for move, score in Solver().analyse(Position.parse(position)).items()}


def written(scores: dict[str, int]) -> str:
    return ", ".join(f"{letter} {score:+d}" if score else f"{letter} 0" for letter, score in scores.items())


def analysis_tui(board: str, *keys: str) -> tuple[int, str]:
    """The terminal analysis board on ``board``, played with ``keys``: its
    exit status and everything it printed."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=False, no_color=True, width=200)
    settings = GameSettings(board=board, players=("human", "human"), first="1", analyse=True)
    status = TerminalGame(settings, console=console, read=Script(*keys)).run()
    return status, out.getvalue()


def test_a_bad_position_is_one_line_that_says_where_and_nothing_starts(tmp_path: Path) -> None:
    db = tmp_path / "g.sqlite"
    for extra in ([], ["--tui"], ["--no-browser", "--db", str(db)]):
        result = CliRunner().invoke(main, ["analyse", "7x6:dz", *extra])
        assert result.exit_code == 2
        assert result.stdout == ""
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and "character 5" in lines[0] and "column z" in lines[0], lines
    assert not db.exists()  # no server, no database


def test_the_tui_shows_every_columns_exact_score_for_whoever_is_to_move() -> None:
    _, text = analysis_tui("7x6:dd", "c", "e")
    assert f"Scores for A (white), to move: {written(exact('7x6:dd'))}" in text
    assert f"Scores for B (black), to move: {written(exact('7x6:ddc'))}" in text


def test_the_scores_line_explains_an_estimate_only_where_one_is_shown() -> None:
    """Review: every scores line explained "~N: not solved in time, the
    engine's N %", on 4x4 and 5x4 too, where every score is exact."""
    _, text = analysis_tui("5x4/Bb1", "e", "y")
    assert "Scores for A (white), to move: a -1, b +1, c 0, d 0, e 0  (+ a win, the larger the sooner; 0 a draw; " \
           "- a loss)\n" in text
    assert "~N" not in text


def test_the_scores_line_explains_a_question_mark_where_one_is_shown() -> None:
    """A column neither solved in time nor estimated is ``?``: the line
    explained only ``~N``, a sign shown nowhere there (the page says "?:
    not solved in time, and no estimate")."""
    position = Position.parse("6x5/Xc2")
    columns = [{"column": "a", "score": None, "exact": False, "estimate": None},
               {"column": "b", "score": None, "exact": False, "estimate": 0.57},
               {"column": "c", "score": 1, "exact": True, "estimate": None}]
    assert scores_line(position, columns) == (
        "Scores for A (white), to move: a ?, b ~57, c +1  (+ a win, the larger the sooner; 0 a draw; - a loss; "
        "~N: not solved in time, the engine's N %; ?: not solved in time, and no estimate; s solves on)")
    assert scores_line(position, [columns[0], columns[2]], listed=False).endswith(
        "above the board  (+ a win, the larger the sooner; 0 a draw; - a loss; ?: not solved in time, "
        "and no estimate; s solves on)")


def test_the_tui_says_it_is_working_while_it_scores_the_columns() -> None:
    # The first board of `c4lab analyse --tui 6x5/Xc2` took a minute on a first
    # start (10 s on 12x12 after), a blank terminal all along.
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="standard", width=120)
    settings = GameSettings(board="5x4", players=("human", "human"), first="1", analyse=True)
    assert TerminalGame(settings, console=console, read=Script("exit")).run() == 0
    shown = out.getvalue()
    assert re.search(r"working out every column's score\.\.\. \d+ s", shown)
    assert shown.index("working out every column's score") < shown.index("Scores for A (white)")


def test_the_tui_steps_along_the_line_and_a_new_move_ends_it_there() -> None:
    status, text = analysis_tui("7x6:dd", "c", "u", "u", "u", "r", "r", "r", "u", "u", "b", "r", "e")
    assert status == 0
    assert text.count(f"Scores for A (white), to move: {written(exact('7x6'))}") == 1  # the pasted moves too
    assert f"Scores for A (white), to move: {written(exact('7x6:db'))}" in text
    # after b, r has nothing to play again: the line ended at 7x6:db, and the board says so
    assert text.count("Nothing to play again: this is the end of the line.") == 1
    assert text.rstrip().endswith("The position on the board: 7x6:db")
    _, text = analysis_tui("7x6", "u", "e")
    assert "Nothing to take back: this is the start." in text


def test_the_tui_row_sits_over_the_columns() -> None:
    position = Position.parse("7x6:ddc")
    columns = [
        {"column": "a", "score": -18, "exact": True, "estimate": None},
        {"column": "b", "score": 2, "exact": True, "estimate": None},
        {"column": "c", "score": 0, "exact": True, "estimate": None},
        {"column": "d", "score": None, "exact": False, "estimate": 0.573},
        {"column": "e", "score": None, "exact": False, "estimate": None},
    ]
    row = scores_row(position, columns).plain
    assert row == "   -18  +2   0 ~57   ?         "  # a space after each: none runs into the next
    board = board_text(position, wide=True).plain.splitlines()
    pieces, letters = board[-2], board[-1]
    assert [row[i] for i in range(5, len(row), 4)] == ["8", "2", "0", "7", "?", " ", " "]
    assert [letters[i] for i in range(5, len(letters), 4)] == list("abcdefg")  # each score's last character
    assert [pieces[i] for i in range(5, 5 + 4 * 4, 4)] == ["·", "·", "●", "●"]  # over its column's piece


def test_the_command_prints_the_link_of_the_page_on_the_position(tmp_path: Path) -> None:
    from c4lab.server.run import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "analyse", "9x8/Xd3/Bb1:dd", "--no-browser", "--port", str(port),
         "--db", str(tmp_path / "g.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout
        line = proc.stdout.readline()
        assert line.startswith("c4lab analysis board at http://"), line
        match = re.search(r"at (http://127\.0\.0\.1:\d+/analyse\?position=\S+)", line)
        assert match, line
        assert match.group(1).endswith("/analyse?position=9x8%2FXd3%2FBb1%3Add")
        with urllib.request.urlopen(match.group(1), timeout=10) as page:  # the page itself
            assert page.status == 200 and b"analysis-toggle" in page.read()
    finally:
        stop_process(proc)


def test_a_second_start_over_the_same_database_opens_the_running_game_instead_of_failing(tmp_path: Path) -> None:
    """Issue 27 review: ``c4lab analyse`` while ``c4lab play`` ran over the
    same game database failed ("in use by another c4lab server"); now it
    opens its page on the running one.  ``c4lab serve`` still refuses."""
    from c4lab.server.run import free_port

    port, db = free_port(), str(tmp_path / "g.sqlite")
    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "play", "--no-browser", "--port", str(port), "--db", db],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout and proc.stdout.readline().startswith(f"c4lab game at http://127.0.0.1:{port}/")
        again = subprocess.run(
            [sys.executable, "-m", "c4lab", "analyse", "7x6:dd", "--no-browser", "--db", db],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert again.returncode == 0 and again.stderr == "", again.stderr
        assert again.stdout.startswith(f"c4lab is already running at http://127.0.0.1:{port}/ (process {proc.pid}")
        link = again.stdout.split()[-1]
        assert link == f"http://127.0.0.1:{port}/analyse?position=7x6%3Add"
        with urllib.request.urlopen(link, timeout=10) as page:
            assert page.status == 200
        served = subprocess.run(
            [sys.executable, "-m", "c4lab", "serve", "--port", str(free_port()), "--db", db],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert served.returncode == 2 and "is in use by another c4lab server" in served.stderr
    finally:
        stop_process(proc)


def test_the_tui_opens_a_finished_game_to_step_back_through_it_where_play_refuses_it() -> None:
    _, text = analysis_tui("7x6:abababa", "u", "e")
    assert "The game is over" in text and f"Scores for A (white), to move: {written(exact('7x6:ababab'))}" in text
    refused = CliRunner().invoke(main, ["play", "--tui", "--board", "7x6:abababa"])
    assert refused.exit_code == 2 and "the game is over in 7x6:abababa" in refused.output


def test_a_lone_e_on_the_analysis_board_asks_before_it_leaves_as_in_a_game() -> None:
    status, text = analysis_tui("7x6:dd", "e", "n", "c", "e", "y")
    assert status == 0
    assert "7x6:ddc" in text  # "n" went on: the move c was played, then "y" left
    status, text = analysis_tui("4x4", "e")  # no column e there: e leaves at once
    assert status == 0


def test_at_the_end_of_a_line_e_leaves_and_the_board_says_who_won() -> None:
    """Issue 27 review: at the end of a game on the analysis board, ``e``
    only asked again; the board never said who won; a move's note named
    "player 1 (human)" although one person plays both sides."""
    status, text = analysis_tui("7x6:dcdcdc", "d", "x", "e")
    assert status == 0
    assert "A (white) wins: four in a row (d1 d2 d3 d4)." in text
    assert "A (white) plays d." in text and "human" not in text
    assert text.count("The game is over: u takes the last move back, e leaves.") == 1
    assert "'x' is not a key here: u takes the last move back, e leaves." in text  # not the line again alone
    assert text.rstrip().endswith("The position on the board: 7x6:dcdcdcd")


def test_at_the_end_of_a_line_an_answer_not_understood_is_named_as_a_bad_column_is() -> None:
    """Review: any answer but u, r or e at the line's end only repeated the
    line; it is named as the move question names a bad column ("'x' is
    not a column: ..."), and Enter alone asks again with no reproach."""
    keys = Script("d", "", "hello", "r", "u", "e", "y")
    settings = GameSettings(board="7x6:dcdcdc", players=("human", "human"), first="1", analyse=True)
    out = io.StringIO()
    TerminalGame(settings, console=Console(file=out, no_color=True, width=200), read=keys).run()
    text = out.getvalue()
    over = [prompt for prompt in keys.prompts if prompt == "u or e: "]
    assert len(over) == 4  # after d, after Enter, after hello, after r
    said = text.split("The game is over: u takes the last move back, e leaves.\n", 1)[1]
    assert said.startswith("'hello' is not a key here: u takes the last move back, e leaves.\n"
                           "Nothing to play again: this is the end of the line.")
    assert "Taken back: A (white) plays d." in text


def test_at_the_end_of_a_line_the_question_offers_only_the_keys_that_do_something() -> None:
    """A finished game is always the end of its line: r there only said
    "Nothing to play again", and the question offered it ("u, r or e")."""
    keys = Script("d", "r", "u", "e", "y")
    settings = GameSettings(board="7x6:dcdcdc", players=("human", "human"), first="1", analyse=True)
    out = io.StringIO()
    TerminalGame(settings, console=Console(file=out, no_color=True, width=200), read=keys).run()
    over = [prompt for prompt in keys.prompts if not prompt.startswith(("A (white) to move", "Leave the board?"))]
    assert over == ["u or e: ", "u or e: "]  # after d, and after r: still the end
    assert "Nothing to play again: this is the end of the line." in out.getvalue()


def test_the_line_under_the_board_says_which_move_u_took_back_and_r_played_again() -> None:
    """Review: after u or r the board came back with nothing said; on the
    plain board, under a long line of scores, which move went was hard to see."""
    _, text = analysis_tui("5x4/Bb1", "b", "", "d", "u", "u", "r", "e", "y")  # b on the bonus cell, no ban
    taken, again = text.split("Taken back: B (black) plays d.")[1].split("Taken back: A (white) plays b, on the bonus")
    assert "Played again" not in taken
    assert "Played again: A (white) plays b, on the bonus cell, and declines the ban piece." in again


def test_leaving_after_u_prints_the_whole_line_too_so_the_moves_taken_back_are_not_lost() -> None:
    """Review: leaving printed only the position on the board, and the
    moves u had taken back (which r would have played again) were gone
    with the board."""
    status, text = analysis_tui("7x6", "d", "c", "b", "u", "u", "e", "y")
    assert status == 0
    assert text.rstrip().endswith("The position on the board: 7x6:d\n"
                                  "The whole line (u took back its last 2 moves): 7x6:dcb")
    _, text = analysis_tui("7x6", "d", "c", "u", "r", "e", "y")  # r played it again: the line is the board's
    assert text.rstrip().endswith("The position on the board: 7x6:dc")


def test_what_u_did_is_said_under_the_board_drawn_next_and_not_over_the_ban_question_after_it() -> None:
    """Review: on a colour terminal, "Taken back: A (white) plays a." stayed
    under the board through the ban question of the next drop on the bonus
    cell, as if it spoke of the drop; the note on a move played stays there
    (the last move before the drop)."""
    for keys, kept in ((("a", "u", "b"), ""), (("a", "b"), "A (white) plays a.")):
        out = io.StringIO()
        console = Console(file=out, force_terminal=True, color_system="standard", width=120, height=40)
        settings = GameSettings(board="5x4/Bb1", players=("human", "human"), first="1", analyse=True)
        TerminalGame(settings, console=console, read=Script(*keys, "", "exit")).run()
        screens = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen) for screen in out.getvalue().split("\x1b[2J")]
        asked = next(screen for screen in screens if "Your piece lands on the bonus cell" in screen)
        assert "Taken back" not in asked
        assert kept in asked
        if "u" in keys:
            after_u = screens[screens.index(asked) - 1]
            assert "Taken back: A (white) plays a." in after_u


def test_a_notice_that_u_did_nothing_goes_with_the_next_move() -> None:
    _, text = analysis_tui("7x6", "u", "d", "c", "e", "y")
    after_u, after_moves = text.split("Scores for B (black), to move", 1)
    assert "Nothing to take back: this is the start." in after_u
    assert "Nothing to take back" not in after_moves


def test_s_solves_on_the_columns_left_unknown_and_u_and_r_keep_what_it_found(monkeypatch) -> None:
    """Off the classic board a position's scores come within 0.5 s (here a
    millionth of a second: every column unknown, the engine's estimate
    shown); ``s`` solves the columns left for longer, the board shows their
    exact scores, and stepping away and back keeps them."""

    first_pass_solves_nothing(monkeypatch)
    _, text = analysis_tui("5x4:c", "s", "s", "c", "u", "e", "y")
    assert "~" in text.split("Solving")[0] and "s solves on)" in text  # estimates before
    left = re.search(r"Solving ([a-e, ]+) for up to 30 s \(Ctrl-C stops\)\.\.\.\nSolved ([a-e, ]+)\.", text)
    assert left is not None and left[1] == left[2]
    assert "Every column is solved already." in text  # the second s
    after = f"Scores for B (black), to move: {written(exact('5x4:c'))}  (+ a win"
    assert text.count(after) == 3  # after s, after the second s, and back with u


def test_u_at_the_ban_question_takes_back_the_drop_on_the_bonus_cell_only() -> None:
    # b lands on the bonus cell b1: u at the ban question took back a as well (back to the empty board,
    # saying "Nothing to take back: this is the start." from 5x4/Bb1), and r played the line's c instead
    status, text = analysis_tui("5x4/Bb1:a", "b", "u", "e", "y")
    assert status == 0
    assert "The drop on the bonus cell is taken back." in text
    assert text.count("Scores for B (black), to move: a -1, b +1, c 0, d 0, e -1") == 2  # before b, and after u
    assert text.rstrip().endswith("The position on the board: 5x4/Bb1:a")
    _, text = analysis_tui("5x4/Bb1:a", "c", "u", "b", "r", "", "e", "y")
    assert "'r' is not a column that can take the ban piece" in text
    assert text.rstrip().endswith("The position on the board: 5x4/Bb1:ab")  # the drop, declined: not the line's c
    keys = Script("b", "e", "y")
    settings = GameSettings(board="5x4/Bb1:a", players=("human", "human"), first="1", analyse=True)
    TerminalGame(settings, console=Console(file=io.StringIO(), no_color=True), read=keys).run()
    assert any(prompt.startswith("Ban column:") and "u to take the drop back" in prompt for prompt in keys.prompts)


def test_at_the_ban_question_the_scores_are_the_ban_choices_and_declining_s() -> None:
    # 5x4/Bb1:a, B drops in b on the bonus cell b1: each column the ban can go to scores the move b+x for B,
    # and declining scores b's; the columns' scores before the drop (b +1, its best choice) answer no ban question
    scores = exact("5x4/Bb1:a")
    assert {t: v for t, v in scores.items() if t[0] == "b"} == {"b": 1, "b+a": 0, "b+b": -1, "b+c": -1, "b+d": 0,
                                                                "b+e": -2}
    status, text = analysis_tui("5x4/Bb1:a", "b", "", "e", "y")
    assert status == 0
    line = "Scores for B (black), where the ban piece goes: a 0, b -1, c -1, d 0, e -2; declining: +1"
    assert line + "  (+ a win, the larger the sooner; 0 a draw; - a loss)" in text
    assert text.index(line) < text.index("Your piece lands on the bonus cell b1")


def test_s_at_the_ban_question_solves_the_ban_choices_on_and_asks_again(monkeypatch) -> None:
    """The ban choices' scores not solved in time are the engine's
    estimates (``~N``), else ``?``; ``s`` there (refused as no column before) solves
    them on, as at the move question,
    the ban question's scores are shown again exact, and the drop stays:
    the question is asked again and a ban in a goes where it was asked."""

    first_pass_solves_nothing(monkeypatch)
    status, text = analysis_tui("5x4/Bb1:a", "b", "s", "s", "a", "e", "y")
    assert status == 0
    before, after = text.split("Solving ")
    # the second s: nothing left, said of the ban question's choices (not "every column")
    assert "Every choice is solved already: each ban column, and declining." in after
    unsolved = r"(~\d\d|\?)"  # the engine's estimate where it made one (test_screen_fit draws both)
    assert re.search(rf"where the ban piece goes: a {unsolved}, b {unsolved}, c {unsolved}, d {unsolved}, "
                     rf"e {unsolved}; declining: {unsolved} \(\+ a win, .*; s solves on\)", " ".join(before.split()))
    assert "not a column" not in text
    assert "Scores for B (black), where the ban piece goes: a 0, b -1, c -1, d 0, e -2; declining: +1" in after
    assert after.count("Your piece lands on the bonus cell b1") == 2  # asked again, once after each s
    assert text.rstrip().endswith("The position on the board: 5x4/Bb1:ab+a")


class _ProvenWin:
    """A hint engine that has proved a win, as ``master`` does on a small
    board: it reports its winning move alone, with its score, and nothing
    of the other moves (``solver_agent``'s analysis keeps only the best);
    asked about the position after another move (as the hint asks about
    the moves its analysis left out), it has no value either."""

    spec = "proven"

    def analyse(self, position: Position, budget: object) -> tuple[Move, Analysis]:
        if position.notation != "5x4/Bb1:a":
            return position.legal_moves()[0], Analysis()
        best = max(exact(position.notation).items(), key=lambda item: item[1])[0]
        move = next(m for m in position.legal_moves() if m.token == best)
        return move, Analysis(value=1.0, moves=(MoveStats(move, score=1),))


def test_a_ban_choice_neither_solved_nor_estimated_is_a_question_mark_explained_as_at_the_move_question(
    monkeypatch,
) -> None:
    """The report of a ``?`` among a 5x4 board's ban scores, reproduced:
    on a loaded machine the hint's first pass (0.5 s) settled none of
    5x4/Bb1:a's moves, and the engine, which had proved B's win with b,
    estimated b alone, so that every ban choice was ``?`` and declining
    ``~99``.  Each ``?`` is explained in the move question's words, the
    page's (the ban question said only "not solved in time", as if an
    estimate were missing by mistake), and ``s`` there solves them."""
    first_pass_solves_nothing(monkeypatch)
    out = io.StringIO()
    settings = GameSettings(board="5x4/Bb1:a", players=("human", "human"), first="1", analyse=True)
    game = TerminalGame(settings, console=Console(file=out, no_color=True, width=400), read=Script("b", "s", "", "e"))
    game.adviser = _ProvenWin()  # type: ignore[assignment]
    assert game.run() == 0
    before, after = out.getvalue().split("Solving ")
    key = "(+ a win, the larger the sooner; 0 a draw; - a loss; ~N: not solved in time, the engine's N %; " \
          "?: not solved in time, and no estimate; s solves on)"
    assert f"Scores for B (black), to move: a ?, b ~99, c ?, d ?, e ?  {key}" in before
    assert f"Scores for B (black), where the ban piece goes: a ?, b ?, c ?, d ?, e ?; declining: ~99  {key}" in before
    assert "Scores for B (black), where the ban piece goes: a 0, b -1, c -1, d 0, e -2; declining: +1  (+ a win, " \
           "the larger the sooner; 0 a draw; - a loss)" in after


def test_the_command_s_server_compiles_the_solver_for_the_position_s_board_first(monkeypatch) -> None:
    """The page's first hint needs the exact solver and its fallback on the
    position's board, not the default level on the classic board: the
    server warms ``perfect`` there first (``create_app``'s ``first_warm``)."""
    from c4lab.server import run

    seen: dict[str, object] = {}
    monkeypatch.setattr(run, "run_in_foreground", lambda *args, **options: seen.update(options))
    result = CliRunner().invoke(main, ["analyse", "6x5/Xc2:dd", "--no-browser"])
    assert result.exit_code == 0, result.output
    assert seen["first_warm"] == ("perfect", "6x5/Xc2:dd") and seen["page"] == "analyse"


class _Adviser:
    """A hint engine ready at once: the first move, valued 0.6."""

    spec = "adviser"

    def analyse(self, position: Position, budget: object) -> tuple[Move, Analysis]:
        moves = position.legal_moves()
        return moves[0], Analysis(value=0.6, moves=tuple(MoveStats(m, 1, 0.6) for m in moves))


def test_while_the_hint_waits_for_the_engine_s_first_compile_the_status_says_so(monkeypatch) -> None:
    """A first start on a board of more than 36 empty cells: the scores
    wait for the hint engine, whose kernels compile in a thread of its own
    (``server.review._engine_ready``).  The status line said "working out
    every column's score... 48 s" all along (9x8/Xd3, an empty cache), the
    compile being another thread's; it says the engine is being prepared."""
    from numba import njit

    from c4lab.server import review
    from c4lab.ui.preparing import MESSAGE

    def compiling_warm_up(spec: str, position: Position) -> None:
        @njit
        def fresh(x: int) -> int:  # compiled here, never cached: the engine's first start
            return x + 5

        assert fresh(1) == 6

    monkeypatch.setenv("TERM", "xterm")  # rich draws no status line on a dumb terminal
    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "warm_up_agent", compiling_warm_up)
    monkeypatch.setattr(review, "PER_POSITION", 1e-6)  # columns left open: the engine is waited for
    position = Position.parse("9x8/Xd3:d")
    review.move_scores(position, 1e-6)  # the solver's own kernels loaded before: only the engine compiles
    out = io.StringIO()
    settings = GameSettings(board="9x8/Xd3:d", players=("human", "human"), first="1", analyse=True)
    game = TerminalGame(settings, console=Console(file=out, force_terminal=True, color_system="standard"))
    game.adviser = _Adviser()  # type: ignore[assignment]
    answer = game.hint(position)
    assert answer["value"] == 0.6  # the engine's: it was waited for
    assert MESSAGE in out.getvalue()


def test_ctrl_c_during_a_hint_ends_at_once_and_tells_the_hint_to_stop(monkeypatch) -> None:
    """Review: Ctrl-C while a hint was worked out waited for it to finish
    (the solver's search holds the thread it runs in up to its 0.5 s, and
    a first hint waits for the engine's compile).  The hint is worked out
    in a thread of its own: Ctrl-C goes up at once, while the hint still
    runs, and its solver is told to stop."""
    import os
    import signal
    import threading

    from c4lab.server import review

    seen: list[Solver] = []
    returned = threading.Event()

    def slow_hint(position: Position, adviser: object, timeout: float | None = None,
                  solver: Solver | None = None) -> dict[str, object]:
        assert solver is not None
        seen.append(solver)
        os.kill(os.getpid(), signal.SIGINT)  # the person's Ctrl-C, while the hint is under way
        for _ in range(600):  # until told to stop (a minute at most)
            if solver.cancelled:
                break
            threading.Event().wait(0.1)
        returned.set()
        return {"columns": []}

    monkeypatch.setattr(review, "hint", slow_hint)
    settings = GameSettings(board="7x6", players=("human", "human"), first="1", analyse=True)
    game = TerminalGame(settings, console=Console(file=io.StringIO(), width=100))
    game.adviser = _Adviser()  # type: ignore[assignment]
    # Python's own Ctrl-C, whatever handler an earlier test in this process left installed
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            game.hint(Position.parse("7x6:d"))
    finally:
        signal.signal(signal.SIGINT, before)
    assert seen and seen[0].cancelled
    assert returned.wait(10)  # the hint, told to stop, ended on its own
    assert "7x6:d" not in game.hints


def test_a_lone_e_asks_before_leaving_the_analysis_board_in_its_own_words() -> None:
    """Review: the analysis board asked "Leave the game?" for a lone ``e``.
    It still asks where the board has a column e (e is a move there too,
    and leaving by mistake costs the command again and every score worked
    out), naming the board; anything but ``y`` goes on; leaving prints the
    position; on a board without a column e, ``e`` leaves at once."""
    keys = Script("d", "e", "u", "e", "y")
    settings = GameSettings(board="7x6", players=("human", "human"), first="1", analyse=True)
    out = io.StringIO()
    TerminalGame(settings, console=Console(file=out, no_color=True, width=200), read=keys).run()
    asked = [prompt for prompt in keys.prompts if prompt.startswith("Leave")]
    assert asked == [LEAVE_BOARD_QUESTION, LEAVE_BOARD_QUESTION]
    assert LEAVE_BOARD_QUESTION == "Leave the board? y leaves; anything else goes on (column e is typed 5): "
    text = out.getvalue()
    assert "Taken back: A (white) plays d." in text  # u at the question: the board's key, it goes on
    assert text.rstrip().endswith("The position on the board: 7x6\n"
                                  "The whole line (u took back its last 1 move): 7x6:d")
    status, text = analysis_tui("4x4", "b", "e")
    assert status == 0 and text.rstrip().endswith("The position on the board: 4x4:b")
    # a game asks in a game's words
    game_keys = Script("e", "y")
    game = GameSettings(board="7x6", players=("human", "human"), first="1")
    TerminalGame(game, console=Console(file=io.StringIO(), no_color=True, width=200), read=game_keys).run()
    assert game_keys.prompts[1] == LEAVE_QUESTION
