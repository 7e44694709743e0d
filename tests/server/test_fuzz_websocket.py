"""Fuzzing the WebSocket protocol (docs/protocol.md) with hypothesis.

Whatever a client sends -- any JSON value of any shape, a known message
type with fields of the wrong types, random text, binary frames, huge
strings -- the server answers normally or with the protocol's own
``error`` message; it never raises (in-process, through Starlette's test
client, an exception in the handler would reach the test), never drops the
connection (a ``ping`` sent after each frame is answered), never logs an
error, and a rejected message changes nothing: the room's state, its row
on disk and the connection's seats are the same before and after.

The issue's example (``{"type": {"a": 1}}`` raised ``TypeError:
unhashable type``, logged a traceback and dropped the connection) is a
regression test, on a real uvicorn as well.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from c4lab.server import protocol
from c4lab.server.errors import RoomError
from c4lab.server.guard import RateLimit
from c4lab.server.protocol import MESSAGES
from c4lab.server.run import BackgroundServer
from c4lab.server.storage import GameStore
from testkit import cheap_server

#: The error codes of docs/protocol.md that a message on an open socket may draw.
ERROR_CODES = {
    "bad-json", "bad-message", "too-large", "rate-limited", "bad-token", "not-your-seat", "not-your-turn",
    "illegal-move", "game-over", "not-allowed", "review-failed", "storage-failed",
}
FUZZ = settings(
    max_examples=150, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
#: Strings JSON lets through that are odd as text: lone surrogates (the
#: escape ``\\ud800`` without its pair), a NUL, direction and width marks,
#: a combining accent, a full-width letter, one outside the BMP, a long one.
ODD_TEXT = ["\ud800", "d\udfff", "\udc00d", "\x00", "\u202ed", "\ufeffd", "d\u0301", "\uff44", "\U0001f600", "d" * 3000]
#: Values a field may take: anything, and often what a real client would send.
field_values = json_values | st.sampled_from(
    ["a", "b", "c", "d", "e", "a+b", "d+", "", "7x6:d", "A", "B", "offer", "accept", "decline", *ODD_TEXT]
)
#: A message of a known type, its fields of any type (and any extra fields).
typed_messages = st.builds(
    lambda kind, fields, extra: {**extra, **fields, "type": kind},
    st.sampled_from(sorted(MESSAGES)),
    st.dictionaries(st.sampled_from(["move", "token", "name", "seat", "action"]), field_values, max_size=3),
    st.dictionaries(st.text(max_size=6), json_values, max_size=2),
)
#: A ``type`` of any JSON type (the issue's crash: an object or a list).
odd_types = st.builds(lambda kind, rest: {**rest, "type": kind}, json_values, st.dictionaries(st.text(max_size=6), json_values, max_size=2))


def frames(token: str) -> st.SearchStrategy[tuple[str, Any]]:
    """One frame: ("json", a value), ("text", raw text) or ("bytes", raw bytes)."""
    hello = st.builds(lambda t: {"type": "hello", "token": t},
                      st.sampled_from([token, token[:-1] + "x", "", None, token[:-1] + "\ud800", "\udfff"]))
    return st.one_of(
        st.tuples(st.just("json"), typed_messages | odd_types | json_values | hello),
        st.tuples(st.just("text"), st.text(max_size=60)),
        st.tuples(st.just("bytes"), st.binary(max_size=60)),
    )


@pytest.fixture
def client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    """The app in-process; no rate limit (the fuzz sends fast, and a
    limited message draws no answer), a hint that costs nothing."""
    monkeypatch.setattr(RateLimit, "allow", lambda self: True)
    with cheap_server(tmp_path) as test_client:
        yield test_client


def snapshot(client: TestClient, code: str) -> str:
    """The room as the server holds it (its state, its row on disk without
    the write time, the seats of every connection)."""
    manager = client.app.state.manager  # type: ignore[attr-defined]
    room = manager.rooms[code]
    row = manager.store.load(code)
    assert row is not None
    stored = {**row.__dict__, "updated": None}
    you = sorted(sorted(seats) for seats in room.connections.values())
    return json.dumps([room.state(manager.forfeit_after), stored, you], sort_keys=True, default=str)


def settle(client: TestClient, code: str, timeout: float = 10.0) -> None:
    """Wait until no agent of the room is thinking (its move would change
    the room while a rejected message is being checked)."""
    room = client.app.state.manager.rooms[code]  # type: ignore[attr-defined]
    deadline = time.monotonic() + timeout
    while room.thinking is not None:
        assert time.monotonic() < deadline, "the agent did not move"
        time.sleep(0.002)


def send(socket: Any, frame: tuple[str, Any]) -> None:
    kind, value = frame
    if kind == "json":
        socket.send_text(json.dumps(value))
    elif kind == "text":
        socket.send_text(value)
    else:
        socket.send_bytes(value)


def answers(socket: Any, pongs: int = 1) -> list[dict[str, Any]]:
    """Everything the server sends up to the ``pong`` of a ``ping`` sent
    now (and of ``pongs - 1`` pings sent before): the connection is alive
    and every answer is a protocol message."""
    socket.send_text(json.dumps({"type": "ping"}))
    got = []
    while True:
        message = socket.receive_json()
        assert isinstance(message, dict) and isinstance(message.get("type"), str), message
        if message["type"] == "pong":
            pongs -= 1
            if not pongs:
                return got
        else:
            got.append(message)


def is_ping(frame: tuple[str, Any]) -> bool:
    """Whether the server reads ``frame`` as a ``ping`` (it answers ``pong``)."""
    kind, value = frame
    if kind == "bytes":
        return False
    try:
        return protocol.parse(json.dumps(value) if kind == "json" else value)["type"] == "ping"
    except RoomError:
        return False


def check_error(message: dict[str, Any]) -> None:
    assert set(message) == {"type", "code", "message"}, message
    assert message["code"] in ERROR_CODES, message
    assert isinstance(message["message"], str) and message["message"], message


def fuzz_room(
    client: TestClient, code: str, token: str | None, caplog: pytest.LogCaptureFixture, examples: int = 150
) -> None:
    """A ``given`` test body over one open socket of room ``code``."""
    with client.websocket_connect(f"/ws/{code}") as socket:
        assert socket.receive_json()["type"] == "state"
        if token is not None:
            socket.send_text(json.dumps({"type": "hello", "token": token}))
            assert socket.receive_json()["you"]

        @settings(FUZZ, max_examples=examples)
        @given(frame=frames(token or "no-token-here-at-all"))
        def one(frame: tuple[str, Any]) -> None:
            settle(client, code)
            before = snapshot(client, code)
            got = answers_to(socket, frame)
            errors = [m for m in got if m["type"] == "error"]
            for error in errors:
                check_error(error)
            if errors:
                assert snapshot(client, code) == before, f"{frame!r} was refused ({errors}) but changed the room"

        with caplog.at_level(logging.WARNING):
            one()
        assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


def answers_to(socket: Any, frame: tuple[str, Any]) -> list[dict[str, Any]]:
    send(socket, frame)
    return answers(socket, 2 if is_ping(frame) else 1)


def test_the_issues_example_is_a_clean_error_not_a_traceback(client: TestClient) -> None:
    code = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()["code"]
    with client.websocket_connect(f"/ws/{code}") as socket:
        socket.receive_json()
        for bad in ({"type": {"a": 1}}, {"type": ["move"]}, {"type": None}, {"type": 3}):
            got = answers_to(socket, ("json", bad))
            assert len(got) == 1 and got[0]["code"] == "bad-message", got


def test_the_issues_example_keeps_the_connection_on_a_real_server(tmp_path: Path) -> None:
    store = GameStore(tmp_path / "games.sqlite")
    server = BackgroundServer(store).start()

    async def talk(code: str) -> None:
        async with websockets.connect(server.url.replace("http://", "ws://") + f"/ws/{code}") as socket:
            json.loads(await socket.recv())  # the state
            for bad in ('{"type": {"a": 1}}', '{"type": ["move"]}', "[" * 3000, '{"type": "hello", "token": "\\ud800"}'):
                await socket.send(bad)
                error = json.loads(await socket.recv())
                assert error["type"] == "error" and error["code"] in ("bad-message", "bad-json", "too-large"), error
            await socket.send('{"type": "ping"}')
            assert json.loads(await socket.recv()) == {"type": "pong"}

    try:
        code = httpx.post(server.url + "/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()["code"]
        asyncio.run(talk(code))
    finally:
        server.stop()
        store.close()


@contextlib.contextmanager
def both_seats(client: TestClient) -> Iterator[tuple[Any, str, str]]:
    """A local 4x4 room whose socket holds both seats: the socket, the
    room's code and its token."""
    room = client.post("/api/rooms", json={"board": "4x4", "players": {"A": "human", "B": "human"}}).json()
    with client.websocket_connect(f"/ws/{room['code']}") as socket:
        socket.receive_json()
        socket.send_text(json.dumps({"type": "hello", "token": room["token"]}))
        assert socket.receive_json()["you"] == ["A", "B"]
        yield socket, room["code"], room["token"]


def test_a_string_that_is_not_unicode_text_is_a_clean_error(client: TestClient) -> None:
    """JSON's ``\\ud800`` escape without its pair is a lone surrogate, which
    UTF-8 cannot write: a token of one raised UnicodeEncodeError (a traceback,
    the connection dropped).  Now it is ``bad-message`` naming the field, and
    the connection keeps its seats."""
    with both_seats(client) as (socket, code, _token):
        before = snapshot(client, code)
        for bad, field in (({"type": "hello", "token": "\ud800"}, "token"), ({"type": "move", "move": "d\udfff"}, "move"),
                           ({"type": "ping", "note": ["\udc00"]}, "note"), ({"type": "hint", "\ud800": 1}, "\ud800")):
            got = answers_to(socket, ("json", bad))
            assert len(got) == 1 and got[0]["code"] == "bad-message", got
            assert f"{field!r} of '{bad['type']}' is not Unicode text" in got[0]["message"], got
            assert snapshot(client, code) == before, bad


def test_a_field_of_no_such_name_is_a_clean_error_naming_it_and_changes_nothing(client: TestClient) -> None:
    """Review: a field the message does not have was ignored, so a typo
    (``deep`` for ``deeper``) was answered as if it were not there; an
    unknown type was quoted back whole (up to 4 KB)."""
    with both_seats(client) as (socket, code, token):
        before = snapshot(client, code)
        for bad, said in (
            ({"type": "hint", "deep": True}, "'hint' has no field 'deep' (its fields: 'deeper')"),
            ({"type": "move", "move": "a", "ban": "b"}, "'move' has no field 'ban' (its fields: 'move')"),
            ({"type": "ping", "id": 1}, "'ping' has no field 'id' (its fields: none but 'type')"),
            ({"type": "hello", "token": token, "seat": "A"}, "'hello' has no field 'seat' (its fields: 'token')"),
            ({"type": "undo", "x" * 3000: 1}, f"'undo' has no field '{'x' * 40}...' (its fields: none but 'type')"),
            ({"type": "y" * 3000}, f"unknown message type '{'y' * 40}...' (known: "),
            # review 157: {} and a null type both said "unknown message type None", Python's word
            ({}, "a message needs a 'type' (one of: hello, "),
            ({"type": None}, "a message's 'type' is a string, not null (one of: hello, "),
            ({"type": 3}, "a message's 'type' is a string, not 3 (one of: "),
            ({"type": ["move"]}, "a message's 'type' is a string, not a list (one of: "),
        ):
            got = answers_to(socket, ("json", bad))
            assert len(got) == 1 and got[0]["code"] == "bad-message", got
            assert got[0]["message"].startswith(said), got
            assert snapshot(client, code) == before, bad
        got = answers_to(socket, ("json", {"type": "move", "move": "a"}))  # the connection plays on
        assert [m["type"] for m in got] == ["state"] and got[0]["room"]["position"] == "4x4:a", got


def test_deeply_nested_or_huge_messages_are_errors(client: TestClient) -> None:
    code = client.post("/api/rooms", json={"players": {"A": "human", "B": "human"}}).json()["code"]
    with client.websocket_connect(f"/ws/{code}") as socket:
        socket.receive_json()
        for text in ("[" * 3000 + "]" * 3000, '{"type": "move", "move": "' + "d" * 10 * protocol.MAX_MESSAGE + '"}',
                     "x" * (protocol.MAX_MESSAGE + 1), "1" * 4000):
            got = answers_to(socket, ("text", text))
            assert [m["type"] for m in got] == ["error"], got
            check_error(got[0])


def test_a_player_in_a_local_game_survives_any_frame(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    room = client.post("/api/rooms", json={"board": "4x4", "players": {"A": "human", "B": "human"}}).json()
    fuzz_room(client, room["code"], room["token"], caplog)


def test_a_player_against_an_agent_survives_any_frame(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    room = client.post("/api/rooms", json={"board": "5x4", "players": {"A": "human", "B": "random"}}).json()
    fuzz_room(client, room["code"], room["token"], caplog)


def test_a_watcher_of_an_online_game_survives_any_frame(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    room = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "Ann", "board": "4x4"}).json()
    client.post(f"/api/rooms/{room['code']}/join", json={"name": "Bob"})
    fuzz_room(client, room["code"], None, caplog)


def test_a_player_of_a_finished_online_game_survives_any_frame(
    client: TestClient, caplog: pytest.LogCaptureFixture
) -> None:
    """After the game, where a rematch may be offered (and declined, or withdrawn)."""
    room = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "Ann", "board": "4x4"}).json()
    guest = client.post(f"/api/rooms/{room['code']}/join", json={"name": "Bob"}).json()
    with client.websocket_connect(f"/ws/{room['code']}") as socket:
        socket.receive_json()
        socket.send_text(json.dumps({"type": "hello", "token": guest["token"]}))
        socket.send_text(json.dumps({"type": "resign"}))
        answers(socket)
    fuzz_room(client, room["code"], room["token"], caplog)


def test_any_frame_before_hello_or_with_a_bad_token_changes_nothing(client: TestClient) -> None:
    room = client.post("/api/rooms", json={"mode": "online", "seat": "B", "name": "Ann"}).json()
    code = room["code"]
    with client.websocket_connect(f"/ws/{code}") as socket:
        socket.receive_json()
        before = snapshot(client, code)
        for frame in (("json", {"type": "move", "move": "d"}), ("json", {"type": "resign"}), ("json", {"type": "undo"}),
                      ("json", {"type": "rematch", "action": "offer"}), ("json", {"type": "rematch"}),
                      ("json", {"type": "hello", "token": "wrong"}), ("json", {"type": "hello", "token": 5})):
            got = answers_to(socket, frame)
            assert got and got[0]["type"] == "error", (frame, got)
            if frame[1] == {"type": "hello", "token": "wrong"}:
                # a hello, even refused, says the connection is no player's: a spectator, counted from now on
                assert json.loads(snapshot(client, code))[0]["watchers"] == 1
                before = before.replace('"watchers": 0', '"watchers": 1')
            assert snapshot(client, code) == before, frame


@pytest.mark.slow
def test_many_more_frames_in_a_local_game(client: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    room = client.post("/api/rooms", json={"board": "5x5", "players": {"A": "human", "B": "human"}}).json()
    fuzz_room(client, room["code"], room["token"], caplog, examples=3000)


def test_a_message_is_measured_in_bytes_as_its_error_says() -> None:
    """4,096 bytes, as the error and the protocol page say: a message of
    1,393 characters, 4,125 bytes of UTF-8 (a euro sign is three), was let
    through, and a count the error gave was of characters."""
    wide = '{"type": "ping", "pad": "' + "€" * 1366 + '"}'  # 1,393 characters, 4,125 bytes
    with pytest.raises(protocol.RoomError, match=r"^a message has at most 4096 bytes, this one 4125$"):
        protocol.parse(wide)
    with pytest.raises(protocol.RoomError, match="this one 4097$"):
        protocol.parse("x" * 4097)
