"""Another site's page that ``--allow-origin`` names (a club's own web
page) may use the REST API as a browser allows it: its preflight is
answered for that origin alone, and its answers name it; a page of any
other origin gets no CORS header, and its state-changing calls are still
the guard's 403."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient
from starlette.responses import JSONResponse

from c4lab.server.app import create_app
from c4lab.server.guard import PERSONAL_GUARD, GuardOptions
from c4lab.server.storage import GameStore

CLUB = "https://club.example"
FOREIGN = "https://evil.example"
#: What a browser sends before a JSON POST from another origin.
PREFLIGHT = {"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"}
#: The security headers every answer carries (``headers.SecurityHeaders``).
SECURITY = ("Content-Security-Policy", "X-Content-Type-Options", "X-Frame-Options", "Referrer-Policy")


@pytest.fixture
def http(store: GameStore) -> Iterator[TestClient]:
    """A ``c4lab serve``-like app that allows the club's page."""
    guard = GuardOptions(allow_origins=(CLUB,), max_body=1024)
    with TestClient(create_app(store, guard=guard), client=("203.0.113.7", 50000)) as client:
        yield client


def cors_headers(answer: httpx.Response) -> dict[str, str]:
    return {name: value for name, value in answer.headers.items() if name.startswith("access-control-")}


def test_a_preflight_from_an_allowed_origin_is_answered_for_that_origin(http: TestClient) -> None:
    for path in ("/api/rooms", "/api/rooms/abc/join", "/api/games"):
        answer = http.options(path, headers={"Origin": CLUB, **PREFLIGHT})
        assert answer.status_code == 204, path
        assert cors_headers(answer) == {
            "access-control-allow-origin": CLUB,  # the origin itself, never *
            "access-control-allow-methods": "GET, POST",
            "access-control-allow-headers": "Content-Type",  # tokens travel in bodies: no other header
            "access-control-max-age": "600",
        }, path
        assert answer.headers["Vary"] == "Origin"
        assert all(name in answer.headers for name in SECURITY), path


def test_the_allowed_origin_is_compared_by_scheme_host_and_port(store: GameStore) -> None:
    """``--allow-origin`` with the default port written out, or ``*``:
    the answer names the origin as the browser sent it."""
    for allowed in ("https://club.example:443", "*"):
        with TestClient(create_app(store, guard=GuardOptions(allow_origins=(allowed,)))) as http:
            answer = http.options("/api/rooms", headers={"Origin": CLUB, **PREFLIGHT})
            assert answer.headers["Access-Control-Allow-Origin"] == CLUB, allowed


def test_a_preflight_from_another_origin_gets_no_cors_header(http: TestClient) -> None:
    for origin in (FOREIGN, "null", "http://club.example", "https://club.example:8443"):
        answer = http.options("/api/rooms", headers={"Origin": origin, **PREFLIGHT})
        assert answer.status_code == 405, origin  # as before: the browser refuses the call
        assert cors_headers(answer) == {}, origin


def test_a_post_from_the_allowed_origin_makes_a_room_its_page_can_read(http: TestClient) -> None:
    made = http.post("/api/rooms", json={"mode": "online", "name": "Club"}, headers={"Origin": CLUB})
    assert made.status_code == 200
    assert made.headers["Access-Control-Allow-Origin"] == CLUB
    assert made.headers["Vary"] == "Origin"
    assert "Access-Control-Allow-Credentials" not in made.headers  # no cookies: none needed
    code = made.json()["code"]
    read = http.get(f"/api/rooms/{code}", headers={"Origin": CLUB})
    assert read.headers["Access-Control-Allow-Origin"] == CLUB
    assert read.json()["status"] == "waiting"


def test_the_allowed_pages_refusals_are_readable_too(http: TestClient) -> None:
    """An error's ``detail`` (the guard's 413, a 429's ``Retry-After``)
    reaches the page that must say it."""
    too_big = http.post("/api/rooms", content=b"x" * 2048, headers={"Origin": CLUB, "Content-Type": "application/json"})
    assert too_big.status_code == 413
    assert too_big.headers["Access-Control-Allow-Origin"] == CLUB
    assert too_big.headers["Access-Control-Expose-Headers"] == "Retry-After"


def test_another_origins_post_is_still_the_guards_403(http: TestClient) -> None:
    refused = http.post("/api/rooms", json={"mode": "online"}, headers={"Origin": FOREIGN})
    assert refused.status_code == 403
    assert refused.json() == {"detail": f"requests from {FOREIGN!r} are not allowed here"}
    # written as the routes' errors are (starlette's JSONResponse: no spaces), not json.dumps' default
    assert refused.content == JSONResponse(refused.json()).body
    assert cors_headers(refused) == {}
    assert all(name in refused.headers for name in SECURITY)


def test_the_servers_own_page_and_other_routes_get_no_cors_header(http: TestClient) -> None:
    own = http.post("/api/rooms", json={"mode": "online"}, headers={"Origin": "http://testserver"})
    assert own.status_code == 200 and cors_headers(own) == {}
    page = http.get("/", headers={"Origin": CLUB})
    assert cors_headers(page) == {}
    assert http.options("/", headers={"Origin": CLUB, **PREFLIGHT}).status_code == 405


def test_a_personal_server_answers_no_preflight(store: GameStore) -> None:
    with TestClient(create_app(store, guard=PERSONAL_GUARD), base_url="http://127.0.0.1:8000") as http:
        answer = http.options("/api/rooms", headers={"Origin": CLUB, **PREFLIGHT})
        assert answer.status_code == 405 and cors_headers(answer) == {}
