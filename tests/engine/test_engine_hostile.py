"""Our engine (``c4lab engine``) against a sloppy or hostile driver: every
bad line is one ``error`` reply a driver can read (docs/engine-protocol.md,
"Errors"), and the engine reads on."""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest

from c4lab.engine import ProtocolError, parse_command, parse_reply
from c4lab.engine.protocol import MAX_LINE, BestMove, Error, Go, Id, Info, ReadyOk
from c4lab.engine.serve import serve
from c4lab.rules import Move


def answers(*lines: str, spec: str = "random:seed=1") -> list[str]:
    """What ``c4lab engine --agent spec`` answers to ``lines`` (in process)."""
    out = io.StringIO()
    serve(spec, io.StringIO("".join(line + "\n" for line in lines)), out)
    return out.getvalue().splitlines()


LONG = 60_000  # a long word on a line a driver may send (MAX_LINE at most)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        ("z" * LONG, "unknown command 'zzzz"),
        ("go " + "z" * LONG, "'go' takes 'time S' and 'iterations N', not 'zzzz"),
        ("go time " + "1" * LONG, "time needs a positive number, not '1111"),
        ("stop " + "z" * LONG, "unexpected 'zzzz"),
        ("position 7x6 " + "z" * LONG, "unexpected 'zzzz"),
        ("position " + "7" * LONG, "invalid position '7777"),
        ("setoption " + "n" * LONG, "expected 'name' after 'setoption', got 'nnnn"),
        ("setoption name seed " + "n" * LONG, "expected 'value' after 'setoption name seed', got 'nnnn"),
        ("setoption name " + "s" * LONG + " value 1", "unknown option 'ssss"),
        ("setoption name seed value " + "1" * LONG, "seed='1111"),
        ("setoption name seed value a" + "é" * LONG, "seed='aééé"),
    ],
)
def test_an_error_about_a_long_word_quotes_its_start_and_fits_a_drivers_line(line: str, said: str) -> None:
    error, ready = answers(line, "isready")
    assert isinstance(parse_reply(error), Error) and isinstance(parse_reply(ready), ReadyOk)
    assert said in error
    assert len(error) < 1_000, error[:200]  # the word cut short, its length said
    assert f"({LONG + 1 if 'é' in line else LONG} characters)" in error


def test_no_error_line_is_longer_than_a_driver_reads() -> None:
    text = "x" * (3 * MAX_LINE)
    line = str(Error.about(ValueError(text)))
    assert len(line) == MAX_LINE
    assert line.endswith(f"... ({len(text)} characters)")


def test_after_the_long_lines_the_engine_plays_on() -> None:
    lines = answers("z" * LONG, "position 7x6:dd", "go", "isready")
    assert isinstance(parse_reply(lines[-2]), BestMove)


class EndlessLine(io.TextIOBase):
    """A driver that writes ``total`` characters without a line end, then
    ``rest``; it records the most any one read asked for."""

    def __init__(self, total: int, rest: str) -> None:
        self.left, self.rest, self.most = total, rest, 0

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        assert size is not None and size > 0, "a read without a limit would hold the whole line"
        self.most = max(self.most, size)
        if self.left:
            piece = min(size, self.left)
            self.left -= piece
            return "x" * piece
        line, _, self.rest = self.rest.partition("\n")
        return line + "\n" if line or self.rest else ""


def test_a_line_longer_than_a_line_may_be_is_one_error_and_never_read_whole() -> None:
    stdin = EndlessLine(10 * MAX_LINE + 7, "\nisready\n")
    out = io.StringIO()
    serve("random:seed=1", stdin, out)  # type: ignore[arg-type]
    assert out.getvalue().splitlines() == [
        f"error bad message {'x' * 60!r}... ({10 * MAX_LINE + 7} characters): a line has at most 65,536 characters",
        "readyok",
    ]
    assert stdin.most == MAX_LINE + 2  # the longest line and its '\r\n'


def test_a_line_of_the_longest_length_is_read_as_a_command() -> None:
    assert answers("isready" + " " * (MAX_LINE - len("isready"))) == ["readyok"]
    assert answers("isready" + " " * (MAX_LINE - len("isready")) + "\r") == ["readyok"]  # and its '\r\n'


def test_a_byte_that_is_no_utf8_is_named_with_where_it_is_and_the_engine_reads_on() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "c4lab", "engine", "--agent", "random:seed=1"],
        input=b"position 7x6:d\xc3d\n\xff isready\nisready\n", capture_output=True, timeout=120, check=False,
    )
    assert done.returncode == 0 and done.stderr == b""
    assert done.stdout.decode().splitlines() == [
        "error bad message 'position 7x6:d\ufffdd' at character 14: byte 0xC3 is not UTF-8 (a line is UTF-8 text)",
        "error bad message '\ufffd isready' at character 0: byte 0xFF is not UTF-8 (a line is UTF-8 text)",
        "readyok",
    ]


def test_a_line_ends_at_lf_or_crlf_and_a_lone_cr_is_an_error_naming_where() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "c4lab", "engine", "--agent", "random:seed=1"],
        input=b"position 7x6:dd\rgo\nisready\r\r\nposition 7x6:dd\r\ngo\r\nisready\r\nisready\r",
        capture_output=True, timeout=120, check=False,
    )
    assert done.returncode == 0 and done.stderr == b""
    lines = done.stdout.decode().split("\n")
    because = "a carriage return inside the line (a line ends in '\\n' or '\\r\\n')"
    assert lines[:2] == [  # no 'go' was read at the lone '\r', and the first 'isready' came with one '\r' too many
        f"error bad message 'position 7x6:dd\\rgo' at character 15: {because}",
        f"error bad message 'isready\\r' at character 7: {because}",
    ]
    assert [line.split(" ")[0] for line in lines[2:]] == ["info", "bestmove", "readyok", "error", ""]
    assert lines[-2] == f"error bad message 'isready\\r' at character 7: {because}"  # the last line: no '\n' after it


@pytest.mark.parametrize(
    ("line", "index", "what"),
    [
        ("go time 1_0", 8, "time needs a positive number, not '1_0'"),
        ("go iterations 1_000", 14, "iterations needs a positive integer, not '1_000'"),
        ("go iterations \uff15", 14, "iterations needs a positive integer"),  # a fullwidth 5
        ("go time \u0660.\u0661", 8, "time needs a positive number"),  # 0.1 in Arabic-Indic digits
        ("go time 0x10", 8, "time needs a positive number, not '0x10'"),
        ("go time inf", 8, "time needs a positive number, not 'inf'"),
        ("go iterations 0", 14, "iterations needs a positive integer, not '0'"),
        ("go time 1 iterations 99999999999999999999", 21, "iterations must be a positive integer below"),
        ("go iterations 5 time 1e9", 21, "time must be a positive number of seconds, at most a year"),
    ],
)
def test_a_go_limit_is_ascii_digits_within_a_budgets_bounds_or_an_error_at_the_number(
    line: str, index: int, what: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_command(line)
    assert (caught.value.index, what in caught.value.reason) == (index, True), caught.value


@pytest.mark.parametrize(
    ("line", "said"),
    [  # a no-break space, an em space, an ideographic space, a form feed, a vertical tab, NEL
        ("position\xa07x6:dd", "unknown command 'position\\xa07x6:dd'"),
        ("position 7x6:d\u2003d", "invalid position '7x6:d\\u2003d': '\\u2003' at character 5: non-ASCII character U+2003"),
        ("position 7x6:dd\x0c", "invalid position '7x6:dd\\x0c': '\\x0c' at character 6: whitespace or a control"),
        ("setoption\u3000name seed value 3", "unknown command 'setoption\\u3000name'"),
        ("go time\x0b1", "'go' takes 'time S' and 'iterations N', not 'time\\x0b1'"),
        ("isready\x85", "unknown command 'isready\\x85'"),
        ("\xa0", "unknown command '\\xa0'"),
        ("setoption name seed value 3\xa0", "option 'seed' cannot take the value '3\\xa0'"),
    ],
)
def test_words_are_split_at_ascii_spaces_and_tabs_alone_any_other_space_is_part_of_its_word(
    line: str, said: str
) -> None:
    error, ready = answers(line, "isready")
    assert error.startswith("error ") and said in error, error
    assert ready == "readyok"


def test_a_reply_is_split_at_ascii_spaces_and_tabs_alone() -> None:
    assert parse_reply("id name my\xa0engine") == Id("name", "my\xa0engine")
    assert parse_reply("bestmove\td \t") == BestMove(Move.parse("d"))
    with pytest.raises(ProtocolError, match="unknown reply 'bestmove\\\\xa0d'"):
        parse_reply("bestmove\xa0d")
    with pytest.raises(ProtocolError, match="'\\\\u2003' is not a move token"):
        parse_reply("bestmove \u2003")


@pytest.mark.parametrize("line", ["go time 0.5", "go time .5", "go time 2", "go time 1e-3", "go iterations +5"])
def test_a_go_limit_written_as_a_number_is_read(line: str) -> None:
    assert isinstance(parse_command(line), Go)


@pytest.mark.parametrize(("seconds", "written"), [(0.00001, "0.00001"), (1e-7, "0.0000001"), (2.0, "2.0"),
                                                 (0.5, "0.5"), (31_536_000.0, "31536000.0")])
def test_go_writes_its_time_as_a_plain_decimal_number(seconds: float, written: str) -> None:
    assert str(Go(time=seconds)) == f"go time {written}"
    assert parse_command(f"go time {written}") == Go(time=seconds)


def test_commands_before_the_handshake_are_answered_as_after_it() -> None:
    lines = answers("position 7x6:dd", "go", "c4lab", "go", "isready")
    assert [line.split()[0] for line in lines] == ["info", "bestmove", "id", "id", "option", "c4labok", "info",
                                                   "bestmove", "readyok"]


def test_setoption_value_none_gives_an_option_no_value() -> None:
    lines = answers("setoption name seed value none", "c4lab")
    assert "option name seed type int default none" in lines


def test_a_position_stays_after_go_and_a_second_go_chooses_again() -> None:
    lines = answers("position 7x6:dd", "go", "go", "isready")
    assert [line.split()[0] for line in lines] == ["info", "bestmove", "info", "bestmove", "readyok"]


def test_a_command_after_go_is_answered_after_its_bestmove_and_stop_changes_nothing() -> None:
    # the lines after 'go' are read during its search, answered in order after it: a script ending
    # in 'isready' gets every answer; 'stop' answers nothing of its own (random's go answers at once anyway)
    lines = answers("position 7x6:dd", "go time 0.3", "stop", "fly", "go iterations 5", "isready", "quit", "isready")
    assert [line.split()[0] for line in lines] == ["info", "bestmove", "error", "info", "bestmove", "readyok"]


def engine_searching(spec: str) -> subprocess.Popen[str]:
    """``c4lab engine --agent spec`` ready (its kernels loaded: ``isready``
    answered) and told ``go time 60`` early in a game on 9x8 (a position
    that takes thinking: in 9x8:ddeec, where the side to move has lost,
    ``master`` answered at once, sometimes before the ``quit`` was read)."""
    engine = subprocess.Popen([sys.executable, "-m", "c4lab", "engine", "--agent", spec], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert engine.stdin is not None and engine.stdout is not None
    engine.stdin.write("position 9x8:dd\nisready\n")
    engine.stdin.flush()
    assert engine.stdout.readline() == "readyok\n"
    engine.stdin.write("go time 60\n")
    engine.stdin.flush()
    return engine


@pytest.mark.parametrize("spec", ["uct:seed=1", "master:seed=1"])
def test_quit_during_a_search_ends_it_unanswered_and_exits(spec: str) -> None:
    engine = engine_searching(spec)
    assert engine.stdin is not None and engine.stdout is not None and engine.stderr is not None
    try:
        engine.stdin.write("quit\n")
        engine.stdin.flush()
        engine.stdin.close()
        status = engine.wait(timeout=20)  # the search was given 60 s
    finally:
        engine.kill()
        out, err = engine.stdout.read(), engine.stderr.read()
        engine.stdout.close()
        engine.stderr.close()
    assert (status, out, err) == (0, "", "")  # no bestmove: the driver that quit does not wait for one


def test_stop_during_a_search_answers_at_once_and_the_engine_reads_on() -> None:
    # the process as a driver meets it (tests/engine/test_engine_stop.py: every agent, in process)
    engine = engine_searching("uct:seed=1")
    assert engine.stdin is not None and engine.stdout is not None and engine.stderr is not None
    try:
        stopped = time.monotonic()
        engine.stdin.write("stop\n")
        engine.stdin.flush()
        info, best = engine.stdout.readline(), engine.stdout.readline()
        took = time.monotonic() - stopped
        engine.stdin.write("isready\nquit\n")
        engine.stdin.flush()
        ready = engine.stdout.readline()
        status = engine.wait(timeout=20)
    finally:
        engine.kill()
        engine.stdout.close()
        engine.stderr.close()
    assert isinstance(parse_reply(info), Info) and isinstance(parse_reply(best), BestMove)
    assert took < 15, took  # the search was given 60 s
    assert (ready, status) == ("readyok\n", 0)


def test_the_end_of_the_input_during_a_search_waits_for_its_bestmove() -> None:
    # a script piped in ends there, and wants its answer (only 'quit' gives a search up)
    lines = answers("position 7x6:dd", "go time 0.3")
    assert [line.split()[0] for line in lines] == ["info", "bestmove"]


def test_stop_with_no_search_and_blank_or_spaced_lines_answer_nothing() -> None:
    assert answers("stop", "", "   ", "\t", "  isready  ", "isready\r") == ["readyok", "readyok"]
