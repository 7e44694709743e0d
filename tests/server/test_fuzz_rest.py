"""Fuzzing the REST API's request bodies with hypothesis.

Every POST endpoint of the app (found from its routes, so one added later
is fuzzed too), given any JSON value, a body of the right shape with fields
of any type, or bytes that are not JSON at all, answers 2xx or 4xx with a
JSON body -- for an error ``{"detail": ...}`` -- and never 500: in-process,
an exception in a route reaches the test, and no error is logged.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from testkit import cheap_server

FUZZ = settings(
    max_examples=120, deadline=None, derandomize=True, database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
#: The fields the bodies know, with values a client might send and any others.
FIELDS = ["mode", "board", "width", "height", "forbidden", "bonus", "players", "first", "seat", "name", "public"]
plausible = st.sampled_from([
    "local", "online", "7x6", "random", "4x4", "9x8/Xd3", "13x13", "7x6:dddd", "A", "B", "human", "random",
    "easy", "d3", "z99", "", "Ann", "<b>", 0, 1, -1, 4, 99, 10**30, True, None,
    {"A": "human", "B": "random"}, {"A": "human"}, {"A": "random", "B": "random"}, {"A": 1, "B": []},
    # strings odd as text: lone surrogates (JSON's \ud800 escape without its pair), a NUL, marks, full-width
    "\ud800", "7x6:d\udfff", {"A": "human", "B": "hard:seed=\udc00"}, {"\ud800": 5}, "\x00", "\u202eAnn", "\uff44",
])
shaped = st.dictionaries(st.sampled_from(FIELDS), plausible | json_values, max_size=6)
bodies = st.one_of(
    st.tuples(st.just("json"), shaped | json_values),
    st.tuples(st.just("raw"), st.binary(max_size=40)),
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[TestClient]:
    with cheap_server(tmp_path) as test_client:
        yield test_client


def post_paths(client: TestClient, code: str) -> list[str]:
    """Every POST route of the app, its path parameters filled with ``code``."""
    paths = []
    for route in client.app.routes:  # type: ignore[attr-defined]
        if isinstance(route, APIRoute) and "POST" in route.methods:
            path = route.path
            for name in route.param_convertors:
                path = path.replace("{" + name + "}", code)
            paths.append(path)
    assert "/api/rooms" in paths
    return paths


def post(client: TestClient, path: str, body: tuple[str, Any]) -> Any:
    """POST a JSON value (Python's JSON: ``Infinity`` and ``NaN`` too, as
    any client may send them) or raw bytes, labelled as JSON."""
    kind, value = body
    content = json.dumps(value).encode() if kind == "json" else value
    return client.post(path, content=content, headers={"content-type": "application/json"})


def check(answer: Any, what: str) -> None:
    assert answer.status_code < 500, f"{what}: {answer.status_code} {answer.text}"
    data = answer.json()  # always JSON
    if answer.status_code >= 400:
        assert isinstance(data, dict) and data.get("detail"), f"{what}: {answer.text}"


@pytest.mark.parametrize("room", ["online", "unknown"])
def test_every_post_endpoint_answers_any_body_without_a_server_error(
    client: TestClient, caplog: pytest.LogCaptureFixture, room: str
) -> None:
    if room == "online":  # a room with a free seat: a join may succeed (once)
        code = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "Ann"}).json()["code"]
    else:
        code = "no-such-room-000"
    paths = post_paths(client, code)

    @FUZZ
    @given(path=st.sampled_from(paths), body=bodies)
    def one(path: str, body: tuple[str, Any]) -> None:
        check(post(client, path, body), f"POST {path} {body!r}")

    with caplog.at_level(logging.WARNING):
        one()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text


def test_a_refused_join_leaves_the_seat_free(client: TestClient) -> None:
    """A name the join refuses (bad-name) must not take the seat anyway."""
    code = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "Ann"}).json()["code"]
    for name in ("<script>", "x" * 200, "a\nb"):
        assert client.post(f"/api/rooms/{code}/join", json={"name": name}).status_code == 400
    assert not client.get(f"/api/rooms/{code}").json()["seats"]["B"]["taken"]
    assert client.post(f"/api/rooms/{code}/join", json={"name": "Bob"}).status_code == 200


@pytest.mark.parametrize(("body", "status", "said"), [
    (b'{"name": "\xff"}', 400, "the body is not JSON this server reads: 'utf-8' codec can't decode byte 0xff in position 10"),
    (b'{"width": ' + b"1" * 5000 + b", \"height\": 6}", 400, "the body is not JSON this server reads: Exceeds the limit (4300 digits)"),
    (b"[" * 5000, 400, "the body is not JSON this server reads: maximum recursion depth exceeded"),
    (b'{"mode": "local",}', 422, "not JSON: Expecting property name enclosed in double quotes"),
])
def test_a_body_that_is_not_json_says_why(client: TestClient, body: bytes, status: int, said: str) -> None:
    """FastAPI said only "There was an error parsing the body" (text not
    in UTF-8, a number too long, arrays nested too deep) or "JSON decode
    error" (with the character it stopped at, kept: ``loc``)."""
    answer = client.post("/api/rooms", content=body, headers={"content-type": "application/json"})
    assert answer.status_code == status, answer.text
    detail = answer.json()["detail"]
    assert said in (detail if status == 400 else detail[0]["msg"]), detail
    if status == 422:
        assert detail[0]["loc"] == ["body", 17]


@pytest.mark.parametrize(("headers", "said"), [
    ({"content-type": "text/plain"}, "this one was sent as 'text/plain'"),
    ({"content-type": "application/x-www-form-urlencoded"},  # curl -d
     "this one was sent as 'application/x-www-form-urlencoded'"),
    ({}, "this one has no Content-Type"),
])
def test_json_sent_as_another_type_says_which_type_to_send(
        client: TestClient, headers: dict[str, str], said: str) -> None:
    """FastAPI reads a body as JSON only when its type says so, and said
    "Input should be a valid dictionary or object to extract fields from"
    of a JSON object it had not read: now what to send, and nothing is made."""
    answer = client.post("/api/rooms", content=b'{"mode": "online"}', headers=headers)
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"] == [{
        "loc": ["body"], "type": "model_attributes_type",
        "msg": f"the body is read as JSON only when sent with Content-Type: application/json; {said}",
    }]
    none = client.post("/api/rooms")
    assert none.status_code == 422 and none.json()["detail"][0]["msg"] == (
        "no body: send a JSON object ({} for every default) with Content-Type: application/json")
    assert not client.app.state.manager.rooms  # type: ignore[attr-defined]


def test_a_refusal_does_not_echo_a_long_key_back(client: TestClient) -> None:
    answer = client.post("/api/rooms", json={"players": {"k" * 3000: 5}})
    assert answer.status_code == 422 and len(answer.text) < 500, answer.text[:200]
    assert answer.json()["detail"][0]["loc"][2].startswith("kkk")


@pytest.mark.parametrize(("path", "body"), [
    ("/api/rooms", {"borad": "9x8"}),
    ("/api/rooms", {"board": "9x8", "player": {"A": "hard"}}),
    ("/api/rooms/{code}/join", {"nmae": "Bob"}),
])
def test_a_field_of_no_such_name_is_refused_naming_it_and_nothing_is_made(
    client: TestClient, path: str, body: dict[str, Any]
) -> None:
    """Review: a typo in a field's name was ignored: ``{"borad": "9x8"}``
    made a 7x6 room, ``{"nmae": "Bob"}`` took the seat as "Player 2"."""
    code = client.post("/api/rooms", json={"mode": "online", "seat": "A"}).json()["code"]
    rooms = client.get("/api/rooms").json()
    answer = client.post(path.format(code=code), json=body)
    assert answer.status_code == 422, answer.text
    typo = next(key for key in body if key not in ("board",))
    assert answer.json()["detail"] == [{"loc": ["body", typo], "msg": "Extra inputs are not permitted",
                                        "type": "extra_forbidden"}]
    assert client.get("/api/rooms").json() == rooms
    assert client.get(f"/api/rooms/{code}").json()["seats"]["B"]["taken"] is False


@pytest.mark.slow
def test_many_more_room_bodies(client: TestClient) -> None:
    @settings(FUZZ, max_examples=2000)
    @given(body=bodies)
    def one(body: tuple[str, Any]) -> None:
        check(post(client, "/api/rooms", body), repr(body))

    one()


@pytest.mark.parametrize(("body", "field"), [
    ({"public": "yes"}, "public"), ({"public": 1}, "public"), ({"bonus": "true"}, "bonus"),
    ({"width": "9", "height": 8}, "width"), ({"width": 9.0, "height": 8}, "width"),
    ({"analysis": 0}, "analysis"),
])
def test_a_room_body_takes_true_false_and_numbers_as_json_writes_them(client: TestClient, body: dict,
                                                                      field: str) -> None:
    """Review 157: ``"public": "yes"`` and ``1`` made a public room, ``"width":
    "9"`` a board of 9: a client's bug taken for a choice.  Refused (422),
    naming the field."""
    answer = client.post("/api/rooms", json={"mode": "online", **body})
    assert answer.status_code == 422, answer.text
    assert answer.json()["detail"][0]["loc"] == ["body", field]


def test_first_in_an_online_room_is_refused_as_players_is(client: TestClient) -> None:
    """Review 157: ``first`` (local rooms': which player moves first) was
    ignored in an online room without a word."""
    answer = client.post("/api/rooms", json={"mode": "online", "first": "B", "seat": "A"})
    assert answer.status_code == 400
    assert answer.json()["detail"] == ("first is for local rooms (which of its players moves first): in an "
                                       "online room A moves first, and seat chooses the creator's side")
    assert client.post("/api/rooms", json={"mode": "local", "first": "B"}).status_code == 200


def test_a_name_of_spaces_alone_is_no_name_as_an_empty_one_is(client: TestClient) -> None:
    """Review 157: ``"name": ""`` made a "Player", ``"   "`` was refused
    ("a name has 1 to 24 characters, not 0").  The second of two who gave
    none is "Player 2" (every screen read "Player / Player")."""
    for name in ("", "   "):
        made = client.post("/api/rooms", json={"mode": "online", "seat": "A", "name": name})
        assert made.status_code == 200, made.text
        assert client.post(f"/api/rooms/{made.json()['code']}/join", json={"name": name}).status_code == 200
        seats = client.get(f"/api/rooms/{made.json()['code']}").json()["seats"]
        assert (seats["A"]["name"], seats["B"]["name"]) == ("Player", "Player 2")
    made = client.post("/api/rooms", json={"mode": "online", "seat": "B", "name": "Ann"}).json()
    assert client.post(f"/api/rooms/{made['code']}/join", json={}).status_code == 200
    assert client.get(f"/api/rooms/{made['code']}").json()["seats"]["A"]["name"] == "Player"  # only beside a Player
