"""The terminal game, driven by scripted keyboard input."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest
from rich.console import Console

from c4lab.rules import Position, SecondBonusCellError
from c4lab.ui.board_view import board_text, draws_in_colour, game_console, legend
from c4lab.ui.terminal import GameSettings, TerminalGame
from testkit import Script


def game(settings: GameSettings, *keys: str, color: bool = False) -> tuple[str, int, Script]:
    out = io.StringIO()
    # colours as a colour terminal shows them, whatever TERM the tests run under
    console = Console(file=out, force_terminal=color, no_color=not color, width=100, color_system="standard" if color else None)
    keyboard = Script(*keys)
    status = TerminalGame(settings, console=console, read=keyboard).run()
    return out.getvalue(), status, keyboard


def test_a_game_can_start_from_a_position_string() -> None:
    # Three moves are already played, so B is to move: the person (player 1)
    # plays B because player 2 was asked to play A.
    settings = GameSettings(board="7x6:aaa", players=("human", "random:seed=1"), first="2", seed=1)
    out, status, keys = game(settings, "d")
    assert status == 0
    assert "A (white) is player 2 (random:seed=1); B (black) is player 1 (you); B (black) to move at the start." in out
    assert "moves first" not in out
    assert keys.prompts[0].startswith("B (black) to move")
    abandoned = out.split("The game so far in notation: ")[1].split()[0]
    assert abandoned.startswith("7x6:aaad") and len(abandoned) == len("7x6:aaad") + 1


def test_two_people_share_a_keyboard_and_the_game_is_printed_at_the_end() -> None:
    settings = GameSettings(board="7x6", players=("human", "human"), first="1")
    out, _status, keys = game(settings, "a", "b", "a", "b", "a", "b", "1", "n")
    assert "A (white), player 1 (human), wins: four in a row (a1 a2 a3 a4)." in out
    assert "The game in notation: 7x6:abababa" in out
    assert keys.prompts[-1] == "Play again? [y/n, s: player 2 (human) moves first] "


def test_invalid_entries_are_explained_and_asked_again() -> None:
    settings = GameSettings(board="4x4:aaaa", players=("human", "human"), first="1")
    out, _, _keys = game(settings, "x", "9", "a", "b", "e")
    assert "'x' is not a column" in out
    assert "'9' is not a column" in out
    assert "Column a is full" in out
    assert "Abandoned: you left.\nThe game so far in notation: 4x4:aaaab" in out


def test_a_game_left_unfinished_ends_in_a_result_sentence_and_its_moves_start_the_next_game() -> None:
    """Review: quitting said "Game abandoned. The moves so far: ...", in
    words no other screen used; a result is one sentence on every screen
    ("Abandoned: the players left" on the page), and the moves, pasted
    back as --board, start a game where this one stopped."""
    settings = GameSettings(board="7x6", players=("human", "human"), first="1")
    out, status, _ = game(settings, "d", "c", "exit")
    assert status == 0
    assert out.endswith("\nAbandoned: you left.\nThe game so far in notation: 7x6:dc\n")
    pasted = out.rsplit("The game so far in notation: ", 1)[1].strip()
    again, _, keys = game(GameSettings(board=pasted, players=("human", "human"), first="1"), "exit")
    assert "Game 1 on 7x6:dc:" in again and keys.prompts[0].startswith("A (white) to move")


def test_play_again_starts_a_new_game_and_ends_on_no() -> None:
    settings = GameSettings(board="7x6", players=("human", "human"), first="1")
    winning = ["a", "b", "a", "b", "a", "b", "a"]
    out, status, _ = game(settings, *winning, "maybe", "y", *winning, "n")
    assert out.count("wins: four in a row (a1 a2 a3 a4)") == 2
    assert "Please answer y, n or s." in out
    assert "Game 2 on 7x6" in out and status == 0


def test_play_again_s_lets_the_other_player_move_first_from_then_on() -> None:
    """Review: "Play again?" neither said who would move first nor let the
    person change it: with ``--first 1`` they always moved first."""
    settings = GameSettings(board="4x4", players=("human", "random:seed=3"), first="1", seed=2)
    out, status, keys = game(settings, "a", "b", "c", "d", "a", "b", "c", "d", "a", "b", "c", "d", "a", "b", "c",
                             "s", "e")
    assert status == 0
    assert "Game 1 on 4x4: A (white) is player 1 (you) and moves first" in out
    assert "Play again? [y/n, s: player 2 (random:seed=3) moves first] " in keys.prompts
    assert "Game 2 on 4x4: A (white) is player 2 (random:seed=3) and moves first" in out


def test_play_again_from_a_position_names_the_side_the_other_player_would_take() -> None:
    settings = GameSettings(board="4x4:ababab", players=("human", "human"), first="2")
    out, _, keys = game(settings, "a", "s", "e")
    assert keys.prompts[1] == "Play again? [y/n, s: player 1 (human) plays A (white)] "
    assert "Game 2 on 4x4:ababab: A (white) is player 1 (human); B (black) is player 2 (human)" in out


def test_two_agents_play_each_other_to_the_end() -> None:
    settings = GameSettings(board="random", bonus=True, players=("random:seed=1", "random:seed=2"), seed=4)
    out, status, _keys = game(settings, "n")
    assert "The game in notation:" in out and status == 0
    final = out.split("The game in notation: ")[1].split()[0]
    assert Position.parse(final).is_over


def test_the_first_player_is_drawn_at_random_unless_asked() -> None:
    firsts = set()
    for seed in range(12):
        out, _, _ = game(GameSettings(players=("random:seed=1", "random:seed=2"), seed=seed), "n")
        firsts.add(out.split("A (white) is ")[1].split(" ")[1])
    assert firsts == {"1", "2"}


def test_a_bonus_landing_asks_the_person_for_a_ban() -> None:
    settings = GameSettings(board="5x5/Bb1", players=("human", "human"), first="1")
    out, _, keys = game(settings, "b", "c", "e")
    assert any(p.startswith("Ban column") for p in keys.prompts)
    assert "The game so far in notation: 5x5/Bb1:b+c" in out


def test_on_a_12_column_board_the_ban_question_names_its_columns_as_ranges_and_fits_80_columns() -> None:
    """Review: the ban question named all twelve columns, 107 characters
    that an 80-column terminal broke in the middle of "take the drop back";
    a wrong answer's reproach too."""
    settings = GameSettings(board="12x12/Xf4/Bc2:c", players=("human", "human"), first="1")
    out, _, keys = game(settings, "c", "z", "", "e")
    ban = next(p for p in keys.prompts if p.startswith("Ban column"))
    assert ban == "Ban column: a-l (column e: 5), Enter to decline, or u to take the drop back: "
    assert len(ban) < 80
    assert "'z' is not a column that can take the ban piece: choose one of a-l, or Enter." in out


@pytest.mark.parametrize(("columns", "listed"), [
    ([0, 1, 2, 3, 4], "a-e"), ([0, 1], "a, b"), ([0, 1, 3, 4, 5, 6, 11], "a, b, d-g, l"), ([4], "e"),
])
def test_a_prompt_lists_three_columns_or_more_in_a_row_as_a_range(columns: list[int], listed: str) -> None:
    from c4lab.agents.human import column_ranges  # lazy: this test's only

    assert column_ranges(columns) == listed


def test_the_header_says_when_an_agent_plays_a_stand_ins_moves_on_this_board() -> None:
    # The shipped network is for 7x6 only: elsewhere ntuple plays heuristic's
    # moves, which the page's seat and the arena say; the terminal said nothing.
    out, _, _ = game(GameSettings(board="8x7/Bd1", players=("human", "ntuple"), first="1"), "exit")
    assert "B (black) is player 2 (ntuple, heuristic's moves on this board)." in out
    out, _, _ = game(GameSettings(board="7x6", players=("human", "ntuple"), first="1"), "exit")
    assert "B (black) is player 2 (ntuple)." in out


def test_the_board_without_colours_has_a_key_to_its_special_cells() -> None:
    out, _, _ = game(GameSettings(board="7x6/Xg1/Ba1", players=("human", "human"), first="1"), "a+b", "e")
    assert "X forbidden cell; * bonus cell (empty)" in out
    out, _, _ = game(GameSettings(board="7x6", players=("human", "human"), first="1"), "e")
    assert "forbidden" not in out and "bonus cell" not in out


def test_the_colour_boards_key_names_only_what_this_board_can_show() -> None:
    def key(notation: str) -> list[str]:
        return legend(Position.parse(notation)).plain.split()[1::2]  # the words after the symbols

    assert key("7x6") == ["A", "B"]  # no bonus cell: no ban piece can ever appear
    assert key("7x6/Xg1") == ["A", "B", "forbidden"]
    assert key("6x5/Xc2/Bd3") == ["A", "B", "forbidden", "bonus", "ban"]
    assert key("6x5/Xc2/Bd3:dddd") == ["A", "B", "forbidden", "ban"]  # the bonus cell is taken


def test_the_colour_board_marks_the_forbidden_bonus_ban_and_winning_cells() -> None:
    position = Position.parse("7x6/Xg1/Bf1:aabbccd")
    text = board_text(position)
    plain = text.plain.splitlines()
    assert plain[-1].split() == list("abcdefg")
    assert plain[-2].split()[-2:] == ["◆", "X"]
    spans = {text.plain[s.start : s.end].strip(): str(s.style) for s in text.spans}
    assert "red" in spans["X"] and "yellow" in spans["◆"]
    win_styles = [str(s.style) for s in text.spans if "green" in str(s.style)]
    assert len(win_styles) == 4
    out, _, _ = game(GameSettings(board="7x6/Xg1/Ba1", players=("human", "human"), first="1"), "a+b", "e", color=True)
    assert "\x1b[" in out  # colours when asked for


def test_the_command_runs_the_game_from_a_pipe() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "c4lab", "play", "--tui", "-1", "human", "-2", "human", "--first", "1"],
        input="a\nb\na\nb\na\nb\na\nn\n", check=False, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "The game in notation: 7x6:abababa" in out.stdout


def test_a_bad_board_or_agent_is_a_usage_error() -> None:
    for args in (["--board", "7x6:4453"], ["-2", "nobody"]):
        out = subprocess.run(
            [sys.executable, "-m", "c4lab", "play", "--tui", *args], check=False, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 2 and "Error" in out.stderr


def test_a_bonus_cell_asked_for_on_a_board_with_its_own_is_refused_before_the_game_starts() -> None:
    """The terminal game played the board's own bonus cell and dropped the
    one asked for without a word (``c4lab play --tui`` refused it itself)."""
    settings = GameSettings(board="6x5/Xc2/Bb2", bonus=True, players=("human", "human"), first="1")
    keyboard = Script("a")
    with pytest.raises(SecondBonusCellError, match=r"^the board 6x5/Xc2/Bb2 has its bonus cell \(b2\) already"):
        TerminalGame(settings, console=Console(file=io.StringIO()), read=keyboard)
    assert keyboard.prompts == []  # no move was asked for


def test_on_a_terminal_an_agent_s_turn_says_that_it_is_thinking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM", "xterm")  # rich draws no status line on a dumb terminal
    settings = GameSettings(board="5x4", players=("human", "minimax:depth=3"), first="1", seed=3, delay=0)
    out, status, _ = game(settings, *("abcdeabcdeabcdeabcde" * 2), "n", color=True)
    assert status == 0
    assert "is thinking" in out or "preparing the engine" in out


def test_the_piece_on_the_bonus_cell_is_drawn_before_the_ban_question() -> None:
    from c4lab.agents import make_agent

    shown: list[Position] = []
    asked: list[str] = []
    keys = iter(["b", "c"])

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return next(keys)

    human = make_agent("human", ask=ask, say=lambda _: None, show=shown.append)
    position = Position.parse("7x6/Bb1")
    move = human.choose(position)
    assert move.token == "b+c"
    assert len(shown) == 1 and shown[0].piece_at("b1") == "A" and shown[0].piece_at("c1") is None
    assert asked[1].startswith("Ban column")


class _Terminal(io.StringIO):
    """An output that says it is a terminal."""

    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("environment", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "TERM=dumb"])
def test_a_terminal_without_colours_gets_the_plain_board_with_the_players_letters(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str]
) -> None:
    # Without colours the coloured board's pieces are the same for both players (a plain '●').
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    out = _Terminal()
    console = game_console(None, file=out)
    assert not draws_in_colour(console)
    settings = GameSettings(board="5x4", players=("human", "human"), first="1")
    TerminalGame(settings, console=console, read=Script("a", "b", "e")).run()
    assert " 1 A B . . ." in out.getvalue()
    assert "●" not in out.getvalue()


def test_a_terminal_without_colours_shows_the_piece_on_the_bonus_cell_before_the_ban_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: with NO_COLOR (or --no-color) the ban question came under the
    board from before the drop, the piece on the bonus cell drawn nowhere;
    the coloured board and ``c4lab connect`` draw it."""
    monkeypatch.setenv("NO_COLOR", "1")
    out = _Terminal()
    settings = GameSettings(board="5x4/Bb1", players=("human", "human"), first="1")
    TerminalGame(settings, console=game_console(None, file=out), read=Script("b", "e", "y")).run()
    before_the_question = out.getvalue().split("Your piece lands on the bonus cell b1")[0]
    assert before_the_question.rstrip().endswith(Position.parse("5x4/Bb1:b").render())


def test_a_colour_terminal_gets_the_coloured_board_and_colour_can_be_forced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    assert draws_in_colour(game_console(None, file=_Terminal()))
    assert not draws_in_colour(game_console(False, file=_Terminal()))  # --no-color
    monkeypatch.setenv("NO_COLOR", "1")
    assert draws_in_colour(game_console(True, file=io.StringIO()))  # --color: asked for, whatever NO_COLOR says


@pytest.mark.parametrize(("width", "coloured"), [(40, False), (51, True)])
def test_a_colour_terminal_too_narrow_for_the_board_gets_the_plain_one_and_is_told_why(
    width: int, coloured: bool
) -> None:
    """Review: a 12x12 analysis board (51 columns) in a 40-column terminal
    wrapped into an unreadable board, with nothing said."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, height=40, color_system="standard")
    settings = GameSettings(board="12x12/Xa1", players=("human", "human"), first="1", analyse=True)
    TerminalGame(settings, console=console, read=Script("b", "e")).run()
    text = out.getvalue()
    assert ("●" in text) == coloured
    told = "The terminal is 40 columns wide and the coloured board needs 51: the plain board is shown"
    assert (told in text.replace("\n", " ")) == (not coloured)  # broken between words at 40 columns
    if not coloured:
        assert " 1 X A . . . . . . . . . ." in text  # the plain board, the players' letters


class _CtrlCAfter:
    """A keyboard whose person presses Ctrl-C after typing ``keys``."""

    def __init__(self, *keys: str) -> None:
        self.keys = list(keys)

    def __call__(self, prompt: str) -> str:
        if not self.keys:
            raise KeyboardInterrupt
        return self.keys.pop(0)


@pytest.mark.parametrize(
    ("settings", "keys", "said"),
    [
        (GameSettings(players=("human", "human"), first="1"), ("d", "c"),
         "Abandoned: you left.\nThe game so far in notation: 7x6:dc"),
        (GameSettings(board="4x4", players=("human", "human"), first="1"), ("a", "b", "a", "b", "a", "b", "a"),
         "The game in notation: 4x4:abababa"),  # Ctrl-C at "Play again?"
        (GameSettings(board="7x6:dd", players=("human", "human"), analyse=True), ("c",),
         "The position on the board: 7x6:ddc"),
    ],
    ids=["in-a-game", "at-play-again", "analysis-board"],
)
def test_ctrl_c_ends_the_terminal_game_with_status_130_as_every_interrupted_command(
    settings: GameSettings, keys: tuple[str, ...], said: str
) -> None:
    out = io.StringIO()
    console = Console(file=out, no_color=True, width=100, color_system=None)
    status = TerminalGame(settings, console=console, read=_CtrlCAfter(*keys)).run()
    assert status == 130
    assert said in out.getvalue()  # what was played is still printed


def test_e_still_leaves_the_terminal_game_with_status_0() -> None:
    _out, status, _keys = game(GameSettings(players=("human", "human"), first="1"), "d", "e")
    assert status == 0


def test_on_a_terminal_long_lines_break_between_words_and_a_position_string_stays_whole() -> None:
    """Review: at 80 columns the header broke in the middle of a word
    ("... B (black) is pla" / "yer 2 (human).")."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, color_system="standard")
    moves = "abcdefghijkl" * 3 + "lkjihgfedcba"  # 48 moves, no four in a row
    settings = GameSettings(board="12x12", players=("human", "human"), first="1")
    keys = [str(ord(letter) - ord("a") + 1) for letter in moves]  # column e typed as 5
    TerminalGame(settings, console=console, read=Script(*keys, "exit")).run()
    lines = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", out.getvalue()).splitlines()
    header = "Game 1 on 12x12: A (white) is player 1 (human) and moves first; B (black) is player 2 (human)."
    first = lines.index(next(line for line in lines if line.startswith("Game 1 on")))
    assert lines[first : first + 2] == ["Game 1 on 12x12: A (white) is player 1 (human) and moves first; B (black) is",
                                        "player 2 (human)."]
    assert " ".join(lines[first : first + 2]) == header
    assert f"12x12:{moves}" in lines  # too long for the line: on a line of its own, whole, to be copied


@pytest.mark.parametrize("key", [EOFError, KeyboardInterrupt], ids=["Ctrl-D", "Ctrl-C"])
def test_leaving_at_play_again_ends_the_prompt_s_line(key: type[BaseException]) -> None:
    """Review: Ctrl-D or Ctrl-C at "Play again? [y/n] " left the shell's
    prompt on the same line."""
    out = io.StringIO()
    console = Console(file=out, no_color=True, width=100, color_system=None)
    keys = ["a", "b", "a", "b", "a", "b", "a"]

    def keyboard(prompt: str) -> str:  # as a terminal shows it: the prompt, then what is typed
        console.print(prompt, end="", markup=False)
        if not keys:
            raise key
        entry = keys.pop(0)
        console.print(entry, markup=False)
        return entry

    TerminalGame(GameSettings(board="4x4", players=("human", "human"), first="1"), console=console, read=keyboard).run()
    assert out.getvalue().endswith("Play again? [y/n, s: player 2 (human) moves first] \n")


@pytest.mark.parametrize(
    ("keys", "said"),
    [
        (("b", "c"), "A (white), player 1 (human), plays b, on the bonus cell, and drops the ban piece in c."),
        (("b", ""), "A (white), player 1 (human), plays b, on the bonus cell, and declines the ban piece."),
        (("c",), "A (white), player 1 (human), plays c."),
    ],
    ids=["ban", "declined", "elsewhere"],
)
def test_the_line_under_the_board_says_what_a_bonus_landing_did_with_the_ban(keys: tuple[str, ...], said: str) -> None:
    """Review: the line said 'plays b+c' (notation) and, for a declined
    ban, only 'plays b': nothing told the other player that the piece had
    taken the bonus and what became of the ban."""
    out, _, _ = game(GameSettings(board="5x5/Bb1", players=("human", "human"), first="1"), *keys, "exit")
    assert said in out


@pytest.mark.parametrize(("board", "said", "end"), [
    ("4x4/Bd1:aabbcc", "A (white), player 1 (human), plays d, on the bonus cell.", "four in a row (a1 b1 c1 d1)"),
    ("4x4/Bc4:ababbabacdcddcd", "B (black), player 2 (human), plays c, on the bonus cell.", "Draw: the board is full."),
], ids=["won", "filled"])
def test_a_bonus_landing_that_ends_the_game_declined_nothing(board: str, said: str, end: str) -> None:
    """Review: "plays d, on the bonus cell, and declines the ban piece"
    where the landing won (or filled the board): RULES.md offers no ban
    there, so nobody declined one."""
    out, _, _ = game(GameSettings(board=board, players=("human", "human"), first="1"), board.split("/B")[1][:1], "n")
    assert said in out and end in out and "declines" not in out


def test_a_position_and_a_colon_print_as_written_not_as_an_emoji(capsys: pytest.CaptureFixture[str]) -> None:
    """rich reads ``:b:`` as an emoji code: "4x4:b: ..." printed as
    "4x4🅱 ..." (the game's console and the commands' stderr alike)."""
    from c4lab.ui.status import stderr_console  # lazy: as the commands import it

    buffer = io.StringIO()
    game_console(False, buffer).print("4x4:b: your move, :a: too", markup=False)
    assert buffer.getvalue() == "4x4:b: your move, :a: too\n"
    stderr_console().print("4x4:b: solved", markup=False)
    assert capsys.readouterr().err == "4x4:b: solved\n"


def _at_a_terminal(args: list[str], typed: list[bytes], timeout: float = 120.0, columns: int = 100) -> str:
    """What ``c4lab`` shows at a terminal (a pseudo-terminal) ``columns``
    wide while a person types each of ``typed`` once the prompt before it
    has come; to its end."""
    import os  # lazy: the pseudo-terminal test's only
    import pty  # lazy: as above (POSIX only)
    import select  # lazy: as above
    import time  # lazy: as above

    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": str(columns), "LINES": "40"}
    process = subprocess.Popen([sys.executable, "-m", "c4lab", *args], stdin=follower, stdout=follower, stderr=follower,
                               env=env, close_fds=True)
    os.close(follower)
    seen = b""
    keys = list(typed)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.2)
            if ready:
                try:
                    chunk = os.read(leader, 4096)
                except OSError:  # the game ended: its terminal is closed
                    break
                if not chunk:
                    break
                seen += chunk
            if keys and seen.rstrip().endswith(b"exit:"):  # a move's prompt, waiting
                os.write(leader, keys.pop(0))
                seen += b"\n"  # so that the same prompt is not answered twice
        process.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen.decode(errors="replace"))


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
def test_at_a_terminal_an_arrow_key_edits_the_entry_and_is_no_part_of_it() -> None:
    """Review: at a terminal the prompt read a raw line: Left typed ``^[[D``
    into the entry ('d\\x1b[D' is not a column) and Up (the last move
    again, as in a shell) did the same; the entry is now edited as a
    shell's line is."""
    left, up = b"\x1b[D", b"\x1b[A"
    shown = _at_a_terminal(["play", "--tui", "--board", "4x4", "-1", "human", "-2", "human", "--first", "1",
                            "--no-color"], [b"d" + left + b"\r", up + b"\r", b"exit\r"])
    assert "is not a column" not in shown, shown
    assert "Abandoned: you left.\r\nThe game so far in notation: 4x4:dd" in shown, shown


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
def test_with_no_color_a_terminal_s_lines_still_break_between_words() -> None:
    """Review: ``--no-color`` took the terminal for a pipe, and a line
    longer than it broke in the middle of a word ("... (human) and m" /
    "oves first"), where ``NO_COLOR`` broke it between words."""
    shown = _at_a_terminal(["play", "--tui", "--board", "12x12/Xf4/Bc2", "-1", "human", "-2", "human",
                            "--first", "1", "--no-color"], [b"exit\r"], columns=60)
    assert "Game 1 on 12x12/Xf4/Bc2: A (white) is player 1 (human) and\r\nmoves first;" in shown, shown


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
def test_a_prompt_wider_than_the_terminal_breaks_between_words() -> None:
    """Review: the move prompt of a 12-column board (73 characters) went
    to the terminal whole, and a 60-column one broke it where its edge
    fell ("u to take back," / " e to exit:"; on the analysis board "u back,
    r forwa" / "rd"); it is broken between words as every other line is."""
    shown = _at_a_terminal(["play", "--tui", "--board", "12x12/Xf4/Bc2", "-1", "human", "-2", "human",
                            "--first", "1", "--no-color"], [b"a\r", b"exit\r"], columns=60)
    assert "B (black) to move: column a-l or 1-12 (column e: 5), u to\r\ntake back, r to resign, ? for a hint, e to exit:" in shown, shown
    assert max(len(line) for line in shown.splitlines()) <= 60, shown


def test_u_takes_back_the_person_s_last_move_and_the_agent_s_reply() -> None:
    """A game's ``u`` (the page's undo): the person's last move and the
    agent's reply to it go, and the person plays again from there; never
    before the position the game started from."""
    settings = GameSettings(board="7x6:gg", players=("human", "random:seed=3"), first="1", seed=1)
    out, status, keys = game(settings, "u", "a", "u", "b", "e")
    assert status == 0
    assert "Nothing to take back: no move of a person since the game began." in out
    assert "2 moves taken back: A (white) plays a; B (black) plays " in out
    # u is offered once the person has a move to take back; before, it only says there is none
    first = "A (white) to move: column a-g or 1-7 (column e: 5), r to resign, ? for a hint, e to exit: "
    assert keys.prompts[:2] == [first] * 2
    assert keys.prompts[2] == ("A (white) to move: column a-g or 1-7 (column e: 5), u to take back, r to resign, "
                               "? for a hint, e to exit: ")
    abandoned = out.split("The game so far in notation: ")[1].split()[0]
    assert abandoned.startswith("7x6:ggb") and len(abandoned) == len("7x6:ggb") + 1  # a's line is gone


def test_u_is_offered_once_the_person_has_a_move_to_take_back() -> None:
    """Review: with the agent moving first, the first move question offered
    "u to take back" where u could only answer that there was nothing."""
    settings = GameSettings(board="7x6", players=("human", "random:seed=3"), first="2", seed=1)
    _out, status, keys = game(settings, "d", "e")
    assert status == 0
    assert keys.prompts[0] == ("B (black) to move: column a-g or 1-7 (column e: 5), r to resign, ? for a hint, "
                               "e to exit: ")
    assert keys.prompts[1] == ("B (black) to move: column a-g or 1-7 (column e: 5), u to take back, r to resign, "
                               "? for a hint, e to exit: ")


def test_r_resigns_once_confirmed_and_the_game_ends_as_a_finished_one() -> None:
    """Review: the terminal game had no resign (``r`` was "not a column"),
    where the page and ``c4lab connect`` have one.  ``r`` asks first (the
    same question as ``connect``'s); anything but y goes on; a confirmed
    ``r`` ends the game, the other side winning, and "Play again?" follows."""
    settings = GameSettings(board="7x6", players=("human", "random:seed=3"), first="1", seed=1)
    out, status, keys = game(settings, "d", "r", "", "r", "y", "n")
    assert status == 0
    assert keys.prompts[2] == "Really resign (you lose the game)? y to resign, Enter to go on: "
    assert "You did not resign: the game goes on." in out
    assert out.endswith("B (black), player 2 (random:seed=3), wins: A (white) resigned.\n"
                        "The game in notation: 7x6:dg\n")
    assert keys.prompts[-1].startswith("Play again?")


def test_question_mark_gives_every_column_s_score_under_the_board_and_the_person_moves() -> None:
    """Review: the terminal game had no hint, where the page has one.  A
    ``?`` (never a column: ``h`` is one from 8 columns on) says the page's
    hint under the board drawn again: the move, then every column's score
    for the person to move, exact on the classic board (the 12-ply
    database: ``c4lab solve --analyse 7x6:dg`` gives these); the note on
    the agent's last move stays, and the person then moves as before."""
    settings = GameSettings(board="7x6", players=("human", "random:seed=3"), first="1", seed=1)
    out, status, keys = game(settings, "d", "?", "hint", "e")
    assert status == 0
    said = ("Hint: drop in column d. Scores for A (white), to move: a +2, b +3, c +3, d +4, e +2, f -2, g 0  "
            "(+ a win, the larger the sooner; 0 a draw; - a loss)")
    assert out.count(said) == 2, out
    before = out.split(said)[1]  # the board drawn again, the hint under it, just above the question
    assert before.startswith("\nB (black), player 2 (random:seed=3), plays g.\n 6 . . . . . . .")
    assert before.endswith("1 . . . A . . B\n   a b c d e f g\n")
    assert len(keys.prompts) == 5 and keys.prompts[1:4] == [keys.prompts[1]] * 3
    assert "The game so far in notation: 7x6:dg\n" in out


def test_on_a_short_colour_terminal_the_hint_is_never_left_out() -> None:
    """Review: on 12x12 at 80x16 the hint, a note under the board, was the
    first thing the screen left out to keep the board whole: the person
    asked and was shown nothing.  It is said under the board, above the
    question, with room kept for it."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, height=16, color_system="standard")
    settings = GameSettings(board="12x12/Xf4", players=("human", "human"), first="1")
    TerminalGame(settings, console=console, read=Script("a", "?", "e", "exit")).run()
    screens = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen) for screen in out.getvalue().split("\x1b[2J")]
    hinted = [screen for screen in screens if "Hint: drop in column" in screen]
    assert hinted, screens[-1]
    assert re.search(r"^12 ", hinted[0], re.MULTILINE) and "Scores for B (black), to move: " in hinted[0]  # the top row too


def test_a_hint_with_the_bonus_cell_names_the_ban_and_without_an_exact_score_marks_the_estimates() -> None:
    """``?`` on a board the solver does not settle in the hint's time: the
    engine's estimates, marked ``~``, and their key, but no ``s`` (the
    analysis board's key to solve on: a game has none); the hint's move
    on the bonus cell says what to do with the ban."""
    from c4lab.ui.board_view import hint_words

    position = Position.parse("6x5/Xc2/Bb1:df")
    columns = [{"column": c, "exact": False, "score": None, "estimate": 0.5} for c in "abcdef"]
    words = hint_words(position, {"move": "b+d", "columns": columns})
    assert words == ("Hint: drop in column b and put the ban piece in column d. Scores for A (white), to move: "
                     "a ~50, b ~50, c ~50, d ~50, e ~50, f ~50  (+ a win, the larger the sooner; 0 a draw; - a loss; "
                     "~N: not solved in time, the engine's N %)")
    assert hint_words(position, {"move": "b", "columns": columns}).startswith(
        "Hint: drop in column b and decline the ban. ")


def test_question_mark_at_the_ban_question_gives_the_ban_choices_scores_and_asks_again() -> None:
    """As the move question's ``?``: at the ban question the scores of
    putting the ban piece in each column, and of declining, for the side
    that dropped the piece (the analysis board's, without its ``s``), and
    the question again; the drop stays where it is."""
    settings = GameSettings(board="5x5/Bb1", players=("human", "human"), first="1")
    out, _, keys = game(settings, "b", "?", "c", "e")
    said = next(line for line in out.splitlines() if line.startswith("Scores for A (white), where the ban piece goes: "))
    assert "declining: " in said and "s solves on" not in said
    assert [p.startswith("Ban column") for p in keys.prompts[1:3]] == [True, True]
    assert "The game so far in notation: 5x5/Bb1:b+c\n" in out


def test_on_a_short_colour_terminal_the_ban_question_s_hint_keeps_the_board_whole_and_the_offer_names_it() -> None:
    """Review: the ban question's hint (three lines on 9 columns) was said
    under the question, so that on 80x16 its lines scrolled the board's top
    off, and nothing told a person that ``?`` works there.  It is said
    under the board drawn again, above the question, with room kept (the
    screen leaves out its header and the offer for it); the offer before
    the question names the key."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=80, height=16, color_system="standard")
    settings = GameSettings(board="9x8/Xd3/Bb1", players=("human", "human"), first="1")
    script = Script("b", "?", "c", "e", "exit")
    TerminalGame(settings, console=console, read=script).run()
    screens = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen) for screen in out.getvalue().split("\x1b[2J")]
    hinted = [screen for screen in screens if "where the ban piece goes: " in screen]
    assert hinted, screens[-1]
    assert re.search(r"^ 8 ", hinted[0], re.MULTILINE)  # the board's top row
    assert len(hinted[0].rstrip("\n").split("\n")) + 2 <= 16  # and the question again, and its status row
    assert script.prompts[2].startswith("Ban column")
    plain = io.StringIO()
    TerminalGame(GameSettings(board="5x5/Bb1", players=("human", "human"), first="1"),
                 console=Console(file=plain, force_terminal=True, width=100, height=40, color_system="standard"),
                 read=Script("b", "c", "e", "exit")).run()
    said = " ".join(re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", plain.getvalue()).split())  # broken at the screen's edge
    assert "you may drop a ban piece (it blocks both players; ? for a hint)." in said


def test_between_two_people_r_resigns_for_the_side_to_move() -> None:
    settings = GameSettings(board="5x5/Bb1", players=("human", "human"), first="1")
    out, _, _ = game(settings, "c", "r", "yes", "n")
    assert "A (white), player 1 (human), wins: B (black) resigned." in out


def test_between_two_people_u_takes_back_one_move_and_at_the_ban_question_the_drop() -> None:
    settings = GameSettings(board="5x5/Bb1", players=("human", "human"), first="1")
    out, _, keys = game(settings, "a", "u", "b", "u", "c", "d", "e")
    assert "1 move taken back: A (white) plays a." in out and "The drop on the bonus cell is taken back." in out
    assert any(p.startswith("Ban column") and "u to take the drop back" in p for p in keys.prompts)
    assert "The game so far in notation: 5x5/Bb1:cd" in out


def test_what_u_took_back_is_said_under_the_next_board_only_not_over_the_ban_question() -> None:
    """As on the analysis board: on a colour terminal "1 move taken back:
    ..." stayed under the board through the ban question of the next drop
    on the bonus cell."""
    settings = GameSettings(board="5x5/Bb1", players=("human", "human"), first="1")
    out, _, _ = game(settings, "a", "u", "b", "", "exit", color=True)
    screens = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen) for screen in out.split("\x1b[2J")]
    asked = next(screen for screen in screens if "Your piece lands on the bonus cell" in screen)
    assert "taken back" not in asked
    assert "1 move taken back: A (white) plays a." in screens[screens.index(asked) - 1]


def test_u_says_which_moves_it_took_back_a_ban_piece_too() -> None:
    """"2 moves taken back." said neither which nor that the ban piece went
    with the drop on the bonus cell (the bonus cell back on the board)."""
    settings = GameSettings(board="6x5/Xc2/Bb1", players=("human", "random:seed=3"), first="1")
    out, _, _ = game(settings, "b", "d", "u", "exit")
    said = re.search(r"2 moves taken back: A \(white\) plays b, on the bonus cell, and drops the ban piece in d; "
                     r"B \(black\) plays [a-f]\.", out)
    assert said is not None, out
    assert "The game so far in notation: 6x5/Xc2/Bb1\n" in out


def test_u_at_play_again_is_no_move_to_take_back_but_an_answer_asked_again() -> None:
    settings = GameSettings(board="4x4:ababab", players=("human", "human"), first="1")
    out, _, keys = game(settings, "a", "u", "n")
    assert keys.prompts[-2:] == ["Play again? [y/n, s: player 2 (human) plays A (white)] "] * 2
    assert "Please answer y, n or s." in out


def test_what_was_typed_while_the_agent_thought_is_said_not_taken_under_the_next_board(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: a line typed while the agent thought was dropped (so that it
    is not read as the next move) without a word after the next screen: the
    redraw wiped both the typing and the status line's "keys typed
    meanwhile do not count".  The line under the board says what was not
    taken, with the move it follows."""
    from c4lab.ui import turn_screen

    typed = iter(["c\n\x1b[Axy", ""])  # after the agent's first move: a line, an arrow key, a line begun
    monkeypatch.setattr(turn_screen, "discard_typed_keys", lambda: next(typed))
    settings = GameSettings(board="7x6", players=("human", "random:seed=1"), first="1")
    out, _status, _keys = game(settings, "d", "d", "e", "y")
    note = "Not taken: 'c', 'xy', typed while player 2 (random:seed=1) thought; type it again at the question if you meant it."
    first, second = out.split("B (black), player 2 (random:seed=1), plays ")[1:3]
    assert note in first.replace("\n", " ").replace("  ", " ")
    assert "Not taken" not in second  # nothing typed the second time: nothing said


def test_what_was_not_taken_is_said_under_the_next_board_only_not_over_the_ban_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As what u, r or s did: on a colour terminal "Not taken: ..." stayed
    under the board through the ban question of the person's drop on the
    bonus cell, as if it spoke of that drop.  The agent's move, the last
    one played, stays there."""
    from c4lab.ui import turn_screen

    typed = iter(["c\n", "", ""])  # a line typed while the agent played c, nothing after
    monkeypatch.setattr(turn_screen, "discard_typed_keys", lambda: next(typed))
    settings = GameSettings(board="5x5/Bb2:b", players=("human", "random:seed=2"), first="1")
    out, _, _ = game(settings, "b", "a", "exit", color=True)  # the agent plays c; b lands on the bonus cell
    screens = [re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", screen).replace("\n", " ") for screen in out.split("\x1b[2J")]
    asked = next(screen for screen in screens if "Your piece lands on the bonus cell" in screen)
    assert "Not taken" not in asked and "B (black), player 2 (random:seed=2), plays c." in asked
    before = screens[screens.index(asked) - 1]
    assert "B (black), player 2 (random:seed=2), plays c. Not taken: 'c', typed while" in before
    assert "The game so far in notation: 5x5/Bb2:bcb+a" in out


def test_between_two_agents_typed_keys_are_dropped_without_a_word(monkeypatch: pytest.MonkeyPatch) -> None:
    from c4lab.ui import turn_screen

    monkeypatch.setattr(turn_screen, "discard_typed_keys", lambda: "x\n")
    out, status, _keys = game(GameSettings(board="4x4", players=("random:seed=1", "random:seed=2"), first="1"), "n")
    assert status == 0 and "Not taken" not in out


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal")
def test_keys_typed_at_a_terminal_are_read_and_dropped_a_line_begun_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """``discard_typed_keys`` on a real terminal (a pseudo-terminal): it
    returns what was typed, whole lines and the one begun, and leaves
    nothing for the next question to read; the terminal's line mode is
    back as it was."""
    import os
    import pty
    import select
    import termios

    from c4lab.ui import typed_keys

    master, slave = pty.openpty()
    with os.fdopen(slave, "r") as keyboard:
        monkeypatch.setattr(sys, "stdin", keyboard)
        before = termios.tcgetattr(slave)
        os.write(master, b"c\nxy")
        assert select.select([slave], [], [], 10)[0]  # the line typed has reached the terminal
        assert typed_keys.discard_typed_keys() == "c\nxy"
        assert termios.tcgetattr(slave) == before
        os.write(master, b"d\n")
        assert select.select([slave], [], [], 10)[0]
        assert os.read(slave, 100) == b"d\n"  # the "xy" begun is gone with the rest
    os.close(master)


def test_on_a_terminal_without_colours_too_an_agent_s_first_move_says_that_it_is_thinking(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: with NO_COLOR (or --no-color) nothing was shown between the
    board and the agent's first move, up to seven seconds on a first start
    while the engine was prepared, and keys typed meanwhile were "not
    taken, typed while player 1 (hard) thought" with no word that it was."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("TERM", "xterm")  # rich draws no status line on a dumb terminal
    out = _Terminal()
    settings = GameSettings(board="5x4", players=("minimax:depth=3", "human"), first="1", seed=3)
    TerminalGame(settings, console=game_console(None, file=out), read=Script("e", "y")).run()
    before_its_move = out.getvalue().split("A (white), player 1 (minimax:depth=3), plays")[0]
    assert "is thinking" in before_its_move or "preparing the engine" in before_its_move
    assert " 1 . . . . ." in before_its_move  # under the empty board, drawn first


def test_a_move_the_agent_found_another_way_says_how(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: ``perfect`` whose solver ran out of time played ``master``'s
    move (a draw where the exact move wins), and the terminal game said
    only "plays e"; ``c4lab move`` says it fell back.  The line under the
    board says so too; an agent's own move is said as before."""
    from c4lab.agents import solver_agent

    def out_of_time(position: Position, **options: object) -> None:
        return None  # the solver found nothing in its share of the time

    monkeypatch.setattr(solver_agent, "solved_move", out_of_time)
    settings = GameSettings(board="5x4", players=("perfect:time=0.05", "human"), first="1", seed=1)
    out, _, _ = game(settings, "exit")
    assert re.search(r"A \(white\), player 1 \(perfect:time=0\.05\), plays [a-e] \(not solved in 0\.0\d s: "
                     r"master's move\)\.", out), out
    mine = GameSettings(board="5x4", players=("random:seed=1", "human"), first="1")
    out, _, _ = game(mine, "exit")
    assert re.search(r"A \(white\), player 1 \(random:seed=1\), plays [a-e]\.", out), out


@pytest.mark.parametrize(("answer", "said"), [
    ("raise", r"player B \(oops\) raised RuntimeError: oops in my agent at .*test_terminal\.py:\d+\."),
    ("number", r"illegal move '3' in '7x6:a': player B \(oops\) answered 3, which is not a move\."),
])
def test_a_computer_player_that_fails_loses_the_game_and_the_session_goes_on(
    monkeypatch: pytest.MonkeyPatch, answer: str, said: str
) -> None:
    """Review: an agent of one's own that raised (or an engine's program
    that broke the protocol) ended ``play --tui`` with a 40-line traceback;
    it loses the game, as on the page and in the arena, and the person is
    asked to play again."""
    from c4lab.agents import Agent, Analysis, agent_infos, base, register

    agent_infos()  # c4lab's own agents first; the registry is put back as it was after the test
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register("oops", "fails at its first move")
    class Oops(Agent):
        def analyse(self, position: Position, budget: object = None) -> tuple[object, Analysis]:
            if answer == "raise":
                raise RuntimeError("oops in my agent")
            return 3, Analysis()

    settings = GameSettings(board="7x6", players=("human", "oops"), first="1")
    out, status, keys = game(settings, "a", "n")
    assert status == 0
    text = " ".join(out.split())
    assert "A (white), player 1 (you), wins: B (black) failed (its player raised an error or gave no legal move)." in text
    assert re.search(said, text), text
    assert "Traceback" not in out and "The game in notation: 7x6:a" in text
    assert keys.prompts[-1].startswith("Play again?")
