"""Our engine (``c4lab engine``) against a sloppy or hostile driver: every
bad line is one ``error`` reply a driver can read (docs/engine-protocol.md,
"Errors"), and the engine reads on."""

from __future__ import annotations

import io

import pytest

from c4lab.engine import parse_reply
from c4lab.engine.protocol import MAX_LINE, BestMove, Error, ReadyOk
from c4lab.engine.serve import serve


def answers(*lines: str, spec: str = "random:seed=1") -> list[str]:
    """What ``c4lab engine --agent spec`` answers to ``lines`` (in process)."""
    out = io.StringIO()
    serve(spec, io.StringIO("".join(line + "\n" for line in lines)), out)
    return out.getvalue().splitlines()


LONG = 100_000


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
    lines = answers("z" * LONG, "position 7x6:dd", "go")
    assert isinstance(parse_reply(lines[-1]), BestMove)
