"""The engine protocol (docs/engine-protocol.md): its messages, our agents
served behind it (``c4lab engine``), and external engines as agents
(``EngineAgent``, the spec ``engine:cmd=...``)."""

from __future__ import annotations

import gc
import io
import re
import shlex
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import testkit
from c4lab.agents import Budget, SpecError, make_agent
from c4lab.arena.schedule import ArenaConfig
from c4lab.engine import EngineAgent, EngineError, ProtocolError, parse_command, parse_reply
from c4lab.engine.client import EngineIllegalMove, EngineTimeout
from c4lab.engine.protocol import BestMove, Error, Go, Info, Option, SetOption, SetPosition
from c4lab.engine.serve import serve
from c4lab.game import play_game
from c4lab.rules import Move, Position
from testkit import register_misbehaving

ENGINE = [sys.executable, "-m", "c4lab", "engine"]


#: Seconds our own engine is given to start (to 'c4labok': Python's and
#: numba's imports) and to get ready (``isready``: its kernels loaded, or
#: compiled): the defaults, 15 s and 30 s, are for a machine of its own; on
#: a loaded one the start alone took 34 s.
START = 120.0


def engine_cmd(spec: str) -> str:
    """The command line of our own engine serving ``spec``."""
    return shlex.join([*ENGINE, "--agent", spec])


def converse(spec: str, *commands: str) -> list[str]:
    """Run ``c4lab engine --agent spec``, send ``commands``, return its lines."""
    done = subprocess.run(
        [*ENGINE, "--agent", spec], input="".join(c + "\n" for c in commands),
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def fake_engine(tmp_path: Path, on_go: str, on_hello: str = "print('id name fake'); print('c4labok')") -> str:
    """The command line of a tiny engine: ``on_hello`` answers ``c4lab``,
    ``on_go`` answers ``go`` (Python statements; ``position`` holds the
    last position string); ``isready`` answers ``readyok``."""
    script = tmp_path / "fake_engine.py"
    script.write_text(textwrap.dedent(f"""\
        import sys, time
        sys.stdout.reconfigure(line_buffering=True)
        position = None
        for line in sys.stdin:
            word, _, rest = line.strip().partition(" ")
            if word == "c4lab":
                {on_hello}
            elif word == "isready":
                print("readyok")
            elif word == "position":
                position = rest
            elif word == "go":
                {on_go}
            elif word == "quit":
                break
        """))
    return shlex.join([sys.executable, str(script)])


# ---------------------------------------------------------------------------
# The messages
# ---------------------------------------------------------------------------


def test_commands_read_back_to_the_line_they_were_written_as() -> None:
    for line in [
        "c4lab", "isready", "newgame", "stop", "quit", "position 9x8/Xd3/Bb1:b+ac",
        "go", "go time 0.5", "go iterations 1200", "go time 2.0 iterations 30", "setoption name seed value 3",
    ]:
        assert str(parse_command(line)) == line
    assert parse_command("go iterations 5 time 1") == Go(time=1.0, iterations=5)
    assert parse_command("setoption name note value two words") == SetOption("note", "two words")


def test_replies_read_back_to_the_line_they_were_written_as() -> None:
    for line in [
        "c4labok", "readyok", "id name c4lab master", "id author c4lab",
        "option name time type float default 1.0", "option name seed type int default none",
        "bestmove d", "bestmove b+a", "error invalid position '7x6:z'",
        "info value 0.6200 iterations 1200 time 0.510 pv d c+a d string from the book",
    ]:
        assert str(parse_reply(line)) == line
    info = parse_reply("info pv d c+a d value 0.25")
    assert info == Info(value=0.25, pv=(Move(3), Move(2, 0), Move(3)))
    assert parse_reply("bestmove b+a") == BestMove(Move(1, 0))


@pytest.mark.parametrize(
    ("line", "index", "what"),
    [
        ("", None, "empty"),
        ("hello", 0, "unknown command 'hello'"),
        ("isready now", 8, "unexpected 'now'"),
        ("position", 8, "position string"),
        ("position 7x6 dd", 13, "unexpected 'dd'"),
        ("go time", 7, "a number after 'time' is missing"),
        ("go time -1", 8, "time needs a positive number, not '-1'"),
        ("go time nan", 8, "time needs a positive number"),
        ("go iterations 1.5", 14, "iterations needs a positive integer, not '1.5'"),
        ("go iterations 9223372036854775808", 14, "iterations must be a positive integer below 9,223,372,036,854,775,808"),
        ("go time 1e308", 8, "time must be a positive number of seconds, at most a year (31,536,000), not 1e+308"),
        ("go depth 3", 3, "'go' takes 'time S' and 'iterations N', not 'depth'"),
        ("go time 1 time 2", 10, "'time' is given twice"),
        ("setoption seed value 3", 10, "expected 'name' after 'setoption', got 'seed'"),
        ("setoption name seed", 19, "'value' after 'setoption name seed' is missing"),
    ],
)
def test_a_bad_command_is_rejected_saying_what_and_where(line: str, index: int | None, what: str) -> None:
    with pytest.raises(ProtocolError, match="bad message") as caught:
        parse_command(line)
    assert caught.value.index == index
    assert what in caught.value.reason


@pytest.mark.parametrize(
    ("line", "index", "what"),
    [
        ("bestmove", 8, "a move token after 'bestmove' is missing"),
        ("bestmove 4", 9, ("'4' is not a move token: a column letter a..l, optionally followed by '+' and a ban "
         "column letter (like 'd' or 'd+a'); column 4, counted from 1, is 'd'")),
        ("bestmove d e", 11, "unexpected 'e'"),
        ("info value 1.5", 11, "value must be in [0, 1]"),
        ("info pv d 7", 10, "pv: '7' is not a move token"),
        ("info pv", 7, "'pv' needs at least one move token"),
        ("info depth 3", 5, "unknown info field 'depth'"),
        ("option name x type list default a", 19, "an option type is one of int, float, bool, str"),
        ("id version 2", 3, "'name' or 'author'"),
        ("Traceback (most recent call last):", 0, "unknown reply 'Traceback'"),
    ],
)
def test_a_bad_reply_is_rejected_saying_what_and_where(line: str, index: int, what: str) -> None:
    with pytest.raises(ProtocolError) as caught:
        parse_reply(line)
    assert caught.value.index == index
    assert what in caught.value.reason


def test_messages_refuse_values_that_would_not_fit_on_one_line() -> None:
    with pytest.raises(ValueError):
        SetPosition("7x6 dd")
    with pytest.raises(ValueError):
        Option("two words", "int", "3")
    with pytest.raises(ValueError):
        Error("two\nlines")
    assert str(Error.about(ValueError("two\nlines"))) == "error two lines"


# ---------------------------------------------------------------------------
# Our agents behind the protocol
# ---------------------------------------------------------------------------


def test_the_handshake_names_the_engine_and_lists_the_agents_parameters_as_options() -> None:
    lines = converse("random:seed=1", "c4lab", "isready", "quit")
    assert lines == [
        "id name c4lab random:seed=1",
        "id author c4lab",
        "option name seed type int default 1",
        "c4labok",
        "readyok",
    ]


def test_go_answers_info_then_a_legal_bestmove() -> None:
    lines = converse("random:seed=1", "c4lab", "position 7x6:dddc", "go time 0.5", "isready", "quit")
    assert lines[-1] == "readyok"  # answered once the search is done: a script gets the search's answer
    info, best = (parse_reply(line) for line in lines[-3:-1])
    assert isinstance(info, Info) and info.time is not None  # random knows no value, no line
    assert isinstance(best, BestMove) and Position.parse("7x6:dddc").is_legal(best.move)


def test_bad_input_answers_an_error_line_and_the_engine_goes_on() -> None:
    lines = converse(
        "random:seed=1",
        "position 7x6:4453",  # RULES.md's message, relayed
        "go",  # the bad position left no position
        "fly away",
        "go time soon",
        "setoption name depth value 3",
        "setoption name seed value three",
        "position 7x6/Xb2:aabbccd",  # a finished game is a position (A has won) ...
        "go",  # ... but not one to move in
        "position 7x6:dd",
        "go iterations 1",
        "isready",
        "quit",
        "isready",  # never read: the engine has quit
    )
    errors, last = lines[:-3], lines[-3:-1]
    assert lines[-1] == "readyok"
    assert [line.split(" ", 1)[0] for line in errors] == ["error"] * 7
    assert errors[0] == f"error {_message(lambda: Position.parse('7x6:4453'))}"
    assert "character 4" in errors[0]
    assert errors[1] == "error go: no position (send 'position <position string>' first)"
    assert "unknown command 'fly'" in errors[2]
    assert "time needs a positive number, not 'soon'" in errors[3]
    assert "unknown option 'depth' (options: seed)" in errors[4]
    assert "seed='three' is not a valid int" in errors[5]
    assert "the game is over in 7x6/Xb2:aabbccd" in errors[6]
    assert last[0].startswith("info") and Position.parse("7x6:dd").is_legal(Move.parse(last[1].split()[1]))


def test_an_error_line_quotes_a_bad_line_as_sent_so_that_its_index_points_into_the_quote() -> None:
    # Extra spaces between words are allowed; the error line squeezed them out of
    # its quote ('go time soon' at character 9: the 'o' of 'soon' there, its 's' as sent).
    with pytest.raises(ProtocolError) as caught:
        parse_command("go  time soon")
    assert str(Error.about(caught.value)) == (
        "error bad message 'go  time soon' at character 9: time needs a positive number, not 'soon'")
    assert "go  time soon"[9:] == "soon"
    # Review: an escape in the quote before the token (a tab shown as \t) made the index point before it;
    # it counts in the quote now, and the exception's ``index`` stays the line's.
    for line, token in (("go\ttime soon", "soon"), ("go\t\u200b time 1", "\u200b"), ("c4lab\t\tfly", "fly")):
        with pytest.raises(ProtocolError) as caught:
            parse_command(line)
        message = str(caught.value)
        shown = message[len("bad message '"):message.index("' at character ")]
        at = int(message.split("' at character ")[1].split(":")[0])
        assert shown[at:].startswith(repr(token)[1:-1]), message
        assert caught.value.index is not None and line[caught.value.index:].startswith(token)
    # A message of several lines is still one line, each joined by one space.
    assert Error.about(ValueError("first line\n    second  line\r\n")).message == "first line second  line"
    assert Error.about(ValueError("")).message == "ValueError"
    # Only '\n' and '\r' end a line: a line separator in a message is one of its characters, where its index counts.
    assert Error.about(ValueError("a\u2028b\x85c\x0cd at character 6")).message == "a\u2028b\x85c\x0cd at character 6"


def _message(action) -> str:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError) as caught:
        action()
    return str(caught.value)


@pytest.mark.parametrize(
    ("line", "token"),
    [
        ("position 7x6'd x", "x"),  # a quote mark before the token, shown escaped: \'
        ("position 7x6'\"d x", "x"),  # both marks: the one repr quotes with is escaped
        ("position é'd\u2003 x", "x"),  # non-ASCII text before it: 'é' is one character, U+2003 shown \u2003
        ("position 😀\\d x", "x"),  # a character beyond the BMP, and a backslash (shown \\\\)
        # a long line is quoted by its first 60 characters: the mark is that quote's, not the whole line's
        ("position 7x6'd x" + " " * 50 + '"', "x"),
        ("position\t7x6'd\t\tx" + " " * 50 + '"', "x"),
    ],
)
def test_the_index_of_an_error_points_at_the_token_in_the_quote_it_shows(line: str, token: str) -> None:
    """Review: "at character N" counts in the quote the message shows,
    escapes included; a long line's quote (its first 60 characters) may
    choose another quote mark than the whole line would, and N counted the
    escapes of the whole line's: one character late for each quote mark
    before the token."""
    with pytest.raises(ProtocolError) as caught:
        parse_command(line)
    found = re.fullmatch(r"bad message ('.*'|\".*\")(?: \(\d+ characters\))? at character (\d+): .*",
                         str(caught.value))
    assert found is not None, str(caught.value)
    shown, at = found[1][1:-1], int(found[2])
    assert shown[at:].startswith(repr(token)[1:-1]), (shown, at)
    assert caught.value.index is not None and line[caught.value.index:].startswith(token)  # the line's own
    assert f"at character {at}:" in str(Error.about(caught.value))  # and so in the error line sent


@pytest.mark.parametrize("junk", ["\x1b[31m", "\x85d", "\u2028", "\x00", "\x0c"])
def test_an_error_line_holds_no_control_character_of_the_line_it_answers(junk: str) -> None:
    """Review: the words of a bad ``position`` line were named raw in the
    reason ("unexpected 'x' after 'position 7x6<ESC>[31m'"): a terminal's
    escape sequence went out in the error line to the driver, and a line
    separator (U+0085, U+2028) was made a space by ``Error.about``.  They
    are shown escaped, as in the quote of the line."""
    with pytest.raises(ProtocolError) as caught:
        parse_command(f"position 7x6{junk} x")
    message = str(caught.value)
    assert message.isprintable(), message
    assert message.endswith(f"unexpected 'x' after 'position 7x6{repr(junk)[1:-1]}'")
    assert Error.about(caught.value).message == message  # one line as it is: nothing made a space


def test_setoption_rebuilds_the_agent_with_the_new_parameter() -> None:
    def moves_with(*setup: str) -> list[str]:
        out = io.StringIO()
        positions = ("9x8/Xd3/Bb1:b+ac", "9x8/Xd3/Bb1:e", "7x6", "7x6:dd")
        script = "".join(f"{line}\n" for line in setup) + "".join(f"position {p}\ngo\n" for p in positions) + "isready\n"
        serve("random:seed=1", io.StringIO(script), out)
        return [line for line in out.getvalue().splitlines() if line.startswith("bestmove")]

    assert moves_with("setoption name seed value 7") == moves_with("setoption name seed value 7")
    assert any(moves_with(f"setoption name seed value {s}") != moves_with() for s in range(2, 6))


@pytest.fixture
def misbehaving(monkeypatch: pytest.MonkeyPatch) -> str:
    return register_misbehaving(monkeypatch)


@pytest.mark.parametrize(("how", "what"), [
    ("full", "error go: illegal move 'a' in '7x6:aaaaaa': column a is full (played by the agent)"),
    ("none", "error go: illegal move 'None' in '7x6:aaaaaa': the agent answered None, which is not a move"),
    ("number", "error go: illegal move '3' in '7x6:aaaaaa': the agent answered 3, which is not a move"),
    ("alone", ("error go: the agent failed: Misbehaving.analyse must return (Move, Analysis), "
              "not Move.parse('b')")),
    ("no-analysis", ("error go: the agent failed: Misbehaving.analyse must return (Move, Analysis), "
                    "not an analysis None (Analysis() is an empty one)")),
    ("percent", ("error go: the agent failed: Analysis.value must be an expected score for the side "
                 "to move in [0, 1] (win 1, draw 0.5, loss 0), not 75.0")),
    # an exception: where it was raised, the agent's own file and line, as ``c4lab move`` says it
    ("raise", f"error go: the agent raised RuntimeError: my agent's own bug at {testkit.__file__}:"),
])
def test_an_agent_that_answers_go_wrongly_is_one_error_line_and_the_engine_goes_on(
    misbehaving: str, how: str, what: str
) -> None:
    out = io.StringIO()
    serve(f"{misbehaving}:how={how}", io.StringIO("position 7x6:aaaaaa\ngo\nisready\n"), out)
    said, ready = out.getvalue().splitlines()
    if what.endswith(":"):  # then the line number
        assert said.startswith(what) and said.removeprefix(what).isdigit(), said
    else:
        assert said == what
    assert ready == "readyok"


def test_c4lab_move_exits_2_for_an_engine_that_will_not_start_and_1_for_one_that_fails_a_search(
    tmp_path: Path,
) -> None:
    """The ``--agent`` at fault, nothing answered: 2, as a bad option; a
    search that fails: 1, and the answers before it stay on stdout."""
    def move(cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "c4lab", "move", "7x6", "7x6:dd", "7x6:ddd",
                               "--agent", f"engine:cmd={cmd}"], check=False, capture_output=True, text=True, timeout=120)

    garbage = move(fake_engine(tmp_path, "print('bestmove d')", on_hello="print('garbage')"))
    assert (garbage.returncode, garbage.stdout) == (2, "")
    assert "sent 'garbage' during the handshake" in garbage.stderr
    second = move(fake_engine(tmp_path, "print('bestmove d') if position == '7x6' else sys.exit(3)"))
    assert (second.returncode, second.stdout) == (1, "d\n")
    assert second.stderr.strip().endswith("exited with status 3 while we waited for 'bestmove' for 7x6:dd")


def test_id_author_names_who_wrote_the_agent(misbehaving: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """c4lab for its own agents; for another's, the author its package's
    metadata gives, else the top-level module that holds the agent."""
    import email.message
    import importlib.metadata

    def authors(spec: str) -> list[str]:
        out = io.StringIO()
        serve(spec, io.StringIO("c4lab\n"), out)
        return [line for line in out.getvalue().splitlines() if line.startswith("id author")]

    assert authors("master") == ["id author c4lab"]
    assert authors(misbehaving) == ["id author testkit"]  # a module no installed package holds
    monkeypatch.setattr(importlib.metadata, "packages_distributions", lambda: {"testkit": ["my-agents"]})
    for meta, said in [
        ({"Author-email": '"Ann Lee" <ann@example.org>, Bo <bo@example.org>'}, "Ann Lee, Bo"),
        ({"Author": "Ann  Lee\n"}, "Ann Lee"),
        ({}, "testkit"),  # the package names no author
    ]:
        message = email.message.Message()  # what ``importlib.metadata.metadata`` answers
        for key, value in meta.items():
            message[key] = value
        monkeypatch.setattr(importlib.metadata, "metadata", lambda dist, message=message: message)
        assert authors(misbehaving) == [f"id author {said}"]

    def damaged() -> dict[str, list[str]]:  # another package's metadata that cannot be read
        raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")

    monkeypatch.setattr(importlib.metadata, "packages_distributions", damaged)
    assert authors(misbehaving) == ["id author testkit"]  # the engine starts all the same


def test_an_agent_that_refuses_a_position_is_its_own_message_as_c4lab_move_gives_it(tmp_path: Path) -> None:
    """A ``ValueError`` is an agent's refusal of the position (writing-agents.md),
    as ``ntuple`` refuses a board its network was not trained for: its
    message alone, not an agent that failed; the engine reads on."""
    from c4lab.agents.ntuple_net import Network

    net = tmp_path / "net.npz"
    Network.create(Position.parse("4x4").variant, tuples=4, length=4).save(net)
    out = io.StringIO()
    serve(f"ntuple:weights={net}", io.StringIO("position 7x6:dd\ngo\nposition 4x4:bb\ngo\nisready\n"), out)
    lines = out.getvalue().splitlines()
    assert lines[0] == f"error go: the network in {net} was trained for the board 4x4, not 7x6"
    assert lines[-2].startswith("bestmove ") and lines[-1] == "readyok"


def test_a_setoption_that_leaves_no_agent_is_an_error_and_the_old_agent_plays_on(tmp_path: Path) -> None:
    cmd = fake_engine(tmp_path, "print('bestmove d')")
    out = io.StringIO()
    serve(f"engine:cmd={cmd}", io.StringIO("setoption name cmd value /nonexistent/engine\nposition 7x6\ngo\nisready\n"), out)
    lines = out.getvalue().splitlines()
    assert lines.pop() == "readyok"
    assert lines[0].startswith("error setoption: no agent with cmd=/nonexistent/engine (the old settings stay): "
                               "EngineError: cannot start engine '/nonexistent/engine'")
    assert lines[-1] == "bestmove d"
    assert len(lines) == 3 and lines[1].startswith("info")


def test_a_ban_move_goes_out_as_a_whole_token() -> None:
    landing = Position.parse("4x4/Ba1")  # A's piece in a lands on the bonus cell
    seed, move = next(
        (s, m) for s in range(100) if (m := make_agent(f"random:seed={s}").choose(landing)).ban is not None
    )
    out = io.StringIO()
    serve(f"random:seed={seed}", io.StringIO("position 4x4/Ba1\ngo\nisready\n"), out)
    assert out.getvalue().splitlines()[-2:] == [f"bestmove {move.token}", "readyok"]


def test_a_bad_agent_spec_is_refused_before_the_protocol_starts() -> None:
    with pytest.raises(SpecError):
        serve("nope", io.StringIO("c4lab\n"), io.StringIO())
    done = subprocess.run(
        [*ENGINE, "--agent", "nope"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 2 and "unknown agent 'nope'" in done.stderr and done.stdout == ""


# ---------------------------------------------------------------------------
# External engines as agents
# ---------------------------------------------------------------------------


def test_an_engine_plays_a_whole_game_through_play_game() -> None:
    engine = make_agent(f"engine:cmd={engine_cmd('heuristic:seed=1')},handshake={START:g},timeout={START:g}")
    assert isinstance(engine, EngineAgent)
    try:
        assert engine.engine_name == "c4lab heuristic:seed=1"
        assert set(engine.engine_options) == {"seed"}
        for start in (Position.parse("7x6"), Position.parse("9x8/Xd3/Bb5")):
            record = play_game(engine, make_agent("random:seed=2"), start, Budget(time=1.0))
            final = record.final
            assert final.is_over
            replay = start
            for move in final.moves[start.ply:]:
                assert replay.is_legal(move)
                replay = replay.play(move)
        # the heuristic engine does not lose to random play
        assert record.final.result in ("A", "draw")
    finally:
        engine.close()


def test_an_engine_program_is_told_to_stop_when_its_agent_is() -> None:
    """Review: ``request_stop`` on the agent of an engine program (the
    arena's move limit, a driver's "move now") was not passed on: the
    program thought its whole ``go time 60``.  It is now the protocol's
    ``stop``, and the program answers with the best move found so far; a
    request made before ``go`` stops the next search at once, until it is
    cleared (as for every agent)."""
    import threading

    position = Position.parse("9x8/Xd3")
    with make_agent(f"engine:cmd={engine_cmd('uct:seed=1')},handshake={START:g},timeout={START:g}") as engine:
        engine.analyse(position, Budget(iterations=100))  # started, and warmed up for the board
        threading.Timer(1.0, engine.request_stop).start()
        began = time.monotonic()
        move, analysis = engine.analyse(position, Budget(time=60))
        assert position.is_legal(move)
        assert time.monotonic() - began < 20  # a minute's budget: stopped after about a second
        assert analysis.iterations is not None and analysis.iterations > 100
        began = time.monotonic()
        assert position.is_legal(engine.analyse(position, Budget(time=60))[0])  # still asked to stop
        assert time.monotonic() - began < 20
        engine.stop_request.clear()
        move, analysis = engine.analyse(position, Budget(time=0.5))
        assert analysis.seconds is not None and analysis.seconds >= 0.4  # the next search runs to its budget


def test_a_spec_sets_the_engines_own_options() -> None:
    """``options=NAME=VALUE;NAME=VALUE`` goes out as ``setoption`` after the
    handshake: our engine serving ``random`` plays as ``random:seed=3`` once
    told ``seed`` 3.  An option the engine did not declare is refused, in
    one line; a malformed one before the program starts."""
    position = Position.parse("7x6:dd")
    with make_agent(f"engine:cmd={engine_cmd('random')},handshake={START:g},timeout={START:g},options=seed=3;") as engine:
        assert engine.options == {"seed": "3"}
        moves = [engine.choose(position.play(*[Move(c) for c in range(k)])) for k in range(5)]
    local = make_agent("random:seed=3")
    assert moves == [local.choose(position.play(*[Move(c) for c in range(k)])) for k in range(5)]
    # An option its handshake did not declare is not sent: an engine that ignored it would play on as if it took
    # it (review: `options=levle=3` to an engine that ignores unknown options ran the whole experiment).
    with pytest.raises(EngineError, match=r"has no option 'depth' \(the options its handshake declares: .*seed.*\)$"):
        make_agent(f"engine:cmd={engine_cmd('random')},handshake={START:g},timeout={START:g},options=seed=3;depth=2")
    for bad, what in (("seed", r"options item 0 \('seed'\) is not NAME=VALUE"),
                      ("seed=1;seed=2", "option 'seed' is given twice"),
                      ("my option=1", "option 'my option': an option name is one word")):
        with pytest.raises(SpecError, match=what):
            make_agent(f"engine:cmd=/no/such/engine,options={bad}")


def test_a_spec_gives_the_engine_its_own_time_or_iterations_a_move(tmp_path: Path) -> None:
    """``time=`` and ``iterations=`` are the engine's budget, as
    ``uct:time=0.5`` is uct's: the arena gives no budget of its own, so its
    engines were told a bare ``go`` and could not be given a time a move.
    A budget the caller gives still comes first; a bad one is refused."""
    fake = fake_engine(tmp_path, "print('info string [' + rest + ']'); print('bestmove a')")
    start = Position.parse("7x6")
    for spec, sent in (("", "[]"), (",time=0.25", "[time 0.25]"), (",iterations=70", "[iterations 70]"),
                       (",time=0.5,iterations=9", "[time 0.5 iterations 9]")):
        with make_agent(f"engine:cmd={fake}{spec}") as engine:
            assert engine.analyse(start)[1].note == sent
            assert engine.analyse(start, Budget(iterations=7))[1].note == "[iterations 7]"
    with make_agent(f"engine:cmd={fake},time=0.25") as engine:
        record = play_game(engine, make_agent("random:seed=1"), start, policy="judge", limit=5, margin=1)
        assert record.forfeit is None
    over = ArenaConfig((f"engine:cmd={fake},time=5", "random"), games=2, board="5x4", limit=2, margin=1)
    assert [n for n in over.check_agents()  # an engine may ignore the time it is given: "if"
            if "asks its engine for 5 s a move, more than limit=2 s + margin=1 s: if the engine takes it," in n]
    assert [n for n in ArenaConfig(("uct:time=5", "random"), games=2, board="5x4", limit=2, margin=1).check_agents()
            if "uct:time=5 thinks 5 s a move, more than limit=2 s + margin=1 s: each of its games will be lost" in n]
    command = {"limit": "--limit", "margin": "--margin"}  # as c4lab arena calls them
    assert [n for n in ArenaConfig(("uct:time=5", "random"), games=2, board="5x4", limit=2, margin=1).check_agents(
            command) if "more than --limit 2 s + --margin 1 s" in n]
    for bad, what in (("time=0", "a time budget must be a positive number"),
                      ("iterations=0", "an iteration budget must be from 1")):
        with pytest.raises(SpecError, match=f"agent 'engine': {what}"):
            make_agent(f"engine:cmd={fake},{bad}")


def test_the_engine_sees_positions_with_ban_tokens_and_may_answer_one(tmp_path: Path) -> None:
    cmd = fake_engine(
        tmp_path, "print('info value 0.5 pv b+a c string ' + position); print('bestmove b+a')"
    )
    with EngineAgent(cmd) as engine:
        position = Position.parse("9x8/Xd3/Bb1")
        move, analysis = engine.analyse(position, Budget(time=1))
        assert move == Move.parse("b+a")
        assert analysis.pv == (Move(1, 0), Move(2)) and analysis.value == 0.5
        assert analysis.note == "9x8/Xd3/Bb1"  # the position went out as written
    with EngineAgent(engine_cmd("random:seed=1"), handshake=START, timeout=START) as ours:
        after_ban = Position.parse("9x8/Xd3/Bb1:b+ac")
        assert after_ban.is_legal(ours.choose(after_ban))


def test_a_spec_without_cmd_or_a_program_that_cannot_start_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="needs cmd="):
        make_agent("engine")
    with pytest.raises(EngineError, match="cannot start engine '/no/such/engine'"):
        EngineAgent("/no/such/engine")


def test_an_engine_printing_garbage_is_an_error_naming_what_it_printed(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match=r"sent 'Hello, world!' during the handshake: unknown reply 'Hello,'"):
        EngineAgent(fake_engine(tmp_path, "pass", on_hello="print('Hello, world!')"))
    # A bestmove whose token is no move at all is an answer, in step: an illegal move, as for an agent in Python.
    no_move = pytest.raises(EngineIllegalMove, match=r"illegal move '4' in '7x6': engine .* chose it: .*not a move token")
    with EngineAgent(fake_engine(tmp_path, "print('bestmove 4')")) as engine, no_move:
        engine.choose(Position.parse("7x6"), Budget(time=1))


def test_an_engines_line_ends_at_lf_or_crlf_and_a_lone_cr_is_a_fault_naming_where(tmp_path: Path) -> None:
    crlf = fake_engine(tmp_path, on_go="sys.stdout.write('info value 0.5\\r\\nbestmove d\\r\\n')")
    with EngineAgent(shlex.split(crlf)) as agent:
        move, analysis = agent.analyse(Position.parse("7x6:dd"))
    assert (move, analysis.value) == (Move(3), 0.5)
    cr = fake_engine(tmp_path, on_go="print('info value 0.5\\rbestmove d')")
    with EngineAgent(shlex.split(cr)) as agent, pytest.raises(EngineError) as caught:
        agent.analyse(Position.parse("7x6:dd"))
    assert not isinstance(caught.value, EngineIllegalMove | EngineTimeout)
    assert ("sent 'info value 0.5\\rbestmove d' during 'go': a carriage return inside the line "
            "(a line ends in '\\n' or '\\r\\n')") in str(caught.value)


@pytest.mark.parametrize("reply", [b"bestmove d\xc3", b"info value 0.5 pv d\xff", b"info string caf\xe9"])
def test_a_byte_of_an_engine_that_is_no_utf8_is_a_fault_naming_it_and_where(tmp_path: Path, reply: bytes) -> None:
    # read as U+FFFD before, which 'info' took silently and 'bestmove' called an illegal move
    on_go = f"sys.stdout.buffer.write({reply!r} + b'\\n'); sys.stdout.flush(); print('bestmove d')"
    with EngineAgent(shlex.split(fake_engine(tmp_path, on_go=on_go))) as agent, pytest.raises(EngineError) as caught:
        agent.analyse(Position.parse("7x6:dd"))
    assert not isinstance(caught.value, EngineIllegalMove | EngineTimeout)
    byte = reply.decode("latin-1")[-1]
    shown = reply.decode("utf-8", errors="replace")
    assert (f"sent {shown!r} during 'go': byte 0x{ord(byte):02X} is not UTF-8 (a line is UTF-8 text)"
            in str(caught.value))


def test_an_engine_that_hangs_is_given_up_and_killed(tmp_path: Path) -> None:
    engine = EngineAgent(fake_engine(tmp_path, "time.sleep(60)"), margin=0.5)
    popen = engine.program
    assert popen is not None
    start = time.monotonic()
    with pytest.raises(EngineTimeout, match=r"sent no 'bestmove' for 7x6 within 0.7 s$"):
        engine.choose(Position.parse("7x6"), Budget(time=0.2))
    assert time.monotonic() - start < 5
    assert popen.poll() is not None
    with pytest.raises(EngineError, match="not running"):
        engine.choose(Position.parse("7x6"), Budget(time=0.2))


def test_an_engine_that_exits_is_an_error_with_its_status_and_last_words(tmp_path: Path) -> None:
    with EngineAgent(fake_engine(tmp_path, "print('out of ideas', file=sys.stderr); sys.exit(3)")) as engine:
        with pytest.raises(EngineError, match=r"exited with status 3 \(its stderr: out of ideas\)"):
            engine.choose(Position.parse("7x6"), Budget(time=1))
        engine.new_game()  # starts it again
        assert engine.program is not None and engine.program.poll() is None


def test_an_engine_error_or_an_illegal_move_is_an_error_and_the_engine_stays(tmp_path: Path) -> None:
    cmd = fake_engine(tmp_path, "print('error not today') if position == '7x6' else print('bestmove a')")
    with EngineAgent(cmd) as engine:
        with pytest.raises(EngineError, match="answered 'go' for 7x6 with an error: not today"):
            engine.choose(Position.parse("7x6"))
        illegal = r"illegal move 'a' in '4x4:aaaa': engine .* chose it: column a is full \(legal: b c d\)$"
        with pytest.raises(EngineIllegalMove, match=illegal):
            engine.choose(Position.parse("4x4:aaaa"))
        assert engine.choose(Position.parse("4x4:b")) == Move(0)


def test_the_program_ends_on_close_and_at_garbage_collection() -> None:
    engine = EngineAgent(engine_cmd("random"), handshake=START, timeout=START)
    popen = engine.program
    assert popen is not None
    engine.close()
    engine.close()
    assert popen.poll() is not None
    engine = EngineAgent(engine_cmd("random"), handshake=START, timeout=START)
    popen = engine.program
    assert popen is not None
    del engine
    gc.collect()
    assert popen.wait(timeout=5) is not None
