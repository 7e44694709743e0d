"""The transport of ``c4lab connect``: a room's address, its REST calls and
its WebSocket, and what each failure means.  Nothing here prints: the
display (``ui/online.py``) says what happens, in words for the person.

The protocol is ``docs/protocol.md``: ``GET /api/rooms/{code}`` looks a
room up, ``POST /api/rooms/{code}/join`` takes its free seat, and
``/ws/{code}`` carries JSON messages both ways (``hello``, ``move``,
``resign``, ``rematch`` from the client; ``state``, ``thinking``,
``rematch``, ``error`` from the server; ``read_message`` checks what the
client reads of them).  A failure is either worth another try (:class:`Unreachable`, a
dropped connection) or final (:class:`ConnectError`, with the exit status
the command returns).
"""

from __future__ import annotations

import json
import re
import secrets
import socket
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI

from c4lab.rules import Position
from c4lab.rules.sides import SIDES

EXIT_OK, EXIT_LOST, EXIT_BAD_ROOM = 0, 1, 2
_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ROOM_PATHS = ("r", "ws", "games")


class ConnectError(Exception):
    """The client cannot go on; ``status`` is the exit status to return."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.message = message
        self.status = status

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.message, self.status))


class Unreachable(Exception):
    """The server did not answer (worth another try).  ``refused``: the
    connection was refused, so the request surely did nothing there (a
    request that timed out may have been carried out)."""

    def __init__(self, reason: str, refused: bool = False) -> None:
        super().__init__(reason)
        self.refused = refused


#: What an address given to ``c4lab connect`` should be, in its error.
ROOM_LINK, SERVER = "a room link", "a server's address"


def _site(url: str, what: str) -> tuple[str, list[str]]:
    """``url``'s server, ``http(s)://host[:port]``, and its path's
    segments; ``ConnectError`` (status 2) where it is no web address
    (``what`` it should have been, in the message).  A missing scheme
    means http; ws and wss are read as http and https."""
    text = url.strip()
    if "://" not in text:
        text = "http://" + text
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018  (raises on a bad port)
    except ValueError as exc:
        raise ConnectError(f"{url!r} is not {what}: {exc}", EXIT_BAD_ROOM) from None
    scheme = {"http": "http", "https": "https", "ws": "http", "wss": "https"}.get(parts.scheme.lower())
    if scheme is None or not parts.hostname:
        example = "http://HOST:PORT" if what == SERVER else "http://HOST:PORT/r/CODE (or ws://HOST:PORT/ws/CODE)"
        raise ConnectError(f"{url!r} is not {what}: expected {example}", EXIT_BAD_ROOM)
    return f"{scheme}://{parts.netloc}", parts.path.rstrip("/").split("/")


def server_base(url: str) -> str:
    """The server at ``url`` (``http://HOST:PORT``, with the path of a
    server behind a prefix), where ``c4lab connect --new`` opens a room;
    ``ConnectError`` (status 2) for a room's link, which names a room
    already."""
    site, segments = _site(url, SERVER)
    if len(segments) >= 3 and segments[-2] in _ROOM_PATHS:
        raise ConnectError(f"{url!r} is a room's link, not {SERVER}: --new opens a new room on a server "
                           f"({site}); leave --new out to join this room", EXIT_BAD_ROOM)
    return site + "/".join(segments)


@dataclass(frozen=True)
class RoomAddress:
    """A room of a server: ``base`` is ``http(s)://host[:port][/prefix]``;
    ``replay``: the link was a finished game's (``/games/CODE``), to watch."""

    base: str
    code: str
    replay: bool = False

    @classmethod
    def parse(cls, url: str) -> RoomAddress:
        """The room of a link: ``http://host:port/r/CODE`` (the page),
        ``ws://host:port/ws/CODE`` (the socket) or ``.../games/CODE``; a
        missing scheme means http."""
        site, segments = _site(url, ROOM_LINK)
        if len(segments) < 3 or segments[-2] not in _ROOM_PATHS or not _CODE.fullmatch(segments[-1]):
            opens = " (a server's address: add --new to open a new room there)" if len(segments) <= 1 else ""
            raise ConnectError(
                f"{url!r} is not a room link: its path should end in /r/CODE (the link of the room's page) "
                f"or /games/CODE (a finished game's){opens}",
                EXIT_BAD_ROOM,
            )
        prefix = "/".join(segments[:-2])
        return cls(f"{site}{prefix}", segments[-1], replay=segments[-2] == "games")

    @property
    def link(self) -> str:
        """The room's page: what people share."""
        return f"{self.base}/r/{self.code}"

    @property
    def replay_link(self) -> str:
        """The game's replay page (a browser steps through it move by move)."""
        return f"{self.base}/games/{self.code}"

    def missing(self) -> str:
        """What to say when the server has no such room (or game)."""
        if self.replay:
            return (f"There is no game {self.code!r} at {self.base}: check the link (the code is case-sensitive); "
                    f"the public finished games are listed at {self.base}/games.")
        return f"There is no room {self.code!r} at {self.base}: check the link (the code is case-sensitive)."

    @property
    def socket(self) -> str:
        return "ws" + self.base[len("http"):] + f"/ws/{self.code}"

    def api(self, *parts: str) -> str:
        return "/".join((f"{self.base}/api/rooms", self.code, *parts))


def http_json(method: str, url: str, body: Any = None, timeout: float = 10.0) -> tuple[int, Any]:
    """``(status, JSON answer)`` of one request; ``Unreachable`` if the
    server does not answer, ``ConnectError`` if it is not a JSON API."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, method=method, headers={"Content-Type": "application/json", "Accept": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as exc:
        status, raw = exc.code, exc.read()
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        if isinstance(reason, socket.gaierror) and reason.errno == socket.EAI_NONAME:
            # a name no server has (a typo): no try will find it, unlike a name server that is slow
            # to answer (EAI_AGAIN), which is worth another try
            host = urllib.parse.urlsplit(url).hostname
            raise ConnectError(f"Cannot reach {url.split('/api/')[0]}: there is no host named {host!r} "
                               "(a typo in the address?).", EXIT_BAD_ROOM) from None
        raise Unreachable(str(reason), refused=isinstance(reason, ConnectionRefusedError)) from None
    try:
        return status, json.loads(raw or b"null")
    except ValueError:
        raise ConnectError(
            f"{url} answered HTTP {status} with something that is not JSON: is this a c4lab server?", EXIT_BAD_ROOM
        ) from None


def fetch_room(address: RoomAddress, timeout: float) -> dict[str, Any]:
    """The room's public state (``GET /api/rooms/{code}``); ``Unreachable``
    if the server does not answer, ``ConnectError`` if there is no such room
    or the server is not a c4lab server."""
    status, answer = http_json("GET", address.api(), timeout=timeout)
    if status == 404:
        raise ConnectError(address.missing(), EXIT_BAD_ROOM)
    if status != 200 or not isinstance(answer, dict) or "seats" not in answer:
        detail = answer.get("detail") if isinstance(answer, dict) else None
        raise ConnectError(
            f"{address.api()} answered HTTP {status}{': ' + str(detail) if detail else ''}; is this a c4lab server?",
            EXIT_BAD_ROOM,
        )
    return answer


def open_room(base: str, body: dict[str, Any], timeout: float) -> dict[str, Any]:
    """A new room on the server at ``base`` (``POST /api/rooms``, ``body``
    as docs/protocol.md writes it): its ticket (``code``, ``token``,
    ``seats``).  ``ConnectError`` with the server's reason where it opens
    none: status 2 for a request it refuses (a bad board, a name), 1 for
    one to try later (too many rooms: 429, a full server: 503);
    ``Unreachable`` if it does not answer."""
    status, answer = http_json("POST", f"{base}/api/rooms", body, timeout)
    if status == 200 and isinstance(answer, dict) and {"code", "token", "seats"} <= answer.keys():
        return answer
    detail = answer.get("detail") if isinstance(answer, dict) else None
    if isinstance(detail, list):  # a 422: FastAPI's list of {"loc", "msg"}
        detail = "; ".join(f"{'.'.join(str(key) for key in item.get('loc', [])[1:])}: {item.get('msg')}"
                           if isinstance(item, dict) else str(item) for item in detail)
    if detail is None:
        raise ConnectError(f"{base}/api/rooms answered HTTP {status}: is this a c4lab server?", EXIT_BAD_ROOM)
    later = status in (429, 503)
    raise ConnectError(f"The server opened no room: {detail}{' (try again later)' if later else ''}.",
                       EXIT_LOST if later else EXIT_BAD_ROOM)


#: Tries of a join whose answer does not come (the same request id each time).
JOIN_TRIES = 3


def join_room(address: RoomAddress, name: str | None, timeout: float) -> dict[str, Any] | None:
    """Take the room's free seat (``POST /api/rooms/{code}/join``): the
    ticket (``token``, ``seats``), ``None`` if someone took it first.  A
    join whose answer is lost is sent again with the same ``request_id``:
    the server answers it with the same seat and token, never a second seat."""
    body = {"name": name, "request_id": secrets.token_urlsafe(18)}
    for attempt in range(JOIN_TRIES):
        try:
            status, answer = http_json("POST", address.api("join"), body, timeout)
            break
        except Unreachable as exc:
            if attempt + 1 == JOIN_TRIES:
                raise ConnectError(f"Cannot reach {address.base} to take the seat: {exc}.", EXIT_LOST) from None
    if status == 409:
        return None
    if status != 200:
        detail = answer.get("detail") if isinstance(answer, dict) else answer
        raise ConnectError(f"Cannot take the free seat: {detail}", EXIT_BAD_ROOM)
    return answer


def open_socket(address: RoomAddress, timeout: float) -> Any:
    """The room's WebSocket, to use as ``async with open_socket(...) as ws``."""
    return websockets.connect(address.socket, open_timeout=timeout)


def lost_because(exc: BaseException, address: RoomAddress) -> str:
    """Why a connection failed or ended, in words, when it is worth another
    try; ``ConnectError`` when it is not (the address is no c4lab room
    socket)."""
    if isinstance(exc, ConnectionClosed):
        frame = exc.rcvd or exc.sent
        if frame is None:
            return "the connection dropped"
        words = _CLOSE_CODES.get(frame.code, "closed")
        return f"{words}, code {frame.code}" + (f": {frame.reason}" if frame.reason else "")
    if isinstance(exc, InvalidStatus):
        raise ConnectError(
            f"{address.socket} refused the WebSocket (HTTP {exc.response.status_code}): is this a c4lab server?",
            EXIT_BAD_ROOM,
        ) from None
    if isinstance(exc, InvalidURI):
        raise ConnectError(f"{address.socket} is not a WebSocket address: {exc}", EXIT_BAD_ROOM) from None
    return str(exc) or type(exc).__name__


#: What can end a connection (worth another try unless ``lost_because`` says not).
SOCKET_ERRORS = (ConnectionClosed, InvalidStatus, InvalidURI, OSError, InvalidHandshake, TimeoutError)

_CLOSE_CODES = {1001: "the server is going away", 1006: "the connection dropped", 1012: "the server is restarting"}


def hello(token: str | None) -> str:
    """The first message on a connection (with the seat's token, if any)."""
    return json.dumps({"type": "hello", "token": token} if token else {"type": "hello"})


def move(token: str) -> str:
    return json.dumps({"type": "move", "move": token})


def resign() -> str:
    return json.dumps({"type": "resign"})


def rematch(action: str) -> str:
    """A rematch message: ``action`` is ``offer``, ``accept`` or ``decline``."""
    return json.dumps({"type": "rematch", "action": action})


class BadMessage(Exception):
    """A server message this client cannot read; ``str(exc)`` says what is wrong."""


STATUSES = ("waiting", "playing", "over")
#: What a ``rematch`` message from the server may say.
REMATCH_EVENTS = ("offered", "accepted", "declined", "withdrawn")
_NONE = type(None)
#: The fields of the ``room`` object the client reads, and their types.
_ROOM_FIELDS: dict[str, type | tuple[type, ...]] = {
    "code": str, "mode": str, "position": str, "status": str, "seats": dict, "width": int,
    "legal_moves": list, "to_move": (str, _NONE), "result": (str, _NONE), "reason": (str, _NONE),
    "bonus": (str, _NONE),
}
_OPTIONAL_FIELDS: dict[str, type | tuple[type, ...]] = {
    "win_line": list, "watchers": int, "rematch": (str, _NONE), "earlier": list,
}
_SEAT_FIELDS: dict[str, type | tuple[type, ...]] = {"kind": str, "name": (str, _NONE), "taken": bool, "connected": bool}


def read_message(text: str | bytes) -> dict[str, Any]:
    """A server message: a JSON object with a ``type``, the fields the
    client reads of a ``state``, ``thinking`` or ``rematch`` checked;
    ``BadMessage`` saying what is wrong otherwise."""
    try:
        message = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        raise BadMessage("not JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise BadMessage("not a JSON object with a 'type'")
    kind = message["type"]
    if kind == "state":
        _check_state(message)
    elif kind == "thinking":
        _need(message.get("seat") in SIDES, "'thinking' names no seat A or B")
    elif kind == "rematch":
        _need(message.get("event") in REMATCH_EVENTS, f"'rematch' has no event of {', '.join(REMATCH_EVENTS)}")
        _need(message.get("seat") in SIDES, "'rematch' names no seat A or B")
        _need(isinstance(message.get("kept"), (str, _NONE)), "'rematch' has a 'kept' that is not a game code")
    return message


def _need(condition: bool, reason: str) -> None:
    if not condition:
        raise BadMessage(reason)


def _check_state(message: dict[str, Any]) -> None:
    """A ``state`` message as the client reads it (``BadMessage`` if not)."""
    room, you = message.get("room"), message.get("you") or []
    if not isinstance(room, dict):
        raise BadMessage("'state' has no 'room' object")
    _need(isinstance(you, list) and all(side in SIDES for side in you), "'state' has a 'you' that is not a list of seats")
    for name, kind in _ROOM_FIELDS.items():
        _need(isinstance(room.get(name), kind), f"the room has no valid {name!r}")
    for name, kind in _OPTIONAL_FIELDS.items():
        _need(name not in room or isinstance(room[name], kind), f"the room's {name!r} is not valid")
    _need(room["status"] in STATUSES, f"the room's status is {room['status']!r}, none of {', '.join(STATUSES)}")
    _need(room.get("rematch") in (None, *SIDES), "the room's 'rematch' is no seat")
    seats: dict[str, Any] = room["seats"]
    _need(all(isinstance(seats.get(side), dict) for side in SIDES), "the room's seats are not A and B")
    for side in SIDES:
        for name, kind in _SEAT_FIELDS.items():
            _need(isinstance(seats[side].get(name), kind), f"seat {side} has no valid {name!r}")
    try:
        Position.parse(room["position"])
    except ValueError as exc:
        raise BadMessage(f"the room's position: {exc}") from None
