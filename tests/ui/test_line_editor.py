"""``c4lab connect``'s line editor at a terminal (``ui/line_editor.py``),
its keys fed through a pipe (the pseudo-terminal test of the whole client
is in ``test_online_client.py``)."""

from __future__ import annotations

import io
import os
import threading
from collections.abc import Iterator

import pytest

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
    read: list[str] = []
    reader = threading.Thread(target=lambda: read.append(line.read_line("")), daemon=True)
    reader.start()
    _type(typing, "d")
    for _ in range(500):
        if screen.getvalue().endswith("d"):
            break
        threading.Event().wait(0.01)
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
