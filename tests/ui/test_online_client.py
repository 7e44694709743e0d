"""``c4lab connect``: the terminal client of online rooms, against a real
server (uvicorn in a thread), with scripted keyboards and a second player
driven over the WebSocket by the test."""

from __future__ import annotations

import contextlib
import io
import json
import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, final

import httpx
import pytest
from click.testing import CliRunner
from rich.console import Console
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response
from websockets.sync.client import ClientConnection, connect
from websockets.sync.server import ServerConnection, serve

from c4lab.agents.human import ban_offer, ban_prompt, move_prompt, not_a_ban, not_a_column
from c4lab.cli import main
from c4lab.rules import Position
from c4lab.server import rooms
from c4lab.server.run import BackgroundServer
from c4lab.server.storage import GameStore
from c4lab.ui.keyboard_lines import KeyboardLines
from c4lab.ui.line_keys import keyed_prompt
from c4lab.ui.online import FIRST_CONTACT_FOR, RETRY_FOR, OnlineClient
from c4lab.ui.room_link import ConnectError, RoomAddress

WAIT = 60.0  # seconds: a generous bound for anything the tests wait for (a loaded machine compiling: 15 s was met once)


def until(condition: Callable[[], bool], failure: Callable[[], str], limit: float = WAIT) -> None:
    """Wait until ``condition()`` holds, looking every hundredth of a second;
    fail with ``failure()`` (what was seen) once ``limit`` seconds have gone."""
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline, failure()
        time.sleep(0.01)


class Script:
    """A person at the keyboard, scripted: answers prompts from a list (end
    of input after the last one) and records the prompts."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.answers:
            raise EOFError
        return self.answers.pop(0)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BackgroundServer]:
    store = GameStore(tmp_path_factory.mktemp("online") / "g.sqlite")
    srv = BackgroundServer(store).start()
    try:
        yield srv
    finally:
        srv.stop()
        store.close()


def new_room(server: BackgroundServer, **body: Any) -> tuple[str, str]:
    """An online room with Ann in seat A: its code and Ann's token."""
    body = {"mode": "online", "seat": "A", "name": "Ann", **body}
    answer = httpx.post(f"{server.url}/api/rooms", json=body, timeout=WAIT)
    assert answer.status_code == 200, answer.text
    return answer.json()["code"], answer.json()["token"]


def join(server: BackgroundServer, code: str, name: str) -> str:
    answer = httpx.post(f"{server.url}/api/rooms/{code}/join", json={"name": name}, timeout=WAIT)
    assert answer.status_code == 200, answer.text
    return answer.json()["token"]


def room_state(server: BackgroundServer, code: str) -> dict[str, Any]:
    return httpx.get(f"{server.url}/api/rooms/{code}", timeout=WAIT).json()


@final
class OwnServer:
    """A server of a test's own, which the test stops and starts again on
    the same port and store (a restart), with Ann (seat A) and Bob in a
    room of it: ``code``, Ann's token ``ann`` and Bob's ``bob``.  Every
    server it started is stopped, and the store closed, at the end."""

    def __init__(self, tmp_path: Path, **options: Any) -> None:
        self.store = GameStore(tmp_path / "g.sqlite")
        self.options = options
        self.first = BackgroundServer(self.store, **options).start()
        self.started = [self.first]
        self.code, self.ann = new_room(self.first)
        self.bob = join(self.first, self.code, "Bob")
        self.link = f"{self.first.url}/r/{self.code}"

    def start_again(self) -> BackgroundServer:
        """A new server on the first one's port and store (stop that first)."""
        again = BackgroundServer(self.store, port=self.first.port, **self.options).start()
        self.started.append(again)
        return again

    def __enter__(self) -> OwnServer:
        return self

    def __exit__(self, *exc: object) -> None:
        for srv in self.started:
            srv.stop()
        self.store.close()


class Player:
    """The other side, on the WebSocket: plays its moves when it is to move."""

    def __init__(self, server: BackgroundServer, code: str, token: str) -> None:
        self._opened = connect(f"ws://{server.host}:{server.port}/ws/{code}")
        self.ws: ClientConnection = self._opened.__enter__()
        self.ws.send(json.dumps({"type": "hello", "token": token}))
        self.room: dict[str, Any] = {}
        self.you: list[str] = []

    def next_state(self, check: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        deadline = time.monotonic() + WAIT
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message["type"] == "state":
                self.room, self.you = message["room"], message["you"]
                if check(self.room):
                    return self.room

    def play(self, *moves: str) -> dict[str, Any]:
        """Play ``moves`` one by one, each when it is this side's turn (and
        after each, wait for its state: a state is also sent again when
        someone connects); the state after the last one, or the end."""
        for move in moves:
            def ready(room: dict[str, Any]) -> bool:
                return room["status"] == "over" or (room["status"] == "playing" and room["to_move"] in self.you)

            room = self.room if self.room and ready(self.room) else self.next_state(ready)
            if room["status"] == "over":
                return room
            self.ws.send(json.dumps({"type": "move", "move": move}))
            self.next_state(lambda room, at=room["position"]: room["position"] != at)
        return self.room

    def next_message(self, kind: str) -> dict[str, Any]:
        """The next message of type ``kind`` (the states before it are kept)."""
        deadline = time.monotonic() + WAIT
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message["type"] == "state":
                self.room, self.you = message["room"], message["you"]
            if message["type"] == kind:
                return message

    def send(self, message: dict[str, Any]) -> None:
        self.ws.send(json.dumps(message))

    def close(self) -> None:
        self._opened.__exit__(None, None, None)


class Keys:
    """A person at the keyboard who types when the test says so: each line
    goes to the prompt open at that moment (``answer``), and nothing is
    typed ahead, so that what a line answers does not depend on timing."""

    def __init__(self) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.prompts: list[str] = []
        self.answered = 0

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        line = self.lines.get(timeout=WAIT)
        if line is None:
            raise EOFError
        return line

    def asked(self, start: str) -> None:
        """Wait for a prompt open now that starts with ``start`` and was not answered yet."""
        until(lambda: len(self.prompts) > self.answered and self.prompts[-1].startswith(start),
              lambda: f"no prompt {start!r}; the prompts: {self.prompts}")

    def answer(self, start: str, line: str | None) -> None:
        """Type ``line`` (None: the end of input) at the prompt open now, once
        there is one that starts with ``start`` and was not answered yet."""
        self.asked(start)
        self.answered = len(self.prompts)
        self.lines.put(line)

    def end(self) -> None:
        """The end of input for a prompt still open (a client that ended leaves its reader waiting)."""
        self.lines.put(None)


class LiveKeys(Keys):
    """A person at a terminal (``KeyboardLines.live``): the client reads
    what is typed at any time, on the opponent's turn too."""

    live = True


class Running:
    """An ``OnlineClient`` in a thread, its output in a string."""

    def __init__(
        self,
        url: str,
        read: Callable[[str], str] | None = None,
        retry_delay: float = 0.05,
        color: bool = False,
        **options: Any,
    ) -> None:
        self.out = io.StringIO()
        console = Console(file=self.out, force_terminal=color, no_color=not color, width=120,
                          color_system="standard" if color else None)  # whatever TERM the tests run under
        self.read = read or Script()
        self.client = OnlineClient(url, console=console, read=self.read, retry_delay=retry_delay, **options)
        self.status: int | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        self.status = self.client.run()

    @property
    def output(self) -> str:
        return self.out.getvalue()

    def wait_for(self, text: str) -> None:
        def seen() -> bool:
            if text in self.output:
                return True
            assert self.thread.is_alive() or text in self.output, f"ended without {text!r}:\n{self.output}"
            return False

        until(seen, lambda: f"{text!r} never came; output:\n{self.output}")

    def finish(self) -> int:
        self.thread.join(WAIT)
        assert not self.thread.is_alive(), f"the client did not end; output:\n{self.output}"
        assert self.status is not None
        return self.status


def test_a_full_game_with_a_spectator_ends_in_a_win(server: BackgroundServer) -> None:
    code, ann = new_room(server)
    link = f"{server.url}/r/{code}"
    spectator = Running(link, watch=True)
    spectator.wait_for("Waiting for a second player to take the free seat.")  # the link is the host's to share
    ann_socket = Player(server, code, ann)
    try:
        keyboard = Script("d", "d", "d", "d")
        bob = Running(link, keyboard, name="Bob")
        ann_socket.play("a", "a", "g", "g")
        final = ann_socket.next_state(lambda room: room["status"] == "over")
    finally:
        ann_socket.close()
    assert final["status"] == "over" and final["result"] == "B" and final["reason"] == "four"
    assert bob.finish() == 0
    out = bob.output
    token = out.split("Your token (keep it): ")[1].split()[0]
    assert f"C4LAB_TOKEN={token} c4lab connect {link}" in out  # never --token TOKEN (ps shows it)
    assert f"--token {token}" not in out
    assert "You play B (black)." in out
    assert "1 person is watching." in out  # the spectator, from the start
    assert "A (white), Ann, plays g." in out
    assert "B (black), Bob (you), wins: four in a row (d1 d2 d3 d4)." in out
    assert "You won." in out
    assert "The game in notation: 7x6:adadgdgd" in out
    assert len(keyboard.prompts) == 5 and keyboard.prompts[0].startswith("B (black) to move: column a-g")
    # after the game, a rematch is offered; the keyboard's end leaves the room
    assert keyboard.prompts[4] == "m for a rematch (the sides swapped), e to exit: "
    assert "You left the room." in out
    # The spectator saw the seat taken, every move, every board and the result.
    assert spectator.finish() == 0
    seen = spectator.output
    # and knew from the start how to leave (review: told only once they typed something)
    assert "You are watching.\nType e to stop watching.\n" in seen
    assert "Bob took seat B (black)." in seen
    for index, (side, move) in enumerate(zip("ABABABAB", "adadgdgd")):
        label = "A (white), Ann" if side == "A" else "B (black), Bob"
        assert f"{label}, plays {move}." in seen, (index, seen)
    assert "Both seats are taken: the game starts." in seen
    # the seat taken first, the socket opened next: arriving, not away (review: "is not connected ... forfeit")
    assert "Bob, is not connected" not in seen and "Bob, is connected" not in seen
    assert seen.count("   a b c d e f g") == 10  # the empty board, at the start, after each move
    assert "B (black), Bob, wins: four in a row (d1 d2 d3 d4)." in seen
    assert "You won." not in seen
    assert "The game in notation: 7x6:adadgdgd" in seen


def test_bad_entries_are_explained_and_asked_again(server: BackgroundServer) -> None:
    code, ann = new_room(server, board="7x6:aaaaaa")
    bob = Player(server, code, join(server, code, "Bob"))
    try:
        keyboard = Script("x", "9", "a", "", "b", "e")
        client = Running(f"{server.url}/r/{code}", keyboard, token=ann)
        room = bob.play("c")
        assert room["position"] == "7x6:aaaaaabc"
        assert client.finish() == 0
    finally:
        bob.close()
    out = client.output
    assert "'x' is not a column: type a letter a-g or a number 1-7." in out
    assert "'9' is not a column" in out
    assert "Column a is full: choose another one." in out
    assert "'' is not a column" not in out  # Enter alone asks again, as the terminal game does
    assert "A (white), Ann (you), plays b." in out
    assert "You left the game." in out
    assert f"C4LAB_TOKEN={ann} c4lab connect" in out
    assert len(keyboard.prompts) == 7  # the last: "Leave the game?" for the e, answered by the end of input
    assert room_state(server, code)["status"] == "playing"  # leaving is not resigning


def ann_plays_on_the_bonus_board(server: BackgroundServer, *keys: str) -> tuple[Script, Running, str, str]:
    """Ann, in connect, types ``keys`` on 9x8/Xd3/Bb1 and Bob answers her
    first move with c: her keyboard, her client once it has ended (status
    0), the position her first move made and the room's code."""
    code, ann = new_room(server, board="9x8/Xd3/Bb1")
    bob = Player(server, code, join(server, code, "Bob"))
    try:
        keyboard = Script(*keys)
        client = Running(f"{server.url}/r/{code}", keyboard, token=ann)
        first = bob.next_state(lambda r: r["position"] != "9x8/Xd3/Bb1")["position"]
        bob.play("c")
        assert client.finish() == 0
    finally:
        bob.close()
    return keyboard, client, first, code


def test_the_ban_is_asked_for_on_the_bonus_cell_and_resigning_ends_the_game(server: BackgroundServer) -> None:
    keyboard, client, first, code = ann_plays_on_the_bonus_board(server, "b", "z", "a", "r", "y")
    assert first == "9x8/Xd3/Bb1:b+a"
    out = client.output
    assert "Your piece lands on the bonus cell b1" in out
    assert keyboard.prompts[1] == "Ban column: a-i (column e: 5), Enter to decline, or u to take the drop back: "
    assert "'z' is not a column that can take the ban piece" in out
    assert "A (white), Ann (you), plays b, on the bonus cell, and drops the ban piece in a." in out
    assert "B (black), Bob, wins: A (white) resigned." in out
    assert "You lost." in out
    assert "The game in notation: 9x8/Xd3/Bb1:b+ac" in out
    assert room_state(server, code)["reason"] == "resign"


def test_connect_asks_and_explains_in_the_terminal_game_s_words_with_its_own_keys(server: BackgroundServer) -> None:
    """The move and ban questions, the bonus cell's offer and the reproaches
    are the terminal game's (``agents/human.py``), with connect's ``r`` in
    the move question and its ``u`` in the ban question: connect kept copies
    of its own, which had to be changed with them."""
    keyboard, client, first, _ = ann_plays_on_the_bonus_board(server, "x", "b", "z", "a", "e")
    variant = Position.parse(first).variant
    assert variant.bonus is not None
    assert keyboard.prompts[0] == move_prompt(variant, "A", keys=("r to resign",))
    assert keyboard.prompts[0] == "A (white) to move: column a-i or 1-9 (column e: 5), r to resign, e to exit: "
    assert keyboard.prompts[2] == ban_prompt(range(9), take_back=True) == keyed_prompt(ban_prompt(range(9)), True)
    out = client.output
    assert not_a_column("x", 9) in out
    assert ban_offer(variant.bonus) in out
    assert not_a_ban("z", range(9)) in out


def test_the_board_without_colours_has_a_key_to_its_special_cells_as_in_the_terminal_game(
    server: BackgroundServer,
) -> None:
    """Review: without colours the board's X, * and # were left unexplained
    (the terminal game's plain board has the rules' key under it)."""
    _keyboard, client, _first, _code = ann_plays_on_the_bonus_board(server, "b", "a", "e", "y")
    out = client.output
    assert "   X forbidden cell; * bonus cell (empty)\n" in out
    assert "   X forbidden cell; # ban piece\n" in out  # once the bonus cell is taken, its ban piece


def test_the_ban_question_shows_the_piece_on_the_bonus_cell_and_u_takes_the_drop_back_as_in_the_terminal_game(
    server: BackgroundServer,
) -> None:
    """Review: connect asked for the ban without drawing the piece on the
    bonus cell, and a drop typed by mistake could not be taken back (the
    terminal game does both; nothing is sent before the ban is chosen)."""
    keyboard, client, first, _code = ann_plays_on_the_bonus_board(server, "b", "u", "a", "e", "y")
    assert first == "9x8/Xd3/Bb1:a"
    out = client.output
    dropped = Position.parse("9x8/Xd3/Bb1").play("b").render()
    assert dropped + "\n" in out.split("Your piece lands on the bonus cell b1")[0]
    assert "The drop on the bonus cell is taken back." in out
    assert keyboard.prompts[2].startswith("A (white) to move: column a-i")


def test_a_lone_e_in_a_game_asks_before_leaving_as_in_the_terminal_game(server: BackgroundServer) -> None:
    """Review: on a board with a column e, a player who typed ``e`` for the
    column left the game at once (and forfeited unless back in time); the
    terminal game asks first, and so does connect now."""
    code, ann = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    try:
        keyboard = Script("e", "n", "exit")
        client = Running(f"{server.url}/r/{code}", keyboard, token=ann)
        client.wait_for("You stay: the game goes on.")
        assert client.finish() == 0
    finally:
        bob.close()
    assert keyboard.prompts[1] == "Leave the game? y leaves; anything else goes on (column e is typed 5): "
    assert keyboard.prompts[2].startswith("A (white) to move: column a-g")  # still in the game, asked again
    assert "You left the game." in client.output  # "exit" is never a column: it leaves at once
    assert len(keyboard.prompts) == 3
    assert room_state(server, code)["status"] == "playing"


def test_a_lone_e_at_the_ban_question_asks_before_leaving_and_the_ban_is_asked_again(
    server: BackgroundServer,
) -> None:
    keyboard, client, first, code = ann_plays_on_the_bonus_board(server, "b", "e", "", "5", "e", "y")
    assert first == "9x8/Xd3/Bb1:b+e"
    assert keyboard.prompts[2].startswith("Leave the game?")
    assert keyboard.prompts[3].startswith("Ban column: a-i (column e: 5)")
    assert keyboard.prompts[5].startswith("Leave the game?")  # y: leaves
    assert "You left the game." in client.output
    assert room_state(server, code)["position"] == "9x8/Xd3/Bb1:b+ec"


def test_a_bonus_move_may_be_typed_as_the_notation_writes_it(server: BackgroundServer) -> None:
    # as in the terminal game: d+e at once, no ban question; one that is no
    # legal move says why and asks again
    _, client, first, _ = ann_plays_on_the_bonus_board(server, "c+a", "b+", "b+a", "e")
    assert first == "9x8/Xd3/Bb1:b+a"
    out = client.output
    assert "A piece in column c does not land on the bonus cell here, so it drops no ban piece: type c alone." in out
    assert "'b+' is not a move: type a column" in out
    assert "Your piece lands on the bonus cell" not in out
    assert "A (white), Ann (you), plays b, on the bonus cell, and drops the ban piece in a." in out


def test_the_keyboard_does_not_block_updates_from_the_server(server: BackgroundServer) -> None:
    code, ann = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    asked = threading.Event()
    answer = threading.Event()

    def read(prompt: str) -> str:
        if prompt.startswith("Really resign"):
            return "y"
        if prompt.startswith("Bob has left: m to offer a rematch"):  # after the game
            return "e"
        asked.set()
        assert answer.wait(WAIT)
        return "resign"

    client = Running(f"{server.url}/r/{code}", read, token=ann)
    try:
        assert asked.wait(WAIT)
        bob.close()  # Bob leaves while Ann is at the prompt: she is told at once
        client.wait_for("B (black), Bob, disconnected")
        # with the time he has (the server's forfeit time, 120 s: "2 minutes" or a few seconds under)
        client.wait_for("B (black), Bob, disconnected: they can come back; they forfeit unless they are back within ")
        assert re.search(r"back within (2 minutes|1[01]\d s)\.\n", client.output), client.output
    finally:
        answer.set()
    assert client.finish() == 0
    assert "B (black), Bob, wins: A (white) resigned." in client.output


def test_a_wrong_token_is_explained_and_the_client_watches(server: BackgroundServer) -> None:
    code, ann = new_room(server)
    client = Running(f"{server.url}/r/{code}", token="not-a-token")
    client.wait_for("The server did not accept the token: this token holds no seat of this room; you are watching. "
                    "(To take a free seat, if there is one, leave with e and connect again without the token.)")
    client.wait_for("You are watching.")
    join(server, code, "Bob")  # a game to resign: a room still waiting for its guest refuses a resignation
    ann_socket = Player(server, code, ann)
    try:
        ann_socket.send({"type": "resign"})
        assert client.finish() == 0
    finally:
        ann_socket.close()
    assert "B (black), Bob, wins: A (white) resigned." in client.output


def resigned_room(server: BackgroundServer) -> str:
    """The code of a 4x4 room whose game Ann resigned against Bob."""
    code, ann = new_room(server, board="4x4:abab")
    join(server, code, "Bob")  # a room still waiting for its guest refuses a resignation
    ann_socket = Player(server, code, ann)
    try:
        ann_socket.send({"type": "resign"})
        ann_socket.next_state(lambda room: room["status"] == "over")
    finally:
        ann_socket.close()
    return code


def test_a_finished_game_is_shown_in_colour_and_the_client_ends(server: BackgroundServer) -> None:
    code = resigned_room(server)
    client = Running(f"{server.url}/r/{code}", name="Bob", color=True)
    assert client.finish() == 0
    out = client.output
    assert "You are watching: the game is over." in out
    assert "\x1b[" in out and "●" in out  # the coloured board of the terminal game
    assert "wins: A (white) resigned" in out
    assert "The game in notation: 4x4:abab" in out


def test_the_client_comes_back_after_a_server_restart_and_gives_up_when_it_is_gone(tmp_path) -> None:
    with OwnServer(tmp_path) as own:
        code, ann = own.code, own.ann
        client = Running(own.link, Script("d", "d"), token=ann, retry_delay=0.2)
        client.wait_for("B (black), Bob (not connected), to move.")
        own.first.stop()
        client.wait_for("Connection lost")
        second = own.start_again()
        bob = Player(second, code, own.bob)
        try:
            bob.play("a")
            bob.next_state(lambda room: room["position"] == "7x6:dad")
        finally:
            bob.close()
        client.wait_for("A (white), Ann (you), plays d.\n")
        # (the note is printed as the move goes out; the room the client
        # holds is the next state it reads)
        until(lambda: (client.client.room or {}).get("position") == "7x6:dad", lambda: str(client.client.room))
        client.client.retry_for = 0.5  # (a shorter window: a quicker test)
        second.stop()  # for good: a few attempts, then exit status 1
        assert client.finish() == 1
    out = client.output
    assert "Connection lost (the server is restarting" in out and "Connected again." in out
    assert "Lost the connection to" in out and "giving up" in out
    assert f"C4LAB_TOKEN={ann} c4lab connect {own.link}" in out.split("giving up")[1]


def test_the_client_waits_out_a_slow_restart_and_says_it_is_retrying(tmp_path) -> None:
    """Review: the client gave up after five attempts (15 s with the
    default pauses) while a restart of ``c4lab serve`` takes 5 to 21 s on
    a loaded machine.  It now tries for ``RETRY_FOR`` seconds (two
    minutes): here the server stays away for twenty failed attempts, four
    times the old number, and the client is still there when it is back."""
    assert RETRY_FOR >= 60  # several times the slowest restart measured (35 s)
    with OwnServer(tmp_path) as own:
        keys = LiveKeys()
        client = Running(own.link, keys, token=own.ann, retry_delay=0.01)
        keys.asked("A (white) to move")
        own.first.stop()
        def tried() -> bool:
            assert client.thread.is_alive(), client.output
            return client.client.attempts >= 20

        until(tried, lambda: client.output)
        own.start_again()
        client.wait_for("Connected again.")
        keys.answer("A (white) to move", None)  # the end of input: the person leaves
        assert client.finish() == 0  # it left when asked, not because it gave up
    out = client.output
    assert "Connection lost (the server is restarting" in out
    assert "connecting again, for up to 2 minutes... (e exits)" in out
    assert "Still not connected (" in out and "trying again every few seconds, for " in out  # later lines
    assert out.count("Still not connected") < client.client.attempts  # not a line for every attempt
    assert "giving up" not in out


def test_a_player_keeps_trying_as_long_as_the_server_keeps_the_seat(tmp_path) -> None:
    """A server that keeps an absent player's seat longer than two minutes
    (``--forfeit-after 600``): its players try for that long, its
    spectators for the two minutes."""
    with OwnServer(tmp_path, forfeit_after=600) as own:
        keys, watching = LiveKeys(), LiveKeys()
        player = Running(own.link, keys, token=own.ann, retry_delay=60)
        spectator = Running(own.link, watching, watch=True, retry_delay=60)
        keys.asked("A (white) to move")
        spectator.wait_for("You are watching.")
        own.first.stop()
        player.wait_for("connecting again, for up to 10 minutes...")
        spectator.wait_for("connecting again, for up to 2 minutes...")
        keys.answer("A (white) to move", None)
        watching.answer("", None)
        assert player.finish() == 0 and spectator.finish() == 0


def test_while_the_connection_is_down_a_line_typed_is_answered_at_once_and_e_leaves(tmp_path) -> None:
    """Review: while the client waited to connect again, what was typed went
    nowhere: the prompt said "e to exit" after every retry, but e (and a
    move) waited for the server to come back or for the last attempt."""
    with OwnServer(tmp_path) as own:
        keys = LiveKeys()
        # a long pause before connecting again: the person acts during it
        client = Running(own.link, keys, token=own.ann, retry_delay=60)
        keys.asked("A (white) to move")
        own.first.stop()
        client.wait_for("Connection lost")
        assert "(e exits)" in client.output.split("Connection lost")[1]
        keys.answer("A (white) to move", "d")
        client.wait_for("Not connected to the server: 'd' was not sent (e exits).")
        keys.answer("A (white) to move", "e")  # the same prompt, open again
        assert client.finish() == 0
        row = own.store.load(own.code)
    assert row is not None and row.position == "7x6", "the move typed while offline was never played"
    out = client.output
    assert "You left the game." in out
    assert f"C4LAB_TOKEN={own.ann} c4lab connect {own.link}" in out.split("You left the game.")[1]
    assert "forfeits after 2 minutes" in out


def test_an_unknown_room_or_a_bad_link_exits_with_status_2(server: BackgroundServer) -> None:
    runner = CliRunner()
    result = runner.invoke(main, ["connect", f"{server.url}/r/NoSuchRoom123"])
    assert result.exit_code == 2
    assert f"There is no room 'NoSuchRoom123' at {server.url}" in result.output
    result = runner.invoke(main, ["connect", f"ws://{server.host}:{server.port}/ws/NoSuchRoom123"])
    assert result.exit_code == 2 and "There is no room" in result.output
    code, _ann = new_room(server)
    # a name the server refuses at the join (the command refuses it before: the client as a program uses)
    refused = OnlineClient(f"{server.url}/r/{code}", name="<b>Bob</b>", console=Console(file=io.StringIO()))
    assert refused.run() == 2
    assert "Cannot take the free seat: a name must be plain text" in refused.console.file.getvalue()
    assert not room_state(server, code)["seats"]["B"]["taken"]
    for bad in ("ftp://example.org/r/abc", f"{server.url}/", f"{server.url}/r/bad code", "http://:80/r/abc"):
        result = runner.invoke(main, ["connect", bad])
        assert result.exit_code == 2, (bad, result.output)
        # refused as every bad argument is, on standard error (it was a line on standard output)
        assert result.stdout == "" and result.stderr.startswith("Error: Invalid value for 'URL': "), result.output
        assert "is not a room link" in result.stderr and len(result.stderr.splitlines()) == 1


def test_an_address_where_nothing_answers_is_said_within_seconds_with_what_to_check() -> None:
    """Review: ``c4lab connect`` to an address where nothing had ever
    answered (a wrong port) tried for two minutes, as for a server that
    went away mid-game, and ended with status 1.  The first contact is
    tried for ``FIRST_CONTACT_FOR`` seconds (three tries, 1 and 2 s
    apart), then one line says where nothing answers and what to check,
    status 2 (the link leads to no room); the patience of ``RETRY_FOR``
    stays for a server that answered (the restart tests above)."""
    with socket.socket() as probe:  # a port nothing listens on: bound, never listening
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        client = OnlineClient(f"http://127.0.0.1:{port}/r/abcdef", console=Console(file=io.StringIO(), width=400),
                              read=Script())
        assert FIRST_CONTACT_FOR <= 5 < RETRY_FOR
        assert client.run() == 2
    out = client.console.file.getvalue()
    assert len(out.splitlines()) == 1, out  # no "trying again" lines
    said = re.fullmatch(
        rf"Nothing answers at http://127\.0\.0\.1:{port} \(.*Connection refused; tried (\d) times in \d+ s\): "
        r"is the server running \(c4lab serve prints its address once it is ready\), and are the host and port "
        r"right\?\n", out)
    assert said is not None, out
    assert 2 <= int(said.group(1)) <= 3  # more than one try: a server a moment from ready is found


@pytest.mark.parametrize(("name", "said"), [
    ("", "an empty name: a name has 1 to 24 characters (leave --name out for the server's default)"),
    ("   ", "a name of spaces alone: a name has 1 to 24 characters (leave --name out for the server's default)"),
    ("x" * 25, "a name has 1 to 24 characters, not 25"),
    ("<b>Bob</b>", "a name must be plain text: '<>' not allowed"),
], ids=["empty", "blank", "25 characters", "markup"])
def test_a_name_the_server_would_refuse_is_refused_before_connecting(
    monkeypatch: pytest.MonkeyPatch, name: str, said: str
) -> None:
    """Review: ``--name`` was checked by the server only, once the room had
    been looked up (nowhere, at an address where nothing answered), and
    ``--name ''`` took the server's default name.  It is checked first,
    by the server's own rule (``server.names.check_name``): one line naming
    ``--name``, status 2, and nothing connects."""
    from c4lab.ui import online

    def no_connection(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("connect went on with a name the server would refuse")

    monkeypatch.setattr(online, "run_online", no_connection)
    result = CliRunner().invoke(main, ["connect", "http://127.0.0.1:9/r/abcdef", "--name", name])
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: Invalid value for '--name': {said}\n"


def test_a_name_the_server_takes_is_taken_by_connect_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same rule on both sides: 24 characters, spaces around it
    stripped as the server strips them, pass to the client as typed."""
    from c4lab.ui import online

    given: list[str | None] = []
    monkeypatch.setattr(online, "run_online", lambda url, **options: given.append(options["name"]) or 0)
    for name in ("x" * 24, " Ann ", "Zoë"):
        assert CliRunner().invoke(main, ["connect", "http://127.0.0.1:9/r/abcdef", "--name", name]).exit_code == 0
    assert given == ["x" * 24, "Ann", "Zoë"]


def test_room_links_are_read_in_every_form() -> None:
    for url in ("http://h:8000/r/Ab-c_9", "h:8000/r/Ab-c_9/", "ws://h:8000/ws/Ab-c_9", "http://h:8000/games/Ab-c_9"):
        address = RoomAddress.parse(url)
        assert (address.base, address.code) == ("http://h:8000", "Ab-c_9"), url
        assert address.socket == "ws://h:8000/ws/Ab-c_9"
        assert address.link == "http://h:8000/r/Ab-c_9"
    behind = RoomAddress.parse("wss://example.org/c4/r/XYZ?x=1")
    assert behind.base == "https://example.org/c4" and behind.socket == "wss://example.org/c4/ws/XYZ"
    with pytest.raises(ConnectError) as info:
        RoomAddress.parse("http://h:notaport/r/x")
    assert info.value.status == 2


def test_connect_help() -> None:
    result = CliRunner().invoke(main, ["connect", "--help"])
    assert result.exit_code == 0
    for option in ("URL", "--name", "--token", "--watch", "--color / --no-color"):
        assert option in result.output
    out = subprocess.run(
        [sys.executable, "-m", "c4lab", "connect", "--help"], capture_output=True, text=True, check=True
    )
    assert "Play or watch an online room" in out.stdout


def test_resigning_asks_for_confirmation_first(server: BackgroundServer) -> None:
    code, ann = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    try:
        keyboard = Script("r", "", "d", "r", "n", "r", "y")
        client = Running(f"{server.url}/r/{code}", keyboard, token=ann)
        bob.play("a")
        assert client.finish() == 0
    finally:
        bob.close()
    out = client.output
    assert out.count("You did not resign: the game goes on.") == 2
    assert "A (white), Ann (you), plays d." in out
    assert [p.split("?")[0] for p in keyboard.prompts if p.startswith("Really")] == ["Really resign (you lose the game)"] * 3
    assert "B (black), Bob, wins: A (white) resigned." in out
    assert room_state(server, code)["reason"] == "resign" and room_state(server, code)["position"] == "7x6:da"


def test_a_line_typed_on_the_opponents_turn_is_answered_at_once_and_never_played_later(
    server: BackgroundServer,
) -> None:
    """Issue 27 review: a move typed at a terminal on the opponent's turn
    was kept and played the moment the turn came, and an "r" then "y"
    typed ahead resigned before the question was shown.  Now such a line
    is answered at once, and only a line typed on one's own turn moves."""
    code, ann = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    keys = LiveKeys()
    try:
        client = Running(f"{server.url}/r/{code}", keys, token=ann)
        keys.answer("A (white) to move", "d")
        keys.answer("", "a")  # Bob's turn: a column typed now
        client.wait_for("Not your move: B (black), Bob, to move (r to resign, e to exit).")
        keys.answer("", "r")
        keys.answer("Really resign", "")
        client.wait_for("You did not resign: the game goes on.")
        bob.play("d")
        # the turn is Ann's once the client has shown Bob's move (its "Your move" of the first move is
        # in the output already: waiting for that one, "c" went out on Bob's turn, CI265)
        client.wait_for("B (black), Bob, plays d.")
        until(lambda: "Your move, A (white)." in client.output.split("B (black), Bob, plays d.")[1],
              lambda: client.output)
        assert room_state(server, code)["position"] == "7x6:dd"  # the "a" typed before was not played
        keys.lines.put("c")  # the prompt already open is now the move's
        client.wait_for("A (white), Ann (you), plays c.")
        # the move after Bob's d is the c typed on Ann's turn: the "a" typed before was not played
        assert room_state(server, code)["position"] == "7x6:ddc"
        assert "Ann (you), plays a" not in client.output
        keys.answer("", None)  # the end of input on Bob's turn: the client leaves
        assert client.finish() == 0
    finally:
        bob.close()
    assert room_state(server, code)["position"] == "7x6:ddc" and room_state(server, code)["status"] == "playing"
    assert "You left the game." in client.output


def test_e_leaves_while_waiting_for_a_second_player(server: BackgroundServer) -> None:
    """Issue 27 review: the host waiting for a guest had no way out but
    Ctrl-C, and the "e" typed meanwhile left the game at its first move."""
    code, ann = new_room(server)
    keys = LiveKeys()
    client = Running(f"{server.url}/r/{code}", keys, token=ann)
    client.wait_for("Waiting for a second player")
    keys.answer("", "d")
    client.wait_for("The game has not begun: waiting for a second player (e to exit).")
    keys.answer("", "e")
    assert client.finish() == 0
    assert "You left the room." in client.output
    assert f"To come back to this game, run:\nC4LAB_TOKEN={ann} c4lab connect {server.url}/r/{code}\n" in client.output
    assert room_state(server, code)["position"] == "7x6"


def test_leaving_with_e_prints_no_traceback_and_the_way_back_hides_the_token(
    server: BackgroundServer, tmp_path: Path
) -> None:
    """Issue 27: ``e`` printed "Task exception was never retrieved" and a
    ConnectionClosedOK traceback; the way back said ``--token TOKEN``."""
    code, ann = new_room(server)
    join(server, code, "Bob")
    link = f"{server.url}/r/{code}"
    command = [sys.executable, "-m", "c4lab", "connect", link, "--no-color"]
    by_env = subprocess.run(
        command, check=False, input="e\n", capture_output=True, text=True, timeout=60, env={**os.environ, "C4LAB_TOKEN": ann}
    )
    assert by_env.returncode == 0 and by_env.stderr == "", by_env.stderr
    assert "You left the game." in by_env.stdout
    assert f", run:\nC4LAB_TOKEN={ann} c4lab connect {link}\n" in by_env.stdout
    # how long the seat is kept, as after Ctrl-C (it said "the server's time limit")
    assert "(while a game is played, an absent player forfeits after 2 minutes)" in by_env.stdout
    assert "--token " not in by_env.stdout
    token_file = tmp_path / "ann.token"
    token_file.write_text(ann + "\n")
    env = {k: v for k, v in os.environ.items() if k != "C4LAB_TOKEN"}
    by_file = subprocess.run(
        [*command, "--token-file", str(token_file)], check=False, input="e\n", capture_output=True, text=True, timeout=60, env=env
    )
    assert by_file.returncode == 0 and by_file.stderr == "", by_file.stderr
    assert f", run:\nc4lab connect {link} --token-file {token_file}\n" in by_file.stdout
    assert ann not in by_file.stdout


def test_a_replay_link_shows_the_finished_game_and_never_takes_a_seat(server: BackgroundServer) -> None:
    code = resigned_room(server)
    runner = CliRunner()
    result = runner.invoke(main, ["connect", f"{server.url}/games/{code}"])
    assert result.exit_code == 0, result.output
    assert "There is no room" not in result.output
    assert "You are watching." in result.output
    assert "wins: A (white) resigned" in result.output
    assert f"Step through it move by move in a browser: {server.url}/games/{code}" in result.output
    missing = runner.invoke(main, ["connect", f"{server.url}/games/NoSuchGame123"])
    assert missing.exit_code == 2
    assert missing.output.strip() == (
        f"There is no game 'NoSuchGame123' at {server.url}: check the link (the code is case-sensitive); "
        f"the public finished games are listed at {server.url}/games."
    )
    # the replay link of a game still waiting for its guest watches: the seat stays free
    waiting, _ann = new_room(server)
    client = Running(f"{server.url}/games/{waiting}")
    client.wait_for("You are watching.")
    assert "A replay link: you are watching. To take a free seat, use the room's link" in client.output
    assert not room_state(server, waiting)["seats"]["B"]["taken"]
    client.client.retry_for = 0


def test_a_rematch_is_offered_accepted_and_played_in_the_same_room(server: BackgroundServer) -> None:
    """Issue 27: the terminal offers a rematch after the game, the other
    player (a socket, as the page's) accepts it, and the second game, sides
    swapped, is played in the same room and the same terminal session; a
    spectator sees both games and is offered nothing."""
    code, ann_token = new_room(server)
    link = f"{server.url}/r/{code}"
    bob = Player(server, code, join(server, code, "Bob"))
    keys, watching = Keys(), Keys()
    spectator = Running(link, watching, watch=True)
    ann = Running(link, keys, token=ann_token)
    try:
        for move in range(4):  # Ann (A) wins on d1-d4
            keys.answer("A (white) to move", "d")
            if move < 3:
                bob.play("a")
        assert bob.next_state(lambda room: room["status"] == "over")["result"] == "A"
        keys.answer("m for a rematch (the sides swapped), e to exit", "m")
        assert bob.next_message("rematch") == {"type": "rematch", "event": "offered", "seat": "A"}
        ann.wait_for("You offered a rematch (the sides swapped): waiting for B (black), Bob, to answer.")
        bob.send({"type": "rematch", "action": "accept"})
        accepted = bob.next_message("rematch")
        assert accepted == {"type": "rematch", "event": "accepted", "seat": "B", "kept": f"{code}-1"}
        # the second game: Bob is A and moves first; the prompt Ann left open takes her move
        assert bob.next_state(lambda room: room["status"] == "playing")["position"] == "7x6"
        assert bob.you == ["A"]
        bob.play("a")
        ann.wait_for("Your move, B (black).")
        keys.answer("Waiting for Bob to answer", "c")
        for _ in range(2):
            bob.play("a")
            keys.answer("B (black) to move", "c")
        final = bob.play("a")
        assert final["status"] == "over" and final["result"] == "A" and final["position"] == "7x6:acacaca"
        keys.answer("m for a rematch", "e")
        assert ann.finish() == 0
    finally:
        keys.end()
        bob.close()
    assert spectator.finish() == 0  # both players gone: nothing more to watch
    watching.end()
    out = ann.output
    assert "A (white), Ann (you), wins: four in a row (d1 d2 d3 d4)." in out
    assert f"B (black), Bob, accepted the rematch: a new game in this room. The last game stays at {server.url}/games/{code}-1" in out
    # each game's end says where it goes if a rematch follows (the room's link then shows the new game)
    assert (f"Step through it move by move in a browser: {server.url}/games/{code} (after a rematch in this room: "
            f"{server.url}/games/{code}-1)") in out
    assert f"{server.url}/games/{code} (after a rematch in this room: {server.url}/games/{code}-2)" in out
    assert "A new game in this room, the sides swapped: A (white), Bob; B (black), Ann (you)." in out
    assert "You play B (black) now." in out
    assert "B (black), Ann (you), plays c." in out
    assert "A (white), Bob, wins: four in a row (a1 a2 a3 a4)." in out and "You lost." in out
    assert "You left the room." in out
    assert "Moves were taken back" not in out and "disconnected" not in out
    assert keys.prompts.count("m for a rematch (the sides swapped), e to exit: ") == 2  # after each game
    # the room: the second game, the first kept as its own
    room = room_state(server, code)
    assert room["earlier"] == [f"{code}-1"] and room["position"] == "7x6:acacaca"
    kept = httpx.get(f"{server.url}/api/games/{code}-1", timeout=WAIT).json()
    assert kept["position"] == "7x6:dadadad" and kept["result"] == "A"
    seen = spectator.output
    assert "A (white), Ann, offers a rematch in this room, the sides swapped." in seen
    assert "B (black), Bob, accepted the rematch" in seen
    assert "A new game in this room, the sides swapped: A (white), Bob; B (black), Ann." in seen
    assert "B (black), Ann, plays c." in seen and "A (white), Bob, wins: four in a row (a1 a2 a3 a4)." in seen
    assert "B (black), Ann, left the room." in seen  # (no word of a rematch for a spectator)
    assert "Both players have left the room: there is nothing more to watch." in seen
    assert set(watching.prompts) == {"e to stop watching: "}  # a spectator is offered no rematch


def test_a_rematch_declined_either_way_and_an_offer_whose_player_left(
    server: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rooms, "REMATCH_GRACE", 0.1)  # an offer stands that long after its player left
    code, ann_token = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    keys = Keys()
    ann = Running(f"{server.url}/r/{code}", keys, token=ann_token)
    try:
        bob.next_state(lambda room: room["seats"]["A"]["connected"])
        bob.send({"type": "resign"})
        # Bob offers, Ann declines
        bob.send({"type": "rematch", "action": "offer"})
        assert bob.next_message("rematch") == {"type": "rematch", "event": "offered", "seat": "B"}
        ann.wait_for("B (black), Bob, offers a rematch in this room, the sides swapped: you would play B (black).")
        keys.answer("A (white) to move", "n")  # the prompt open when Bob resigned takes the answer
        assert bob.next_message("rematch") == {"type": "rematch", "event": "declined", "seat": "A"}
        ann.wait_for("You declined the rematch.")
        # Ann offers, Bob declines
        keys.answer("m for a rematch", "m")
        assert bob.next_message("rematch")["event"] == "offered"
        bob.send({"type": "rematch", "action": "decline"})
        ann.wait_for("B (black), Bob, declined the rematch.")
        # Ann types something that is no key, then Bob offers and leaves
        keys.answer("Waiting for Bob to answer", "x")  # (the prompt still open from her offer)
        ann.wait_for("'x' is not a key here: m for a rematch (the sides swapped), e to exit.")
        bob.send({"type": "rematch", "action": "offer"})
        ann.wait_for("B (black), Bob, offers a rematch")
        bob.close()
        ann.wait_for("The rematch B (black), Bob, offered is withdrawn.")
        ann.wait_for("B (black), Bob, left the room: no rematch unless they come back.")
        keys.answer("m for a rematch", "x")  # the prompt open before he left
        ann.wait_for("'x' is not a key here: Bob has left: m to offer a rematch should they come back, e to exit.")
        keys.answer("Bob has left: m to offer a rematch should they come back, e to exit", "e")
        assert ann.finish() == 0
    finally:
        keys.end()
        bob.close()
    out = ann.output
    assert "A (white), Ann (you), wins: B (black) resigned." in out
    assert "You left the room." in out
    room = room_state(server, code)
    assert room["status"] == "over" and room["earlier"] == [] and room["rematch"] is None


def test_broken_messages_from_the_server_are_one_line_each_and_the_client_goes_on(server: BackgroundServer) -> None:
    """A message the client cannot read -- not JSON, a state without its
    room or with a position that is none, news with no seat, a rematch event
    or a message type it does not know -- is one line, and the client goes
    on to the end of the game (a fake server sends them)."""
    code, _ann = new_room(server)
    join(server, code, "Bob")
    playing = room_state(server, code)  # a room as the server writes it
    seats = {side: {**seat, "connected": False} for side, seat in playing["seats"].items()}
    over = {**playing, "status": "over", "result": "A", "reason": "resign", "to_move": None, "seats": seats}

    def state(room: dict[str, Any]) -> str:
        return json.dumps({"type": "state", "room": room, "you": []})

    broken: list[str | bytes] = [
        "not json{",
        "[1, 2]",
        json.dumps({"type": "state", "room": {"code": code}}),
        state({**playing, "position": "7x6:zz"}),
        state({**playing, "seats": {"A": playing["seats"]["A"]}}),
        json.dumps({"type": "thinking"}),
        json.dumps({"type": "rematch", "event": "exploded", "seat": "A"}),
        json.dumps({"type": "surprise"}),
        b"\x00\x01",
    ]

    def handler(ws: ServerConnection) -> None:
        ws.recv()  # the hello
        for frame in [state(playing), *broken, state(over)]:
            ws.send(frame)
        with contextlib.suppress(ConnectionClosed):
            ws.recv()  # until the client closes

    def rest(conn: ServerConnection, request: Request) -> Response | None:
        return conn.respond(200, json.dumps(playing)) if request.path.startswith("/api/") else None

    with serve(handler, "127.0.0.1", 0, process_request=rest) as fake:
        threading.Thread(target=fake.serve_forever, daemon=True).start()
        client = Running(f"http://127.0.0.1:{fake.socket.getsockname()[1]}/r/{code}", watch=True)
        assert client.finish() == 0
        fake.shutdown()
    lines = client.output.splitlines()
    ignored = [line for line in lines if line.startswith("(a message")]
    assert len(ignored) == len(broken), "\n".join(lines)
    assert "(a message from the server was ignored, not JSON: 'not json{')" in ignored
    assert any(line.startswith("(a message from the server was ignored, the room's position:") for line in ignored)
    assert any("'thinking' names no seat A or B" in line for line in ignored)
    assert any("'rematch' has no event of offered, accepted, declined, withdrawn" in line for line in ignored)
    assert "(a message of a type this client does not know was ignored: 'surprise')" in ignored
    assert "A (white), Ann, wins: B (black) resigned." in lines  # the game as the last good state says
    assert "Traceback" not in client.output


def test_two_terminals_agree_on_a_rematch(server: BackgroundServer) -> None:
    """Both players in terminals: one offers with m, the other accepts with
    y, and the second game is played on in the same sessions."""
    code, ann_token = new_room(server)
    link = f"{server.url}/r/{code}"
    ann_keys, bob_keys = Keys(), Keys()
    ann = Running(link, ann_keys, token=ann_token)
    bob = Running(link, bob_keys, name="Bob")
    try:
        ann_keys.answer("A (white) to move", "r")
        ann_keys.answer("Really resign", "y")
        bob_keys.answer("m for a rematch", "m")
        ann.wait_for("B (black), Bob, offers a rematch in this room, the sides swapped: you would play B (black).")
        ann_keys.answer("m for a rematch", "y")  # (the prompt opened before the offer came)
        bob.wait_for("Your move, A (white).")
        bob_keys.answer("Waiting for Ann to answer", "d")
        ann_keys.answer("B (black) to move", "c")
        bob_keys.answer("A (white) to move", "r")
        bob_keys.answer("Really resign", "y")
        ann_keys.answer("m for a rematch", "e")
        bob_keys.answer("m for a rematch", "e")
        assert ann.finish() == 0 and bob.finish() == 0
    finally:
        ann_keys.end()
        bob_keys.end()
    assert "You accepted the rematch: a new game in this room." in ann.output
    assert "A (white), Ann (you), accepted the rematch" not in bob.output
    assert "A (white), Ann, accepted the rematch: a new game in this room." in bob.output
    assert "You play A (white) now." in bob.output and "You play B (black) now." in ann.output
    assert "B (black), Ann, wins: A (white) resigned." in bob.output
    assert "You won." in ann.output.split("A new game in this room")[1]
    room = room_state(server, code)
    assert room["earlier"] == [f"{code}-1"] and room["position"] == "7x6:dc"
    assert (room["result"], room["reason"]) == ("B", "resign")
    assert room["seats"]["A"]["name"] == "Bob" and room["seats"]["B"]["name"] == "Ann"


def test_the_come_back_line_after_ctrl_c_says_how_long_the_seat_is_kept() -> None:
    """The room's state gives the forfeit time: the line says it, in words."""
    from c4lab.ui.room_words import forfeit_words as _forfeit_words

    assert _forfeit_words({"forfeit_after": 120}) == " (while a game is played, an absent player forfeits after 2 minutes)"
    assert _forfeit_words({"forfeit_after": 90.0}) == " (while a game is played, an absent player forfeits after 90 s)"
    assert _forfeit_words({"forfeit_after": None}) == " (an absent player forfeits after the server's time limit)"


def test_the_opponents_time_to_come_back_is_said_in_words() -> None:
    from c4lab.ui.room_words import forfeit_in as _forfeit_in

    assert _forfeit_in({"forfeit_in": 120.0}) == "they forfeit unless they are back within 2 minutes"
    assert _forfeit_in({"forfeit_in": 19.6}) == "they forfeit unless they are back within 20 s"
    assert _forfeit_in({"forfeit_in": 300}) == "they forfeit unless they are back within 5 minutes"
    assert _forfeit_in({}) == "if they stay away too long they forfeit"  # a server that does not say


@pytest.mark.parametrize(("errno", "fails_at_once"), [("EAI_NONAME", True), ("EAI_AGAIN", False)])
def test_a_host_name_nobody_has_fails_at_once_a_slow_name_server_is_tried_again(
    monkeypatch: pytest.MonkeyPatch, errno: str, fails_at_once: bool
) -> None:
    """Review: ``c4lab connect http://example.invalid/...`` (a typo) tried
    five times, 15 s, before it failed; a name no server has never comes
    back, while a name server that does not answer in time may."""
    import urllib.error
    import urllib.request

    from c4lab.ui import room_link

    def no_name(*args: Any, **kwargs: Any) -> Any:
        raise urllib.error.URLError(socket.gaierror(getattr(socket, errno), "name resolution failed"))

    monkeypatch.setattr(urllib.request, "urlopen", no_name)
    url = "http://example.invalid:8000/api/rooms/ABCDEF"
    if fails_at_once:
        with pytest.raises(ConnectError) as caught:
            room_link.http_json("GET", url)
        assert caught.value.status == room_link.EXIT_BAD_ROOM
        assert caught.value.message == ("Cannot reach http://example.invalid:8000: there is no host named "
                                        "'example.invalid' (a typo in the address?).")
    else:
        with pytest.raises(room_link.Unreachable, match="name resolution failed"):
            room_link.http_json("GET", url)


class _TerminalScreen(io.StringIO):
    """What a terminal shows, as a string: the client re-prints an open
    prompt under each line only on a terminal."""

    def isatty(self) -> bool:
        return True


class _TerminalKeyboard(KeyboardLines):
    """``c4lab connect``'s own keyboard on a terminal (``live``: read at any
    time), its lines typed by the test."""

    def __init__(self, console: Console) -> None:
        super().__init__(console)
        self.lines: queue.Queue[str | None] = queue.Queue()

    @property
    def live(self) -> bool:
        return True

    def _line(self) -> str:
        line = self.lines.get()  # (a daemon thread: a line never typed keeps nothing up)
        if line is None:
            raise EOFError
        return line


class _AtATerminal(Running):
    """An ``OnlineClient`` at a (plain) terminal: the screen as it is seen,
    prompts and all."""

    def __init__(self, url: str, **options: Any) -> None:
        self.out = _TerminalScreen()
        console = Console(file=self.out, no_color=True, color_system=None, width=200)
        self.keyboard = _TerminalKeyboard(console)
        self.client = OnlineClient(url, console=console, read=self.keyboard, retry_delay=0.05, **options)
        self.status = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()


def test_a_spectator_at_a_terminal_is_offered_the_way_out_after_each_game_and_no_prompt_during_one(
    server: BackgroundServer,
) -> None:
    """Review: the "e to stop watching: " prompt did not show when the
    first game ended (it came only with the next news), and after a
    rematch it was printed again under every line of the new game."""
    code, ann_token = new_room(server)
    ann = Player(server, code, ann_token)
    bob = Player(server, code, join(server, code, "Bob"))
    spectator = _AtATerminal(f"{server.url}/r/{code}", watch=True)
    try:
        spectator.wait_for("You are watching.")
        ann.send({"type": "resign"})
        spectator.wait_for("B (black), Bob, wins: A (white) resigned.")
        spectator.wait_for(f"/games/{code}-1)\ne to stop watching: ")  # the way out, at once
        ann.send({"type": "rematch", "action": "offer"})
        bob.next_message("rematch")
        bob.send({"type": "rematch", "action": "accept"})
        bob.next_state(lambda room: room["status"] == "playing")
        spectator.wait_for("A (white), Bob, to move.")
        bob.play("d")
        spectator.wait_for("B (black), Ann, to move.")
        new_game = spectator.output.split("A new game in this room")[1]
        assert "e to stop watching" not in new_game  # a game is watched with no prompt (e still leaves)
        spectator.keyboard.lines.put("e")
        assert spectator.finish() == 0
    finally:
        ann.close()
        bob.close()
    assert spectator.output.endswith("You stopped watching.\n")


def test_a_move_played_on_the_seats_other_connection_closes_the_column_prompt_here(server: BackgroundServer) -> None:
    """Review: a player with the game open twice (this terminal and a page)
    who moved on the page still saw "A (white) to move: column ..." here, under the
    line saying it was the opponent's move."""
    code, ann_token = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    ann = _AtATerminal(f"{server.url}/r/{code}", token=ann_token)
    page = Player(server, code, ann_token)  # Ann's other connection
    try:
        ann.wait_for("a b c d e f g\nA (white) to move: column")  # the move question under the board, alone
        page.play("d")
        ann.wait_for("B (black), Bob, to move.")
        bob.play("c")
        ann.wait_for("B (black), Bob, plays c.")  # printed after all the client did on Ann's d
        between = ann.output.split("B (black), Bob, to move.")[1].split("B (black), Bob, plays c.")[0]
        assert between.strip(" \n") == "", ann.output  # no prompt of a move already played
        def after() -> str:
            return ann.output.split("B (black), Bob, plays c.")[1]

        until(lambda: "A (white) to move: column" in after(), lambda: ann.output)  # and her turn's prompt again
        ann.keyboard.lines.put("d")
        until(lambda: "A (white), Ann (you), plays d." in after(), lambda: ann.output)
        ann.keyboard.lines.put("exit")
        assert ann.finish() == 0
    finally:
        page.close()
        bob.close()
    assert room_state(server, code)["position"] == "7x6:dcd"


def test_a_player_s_turn_is_said_once_by_the_move_question(server: BackgroundServer) -> None:
    """Review: "Your move, A (white)." came right over the move question
    "A (white) to move: column ...", which says the same.  The question
    alone says it (the first move, and after the opponent's, where the
    line read on their turn is given the question); where it cannot be
    shown again (the output piped, the keyboard a terminal) the line
    still says whose move it is."""
    code, ann_token = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    ann = _AtATerminal(f"{server.url}/r/{code}", token=ann_token)
    try:
        ann.wait_for("a b c d e f g\nA (white) to move: column")
        ann.keyboard.lines.put("d")
        ann.wait_for("B (black), Bob, to move.")
        bob.play("c")
        until(lambda: ann.output.count("A (white) to move: column") >= 2, lambda: ann.output)
        ann.keyboard.lines.put("exit")
        assert ann.finish() == 0
    finally:
        bob.close()
    assert "Your move" not in ann.output
    assert ann.output.count("A (white) to move: column") == 2, ann.output
    code, ann_token = new_room(server)
    bob = Player(server, code, join(server, code, "Bob"))
    keys = LiveKeys()  # a person typing, the output not a terminal: no prompt drawn again
    piped = Running(f"{server.url}/r/{code}", keys, token=ann_token)
    try:
        keys.answer("A (white) to move", "d")
        bob.play("c")
        piped.wait_for("B (black), Bob, plays c.")
        piped.wait_for("Your move, A (white).")
        keys.answer("", None)
        assert piped.finish() == 0
    finally:
        bob.close()
    assert piped.output.count("Your move, A (white).") == 1, piped.output  # not before the first question


def test_leaving_a_local_room_says_the_way_back_and_no_forfeit(server: BackgroundServer) -> None:
    """Review: leaving a local room (``c4lab play``'s, where nobody
    forfeits) said "an absent player forfeits after the server's time limit"."""
    answer = httpx.post(f"{server.url}/api/rooms", json={"mode": "local", "players": {"A": "human", "B": "human"}},
                        timeout=WAIT).json()
    client = Running(f"{server.url}/r/{answer['code']}", Script("d", "e"), token=answer["token"])
    assert client.finish() == 0
    assert "You left the game." in client.output
    assert f"run:\nC4LAB_TOKEN={answer['token']} c4lab connect {server.url}/r/{answer['code']}\n" in client.output
    assert "forfeit" not in client.output


def test_on_a_terminal_the_clients_lines_break_between_words() -> None:
    """As the terminal game's: at the terminal's edge, not in the middle of
    a word (review: "... is pla" / "yer 2"); a link or a token longer than
    a line stays whole, to be copied."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=40, color_system=None)
    client = OnlineClient("http://127.0.0.1:9/r/some-room", console=console, read=lambda prompt: "e")
    token = "t" * 50
    client.say(f"You took seat A. Your token (keep it): {token}")
    assert out.getvalue().splitlines() == ["You took seat A. Your token (keep it):", token]


def test_on_a_terminal_the_come_back_command_is_one_line_of_its_own() -> None:
    """Review: at 60, 100 and 120 columns the come-back line was broken
    between ``c4lab connect`` and its link, so a triple-click copied a
    command with no link: the command is a line of its own, never broken
    (the terminal folds it, and a copy of it is whole)."""
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=60, color_system=None)
    link = "http://127.0.0.1:43899/r/tlkB-940q9erGDnZ"
    client = OnlineClient(link, console=console, read=lambda prompt: "e", token="_5Tw" + "x" * 40)
    client.address = RoomAddress.parse(link)
    client._comeback(holding=True, when=" (while a game is played, an absent player forfeits after 2 minutes)")
    lines = out.getvalue().splitlines()
    assert f"C4LAB_TOKEN=_5Tw{'x' * 40} c4lab connect {link}" in lines
    assert lines[-1] == "(or save the token in a file and add --token-file FILE)"
    assert " ".join(lines[:-2]) == "To come back to this game (while a game is played, an absent player forfeits after 2 minutes), run:"


@pytest.mark.skipif(sys.platform == "win32", reason="a POSIX pseudo-terminal")
def test_at_a_terminal_the_line_is_edited_as_a_shells_and_the_terminal_is_given_back(
    server: BackgroundServer,
) -> None:
    """Review: ``c4lab connect`` read raw lines in its keyboard thread (not
    readline, as ``play --tui``): Left typed ``^[[D`` into the entry, which
    was then "not a column", and Up did the same.  Now, at a (pseudo-)
    terminal: Left and Delete edit the line, Up brings back the move typed
    before, and at the end the terminal echoes and reads lines again."""
    import pty  # lazy: POSIX only
    import select  # lazy: as above
    import termios  # lazy: as above

    left, delete, up = b"\x1b[D", b"\x1b[3~", b"\x1b[A"
    code, ann = new_room(server)
    leader, follower = pty.openpty()
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100", "LINES": "40"}
    process = subprocess.Popen([sys.executable, "-m", "c4lab", "connect", f"{server.url}/r/{code}", "--name", "Bob"],
                               stdin=follower, stdout=follower, stderr=follower, env=env, close_fds=True)
    seen = ""

    def read_until(pattern: str, after: int = 0) -> int:
        """Read the screen until ``pattern`` shows after ``after``: the index past it."""
        nonlocal seen
        deadline = time.monotonic() + 8 * WAIT  # (a first start compiles for a while)
        while (found := re.search(pattern, seen[after:])) is None:
            assert time.monotonic() < deadline and process.poll() is None, f"no {pattern!r}:\n{seen}"
            if select.select([leader], [], [], 0.2)[0]:
                seen += re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", os.read(leader, 4096).decode(errors="replace"))
        return after + found.end()

    alice = Player(server, code, ann)
    playing = threading.Thread(target=alice.play, args=("a", "a"), daemon=True)
    try:
        at = read_until(r"You play B")  # (the command's start may take longer than Ann waits for her turn)
        playing.start()
        at = read_until(r"B \(black\) to move: column", at)
        os.write(leader, b"cx" + left + delete + b"\r")  # cx, the cursor back on x, x deleted: c
        at = read_until(r"B \(black\) to move: column", read_until(r"Bob \(you\), plays c\.", at))
        os.write(leader, up + b"\r")  # the line typed before: c
        at = read_until(r"Bob \(you\), plays c\.", at)
        os.write(leader, b"e\r")
        read_until(r"Leave the game\?", at)
        os.write(leader, b"y\r")
        read_until(r"You left the game\.", at)
        assert process.wait(timeout=WAIT) == 0
        mode = termios.tcgetattr(follower)[3]
        assert mode & termios.ECHO and mode & termios.ICANON, "the terminal was left in cbreak mode"
    finally:
        if process.poll() is None:
            process.kill()
        alice.close()
        os.close(leader)
        os.close(follower)
    assert "is not a column" not in seen, seen
    assert seen.count("B (black), Bob (you), plays c.") == 2, seen


def test_connect_new_opens_a_room_on_the_server_prints_its_link_and_plays_in_it(server: BackgroundServer) -> None:
    """Review (a newcomer at the terminal): ``connect`` needed a room's link,
    and the only way to make one without a browser was the REST call of
    docs/protocol.md.  ``--new`` opens the room on the server's address,
    takes the seat asked for and prints the link to share and the way
    back; the player then waits in the room as the page's creator does."""
    keys = Keys()
    client = Running(server.url, keys, name="Ann", new_room={"board": "6x5/Xc2", "seat": "B", "public": False})
    client.wait_for("Waiting for a second player: share the link")
    out = client.output
    link = out.split("Share its link: ")[1].split()[0]
    code = link.rsplit("/r/", 1)[1]
    assert link == f"{server.url}/r/{code}"
    room = room_state(server, code)
    assert room["mode"] == "online" and room["position"] == "6x5/Xc2"
    assert room["seats"]["B"]["name"] == "Ann" and not room["seats"]["A"]["taken"]
    token = out.split("Your token (keep it): ")[1].split()[0]
    assert f"C4LAB_TOKEN={token} c4lab connect {link}" in out
    bob = Player(server, code, join(server, code, "Bob"))
    try:
        bob.play("a")
        keys.answer("B (black) to move", "r")
        keys.answer("Really resign", "y")
        assert bob.next_state(lambda room: room["status"] == "over")["result"] == "A"
        keys.answer("m for a rematch", "e")
        assert client.finish() == 0
    finally:
        bob.close()
    assert "A (white), Bob, wins: B (black) resigned." in client.output


def test_connect_new_says_what_the_server_refused_and_where_nothing_answers(server: BackgroundServer) -> None:
    from c4lab.ui import room_link

    with pytest.raises(ConnectError) as info:
        room_link.open_room(server.url, {"mode": "online", "board": "3x3"}, WAIT)
    assert info.value.status == 2 and info.value.message.startswith("The server opened no room: "), info.value.message
    assert "3x3" in info.value.message
    with pytest.raises(ConnectError) as info:  # a field of no such name: FastAPI's 422, said as field: reason
        room_link.open_room(server.url, {"mode": "online", "borad": "7x6"}, WAIT)
    assert info.value.message == "The server opened no room: borad: Extra inputs are not permitted.", info.value.message
    with socket.socket() as probe:  # a port nothing listens on: refused, so tried again for the first contact's time
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
        client = OnlineClient(f"http://127.0.0.1:{port}", console=Console(file=io.StringIO(), width=400),
                              read=Script(), new_room={"board": "7x6"}, first_contact_for=0.2, retry_delay=0.05)
        assert client.run() == 2
    assert client.console.file.getvalue().startswith(f"Nothing answers at http://127.0.0.1:{port} (")


@pytest.mark.parametrize(("args", "said"), [
    (["http://h:8000/r/abcdef", "--new"], ("Invalid value for 'URL': 'http://h:8000/r/abcdef' is a room's link, "
                                           "not a server's address")),
    (["http://h:8000"], "(a server's address: add --new to open a new room there)"),
    (["http://h:8000/r/abcdef", "--board", "8x8"], "--board is for the room --new opens: add --new"),
    (["http://h:8000/r/abcdef", "--public"], "--public is for the room --new opens: add --new"),
    (["http://h:8000", "--new", "--watch"], "--new opens a room and takes a seat of it: --watch is for joining"),
    (["http://h:8000", "--new", "--token", "t"], "--token is for joining a room"),
    (["http://h:8000", "--new", "--board", "8x8/Xz9"], "Invalid value for '--board': invalid position '8x8/Xz9'"),
    (["http://h:8000", "--new", "--board", "8x7/Bd1", "--bonus"], "--bonus"),
])
def test_connect_new_and_its_options_are_checked_before_anything_connects(args: list[str], said: str) -> None:
    result = CliRunner().invoke(main, ["connect", *args])
    assert result.exit_code == 2, result.output
    assert said in result.stderr and result.stdout == "", result.output


def test_connect_new_leaves_a_c4lab_token_of_another_game_in_the_environment_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``--token`` with ``--new`` is refused, but ``C4LAB_TOKEN`` left set
    from another game (as the come-back line suggests) is no reason to
    refuse: the new room's token is printed instead."""
    from c4lab.ui import online

    given: list[dict[str, Any]] = []
    monkeypatch.setattr(online, "run_online", lambda url, **options: given.append(options) or 0)
    result = CliRunner().invoke(main, ["connect", "http://h:8000", "--new"], env={"C4LAB_TOKEN": "old-token"})
    assert result.exit_code == 0, result.output
    assert given[0]["token"] is None and given[0]["new_room"] == {"board": "7x6", "bonus": False, "seat": "random",
                                                                  "public": False}


def test_a_guest_who_joins_while_the_host_is_away_is_told_the_host_s_time_to_come_back(
    server: BackgroundServer,
) -> None:
    """Review: Bob joined a room whose host had left before anyone came:
    he saw "A (white), Ann (not connected), to move." and nothing more,
    until two minutes later Ann forfeited.  A player who drops during the
    game is announced with the time left; so is one away when a guest
    comes."""
    code, ann = new_room(server, seat="B")
    Player(server, code, ann).close()  # Ann opened her room and left it: her clock starts with the game
    bob = Running(f"{server.url}/r/{code}", Script(), name="Bob")  # A, to move: the keyboard's end leaves
    bob.wait_for("B (black), Ann, is not connected: they can come back; they forfeit unless they are back within ")
    assert re.search(r"back within (2 minutes|1[01]\d s)\.\n", bob.output), bob.output
    assert bob.finish() == 0
