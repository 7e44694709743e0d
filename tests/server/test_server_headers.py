"""The headers a browser visiting a public server gets with every answer:
a Content-Security-Policy the page works under (its one inline script by
its hash, no frame around it), nosniff, no framing, and no room address
sent to another site as a referrer."""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from c4lab.server.app import _page, create_app
from c4lab.server.guard import GuardOptions
from c4lab.server.headers import page_policy
from c4lab.server.storage import GameStore

EVERY_ANSWER = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",
}


@pytest.fixture
def http(store: GameStore) -> Iterator[TestClient]:
    with TestClient(create_app(store, guard=GuardOptions(max_body=1024))) as client:
        yield client


def _answers(http: TestClient) -> dict[str, httpx.Response]:
    """One answer of each kind the server gives."""
    return {
        "the page": http.get("/"),
        "a room's page": http.get("/r/abc"),
        "a script": http.get("/static/app.js"),
        "a style sheet": http.get("/static/style.css"),
        "JSON": http.get("/api/limits"),
        "a new room": http.post("/api/rooms", json={"mode": "online"}),
        "an unknown room": http.get("/api/rooms/%3Cb%3Ex"),
        "no such file": http.get("/static/%2e%2e/app.py"),
        "a body of the wrong shape": http.post("/api/rooms", json={"borad": "7x6"}),
        "the guard's 403": http.post("/api/rooms", json={}, headers={"Origin": "https://evil.example"}),
        "the guard's 413": http.post("/api/rooms", content=b"x" * 2048, headers={"Content-Type": "application/json"}),
    }


def test_every_answer_carries_nosniff_no_framing_and_no_referrer_to_other_sites(http: TestClient) -> None:
    policy = page_policy(_page())
    for what, answer in _answers(http).items():
        for name, value in EVERY_ANSWER.items():
            assert answer.headers.get(name) == value, f"{what} ({answer.status_code}): {name}"
        assert answer.headers.get("Content-Security-Policy") == policy, what


def test_the_policy_runs_this_servers_files_only_and_the_pages_inline_script_by_its_hash() -> None:
    page = _page()
    inline = re.findall(r"<script>(.*?)</script>", page, re.DOTALL)
    assert len(inline) == 1  # the saved look, before the first paint
    digest = base64.b64encode(hashlib.sha256(inline[0].encode()).digest()).decode()
    rules = dict(rule.split(" ", 1) for rule in page_policy(page).split("; "))
    assert rules["script-src"] == f"'self' 'sha256-{digest}'"
    assert rules["default-src"] == rules["style-src"] == rules["connect-src"] == "'self'"
    assert rules["frame-ancestors"] == rules["object-src"] == rules["base-uri"] == "'none'"
    assert "unsafe" not in page_policy(page)


def test_an_edited_inline_script_gets_its_own_hash() -> None:
    page = _page()
    edited = page.replace("<script>\n", "<script>\n// one more line\n", 1)
    assert page_policy(edited) != page_policy(page)


def test_a_socket_is_no_http_answer_and_is_served_as_before(http: TestClient) -> None:
    code = http.post("/api/rooms", json={"mode": "online"}).json()["code"]
    with http.websocket_connect(f"/ws/{code}") as ws:
        assert ws.receive_json()["type"] == "state"
