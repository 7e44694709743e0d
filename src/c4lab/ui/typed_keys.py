"""Keys typed at the terminal while an agent thought: dropped, so that a
key pressed too early is not read as the next move, and quoted, so that the
person is told what was not taken."""

from __future__ import annotations

import os
import re
import sys


def discard_typed_keys() -> str:
    """Drop what was typed at the terminal while an agent thought, so that a
    key pressed too early is not read as the next move; what was dropped,
    as typed ("" where standard input is no terminal).  It is read before
    it goes, the line being typed too (the terminal's line mode off for a
    moment), so that the person can be told what was not taken: the next
    screen wipes what the terminal echoed."""
    if not sys.stdin.isatty():
        return ""
    try:
        import termios  # lazy: not on every platform
    except ImportError:
        return ""
    typed = b""
    try:
        fd = sys.stdin.fileno()
        saved, keys = termios.tcgetattr(fd), termios.tcgetattr(fd)
        keys[3] &= ~(termios.ICANON | termios.ECHO)  # every key typed readable, a line finished or not
        keys[6][termios.VMIN], keys[6][termios.VTIME] = 0, 0  # a read returns what there is, never waits
        termios.tcsetattr(fd, termios.TCSANOW, keys)
        try:
            while len(typed) < _TYPED_READ and (chunk := os.read(fd, _TYPED_READ)):
                typed += chunk
        finally:
            termios.tcsetattr(fd, termios.TCSANOW, saved)
            termios.tcflush(fd, termios.TCIFLUSH)  # beyond what was read, if more was typed
    except (OSError, termios.error):
        pass
    return typed.decode(errors="replace")


#: The most of the keys typed while an agent thought that are read to be shown.
_TYPED_READ = 4096
#: A key's escape sequence (an arrow: ``ESC [ A``), no text of what was typed.
_ESCAPE = re.compile(r"\x1b(\[[0-9;?]*[ -/]*[@-~]|O.|.)?")


def not_taken(typed: str, label: str) -> str:
    """The line saying that what was ``typed`` while ``label`` thought was
    not taken (``discard_typed_keys``), its lines quoted (the last three,
    each cut at 20 characters; arrow keys and other controls left out);
    "" where nothing but Enter or spaces was typed."""
    lines = [_ESCAPE.sub("", line) for line in typed.replace("\r", "\n").split("\n")]
    shown = ["".join(c for c in line if c.isprintable()).strip() for line in lines]
    shown = [line if len(line) <= 20 else line[:19] + "…" for line in shown if line]
    if not shown:
        return ""
    earlier = "..., " if len(shown) > 3 else ""
    return (f"Not taken: {earlier}{', '.join(map(repr, shown[-3:]))}, typed while {label} thought; "
            "type it again at the question if you meant it.")
