"""The messages of the c4lab engine protocol (docs/engine-protocol.md), as
values: parsing a line into a message and formatting a message into a line.

Two directions, two vocabularies: the *driver* (an arena, a GUI) sends
commands (``c4lab``, ``isready``, ``setoption``, ``newgame``, ``position``,
``go``, ``stop``, ``quit``); the *engine* (a player) sends replies (``id``,
``option``, ``c4labok``, ``readyok``, ``info``, ``bestmove``, ``error``).
``parse_command`` and ``parse_reply`` read one line each and raise
``ProtocolError`` -- which says what is wrong and at which character -- for
anything that is not exactly a message of the protocol; ``str(message)`` is
the line to send (without the newline).

Nothing here talks to a process or knows the rules beyond the move tokens:
the position string of ``position`` stays text, for ``Position.parse`` to
judge with RULES.md's own messages.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from c4lab.agents.base import INT_LIMIT, MAX_SECONDS, SPEC_FLOAT, SPEC_INT
from c4lab.rules.errors import brief, quote
from c4lab.rules.move import Move

#: What separates the words of a message: ASCII spaces and tabs, nothing
#: else.  Any other character -- a no-break space, an em space, a form feed
#: -- is part of its word (which the word's own check then refuses, a
#: position string with RULES.md's message), so that no driver's text is
#: cut in a place its author did not see (``str.split()`` cuts at all of them).
SEPARATORS = " \t"
_WORD = re.compile(r"[^ \t]+")
#: Option names are one word: letters, digits, ``_``, ``-`` and ``.``.
OPTION_NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: The types an ``option`` line may declare.
OPTION_TYPES = ("int", "float", "bool", "str")
#: The longest line either party reads, in characters (without its line
#: end).  A message of the protocol is far shorter (a pv over a whole 12x12
#: board is under 500, a position string under 1,000): a longer line is
#: refused unread, not buffered until memory runs out.
MAX_LINE = 64 * 1024


class ProtocolError(ValueError):
    """A line that is not a message of the protocol.

    Attributes:
        line: the line as received (without its newline).
        reason: what is wrong, in words.
        index: the 0-based character offset of the offending token in
            ``line``, when one token is to blame.
    """

    def __init__(self, line: str, reason: str, index: int | None = None) -> None:
        self.line = line
        self.reason = reason
        self.index = index
        shown = readable(line)
        where = f" at character {quoted_index(shown, index)}" if index is not None else ""
        super().__init__(f"bad message {quote(shown)}{where}: {reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.line, self.reason, self.index))  # the default would pass the message alone


def quoted_index(text: str, index: int) -> int:
    """Where character ``index`` of ``text`` stands in the quote a message
    shows of it (``quote``: Python's ``repr``, without its quote marks), so
    that "at character N" counts in what the reader sees: an escape there
    (a tab shown as ``\\t``, a quote mark as ``\\'``, a character that is
    not printable as ``\\x85`` or ``\\u200b``) is more than one character
    of the quote for one of the line, and the index pointed before the
    token to blame.

    The quote mark is the one of the quote shown, which is of the text's
    first characters alone when the text is long (``quote`` cuts it): a
    ``"`` past the cut does not make a ``'`` before the token an escape."""
    mark = quote(text)[0]  # the mark repr chose for what is shown: only that one is escaped in it
    return sum(2 if char in (mark, "\\") else len(repr(char)) - 2 for char in text[:index])


def readable(line: str) -> str:
    """``line`` as a message quotes it: each byte that was no UTF-8 (read as
    a lone surrogate by ``errors="surrogateescape"``) shown as U+FFFD, one
    character for one, so that a character index still points into it and
    the quote can be written as UTF-8."""
    return _UNDECODED.sub("\ufffd", line)


#: A byte that was no UTF-8, as ``errors="surrogateescape"`` reads it.
_UNDECODED = re.compile("[\udc80-\udcff]")


# ---------------------------------------------------------------------------
# Commands: driver -> engine
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Hello:
    """``c4lab``: start the handshake (the engine answers ``id``, ``option``
    lines and ``c4labok``)."""

    def __str__(self) -> str:
        return "c4lab"


@dataclass(frozen=True)
class IsReady:
    """``isready``: the engine answers ``readyok`` once every earlier command
    is done (so any ``error`` they caused comes before it)."""

    def __str__(self) -> str:
        return "isready"


@dataclass(frozen=True)
class SetOption:
    """``setoption name NAME value VALUE``: VALUE runs to the end of the line."""

    name: str
    value: str

    def __post_init__(self) -> None:
        if not OPTION_NAME.fullmatch(self.name):
            raise ValueError(f"an option name is one word of letters, digits, '_', '-' or '.', not {quote(self.name)}")
        _check_text("an option value", self.value)

    def __str__(self) -> str:
        return f"setoption name {self.name} value {self.value}"


@dataclass(frozen=True)
class NewGame:
    """``newgame``: the next positions belong to a new game (forget trees)."""

    def __str__(self) -> str:
        return "newgame"


@dataclass(frozen=True)
class SetPosition:
    """``position TEXT``: TEXT is a full position string of RULES.md (board,
    forbidden and bonus cells, and the moves so far), kept as text here."""

    text: str

    def __post_init__(self) -> None:
        if not self.text or any(c in SEPARATORS or c in "\r\n" for c in self.text):
            raise ValueError(f"a position string is one non-empty word, not {quote(self.text)}")

    def __str__(self) -> str:
        return f"position {self.text}"


@dataclass(frozen=True)
class Go:
    """``go [time S] [iterations N]``: choose a move for the last position.
    No limit at all lets the engine use its own default."""

    time: float | None = None
    iterations: int | None = None

    def __post_init__(self) -> None:
        # the bounds of an agent's Budget, refused here as a bad message (the engine answers, and goes on)
        if self.time is not None and not (math.isfinite(self.time) and 0 < self.time <= MAX_SECONDS):
            raise ValueError(f"go: time must be a positive number of seconds, at most a year ({MAX_SECONDS:,}), "
                             f"not {self.time!r}")
        if self.iterations is not None and not 1 <= self.iterations < INT_LIMIT:
            raise ValueError(
                f"go: iterations must be a positive integer below {INT_LIMIT:,} (64 bits), not {self.iterations!r}"
            )

    def __str__(self) -> str:
        parts = ["go"]
        if self.time is not None:  # plain decimals, as the page writes them: 0.00001, never 1e-05
            parts += ["time", format(Decimal(repr(float(self.time))), "f")]
        if self.iterations is not None:
            parts += ["iterations", str(self.iterations)]
        return " ".join(parts)


@dataclass(frozen=True)
class Stop:
    """``stop``: finish the current search at once (engines that search
    synchronously may ignore it; ``go`` still ends with ``bestmove``)."""

    def __str__(self) -> str:
        return "stop"


@dataclass(frozen=True)
class Quit:
    """``quit``: exit."""

    def __str__(self) -> str:
        return "quit"


Command = Hello | IsReady | SetOption | NewGame | SetPosition | Go | Stop | Quit


# ---------------------------------------------------------------------------
# Replies: engine -> driver
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Id:
    """``id name TEXT`` or ``id author TEXT`` (TEXT runs to the end of the line)."""

    key: str
    value: str

    def __post_init__(self) -> None:
        if self.key not in ("name", "author"):
            raise ValueError(f"an id line gives 'name' or 'author', not {quote(self.key)}")
        _check_text(f"id {self.key}", self.value, allow_empty=False)

    def __str__(self) -> str:
        return f"id {self.key} {self.value}"


@dataclass(frozen=True)
class Option:
    """``option name NAME type TYPE default VALUE``: a setting ``setoption``
    may change.  TYPE is one of ``OPTION_TYPES``; VALUE runs to the end of
    the line (``none`` when the setting has no value by default)."""

    name: str
    type: str
    default: str

    def __post_init__(self) -> None:
        if not OPTION_NAME.fullmatch(self.name):
            raise ValueError(f"an option name is one word of letters, digits, '_', '-' or '.', not {quote(self.name)}")
        if self.type not in OPTION_TYPES:
            raise ValueError(f"an option type is one of {', '.join(OPTION_TYPES)}, not {quote(self.type)}")
        _check_text("an option default", self.default, allow_empty=False)

    def __str__(self) -> str:
        return f"option name {self.name} type {self.type} default {self.default}"


@dataclass(frozen=True)
class HelloOk:
    """``c4labok``: the end of the handshake."""

    def __str__(self) -> str:
        return "c4labok"


@dataclass(frozen=True)
class ReadyOk:
    """``readyok``: the answer to ``isready``."""

    def __str__(self) -> str:
        return "readyok"


@dataclass(frozen=True)
class Info:
    """``info [value V] [iterations N] [time S] [pv TOKEN...] [string TEXT]``:
    what the search found, before its ``bestmove``.

    ``value`` is the expected score of the side to move in [0, 1] (win 1,
    draw 0.5, loss 0), ``time`` the seconds spent, ``pv`` the principal
    variation from the position, ``string`` free text (last on the line).
    """

    value: float | None = None
    iterations: int | None = None
    time: float | None = None
    pv: tuple[Move, ...] = ()
    string: str | None = None

    def __post_init__(self) -> None:
        if self.value is not None and not 0.0 <= self.value <= 1.0:
            raise ValueError(f"info: value must be in [0, 1], not {self.value!r}")
        if self.iterations is not None and self.iterations < 0:
            raise ValueError(f"info: iterations must not be negative, not {self.iterations!r}")
        if self.time is not None and not (math.isfinite(self.time) and self.time >= 0):
            raise ValueError(f"info: time must be a number of seconds, not {self.time!r}")
        if self.string is not None:
            _check_text("info string", self.string, allow_empty=False)

    def __str__(self) -> str:
        parts = ["info"]
        if self.value is not None:
            parts += ["value", f"{self.value:.4f}"]
        if self.iterations is not None:
            parts += ["iterations", str(self.iterations)]
        if self.time is not None:
            parts += ["time", f"{self.time:.3f}"]
        if self.pv:
            parts += ["pv", *(m.token for m in self.pv)]
        if self.string is not None:
            parts += ["string", self.string]
        return " ".join(parts)


@dataclass(frozen=True)
class BestMove:
    """``bestmove TOKEN``: the move chosen, a whole move token (``d``, ``b+a``)."""

    move: Move

    def __str__(self) -> str:
        return f"bestmove {self.move.token}"


#: What ends a line of an error's text (``Error.about``).
_LINE_BREAK = re.compile(r"[\r\n]+")


@dataclass(frozen=True)
class Error:
    """``error TEXT``: a command could not be carried out; the engine goes on."""

    message: str

    def __post_init__(self) -> None:
        _check_text("an error message", self.message, allow_empty=False)

    def __str__(self) -> str:
        return f"error {self.message}"

    @classmethod
    def about(cls, problem: object) -> Error:
        """An error line for ``problem`` (an exception or text), made one
        line: its lines joined by a space, the spaces within a line kept (a
        quoted bad line stays as it was sent, so that the character index
        the message gives points into the quote), and cut short to fit in
        ``MAX_LINE`` characters, the most a driver reads."""
        parts = _LINE_BREAK.split(str(problem))  # a line ends in '\n' or '\r' alone: U+2028 is a character of it
        text = " ".join(part.strip() for part in parts if part.strip()) or type(problem).__name__
        room = MAX_LINE - len("error ")
        if len(text) > room:  # a message that quoted some input whole: cut to fit the driver's line
            more = f"... ({len(text)} characters)"
            text = text[:room - len(more)] + more
        return cls(text)


Reply = Id | Option | HelloOk | ReadyOk | Info | BestMove | Error


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def without_line_end(line: str) -> str:
    """``line`` without its line end, ``\\n`` or ``\\r\\n``: the only two a
    line may end in.  A carriage return anywhere else stays in the line
    (``parse_command`` refuses it, naming where): a lone ``\\r`` ends no
    line, as it would for a reader with universal newlines, which cuts
    ``go\\rtime 1`` into two commands no driver wrote."""
    if line.endswith("\n"):
        line = line[:-1]
        line = line.removesuffix("\r")
    return line


def split_words(line: str) -> list[str]:
    """The words of ``line``, split where ``SEPARATORS`` are (and only there)."""
    return _WORD.findall(line)


def _check_text(what: str, text: str, allow_empty: bool = True) -> None:
    if not allow_empty and not text.strip(SEPARATORS):
        raise ValueError(f"{what} must not be empty")
    if any(c in text for c in "\r\n"):
        raise ValueError(f"{what} must fit on one line, not {quote(text)}")


class _Words:
    """The words of a line with their character offsets, read left to right."""

    def __init__(self, line: str) -> None:
        self.line = line
        self.words = [(m.group(), m.start()) for m in _WORD.finditer(line)]
        self.i = 0

    def fail(self, reason: str, at: int | None = None) -> ProtocolError:
        return ProtocolError(self.line, reason, at)

    def at_end(self) -> bool:
        return self.i >= len(self.words)

    def peek(self) -> str | None:
        return None if self.at_end() else self.words[self.i][0]

    def offset(self) -> int:
        """Where the next word starts (the end of the line when none is left)."""
        return len(self.line) if self.at_end() else self.words[self.i][1]

    def next(self, what: str) -> tuple[str, int]:
        if self.at_end():
            raise self.fail(f"{what} is missing", len(self.line))
        word = self.words[self.i]
        self.i += 1
        return word

    def expect(self, keyword: str, after: str) -> None:
        word, at = self.next(f"'{keyword}' after '{after}'")
        if word != keyword:
            raise self.fail(f"expected '{keyword}' after '{after}', got {quote(word)}", at)

    def rest(self, what: str) -> str:
        """The rest of the line from the next word on (inner spaces kept)."""
        if self.at_end():
            raise self.fail(f"{what} is missing", len(self.line))
        text = self.line[self.offset():].rstrip(SEPARATORS)
        self.i = len(self.words)
        return text

    def done(self, command: str) -> None:
        if not self.at_end():
            word, at = self.words[self.i]
            raise self.fail(f"unexpected {quote(word)} after '{command}'", at)


def _number(words: _Words, key: str, kind: type, positive: bool) -> tuple[float | int, int]:
    word, at = words.next(f"a number after '{key}'")
    try:  # written as a spec writes it: ASCII digits (no '1_000', no other script's digits, which int() takes)
        value = kind(word) if (SPEC_INT if kind is int else SPEC_FLOAT).fullmatch(word) else None
    except ValueError:  # an int of more digits than Python converts
        value = None
    if value is None or not math.isfinite(value) or (value <= 0 if positive else value < 0):
        need = "a positive" if positive else "a non-negative"
        noun = "integer" if kind is int else "number"
        raise words.fail(f"{key} needs {need} {noun}, not {quote(word)}", at)
    return value, at


_COMMANDS: dict[str, type[Hello | IsReady | NewGame | Stop | Quit]] = {"c4lab": Hello, "isready": IsReady, "newgame": NewGame, "stop": Stop, "quit": Quit}
_REPLIES: dict[str, type[HelloOk | ReadyOk]] = {"c4labok": HelloOk, "readyok": ReadyOk}


def _one_line(line: str) -> _Words:
    """The words of ``line`` without its line end; a ``ProtocolError`` if
    a line break is left inside it (it would be two lines, or a message
    that could not be written back on one), or a byte that was no UTF-8
    (decoded with ``errors="surrogateescape"``)."""
    line = without_line_end(line)
    for at, char in enumerate(line):
        if char == "\r":
            raise ProtocolError(line, "a carriage return inside the line (a line ends in '\\n' or '\\r\\n')", at)
        if char == "\n":
            raise ProtocolError(line, "a line break inside the line", at)
        if "\udc80" <= char <= "\udcff":  # a byte that was no UTF-8, kept by surrogateescape
            raise ProtocolError(line, f"byte 0x{ord(char) - 0xDC00:02X} is not UTF-8 (a line is UTF-8 text)", at)
    return _Words(line)


def _checked(words: _Words, build: Any, *args: Any) -> Any:
    """``build(*args)``, its ValueError (a value the message refuses) made a ProtocolError."""
    try:
        return build(*args)
    except ProtocolError:
        raise
    except ValueError as exc:
        raise words.fail(str(exc)) from None


def parse_command(line: str) -> Command:
    """The command written on ``line`` (a driver's message to an engine).

    >>> parse_command("go time 0.5")
    Go(time=0.5, iterations=None)
    """
    words = _one_line(line)
    if words.at_end():
        raise words.fail("the line is empty")
    head, at = words.next("a command")
    if head in _COMMANDS:
        words.done(head)
        return _COMMANDS[head]()
    if head == "position":
        text, _ = words.next("a position string after 'position'")
        # the string shown as the line's quote shows it (escaped): no control character of the driver's
        # (a terminal's escape sequence, a line separator) goes out raw in the error line that answers it
        words.done("position " + brief(repr(text)[1:-1]))
        return _checked(words, SetPosition, text)
    if head == "setoption":
        words.expect("name", "setoption")
        name, name_at = words.next("an option name after 'name'")
        if not OPTION_NAME.fullmatch(name):
            raise words.fail(f"an option name is one word of letters, digits, '_', '-' or '.', not {quote(name)}", name_at)
        words.expect("value", f"setoption name {brief(name)}")
        return _checked(words, SetOption, name, words.rest(f"the value of option {quote(name)}"))
    if head == "go":
        limits: dict[str, float | int] = {}
        while not words.at_end():
            key, key_at = words.next("a limit")
            if key not in ("time", "iterations"):
                raise words.fail(f"'go' takes 'time S' and 'iterations N', not {quote(key)}", key_at)
            if key in limits:
                raise words.fail(f"'{key}' is given twice", key_at)
            limits[key], value_at = _number(words, key, float if key == "time" else int, positive=True)
            try:  # within a budget's bounds, said at the number
                Go(**{key: limits[key]})  # type: ignore[arg-type]
            except ValueError as exc:
                raise words.fail(str(exc), value_at) from None
        return Go(**limits)  # type: ignore[arg-type]
    raise words.fail(
        f"unknown command {quote(head)} (commands: c4lab, isready, setoption, newgame, position, go, stop, quit)", at
    )


def parse_reply(line: str) -> Reply:
    """The reply written on ``line`` (an engine's message to its driver).

    >>> parse_reply("bestmove b+a")
    BestMove(move=Move.parse('b+a'))
    """
    words = _one_line(line)
    if words.at_end():
        raise words.fail("the line is empty")
    head, at = words.next("a reply")
    if head in _REPLIES:
        words.done(head)
        return _REPLIES[head]()
    if head == "id":
        key, key_at = words.next("'name' or 'author' after 'id'")
        if key not in ("name", "author"):
            raise words.fail(f"an id line gives 'name' or 'author', not {quote(key)}", key_at)
        return _checked(words, Id, key, words.rest(f"the {key} after 'id {key}'"))
    if head == "option":
        words.expect("name", "option")
        name, name_at = words.next("an option name after 'name'")
        if not OPTION_NAME.fullmatch(name):
            raise words.fail(f"an option name is one word of letters, digits, '_', '-' or '.', not {quote(name)}", name_at)
        words.expect("type", f"option name {brief(name)}")
        kind, kind_at = words.next("an option type after 'type'")
        if kind not in OPTION_TYPES:
            raise words.fail(f"an option type is one of {', '.join(OPTION_TYPES)}, not {quote(kind)}", kind_at)
        words.expect("default", f"option name {brief(name)} type {kind}")
        return _checked(words, Option, name, kind, words.rest(f"the default of option {quote(name)}"))
    if head == "bestmove":
        token, token_at = words.next("a move token after 'bestmove'")
        try:
            move = Move.parse(token)
        except ValueError as exc:
            raise words.fail(str(exc), token_at) from None
        words.done("bestmove " + brief(token))
        return BestMove(move)
    if head == "error":
        return _checked(words, Error, words.rest("the message after 'error'"))
    if head == "info":
        return _parse_info(words)
    raise words.fail(
        f"unknown reply {quote(head)} (replies: id, option, c4labok, readyok, info, bestmove, error)", at
    )


def _parse_info(words: _Words) -> Info:
    fields: dict[str, object] = {}
    while not words.at_end():
        key, key_at = words.next("an info field")
        if key in fields:
            raise words.fail(f"'{key}' is given twice", key_at)
        if key == "value":
            value, value_at = _number(words, key, float, positive=False)
            if value > 1:
                raise words.fail(f"value must be in [0, 1], not {value!r}", value_at)
            fields[key] = float(value)
        elif key == "iterations":
            fields[key], _ = _number(words, key, int, positive=False)
        elif key == "time":
            fields[key], _ = _number(words, key, float, positive=False)
        elif key == "pv":
            pv = []
            while (word := words.peek()) is not None and word not in ("value", "iterations", "time", "string"):
                token, token_at = words.next("a move token")
                try:
                    pv.append(Move.parse(token))
                except ValueError as exc:
                    raise words.fail(f"pv: {exc}", token_at) from None
            if not pv:
                raise words.fail("'pv' needs at least one move token", words.offset())
            fields[key] = tuple(pv)
        elif key == "string":
            fields[key] = words.rest("the text after 'string'")
        else:
            raise words.fail(
                f"unknown info field {quote(key)} (fields: value, iterations, time, pv, string)", key_at
            )
    return _checked(words, lambda: Info(**fields))  # type: ignore[arg-type]
