"""The ``c4lab`` command-line contract: show, move, streaming, exit codes."""

from __future__ import annotations

import ast
import json
import pickle
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import c4lab
from c4lab.cli import main
from c4lab.learning.qlearning import TrainConfig
from c4lab.learning.settings import OptionOutOfRange
from testkit import stop_process

CONTRACT_FIELDS = {
    "position", "width", "height", "forbidden", "bonus", "to_move", "result",
    "win_line", "legal_moves", "empty_cells", "cells",
}


def run(*args: str, input: str | None = None):
    return CliRunner().invoke(main, list(args), input=input)


def test_show_json_prints_one_record_per_position() -> None:
    result = run("show", "--json", "7x6:dddc", "7x6/Xb2:aabbccd")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.output.splitlines()]
    assert len(records) == 2
    assert CONTRACT_FIELDS <= set(records[0])
    assert records[0]["cells"] == {"c1": "B", "d1": "A", "d2": "B", "d3": "A"}
    assert records[1]["result"] == "A" and records[1]["to_move"] is None
    assert records[1]["win_line"] == ["a1", "b1", "c1", "d1"]
    assert records[1]["legal_moves"] == []


def test_show_prints_the_canonical_position_and_the_board() -> None:
    result = run("show", "12x12/Xb1/Xa2")
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == "12x12/Xa2/Xb1"
    assert "A to move" in result.output


def test_show_says_how_a_finished_game_ended_in_the_words_of_every_other_screen() -> None:
    won, drawn = run("show", "4x4:abababa", "4x4:dcbacaaaddbcdbcb").output.strip().split("\n\n")
    assert won.splitlines()[-1] == "A (white) wins: four in a row (a1 a2 a3 a4); 9 empty cells; legal: -"
    assert drawn.splitlines()[-1] == "Draw: the board is full; 0 empty cells; legal: -"


def test_a_bad_position_answers_an_error_and_the_run_goes_on() -> None:
    result = run("show", "--json", "7x6:4453", "7x6:d")
    assert result.exit_code == 2
    bad, good = [json.loads(line) for line in result.output.splitlines()]
    assert bad["input"] == "7x6:4453" and "character 4" in bad["error"]
    assert good["position"] == "7x6:d"
    text = run("show", "7x6:z")
    assert text.exit_code == 2 and text.output.startswith("error: invalid position '7x6:z'")


def test_dash_reads_positions_from_stdin() -> None:
    result = run("show", "--json", "-", input="7x6\n8x8:zz\n9x8/Xd3:ddde\n")
    assert result.exit_code == 2
    lines = [json.loads(line) for line in result.output.splitlines()]
    assert [("error" in line) for line in lines] == [False, True, False]
    assert lines[1]["input"] == "8x8:zz" and lines[1]["error"].startswith("stdin line 2: invalid position")
    text = run("show", "-", input="7x6\n\n7x6:z\n")  # the line number counts the blank line
    assert text.exit_code == 2 and "error: stdin line 3: invalid position '7x6:z'" in text.output


@pytest.mark.parametrize("text", [" 7x6:dd", "7x6:dd ", "7x6:d d", "7x6:d\rd", "\t7x6", "7x6:dd\x00", "7x6:d\udcffd"],
                         ids=["a leading space", "a trailing space", "an inner space", "a lone CR", "a tab",
                              "a NUL", "a byte that is not UTF-8"])
@pytest.mark.parametrize("command", ["show", "solve"])
def test_a_line_of_stdin_is_refused_as_its_argument_is_at_the_same_character(command: str, text: str) -> None:
    """Review: stdin lines were stripped before the strict parser saw them,
    so ' 7x6:dd' and '7x6:dd\t' were answered from a pipe and refused as
    an argument (and the character numbers of an error counted from the
    first non-space).  Only the newline a pipe adds is dropped now."""
    argument = run(command, text)
    assert argument.exit_code == 2, argument.output
    said = argument.output.removeprefix("error: ").splitlines()[0]
    piped = CliRunner().invoke(main, [command, "-"], input=text.encode("utf-8", "surrogateescape") + b"\n7x6\n")
    assert piped.exit_code == 2, piped.output
    assert piped.output.splitlines()[0] == f"error: stdin line 1: {said}"
    assert len(piped.output.splitlines()) > 1  # the next line answered too


def test_stdin_drops_one_line_end_and_skips_empty_lines_only() -> None:
    # LF or CRLF (a file saved on Windows); the last line has no line end
    piped = run("show", "--json", "-", input="7x6:dd\n\n7x6:d\r\n \n7x6")
    records = [json.loads(line) for line in piped.output.splitlines()]
    assert [r.get("position") for r in records] == ["7x6:dd", "7x6:d", None, "7x6"]
    assert records[2] == {"input": " ", "error": records[2]["error"]}
    assert records[2]["error"].startswith("stdin line 4: invalid position ' ': at character 0")
    assert piped.exit_code == 2


def test_streaming_answers_each_line_as_soon_as_it_is_read() -> None:
    """A program can keep the command open and talk to it line by line."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "move", "-", "--agent", "random:seed=3"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdin and proc.stdout
        for text in ["7x6", "9x8/Xd3/Bb1:b+ac", "7x6:zz", "4x4:aabbccdd"]:
            proc.stdin.write(text + "\n")
            proc.stdin.flush()
            answer = proc.stdout.readline().strip()  # would hang if not flushed
            if text == "7x6:zz":
                assert answer.startswith("error:")
            elif text == "4x4:aabbccdd":
                assert "over" in answer
            else:
                assert answer in [m.token for m in __import__("c4lab").Position.parse(text).legal_moves()]
        proc.stdin.close()
        assert proc.wait(timeout=30) == 2
    finally:
        proc.kill()


def test_move_prints_a_legal_move_and_is_reproducible_with_a_seed() -> None:
    first = run("move", "9x8/Xd3/Bb1", "7x6:dd", "--agent", "random:seed=5")
    again = run("move", "9x8/Xd3/Bb1", "7x6:dd", "--agent", "random:seed=5")
    assert first.exit_code == 0 and first.output == again.output
    assert len(first.output.split()) == 2


def test_move_json_carries_the_move_and_the_analysis() -> None:
    result = run("move", "--json", "7x6", "--agent", "random:seed=1")
    record = json.loads(result.output)
    assert record["position"] == "7x6" and record["agent"] == "random:seed=1"
    assert record["move"] in list("abcdefg") and "analysis" in record


def test_move_without_an_agent_answers_with_the_level_a_new_game_offers() -> None:
    """Review: ``c4lab move 7x6`` played ``random``; a newcomer asking for
    a move expects a real one: the opponent a new game gives (``hard``)."""
    from c4lab.agents.catalogue import DEFAULT_LEVEL

    result = run("move", "--json", "7x6:dddddd")  # column d full
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["agent"] == DEFAULT_LEVEL == "hard"
    four = run("move", "7x6:ababab")  # A's fourth in a wins at once: a level takes it, random seldom
    assert four.exit_code == 0 and four.output.split() == ["a"], four.output
    for command, option in (("move", "spec"), ("play", "player2")):
        param = next(p for p in main.commands[command].params if p.name == option)
        assert param.get_default(click.Context(click.Command("x"))) == DEFAULT_LEVEL, command


@pytest.mark.parametrize("spec", ["nobody", "random:seed=x", "random:colour=red"])
def test_a_bad_agent_spec_is_a_usage_error(spec: str) -> None:
    result = run("move", "7x6", "--agent", spec)
    assert result.exit_code == 2 and "agent" in result.output


def test_agents_lists_names_and_parameters() -> None:
    result = run("agents")
    assert result.exit_code == 0
    assert "random:" in result.output and "seed=None" in result.output and "human:" in result.output
    # A level's own value is marked as its own (the help names the family's default).
    assert "iterations=750  (int, hard's setting)" in result.output


def test_agents_given_names_lists_those_only() -> None:
    # A newcomer's "c4lab agents master" was "Got unexpected extra argument".
    result = run("agents", "master", "hard:iterations=100")
    assert result.exit_code == 0, result.output
    assert [line.split(":")[0] for line in result.output.splitlines() if not line.startswith(" ")] == ["master", "hard"]
    assert "    time=1.0  (float) seconds per move" in result.output
    # master's line names its first step, the exact solver (docs/agents.md), which it left out
    assert result.output.startswith("master: our strongest: the exact solver's win, draw or loss with 32 empty cells")
    wrong = run("agents", "mastr")
    assert wrong.exit_code == 2
    assert wrong.output.startswith("Error: Invalid value for 'NAME': unknown agent 'mastr' (did you mean 'master'?) "
                                   "(known agents: engine, hard, ")
    assert len(wrong.output.splitlines()) == 1


def test_plays_help_shows_how_to_give_a_forbidden_or_a_bonus_cell() -> None:
    # "a position string to start from" left a newcomer asking how to forbid a cell.
    text = " ".join(run("play", "--help").output.split())
    assert "(6x5/Xc2: c2 forbidden; 8x7/Bd1: the bonus cell on d1)" in text
    assert "'random' (the enhanced setup: a random size from 4x4 to 12x12 and one forbidden cell)" in text
    assert "Add a random bonus cell to a board that has none." in text
    assert "Add a random bonus cell to a board that has none (a new one per pair)." in " ".join(
        run("arena", "--help").output.split())


def _every_command(command: click.Command, path: str = "c4lab") -> Iterator[tuple[str, click.Command]]:
    """``command`` and every command under it, each with its whole name."""
    yield path, command
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            yield from _every_command(sub, f"{path} {name}")


def test_every_option_of_every_command_says_what_it_is_for() -> None:
    # `c4lab arena --help` showed "--executor [local|ray]", `serve` "--port
    # INTEGER" and `train qlearning` "--seed INTEGER" with not a word.
    bare = [f"{path} {param.opts[0]}" for path, command in _every_command(main)
            for param in command.params if isinstance(param, click.Option) and not (param.help or "").strip()]
    assert not bare, f"options without a help text: {bare}"


@pytest.mark.parametrize("command", ["play", "analyse", "serve", "games"])
def test_the_help_of_db_says_where_the_games_go_when_it_is_left_out(command: str) -> None:
    # "--db FILE  Game database (SQLite file)." said nothing of ~/.c4lab/games.sqlite.
    from c4lab.server.storage import DEFAULT_DB

    shown = "~/" + DEFAULT_DB.relative_to(Path.home()).as_posix()
    assert f"--db FILE Game database (SQLite file; default: {shown})." in " ".join(run(command, "--help").output.split())


def test_the_help_of_the_terminal_games_seed_and_delay_says_what_leaving_them_out_does() -> None:
    from c4lab.ui.terminal import WATCH_DELAY

    text = " ".join(run("play", "--help").output.split())
    assert "of the terminal game (default: none, new draws each run)." in text
    assert (f"(terminal game; default: {WATCH_DELAY:g} when two agents play on a colour terminal, else 0)."
            in text)


@pytest.mark.parametrize(("command", "option", "default"), [
    (("solve",), "--timeout", "none, search to the end"),
    (("book", "build"), "--timeout", "none, search to the end"),
    (("book", "build"), "--budget", "none, until the book is done"),
])
def test_a_time_limit_left_out_is_said_in_the_help(command: tuple[str, ...], option: str, default: str) -> None:
    text = " ".join(run(*command, "--help").output.split())
    assert re.search(rf"{option} FLOAT [^\[]*\(.*default: {default}\)", text), text


def test_the_help_of_arena_and_report_says_what_their_arguments_are() -> None:
    arena_help = " ".join(run("arena", "--help").output.split())
    assert "Each SPEC is an agent spec, NAME[:key=value,...]" in arena_help
    assert "`c4lab agents` lists the names and parameters." in arena_help
    assert "--sprt TEXT Stop a two-agent match as soon as a sequential probability ratio test decides" in arena_help
    assert "logistic Elo, as cutechess reads them, not fishtest's default normalized Elo" in arena_help
    report_help = " ".join(run("report", "--help").output.split())
    assert "RESULTS is the results file of `c4lab arena`" in report_help


def test_bench_accuracys_help_says_plainly_when_openspiel_plays() -> None:
    # It read "OpenSpiel's C++ MCTS at the time a move of the first SPEC with one (time=T) where it is installed".
    text = " ".join(run("bench", "accuracy", "--help").output.split())
    assert ("As a yardstick, OpenSpiel's C++ MCTS plays the same positions, given the time a move of the first "
            "SPEC that sets one (time=T), where OpenSpiel is installed") in text


def test_moves_help_says_its_budget_replaces_the_specs() -> None:
    # `move 7x6:dd --agent uct:iterations=100 --time 0.3` searches 0.3 s, not 100 iterations.
    text = " ".join(run("move", "--help").output.split())
    assert ("--time FLOAT Seconds per move, in place of the spec's time= and iterations= (with --iterations: "
            "whichever runs out first).") in text
    assert ("--iterations INTEGER Iterations per move, in place of the spec's time= and iterations= (with --time: "
            "whichever runs out first).") in text


def test_a_budget_an_agent_cannot_use_is_noted_not_taken_silently() -> None:
    """Review: ``move 7x6 --agent heuristic --time 0.5`` answered as if the
    time counted; the move is the same, and standard error says so."""
    result = run("move", "7x6", "--agent", "heuristic:seed=1", "--time", "0.5")
    assert result.exit_code == 0 and result.stdout == "d\n"
    assert result.stderr == "note: heuristic searches nothing a budget could bound: --time changes nothing\n"
    both = run("move", "7x6", "--agent", "random:seed=1", "--time", "0.5", "--iterations", "3")
    assert both.stderr.endswith("--time and --iterations change nothing\n")
    assert run("move", "7x6", "--agent", "uct:seed=1", "--iterations", "100").stderr == ""


def test_the_top_help_says_where_the_notation_is_told_and_how_to_get_a_commands_help() -> None:
    text = " ".join(run("--help").output.split())
    assert "(the manual's page \"The rules and the notation\", docs/rules.md, sums it up)" in text
    assert "`c4lab COMMAND --help` tells a command's options." in text


def test_book_infos_help_says_a_path_shows_that_book_alone() -> None:
    # With PATH, `c4lab book info` prints that file's line only, not the database's.
    assert "with PATH, that book file only." in " ".join(run("book", "info", "--help").output.split())


def _printed_by(code: str) -> str:
    """What a fresh Python prints running ``code``."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def test_help_does_not_import_the_engine() -> None:
    code = (
        "import sys; from click.testing import CliRunner; from c4lab.cli import main; "
        "r = CliRunner().invoke(main, ['--help']); assert r.exit_code == 0; "
        "heavy = [m for m in ('numba', 'numpy', 'rich', 'c4lab.rules') if m in sys.modules]; "
        "print(heavy)"
    )
    assert _printed_by(code) == "[]"


def test_games_with_nothing_stored_loads_neither_the_server_nor_the_engine(tmp_path: Path) -> None:
    # "no game database" or "no games stored yet" comes at once: not after
    # importing the web server (a second on a slow machine) and numba.
    code = (
        "import sys; from click.testing import CliRunner; from c4lab.cli import main; "
        f"r = CliRunner().invoke(main, ['games', '--db', {str(tmp_path / 'none.sqlite')!r}]); "
        "heavy = [m for m in ('numba', 'fastapi', 'uvicorn', 'c4lab.rules') if m in sys.modules]; "
        "print(r.exit_code, heavy)"
    )
    assert _printed_by(code) == "2 []"


def test_the_packages_list_their_public_names_before_loading_them() -> None:
    # dir() and a shell's completion show Position, make_agent... while the
    # engine they live in is still unloaded.
    code = (
        "import sys, c4lab, c4lab.rules, c4lab.agents, c4lab.engine; "
        "names = {p.__name__: [n for n in p.__all__ if n not in dir(p)] "
        "for p in (c4lab, c4lab.rules, c4lab.agents, c4lab.engine)}; "
        "print(names, 'numba' in sys.modules)"
    )
    assert _printed_by(code) == "{'c4lab': [], 'c4lab.rules': [], 'c4lab.agents': [], 'c4lab.engine': []} False"


def test_the_console_script_and_module_entry_point_work() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "c4lab", "show", "--json", "7x6:d"], check=False, capture_output=True, text=True
    )
    assert out.returncode == 0 and json.loads(out.stdout)["position"] == "7x6:d"


def test_show_explains_the_symbols_of_the_board_it_prints() -> None:
    result = run("show", "7x6/Xd3/Bb1:b+ac", "9x8/Xd3/Bb1", "7x6:dd")
    assert result.exit_code == 0, result.output
    first, second, third = result.output.strip().split("\n\n")
    assert "X forbidden cell; # ban piece" in first
    assert "X forbidden cell; * bonus cell (empty)" in second
    assert "forbidden" not in third and "bonus" not in third


def human_seat(name: str | None) -> dict[str, object]:
    """A human's seat as a server stores it (``Room.to_row``)."""
    return {"kind": "human", "name": name, "spec": None, "token_hash": None, "absent_since": None}


def test_a_local_game_left_open_is_listed_as_abandoned(tmp_path: Path) -> None:
    from c4lab.server.storage import LEFT_OPEN, GameRow, GameStore

    path = tmp_path / "games.sqlite"
    store = GameStore(path)
    seats = {"A": human_seat("Ann"), "B": human_seat(None)}
    store.save(GameRow("OLD", "local", "7x6:d", 0, seats))
    store.save(GameRow("NEW", "local", "7x6:dd", 0, seats))
    store.save(GameRow("ONLINE", "online", "7x6:ddd", 0, seats))
    long_ago = time.time() - LEFT_OPEN - 60
    store._db.execute("UPDATE games SET updated = ? WHERE code IN ('OLD', 'ONLINE')", (long_ago,))
    store.close()
    result = CliRunner().invoke(main, ["games", "--db", str(path), "--json"])
    status = {r["code"]: r["status"] for r in map(json.loads, result.output.splitlines())}
    assert status == {"OLD": "abandoned", "NEW": "playing", "ONLINE": "playing"}
    text = CliRunner().invoke(main, ["games", "--db", str(path)]).output
    assert "Ann vs -  abandoned  7x6:d" in text


def test_a_room_that_ended_before_its_first_move_is_no_game_unless_all_are_asked_for(tmp_path: Path) -> None:
    """Review: ``c4lab games`` listed every room whose host left before a
    guest came ("online Ann vs -  abandoned  6x5/Xc2"), where the server's
    /api/games leaves them out as no game; ``--all`` lists them."""
    from c4lab.server.storage import GameRow, GameStore

    path = tmp_path / "games.sqlite"
    store = GameStore(path)
    seats = {"A": human_seat("Ann"), "B": human_seat(None)}
    store.save(GameRow("EMPTY", "online", "6x5/Xc2", 0, seats, status="over", reason="abandoned"))
    store.save(GameRow("FROM", "online", "7x6:dd", 2, seats, status="over", reason="abandoned"))
    store.close()
    result = CliRunner().invoke(main, ["games", "--db", str(path)])
    assert result.stdout == "" and "no games stored" in result.stderr and "--all lists those" in result.stderr
    store = GameStore(path)
    store.save(GameRow("PLAYED", "online", "6x5/Xc2:c", 0, seats, status="over", reason="abandoned"))
    store.close()
    listed = CliRunner().invoke(main, ["games", "--db", str(path), "--json"])
    assert [json.loads(line)["code"] for line in listed.stdout.splitlines()] == ["PLAYED"]
    every = CliRunner().invoke(main, ["games", "--db", str(path), "--json", "--all"])
    assert sorted(json.loads(line)["code"] for line in every.stdout.splitlines()) == ["EMPTY", "FROM", "PLAYED"]


@pytest.mark.parametrize("command", [["play", "--no-browser"], ["serve"]])
def test_the_address_is_printed_once_the_server_accepts_connections(tmp_path: Path, command: list[str]) -> None:
    """A script (or a browser) that connects the instant the line appears
    is answered, never refused (issue 27: it was printed before the socket
    listened, and four connections out of four were refused)."""
    import re
    import socket

    from c4lab.server.run import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", *command, "--port", str(port), "--db", str(tmp_path / "g.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout
        line = proc.stdout.readline()
        match = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        assert match and int(match.group(1)) == port, line
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:  # at once: no retry, no sleep
            conn.sendall(b"GET /api/limits HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := conn.recv(65536):
                answer += chunk
        assert answer.startswith(b"HTTP/1.1 200"), answer[:200]
    finally:
        stop_process(proc)


@pytest.mark.parametrize("command", [["play", "--no-browser"], ["serve"], ["analyse", "7x6:dd", "--no-browser"]])
def test_port_0_listens_on_a_free_port_and_prints_it(tmp_path: Path, command: list[str]) -> None:
    """``--port 0`` asks for a free port, as the operating system's own
    port 0 does: the address printed names the port it got, and answers
    at once (a script starting several servers need not pick ports; was:
    "0 is not in the range 1<=x<=65535")."""
    import re
    import urllib.request

    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", *command, "--port", "0", "--db", str(tmp_path / "g.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout
        line = proc.stdout.readline()
        match = re.search(r"at http://127\.0\.0\.1:(\d+)/", line)
        assert match and int(match.group(1)) > 0, line
        with urllib.request.urlopen(f"http://127.0.0.1:{match.group(1)}/api/limits", timeout=10) as answer:
            assert answer.status == 200
    finally:
        stop_process(proc)


@pytest.mark.parametrize("command", [["play", "--no-browser"], ["serve"]])
def test_ctrl_c_pressed_again_and_again_stops_the_server_with_one_line(tmp_path: Path, command: list[str]) -> None:
    """An impatient person presses Ctrl-C until the server has gone: it
    shuts down once, says "interrupted" once and exits with 130 (uvicorn
    raised each captured press again: tracebacks, "Aborted!", status 1)."""
    import os
    import signal

    from c4lab.server.run import free_port

    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", *command, "--port", str(free_port()), "--db", str(tmp_path / "g.sqlite")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout and "Ctrl-C stops" in proc.stdout.readline()
        for _ in range(100):
            if proc.poll() is not None:
                break
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(0.03)
        _, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    # (serve's log lines, each with its time, say the server starting and stopping: once each)
    logged = [line for line in stderr.splitlines() if re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ", line)]
    assert sum("Shutting down" in line for line in logged) == (command == ["serve"])
    said = [line for line in stderr.splitlines() if line.strip() and line not in logged]
    assert said == ["interrupted"], stderr


def test_games_says_who_won_and_how_in_words(tmp_path: Path) -> None:
    from c4lab.server.storage import GameRow, GameStore

    path = tmp_path / "games.sqlite"
    store = GameStore(path)
    seats = {"A": human_seat("Ann"), "B": human_seat("Bob")}
    store.save(GameRow("FOUR", "local", "7x6:adadadgd", 0, seats, status="over", result="B", reason="four"))
    store.save(GameRow("GIVEN", "online", "7x6:dd", 0, seats, status="over", result="A", reason="resign"))
    store.save(GameRow("FULL", "local", "4x4", 0, seats, status="over", result="draw", reason="full"))
    store.close()
    text = CliRunner().invoke(main, ["games", "--db", str(path)]).output
    assert "Ann vs Bob  B (black), Bob, wins: four in a row  7x6:adadadgd" in text
    assert "Ann vs Bob  A (white), Ann, wins: B (black) resigned  7x6:dd" in text
    assert "Ann vs Bob  Draw: the board is full  4x4" in text
    assert "(four)" not in text

    cut = CliRunner().invoke(main, ["games", "--db", str(path), "--limit", "2"])
    assert cut.stdout.count("Ann vs Bob") == 2  # the newest two, and a word that more are stored
    assert "(the newest 2 games shown: --limit N shows more)" in cut.stderr
    one = CliRunner().invoke(main, ["games", "--db", str(path), "--limit", "1"])
    assert "(the newest game shown: --limit N shows more)" in one.stderr  # not "the newest 1 games"
    whole = CliRunner().invoke(main, ["games", "--db", str(path), "--limit", "3"])
    assert whole.stdout.count("Ann vs Bob") == 3 and "shown" not in whole.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
def test_games_at_a_narrow_terminal_breaks_a_line_between_words_and_piped_keeps_one_a_game(tmp_path: Path) -> None:
    """Review: a listing line (about 80-100 characters) broke in the middle
    of a word at the terminal's edge ("playi" / "ng"); at a terminal it
    now goes on, indented, from a space, the position string kept whole."""
    import os  # lazy: the pseudo-terminal's only
    import pty  # lazy: as above (POSIX only)

    from c4lab.server.storage import GameRow, GameStore

    path = tmp_path / "games.sqlite"
    store = GameStore(path)
    seats = {"A": human_seat("Ann"), "B": human_seat("Bob")}
    store.save(GameRow("FOUR", "online", "12x12/Xf4/Bc2:cc+agghhgghh", 0, seats, status="playing"))
    store.close()
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "60", "LINES": "24"}
    process = subprocess.Popen([sys.executable, "-m", "c4lab", "games", "--db", str(path)], stdin=follower,
                               stdout=follower, stderr=follower, env=env, close_fds=True)
    os.close(follower)
    shown = b""
    try:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the command ended: its terminal is closed
                break
            if not chunk:
                break
            shown += chunk
        assert process.wait(timeout=120) == 0, shown
    finally:
        if process.poll() is None:
            process.kill()
        os.close(leader)
    lines = shown.decode().splitlines()
    assert lines[0].endswith("  FOUR  online Ann vs Bob  playing"), lines
    assert lines[1] == "    12x12/Xf4/Bc2:cc+agghhgghh", lines
    piped = CliRunner().invoke(main, ["games", "--db", str(path)]).stdout
    assert piped.count("\n") == 1 and "FOUR  online Ann vs Bob  playing  12x12/Xf4/Bc2:cc+agghhgghh" in piped


def test_games_on_a_database_without_games_says_so(tmp_path: Path) -> None:
    from c4lab.server.storage import GameStore

    path = tmp_path / "games.sqlite"
    GameStore(path).close()
    result = CliRunner().invoke(main, ["games", "--db", str(path)])
    assert result.exit_code == 0 and result.stdout == ""
    assert f"no games stored in {path} yet" in result.stderr


def test_play_opens_the_page_only_once_the_server_accepts_connections(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket
    import threading

    from c4lab.server import run as run_module

    servers: list = []
    real_make_server = run_module.make_server

    def make_server(*args, **kwargs):
        servers.append(real_make_server(*args, **kwargs))
        return servers[-1]

    answered: list[str] = []
    done = threading.Event()

    def open_page(url: str) -> None:  # the browser: it asks for the page at once
        with socket.create_connection(("127.0.0.1", port), timeout=5) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            answered.append(conn.recv(64).decode(errors="replace"))
        done.set()

    monkeypatch.setattr(run_module, "make_server", make_server)
    monkeypatch.setattr(run_module, "open_page", open_page)
    monkeypatch.setattr(run_module, "settle_collector", lambda: None)  # (not in the test process)
    port = run_module.free_port()
    lines: list[str] = []
    thread = threading.Thread(
        target=run_module.run_in_foreground, args=(tmp_path / "g.sqlite", "127.0.0.1", port),
        kwargs={"forfeit_after": 120.0, "local": True, "open_browser": True, "say": lines.append}, daemon=True,
    )
    thread.start()
    try:
        assert done.wait(30)
    finally:
        if servers:
            servers[0].should_exit = True
        thread.join(20)
    assert answered and answered[0].startswith("HTTP/1.1 200"), answered
    assert lines[0].startswith(f"c4lab game at http://127.0.0.1:{port}/")

# -- one home for every default ----------------------------------------------------


def _field_defaults(*classes: type) -> dict[str, object]:
    from dataclasses import MISSING, fields

    return {f.name: f.default for cls in classes for f in fields(cls) if f.default is not MISSING}


def _homes() -> dict[str, dict[str, object]]:
    """The settings each command gives, by their home: name -> default."""
    from c4lab.arena.schedule import ArenaConfig
    from c4lab.learning.qlearning import TrainConfig
    from c4lab.server import presence
    from c4lab.server.guard import GuardOptions
    from c4lab.server.limits import AgentLimits

    server = {
        **_field_defaults(GuardOptions, AgentLimits),
        "forfeit_after": presence.FORFEIT_AFTER, "idle_after": presence.IDLE_AFTER,
    }
    return {"serve": server, "play": server, "train qlearning": _field_defaults(TrainConfig),
            "arena": _field_defaults(ArenaConfig)}


#: Options named otherwise than the setting they give.
ALIASES = {"max_think": "max_time", "agent_threads": "threads", "expire_idle": "idle_after"}


def _options(command: click.Command, path: str = "") -> Iterator[tuple[str, click.Option]]:
    if isinstance(command, click.Group):
        for name, sub in command.commands.items():
            yield from _options(sub, f"{path} {name}".strip())
    for param in command.params:
        if isinstance(param, click.Option):
            yield path, param


def test_every_default_of_a_setting_has_one_home() -> None:
    """An option that gives a setting of a dataclass (or a module's constant)
    reads its default from there; nothing writes it again, neither an
    option nor a function's default elsewhere in the package."""
    homes = _homes()
    given: list[str] = []
    for command, option in _options(main):
        home = homes.get(command, {})
        name = ALIASES.get(option.name or "", option.name or "")
        if name not in home or option.is_flag or option.multiple:
            continue
        if getattr(option, "home", None) is None:  # the command's own choice, not a copy of the setting's
            assert option.default != home[name], f"c4lab {command} --{option.name} writes its default again"
            continue
        given.append(f"{command} --{option.name}")
        assert option.get_default(click.Context(click.Command("x"))) == home[name], (command, option.name)
    assert {"serve --forfeit_after", "serve --max_think", "serve --expire_idle", "train qlearning --alpha",
            "arena --limit"} <= set(given)
    # ... and no function of the package writes a server setting's default again
    server = homes["serve"]
    package = Path(c4lab.__file__).parent
    for path in package.rglob("*.py"):
        if path.name in ("guard.py", "limits.py", "presence.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args.args + node.args.kwonlyargs
                defaults = [None] * (len(node.args.args) - len(node.args.defaults)) + node.args.defaults
                defaults += node.args.kw_defaults
                for arg, default in zip(args, defaults):
                    if (isinstance(default, ast.Constant) and arg.arg in server
                            and not isinstance(default.value, bool) and default.value == server[arg.arg]):
                        raise AssertionError(f"{path.name}: {node.name}({arg.arg}={default.value}) writes it again")


def test_a_setting_out_of_its_range_is_a_usage_error_from_its_home() -> None:
    alpha = run("train", "qlearning", "--alpha", "2")
    # named as every refused option is (it read "Error: the learning rate (--alpha) must be ...")
    assert alpha.exit_code == 2 and alpha.output == (
        "Error: Invalid value for '--alpha': the learning rate must be in (0, 1], not 2.0\n")
    for option, said in (("--discount", "the discount"), ("--slip", "the slip"),
                         ("--epsilon", "the start of the exploration rate"),
                         ("--epsilon-end", "the end of the exploration rate"),
                         ("--epsilon-decay", "the share of the episodes over which it falls")):
        bad = run("train", "qlearning", option, "-1")
        assert bad.exit_code == 2 and bad.output == (
            f"Error: Invalid value for '{option}': {said} must be in [0, 1], not -1.0\n"), option
    with pytest.raises(OptionOutOfRange) as caught:  # from Python: the field, of its class
        TrainConfig(alpha=2.0)
    assert str(caught.value) == "TrainConfig.alpha: the learning rate must be in (0, 1], not 2.0"
    assert caught.value.field == "alpha" and str(pickle.loads(pickle.dumps(caught.value))) == str(caught.value)
    think = run("serve", "--max-think", "0.5")
    assert think.exit_code == 2 and "at least 1 s" in think.output


#: ``c4lab solve 8x7`` as ``python -m c4lab`` runs it, once the modules it
#: imports before its Ctrl-C handler is in place are imported, and said so.
SOLVE_AFTER_IMPORTS = """
import sys
import c4lab.cli, c4lab.rules, c4lab.solver, c4lab.ui.preparing, c4lab.ui.status
print("imported", file=sys.stderr, flush=True)
sys.argv = ["c4lab", "solve", "8x7"]
c4lab.cli.run()
"""


@pytest.mark.parametrize("inherited", ["default", "ignored"])
def test_ctrl_c_stops_a_solve_at_once_even_inside_a_long_search(inherited: str) -> None:
    """The solver's search runs for minutes in one compiled call on a large
    board, and Python sees a signal only between the main thread's
    bytecodes: the command runs it on a thread of its own and waits, so
    Ctrl-C ends it at once (also where SIGINT came ignored, as a script's
    background job gets it).  The press comes a second after the slow
    imports (numba's: seconds on a loaded machine, and a press before the
    command's handler is in place is Python's own, or ignored)."""
    import os
    import signal

    command = [sys.executable, "-c", SOLVE_AFTER_IMPORTS]  # c4lab solve 8x7: hours of search
    if inherited == "ignored":
        command = ["sh", "-c", 'trap "" INT; exec "$@"', "sh", *command]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None and proc.stderr.readline() == "imported\n"
        time.sleep(1.0)  # compiling or searching: either way inside numba's code
        os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert "interrupted" in stderr and "Traceback" not in stderr
    assert stdout == ""


def test_ctrl_c_in_a_batch_says_where_it_stopped() -> None:
    """Review: Ctrl-C in ``solve -`` said "interrupted" alone: which line of
    a long batch it stopped at, a script had to count."""
    import os
    import signal

    command = [sys.executable, "-c", SOLVE_AFTER_IMPORTS.replace('"8x7"', '"-"')]
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("4x4:dacd\n\n8x7\n4x4\n")  # an empty line counted, as the errors count it
        proc.stdin.flush()
        assert proc.stdout.readline() == "4x4:dacd 0\n"
        time.sleep(0.5)  # 8x7: hours of search
        os.kill(proc.pid, signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130, stderr
    assert stderr.splitlines()[-1] == "interrupted at stdin line 3 (1 answer printed before it)"
    assert stdout == ""


class _CtrlCWhileLoading:
    """An import finder that is Ctrl-C pressed while ``name`` loads."""

    def __init__(self, name: str) -> None:
        self.name = name

    def find_spec(self, fullname: str, path: object, target: object = None) -> None:
        if fullname == self.name:
            raise KeyboardInterrupt  # any other module: the next finder's


def test_ctrl_c_while_the_command_loads_is_one_line_and_status_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Review: Ctrl-C in the first few tenths of a second of any command
    (``c4lab play --tui`` pressed by mistake) was Python's traceback of
    the import it met, status 1: the command group that says
    "interrupted" was not loaded yet."""
    from c4lab.__main__ import main as command

    monkeypatch.delitem(sys.modules, "c4lab.cli")
    monkeypatch.setattr(sys, "meta_path", [_CtrlCWhileLoading("c4lab.cli"), *sys.meta_path])
    with pytest.raises(SystemExit) as stop:
        command()
    assert stop.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"  # no blank line before it where stderr is no terminal


def test_the_c4lab_command_is_the_entry_that_catches_ctrl_c_while_loading() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["scripts"]["c4lab"] == "c4lab.__main__:main"


def test_the_analysis_board_command_takes_the_american_spelling_too() -> None:
    """Review: ``solve --analyze`` works, and ``c4lab analyze`` was "No such
    command"; it is ``analyse``'s, and the help lists one of the two."""
    american, british = run("analyze", "--help"), run("analyse", "--help")
    assert american.exit_code == 0 and american.output.replace("analyze", "analyse") == british.output
    listed = run("--help").output
    assert "  analyse " in listed and "analyze" not in listed


def test_an_agent_s_stray_print_goes_to_stderr_not_into_the_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: ``DEBUG considering 7x6:dd``, printed by an agent of one's
    own, came before ``move --json``'s object and ``arena --json``'s (three
    times from the warm-up), so that ``json.loads`` failed on line 1.  As
    in ``c4lab engine``, such a print goes to stderr."""
    from c4lab.agents import Agent, Analysis, agent_infos, base, register

    agent_infos()  # c4lab's own agents first; the registry is put back as it was after the test
    monkeypatch.setattr(base, "_REGISTRY", dict(base._REGISTRY))

    @register("chatty", "prints as it thinks")
    class Chatty(Agent):
        def analyse(self, position: c4lab.rules.Position, budget: object = None) -> tuple[object, Analysis]:
            print(f"DEBUG considering {position.notation}")
            return position.legal_moves()[0], Analysis()

    moved = CliRunner().invoke(main, ["move", "--json", "7x6:dd", "--agent", "chatty"])
    assert moved.exit_code == 0, moved.output
    assert json.loads(moved.stdout)["move"] == "a"
    assert "DEBUG considering 7x6:dd" in moved.stderr
    played = CliRunner().invoke(main, ["arena", "chatty", "random:seed=1", "--games", "2", "--jobs", "1", "--board",
                                       "5x4", "--out", str(tmp_path / "run.jsonl"), "--json"])
    assert played.exit_code == 0, played.output
    assert json.loads(played.stdout)["played"] == 2
    assert "DEBUG considering 5x4" in played.stderr
