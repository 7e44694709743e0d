"""The game server on a real uvicorn on loopback: rooms, the protocol, bad
input, reconnection, forfeits, a restart in the middle of a game, load."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets

from c4lab.agents.base import Analysis, Budget, MoveStats
from c4lab.rules import Move, Position
from c4lab.server.run import BackgroundServer, shown_host
from c4lab.server.storage import GameRow, GameStore, read_games
from c4lab.solver import Solver
from testkit import hold_moves


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "games.sqlite"


@pytest.fixture
def server(db: Path) -> Iterator[BackgroundServer]:
    store = GameStore(db)
    running = BackgroundServer(store, forfeit_after=1.0).start()
    try:
        yield running
    finally:
        running.stop()
        store.close()


def create(server: BackgroundServer, **body: Any) -> dict[str, Any]:
    """A new room.  The wait is generous: a room with an agent gets it ready
    in the server's pool, and numba compiling there (an empty cache) holds
    the GIL for seconds on a loaded machine (httpx's 5 s ran out)."""
    answer = httpx.post(server.url + "/api/rooms", json=body, timeout=60)
    assert answer.status_code == 200, answer.text
    return answer.json()


def ws_url(server: BackgroundServer, code: str) -> str:
    return server.url.replace("http://", "ws://") + f"/ws/{code}"


class Client:
    """A protocol client over one WebSocket, with a queue of what it got."""

    def __init__(self, socket: Any) -> None:
        self.socket = socket
        self.received: list[dict[str, Any]] = []

    @classmethod
    async def open(cls, url: str, token: str | None = None) -> Client:
        client = cls(await websockets.connect(url, max_size=2**20))
        await client.expect("state")
        if token is not None:
            await client.send({"type": "hello", "token": token})
            await client.expect("state")
        return client

    async def send(self, message: dict[str, Any] | str) -> None:
        await self.socket.send(message if isinstance(message, str) else json.dumps(message))

    async def expect(self, kind: str, timeout: float = 10.0, **fields: Any) -> dict[str, Any]:
        """The next message of ``kind`` (others are kept in ``received``)."""
        async with asyncio.timeout(timeout):
            while True:
                message = json.loads(await self.socket.recv())
                self.received.append(message)
                if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                    return message

    async def state_at(self, position: str, timeout: float = 10.0) -> dict[str, Any]:
        """Wait for a state whose position is ``position``."""
        async with asyncio.timeout(timeout):
            while True:
                message = await self.expect("state", timeout)
                if message["room"]["position"] == position:
                    return message

    async def close(self) -> None:
        await self.socket.close()


async def online_game(server: BackgroundServer, **body: Any) -> tuple[str, dict[str, str], Client, Client]:
    """An online room with both seats taken and both players connected:
    the code, the tokens by seat, Ann's (A) and Bob's (B) clients."""
    room = create(server, mode="online", seat="A", name="Ann", **body)
    code = room["code"]
    guest = httpx.post(server.url + f"/api/rooms/{code}/join", json={"name": "Bob"}).json()
    ann = await Client.open(ws_url(server, code), room["token"])
    bob = await Client.open(ws_url(server, code), guest["token"])
    return code, {"A": room["token"], "B": guest["token"]}, ann, bob


def stored(db: Path, code: str) -> dict[str, Any]:
    with sqlite3.connect(db) as connection:
        connection.row_factory = sqlite3.Row
        row = connection.execute("SELECT * FROM games WHERE code = ?", (code,)).fetchone()
        return dict(row)


# ---------------------------------------------------------------------------
# REST
# ---------------------------------------------------------------------------


def test_rooms_are_created_with_unguessable_codes_and_secret_tokens(server: BackgroundServer, db: Path) -> None:
    local = create(server, mode="local", players={"A": "human", "B": "human"})
    assert len(local["code"]) == 16 and local["seats"] == ["A", "B"] and len(local["token"]) >= 32
    online = create(server, mode="online", seat="B", name="Ann", board="9x8/Xd3")
    assert online["seats"] == ["B"]
    state = httpx.get(server.url + f"/api/rooms/{online['code']}").json()
    assert state["status"] == "waiting" and state["position"] == "9x8/Xd3"
    assert state["seats"]["B"]["name"] == "Ann" and not state["seats"]["A"]["taken"]
    row = stored(db, online["code"])
    assert online["token"] not in row["seats"], "only a hash of the token is stored"
    # a room of two computers holds no seat for its creator, who watches: no token to keep (it was one that
    # every hello with it had refused, "bad-token")
    computers = create(server, mode="local", players={"A": "random:seed=1", "B": "random:seed=2"})
    assert computers["seats"] == [] and computers["token"] is None


@pytest.mark.parametrize(
    "body,words",
    [
        ({"board": "7x6:4453"}, "character 4"),
        ({"board": "13x6"}, "out of range"),
        ({"width": 7, "height": 6, "forbidden": "h9"}, "forbidden: cell h9 is off the 7x6 board (columns a to g, rows 1 to 6)"),
        ({"width": 9, "height": 8, "forbidden": "z9"}, "forbidden: cell z9 is off the 9x8 board (columns a to i, rows 1 to 8)"),
        ({"players": {"A": "human", "B": "nobody"}}, "unknown agent 'nobody'"),
        ({"players": {"A": "human", "B": "uct:iterations=x"}}, "not a valid int"),
        ({"players": {"A": "human", "B": "engine:cmd=touch /tmp/pwned"}}, "only the local command line"),
        ({"players": {"A": "human", "B": "qlearning:table=/etc/passwd"}}, "only the local command line"),
        ({"name": "<script>alert(1)</script>", "mode": "online"}, "plain text"),
        ({"name": "x" * 40, "mode": "online"}, "1 to 24 characters"),
        ({"mode": "chess"}, "mode"),
        # a field that does not apply is refused, never dropped without a word
        ({"mode": "online", "players": {"A": "human", "B": "master"}}, "players are for local rooms"),
        ({"forbidden": "d3"}, "forbidden goes with width and height"),
        ({"board": "9x8", "forbidden": "d3"}, "forbidden goes with width and height"),
        # a cell name, not more of a position string pasted after it
        ({"width": 7, "height": 6, "forbidden": "d3/Bb1:dd"}, "forbidden: 'd3/Bb1:dd' is not a cell name"),
        ({"width": 7, "height": 6, "forbidden": ""}, "forbidden: '' is not a cell name"),
        ({"width": 7.5, "height": 6}, "width"),
        # a game that is over before it starts (an analysis board opens one: below)
        ({"board": "7x6:abababa"}, "the game is over in 7x6:abababa: start from a position with a move to play"),
        ({"board": "4x4:abababa", "mode": "online"}, "the game is over in 4x4:abababa"),
        # a second bonus cell: the board's own was played, the one asked for dropped without a word
        ({"board": "6x5/Xc2/Bb2", "bonus": True}, ("6x5/Xc2/Bb2 has its bonus cell (b2) already, and the bonus "
                                                  "asked for would draw another: give one or the other")),
    ],
)
def test_a_bad_room_request_is_refused_with_a_reason(server: BackgroundServer, body: dict, words: str) -> None:
    answer = httpx.post(server.url + "/api/rooms", json=body)
    assert answer.status_code in (400, 422)
    assert words in answer.text


def test_the_agent_list_offers_only_what_a_seat_may_take(server: BackgroundServer) -> None:
    names = {agent["name"] for agent in httpx.get(server.url + "/api/agents").json()}
    assert {"random", "master", "minimax", "perfect"} <= names
    assert not names & {"human", "engine", "qlearning"}


def test_the_free_seat_is_taken_once(server: BackgroundServer) -> None:
    room = create(server, mode="online", seat="A", name="Ann")
    joined = httpx.post(server.url + f"/api/rooms/{room['code']}/join", json={"name": "Bob"})
    assert joined.status_code == 200 and joined.json()["seats"] == ["B"]
    again = httpx.post(server.url + f"/api/rooms/{room['code']}/join", json={"name": "Cy"})
    assert again.status_code == 409 and "both seats are taken" in again.text
    assert httpx.get(server.url + "/api/rooms/nosuchroom").status_code == 404


def test_a_browser_s_unknown_address_gets_the_page_s_not_found_and_a_program_the_json(
    server: BackgroundServer,
) -> None:
    """Review: a mistyped address showed ``{"detail":"Not Found"}`` in the
    browser, where ``/r/NOPE`` gets the page's own "Not found"."""
    html = {"accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
    page = httpx.get(server.url + "/nothing/here", headers=html)
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert 'id="missing-title"' in page.text and "content-security-policy" in page.headers
    program = httpx.get(server.url + "/nothing/here")
    assert program.status_code == 404 and program.json() == {"detail": "Not Found"}
    for path in ("/api/nothing", "/static/nothing.js"):  # the API's and the files' answers stay theirs
        assert httpx.get(server.url + path, headers=html).headers["content-type"].startswith("application/json")


def test_an_unknown_room_s_code_is_repeated_whole_only_if_short(server: BackgroundServer) -> None:
    """Review: a 3,000-character code came back whole in the 404's detail
    (and in the socket's error)."""
    missing = httpx.get(server.url + "/api/rooms/nosuchroom")
    assert missing.status_code == 404 and missing.json()["detail"] == "no room 'nosuchroom'"
    long_code = "a" * 3000
    for path in (f"/api/rooms/{long_code}", f"/api/games/{long_code}", f"/api/games/{long_code}/review"):
        answer = httpx.get(server.url + path)
        assert answer.status_code == 404
        assert answer.json()["detail"] == f"no room '{'a' * 40}... (3000 characters)'"

    async def attempt() -> None:
        async with websockets.connect(ws_url(server, long_code)) as socket:
            error = json.loads(await socket.recv())
            assert error["code"] == "unknown-room" and error["message"] == f"no room '{'a' * 40}... (3000 characters)'"

    asyncio.run(attempt())


def test_the_api_is_described_and_the_page_is_served(server: BackgroundServer) -> None:
    schema = httpx.get(server.url + "/openapi.json").json()
    assert {"/api/rooms", "/api/rooms/{code}/join", "/api/games"} <= set(schema["paths"])
    for path in ("/", "/r/abc", "/games"):
        assert "<html" in httpx.get(server.url + path).text


# ---------------------------------------------------------------------------
# Playing
# ---------------------------------------------------------------------------


def test_two_players_and_a_spectator_play_an_online_game_to_the_end(server: BackgroundServer, db: Path) -> None:
    async def game() -> None:
        code, _, ann, bob = await online_game(server, public=True)
        watcher = await Client.open(ws_url(server, code))
        position = "7x6"
        for token in "ababab" + "a":
            player = ann if Position.parse(position).to_move == "A" else bob
            await player.send({"type": "move", "move": token})
            position = Position.parse(position).play(token).notation
            for client in (ann, bob, watcher):
                state = (await client.state_at(position))["room"]
            assert stored(db, code)["position"] == position, "stored before it is broadcast"
        assert state["status"] == "over" and state["result"] == "A" and state["reason"] == "four"
        assert state["win_line"] == ["a1", "a2", "a3", "a4"]
        seen = [m["room"]["position"] for m in watcher.received if m["type"] == "state"]
        assert all(p in seen for p in ("7x6:a", "7x6:ab", "7x6:aba", "7x6:ababab"))
        listed = httpx.get(server.url + "/api/games").json()
        assert [g["code"] for g in listed] == [code] and listed[0]["names"] == {"A": "Ann", "B": "Bob"}
        for client in (ann, bob, watcher):
            await client.close()

    asyncio.run(game())


def test_players_see_how_many_watch_and_a_player_coming_back_is_not_counted(server: BackgroundServer) -> None:
    """Issue 27: the room's ``watchers`` (connections holding no seat), sent
    to everyone when a spectator comes (its hello) or goes; a player's
    connection is not counted while it says hello."""
    async def game() -> None:
        code, tokens, ann, bob = await online_game(server)
        assert bob.received[-1]["room"]["watchers"] == 0
        watcher = await Client.open(ws_url(server, code))
        # its state at once; it counts itself once its hello says it is no player's page
        assert watcher.received[-1]["room"]["watchers"] == 0
        await watcher.send({"type": "hello"})
        assert (await watcher.expect("state"))["room"]["watchers"] == 1
        while (await ann.expect("state"))["room"]["watchers"] != 1:
            pass
        await watcher.close()
        while (await ann.expect("state"))["room"]["watchers"] != 0:
            pass
        await bob.close()
        while (await ann.expect("state"))["room"]["seats"]["B"]["connected"]:
            pass
        mark = len(ann.received)
        bob = await Client.open(ws_url(server, code), tokens["B"])
        while not (await ann.expect("state"))["room"]["seats"]["B"]["connected"]:
            pass
        assert [m["room"]["watchers"] for m in ann.received[mark:] if m["type"] == "state"] == [0]
        await ann.close()
        await bob.close()

    asyncio.run(game())


def test_a_player_who_drops_out_comes_back_to_the_same_game(server: BackgroundServer) -> None:
    async def game() -> None:
        code, tokens, ann, bob = await online_game(server)
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        await bob.close()
        gone = await ann.expect("state")
        while gone["room"]["seats"]["B"]["connected"]:
            gone = await ann.expect("state")
        bob = await Client.open(ws_url(server, code), tokens["B"])
        assert bob.received[-1]["room"]["position"] == "7x6:d" and bob.received[-1]["you"] == ["B"]
        back = await ann.expect("state")
        assert back["room"]["seats"]["B"]["connected"]
        await bob.send({"type": "move", "move": "c"})
        await ann.state_at("7x6:dc")
        await ann.close()
        await bob.close()

    asyncio.run(game())


def test_an_absent_player_forfeits_after_the_configured_time(server: BackgroundServer) -> None:
    async def game() -> None:
        _, _, ann, bob = await online_game(server)
        await bob.close()
        over = await ann.expect("state", timeout=5.0)
        while over["room"]["seats"]["B"]["absent_since"] is None:
            over = await ann.expect("state", timeout=5.0)
        assert 0 < over["room"]["seats"]["B"]["forfeit_in"] <= 1.0  # the countdown Ann sees
        assert "forfeit_in" not in over["room"]["seats"]["A"]
        while over["room"]["status"] != "over":
            over = await ann.expect("state", timeout=5.0)
        assert over["room"]["result"] == "A" and over["room"]["reason"] == "forfeit"
        await ann.close()

    asyncio.run(game())


async def room_over(server: BackgroundServer, code: str, timeout: float = 6.0) -> dict[str, Any]:
    """The room's state once it is over (polled over REST: nobody is connected)."""
    async with asyncio.timeout(timeout):
        while True:
            state = httpx.get(f"{server.url}/api/rooms/{code}").json()
            if state["status"] == "over":
                return state
            await asyncio.sleep(0.1)


def listed(db: Path, code: str) -> str:
    """The status ``c4lab games`` shows for ``code``."""
    return next(row.shown_status() for row in read_games(db) if row.code == code)


def test_a_room_both_players_left_ends_by_the_forfeit_of_the_first_to_leave(server: BackgroundServer, db: Path) -> None:
    async def game() -> None:
        code, _, ann, bob = await online_game(server, public=True)
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        await bob.close()  # Bob leaves first, then Ann
        while (await ann.expect("state", timeout=10.0))["room"]["seats"]["B"]["connected"]:
            pass  # until Ann has seen him go (a sleep of 0.3 s ordered the two)
        await ann.close()
        state = await room_over(server, code)
        assert (state["result"], state["reason"]) == ("A", "forfeit")
        assert stored(db, code)["status"] == "over" and listed(db, code) == "over"
        games = httpx.get(f"{server.url}/api/games").json()
        assert [g["reason"] for g in games if g["code"] == code] == ["forfeit"]

    asyncio.run(game())


def test_the_countdown_of_a_player_still_away_runs_when_the_other_comes_back(db: Path) -> None:
    """Ann leaves, Bob leaves, Ann comes back: Bob's time runs out, not
    Ann's.  Ann has 6 s to come back (with the fixture's 1 s, 0.6 s was left
    for her to open a socket again: a loaded machine can take that; 3 s
    was close too)."""
    store = GameStore(db)
    server = BackgroundServer(store, forfeit_after=6.0).start()

    async def game() -> None:
        code, tokens, ann, bob = await online_game(server)
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        await ann.close()
        await asyncio.sleep(0.2)
        await bob.close()
        await asyncio.sleep(0.2)
        ann = await Client.open(ws_url(server, code), tokens["A"])
        state = ann.received[-1]["room"]
        assert state["status"] == "playing" and "forfeit_in" in state["seats"]["B"]
        while state["status"] != "over":
            state = (await ann.expect("state", timeout=10.0))["room"]
        assert (state["result"], state["reason"]) == ("A", "forfeit")
        await ann.close()

    try:
        asyncio.run(game())
    finally:
        server.stop()
        store.close()


def test_a_room_both_players_left_before_a_move_ends_abandoned(server: BackgroundServer, db: Path) -> None:
    async def game() -> None:
        code, _, ann, bob = await online_game(server, public=True)
        await ann.close()
        await bob.close()
        state = await room_over(server, code)
        assert (state["result"], state["reason"]) == (None, "abandoned")
        assert listed(db, code) == "abandoned"  # c4lab games lists it as it is
        # no move, no game: the public list of finished games leaves it out
        assert code not in [g["code"] for g in httpx.get(f"{server.url}/api/games").json()]

    asyncio.run(game())


def test_a_room_whose_host_never_connected_and_whose_guest_left_before_a_move_ends_abandoned(
    server: BackgroundServer, db: Path,
) -> None:
    """Review: a host who made the room (by the REST API) and never opened
    it was not counted as gone, so the guest who came and left before any
    move forfeited, and the absent host won."""
    async def game() -> None:
        room = create(server, mode="online", seat="A", name="Ann")
        join = httpx.post(server.url + f"/api/rooms/{room['code']}/join", json={"name": "Bob"})
        assert join.status_code == 200, join.text
        bob = await Client.open(ws_url(server, room["code"]), join.json()["token"])
        await bob.close()
        state = await room_over(server, room["code"])
        assert (state["result"], state["reason"]) == (None, "abandoned")
        assert listed(db, room["code"]) == "abandoned"

    asyncio.run(game())


def test_a_waiting_room_whose_host_left_ends_abandoned(server: BackgroundServer, db: Path) -> None:
    async def game() -> None:
        room = create(server, mode="online", seat="A", name="Ann", public=True)
        ann = await Client.open(ws_url(server, room["code"]), room["token"])
        await ann.close()
        state = await room_over(server, room["code"])
        assert (state["status"], state["result"], state["reason"]) == ("over", None, "abandoned")
        assert listed(db, room["code"]) == "abandoned"
        assert room["code"] not in [g["code"] for g in httpx.get(f"{server.url}/api/games").json()]
        join = httpx.post(server.url + f"/api/rooms/{room['code']}/join", json={"name": "Late"})
        assert join.status_code == 409 and "over" in join.json()["detail"]  # too late: the game stays over
        assert httpx.get(f"{server.url}/api/rooms/{room['code']}").json()["status"] == "over"

    asyncio.run(game())


def test_the_public_finished_games_are_those_with_a_move_played(db: Path) -> None:
    """A room abandoned before any move was played in it is no game: the
    public list leaves it out, also one that started from a pasted position
    (its moves are the start's).  Abandoned after a move, resigned before
    one: a game, listed."""
    store = GameStore(db)
    seat = {"kind": "human", "name": "Ann", "spec": None, "token_hash": None, "absent_since": None}
    seats = {"A": seat, "B": {**seat, "name": "Bob"}}

    def over(code: str, position: str, start_ply: int, result: str | None, reason: str, when: float) -> None:
        store.save(GameRow(code, "online", position, start_ply, seats, public=True, status="over",
                           result=result, reason=reason, finished=when))

    over("EMPTY", "7x6", 0, None, "abandoned", 1.0)
    over("PASTED", "7x6:dd", 2, None, "abandoned", 2.0)
    over("PLAYED", "7x6:dd", 0, None, "abandoned", 3.0)
    over("PASTEDPLAYED", "7x6:ddc", 2, None, "abandoned", 4.0)
    over("RESIGNED", "7x6", 0, "B", "resign", 5.0)
    try:
        assert [row.code for row in store.finished_public()] == ["RESIGNED", "PASTEDPLAYED", "PLAYED"]
        assert {row.code for row in read_games(db)} >= {"EMPTY", "PASTED"}  # still stored, and in c4lab games
    finally:
        store.close()


def test_rooms_left_open_when_the_server_stopped_end_on_time_after_a_restart(db: Path) -> None:
    async def left(server: BackgroundServer) -> tuple[str, Client]:
        code, _, ann, bob = await online_game(server)
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        await ann.close()  # Ann leaves first; Bob is still there when the server stops
        await asyncio.sleep(0.2)
        return code, bob

    store = GameStore(db)
    first = BackgroundServer(store).start()  # forfeits after 120 s: nothing ends here
    played, _bob = asyncio.run(left(first))
    unplayed = create(first, mode="online", seat="A", name="Ann")["code"]  # never opened, never joined
    httpx.post(first.url + f"/api/rooms/{unplayed}/join", json={"name": "Bob"})
    waiting = create(first, mode="online", seat="B", name="Cy")["code"]
    first.stop()
    store.close()
    assert {stored(db, code)["status"] for code in (played, unplayed)} == {"playing"}

    store = GameStore(db)
    second = BackgroundServer(store, forfeit_after=1.0).start()  # nobody comes back
    try:
        async def ended() -> None:
            state = await room_over(second, played)
            assert (state["result"], state["reason"]) == ("B", "forfeit")  # Ann left first
            for code in (unplayed, waiting):
                state = await room_over(second, code)
                assert (state["result"], state["reason"]) == (None, "abandoned")

        asyncio.run(ended())
        assert {stored(db, code)["status"] for code in (played, unplayed, waiting)} == {"over"}
        assert [listed(db, code) for code in (played, unplayed, waiting)] == ["over", "abandoned", "abandoned"]
    finally:
        second.stop()
        store.close()


def test_a_game_both_players_were_in_when_the_server_stopped_ends_abandoned_not_by_forfeit(db: Path) -> None:
    """The server stopping closes both players' sockets: neither left first,
    so if neither comes back after the restart, nobody forfeits (whichever
    socket happened to close a moment before the other)."""
    async def playing(server: BackgroundServer) -> str:
        code, _, ann, bob = await online_game(server)
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        return code  # both still connected when the server stops

    store = GameStore(db)
    first = BackgroundServer(store).start()
    code = asyncio.run(playing(first))
    first.stop()
    store.close()
    seats = json.loads(stored(db, code)["seats"])
    assert seats["A"]["absent_since"] == seats["B"]["absent_since"]  # the same moment, whatever order they closed

    store = GameStore(db)
    second = BackgroundServer(store, forfeit_after=1.0).start()  # nobody comes back
    try:
        state = asyncio.run(room_over(second, code))
        assert (state["result"], state["reason"]) == (None, "abandoned")
    finally:
        second.stop()
        store.close()


def test_a_listing_without_a_server_shows_an_online_room_left_for_an_hour_as_abandoned() -> None:
    seat = {"kind": "human", "name": "Ann", "spec": None, "token_hash": "x"}
    now = 10_000_000.0
    gone = GameRow("G", "online", "7x6:d", 0, {"A": {**seat, "absent_since": now - 4000}, "B": {**seat, "absent_since": now - 3700}})
    here = GameRow("H", "online", "7x6:d", 0, {"A": {**seat, "absent_since": now - 4000}, "B": {**seat, "absent_since": None}})
    assert gone.shown_status(now) == "abandoned" and here.shown_status(now) == "playing"


def test_the_state_of_a_double_win_gives_each_line(server: BackgroundServer) -> None:
    # an analysis board: a game never starts where it is over, an analysis board opens a finished one
    room = create(server, mode="local", board="7x6:fcgffgeggggcecd", analysis=True)
    state = httpx.get(f"{server.url}/api/rooms/{room['code']}").json()
    assert state["status"] == "over" and state["result"] == "A"
    assert state["win_lines"] == [["d1", "e1", "f1", "g1"], ["d1", "e2", "f3", "g4"]]
    assert state["win_line"] == ["d1", "e1", "e2", "f1", "f3", "g1", "g4"]  # as before: every cell, sorted


def test_a_broadcast_sends_each_connection_the_text_of_its_own_state_message(server: BackgroundServer) -> None:
    """The room is written as JSON once per broadcast: each connection's
    text is still exactly that of its whole message (its own ``you``)."""
    room = create(server, mode="online", seat="A", name="Ann")
    guest = httpx.post(f"{server.url}/api/rooms/{room['code']}/join", json={"name": "Bob"}).json()

    async def play() -> list[tuple[str, str]]:
        url = ws_url(server, room["code"])
        async with websockets.connect(url) as ann, websockets.connect(url) as bob, websockets.connect(url) as eve:
            for socket, token, side in ((ann, room["token"], "A"), (bob, guest["token"], "B")):
                await socket.send(json.dumps({"type": "hello", "token": token}))
                while json.loads(await socket.recv())["you"] != [side]:
                    pass
            await ann.send(json.dumps({"type": "move", "move": "d"}))

            async def the_move(socket: Any) -> str:
                while '"position":"7x6:d"' not in (text := await socket.recv()):
                    pass
                return text

            return [(name, await the_move(socket)) for name, socket in (("A", ann), ("B", bob), ("eve", eve))]

    texts = asyncio.run(play())
    rooms = []
    for name, text in texts:
        message = json.loads(text)
        assert text == json.dumps(message, separators=(",", ":"), ensure_ascii=False)
        assert message["type"] == "state" and message["you"] == ([] if name == "eve" else [name])
        rooms.append(message["room"])
    assert rooms[0] == rooms[1] == rooms[2] and rooms[0]["position"] == "7x6:d"


def test_the_room_link_uses_the_address_the_request_reached(server: BackgroundServer) -> None:
    port = server.url.rsplit(":", 1)[1]
    for host in ("games.example.org:8443", f"192.0.2.7:{port}", f"localhost:{port}"):
        ticket = httpx.post(server.url + "/api/rooms", json={"mode": "online"}, headers={"Host": host}).json()
        assert ticket["link"] == f"http://{host}/r/{ticket['code']}" and ticket["url"] == f"/r/{ticket['code']}"
        joined = httpx.post(server.url + f"/api/rooms/{ticket['code']}/join", json={}, headers={"Host": host}).json()
        assert joined["link"] == ticket["link"]
    assert shown_host("0.0.0.0") not in ("0.0.0.0", "") and shown_host("::") != "::"
    assert shown_host("127.0.0.1") == "127.0.0.1" and shown_host("games.example.org") == "games.example.org"


def test_a_local_game_against_an_agent_with_undo_hint_and_resign(server: BackgroundServer) -> None:
    async def game() -> None:
        room = create(server, mode="local", players={"A": "human", "B": "random:seed=1"})
        me = await Client.open(ws_url(server, room["code"]), room["token"])
        await me.send({"type": "move", "move": "d"})
        await me.expect("thinking", seat="B")
        reply = await me.expect("state")
        while reply["room"]["thinking"] or reply["room"]["position"] == "7x6:d":
            reply = await me.expect("state")
        assert len(Position.parse(reply["room"]["position"]).moves) == 2
        await me.send({"type": "hint"})
        hint = await me.expect("hint", timeout=30)
        assert hint["move"] in reply["room"]["legal_moves"] and -1 <= hint["evaluation"] <= 1
        assert hint["position"] == reply["room"]["position"]  # the position it answers (the analysis board asks after every move)
        await me.send({"type": "undo"})
        await me.state_at("7x6")  # my move and the agent's reply are taken back
        await me.send({"type": "resign"})
        over = await me.expect("state")
        assert over["room"]["result"] == "B" and over["room"]["reason"] == "resign"
        await me.send({"type": "undo"})  # a resigned game stays over
        refused = await me.expect("error")
        assert refused["code"] == "game-over"
        # in the result words of every screen (it said the bare reason: "the game is over (resign)")
        assert refused["message"] == "the game is over (B wins: A resigned): start a new one"
        state = httpx.get(f"{server.url}/api/rooms/{room['code']}").json()
        assert state["status"] == "over" and state["reason"] == "resign"
        await me.close()

    asyncio.run(game())


def test_agents_play_each_other_in_a_local_room(server: BackgroundServer) -> None:
    async def game() -> None:
        room = create(server, mode="local", board="random", players={"A": "random:seed=3", "B": "normal"})
        watcher = await Client.open(ws_url(server, room["code"]))
        state = watcher.received[-1]
        while state["room"]["status"] != "over":
            state = await watcher.expect("state", timeout=30)
        assert Position.parse(state["room"]["position"]).is_over
        await watcher.close()

    asyncio.run(game())


def test_a_move_that_waits_for_numba_to_compile_says_so_and_the_notice_goes(
    server: BackgroundServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While an agent's move waits and numba compiles (simulated here with the
    compile event numba sends), the room's state carries ``preparing``: the
    seconds waited, sent every second; once the move is played it is gone.
    The move waits for the test until it has seen two of them (the agent's
    own 2.5 s could end first on a loaded machine, the client connecting late)."""
    from numba.core import event

    from c4lab.agents.uct import UCTAgent

    released = hold_moves(monkeypatch, UCTAgent)

    async def game() -> None:
        event.start_event("numba:compile", data={})
        try:
            made = time.monotonic()
            room = create(server, mode="local", players={"A": "uct:time=2.5,seed=1", "B": "human"})
            me = await Client.open(ws_url(server, room["code"]), room["token"])
            state = me.received[-1]
            while state["room"].get("preparing") is None:
                state = await me.expect("state", timeout=10)
            first = state["room"]["preparing"]
            # the seconds the move has waited: no more than the room has been there
            assert state["room"]["thinking"] == "A" and 0 < first < time.monotonic() - made
            state = await me.expect("state", timeout=10)
            assert state["room"]["preparing"] > first  # the seconds so far, sent again
        finally:
            event.end_event("numba:compile", data={})
            released.set()
        while state["room"]["thinking"]:
            state = await me.expect("state", timeout=60)  # its 2.5 s (and on a fresh numba cache, its compile)
        assert state["room"]["position"] != "7x6" and state["room"]["preparing"] is None
        await me.close()

    asyncio.run(game())


def test_a_new_room_prepares_its_agent_while_the_person_thinks(server: BackgroundServer) -> None:
    """The agent of a new room that does not move first plays a throwaway
    move in the pool at once (numba compiles, or loads, its kernels), once
    per agent and kind of board (its name and the board's size: a visitor
    who varies the options or the cells queues no more warm-ups)."""
    from c4lab.agents import base as agents_base  # the claims (the warm-up lives with the agents)
    from c4lab.server import warmup

    create(server, mode="local", players={"A": "human", "B": "uct:iterations=7,seed=3"})
    assert "uct@7x6" in agents_base._warmed
    assert not warmup.claim("uct@7x6")  # not again in this process
    before = set(agents_base._warmed)  # (with what earlier tests in this process warmed up)
    create(server, mode="local", players={"A": "human", "B": "uct:iterations=7,seed=4"}, board="7x6/Xa1")
    assert set(agents_base._warmed) == before


def test_a_move_without_a_compile_never_says_preparing(server: BackgroundServer) -> None:
    from c4lab.agents import Budget, make_agent

    make_agent("uct").choose(Position.parse("7x6"), Budget(iterations=1))  # compiled in this process already

    async def game() -> None:
        room = create(server, mode="local", players={"A": "uct:time=1.2,seed=1", "B": "human"})
        me = await Client.open(ws_url(server, room["code"]), room["token"])
        state = me.received[-1]
        while state["room"]["thinking"]:
            assert state["room"]["preparing"] is None
            state = await me.expect("state", timeout=10)
        assert state["room"]["preparing"] is None
        await me.close()

    asyncio.run(game())


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_every_bad_message_gets_a_clear_error_and_changes_nothing(server: BackgroundServer, db: Path) -> None:
    async def game() -> None:
        code, _, ann, bob = await online_game(server)
        spectator = await Client.open(ws_url(server, code))
        await ann.send({"type": "move", "move": "d"})
        await bob.state_at("7x6:d")
        before = stored(db, code)
        cases = [
            (bob, "{not json", "bad-json"),
            (bob, "[1, 2]", "bad-message"),
            (bob, {"type": "teleport"}, "bad-message"),
            (bob, {"type": "move"}, "bad-message"),
            (bob, {"type": "move", "move": 3}, "bad-message"),
            (bob, json.dumps({"type": "move", "move": "d", "pad": "x" * 5000}), "too-large"),
            (bob, {"type": "hello", "token": "forged"}, "bad-token"),
            (ann, {"type": "move", "move": "c"}, "not-your-turn"),
            (spectator, {"type": "move", "move": "c"}, "not-your-seat"),
            (bob, {"type": "move", "move": "q"}, "illegal-move"),
            (bob, {"type": "move", "move": "d+a"}, "illegal-move"),
            (bob, {"type": "undo"}, "not-allowed"),
            (bob, {"type": "hint"}, "not-allowed"),
            (bob, {"type": "review"}, "not-allowed"),  # the game is not over
        ]
        for client, message, code_expected in cases:
            await client.send(message)
            error = await client.expect("error")
            assert error["code"] == code_expected, (message, error)
            assert error["message"]
        # The forged token changed nothing: Bob still holds B (the state after
        # the error says so).
        state = [m for m in bob.received if m["type"] == "state"][-1]
        assert state["you"] == ["B"] and state["room"]["position"] == "7x6:d"
        after = stored(db, code)
        assert after["position"] == before["position"] and after["status"] == before["status"]
        await bob.send({"type": "move", "move": "c"})
        await ann.state_at("7x6:dc")  # the room still works
        for client in (ann, bob, spectator):
            await client.close()

    asyncio.run(game())


def test_a_message_flood_is_rate_limited_and_the_server_keeps_running(server: BackgroundServer) -> None:
    async def game() -> None:
        room = create(server, mode="local", players={"A": "human", "B": "human"})
        me = await Client.open(ws_url(server, room["code"]), room["token"])
        for _ in range(200):
            await me.send({"type": "ping"})
        error = await me.expect("error")
        assert error["code"] == "rate-limited"
        pongs = sum(1 for m in me.received if m["type"] == "pong")
        assert pongs < 200
        await asyncio.sleep(1.5)  # the bucket refills
        await me.send({"type": "move", "move": "d"})
        await me.state_at("7x6:d")
        await me.close()

    asyncio.run(game())


def test_an_unknown_room_is_an_error_and_a_closed_socket(server: BackgroundServer) -> None:
    async def attempt() -> None:
        async with websockets.connect(ws_url(server, "guessedcode12345")) as socket:
            error = json.loads(await socket.recv())
            assert error["type"] == "error" and error["code"] == "unknown-room"
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await socket.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404

    asyncio.run(attempt())


def test_a_corrupt_database_file_is_refused_with_a_clear_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    from c4lab.server.storage import StorageError

    with pytest.raises(StorageError, match="not a usable c4lab game database"):
        GameStore(bad)


# ---------------------------------------------------------------------------
# Restart and load
# ---------------------------------------------------------------------------


def test_a_move_writes_only_the_position_and_the_time(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A save of a row the store remembers updates the columns that
    changed; a row it does not remember, or that is not there, is written
    whole; what is on disk is the row every time."""
    seat = {"kind": "human", "name": "Ann", "spec": None, "token_hash": "h", "absent_since": None}
    row = GameRow("R1", "online", "7x6", 0, {"A": seat, "B": {**seat, "name": "Bob"}})
    store = GameStore(db)
    statements: list[str] = []
    store._db.set_trace_callback(statements.append)

    def on_disk(code: str) -> dict[str, Any]:
        found = read_games(db)
        return dict(next(r for r in found if r.code == code).__dict__)

    try:
        store.save(row)
        row.position = "7x6:d"
        store.save(row)
        assert statements[-1].startswith("UPDATE games SET position = '7x6:d', updated = ")
        assert on_disk("R1") == row.__dict__
        row.position, row.status, row.result, row.reason, row.finished = "7x6:dcdcdcd", "over", "A", "four", 5.0
        store.save(row)
        assert statements[-1].startswith("UPDATE games SET position = '7x6:dcdcdcd', status = 'over', result = 'A', "
                                         "reason = 'four', updated = ")
        assert statements[-1].endswith(", finished = 5.0 WHERE code = 'R1'")
        assert on_disk("R1") == row.__dict__
        store._db.execute("DELETE FROM games")  # not there: written whole again
        store.save(row)
        assert on_disk("R1") == row.__dict__
        monkeypatch.setattr("c4lab.server.storage.REMEMBERED", 1)
        other = GameRow("R2", "online", "7x6:a", 0, row.seats)
        for position in ("7x6:ab", "7x6:abc"):
            store.save(other)  # R1 forgotten
            row.position, other.position = position + "d", position
            store.save(row)
            assert on_disk("R1") == row.__dict__ and on_disk("R2")["position"] == other.position[:-1]
    finally:
        store.close()
    reopened = GameStore(db)
    try:
        loaded = reopened.load("R1")
        assert loaded is not None
        loaded.position += "e"
        statements.clear()
        reopened._db.set_trace_callback(statements.append)
        reopened.save(loaded)  # read, so remembered: only what changed
        assert statements[0].startswith("UPDATE games SET position = ")
    finally:
        reopened.close()


def test_a_game_goes_on_after_a_server_restart(db: Path) -> None:
    async def half(server: BackgroundServer, code: str, tokens: dict[str, str], moves: str, start: str) -> str:
        ann = await Client.open(ws_url(server, code), tokens["A"])
        bob = await Client.open(ws_url(server, code), tokens["B"])
        position = start
        for token in moves:
            player = ann if Position.parse(position).to_move == "A" else bob
            await player.send({"type": "move", "move": token})
            position = Position.parse(position).play(token).notation
            await ann.state_at(position)
        await ann.close()
        await bob.close()
        return position

    store = GameStore(db)
    first = BackgroundServer(store).start()
    room = create(first, mode="online", seat="A", name="Ann", board="8x7/Xc1")
    guest = httpx.post(first.url + f"/api/rooms/{room['code']}/join", json={"name": "Bob"}).json()
    tokens = {"A": room["token"], "B": guest["token"]}
    middle = asyncio.run(half(first, room["code"], tokens, "abab", "8x7/Xc1"))
    first.stop()
    store.close()

    store = GameStore(db)
    second = BackgroundServer(store).start()  # a new process would do the same: only the file is shared
    try:
        state = httpx.get(second.url + f"/api/rooms/{room['code']}").json()
        assert state["position"] == middle and state["status"] == "playing"
        final = asyncio.run(half(second, room["code"], tokens, "aba", middle))
        state = httpx.get(second.url + f"/api/rooms/{room['code']}").json()
        assert state["position"] == final and state["result"] == "A"
    finally:
        second.stop()
        store.close()


@pytest.mark.slow
def test_200_concurrent_rooms_play_random_moves_without_losing_any(server: BackgroundServer, db: Path) -> None:
    rooms = 200
    moves_per_room = 12

    async def one_room(index: int) -> tuple[str, str]:
        rng = random.Random(index)
        room = create_async_result[index]
        code = room["code"]
        ann = await Client.open(ws_url(server, code), room["token"])
        bob = await Client.open(ws_url(server, code), room["guest"])
        position = Position.parse(room["board"])
        for _ in range(moves_per_room):
            if position.is_over:
                break
            move = rng.choice(position.legal_moves())
            player = ann if position.to_move == "A" else bob
            await player.send({"type": "move", "move": move.token})
            position = position.play(move)
            await player.state_at(position.notation, timeout=60)
        await ann.close()
        await bob.close()
        return code, position.notation

    async def load() -> list[tuple[str, str]]:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            for i in range(rooms):
                board = random.Random(i).choice(["7x6", "9x8/Xd3", "6x5/Bb1", "12x12/Xf4"])
                made = (await http.post("/api/rooms", json={"mode": "online", "seat": "A", "board": board})).json()
                guest = (await http.post(f"/api/rooms/{made['code']}/join", json={})).json()
                create_async_result.append({**made, "guest": guest["token"], "board": board})
        return await asyncio.gather(*(one_room(i) for i in range(rooms)))

    create_async_result: list[dict[str, Any]] = []
    results = asyncio.run(load())
    assert len({code for code, _ in results}) == rooms
    for code, position in results:
        assert stored(db, code)["position"] == position, "no lost or corrupted game"
        assert httpx.get(server.url + f"/api/rooms/{code}").json()["position"] == position


def test_the_agent_list_puts_the_levels_first_weakest_first_and_experimental_agents_last(
    server: BackgroundServer,
) -> None:
    agents = httpx.get(server.url + "/api/agents").json()
    groups = [a["group"] for a in agents]
    assert groups == sorted(groups, key=["level", "agent", "experimental"].index)
    levels = [a["name"] for a in agents if a["group"] == "level"]
    assert levels == ["random", "normal", "hard", "impossible", "master", "perfect"]
    assert {"uct-lgr2", "hybrid"} <= {a["name"] for a in agents if a["group"] == "experimental"}
    assert all(a["summary"] and "\n" not in a["summary"] and a["help"] for a in agents)


# ---------------------------------------------------------------------------
# Analysis: every column's score in the hint, the review after the game
# ---------------------------------------------------------------------------

#: 7x6:adcdcdcd, scored with ``c4lab solve --analyse``: White's first move
#: (a, -2 where d was +1) turns a win into a loss; Black then plays best
#: moves to a vertical four in d.
BLUNDER_GAME = "7x6:adcdcdcd"


def test_the_hint_gives_every_column_its_exact_score(server: BackgroundServer) -> None:
    async def game() -> None:
        room = create(server, mode="local", board="7x6:dd", players={"A": "human", "B": "human"})
        me = await Client.open(ws_url(server, room["code"]), room["token"])
        await me.send({"type": "hint"})
        hint = await me.expect("hint", timeout=60)
        # c4lab solve --analyse 7x6:dd
        assert {c["column"]: c["score"] for c in hint["columns"]} == {
            "a": -3, "b": -3, "c": -2, "d": 1, "e": -2, "f": -3, "g": -3,
        }
        assert all(c["exact"] and c["estimate"] is None for c in hint["columns"])
        assert hint["best"] == ["d"] and hint["move"] == "d"
        assert hint["value"] == 1.0 and hint["evaluation"] == 1.0  # A to move, and A wins
        await me.close()

    asyncio.run(game())


def test_the_review_marks_the_blunder_and_the_best_moves_of_a_finished_game(server: BackgroundServer) -> None:
    async def game() -> None:
        room = create(server, mode="local", board=BLUNDER_GAME[:-1], players={"A": "human", "B": "human"})
        code = room["code"]
        refused = httpx.get(f"{server.url}/api/games/{code}/review")
        assert refused.status_code == 409 and "finished" in refused.json()["detail"]
        me = await Client.open(ws_url(server, code), room["token"])
        await me.send({"type": "review"})
        error = await me.expect("error")
        assert error["code"] == "not-allowed" and "finished" in error["message"]
        await me.send({"type": "move", "move": "d"})
        await me.state_at(BLUNDER_GAME)
        watcher = await Client.open(ws_url(server, code))  # a spectator may ask too
        await watcher.send({"type": "review"})
        review = await watcher.expect("review", timeout=60)
        assert review["position"] == BLUNDER_GAME and review["complete"]
        entries = review["entries"]
        assert [e["move"] for e in entries] == list("adcdcdcd")
        assert [e["side"] for e in entries] == ["A", "B"] * 4
        first = entries[0]
        assert (first["before"], first["played"], first["after"]) == (1, -2, 2)
        assert first["best"] == ["d"] and first["verdict"] == "blunder"
        assert first["scores"] == {"a": -2, "b": -1, "c": 0, "d": 1, "e": 0, "f": -1, "g": -2}
        assert [e["verdict"] for e in entries if e["side"] == "B"] == ["best"] * 4
        assert [e["verdict"] for e in entries].count("blunder") == 1
        # each side's accuracy: the share of its moves that kept the exact result (issue 27), counting only
        # the moves played in the room: the first seven were its pasted start, which nobody played here
        assert review["start_ply"] == 7
        assert review["summary"]["A"] == {"moves": 0, "known": 0, "kept": 0, "blunders": 0, "inaccuracies": 0, "best": 0,
                                          "accuracy": None}
        assert review["summary"]["B"] == {"moves": 1, "known": 1, "kept": 1, "blunders": 0, "inaccuracies": 0, "best": 1,
                                          "accuracy": 1.0}
        last = entries[-1]
        assert last["played"] == 18 and last["after"] is None  # the winning move ends the game
        assert all(e["played"] == -e["after"] for e in entries[:-1])
        # the same review over REST (for the finished-game viewer), from the cache
        again = httpx.get(f"{server.url}/api/games/{code}/review", timeout=60).json()
        assert again["entries"] == entries and again["summary"] == review["summary"]
        await me.close()
        await watcher.close()

    asyncio.run(game())


def test_every_column_whose_estimate_shows_best_is_ringed() -> None:
    """Review: two estimates that both showed 59 % got one gold ring (the
    best was the unrounded value's); every column showing the best whole
    per cent is best now, as the page rounds it (0.5 up)."""
    from c4lab.server.review import columns_of

    unsolved: dict[str, int | None] = {"c": None, "d": None, "e": None}
    assert columns_of(unsolved, {"c": 0.5861, "d": 0.5899, "e": 0.40}, None)["best"] == ["c", "d"]
    assert columns_of(unsolved, {"c": 0.585, "d": 0.5849, "e": 0.40}, None)["best"] == ["c"]  # 59 % and 58 %
    # a solved win still outranks every estimate; an exact loss is not ringed over an estimate
    assert columns_of({"c": 2, "d": None}, {"d": 0.9}, None)["best"] == ["c"]
    assert columns_of({"c": -2, "d": None}, {"d": 0.3}, None)["best"] == ["d"]


def test_a_review_off_the_classic_board_keeps_to_its_time_budget() -> None:
    from c4lab.server.review import VERDICTS, column_scores, review_game, verdict

    big = Position.parse("12x12:" + "fgfgfgefhe")
    review_game(Position.parse("12x12:f"), total=0.1)  # the first search of a board compiles (outside any budget)
    done = review_game(big, per_position=0.05, total=0.3)
    assert done["seconds"] < 5 and len(done["entries"]) == 10
    assert {e["verdict"] for e in done["entries"]} <= set(VERDICTS)
    unknown = [e for e in done["entries"] if e["played"] is None]
    assert not done["complete"] or not unknown
    assert all(e["verdict"] == "unknown" for e in unknown)
    # the summary counts only the solved moves in the accuracy (None when none was solved)
    for side, tally in done["summary"].items():
        mine = [e["verdict"] for e in done["entries"] if e["side"] == side]
        known = [v for v in mine if v != "unknown"]
        assert (tally["moves"], tally["known"], tally["blunders"]) == (len(mine), len(known), mine.count("blunder"))
        assert tally["inaccuracies"] == mine.count("inaccuracy")
        kept = sum(v in ("best", "inaccuracy") for v in known)
        assert tally["accuracy"] == (round(kept / len(known), 3) if known else None)
    # the hint's columns: B threatens g4, so every other column loses at once
    # (solved at once); whether g is solved in time or not, it is the column to highlight
    columns = column_scores(big, None, timeout=0.5, favourite="g")
    assert [c["column"] for c in columns["columns"]] == list("abcdefghijkl")
    assert columns["columns"][0] == {"column": "a", "score": -67, "exact": True, "estimate": None}
    assert columns["best"] == ["g"]
    # the verdict rules: a change of result is a blunder, whatever else is known
    assert verdict(1, -2, {"a": -2, "d": 1}) == "blunder"
    assert verdict(None, 0, {"a": 0, "b": None, "c": 2}) == "blunder"
    assert verdict(3, 1, {"a": 1, "b": 3}) == "inaccuracy"
    assert verdict(3, 3, {"a": 1, "b": 3}) == "best"
    assert verdict(None, 1, {"a": 1, "b": None}) == "unknown"
    assert verdict(2, None, {"a": None, "b": 2}) == "unknown"


class _Adviser:
    """A hint engine that counts its analyses: the first move, valued 0.75."""

    spec = "adviser"
    asked = 0

    def analyse(self, position: Position, budget: object) -> tuple[Move, Analysis]:
        self.asked += 1
        moves = position.legal_moves()
        return moves[0], Analysis(value=0.75, moves=tuple(MoveStats(m, 1, 0.75) for m in moves))


def test_a_hint_the_solver_settles_asks_no_engine_and_one_it_leaves_open_asks_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The solver goes first: where it scores every move, the hint is
    exact and the engine is never asked (on a first start its search would
    have been compiled before the first scores, for nothing); where a
    column is left open, the engine's analysis gives the move, the value
    and that column's estimate."""
    from c4lab.server import review

    warmed: list[str] = []
    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "warm_up_agent", lambda spec, position: warmed.append(spec))
    small = Position.parse("5x4:cc")
    adviser = _Adviser()
    answer = review.hint(small, adviser, timeout=30)  # type: ignore[arg-type]
    assert adviser.asked == 0 and warmed == []
    assert all(c["exact"] and c["estimate"] is None for c in answer["columns"])
    best = max(c["score"] for c in answer["columns"])
    assert answer["value"] == (1.0 if best > 0 else 0.5 if best == 0 else 0.0)
    assert next(c["score"] for c in answer["columns"] if c["column"] == answer["move"][0]) == best
    big = Position.parse("12x12:fg")
    answer = review.hint(big, adviser, timeout=0.001)  # type: ignore[arg-type]
    assert adviser.asked == 1 and answer["value"] == 0.75 and warmed == ["adviser"]  # made ready first
    assert any(not c["exact"] and c["estimate"] == 0.75 for c in answer["columns"])
    # each move left open has the engine's estimate of its own (a ban choice's, shown while the ban is chosen)
    assert answer["estimates"] == {token: 0.75 for token, score in answer["moves"].items() if score is None}
    review.hint(Position.parse("12x12:fgf"), adviser, timeout=0.001)  # type: ignore[arg-type]
    assert adviser.asked == 2 and warmed == ["adviser"]  # once a kind of board


class _ProvingAdviser:
    """An engine that, like ``master`` on a win at once, lists only its
    winning move at the root, and values any other position at 0.25 for its
    side to move; it records each budget it is given."""

    spec = "adviser"

    def __init__(self, root: Position) -> None:
        self.root = root
        self.budgets: list[Budget | None] = []

    def analyse(self, position: Position, budget: Budget | None = None) -> tuple[Move, Analysis]:
        self.budgets.append(budget)
        first = position.legal_moves()[0]
        if position == self.root:
            return first, Analysis(value=1.0, moves=(MoveStats(first, score=5),))
        return first, Analysis(value=0.25)


def test_a_move_the_engines_proof_leaves_out_gets_the_engines_value_of_the_position_after_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """When the engine proves a win and lists only the winning move, every
    other move the solver left open still gets an estimate (its column
    showed "?" above the board, and with the bonus so did each ban choice):
    the engine's value of the position after the move, for the side to
    move here (1 - 0.25), all of them within ``GAP_TIME`` seconds."""
    from c4lab.server import review

    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "warm_up_agent", lambda spec, position: None)
    big = Position.parse("12x12/Ba1:fg")  # a lands on the bonus cell: a (declining) and a+a ... a+l
    adviser = _ProvingAdviser(big)
    answer = review.hint(big, adviser, timeout=0.001)  # type: ignore[arg-type]
    unsolved = [token for token, score in answer["moves"].items() if score is None]
    assert len(unsolved) > 20 and "a+l" in unsolved
    assert answer["estimates"] == {token: 1.0 if token == "a" else 0.75 for token in unsolved}
    assert all(c["exact"] or c["estimate"] == (1.0 if c["column"] == "a" else 0.75) for c in answer["columns"])
    asked = adviser.budgets[1:]
    assert len(asked) == len(unsolved) - (1 if "a" in unsolved else 0)
    assert sum(b.time for b in asked if b is not None and b.time is not None) == pytest.approx(review.GAP_TIME)


def test_while_the_hint_engine_compiles_the_solver_goes_on_and_may_answer_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The engine's first hint on a kind of board compiles its kernels
    (tens of seconds on a first start): meanwhile the solver goes on with
    the moves its budget left open, and where it settles them all, the
    hint is exact at once and the engine, still compiling, is not waited
    for.  Its warm-up is started once, and serves the next hint."""
    from c4lab.server import review

    release = threading.Event()
    warmed: list[str] = []

    def slow_warm_up(spec: str, position: Position) -> None:
        warmed.append(spec)
        release.wait(60)  # a compile that outlasts the solver

    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "warm_up_agent", slow_warm_up)
    position = Position.parse("6x5/Xc2:d")
    adviser = _Adviser()
    assert None in review.move_scores(position, 1e-6).values()  # the first budget leaves moves open
    answer = review.hint(position, adviser, timeout=1e-6)  # type: ignore[arg-type]
    try:
        assert adviser.asked == 0 and warmed == ["adviser"]
        assert all(c["exact"] for c in answer["columns"])
        assert answer["moves"] == {m.token: s for m, s in Solver().analyse(position).items()}
        assert not review._engines["adviser@6x5"].is_set()  # still compiling
    finally:
        release.set()
    review._engines["adviser@6x5"].wait(10)
    review.hint(Position.parse("12x12:fg"), adviser, timeout=0.001)  # type: ignore[arg-type]
    assert adviser.asked == 1


def test_a_hint_whose_engine_gets_ready_while_the_solver_goes_on_asks_the_engine_and_is_not_cancelled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The solver goes on with a hint's open moves while the engine
    compiles, and is stopped once the engine is ready: that stop is not the
    hint's cancel (its position left), so the hint goes on to ask the
    engine.  Before, the engine's readiness cancelled the hint's own solver
    and the hint raised ``HintCancelled`` for a position still on screen
    (the terminal's analysis board ended on it; the server worked the hint
    out twice)."""
    from c4lab.server import review

    go = threading.Event()
    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "PER_POSITION", 1e-3)
    monkeypatch.setattr(review, "SOLVABLE_CELLS", 99)  # 9x8 too, which the solver never settles here
    monkeypatch.setattr(review, "warm_up_agent", lambda spec, position: go.wait(60))
    solve_on = review._solve_while_preparing

    def released(*args: Any) -> dict[str, int | None]:  # the engine gets ready while the solver goes on
        go.set()
        scores: dict[str, int | None] = solve_on(*args)
        for thread in threading.enumerate():  # the stop at the engine's readiness has happened too
            if thread.name == "c4lab-hint-solver-stop":
                thread.join(10)
        return scores

    monkeypatch.setattr(review, "_solve_while_preparing", released)
    adviser = _Adviser()
    solver = Solver(review.TABLE_SIZE)
    answer = review.hint(Position.parse("9x8"), adviser, timeout=1e-6, solver=solver)  # type: ignore[arg-type]
    assert go.is_set() and adviser.asked == 1 and answer["value"] == 0.75
    assert not solver.cancelled  # the caller's solver: cancelled by the caller only


def test_a_reviews_accuracy_counts_each_sides_moves_from_the_empty_board_or_after_a_pasted_start() -> None:
    from c4lab.server.review import review_game

    game = Position.parse("7x6:adcdcdcd")  # A's first move (a) is the game's one blunder
    whole = review_game(game, per_position=5)
    assert whole["summary"]["A"] == {"moves": 4, "known": 4, "kept": 3, "blunders": 1, "inaccuracies": 2, "best": 1,
                                     "accuracy": 0.75}
    assert whole["summary"]["B"] == {"moves": 4, "known": 4, "kept": 4, "blunders": 0, "inaccuracies": 0, "best": 4,
                                     "accuracy": 1.0}
    pasted = review_game(game, 2, per_position=5)  # the same moves, "adcd..." pasted after "ad"
    assert pasted["start_ply"] == 2 and pasted["entries"] == whole["entries"]  # every move is shown...
    assert pasted["summary"]["A"] == {"moves": 3, "known": 3, "kept": 3, "blunders": 0, "inaccuracies": 2, "best": 1,
                                      "accuracy": 1.0}  # two inaccuracies: kept the loss, but lost sooner
    assert pasted["summary"]["B"]["moves"] == 3  # ...but the tally is of the moves played


def test_a_blunder_whose_best_moves_are_unknown_names_the_moves_known_to_do_better(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a variant board the solver often settles only some of a
    position's moves: a move known to lose where another is known to win
    is a blunder, but the position's score (and so its best moves) is not
    known.  The entry then names the moves known to keep a better result
    (``better``), which the page marks; with the best moves known, or for
    any other verdict, ``better`` is empty."""
    from c4lab.server import review

    game = Position.parse("7x6:ad")
    solved = {0: {"a": -2, "b": None, "c": 1, "d": 0, "e": None, "f": -1, "g": -2},  # a: a loss where c wins
              1: {t: 0 for t in "abcdefg"}}
    monkeypatch.setattr(review, "move_scores", lambda position, timeout, solver=None: dict(solved[position.ply]))
    first, second = review.review_game(game, per_position=1)["entries"]
    assert (first["before"], first["best"], first["verdict"], first["better"]) == (None, [], "blunder", ["c", "d"])
    assert (second["before"], second["verdict"], second["better"]) == (0, "best", [])
    solved[0].update(b=-1, e=0)  # every move known: the best is known, and only it is named
    first = review.review_game(game, per_position=1)["entries"][0]
    assert (first["before"], first["best"], first["verdict"], first["better"]) == (1, ["c"], "blunder", [])


def test_a_win_at_once_is_exact_and_the_positions_score_where_nothing_else_was_solved() -> None:
    """On a large board the solver may settle nothing in time; a move that
    wins at once is worth the most any move can be (RULES.md), so it is the
    position's score, and the review's verdict on it is known."""
    from c4lab.server.review import move_scores, position_score, review_game

    before = Position.parse("9x8/Xd3:cebaegbfh")  # B's d wins at once
    scores = move_scores(before, 1e-6)
    assert scores["d"] == (before.empty_cells + 1) // 2 == 31
    assert position_score(before, scores) == 31
    assert position_score(before, {"a": 30, "b": None}) == 30  # (E - 1) // 2: no other move can be worth more
    assert position_score(before, {"a": 29, "b": None}) is None
    assert position_score(before, {"a": -3, "b": 0}) == 0  # all known
    last = review_game(before.play("d"), start_ply=9, per_position=1e-6, total=5)["entries"][-1]
    assert (last["move"], last["before"], last["played"], last["verdict"]) == ("d", 31, 31, "best")


def test_a_server_warms_its_first_need_in_the_pool_then_the_rest_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At start, ``warm_up`` prepares ``first_warm`` (the default level on the
    classic board; ``c4lab analyse`` gives the solver on its position's
    board) in the agent pool, then hands ``BACKGROUND_WARM_UPS`` to the
    background thread; an agent the server does not offer is not warmed."""
    from fastapi.testclient import TestClient

    from c4lab.server.app import BACKGROUND_WARM_UPS, FIRST_WARM_UP, create_app
    from c4lab.server.limits import DEFAULT_AGENTS, AgentLimits
    from c4lab.server.rooms import RoomManager

    calls: list[tuple[str, str]] = []
    monkeypatch.setattr(RoomManager, "prepare", lambda self, spec, start: calls.append((spec, start.notation)))
    monkeypatch.setattr(RoomManager, "prepare_in_background",
                        lambda self, wanted, then=None: calls.append(("background", wanted)))

    def started(**options: Any) -> list[tuple[str, Any]]:
        calls.clear()
        store = GameStore(tmp_path / "g.sqlite")
        try:
            with TestClient(create_app(store, warm_up=True, **options)):
                pass
        finally:
            store.close()
        return list(calls)

    assert FIRST_WARM_UP == ("hard", "7x6")
    assert started() == [("hard", "7x6"), ("background", BACKGROUND_WARM_UPS)]
    assert started(first_warm=("perfect", "6x5/Xc2:dd")) == [("perfect", "6x5/Xc2:dd"), ("background", BACKGROUND_WARM_UPS)]
    no_perfect = AgentLimits(allowed=DEFAULT_AGENTS - {"perfect"})
    assert started(first_warm=("perfect", "6x5"), limits=no_perfect) == [("background", BACKGROUND_WARM_UPS)]
