"""``c4lab connect``'s line editor at a terminal (``ui/line_editor.py``),
its keys fed through a pipe (the pseudo-terminal test of the whole client
is in ``test_online_client.py``)."""

from __future__ import annotations

import io
import os
import re
import threading
import time
from collections.abc import Iterator

import pytest

from c4lab.agents.human import ban_prompt
from c4lab.ui.line_editor import LineEditor

LEFT, RIGHT, HOME, END, UP, DOWN, DELETE = "\x1b[D", "\x1b[C", "\x1b[H", "\x1b[F", "\x1b[A", "\x1b[B", "\x1b[3~"


class _PipeEditor(LineEditor):
    """The editor on a pipe: no terminal mode to set."""

    def start(self) -> None:
        pass


@pytest.fixture
def editor() -> Iterator[tuple[_PipeEditor, int, io.StringIO]]:
    keys, typing = os.pipe()
    screen = io.StringIO()
    yield _PipeEditor(keys, screen, lambda: 80), typing, screen
    os.close(keys)
    os.close(typing)


def _type(typing: int, *keys: str) -> None:
    os.write(typing, "".join(keys).encode())


def _typing_d(line: _PipeEditor, prompt: str, typing: int, screen: io.StringIO) -> tuple[threading.Thread, list[str]]:
    """A line being read after ``prompt`` in a thread, ``d`` typed and
    drawn: the thread and the list the line goes to once it ends."""
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(line.read_line(prompt)), daemon=True)
    reader.start()
    _type(typing, "d")
    deadline = time.monotonic() + 60  # a generous bound: the test waits for the drawing, not for a speed
    while not screen.getvalue().endswith("d") and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    return reader, read


def test_the_arrows_home_end_and_delete_edit_the_line_and_are_no_part_of_it(editor) -> None:
    line, typing, _ = editor
    _type(typing, "ab", LEFT, LEFT, "x", END, "c", HOME, DELETE, RIGHT, "\x7f", "\r")
    assert line.read_line("> ") == "bc"  # xabc, x deleted, then a (before the cursor) backspaced


def test_up_and_down_go_through_the_lines_typed_before_and_back_to_the_one_being_typed(editor) -> None:
    line, typing, _ = editor
    _type(typing, "c\r", "d\r", UP, UP, "\r", "e", UP, DOWN, "\r")
    assert [line.read_line("> ") for _ in range(4)] == ["c", "d", "c", "e"]


def test_ctrl_u_and_ctrl_k_cut_the_line_and_ctrl_d_on_an_empty_line_ends_the_input(editor) -> None:
    line, typing, _ = editor
    _type(typing, "xyz", LEFT, "\x0b", "\x01", "\x06", "\x15", "\r", "\x04")
    assert line.read_line("> ") == "y"  # z cut (Ctrl-K), then x (Ctrl-A, Ctrl-F, Ctrl-U)
    with pytest.raises(EOFError):
        line.read_line("> ")


def test_news_printed_meanwhile_goes_under_the_line_which_is_drawn_again_with_a_new_prompt(editor) -> None:
    """What the server says while a line is typed: the line moves out of
    its way and comes back under it, with what was typed, and the prompt
    of the moment (the line typed on the opponent's turn answers the move's)."""
    line, typing, screen = editor
    reader, read = _typing_d(line, "", typing, screen)
    with line.aside():
        screen.write("A (white), Ann plays c.\n")
    line.show("B to move: ")
    _type(typing, "\r")
    reader.join(10)
    assert read == ["d"]
    shown = screen.getvalue().split("\r\n")  # the editor ends its lines as a terminal does
    assert shown[0].endswith("d") and shown[1] == "A (white), Ann plays c.\n\r\x1b[JB to move: d"
    assert shown[2:] == [""]  # the line ended (Enter) where it was drawn again


def test_a_line_longer_than_the_terminal_is_drawn_again_from_its_first_row(editor) -> None:
    line, typing, screen = editor
    narrow = _PipeEditor(line.fd, screen, lambda: 10)
    _type(typing, "abcdefgh", HOME, "\r")  # 12 characters with the prompt: two rows, the cursor back on the first
    assert narrow.read_line("B: ") == "abcdefgh"
    assert "\x1b[1A" in screen.getvalue()  # up from the second row to the first


def _terminal_rows(output: str, width: int) -> list[str]:
    """What a terminal ``width`` columns wide shows after ``output``: its
    rows, the text written as a terminal lays it out (a character past the
    last column starts the next row; carriage return, line feed, the cursor
    moved up, down and right, the screen erased below it)."""
    rows: list[list[str]] = [[]]
    row = column = 0
    pending = False  # the cursor held on the last column: the next character starts a row
    index = 0
    while index < len(output):
        escape = re.match(r"\x1b\[(\d*)([A-Za-z])", output[index:])
        if escape:
            count, command = int(escape.group(1) or 1), escape.group(2)
            if command == "A":
                row = max(0, row - count)
            elif command == "B":
                row += count
            elif command == "C":
                column = min(width - 1, column + count)
            elif command == "J":
                rows[row + 1:] = []
                rows[row][column:] = []
            pending = False
            index += len(escape.group(0))
            continue
        char = output[index]
        index += 1
        if char in "\r\n":
            row, column, pending = (row, 0, False) if char == "\r" else (row + 1, column, False)
        else:
            if pending:
                row, column, pending = row + 1, 0, False
            while len(rows) <= row:
                rows.append([])
            line = rows[row]
            line.extend(" " * (column + 1 - len(line)))
            line[column] = char
            column, pending = (column, True) if column == width - 1 else (column + 1, False)
        while len(rows) <= row:
            rows.append([])
    return ["".join(line) for line in rows]


BAN_QUESTION = ban_prompt(range(12), take_back=True)  # as connect asks it on a 12-column board


def test_a_prompt_wider_than_the_terminal_breaks_between_words_as_the_terminal_game_s_do(editor) -> None:
    """Review: at 60 columns ``c4lab connect``'s ban question broke where the
    edge fell, "or u to tak" / "e the drop back:"; it breaks between words,
    as ``c4lab play --tui`` breaks its prompts (``split_prompt``), the
    entry after its last line, and Home and Left still find their column."""
    line, typing, screen = editor
    narrow = _PipeEditor(line.fd, screen, lambda: 60)
    _type(typing, "de", HOME, RIGHT, "x", "\r")
    assert narrow.read_line(BAN_QUESTION) == "dxe"
    rows = _terminal_rows(screen.getvalue(), 60)
    assert rows == ["Ban column: a-l (column e: 5), Enter to decline, or u to", "take the drop back: dxe", ""]


def test_a_prompt_on_several_rows_is_drawn_again_in_place_with_the_news_above_it(editor) -> None:
    line, typing, screen = editor
    narrow = _PipeEditor(line.fd, screen, lambda: 60)
    reader, read = _typing_d(narrow, BAN_QUESTION, typing, screen)
    with narrow.aside():
        screen.write("Bob is away.\n")
    narrow.show(BAN_QUESTION)
    _type(typing, LEFT, "c", "\r")
    reader.join(10)
    assert read == ["cd"]
    rows = _terminal_rows(screen.getvalue(), 60)
    assert rows[:2] == ["Ban column: a-l (column e: 5), Enter to decline, or u to", "take the drop back: d"]
    assert rows[2:] == ["Bob is away.", "Ban column: a-l (column e: 5), Enter to decline, or u to",
                        "take the drop back: cd", ""]
