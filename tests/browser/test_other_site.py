"""A page of another site (a club's own web page, served from another
port: another origin) makes a room on a c4lab server by the REST API's
JSON POST and reads the room back, when the server was started with its
origin in ``--allow-origin``; the same page's call is refused by the
browser (the server answers its preflight for no one else) when it was
not, and no room is made."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import expect

from c4lab.server.guard import GuardOptions
from c4lab.server.run import BackgroundServer
from c4lab.server.storage import GameStore

#: The club's page: makes an online room on the server its address names
#: (``?api=http://...``), then reads it back, and says what came of it.
CLUB_PAGE = """<!doctype html>
<title>Our club</title>
<link rel="icon" href="data:,">
<p id="result">working</p>
<script>
const api = new URLSearchParams(location.search).get("api");
const result = document.getElementById("result");
(async () => {
  try {
    const made = await fetch(api + "/api/rooms", {
      method: "POST", headers: {"Content-Type": "application/json"},
      body: JSON.stringify({mode: "online", seat: "A", name: "Club"}),
    });
    const ticket = await made.json();
    const room = await (await fetch(api + "/api/rooms/" + ticket.code)).json();
    result.dataset.code = ticket.code;
    result.textContent = `made ${room.status}`;
  } catch (error) {
    result.textContent = `failed: ${error.message}`;
  }
})();
</script>
"""


class Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """No line on the test's output for each request."""


@pytest.fixture
def club_site(tmp_path: Path) -> Iterator[str]:
    """The club's site: ``index.html`` from a folder of its own, on a port
    the system chose; its origin (``http://127.0.0.1:PORT``)."""
    folder = tmp_path / "club"
    folder.mkdir()
    (folder / "index.html").write_text(CLUB_PAGE)
    site = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(folder)))
    thread = threading.Thread(target=site.serve_forever, name="club-site", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{site.server_address[1]}"
    finally:
        site.shutdown()
        site.server_close()
        thread.join(10)


@pytest.fixture
def serve_allowing(tmp_path: Path) -> Iterator:
    """``serve_allowing(origin)``: a ``c4lab serve``-like server (its
    default limits) started with ``--allow-origin origin``."""
    started: list[tuple[BackgroundServer, GameStore]] = []

    def start(origin: str) -> BackgroundServer:
        store = GameStore(tmp_path / f"games{len(started)}.sqlite")
        running = BackgroundServer(store, guard=GuardOptions(allow_origins=(origin,))).start()
        running.store = store  # type: ignore[attr-defined]
        started.append((running, store))
        return running

    yield start
    for running, store in started:
        running.stop()
        store.close()


def club_page_result(browser, club_site: str, server: BackgroundServer) -> tuple[str, list[str]]:
    """What the club's page says once its calls to ``server`` are done,
    and the console's errors (the browser says why it refused a call)."""
    context = browser.new_context()
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
        page.goto(f"{club_site}/index.html?api={server.url}")
        result = page.locator("#result")
        expect(result).not_to_have_text("working")
        return result.text_content() or "", errors
    finally:
        context.close()


def test_an_allowed_sites_page_makes_a_room_and_reads_it(browser, club_site, serve_allowing):
    server = serve_allowing(club_site)
    said, errors = club_page_result(browser, club_site, server)
    assert said == "made waiting"
    assert errors == []
    assert len(server.store.open_rooms("online")) == 1


def test_the_same_page_is_refused_when_its_origin_is_not_allowed(browser, club_site, serve_allowing):
    server = serve_allowing("https://c4.example.com")
    said, errors = club_page_result(browser, club_site, server)
    assert said == "failed: Failed to fetch"
    assert any("blocked by CORS policy" in error for error in errors), errors
    assert server.store.open_rooms("online") == []  # the POST was never sent
