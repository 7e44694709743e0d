"""Every command meets bad input with a one-line error and a non-zero exit
status: never a traceback, and nothing written by a command that only reads."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from c4lab.cli import main
from c4lab.cli.options import PAGE_ONLY, TERMINAL_ONLY
from testkit import Misbehaving, register_misbehaving

BAD = [
    ("show", "7x6:zz"),
    ("move", "7x6", "--agent", "master:time=-1"),
    ("move", "7x6", "--agent", "master:time=0"),
    ("move", "7x6", "--agent", "uct:c=nan"),
    ("move", "7x6", "--time", "inf"),
    ("move", "7x6", "--agent", "human"),  # no one at the keyboard
    ("move", "7x6", "--agent", "engine:cmd=/nonexistent/engine"),
    ("solve", "7x6:zz"),
    ("solve", "--timeout", "-1", "7x6"),
    ("solve", "--timeout", "inf", "7x6"),  # a timer past the end of time: it overflowed
    ("solve", "--timeout", "nan", "7x6"),
    ("book", "build", "--depth", "2", "--timeout", "inf"),
    ("move", "7x6", "--agent", "uct:iterations=100000000000000000000"),  # more than the kernels' 64 bits
    ("move", "7x6", "--agent", "uct", "--iterations", "100000000000000000000"),
    ("games", "--db", "/nonexistent-folder/g.sqlite", "--limit", "100000000000000000000"),  # SQLite's 64 bits
    ("arena", "random", "heuristic", "--limit", "inf", "--out", "/nonexistent-folder/run.jsonl"),
    ("serve", "--max-think", "inf"),
    ("play", "--no-browser", "--board", "bogus"),  # refused before a server starts
    ("play", "--no-browser", "--board", "7x6:abababa"),
    ("agents", "--bogus"),
    ("play", "--port", "99999"),
    ("play", "--tui", "--board", "99x99"),
    ("serve", "--port", "99999"),
    ("connect", "not a link"),
    ("games", "--db", "/nonexistent-folder/games.sqlite"),
    ("engine", "--agent", "nobody"),
    ("prepare", "--agent", "nobody"),
    ("prepare", "--jobs", "0"),
    ("prepare", "--agent", "qlearning"),  # was: "left out", then "ready: nothing to compile" and status 0
    ("engine", "--agent", "ntuple:weights=/nonexistent-folder/n.npz"),  # a file the spec names
    ("engine", "--agent", "qlearning:table=/nonexistent-folder/q.npz"),
    ("train", "qlearning", "--board", "9x9"),
    ("book", "build", "--depth", "99"),
    ("book", "build", "--depth", "0", "--budget", "0"),  # no time: an empty book written for nothing
    ("book", "info", "/nonexistent-folder/book.npz"),
    ("bench", "solver", "--sets", "nope"),
    ("bench", "accuracy", "nobody"),
    ("bench", "accuracy", "random", "human"),  # was: a traceback once the run read the end of stdin
    ("bench", "accuracy", "engine:cmd=/nonexistent/engine", "--no-openspiel"),  # was: EngineError's traceback
    ("arena", "random"),
    ("arena", "random", "random", "--out", "/nonexistent-folder/run.jsonl"),
    ("report", "/nonexistent-folder/run.jsonl"),
    ("bench", "--seconds", "0"),
    ("play", "--tui", "--delay", "-1"),
    ("play", "--no-browser", "--seed", "3"),  # the terminal game's: the page draws its own (it was ignored)
    ("play", "--no-browser", "--delay", "1"),
    ("play", "--tui", "--board", "7x6:abababa"),  # a finished game
    ("play", "--no-browser", "-2", "nobody"),
    ("serve", "--forfeit-after", "-1"),
    ("serve", "--allow-agent", "nobody"),
    ("serve", "--allow-agent", "engine"),
    ("serve", "--max-think", "0.5"),
    ("serve", "--agent-threads", "0"),
    ("train", "ntuple", "--out", "/proc/n.npz"),
    ("train", "ntuple", "--board", "6x5/Bc2", "--bonus", "--out", "/tmp/never-written.npz"),  # two bonus cells
    ("train", "ntuple", "--curve", "/proc/curve"),
    ("train", "qlearning", "--out", "/proc/q.npz"),
    ("train", "qlearning", "--curve", "/nonexistent-folder/curve"),
    ("arena", "random", "random", "--out", "/proc/run.jsonl"),
]
#: The bad inputs above whose error is not the person's input (no one at the
#: keyboard): a failure, status 1.
NOT_INPUT = {("move", "7x6", "--agent", "human")}


@pytest.mark.parametrize("args", BAD, ids=lambda a: " ".join(a))
def test_bad_input_is_an_error_message_never_a_traceback(args: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, list(args), input="")
    assert result.exit_code not in (0, None), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    assert result.output.strip(), "no message at all"
    if args not in NOT_INPUT:  # bad input: one line that says what and where, status 2
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(("args", "named"), [
    (("--board", "3x3"), "--board"),
    (("--board", "7x6:abababa"), "--board"),
    (("-2", "nobody"), "--player2"),
    (("-1", "master:time=abc"), "--player1"),
    (("-1", "human", "-2", "qlearning:table=/nonexistent-folder/q.npz"), "--player2"),
])
@pytest.mark.parametrize("where", [("--tui",), ("--no-browser",)], ids=["terminal", "page"])
def test_play_names_the_option_of_a_bad_board_or_player(
    where: tuple[str, ...], args: tuple[str, ...], named: str
) -> None:
    """Review: in the terminal game (``--tui``) a bad board or player was
    'Error: unknown agent 'nobody' (...)': which of the two players, or the
    board, was not said; the page's refusal named the option."""
    result = CliRunner().invoke(main, ["play", *where, *args], input="")
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '{named}': "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(("start", "why"), [
    ("zz", "invalid position 'zz': 'z' at character 0"),
    ("7x6:abababa", "the game is over in 7x6:abababa: start from a position with a move to play"),
])
def test_book_build_names_its_from_option_for_a_bad_start(tmp_path: Path, start: str, why: str) -> None:
    """A start that does not parse or whose game is over is one line naming
    ``--from``, and no book is made (it read 'Error: invalid position ...',
    naming no option)."""
    out = tmp_path / "book.npz"
    result = CliRunner().invoke(main, ["book", "build", "--depth", "2", "--out", str(out), "--from", start])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '--from': {why}"), result.output
    assert len(result.output.strip().splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize(("args", "refusal"), [
    (("train", "ntuple", "--games", "10", "--probes", "0", "--board", ""), "'--board': an empty board"),
    (("train", "qlearning", "--episodes", "10", "--board", ""), "'--board': an empty board"),
    (("play", "--tui", "--board", " "), "'--board': an empty board (blank)"),
    (("arena", "random", "random:seed=1", "--games", "2", "--jobs", "1", "--out", "{tmp}/run.jsonl",
      "--board", ""), "'--board': an empty board"),
    (("book", "build", "--depth", "0", "--out", "{tmp}/book.npz", "--from", ""), "'--from': an empty position"),
    (("book", "info", ""), "'PATH': an empty file name"),  # as the help names it, not click's '[PATH]'
    (("book", "info", "{tmp}"), "'PATH': File '{tmp}' is a directory."),
    (("arena", "random", "random:seed=1", "--games", "2", "--jobs", "1", "--out", "{tmp}/run.jsonl",
      "--openings", ""), "'--openings': an empty file name"),
    (("report", ""), "'RESULTS': an empty file name"),
    (("report", "{tmp}/run.jsonl", "--out-dir", " "), "'--out-dir': an empty folder name (blank)"),
    (("bench", "solver", "--limit", "1", "--dir", ""), "'--dir': an empty folder name"),
    (("games", "--db", ""), "'--db': an empty file name"),
    (("play", "--no-browser", "--db", ""), "'--db': an empty file name"),
    (("serve", "--db", "  ", "--port", "99999"), "'--db': an empty file name (blank)"),  # never a server
], ids=lambda a: " ".join(a) if isinstance(a, tuple) else None)
def test_an_empty_value_is_refused_naming_its_option_not_taken_for_the_option_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: tuple[str, ...], refusal: str
) -> None:
    """A variable left unset (``--board "$BOARD"``) gives an option an empty
    value: ``train ntuple`` trained a 7x6 network, ``play``, ``arena`` and
    ``train qlearning`` said "invalid position ''" (the arena naming
    ``--board`` twice), not the words the other options use, ``book build --from``
    built from the empty board, ``arena --openings`` played its default
    starts, ``report --out-dir`` and ``bench solver --dir`` used their
    default folders, and ``--db`` said "'.' is a folder"."""
    monkeypatch.chdir(tmp_path)  # a default file the command might write lands here, and is seen
    result = CliRunner().invoke(main, [a.format(tmp=tmp_path) for a in args], input="")
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: Invalid value for {refusal.format(tmp=tmp_path)}\n"
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("command", [
    ("play", "--tui"), ("play", "--no-browser"), ("arena", "random", "heuristic", "--games", "2"),
    ("train", "ntuple", "--games", "1"),
], ids=lambda c: " ".join(c))
def test_bonus_with_a_board_that_names_its_own_bonus_cell_is_refused_naming_both(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    """c4lab play and c4lab arena ignored --bonus here without a word (a board has one bonus cell)."""
    out = ("--out", str(tmp_path / "out")) if command[0] != "play" else ()
    result = CliRunner().invoke(main, [*command, "--board", "6x5/Xc2/Bb2", "--bonus", *out], input="")
    assert result.exit_code == 2, result.output
    assert result.output == ("Error: Invalid value for '--bonus': --board 6x5/Xc2/Bb2 has its bonus cell (b2) "
                             "already, and --bonus would draw another: give one or the other\n")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("where", [("--tui",), ("--no-browser",)], ids=["terminal", "page"])
def test_bonus_with_a_board_that_has_moves_is_refused_as_a_board_that_is_not_empty(where: tuple[str, ...]) -> None:
    result = CliRunner().invoke(main, ["play", *where, "--board", "7x6:d", "--bonus"], input="")
    assert (result.exit_code, result.output) == (
        2, ("Error: Invalid value for '--board': a bonus cell can only be added to an empty board, not to 7x6:d, "
           "which has moves (a position string names its own: 8x7/Bd1:dd)\n"))


@pytest.mark.parametrize("keys", ["", "exit\n"], ids=["no input", "exit"])
def test_move_with_the_human_agent_says_no_move_came_from_the_keyboard(keys: str) -> None:
    """Review: the line was 'agent 'human' raised QuitGame:  at .../human.py:90',
    a crash report with a file of c4lab's for a person who typed no move."""
    result = CliRunner().invoke(main, ["move", "7x6", "--agent", "human"], input=keys)
    assert result.exit_code == 1
    assert result.output.endswith("e to exit: Error: the human agent reads its moves from the keyboard, and none "
                                  "came (the input ended, or e or exit was typed)\n")  # after the prompt it answers


@pytest.mark.parametrize("content", [b"\xff\xfe\x00token\n", b"", b"\n  \n", b"a" * 10_000_000, "/dev/zero"],
                         ids=["not text", "empty", "blank", "one long line", "endless"])
def test_a_bad_token_file_is_one_line_that_names_it(tmp_path: Path, content: bytes | str) -> None:
    """Review: a token file that was not text (the wrong file given) ended
    ``c4lab connect`` in a UnicodeDecodeError traceback; an empty one did not
    say which file. Review: a file of one long line was read whole, sent as
    the token, and /dev/zero was read until memory ran out."""
    token_file = Path(content) if isinstance(content, str) else tmp_path / "seat.token"
    if isinstance(content, bytes):
        token_file.write_bytes(content)
    result = CliRunner().invoke(main, ["connect", "--token-file", str(token_file), "http://127.0.0.1:9/r/room"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "--token-file" in result.output and str(token_file) in result.output


@pytest.mark.parametrize("option, value", [
    ("--max-think", "0.5"), ("--max-iterations", "0"), ("--max-depth", "-1"), ("--agent-threads", "0"),
    ("--allow-agent", "engine"), ("--allow-agent", "nosuch"),
])
def test_a_servers_bad_limit_names_its_option(option: str, value: str) -> None:
    result = CliRunner().invoke(main, ["serve", option, value])
    # before: "threads must be at least 1"; --allow-agent's read "Error: --allow-agent 'nosuch': ..."
    assert result.exit_code == 2 and result.output.startswith(f"Error: Invalid value for '{option}': "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    if value == "nosuch":
        assert "'nosuch': no such agent (known agents: " in result.output
    if value == "engine":  # not "no such agent": it runs whatever program a visitor names
        assert "never offers it" in result.output


@pytest.mark.parametrize("option, value", [("--seed", "3"), ("--delay", "1"), ("--color", None), ("--no-color", None)])
def test_play_in_the_browser_refuses_the_terminal_games_options_and_says_whose_they_are(
    option: str, value: str | None
) -> None:
    """The page draws its boards and its first player, paces the agents and
    has its own look: ``--seed``, ``--delay`` and ``--color`` without
    ``--tui`` would be ignored, so they are refused, naming ``--tui``,
    before a server starts."""
    result = CliRunner().invoke(main, ["play", "--no-browser", option, *([value] if value else [])])
    assert result.exit_code == 2, result.output
    assert f"{option} is for the terminal" in result.output and "(--tui)" in result.output
    if value is None:  # analyse's colours too
        result = CliRunner().invoke(main, ["analyse", "7x6", "--no-browser", option])
        assert result.exit_code == 2 and f"{option} is for the terminal (--tui)" in result.output, result.output


@pytest.mark.parametrize(("args", "typed", "said"), [
    (("play",), "--bored", "'--board', '--seed' (for --tui) or '--port' (for the page)"),
    (("play",), "--colour", "'--color' (for --tui) or '--no-color' (for --tui)"),
    (("play",), "--nobrowser", "'--no-browser' (for the page)"),
    (("analyse", "7x6"), "--prot", "'--port' (for the page)"),
])
def test_a_suggestion_for_a_mistyped_option_says_which_game_takes_it(
    args: tuple[str, ...], typed: str, said: str
) -> None:
    """Review: ``play --bored`` was asked "Did you mean one of: '--board',
    '--port', '--seed'?", and each of the last two then said that it was
    for the other game only: the suggestion says so at once."""
    result = CliRunner().invoke(main, [*args, typed])
    assert result.exit_code == 2
    assert result.output == f"Error: No such option '{typed}'. Did you mean {said}?\n"
    result = CliRunner().invoke(main, ["play", "--xyz"])  # nothing close: click's line as it was
    assert result.output == "Error: No such option '--xyz'.\n"


@pytest.mark.parametrize("option", sorted(PAGE_ONLY | TERMINAL_ONLY))
def test_an_option_a_suggestion_names_as_one_games_is_refused_by_the_other(tmp_path: Path, option: str) -> None:
    """The suggestion's "(for the page)" and "(for --tui)" hold: ``play``
    refuses each option so named when it opens the other game."""
    value = {"--port": ["8000"], "--db": [str(tmp_path / "g.sqlite")], "--network": [str(tmp_path / "n.npz")],
             "--seed": ["3"], "--delay": ["1"]}.get(option, [])
    page = option in PAGE_ONLY
    result = CliRunner().invoke(main, ["play", "--tui" if page else "--no-browser", option, *value], input="exit\n")
    assert result.exit_code == 2, result.output
    assert f"Error: {option} is for the {'page' if page else 'terminal'}" in result.output, result.output


@pytest.mark.parametrize(("args", "named"), [
    (("--time", "-1"), "--time"),
    (("--time", "nan"), "--time"),
    (("--iterations", "0"), "--iterations"),
    (("--time", "1", "--iterations", "0"), "--iterations"),
    (("--agent", "nobody"), "--agent"),
    (("--agent", "hard:time=0"), "--agent"),
])
def test_move_names_the_option_of_a_bad_agent_or_budget(args: tuple[str, ...], named: str) -> None:
    """Review: ``move 7x6 --time -1`` said 'a time budget must be a positive
    number of seconds ...' and ``--agent nobody`` 'unknown agent', naming
    no option."""
    result = CliRunner().invoke(main, ["move", "7x6", *args])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '{named}': "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize("spec", ["nobody", "hard:time=0", "ntuple:weights=/nonexistent-folder/n.npz"])
def test_engine_names_its_agent_option_for_a_bad_spec_as_move_does(spec: str) -> None:
    """Review: ``c4lab engine --agent nobody`` said 'Error: unknown agent
    'nobody' ...', naming no option, where ``c4lab move --agent nobody``
    names ``--agent``; nothing is written on standard output (no handshake)."""
    result = CliRunner().invoke(main, ["engine", "--agent", spec], input="c4lab\n")
    assert result.exit_code == 2, result.output
    assert result.output.startswith("Error: Invalid value for '--agent': "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output


@pytest.mark.parametrize(("args", "named"), [
    (("arena", "nobody", "random", "--games", "2"), "SPEC"),
    (("arena", "random", "human", "--games", "2"), "SPEC"),
    (("arena", "random", "uct:c=x", "--games", "2"), "SPEC"),
    (("agents", "nobody"), "NAME"),
])
def test_a_bad_agent_given_as_an_argument_names_it_as_move_names_its_option(
    tmp_path: Path, args: tuple[str, ...], named: str
) -> None:
    """Review: ``c4lab arena nobody random`` said 'Error: unknown agent
    ...' where ``move --agent nobody`` says "Invalid value for '--agent'";
    no results file is left behind."""
    out = tmp_path / "run.jsonl"
    result = CliRunner().invoke(main, [*args, *(("--out", str(out)) if args[0] == "arena" else ())])
    assert result.exit_code == 2, result.output
    assert result.output.startswith(f"Error: Invalid value for '{named}': "), result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert not out.exists()


@pytest.mark.parametrize(("option", "value", "why"), [
    ("--db", "games.sqlite", "stores no game"),
    ("--port", "8000", "runs no server"),
    ("--no-browser", None, "opens no browser"),
])
@pytest.mark.parametrize("command", [("play", "--board", "4x4"), ("analyse", "4x4")], ids=["play", "analyse"])
def test_the_terminal_game_refuses_the_pages_options_and_says_whose_they_are(
    tmp_path: Path, command: tuple[str, ...], option: str, value: str | None, why: str
) -> None:
    """Review: ``play --tui --db games.sqlite`` started the game and
    ignored the file (the terminal game stores none: the person looked
    there for the game in vain), as ``--port`` and ``--no-browser``."""
    given = [option, str(tmp_path / value) if option == "--db" else value] if value else [option]
    result = CliRunner().invoke(main, [*command, "--tui", *given], input="exit\n")
    assert result.exit_code == 2, result.output
    what = "the terminal game" if command[0] == "play" else "the terminal analysis board"
    assert result.output == f"Error: {option} is for the page in the browser: {what} (--tui) {why}\n"
    assert not (tmp_path / "games.sqlite").exists()


def test_a_listing_creates_no_file(tmp_path: Path) -> None:
    missing = tmp_path / "games.sqlite"
    result = CliRunner().invoke(main, ["games", "--db", str(missing)])
    assert result.exit_code != 0 and "no game database" in result.output
    assert not missing.exists()


def test_a_listing_before_any_stored_game_says_where_games_will_be_kept_and_succeeds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    default = tmp_path / ".c4lab" / "games.sqlite"
    monkeypatch.setattr("c4lab.server.storage.DEFAULT_DB", default)
    result = CliRunner().invoke(main, ["games"])
    assert result.exit_code == 0, result.output
    assert result.stdout == ""
    assert "no games stored yet" in result.stderr and str(default) in result.stderr
    assert "terminal game keeps none" in result.stderr
    assert not default.exists() and not default.parent.exists()


def test_an_agent_whose_package_is_missing_is_listed_as_unavailable_with_its_install_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "kaggle_environments" else real(name, *a))
    listing = CliRunner().invoke(main, ["agents"])
    line = next(x for x in listing.output.splitlines() if x.startswith("kaggle:"))
    assert "[unavailable: needs kaggle_environments" in line and "pip install" in line
    result = CliRunner().invoke(main, ["move", "7x6", "--agent", "kaggle"])
    assert result.exit_code == 2 and "pip install" in result.output and "Traceback" not in result.output


def test_a_first_start_says_that_the_engine_is_being_prepared() -> None:
    import io

    from numba import njit
    from rich.console import Console

    from c4lab.ui.preparing import MESSAGE, announce_preparation

    out = io.StringIO()
    with announce_preparation(Console(file=out, force_terminal=True)):

        @njit
        def fresh(x: int) -> int:  # compiled here, never cached
            return x + 1

        assert fresh(1) == 2
    assert MESSAGE in out.getvalue()



def test_a_busy_status_shows_all_along_and_says_so_while_the_engine_is_prepared() -> None:
    """The analysis board's status while it scores the columns: its own
    words, and the first start's notice while numba compiles."""
    import io

    from numba import njit
    from rich.console import Console

    from c4lab.ui.preparing import MESSAGE, announce_preparation

    out = io.StringIO()
    with announce_preparation(Console(file=out, force_terminal=True), busy="scoring"):

        @njit
        def fresh(x: int) -> int:  # compiled here, never cached
            return x + 3

        assert fresh(1) == 4
    assert MESSAGE in out.getvalue() and "scoring... " in out.getvalue()
    quiet = io.StringIO()
    with announce_preparation(Console(file=quiet, force_terminal=True), busy="scoring"):
        pass  # nothing compiled: the busy words only
    assert "scoring... " in quiet.getvalue() and MESSAGE not in quiet.getvalue()


def test_the_notice_follows_the_thread_that_runs_the_command() -> None:
    """A command that runs its work on a thread of its own (so that Ctrl-C
    is seen at once) still says that the engine is being prepared."""
    import io
    import threading

    from numba import njit
    from rich.console import Console

    from c4lab.ui.preparing import MESSAGE, announce_preparation

    out = io.StringIO()

    def work() -> None:
        with announce_preparation(Console(file=out, force_terminal=True)):

            @njit
            def fresh(x: int) -> int:  # compiled here, never cached
                return x + 2

            assert fresh(1) == 3

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert MESSAGE in out.getvalue()


def test_a_server_on_a_port_already_taken_is_one_line_and_leaves_no_file(tmp_path: Path) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        db = tmp_path / "games.sqlite"
        result = CliRunner().invoke(main, ["serve", "--port", str(port), "--db", str(db)])
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"Error: cannot listen on 127.0.0.1:{port}: Address already in use"
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(("how", "then"), [
    ("full", "a"),  # legal on the empty board: the run goes on to the next position
    ("none", "error: illegal move 'None' in '7x6': agent 'misbehaving:how=none' answered None, which is not a move"),
])
def test_move_judges_an_agents_answer_an_illegal_one_is_an_error_line_not_a_move(
    monkeypatch: pytest.MonkeyPatch, how: str, then: str
) -> None:
    """As an engine's illegal ``bestmove`` is: that position's error line, status 2."""
    spec = f"{register_misbehaving(monkeypatch)}:how={how}"
    result = CliRunner().invoke(main, ["move", "7x6:aaaaaa", "7x6", "--agent", spec])
    assert result.exit_code == 2, result.output
    first = {
        "full": f"error: illegal move 'a' in '7x6:aaaaaa': column a is full (played by agent '{spec}')",
        "none": f"error: illegal move 'None' in '7x6:aaaaaa': agent '{spec}' answered None, which is not a move",
    }[how]
    assert result.stdout.splitlines() == [first, then]


@pytest.mark.parametrize(("how", "what"), [
    ("alone", ("Error: agent 'misbehaving:how=alone': Misbehaving.analyse must return (Move, Analysis), "
              "not Move.parse('b')")),
    ("no-analysis", ("Error: agent 'misbehaving:how=no-analysis': Misbehaving.analyse must return "
                    "(Move, Analysis), not an analysis None (Analysis() is an empty one)")),
    ("percent", ("Error: agent 'misbehaving:how=percent': Analysis.value must be an expected score for the side "
                 "to move in [0, 1] (win 1, draw 0.5, loss 0), not 75.0")),
    ("raise", "Error: agent 'misbehaving:how=raise' raised RuntimeError: my agent's own bug at "),
])
def test_move_tells_an_agent_that_fails_in_one_line_with_where_not_a_traceback(
    monkeypatch: pytest.MonkeyPatch, how: str, what: str
) -> None:
    spec = f"{register_misbehaving(monkeypatch)}:how={how}"
    result = CliRunner().invoke(main, ["move", "7x6:aaaaaa", "--agent", spec])
    assert result.exit_code == 1, result.output
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith(what) and len(result.stderr.splitlines()) == 1
    if how == "raise":  # where the agent's own code raised
        assert result.stderr.rstrip().endswith(f"testkit.py:{inspect.unwrap(Misbehaving.analyse).__code__.co_firstlineno + 11}")


@pytest.mark.parametrize(("spec", "what"), [("ntuple:weights", "n-tuple network"), ("qlearning:table", "Q-table")])
def test_a_folder_given_as_an_agents_file_is_said_to_be_a_folder(tmp_path: Path, spec: str, what: str) -> None:
    """Review: it was "cannot read n-tuple network DIR: [Errno 21] Is a
    directory: 'DIR'", the file named twice, in Python's words."""
    result = CliRunner().invoke(main, ["move", "7x6", "--agent", f"{spec}={tmp_path}"])
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: Invalid value for '--agent': {tmp_path} is a folder, not a c4lab {what} file\n"


def test_a_byte_that_is_not_utf8_in_a_position_is_named_as_a_byte_at_its_character() -> None:
    """Review: a position file's byte 0xFF was "non-ASCII character U+DCFF"
    (Python's stand-in for the byte), a character nobody wrote."""
    said = "'\\udcff' at character 5: a byte 0xFF that is not UTF-8 text (the notation is ASCII)"
    argument = CliRunner().invoke(main, ["show", "7x6:d\udcffd"])
    assert argument.exit_code == 2 and said in argument.output, argument.output
    piped = CliRunner().invoke(main, ["show", "-"], input=b"7x6:d\xffd\n")
    assert piped.exit_code == 2 and piped.output.startswith("error: stdin line 1: ") and said in piped.output


@pytest.mark.parametrize(("click_refuses", "we_refuse"), [
    (["move", "7x6", "--time", "x"], ["move", "7x6", "--time", "-1"]),
    (["play", "--tui", "-1", "human", "--first", "3"], ["play", "--tui", "--board", "3x3"]),
])
def test_a_value_the_project_refuses_is_worded_as_click_words_one_it_refuses(
    click_refuses: list[str], we_refuse: list[str]
) -> None:
    """Review: click said "Invalid value for '--time'" and the project's own
    refusals "Invalid value for --time" (and ``train-ntuple`` "invalid value
    for --lambda"): one form for both, click's."""
    form = re.compile(r"^Error: Invalid value for '--[a-z0-9-]+': \S")
    theirs = CliRunner().invoke(main, click_refuses, input="")
    ours = CliRunner().invoke(main, we_refuse, input="")
    assert theirs.exit_code == ours.exit_code == 2, (theirs.output, ours.output)
    assert form.match(theirs.output), theirs.output
    assert form.match(ours.output), ours.output


def test_arena_out_at_a_device_is_one_line_naming_the_option() -> None:
    """``--out /dev/null`` (a run whose results nobody keeps) wrote the
    header there, then ended in a traceback ("OSError: [Errno 22] Invalid
    argument", syncing a device): a pipe or a device is refused before the
    run, as a folder nobody may write in is."""
    result = CliRunner().invoke(main, ["arena", "random", "heuristic", "--games", "2", "--out", "/dev/null"])
    assert result.exit_code == 2, result.output
    assert result.output == ("Error: Invalid value for '--out': '/dev/null' is a pipe or a device, not a file: give "
                             "the name of a file on disk\n")
