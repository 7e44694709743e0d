"""The server's door: per-client rate limits and room caps, the ``Origin``
check, and the size cap on request bodies.

``Throttle`` is a token bucket per client address (rooms made, seats
taken): over it, HTTP 429 with ``Retry-After``.  ``RateLimit`` is one per
WebSocket (the frames it sends): over it, the frame is dropped and the
socket told ``rate-limited`` (at most once a second).  ``Guard`` is ASGI
middleware in front of the application: it refuses a browser request from
a foreign page (an ``Origin`` that is neither the address the server was
reached on nor one of ``--allow-origin``) -- 403 for a state-changing REST
call, close code 1008 (HTTP 403) for a WebSocket -- and a request body
above the cap (413), from its ``Content-Length`` before reading anything,
or as soon as a streamed body goes over.  A request without ``Origin``
(``c4lab connect``, scripts: not a browser) is let through.  (The CORS
answers that let an allowed origin's page read the API are ``cors``'s.)  A personal
game's server (``PERSONAL_GUARD``: ``c4lab play``, ``c4lab analyse``) also
refuses a request whose ``Host`` is not a loopback name (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import json
import math
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from starlette.exceptions import HTTPException

from c4lab.server.logs import refused

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The largest request body (the REST bodies are a few hundred bytes).
MAX_BODY = 64 * 1024
#: Methods that change something: they need a trusted ``Origin`` (or none).
STATE_CHANGING = frozenset({"POST", "PUT", "PATCH", "DELETE"})
#: Clients whose buckets are kept before the idle ones are forgotten.
MAX_CLIENTS = 100_000
#: A socket's frames: a bucket of this many, refilled at RATE a second (``RateLimit``).
BURST = 40
RATE = 20.0


@dataclass
class TokenBucket:
    """At most ``burst`` tokens, refilled at ``rate`` a second: the rate
    limits of a connection's messages and of a client's rooms and joins."""

    burst: float
    rate: float
    tokens: float
    stamp: float  # when ``tokens`` was counted

    @classmethod
    def full(cls, burst: float, rate: float, now: float) -> TokenBucket:
        return cls(float(burst), rate, float(burst), now)

    def take(self, now: float) -> float:
        """Take a token: 0 if there was one, else the seconds until there
        is (nothing is taken then)."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return 0.0
        return (1.0 - self.tokens) / self.rate


@dataclass(frozen=True)
class GuardOptions:
    """The abuse limits of a server (``None``: no such limit)."""

    rooms_per_minute: float | None = 10.0
    joins_per_minute: float | None = 30.0
    rooms_per_client: int | None = 20
    max_rooms: int | None = 10_000
    sockets_per_client: int | None = 100
    allow_origins: tuple[str, ...] = ()
    max_body: int = MAX_BODY
    #: A personal game's server (``c4lab play``, ``c4lab analyse``) answers
    #: only requests addressed to this machine by a loopback name
    #: (``Host``: 127.0.0.1, localhost, [::1]): a page on another site whose
    #: name was made to point at 127.0.0.1 (DNS rebinding) passes the Origin
    #: check, its Host and Origin being alike.  Not for ``c4lab serve``,
    #: whose proxy may pass on its public name.
    loopback_only: bool = False

    def describe(self) -> str:
        """One line for the server's start-up message: each bound as a
        number of its kind, "any number of" where there is none (it read
        "no limit and no limit a minute")."""

        def bound(value: float | None, what: str) -> str:
            return f"any number of {what}" if value is None else f"{value:g} {what}"

        origins = ", ".join(self.allow_origins) or "none"
        return (
            f"each client: {bound(self.rooms_per_minute, 'new rooms a minute')}, "
            f"{bound(self.joins_per_minute, 'joins a minute')}, {bound(self.rooms_per_client, 'open rooms')}, "
            f"{bound(self.sockets_per_client, 'open sockets')}; {bound(self.max_rooms, 'open rooms in all')}; "
            f"bodies up to {self.max_body:,} bytes; other origins allowed: {origins}"
        )

    def public(self) -> dict[str, Any]:
        return {
            "rooms_per_minute": self.rooms_per_minute, "joins_per_minute": self.joins_per_minute,
            "rooms_per_client": self.rooms_per_client, "sockets_per_client": self.sockets_per_client,
            "max_rooms": self.max_rooms, "max_body": self.max_body,
        }


#: No rate limits, no caps: tests and ``c4lab play`` (one person).
UNLIMITED = GuardOptions(rooms_per_minute=None, joins_per_minute=None, rooms_per_client=None, max_rooms=None,
                         sockets_per_client=None)
#: A personal game's server: no limits, reached by a loopback name only.
PERSONAL_GUARD = GuardOptions(rooms_per_minute=None, joins_per_minute=None, rooms_per_client=None, max_rooms=None,
                              sockets_per_client=None, loopback_only=True)


class Throttle:
    """A token bucket per client: ``per_minute`` requests a minute, up to
    that many in a burst."""

    def __init__(self, per_minute: float, clock: Callable[[], float] = time.monotonic) -> None:
        if not per_minute > 0:
            raise ValueError(f"a rate must be positive, not {per_minute}")
        self.rate = per_minute / 60.0
        self.burst = max(1.0, per_minute)
        self.clock = clock
        self.buckets: dict[str, TokenBucket] = {}

    def wait(self, client: str) -> float:
        """Take a token for ``client``: 0 if there was one, else the seconds
        until there is (nothing is taken then)."""
        now = self.clock()
        bucket = self.buckets.get(client)
        if bucket is None:
            bucket = self.buckets[client] = TokenBucket.full(self.burst, self.rate, now)
        seconds = bucket.take(now)
        if seconds == 0.0 and len(self.buckets) > MAX_CLIENTS:
            self._forget(now)
        return seconds

    def give_back(self, client: str) -> None:
        """Return the token ``client`` took for a request that was then
        refused (a bad board, a full server): only what was done counts."""
        bucket = self.buckets.get(client)
        if bucket is not None:
            bucket.tokens = min(bucket.burst, bucket.tokens + 1.0)

    def _forget(self, now: float) -> None:
        """Drop the buckets that are full again (those clients left)."""
        full = self.burst / self.rate
        self.buckets = {c: b for c, b in self.buckets.items() if now - b.stamp < full}


class RateLimit:
    """A token bucket per connection; ``allow()`` says whether the next
    message may be handled."""

    def __init__(self, burst: int = BURST, rate: float = RATE) -> None:
        self.bucket = TokenBucket.full(burst, rate, time.monotonic())
        self.last_warning = 0.0

    def allow(self) -> bool:
        return self.bucket.take(time.monotonic()) == 0.0

    def should_warn(self) -> bool:
        """At most one rate-limit error a second, so warnings do not flood."""
        now = time.monotonic()
        if now - self.last_warning >= 1.0:
            self.last_warning = now
            return True
        return False


def too_many(seconds: float, message: str) -> HTTPException:
    """HTTP 429 with ``Retry-After`` (whole seconds, at least 1)."""
    return HTTPException(429, message, headers={"Retry-After": str(max(1, math.ceil(seconds)))})


class RoomOwners:
    """The rooms each client made, to cap those still open."""

    def __init__(self) -> None:
        self.codes: dict[str, list[str]] = {}

    def open_count(self, client: str, is_open: Callable[[str], bool]) -> int:
        """How many of ``client``'s rooms are open (forgetting the others)."""
        mine = [code for code in self.codes.get(client, []) if is_open(code)]
        if mine:
            self.codes[client] = mine
        else:
            self.codes.pop(client, None)
        return len(mine)

    def add(self, client: str, code: str) -> None:
        self.codes.setdefault(client, []).append(code)


def client_of(scope: Scope) -> str:
    """The client's address (uvicorn puts a trusted proxy's
    ``X-Forwarded-For`` there: ``$FORWARDED_ALLOW_IPS``, 127.0.0.1 and ::1 by default)."""
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


# -- the Origin check -------------------------------------------------------------------

_DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}


def _origin(text: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an origin or ``None`` if it is not one."""
    try:
        parts = urlsplit(text.strip().lower())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def normal_origin(text: str) -> str:
    """``--allow-origin`` values: ``*`` or ``scheme://host[:port]``."""
    if text.strip() == "*":
        return "*"
    parsed = _origin(text)
    if parsed is None or urlsplit(text.strip()).path not in ("", "/"):
        raise ValueError(f"{text!r} is not an origin: give scheme://host[:port], e.g. https://c4.example.com")
    return "{}://{}:{}".format(*parsed)


def origin_listed(origin: str, allowed: Iterable[str]) -> bool:
    """Whether ``origin`` (an ``Origin`` header) is one of ``allowed``
    (``normal_origin`` values, ``*`` any): scheme, host and port compared,
    so ``https://c4.example.com`` is ``https://c4.example.com:443``.
    ``null`` (a sandboxed page, a file) never is."""
    parsed = _origin(origin)
    if parsed is None:
        return False
    allowed = set(allowed)
    return "*" in allowed or "{}://{}:{}".format(*parsed) in allowed


def origin_allowed(origin: str | None, host: str | None, allowed: Iterable[str] = ()) -> bool:
    """Whether a request with this ``Origin`` header may act: none (not a
    browser), the address it was sent to (its ``Host``), or an allowed one."""
    if origin is None:
        return True
    parsed = _origin(origin)
    if parsed is None:  # "null" (a sandboxed page, a file): never trusted
        return False
    if origin_listed(origin, allowed):
        return True
    scheme, hostname, port = parsed
    if not host:
        return False
    try:
        reached = urlsplit(f"//{host.strip().lower()}")
        reached_port = reached.port or _DEFAULT_PORTS[scheme]
    except ValueError:
        return False
    return reached.hostname == hostname and reached_port == port


def loopback_host(host: str | None) -> bool:
    """Whether a ``Host`` header names this machine by a loopback name
    (127.0.0.1 or any 127.x address, ``localhost``, ``[::1]``), any port;
    none at all (not a browser: every browser sends one) counts as one."""
    if host is None:
        return True
    try:
        name = urlsplit(f"//{host.strip().lower()}").hostname
    except ValueError:
        return False
    if name is None:
        return False
    if name == "localhost" or name.endswith(".localhost"):  # RFC 6761: always this machine
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class BodyTooLarge(HTTPException):
    """A request body over the cap (HTTP 413)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, f"a request body has at most {limit:,} bytes")


class Guard:
    """ASGI middleware: the ``Origin`` check and the body cap (see the
    module's docstring)."""

    def __init__(self, app: ASGIApp, options: GuardOptions) -> None:
        self.app = app
        self.options = options
        self.allowed = frozenset(normal_origin(o) for o in options.allow_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.options.loopback_only and not loopback_host(headers.get("host")):
            detail = (f"this is a personal game's server, for this machine's browser: {headers.get('host')!r} "
                      "is not this machine's address (open http://127.0.0.1:PORT/)")
            if scope["type"] == "websocket":
                await receive()  # websocket.connect
                refused(client_of(scope), "WEBSOCKET", scope.get("path", ""), 403, f"{detail} (close code 1008)")
                await send({"type": "websocket.close", "code": 1008, "reason": "not this machine's address"})
            else:
                await _answer(scope, send, 403, detail)
            return
        trusted = origin_allowed(headers.get("origin"), headers.get("host"), self.allowed)
        if scope["type"] == "websocket":
            if not trusted:
                await receive()  # websocket.connect
                refused(client_of(scope), "WEBSOCKET", scope.get("path", ""), 403,
                        f"a socket from the page {headers.get('origin')!r} (close code 1008)")
                await send({"type": "websocket.close", "code": 1008, "reason": "foreign origin"})
                return
            await self.app(scope, receive, send)
            return
        if not trusted and scope.get("method") in STATE_CHANGING:
            await _answer(scope, send, 403, f"requests from {headers.get('origin')!r} are not allowed here")
            return
        limit = self.options.max_body
        length = headers.get("content-length")
        if length is not None and not length.isdigit():
            await _answer(scope, send, 400, "Content-Length is not a number")
            return
        if length is not None and int(length) > limit:
            await _answer(scope, send, 413, BodyTooLarge(limit).detail)
            return
        started = False
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    raise BodyTooLarge(limit)
            return message

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, watched)
        except BodyTooLarge as exc:  # read outside a route (none of ours): answer it here
            if not started:
                await _answer(scope, send, 413, exc.detail)


async def _answer(scope: Scope, send: Send, status: int, detail: str) -> None:
    """A JSON error answer, as FastAPI gives them (``{"detail": ...}``,
    written as starlette's ``JSONResponse`` writes it: compact, UTF-8),
    and its line in the log (``logs.refused``)."""
    refused(client_of(scope), str(scope.get("method", "")), str(scope.get("path", "")), status, detail)
    body = json.dumps({"detail": detail}, ensure_ascii=False, separators=(",", ":")).encode()
    await send({
        "type": "http.response.start", "status": status,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    })
    await send({"type": "http.response.body", "body": body})
