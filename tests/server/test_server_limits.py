"""A server that can face the public (issue 19, points 1 and 2): bounded
agent work, an allowlist of agents, one room never starving the others,
per-client rate limits and room caps, rooms nobody uses ending, the Origin
check, capped bodies and frames, a join that is safe to retry, and the
token of ``c4lab connect`` kept out of ``ps``."""

from __future__ import annotations

import asyncio
import gc
import json
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from click.testing import CliRunner
from fastapi.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from c4lab.agents.random_agent import RandomAgent
from c4lab.cli import main
from c4lab.server.app import create_app
from c4lab.server.guard import (
    PERSONAL_GUARD,
    UNLIMITED,
    GuardOptions,
    Throttle,
    normal_origin,
    origin_allowed,
)
from c4lab.server.limits import AgentLimits
from c4lab.server.run import GC_THRESHOLDS, MAX_FRAME, BackgroundServer, LongRunningServer, make_server
from c4lab.server.storage import GameStore
from testkit import ROOT, hold_moves


def client_for(store: GameStore, address: str = "203.0.113.7", **options: Any) -> TestClient:
    """A test client of a new app over ``store``, from ``address``."""
    return TestClient(create_app(store, **options), client=(address, 50000))


def local_room(http: Any, b: str, a: str = "human") -> Any:
    return http.post("/api/rooms", json={"mode": "local", "players": {"A": a, "B": b}})


# ---------------------------------------------------------------------------
# 1. Bounded work
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "words"),
    [
        ("master:time=100000", "time=100000 is more than this server allows: it lets an agent think at most 5 s"),
        ("uct:iterations=1000000000000", "it lets an agent run at most 500,000 iterations a move; choose iterations=500000"),
        ("minimax:depth=99", "depth=99 is more than this server allows: it lets an agent look at most 10 moves ahead"),
        ("perfect:time=99999", "it lets an agent think at most 5 s a move; choose time=5 or less"),
        ("uct:nodes=1000000000", "it lets an agent keep at most 2,000,000 nodes in its tree; choose nodes=2000000 or less"),
    ],
)
def test_a_spec_above_a_limit_is_refused_saying_what_to_choose(store: GameStore, spec: str, words: str) -> None:
    """A room's agent is asked for by a person (the page's form, the API),
    who has no option of the server's: the refusal says what the server
    lets an agent do and what to choose; it named ``--max-think``."""
    with client_for(store) as http:
        answer = local_room(http, spec)
        assert answer.status_code == 422, answer.text
        detail = answer.json()["detail"]
        assert detail.startswith(f"{spec!r}: ") and words in detail and "--max" not in detail
        assert http.app.state.manager.open_count() == 0  # type: ignore[attr-defined]  (nothing was made)


def test_c4lab_plays_refusal_names_no_option_it_does_not_have() -> None:
    """``c4lab play`` (limits.PERSONAL) has no --max-think: its refusal of
    an over-long think says the limit and what to choose."""
    from c4lab.server.limits import PERSONAL, LimitError

    with pytest.raises(LimitError) as refused:
        PERSONAL.make("master:time=4000")
    assert str(refused.value) == ("'master:time=4000': time=4000 is more than this server allows: it lets an agent "
                                  "think at most 3600 s a move; choose time=3600 or less")


def test_a_spec_at_the_limit_is_played_as_asked_not_clipped(store: GameStore) -> None:
    limits = AgentLimits(max_time=2.0, max_iterations=1000, max_depth=3)
    with client_for(store, limits=limits) as http:
        for spec in ("master:time=2", "uct:iterations=1000", "minimax:depth=3", "master:time=none,iterations=1000,depth=3"):
            answer = local_room(http, spec)
            assert answer.status_code == 200, answer.text
            room = http.get(f"/api/rooms/{answer.json()['code']}").json()
            assert room["seats"]["B"]["spec"] == spec
        assert local_room(http, "uct:iterations=1001").status_code == 422
        assert local_room(http, "minimax:depth=4").status_code == 422
        assert local_room(http, "master:time=2.5").status_code == 422


def test_rooms_may_use_only_the_allowlist_and_an_option_extends_it(store: GameStore) -> None:
    only_random = AgentLimits(allowed=frozenset({"random"}))
    with client_for(store, limits=only_random) as http:
        assert [a["name"] for a in http.get("/api/agents").json()] == ["random"]
        refused = local_room(http, "hard")
        assert refused.status_code == 400
        assert "not offered by this server" in refused.json()["detail"]
        assert local_room(http, "random").status_code == 200
    with client_for(store, limits=AgentLimits.with_agents(["hard"], max_time=2.0)) as http:
        names = {a["name"] for a in http.get("/api/agents").json()}
        assert {"hard", "master", "random"} <= names
        assert not names & {"engine", "qlearning", "kaggle", "human"}
    # engine and qlearning are not in the default list, and say why
    with client_for(store) as http:
        for spec in ("engine:cmd=touch /tmp/pwned", "qlearning:table=/etc/passwd"):
            answer = local_room(http, spec)
            assert answer.status_code == 400 and "only the local command line" in answer.json()["detail"]


def test_the_agent_list_and_the_limits_endpoint_give_the_limits(store: GameStore) -> None:
    limits = AgentLimits(max_time=3.0, max_iterations=1234, max_depth=7, threads=3)
    guard = GuardOptions(rooms_per_minute=5, joins_per_minute=9, rooms_per_client=4, max_rooms=99)
    with client_for(store, limits=limits, guard=guard) as http:
        agents = {a["name"]: a for a in http.get("/api/agents").json()}
        assert agents["master"]["limits"] == {"time": 3.0, "iterations": 1234, "depth": 7}
        assert agents["minimax"]["limits"] == {"time": 3.0, "depth": 7}
        assert agents["random"]["limits"] == {}
        shown = http.get("/api/limits").json()
        assert shown["max_time"] == 3.0 and shown["max_iterations"] == 1234 and shown["max_depth"] == 7
        assert shown["agent_threads"] == 3 and shown["rooms_per_minute"] == 5 and shown["max_rooms"] == 99
        assert shown["sockets_per_client"] == 100
        assert "master" in shown["agents"] and "engine" not in shown["agents"]


def _documented_fields(path: str) -> set[str]:
    """The fields docs/protocol.md's REST table gives the answer of
    ``GET path``: the quoted names of its first ``{...}`` or ``[{...}]``."""
    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    row = re.search(rf"^\| `GET {re.escape(path)}` \|(.*)$", text, re.MULTILINE)
    assert row, f"protocol.md has no row for GET {path}"
    return set(re.findall(r'"(\w+)"', re.search(r"`\[?\{(.*?)\}", row.group(1)).group(1)))


def test_the_limits_endpoint_answers_the_documented_fields(store: GameStore) -> None:
    """docs/protocol.md's /api/limits is the answer, field for field (its
    files offered, ``networks`` and ``tables``, were left out); each agent
    of /api/agents has the row's fields, and only the files' besides."""
    with client_for(store) as http:
        assert set(http.get("/api/limits").json()) == _documented_fields("/api/limits")
        fields = _documented_fields("/api/agents")
        for agent in http.get("/api/agents").json():
            assert fields <= set(agent) <= fields | {"networks", "tables"}, agent["name"]


def test_the_hints_keep_the_same_limits(store: GameStore) -> None:
    """The server's own agent is its operator's doing: its refusal names the option."""
    with pytest.raises(ValueError) as refused:
        create_app(store, hint_spec="master:time=30", limits=AgentLimits(max_time=5.0))
    assert str(refused.value) == "'master:time=30': time=30 is above this server's limit of 5 s a move (--max-think)"


def test_the_limits_are_printed_at_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Idle:
        on_listening = None

        def run(self) -> None:  # listens at once: the lines are printed then
            self.on_listening()

    monkeypatch.setattr("c4lab.server.run.make_server", lambda *args, **kwargs: Idle())
    result = CliRunner().invoke(main, [
        "serve", "--db", str(tmp_path / "g.sqlite"), "--max-think", "3", "--max-iterations", "1000",
        "--max-depth", "8", "--agent-threads", "4", "--rooms-per-minute", "6", "--max-rooms", "50",
        "--allow-origin", "https://c4.example.com", "--room-prefix", "east",
    ])
    assert result.exit_code == 0, result.output
    for words in ("3 s", "1,000 iterations", "depth 8", "4 threads", "6 new rooms a minute", "50 open rooms in all",
                  "https://c4.example.com", "allowed: ", "room codes start with east-"):
        assert words in result.output
    bad = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "g.sqlite"), "--allow-origin", "not a url"])
    assert bad.exit_code == 2 and "--allow-origin" in bad.output


@pytest.mark.parametrize(("option", "value", "words"), [
    ("--agent-threads", "100000", "agent threads must be at most 256, not 100000"),
    ("--agent-threads", "0", "threads must be at least 1, not 0"),
    ("--max-think", "1e12", "must be at most 31,536,000 s (a year, an agent's own bound), not 1e+12"),
    ("--max-think", "0.5", "must be at least 1 s"),
])
def test_a_limit_out_of_bounds_is_refused_before_anything_starts(
    tmp_path: Path, option: str, value: str, words: str
) -> None:
    """A server with a million agent threads could ask for terabytes (each
    may hold a search of up to 200 MB); a think time beyond the agents' own
    bound (a year) means nothing: one line naming the option, status 2, and
    no database made."""
    db = tmp_path / "g.sqlite"
    refused = CliRunner().invoke(main, ["serve", "--db", str(db), option, value])
    assert refused.exit_code == 2, refused.output
    assert option in refused.output and words in refused.output
    assert not db.exists()


def test_a_room_prefix_starts_every_code_and_the_rooms_play_as_before(tmp_path: Path) -> None:
    """``--room-prefix east``: every code is ``east-`` and 16 random
    characters (a proxy routes /r/east-..., /ws/east-... to this server),
    and such a room is joined, played and looked up like any other."""
    store = GameStore(tmp_path / "east.sqlite")
    server = BackgroundServer(store, room_prefix="east").start()
    try:
        codes = []
        for _ in range(20):
            room = httpx.post(server.url + "/api/rooms", json={"mode": "online", "seat": "A"}).json()
            assert room["code"].startswith("east-") and len(room["code"]) == len("east-") + 16
            assert room["url"] == f"/r/{room['code']}"
            codes.append(room["code"])
        assert len(set(codes)) == 20
        guest = httpx.post(f"{server.url}/api/rooms/{room['code']}/join", json={}).json()

        async def play() -> dict[str, Any]:
            url = server.url.replace("http://", "ws://") + f"/ws/{room['code']}"
            async with websockets.connect(url) as ann, websockets.connect(url) as bob:
                for socket, token, side in ((ann, room["token"], "A"), (bob, guest["token"], "B")):
                    await socket.send(json.dumps({"type": "hello", "token": token}))
                    while json.loads(await socket.recv())["you"] != [side]:
                        pass
                await ann.send(json.dumps({"type": "move", "move": "d"}))
                while True:
                    message = json.loads(await bob.recv())
                    if message["type"] == "state" and message["room"]["position"] == "7x6:d":
                        return message

        assert asyncio.run(play())["you"] == ["B"]
        assert httpx.get(f"{server.url}/api/rooms/{room['code']}").json()["position"] == "7x6:d"
    finally:
        server.stop()
        store.close()
    with pytest.raises(ValueError, match="letters and digits"):
        create_app(GameStore(":memory:"), room_prefix="east-1")


def test_a_bad_room_prefix_is_refused_in_one_line(tmp_path: Path) -> None:
    for bad in ("east-1", "a/b", "x" * 17, "é"):
        result = CliRunner().invoke(main, ["serve", "--db", str(tmp_path / "g.sqlite"), "--room-prefix", bad])
        assert result.exit_code == 2 and "--room-prefix" in result.output and "letters and digits" in result.output
        assert "Traceback" not in result.output


def test_a_served_process_settles_the_collector_before_it_starts(
    monkeypatch: pytest.MonkeyPatch, store: GameStore
) -> None:
    """``c4lab serve``'s server freezes what it holds at start out of the
    garbage collector's walks and collects the oldest generation less
    often; a test's server (in a thread of the test process) leaves the
    collector alone."""
    assert type(make_server(store, "127.0.0.1", 0)) is not LongRunningServer
    server = make_server(store, "127.0.0.1", 0, long_running=True)
    assert isinstance(server, LongRunningServer)
    started: list[tuple[int, tuple[int, int, int]]] = []
    monkeypatch.setattr("uvicorn.Server.run", lambda self, sockets=None: started.append(
        (gc.get_freeze_count(), gc.get_threshold())))
    thresholds = gc.get_threshold()
    try:
        server.run()
    finally:
        gc.unfreeze()
        gc.set_threshold(*thresholds)
    [(frozen, settled)] = started
    assert frozen > 1000 and settled == GC_THRESHOLDS


async def _round_trips(server: BackgroundServer, moves: int) -> list[float]:
    """Seconds from sending a move in a human room to its new state."""
    base = server.url
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        room = (await http.post("/api/rooms", json={"mode": "online", "seat": "A"})).json()
        guest = (await http.post(f"/api/rooms/{room['code']}/join", json={})).json()
    socket_url = base.replace("http://", "ws://") + f"/ws/{room['code']}"
    times = []
    async with websockets.connect(socket_url) as ann, websockets.connect(socket_url) as bob:
        for player, token in ((ann, room["token"]), (bob, guest["token"])):
            await player.recv()
            await player.send(json.dumps({"type": "hello", "token": token}))
        for i in range(moves):
            player = ann if i % 2 == 0 else bob
            column = "abcdefg"[i % 7]  # no four in twelve moves
            # drain what came before (the other player's move)
            while True:
                try:
                    await asyncio.wait_for(player.recv(), 0.05)
                except TimeoutError:
                    break
            started = time.perf_counter()
            await player.send(json.dumps({"type": "move", "move": column}))
            while True:
                message = json.loads(await asyncio.wait_for(player.recv(), 10))
                if message["type"] == "state" and len(message["room"]["cells"]) == i + 1:
                    break
            times.append(time.perf_counter() - started)
    return times


def test_a_room_whose_agents_think_does_not_hold_up_a_human_room(
    store: GameStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two rooms of agents thinking on a pool of one thread: the pool is
    full and has a queue.  Each move of a human room is still answered: it
    never waits for the pool (agents think in worker threads, each room
    holds one at most; a person's move is the event loop's).  The agents
    here think until the test lets them, so a move that waited for the pool
    would wait for ever, on any machine; the test bounded round trips in
    time before (median 250 ms), which a loaded machine could miss and a
    fast one could meet while waiting."""
    released = hold_moves(monkeypatch, RandomAgent)
    server = BackgroundServer(store, limits=AgentLimits(max_time=2.0, threads=1)).start()
    try:
        for seed in (1, 2):
            made = httpx.post(server.url + "/api/rooms", json={
                "mode": "local", "players": {"A": f"random:seed={seed}", "B": "random:seed=9"},
            }, timeout=60)
            assert made.status_code == 200, made.text
        manager = server.server.config.app.state.manager  # type: ignore[attr-defined]

        def thinking() -> int:
            return sum(bool(room.thinking) for room in manager.rooms.values())

        deadline = time.monotonic() + 60
        while thinking() < 2 and time.monotonic() < deadline:  # one in the thread, one queued
            time.sleep(0.05)
        assert thinking() == 2
        times = asyncio.run(_round_trips(server, 12))  # each within 10 s, or a TimeoutError
        assert len(times) == 12 and thinking() == 2, "the agents stopped thinking while the human room played"
    finally:
        released.set()
        server.stop()


def test_a_room_holds_one_agent_thread_at_most(store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Hints asked for over and over in one room run one after the other
    (the room's other jobs wait), while another room's run beside them."""
    running: dict[str, int] = {}
    most: dict[str, int] = {}
    lock = threading.Lock()

    def slow_advice(position: Any, adviser: Any, timeout: float | None = None, solver: Any = None) -> dict[str, Any]:
        key = position.notation
        with lock:
            running[key] = running.get(key, 0) + 1
            most[key] = max(most.get(key, 0), running[key])
        time.sleep(0.2)
        with lock:
            running[key] -= 1
        move = position.legal_moves()[0].token
        return {"move": move, "value": 0.5, "evaluation": 0.0, "columns": [], "best": []}

    monkeypatch.setattr("c4lab.server.review.hint", slow_advice)
    with client_for(store, limits=AgentLimits(threads=4)) as http:
        rooms = [
            http.post("/api/rooms", json={"mode": "local", "board": board, "players": {"A": "human", "B": "human"}}).json()
            for board in ("7x6:d", "7x6:dd")
        ]
        with (  # two pages of each room: each asks for hints at once
            http.websocket_connect(f"/ws/{rooms[0]['code']}") as one,
            http.websocket_connect(f"/ws/{rooms[0]['code']}") as one_again,
            http.websocket_connect(f"/ws/{rooms[1]['code']}") as two,
            http.websocket_connect(f"/ws/{rooms[1]['code']}") as two_again,
        ):
            pages = ((one, rooms[0]), (one_again, rooms[0]), (two, rooms[1]), (two_again, rooms[1]))
            for ws, room in pages:
                ws.receive_json()
                ws.send_json({"type": "hello", "token": room["token"]})
            for _ in range(2):
                for ws, _room in pages:
                    ws.send_json({"type": "hint"})
            for ws, _room in pages:
                hints = 0
                while hints < 2:
                    hints += ws.receive_json()["type"] == "hint"
    assert most == {"7x6:d": 1, "7x6:dd": 1}


# ---------------------------------------------------------------------------
# 2. Abuse limits
# ---------------------------------------------------------------------------


def test_room_creation_is_rate_limited_per_client_with_retry_after(store: GameStore) -> None:
    guard = GuardOptions(rooms_per_minute=3, rooms_per_client=None)
    app = create_app(store, guard=guard)
    with TestClient(app, client=("198.51.100.1", 1)) as one, TestClient(app, client=("198.51.100.2", 1)) as two:
        for _ in range(3):
            assert local_room(one, "random").status_code == 200
        refused = local_room(one, "random")
        assert refused.status_code == 429
        assert 1 <= int(refused.headers["Retry-After"]) <= 20
        assert "a minute" in refused.json()["detail"]
        assert local_room(two, "random").status_code == 200  # another client is not held back


def test_a_request_refused_for_another_reason_does_not_count_against_the_rooms_a_minute(store: GameStore) -> None:
    """A typo in the board (400) or a full server (503) makes no room, so
    it takes nothing from the budget: "10 new rooms a minute" is rooms made."""
    guard = GuardOptions(rooms_per_minute=3, rooms_per_client=None)
    app = create_app(store, guard=guard)
    with TestClient(app, client=("198.51.100.4", 1)) as client:
        for _ in range(6):
            bad = client.post("/api/rooms", json={"mode": "local", "board": "7x6:z", "players": {"A": "human", "B": "random"}})
            assert bad.status_code == 400
        for _ in range(3):
            assert local_room(client, "random").status_code == 200
        assert local_room(client, "random").status_code == 429


def test_a_client_at_its_open_room_cap_keeps_its_rooms_a_minute(store: GameStore) -> None:
    """Refused for having too many open rooms (429) makes no room either, so
    it takes nothing from the budget: retrying at the cap used to spend the
    rooms a minute, and the next refusal said "too many new rooms" instead
    of naming the open rooms."""
    guard = GuardOptions(rooms_per_minute=3, rooms_per_client=2)
    with client_for(store, guard=guard) as client:
        for _ in range(2):
            assert client.post("/api/rooms", json={"mode": "online"}).status_code == 200
        for _ in range(4):
            capped = client.post("/api/rooms", json={"mode": "online"})
            assert capped.status_code == 429
            assert capped.json()["detail"].startswith("your address has 2 open rooms, the most allowed")


def test_analysis_boards_have_a_budget_of_their_own_six_times_the_games(
        store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27 review: each position pasted or linked on the analysis board
    makes a room, and after ten the board said the position could not be
    analysed.  Analysis boards now have a budget of their own.  (The
    budgets' clock stands still: on a loaded machine the twelve boards took
    over 5 s, a token came back, and the thirteenth was made.)"""
    from c4lab.server import app as server_app
    from c4lab.server.app import ANALYSIS_BOARDS

    monkeypatch.setattr(server_app, "Throttle", lambda per_minute: Throttle(per_minute, clock=lambda: 1000.0))
    guard = GuardOptions(rooms_per_minute=2, rooms_per_client=None)
    app = create_app(store, guard=guard)
    board = {"mode": "local", "board": "7x6:dd", "players": {"A": "human", "B": "human"}, "analysis": True}
    with TestClient(app, client=("198.51.100.3", 1)) as client:
        for _ in range(2 * ANALYSIS_BOARDS):
            assert client.post("/api/rooms", json=board).status_code == 200
        refused = client.post("/api/rooms", json=board)
        assert refused.status_code == 429
        assert refused.json()["detail"] == "too many new analysis boards from your address: at most 12 a minute"
        for _ in range(2):  # the games' budget is untouched
            assert local_room(client, "random").status_code == 200
        assert local_room(client, "random").status_code == 429


def test_joins_are_rate_limited_per_client(store: GameStore) -> None:
    guard = GuardOptions(rooms_per_minute=None, joins_per_minute=2, rooms_per_client=None)
    with client_for(store, guard=guard) as http:
        codes = [http.post("/api/rooms", json={"mode": "online"}).json()["code"] for _ in range(3)]
        assert http.post(f"/api/rooms/{codes[0]}/join", json={}).status_code == 200
        assert http.post(f"/api/rooms/{codes[1]}/join", json={}).status_code == 200
        refused = http.post(f"/api/rooms/{codes[2]}/join", json={})
        assert refused.status_code == 429 and int(refused.headers["Retry-After"]) >= 1


def test_open_sockets_are_capped_per_client(store: GameStore, caplog: pytest.LogCaptureFixture) -> None:
    """A client address holds at most ``sockets_per_client`` room sockets
    at once: one more is told why (``rate-limited``) and closed with 1013
    (try again later); another address is not affected, and a socket that
    closes frees its place."""
    from starlette.websockets import WebSocketDisconnect

    guard = GuardOptions(rooms_per_minute=None, rooms_per_client=None, sockets_per_client=2)
    app = create_app(store, guard=guard)
    caplog.set_level("INFO", logger="c4lab")
    with TestClient(app, client=("198.51.100.1", 1)) as one, TestClient(app, client=("198.51.100.2", 1)) as two:
        code = one.post("/api/rooms", json={"mode": "online"}).json()["code"]
        with one.websocket_connect(f"/ws/{code}") as first, one.websocket_connect(f"/ws/{code}") as second:
            assert first.receive_json()["type"] == second.receive_json()["type"] == "state"
            with one.websocket_connect(f"/ws/{code}") as third:
                error = third.receive_json()
                assert error == {"type": "error", "code": "rate-limited",
                                 "message": "too many open connections from your address: at most 2 (close some pages)"}
                with pytest.raises(WebSocketDisconnect) as closed:
                    third.receive_json()
                assert closed.value.code == 1013
            assert f"refused 429 WEBSOCKET /ws/{code} from 198.51.100.1: too many open connections" in caplog.text
            with two.websocket_connect(f"/ws/{code}") as other:
                assert other.receive_json()["type"] == "state"
        with one.websocket_connect(f"/ws/{code}") as again:  # the two closed: room again
            assert again.receive_json()["type"] == "state"
    assert GuardOptions().sockets_per_client == 100


def test_open_rooms_are_capped_per_client_and_in_all(store: GameStore) -> None:
    guard = GuardOptions(rooms_per_minute=None, rooms_per_client=2, max_rooms=3)
    app = create_app(store, guard=guard)
    with TestClient(app, client=("198.51.100.1", 1)) as one, TestClient(app, client=("198.51.100.2", 1)) as two:
        first = one.post("/api/rooms", json={"mode": "online"}).json()
        assert one.post("/api/rooms", json={"mode": "online"}).status_code == 200
        capped = one.post("/api/rooms", json={"mode": "online"})
        assert capped.status_code == 429 and "open rooms" in capped.json()["detail"] and capped.headers["Retry-After"]
        assert two.post("/api/rooms", json={"mode": "online"}).status_code == 200
        full = two.post("/api/rooms", json={"mode": "online"})
        assert full.status_code == 503 and full.headers["Retry-After"]
        # a room that ends frees its place: the host resigns the first one
        with one.websocket_connect(f"/ws/{first['code']}") as ws:
            ws.receive_json()
            ws.send_json({"type": "hello", "token": first["token"]})
            ws.receive_json()
            joined = one.post(f"/api/rooms/{first['code']}/join", json={})
            assert joined.status_code == 200
            ws.send_json({"type": "resign"})
            while ws.receive_json()["room"]["status"] != "over":
                pass
        assert one.post("/api/rooms", json={"mode": "online"}).status_code == 200


class SweeperClock:
    """The clock of the rooms' sweeper (``presence.time``), the test's: it
    stands at the moment it was made until ``run`` lets it go on with the
    real time. A room made, or connected to, while it stands is not idle
    to the sweeper, however long a loaded machine or a cold numba cache
    takes to make it (the rooms' own times are real)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from c4lab.server import presence

        self.held: float | None = time.time()
        monkeypatch.setattr(presence, "time", self)

    def time(self) -> float:
        return time.time() if self.held is None else self.held

    def run(self) -> None:
        """The clock goes on: it says the real time from now on."""
        self.held = None


def test_rooms_nobody_uses_end_or_leave_memory(store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweeper ends the online rooms nobody used for ``idle_after``
    seconds (one waiting, one joined) and lets a local one leave memory.
    Its clock stands while the three are made, then runs on."""
    clock = SweeperClock(monkeypatch)
    with client_for(store, idle_after=0.3) as http:
        waiting = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
        joined = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
        assert http.post(f"/api/rooms/{joined}/join", json={}).status_code == 200
        local = local_room(http, "random").json()["code"]
        manager = http.app.state.manager  # type: ignore[attr-defined]
        assert manager.open_count() == 3
        clock.run()
        deadline = time.monotonic() + 60  # a ceiling (a loaded machine's event loop may be slow), not a wait
        while manager.open_count() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert manager.open_count() == 0
        for code in (waiting, joined):
            room = http.get(f"/api/rooms/{code}").json()
            assert (room["status"], room["result"], room["reason"]) == ("over", None, "abandoned")
        # a local room is only out of memory: its page takes it up again
        assert http.get(f"/api/rooms/{local}").json()["status"] == "playing"


def test_a_room_someone_uses_does_not_expire(store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A connected room outlives a sweep that ends a room made after its
    last use: the sweeper has looked at it when it was as long unused, and
    only the connection kept it (not a sweep that had not come yet). The
    sweeper's clock stands until the room is connected and the other made."""
    clock = SweeperClock(monkeypatch)
    with client_for(store, idle_after=0.3) as http:
        room = http.post("/api/rooms", json={"mode": "online"}).json()
        manager = http.app.state.manager  # type: ignore[attr-defined]
        with http.websocket_connect(f"/ws/{room['code']}") as ws:
            ws.receive_json()
            ws.send_json({"type": "hello", "token": room["token"]})
            ws.receive_json()
            made = time.time()
            unused = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
            clock.run()
            deadline = time.monotonic() + 60
            while manager.is_open(unused):
                assert time.monotonic() < deadline, "the sweeper never ended a room nobody used"
                time.sleep(0.05)
            assert manager.rooms[room["code"]].touched <= made  # as long unused as the room the sweep ended
            assert http.get(f"/api/rooms/{room['code']}").json()["status"] == "waiting"


def test_the_origin_check_of_rest_calls(store: GameStore) -> None:
    with client_for(store, guard=GuardOptions(allow_origins=("https://c4.example.com",))) as http:
        body = {"mode": "online"}
        assert http.post("/api/rooms", json=body).status_code == 200  # no Origin: not a browser
        assert http.post("/api/rooms", json=body, headers={"Origin": "http://testserver"}).status_code == 200
        assert http.post("/api/rooms", json=body, headers={"Origin": "https://c4.example.com"}).status_code == 200
        for foreign in ("http://evil.example", "null", "http://testserver.evil.example", "https://testserver:8443"):
            refused = http.post("/api/rooms", json=body, headers={"Origin": foreign})
            assert refused.status_code == 403, foreign
            assert "not allowed" in refused.json()["detail"]
        # reading is not changing anything
        assert http.get("/api/agents", headers={"Origin": "http://evil.example"}).status_code == 200


def socket_closed_with(http: TestClient, code: str, headers: dict[str, str]) -> int:
    """The close code of a socket to room ``code`` opened with ``headers``,
    which the server refuses."""
    with pytest.raises(WebSocketDisconnect) as closed, http.websocket_connect(f"/ws/{code}", headers=headers) as ws:
        ws.receive_json()
    return closed.value.code


def test_the_origin_check_of_websockets(store: GameStore) -> None:
    with client_for(store) as http:
        code = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
        assert socket_closed_with(http, code, {"Origin": "http://evil.example"}) == 1008
        with http.websocket_connect(f"/ws/{code}", headers={"Origin": "http://testserver"}) as ws:
            assert ws.receive_json()["type"] == "state"


def test_a_personal_games_server_answers_only_this_machines_names(store: GameStore) -> None:
    """DNS rebinding: a page on evil.example whose name was made to point at
    127.0.0.1 sends Host and Origin both evil.example, which the Origin
    check lets through; ``c4lab play``'s server (``PERSONAL_GUARD``) answers only
    a loopback name, and ``c4lab serve``'s (behind a proxy that passes on
    its public name) is not so bound."""
    with TestClient(create_app(store, guard=PERSONAL_GUARD), base_url="http://127.0.0.1:8000") as http:
        assert http.get("/api/agents").status_code == 200
        for host in ("localhost:8000", "[::1]:8000", "127.0.0.2", "app.localhost:80"):
            assert http.get("/api/agents", headers={"Host": host}).status_code == 200, host
        for host in ("evil.example:8000", "127.0.0.1.evil.example", "192.168.1.5:8000", "[::2]", "a b"):
            refused = http.post("/api/rooms", json={"mode": "online"},
                                headers={"Host": host, "Origin": f"http://{host}"})
            assert refused.status_code == 403, host
            assert "is not this machine's address (open http://127.0.0.1:PORT/)" in refused.json()["detail"]
        code = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
        assert socket_closed_with(http, code, {"Host": "evil.example:8000"}) == 1008
    with TestClient(create_app(store), base_url="http://c4.example.com") as http:
        assert http.get("/api/agents").status_code == 200  # a public server: any name it is reached by


def test_origins_compare_host_and_port() -> None:
    assert origin_allowed(None, "example.com")
    assert origin_allowed("https://Example.com", "example.com")
    assert origin_allowed("https://example.com", "example.com:443")
    assert origin_allowed("http://127.0.0.1:8000", "127.0.0.1:8000")
    assert not origin_allowed("http://127.0.0.1:8001", "127.0.0.1:8000")
    assert not origin_allowed("http://evil.example", "example.com")
    assert not origin_allowed("null", "example.com")
    assert origin_allowed("http://evil.example", "example.com", {"*"})
    assert origin_allowed("https://a.example", "b.example", {normal_origin("https://a.example")})
    with pytest.raises(ValueError):
        normal_origin("https://a.example/path")


def test_the_throttle_says_when_to_come_back() -> None:
    now = [0.0]
    throttle = Throttle(6, clock=lambda: now[0])  # 6 a minute: one every 10 s, 6 at once
    assert [throttle.wait("x") for _ in range(6)] == [0.0] * 6
    assert throttle.wait("x") == pytest.approx(10.0)
    now[0] = 10.0
    assert throttle.wait("x") == 0.0
    assert throttle.wait("y") == 0.0


def _raw_post(url: str, head: str, body: bytes = b"") -> tuple[int, float]:
    """Send a request by hand; its status and the seconds it took."""
    host, port = url.removeprefix("http://").split(":")
    started = time.perf_counter()
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(head.encode() + body)
        answer = conn.recv(4096).decode("latin-1")
    return int(answer.split()[1]), time.perf_counter() - started


@pytest.fixture
def server(store: GameStore) -> Iterator[BackgroundServer]:
    running = BackgroundServer(store).start()
    try:
        yield running
    finally:
        running.stop()


def test_a_10_mb_body_is_refused_before_it_is_read(server: BackgroundServer) -> None:
    head = (
        "POST /api/rooms HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        f"Content-Length: {10 * 1024 * 1024}\r\n\r\n"
    )
    status, seconds = _raw_post(server.url, head, b'{"name": "')  # the rest is never sent
    assert status == 413 and seconds < 5


def test_a_streamed_body_is_cut_off_at_the_cap(server: BackgroundServer) -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"name": "'
        for _ in range(200):
            yield b"x" * 1024

    answer = httpx.post(server.url + "/api/rooms", content=chunks(), headers={"Content-Type": "application/json"})
    assert answer.status_code == 413
    assert "at most" in answer.json()["detail"]
    assert httpx.post(server.url + "/api/rooms", json={"name": "x" * 30}).status_code == 400  # small: read, refused


def test_a_huge_websocket_frame_closes_the_socket_before_it_is_read(server: BackgroundServer) -> None:
    async def run() -> tuple[dict[str, Any], int | None]:
        code = httpx.post(server.url + "/api/rooms", json={"mode": "online"}).json()["code"]
        url = server.url.replace("http://", "ws://") + f"/ws/{code}"
        async with websockets.connect(url, max_size=2**20) as ws:
            await ws.recv()
            await ws.send("x" * 5000)  # over the protocol's 4096 bytes: an error, the socket stays
            error = json.loads(await ws.recv())
            await ws.send("x" * (MAX_FRAME + 1))  # over the frame cap: closed (1009, message too big)
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(ws.recv(), 5)
            return error, closed.value.rcvd.code if closed.value.rcvd else None

    error, code = asyncio.run(run())
    assert error["code"] == "too-large"
    assert code == 1009


def test_a_websocket_from_a_foreign_page_is_refused_with_403(server: BackgroundServer) -> None:
    code = httpx.post(server.url + "/api/rooms", json={"mode": "online"}).json()["code"]
    url = server.url.replace("http://", "ws://") + f"/ws/{code}"

    async def refused() -> int:
        with pytest.raises(websockets.InvalidStatus) as failed:
            async with websockets.connect(url, origin="http://evil.example"):  # type: ignore[arg-type]
                pass
        return failed.value.response.status_code

    async def welcome() -> str:
        async with websockets.connect(url, origin=server.url) as ws:  # type: ignore[arg-type]
            return json.loads(await ws.recv())["type"]

    assert asyncio.run(refused()) == 403
    assert asyncio.run(welcome()) == "state"


def test_a_flood_of_messages_is_answered_up_to_the_burst_told_once_and_then_dropped(
        store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """A socket's frames beyond ``BURST`` (refilled at ``RATE`` a second)
    are read and dropped, with one ``rate-limited`` error a second; the
    socket stays open and is answered again once its bucket refills (the
    clock is the test's: it stands still during the flood)."""
    from c4lab.server import guard

    now = [1000.0]
    monkeypatch.setattr(guard, "time", type("Clock", (), {"monotonic": staticmethod(lambda: now[0])}))
    with client_for(store) as http:
        code = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
        with http.websocket_connect(f"/ws/{code}") as ws:
            assert ws.receive_json()["type"] == "state"
            for _ in range(10 * guard.BURST):
                ws.send_text('{"type": "ping"}')
            now[0] += 1.0  # a second later: RATE more tokens
            ws.send_text('{"type": "ping"}')
            answers = [ws.receive_json() for _ in range(guard.BURST + 2)]
    assert answers[:guard.BURST] == [{"type": "pong"}] * guard.BURST
    assert answers[guard.BURST] == {"type": "error", "code": "rate-limited", "message": "too many messages: slow down"}
    assert answers[-1] == {"type": "pong"}  # the other 359 of the flood were dropped, unanswered


def test_a_move_the_rate_limit_drops_is_answered_each_time_so_a_bot_can_send_it_again(
        store: GameStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review 157: a move sent after a burst of pings vanished, unanswered
    (the one warning a second had gone to a ping): the bot could not know
    its move was not played.  A dropped move, resign, rematch or hello is
    answered, each one, naming it; the position is unchanged, and the
    move sent again once the bucket refills is played."""
    from c4lab.server import guard

    now = [1000.0]
    monkeypatch.setattr(guard, "time", type("Clock", (), {"monotonic": staticmethod(lambda: now[0])}))
    with client_for(store) as http:
        made = http.post("/api/rooms", json={"mode": "local", "players": {"A": "human", "B": "human"}}).json()
        with http.websocket_connect(f"/ws/{made['code']}") as ws:
            assert ws.receive_json()["type"] == "state"
            ws.send_text(json.dumps({"type": "hello", "token": made["token"]}))
            assert ws.receive_json()["type"] == "state"
            for _ in range(guard.BURST):  # the hello took one token: these take the rest, and one is dropped
                ws.send_text('{"type": "ping"}')
            ws.send_text('{"type": "move", "move": "d"}')
            ws.send_text('{"type": "move", "move": "d"}')
            answers = [ws.receive_json() for _ in range(guard.BURST + 2)]
            now[0] += 1.0
            ws.send_text('{"type": "move", "move": "d"}')
            played = ws.receive_json()
    assert answers[:guard.BURST - 1] == [{"type": "pong"}] * (guard.BURST - 1)
    assert answers[guard.BURST - 1] == {"type": "error", "code": "rate-limited", "message": "too many messages: slow down"}
    dropped = {"type": "error", "code": "rate-limited",
               "message": "too many messages: this 'move' was not handled (slow down, then send it again)"}
    assert answers[guard.BURST:] == [dropped, dropped]
    assert played["type"] == "state" and played["room"]["position"] == "7x6:d", played


def test_a_join_with_a_request_id_is_safe_to_retry(store: GameStore) -> None:
    app = create_app(store, guard=UNLIMITED)
    with TestClient(app, client=("198.51.100.1", 1)) as guest, TestClient(app, client=("198.51.100.2", 1)) as other:
        code = guest.post("/api/rooms", json={"mode": "online", "seat": "A"}).json()["code"]
        body = {"name": "Bob", "request_id": "retry-me-0001"}
        first = guest.post(f"/api/rooms/{code}/join", json=body)
        again = guest.post(f"/api/rooms/{code}/join", json=body)  # the first answer was "lost"
        assert first.status_code == again.status_code == 200
        assert (again.json()["token"], again.json()["seats"]) == (first.json()["token"], ["B"])
        # another request id, or the same id from another address: the seat is taken
        assert guest.post(f"/api/rooms/{code}/join", json={"request_id": "another-id-01"}).status_code == 409
        assert other.post(f"/api/rooms/{code}/join", json=body).status_code == 409
        assert guest.post(f"/api/rooms/{code}/join", json={"request_id": "short"}).status_code == 422


def test_connect_reads_the_token_from_a_file_or_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    seen: list[str | None] = []

    def fake_run_online(url: str, **options: Any) -> int:
        seen.append(options["token"])
        return 0

    monkeypatch.setattr("c4lab.ui.online.run_online", fake_run_online)
    link = "http://127.0.0.1:8000/r/abc"
    secret = tmp_path / "token"
    secret.write_text("from-the-file\n")
    runner = CliRunner()
    assert runner.invoke(main, ["connect", link, "--token-file", str(secret)]).exit_code == 0
    assert runner.invoke(main, ["connect", link], env={"C4LAB_TOKEN": "from-the-env"}).exit_code == 0
    assert runner.invoke(main, ["connect", link, "--token", "on-the-line"]).exit_code == 0
    assert runner.invoke(main, ["connect", link], env={"C4LAB_TOKEN": ""}).exit_code == 0
    assert seen == ["from-the-file", "from-the-env", "on-the-line", None]
    empty = tmp_path / "empty"
    empty.write_text("")
    assert runner.invoke(main, ["connect", link, "--token-file", str(empty)]).exit_code == 2
    assert "ps" in runner.invoke(main, ["connect", "--help"]).output


def test_the_start_up_line_says_each_bound_and_any_number_where_there_is_none() -> None:
    """Review: with ``--rooms-per-minute 0`` the line read "each client: no
    limit and 30 joins a minute", and with no bounds at all "no limit and
    no limit a minute, no limit open rooms"."""
    assert GuardOptions().describe().startswith(
        "each client: 10 new rooms a minute, 30 joins a minute, 20 open rooms, 100 open sockets; "
        "10000 open rooms in all; bodies up to 65,536 bytes; other origins allowed: none")
    assert GuardOptions(rooms_per_minute=None).describe().startswith(
        "each client: any number of new rooms a minute, 30 joins a minute, ")
    assert UNLIMITED.describe().startswith(
        "each client: any number of new rooms a minute, any number of joins a minute, any number of open rooms, "
        "any number of open sockets; any number of open rooms in all; ")
