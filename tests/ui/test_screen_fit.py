"""The terminal game's screen fits the terminal's rows: on a 40x24, 60x24 or 80x24
terminal, every board from 4x4 to 12x12, in a game and on the analysis
board, at the move and the ban questions and at the end, shows the top of
the board and the prompt without scrolling (review: a 12x12 analysis board
at 60x24 took 26 rows and its header scrolled away; the ban question drew
the board a second time under the first)."""

from __future__ import annotations

import io
import re
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

from c4lab.rules import Position
from c4lab.ui import terminal
from c4lab.ui.board_view import board_columns
from c4lab.ui.screen_fit import MUST, Part, fit, text_rows
from c4lab.ui.terminal import GameSettings, TerminalGame

CLEAR = "\x1b[2J"
ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def part(rows: int, rank: int, name: str, drawn: list[str], shorter: Part | None = None) -> Part:
    return Part(rows, rank, lambda: drawn.append(name), shorter)


def test_parts_that_fit_are_all_kept_in_their_order() -> None:
    drawn: list[str] = []
    for kept in fit([part(2, 1, "header", drawn), part(13, MUST, "board", drawn), part(1, 2, "key", drawn)], 16):
        kept.draw()
    assert drawn == ["header", "board", "key"]


def test_the_least_important_part_is_shortened_then_left_out_first() -> None:
    drawn: list[str] = []
    header = part(4, 2, "header", drawn, shorter=part(1, 5, "title", drawn))
    parts = [header, part(13, MUST, "board", drawn), part(1, 3, "key", drawn), part(2, 6, "note", drawn)]
    assert [p.rows for p in fit(parts, 20)] == [4, 13, 1, 2]
    for rows, names in ((19, ["title", "board", "key", "note"]), (16, ["title", "board", "note"]),
                        (15, ["board", "note"]), (13, ["board"])):
        drawn.clear()
        for kept in fit(parts, rows):
            kept.draw()
        assert drawn == names, rows


def test_a_part_that_must_stay_stays_even_where_it_alone_is_too_tall() -> None:
    drawn: list[str] = []
    assert [p.rows for p in fit([part(1, 1, "title", drawn), part(13, MUST, "board", drawn)], 10)] == [13]


def test_a_line_wider_than_the_terminal_takes_the_rows_it_wraps_into() -> None:
    assert text_rows("short\n" + "x" * 61, 60) == 3
    assert text_rows("", 60) == 1


def _estimates(position: Position) -> dict[str, Any]:
    """A hint with every column an estimate: the longest scores, in figures and in words."""
    columns = sorted({move.column for move in position.legal_moves()})
    return {"columns": [{"column": chr(ord("a") + c), "score": None, "exact": False, "estimate": 0.57}
                        for c in columns],
            "moves": {move.token: None for move in position.legal_moves()}}  # the ban choices' too: ``?``


def _screens(monkeypatch: pytest.MonkeyPatch, settings: GameSettings, columns: int, rows: int,
             answers: list[str], hint: Callable[[Position], dict[str, Any]] = _estimates,
             after: list[str] | None = None) -> list[str]:
    """What a colour terminal ``columns`` x ``rows`` shows of ``settings``'s
    game, the person typing ``answers`` (echoed, as a terminal does): at
    each question, the screen from its last clearing to the question, where
    the cursor waits; the analysis board's scores are ``hint``'s.  What is
    printed after the last answer is appended to ``after``."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=columns, height=rows, color_system="standard")
    left = list(answers)
    screens: list[str] = []

    def typed(prompt: str) -> str:
        if not left:
            raise EOFError
        answer = left.pop(0)
        out.write(prompt)  # the prompt's last line
        shown = out.getvalue()
        screens.append(ESCAPES.sub("", shown[shown.rfind(CLEAR):]))
        out.write(answer + "\n")  # echoed
        return answer

    monkeypatch.setattr(terminal, "keyboard_line", typed)
    monkeypatch.setattr(TerminalGame, "hint", lambda self, position: hint(position))
    TerminalGame(settings, console=console, read=None).run()
    if after is not None:
        shown = out.getvalue()
        after.append(ESCAPES.sub("", shown[shown.rfind(answers[-1] + "\n") + len(answers[-1]) + 1:]))
    return screens


def _rows_taken(screen: str, columns: int) -> int:
    """The rows of a screen up to its question, and the row under it (the
    entry's Enter goes there: the status line while the next screen is
    worked out)."""
    return text_rows(screen, columns) + 1


@pytest.mark.parametrize("size", [(w, h) for w in range(4, 13) for h in range(4, 13)],
                         ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.parametrize("columns", [40, 60, 80])  # at 40, the plain board where the coloured one is too wide
@pytest.mark.parametrize("analyse", [False, True], ids=["game", "analysis board"])
def test_every_screen_fits_a_24_row_terminal_with_the_board_s_top_row_and_the_prompt(
    monkeypatch: pytest.MonkeyPatch, size: tuple[int, int], columns: int, analyse: bool
) -> None:
    """A move that lands on the bonus cell b1 (the ban question: the longest
    line on the last move), a ban in c, another move, and leaving; the
    screen of each question, with the row under the prompt for the status
    line, takes at most the terminal's 24 rows, and the board's top row is
    on it, under the header or its first words."""
    width, height = size
    settings = GameSettings(board=f"{width}x{height}/Xa1/Bb1", players=("human", "human"), first="1", analyse=analyse)
    screens = _screens(monkeypatch, settings, columns, 24, ["b", "c", "a", "exit"])
    assert len(screens) == 4  # a move, the ban question, a move, a move (left)
    if analyse and columns >= board_columns(Position.parse(f"{width}x{height}").variant, wide=True):
        # the ban question's screen keeps a scores row, the ban choices', as the move question's does
        lines = screens[1].splitlines()
        over = lines[next(i for i, line in enumerate(lines) if line.startswith(f"{height:>2} ")) - 1]
        assert set(over.split()) == {"?"}, screens[1]
    for screen in screens:
        assert _rows_taken(screen, columns) <= 24, screen
        assert f"\n{height:>2} " in "\n" + screen, screen  # the board's top row
        if columns >= 60:  # (at 40, a tall board's screen may leave out even the short header)
            assert screen.splitlines()[0].startswith(("Game 1 on", "Analysis board on")), screen


@pytest.mark.parametrize("columns", [60, 80])
@pytest.mark.parametrize("analyse", [False, True], ids=["game", "analysis board"])
def test_the_screen_at_the_end_of_a_game_fits_with_its_result_and_question(
    monkeypatch: pytest.MonkeyPatch, columns: int, analyse: bool
) -> None:
    settings = GameSettings(board="12x12/Xa1/Bb1", players=("human", "human"), first="1", analyse=analyse)
    moves = ["c", "d"] * 3 + ["c"]
    screens = _screens(monkeypatch, settings, columns, 24, [*moves, "e" if analyse else "n"])
    last = screens[-1]
    assert "wins: four in a row (c1 c2 c3 c4)." in " ".join(last.split())  # (broken between words)
    assert text_rows(last, columns) <= 24, last  # (the answer's Enter: the screen is drawn afresh, or it was the end)
    assert "\n12 " in last and last.startswith(("Game 1 on", "Analysis board on")), last


def test_on_a_short_terminal_the_ban_question_keeps_the_board_whole_and_the_scores_over_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: at 80x16, the analysis board's ban question on a 12x12 board
    pushed its scores row off the top (the two lines of the bonus cell's
    offer were kept instead), so no score was in view; at 80x15 a game's
    ban question lost the board's top row.  The offer gives way: the
    question itself says what to type."""
    settings = GameSettings(board="12x12/Xf4/Bc1", players=("human", "human"), first="1", analyse=True)
    ban = _screens(monkeypatch, settings, 80, 16, ["c", "", "exit"])[1]
    lines = ban.splitlines()
    top = next(i for i, line in enumerate(lines) if line.startswith("12 "))
    assert top == 1 and set(lines[0].split()) == {"?"}, ban  # the ban choices' scores row, over the board's top row
    assert "Ban column" in ban and "Your piece lands" not in ban and _rows_taken(ban, 80) <= 16, ban
    game = GameSettings(board="12x12/Xf4/Bc1", players=("human", "human"), first="1")
    ban = _screens(monkeypatch, game, 80, 15, ["c", "", "exit"])[1]
    assert "\n12 " in "\n" + ban and "Ban column" in ban and _rows_taken(ban, 80) <= 15, ban
    roomy = _screens(monkeypatch, game, 80, 24, ["c", "", "exit"])[1]  # where it fits, the offer is said
    assert "Your piece lands on the bonus cell c1: you may drop a ban piece" in roomy.replace("\n", " ")


def test_on_a_short_terminal_the_end_of_a_game_keeps_the_board_whole_and_says_its_notation_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Review: at 80x15 the end of a 12x12 game scrolled the board's top row
    away under its result, its notation and the question."""
    settings = GameSettings(board="12x12/Xf4", players=("human", "human"), first="1")
    after: list[str] = []
    last = _screens(monkeypatch, settings, 80, 15, [*["a", "b"] * 3, "a", "n"], after=after)[-1]
    assert "\n12 " in "\n" + last and "wins: four in a row (a1 a2 a3 a4)." in last and text_rows(last, 80) <= 15, last
    assert "The game in notation" not in last
    assert after[0].strip() == "The game in notation: 12x12/Xf4:abababa"


def test_a_screen_with_room_to_spare_keeps_the_whole_header_and_the_scores_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = GameSettings(board="7x6", players=("human", "human"), first="1", analyse=True)
    first = _screens(monkeypatch, settings, 80, 40, ["exit"])[0]
    assert "u takes a move back, r plays it again, s solves on" in first.replace("\n", " ")
    assert "Scores for A (white), to move: a ~57, b ~57" in first


def test_on_a_small_terminal_the_analysis_board_keeps_the_scores_row_and_gives_their_key_in_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = GameSettings(board="12x12/Xf4", players=("human", "human"), first="1", analyse=True)
    first = _screens(monkeypatch, settings, 60, 24, ["exit"])[0]
    assert first.startswith("Analysis board on 12x12/Xf4.\n   ~57 ~57")
    words = first.replace("\n", " ")
    assert "+ a win, the larger the sooner" in words and "s solves on" in words


@pytest.mark.parametrize("columns", [60, 80])
def test_at_the_ban_question_the_analysis_board_shows_where_the_ban_goes_scored_over_the_board(
    monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    """The ban question's screen was drawn without the scores row: the
    scores over the columns are now those of putting the ban piece there
    (the page's analysis board shows the same), and the words say so."""
    def hint(position: Position) -> dict[str, Any]:
        answer = _estimates(position)
        answer["moves"].update({"b+a": 2, "b+b": 0, "b+c": -3, "b": 1})  # b+d..b+g: not solved
        return answer

    settings = GameSettings(board="7x7/Xd4/Bb1", players=("human", "human"), first="1", analyse=True)
    screens = _screens(monkeypatch, settings, columns, 24, ["b", "exit"], hint)
    ban = screens[1]
    lines = ban.splitlines()
    row = lines[lines.index(" 7   ·   ·   ·   ·   ·   ·   · ") - 1]
    assert row.rstrip() == "    +2   0  -3   ?   ?   ?   ?"
    assert "Scores for A (white), where the ban piece goes: a +2, b 0, c -3, d ?, e ?, f ?, g ?; declining: +1" \
        in ban.replace("\n", " ")
    assert _rows_taken(ban, columns) <= 24


def test_the_ban_choices_the_solver_left_open_show_the_engines_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    """A ban choice (and declining) not solved shows the engine's estimate
    of it, ``~N``, in the row over the board and in words, as the page
    does; they were ``?`` though the engine had estimated them."""
    columns = 100

    def hint(position: Position) -> dict[str, Any]:
        answer = _estimates(position)
        answer["moves"].update({"b+a": 2, "b+b": 0, "b+c": -3})  # b+d..b+g and declining: not solved
        answer["estimates"] = {"b+d": 0.41, "b+e": 0.62, "b+f": 0.05, "b": 0.5}  # b+g: not estimated either
        return answer

    settings = GameSettings(board="7x7/Xd4/Bb1", players=("human", "human"), first="1", analyse=True)
    ban = _screens(monkeypatch, settings, columns, 40, ["b", "exit"], hint)[1]
    lines = ban.splitlines()
    row = lines[lines.index(" 7   ·   ·   ·   ·   ·   ·   · ") - 1]
    assert row.rstrip() == "    +2   0  -3 ~41 ~62 ~05   ?"
    words = " ".join(ban.split())
    assert ("Scores for A (white), where the ban piece goes: a +2, b 0, c -3, d ~41, e ~62, f ~05, g ?; declining: ~50"
            " (+ a win, the larger the sooner; 0 a draw; - a loss; ~N: not solved in time, the engine's N %;"
            " ?: not solved in time, and no estimate; s solves on)") in words


def test_a_colour_terminal_too_narrow_and_short_says_why_in_a_few_words_over_the_plain_board(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = GameSettings(board="12x12/Xa1", players=("human", "human"), first="1", analyse=True)
    first = _screens(monkeypatch, settings, 40, 24, ["exit"])[0]
    assert "(The coloured board needs 51 columns.)\n12 . . ." in first
    assert "Scores for A (white), to move: a ~57" in first  # the only scores shown
    assert _rows_taken(first, 40) <= 24
