"""The keyboard line of ``c4lab connect`` at a terminal, edited as a shell's.

``c4lab play --tui`` reads its moves with ``input()`` and readline; the
online client cannot: it reads the keyboard in a thread while the server's
news is printed under the prompt (a move, "your opponent left"), and the
prompt itself changes while a line is read (the line typed on the
opponent's turn becomes the answer to "A to move: ..."). Python's readline
module can neither be told that the screen moved under it nor be given a
new prompt mid-line, so Up or Home redrew the line over the wrong text.
Without any editing, an arrow key typed ``^[[A`` into the entry.

``LineEditor`` is a small editor that owns its line: the terminal in
cbreak mode (no echo, keys one at a time; Ctrl-C still interrupts), the
keys of a shell's line (Left, Right, Home, End, Backspace, Delete, Up and
Down through the lines typed before, Ctrl-A/E/B/F/U/K, Ctrl-D on an empty
line to end the input), and the line drawn again on demand: ``aside()``
moves it out of the way for what the program prints, ``show(prompt)``
draws it again (with a new prompt if need be), what was typed kept.
A prompt wider than the terminal is broken between words as the terminal
game's are (``ui.board_view.split_prompt``): its lines but the last drawn
first, the entry after the last one (the terminal broke it where its edge
fell, in the middle of a word: "column a-l or 1-12 (column e: 5), Enter to d" / "ecline").
A width is counted in characters (a wide character drawn two cells wide
misplaces the cursor of a line that wraps, not what it holds).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import threading
from collections.abc import Callable, Iterator
from typing import IO, Any

from c4lab.ui.board_view import split_prompt
from c4lab.ui.screen_fit import text_rows

__all__ = ["LineEditor"]

#: Keys (the characters a terminal sends) and what they do.
_ACTIONS: dict[str, str] = {
    "\r": "enter", "\n": "enter",
    "\x7f": "backspace", "\x08": "backspace",
    "\x1b[3~": "delete",
    "\x1b[D": "left", "\x1bOD": "left", "\x02": "left",
    "\x1b[C": "right", "\x1bOC": "right", "\x06": "right",
    "\x1b[H": "home", "\x1bOH": "home", "\x1b[1~": "home", "\x1b[7~": "home", "\x01": "home",
    "\x1b[F": "end", "\x1bOF": "end", "\x1b[4~": "end", "\x1b[8~": "end", "\x05": "end",
    "\x1b[A": "up", "\x1bOA": "up", "\x10": "up",
    "\x1b[B": "down", "\x1bOB": "down", "\x0e": "down",
    "\x15": "kill-start", "\x0b": "kill-end",
    "\x04": "eof-or-delete",
}
#: Seconds to wait for the rest of an escape sequence after a lone Escape.
_ESCAPE_WAIT = 0.05


class LineEditor:
    """One line at a time from terminal ``fd``, drawn on ``out`` (a
    terminal ``width()`` characters wide).  ``read_line`` runs in the
    reader thread; ``aside`` and ``show`` in any other (one lock)."""

    def __init__(self, fd: int, out: IO[str], width: Callable[[], int]) -> None:
        self.fd = fd
        self.out = out
        self.width = width
        self._lock = threading.RLock()
        self._prompt = ""
        self._text: list[str] = []
        self._cursor = 0  # in _text
        self._shown = False  # prompt and text on screen, the terminal's cursor at _cursor
        self._row = 0  # the screen row of the cursor, from the line's first row
        self._end_row = 0  # the row where the line ends
        self._tail = 0  # the length of the prompt's last line, which the text follows
        self._history: list[str] = []
        self._recalled: int | None = None  # the line of _history shown (Up), None: the one being typed
        self._draft: list[str] = []  # the line being typed, while Up shows older ones
        self._keys = ""  # characters read, not yet a whole key
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._saved: Any = None  # the terminal's settings before cbreak mode
        self._stopped = False  # for good: the program is ending

    # -- the terminal's mode ----------------------------------------------------------

    def start(self) -> None:
        """The terminal in cbreak mode: keys come one at a time, unechoed;
        Ctrl-C still interrupts the program.  ``stop`` restores it."""
        import termios  # lazy: POSIX only, and only at a terminal
        import tty  # lazy: as above

        with self._lock:
            if self._saved is None and not self._stopped:
                self._saved = termios.tcgetattr(self.fd)
                tty.setcbreak(self.fd, termios.TCSANOW)

    def stop(self) -> None:
        """The terminal as ``start`` found it, for good (the reader thread
        may still be waiting for a key: it gets one in line mode, and ends)."""
        import termios  # lazy: as in start

        with self._lock:
            self._stopped = True
            if self._saved is not None:
                with contextlib.suppress(termios.error, OSError):
                    termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
                self._saved = None

    # -- the reader thread --------------------------------------------------------------

    def read_line(self, prompt: str) -> str:
        """The line typed after ``prompt``, edited; ``EOFError`` for Ctrl-D
        on an empty line or the end of the input."""
        self.start()
        with self._lock:
            if self._stopped:
                raise EOFError
            self._prompt, self._text, self._cursor, self._recalled = prompt, [], 0, None
            self._draw()
        while True:
            key = self._next_key()
            with self._lock:
                if self._stopped:  # the program is ending
                    raise EOFError
                line = self._apply(key)
                if line is not None:
                    return line

    def _apply(self, key: str) -> str | None:
        """Do what ``key`` does to the line; the line when it ends it."""
        action = _ACTIONS.get(key)
        text, at = self._text, self._cursor
        if action == "enter":
            line = "".join(text)
            self._leave()
            self._text, self._cursor, self._prompt = [], 0, ""
            if line.strip() and (not self._history or self._history[-1] != line):
                self._history.append(line)
            return line
        if action == "eof-or-delete" and not text:
            self._leave()
            raise EOFError
        if action in ("delete", "eof-or-delete"):
            del text[at:at + 1]
        elif action == "backspace" and at:
            del text[at - 1]
            self._cursor -= 1
        elif action in ("left", "right", "home", "end"):
            self._cursor = {"left": max(at - 1, 0), "right": min(at + 1, len(text)), "home": 0, "end": len(text)}[action]
        elif action in ("up", "down"):
            self._recall(-1 if action == "up" else 1)
        elif action == "kill-start":
            del text[:at]
            self._cursor = 0
        elif action == "kill-end":
            del text[at:]
        elif action is None and len(key) == 1 and key.isprintable():
            text.insert(at, key)
            self._cursor += 1
        else:
            return None  # another control key or escape sequence: ignored
        self._draw()
        return None

    def _recall(self, step: int) -> None:
        """Up (``step`` -1) or Down (1) through the lines typed before."""
        here = len(self._history) if self._recalled is None else self._recalled
        there = here + step
        if there < 0 or there > len(self._history) or there == here:
            return
        if self._recalled is None:
            self._draft = list(self._text)
        self._recalled = None if there == len(self._history) else there
        self._text = list(self._draft if self._recalled is None else self._history[there])
        self._cursor = len(self._text)

    def _next_key(self) -> str:
        """The next whole key: a character, or an escape sequence (an arrow
        sends three characters, which may come in two reads)."""
        while True:
            key, complete = _first_key(self._keys)
            if key and (complete or not self._more_within(_ESCAPE_WAIT)):
                self._keys = self._keys[len(key):]
                return key
            chunk = os.read(self.fd, 64)
            if not chunk:
                if self._keys:  # what was left of an escape sequence: ignored
                    self._keys = ""
                    return "\x1b"
                return "\x04"
            self._keys += self._decoder.decode(chunk)

    def _more_within(self, seconds: float) -> bool:
        """Whether more keys come within ``seconds`` (after an Escape)."""
        ready, _, _ = select.select([self.fd], [], [], seconds)
        return bool(ready)

    # -- the display (any thread) -------------------------------------------------------

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """The line moved out of the way of what is printed meanwhile
        (which ends its own lines): below it, at the start of a row; a key
        typed meanwhile waits, and ``show`` draws the line again."""
        with self._lock:
            self._leave()
            yield
            self.out.flush()

    def show(self, prompt: str) -> None:
        """The line drawn again with ``prompt``, what was typed kept."""
        with self._lock:
            self._prompt = prompt
            self._draw()

    def _draw(self) -> None:
        """The prompt and the text on screen from the line's first row
        (where the cursor is at a row's start when nothing is shown), the
        cursor where the editing is."""
        width = max(self.width(), 1)
        write = self.out.write
        if self._shown and self._row:
            write(f"\x1b[{self._row}A")
        write("\r\x1b[J")
        above, last = split_prompt(self._prompt, width)
        top = text_rows("\n".join(above), width) if above else 0  # the rows of the prompt's lines but the last
        for line in above:
            write(line + "\r\n")
        whole = last + "".join(self._text)
        write(whole)
        end = len(whole)
        if end and end % width == 0:  # the terminal holds the cursor on the last column: the next row
            write("\r\n")
        at = len(last) + self._cursor
        self._tail = len(last)
        self._end_row, self._row = top + end // width, top + at // width
        if at != end:  # (at the end, the cursor is there already)
            if self._end_row > self._row:
                write(f"\x1b[{self._end_row - self._row}A")
            write("\r" + (f"\x1b[{at % width}C" if at % width else ""))
        self._shown = bool(above) or bool(whole)
        self.out.flush()

    def _leave(self) -> None:
        """The cursor below the line shown, at the start of a row."""
        if not self._shown:
            return
        if self._end_row > self._row:
            self.out.write(f"\x1b[{self._end_row - self._row}B")
        width = max(self.width(), 1)
        end = self._tail + len(self._text)
        self.out.write("\r" if end % width == 0 else "\r\n")
        self.out.flush()
        self._shown = False
        self._row = self._end_row = 0


def _first_key(keys: str) -> tuple[str, bool]:
    """The first key in ``keys`` and whether it is whole: a character, or
    Escape, ``[`` or ``O``, parameters and a final letter (a sequence not
    ended yet is not whole; a lone Escape is whole once nothing follows)."""
    if not keys:
        return "", False
    if keys[0] != "\x1b":
        return keys[0], True
    if len(keys) == 1:
        return keys, False
    if keys[1] not in "[O":
        return keys[:2], True  # Alt and a key: ignored
    for index in range(2, len(keys)):
        if "\x40" <= keys[index] <= "\x7e":
            return keys[:index + 1], True
        if not "\x20" <= keys[index] <= "\x3f":  # not a sequence after all
            return keys[:index], True
    return keys, False
