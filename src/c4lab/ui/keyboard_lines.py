"""The keyboard of ``c4lab connect``: standard input read one line at a
time in a daemon thread, so that the room's socket is served while a
person thinks, with the line edited as a shell's where the keyboard and
the screen are a terminal (``ui/line_editor.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Any

from rich.console import Console

from c4lab.ui.line_editor import LineEditor


class KeyboardLines:
    """``read(prompt) -> line`` on standard input, for a reader thread.

    It reads the file descriptor itself (``os.read``) rather than
    ``input()``: a thread left blocked in ``input()`` on a pipe holds the lock
    of ``sys.stdin``'s buffer, and the interpreter aborts at exit.  Where
    both the keyboard and the screen are a terminal, a ``LineEditor``
    reads and draws the line (``close`` gives the terminal its mode back)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._pending = b""
        self.line_open = False  # a prompt is on screen, its line not ended
        self.editor: LineEditor | None = _line_editor(console)

    def aside(self) -> contextlib.AbstractContextManager[None]:
        """Around what is printed while a line may be read: the edited line
        moved out of its way (``show_prompt`` draws it again)."""
        return self.editor.aside() if self.editor is not None else contextlib.nullcontext()

    def close(self) -> None:
        """The terminal's mode as it was (the client's end)."""
        if self.editor is not None:
            self.editor.stop()

    @property
    def live(self) -> bool:
        """Whether a person types here (a terminal), so that a line may come
        at any time and is read at once: on the opponent's turn too."""
        try:
            return sys.stdin.isatty()
        except (AttributeError, ValueError, OSError):
            return False

    def show_prompt(self, prompt: str) -> None:
        if self.editor is not None:  # the line being read, typed so far, with this prompt
            self.editor.show(prompt)
            return
        self.console.print(prompt, end="", markup=False, highlight=False)
        self.console.file.flush()
        self.line_open = bool(prompt)  # (a line read with no prompt, on the opponent's turn, opens none)

    def __call__(self, prompt: str) -> str:
        if self.editor is not None:
            return self.editor.read_line(prompt)
        self.show_prompt(prompt)
        try:
            return self._line()
        finally:
            self.line_open = False

    def _line(self) -> str:
        try:
            fd = sys.stdin.fileno()
        except (AttributeError, OSError, ValueError):  # a replaced stdin (tests): no descriptor
            line = sys.stdin.readline()
            if not line:
                raise EOFError from None
            return line.rstrip("\r\n")
        while b"\n" not in self._pending:
            chunk = os.read(fd, 4096)
            if not chunk:
                if not self._pending:
                    raise EOFError
                break
            self._pending += chunk
        line, _, self._pending = self._pending.partition(b"\n")
        return line.decode("utf-8", errors="replace").rstrip("\r")


def read_in_thread(read: Callable[[str], str], prompt: str) -> asyncio.Future[tuple[bool, Any]]:
    """Run ``read(prompt)`` in a daemon thread: a future of ``(True, line)``
    or ``(False, exception)``.  The thread may outlive the game (a person who
    never presses Enter); being a daemon, it does not keep the program up."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[tuple[bool, Any]] = loop.create_future()

    def work() -> None:
        try:
            outcome: tuple[bool, Any] = (True, read(prompt))
        except BaseException as exc:  # noqa: BLE001  (EOF, Ctrl-C, a broken terminal: all end the entry)
            outcome = (False, exc)

        def deliver() -> None:
            if not future.done():
                future.set_result(outcome)

        try:
            loop.call_soon_threadsafe(deliver)
        except RuntimeError:  # the loop is closed: the game ended meanwhile
            pass

    threading.Thread(target=work, name="c4lab-keyboard", daemon=True).start()
    return future


def _line_editor(console: Console) -> LineEditor | None:
    """An editor of the keyboard's line where the keyboard and the screen
    are a terminal (POSIX), else None (lines piped in, a test's console)."""
    try:
        if os.name != "posix" or not sys.stdin.isatty() or not is_tty(console):
            return None
        fd = sys.stdin.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    return LineEditor(fd, console.file, lambda: console.width)


def is_tty(console: Console) -> bool:
    try:
        return bool(console.file.isatty())
    except (AttributeError, ValueError, OSError):
        return False
