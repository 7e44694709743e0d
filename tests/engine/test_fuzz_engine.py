"""Fuzzing the engine protocol (docs/engine-protocol.md) with hypothesis,
in both directions the code reads:

* what an engine reads from its driver: ``parse_command`` and the serving
  loop (``c4lab engine``), given any lines, answers each bad one with one
  ``error`` line and goes on -- never an exception, never a line that is
  not a reply of the protocol;
* what the driver reads from an engine: ``parse_reply`` and
  ``EngineAgent``, given any lines from its program, plays the move or
  raises ``EngineError`` saying what it got -- never another exception.

A parsed line written back is the line that parses to the same message.
"""

from __future__ import annotations

import io
import queue
import time
from typing import ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from c4lab.engine import EngineAgent, EngineError, ProtocolError, parse_command, parse_reply
from c4lab.engine import client as engine_client
from c4lab.engine.client import EngineTimeout
from c4lab.engine.serve import serve
from c4lab.rules import Position

FUZZ = settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

COMMAND_WORDS = ["c4lab", "isready", "setoption", "name", "value", "newgame", "position", "go", "time",
                 "iterations", "stop", "quit", "seed", "1", "0", "-1", "0.5", "nan", "inf", "1e999", "9" * 30,
                 "4x4", "4x4:ab", "7x6:dddd", "5x4/Xb1", "d", "d+a"]
REPLY_WORDS = ["id", "name", "author", "option", "type", "default", "int", "float", "bool", "str", "none",
               "c4labok", "readyok", "info", "value", "iterations", "time", "pv", "string", "bestmove", "error",
               "a", "b", "c", "d", "z", "d+a", "d+", "0", "1", "0.5", "1.5", "-1", "nan", "inf", "1e999", "x"]
#: Spaces, and the other characters a line may hold that split words or lines elsewhere.
SEPARATORS = st.sampled_from([" ", "  ", "\t", "\x0b", "\x0c", "\r", "\x1c", "\x85", "\u2028", "\u3000"])


def lines_of(words: list[str]) -> st.SearchStrategy[str]:
    """Lines near the protocol (its words, in any order, any separators)
    and lines of any text."""
    near = st.lists(st.tuples(st.sampled_from(words) | st.text(max_size=6), SEPARATORS), max_size=8).map(
        lambda parts: "".join(w + s for w, s in parts)
    )
    return near | st.text(max_size=80)


@FUZZ
@given(line=lines_of(COMMAND_WORDS))
def test_any_line_is_a_command_or_a_protocol_error(line: str) -> None:
    try:
        command = parse_command(line)
    except ProtocolError as exc:
        assert exc.line is not None and str(exc).startswith("bad message")
        return
    assert parse_command(str(command)) == command


@FUZZ
@given(line=lines_of(REPLY_WORDS))
def test_any_line_is_a_reply_or_a_protocol_error(line: str) -> None:
    try:
        reply = parse_reply(line)
    except ProtocolError as exc:
        assert str(exc).startswith("bad message")
        return
    assert parse_reply(str(reply)) == reply


@settings(FUZZ, max_examples=100)
@given(lines=st.lists(lines_of(COMMAND_WORDS), max_size=6))
def test_the_engine_answers_any_input_with_replies_and_goes_on(lines: list[str]) -> None:
    """Any lines, then a position and ``go``: the engine is still in step."""
    script = "".join(line.replace("\n", " ").replace("\r", " ") + "\n" for line in lines) + "newgame\nposition 4x4:ab\ngo\nisready\n"
    out = io.StringIO()
    assert serve("random", io.StringIO(script, newline=""), out) == 0
    answered = [parse_reply(line) for line in out.getvalue().splitlines()]  # each a reply of the protocol
    if any(parse_command_or_none(line) == "quit" for line in script.splitlines()):
        return  # a quit among the lines ended the conversation
    assert str(answered[-1]) == "readyok" and str(answered[-2]).startswith("bestmove"), answered


def parse_command_or_none(line: str) -> str | None:
    try:
        return str(parse_command(line))
    except ProtocolError:
        return None


class FakeProcess:
    """An engine program that says what it is told to: ``script`` maps
    each command word to the lines it answers (tests use it in place of
    ``client._Process``)."""

    script: ClassVar[dict[str, list[str]]] = {}

    def __init__(self, argv: list[str], label: str) -> None:
        self.label = label
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.popen = FakePopen()

    def send(self, line: str) -> None:
        for reply in self.script.get(line.split()[0], []):
            self.lines.put(reply)

    def read(self, deadline: float, waiting_for: str, allowed: float, longer: str = "") -> str:
        try:
            line = self.lines.get(timeout=max(deadline - time.monotonic(), 0.0))
        except queue.Empty:
            raise EngineTimeout(f"engine {self.label} sent no {waiting_for} within {allowed:g} s{longer}") from None
        assert line is not None
        return line

    def alive(self) -> bool:
        return True

    def stop(self, grace: float) -> None:
        pass


class FakePopen:
    stdin = stdout = stderr = None

    def poll(self) -> int:
        return 0


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> type[FakeProcess]:
    monkeypatch.setattr(engine_client, "_Process", FakeProcess)
    return FakeProcess


reply_lines = lines_of(REPLY_WORDS).map(lambda line: line.replace("\n", " ").replace("\r", " "))


@settings(FUZZ, max_examples=150)
@given(extra=st.lists(reply_lines, max_size=3))
def test_a_handshake_with_any_lines_starts_the_engine_or_is_an_engine_error(
    fake: type[FakeProcess], extra: list[str]
) -> None:
    fake.script = {"c4lab": [*extra, "c4labok"], "isready": ["readyok"]}
    try:
        agent = EngineAgent("fake-engine", timeout=0.05)
    except EngineError as exc:
        assert "fake-engine" in str(exc)
        return
    agent.close()


@settings(FUZZ, max_examples=200)
@given(before=st.lists(reply_lines, max_size=3), best=reply_lines | st.sampled_from(["bestmove a", "bestmove z"]))
def test_any_answer_to_go_is_a_move_or_an_engine_error(
    fake: type[FakeProcess], before: list[str], best: str
) -> None:
    fake.script = {"c4lab": ["c4labok"], "isready": ["readyok"], "go": [*before, best]}
    position = Position.parse("4x4:ab")
    with EngineAgent("fake-engine", timeout=0.05, margin=0.0) as agent:
        try:
            move, analysis = agent.analyse(position)
        except EngineError as exc:
            assert "fake-engine" in str(exc)
            return
        assert position.is_legal(move)
        assert analysis.value is None or 0.0 <= analysis.value <= 1.0


def test_a_line_with_a_line_break_inside_is_a_protocol_error() -> None:
    for line in ("info string a\rb", "error x\ry", "id name a\rb", "option name n type str default a\rb"):
        with pytest.raises(ProtocolError):
            parse_reply(line)
    for line in ("setoption name seed value 1\r2", "go\rtime 1"):
        with pytest.raises(ProtocolError):
            parse_command(line)
