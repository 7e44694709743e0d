"""The log of ``c4lab serve``: every line says when, how grave and who
wrote it; at the default level it tells each room made, each game ended
and each request the server's limits refused."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from c4lab.server import logs
from c4lab.server.run import free_port

#: A line of the log: its date and time, its level, and who wrote it (an access line: the client).
LINE = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d ((ERROR|WARNING|INFO|DEBUG) +[\w.]+: |ACCESS  )")
#: uvicorn's lines about one WebSocket: its handshake, the connection opened or closed.
WEBSOCKET_LINE = r'uvicorn\.error: (\S+ - "WebSocket /ws/|connection (open|closed))'


def post(url: str, body: dict[str, object], origin: str | None = None) -> int:
    return answer(url, body, origin)[0]


def answer(url: str, body: dict[str, object], origin: str | None = None) -> tuple[int, dict[str, object]]:
    headers = {"Content-Type": "application/json", **({"Origin": origin} if origin else {})}
    request = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=30) as got:
            return int(got.status), json.loads(got.read())
    except urllib.error.HTTPError as err:
        return int(err.code), {}


def logged(tmp_path: Path, *options: str) -> list[str]:
    """Run ``c4lab serve`` with ``options`` and one new room a minute from
    an address; make a room and open a socket to it, and one that sends a
    text frame that is not UTF-8; make a second room (refused: 429) and one
    from a foreign page (refused: 403); stop it; the lines of its log."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "c4lab", "serve", "--port", str(port), "--db", str(tmp_path / "g.sqlite"),
         "--rooms-per-minute", "1", *options],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout and proc.stdout.readline().startswith("c4lab server at ")
        banner = [proc.stdout.readline() for _ in range(3)]  # the limits, then how to open a room
        assert banner[2] == (f"  open a room on the page at that address, or in a terminal: "
                             f"c4lab connect http://127.0.0.1:{port} --new\n"), banner
        url = f"http://127.0.0.1:{port}/api/rooms"
        status, room = answer(url, {"mode": "online"})
        assert status == 200
        with connect(f"ws://127.0.0.1:{port}/ws/{room['code']}", open_timeout=30) as socket:
            assert json.loads(socket.recv(timeout=30))["type"] == "state"
        with connect(f"ws://127.0.0.1:{port}/ws/{room['code']}", open_timeout=30) as socket:
            socket.recv(timeout=30)
            socket.send(b"\xff\xfe", text=True)  # a text frame that is not UTF-8: closed with 1007
            with pytest.raises(ConnectionClosed) as closed:
                socket.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1007
        assert post(url, {"mode": "online"}) == 429
        assert post(url, {"mode": "online"}, origin="https://elsewhere.example") == 403
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert all(LINE.match(line) for line in lines), err
    return lines


def test_each_line_has_its_time_and_the_default_tells_rooms_and_refusals(tmp_path: Path) -> None:
    lines = logged(tmp_path)
    text = "\n".join(lines)
    assert any(" INFO    uvicorn.error: " in line for line in lines), text  # uvicorn's own lines too
    assert any(re.search(r"INFO +c4lab\.server\.rooms: room \S+: created \(online, 7x6\)", line) for line in lines), text
    assert any("refused 429 POST /api/rooms from 127.0.0.1: too many new rooms" in line for line in lines), text
    assert any("refused 403 POST /api/rooms from 127.0.0.1: requests from 'https://elsewhere.example'" in line
               for line in lines), text
    assert not any(" ACCESS " in line for line in lines), text  # only with --access-log
    assert not any(re.search(WEBSOCKET_LINE, line) for line in lines), text  # nor uvicorn's lines of a socket
    # a frame that is not UTF-8 is the client's error: one line, not uvicorn's ERROR and traceback
    assert any(re.search(r"INFO +uvicorn\.error: a socket sent a text message that is not UTF-8 \('utf-8' codec "
                         r"can't decode byte 0xff in position 0: invalid start byte\): closed with 1007$", line)
               for line in lines), text


@pytest.mark.parametrize(("options", "room_lines", "access_lines", "socket_lines"), [
    (["--log-level", "warning"], 0, 0, 0),
    (["--access-log"], 1, 3, 2),  # the socket's handshake accepted, the connection open (and perhaps closed)
    (["--log-level", "warning", "--access-log"], 0, 3, 0),  # the access log whatever the level
])
def test_the_level_and_the_access_log_are_the_operators_choice(
    tmp_path: Path, options: list[str], room_lines: int, access_lines: int, socket_lines: int
) -> None:
    lines = logged(tmp_path, *options)
    assert sum(": created (" in line for line in lines) == room_lines, lines
    assert sum(" ACCESS " in line for line in lines) == access_lines, lines
    assert min(sum(bool(re.search(WEBSOCKET_LINE, line)) for line in lines), 2) == socket_lines, lines


def test_a_log_level_is_one_of_four() -> None:
    assert logs.LEVELS == ("error", "warning", "info", "debug")
    with pytest.raises(ValueError, match="one of error, warning, info, debug, not 'loud'"):
        logs.config("loud")


#: A line a visitor would like the log to show: the server's own words, after a newline in an address.
FORGED = "\n2026-12-02 12:00:00 INFO    c4lab.server.rooms: room FORGED: created (online, 7x6)"


def test_a_newline_in_an_address_is_written_escaped_and_starts_no_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """``%0A`` in a refused request's path (a foreign page's call, a body
    too large, a socket from a foreign page) was written as a newline, and
    whatever followed it read as a line of the server's own."""
    from fastapi.testclient import TestClient
    from starlette.websockets import WebSocketDisconnect

    from c4lab.server.app import create_app
    from c4lab.server.guard import GuardOptions
    from c4lab.server.storage import GameStore

    store = GameStore(tmp_path / "g.sqlite")
    try:
        http = TestClient(create_app(store, guard=GuardOptions(max_body=16)))
        path = urllib.parse.quote(f"/api/rooms{FORGED}")
        with caplog.at_level("INFO", logger="c4lab"):
            assert http.post(path, json={}, headers={"Origin": "https://elsewhere.example"}).status_code == 403
            assert http.post(path, content=b"{}" * 20, headers={"Content-Type": "application/json"}).status_code == 413
            socket = http.websocket_connect(urllib.parse.quote(f"/ws/x{FORGED}"), headers={"Origin": "https://elsewhere.example"})
            with pytest.raises(WebSocketDisconnect), socket:  # refused before it opens (1008)
                pass
    finally:
        store.close()
    lines = [r.getMessage() for r in caplog.records if "FORGED" in r.getMessage()]
    assert len(lines) == 3, caplog.text
    for line in lines:
        assert "\n" not in line and "\\n2026-12-02 12:00:00 INFO    c4lab.server.rooms: room FORGED" in line, line
    assert lines[0].startswith("refused 403 POST /api/rooms\\n2026")
