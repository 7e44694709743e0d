"""Cross-origin use of the REST API by the pages ``--allow-origin`` names
(CORS): a club's own web page that makes rooms on a c4lab server.

A browser lets a page of another origin send the API's JSON ``POST`` only
after a *preflight* (``OPTIONS`` with ``Access-Control-Request-Method``)
that the server answers for that origin, and lets it read any answer only
if the answer names it in ``Access-Control-Allow-Origin``.  ``CrossOrigin``
does both for the ``/api/`` routes, for an ``Origin`` in the allowed list
only (``guard.origin_listed``: ``*`` lets any page, as the Origin check
does):

- a preflight is answered 204 with ``Access-Control-Allow-Origin`` (the
  origin itself, never ``*``), the API's methods (``GET, POST``), its one
  request header (``Content-Type``: a seat's token travels in a body or
  the socket's ``hello``, never in a header or a cookie, so credentials
  are never allowed), ``Access-Control-Max-Age`` and ``Vary: Origin``;
- an answer gets ``Access-Control-Allow-Origin``, ``Vary: Origin`` and
  ``Access-Control-Expose-Headers: Retry-After`` (a 429's wait), the
  guard's own refusals (413) included, so the page can read what went wrong.

A page of any other origin gets none of these (its preflight goes on to
the application, which answers 405 as before), so its browser refuses the
call; and a state-changing call it sends anyway is still the guard's 403.
The server's own page is same-origin and needs none.  Not installed at all
without ``--allow-origin`` (``c4lab play``, ``c4lab analyse``).
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.datastructures import Headers, MutableHeaders

from c4lab.server.guard import ASGIApp, Message, Receive, Scope, Send, normal_origin, origin_listed

#: The routes other pages may use.
API = "/api/"
#: What a preflight allows: the API's methods and its one request header.
METHODS = "GET, POST"
HEADERS = "Content-Type"
#: Seconds a browser may keep a preflight's answer.
MAX_AGE = 600


class CrossOrigin:
    """ASGI middleware: CORS for the ``/api/`` routes, for the origins of
    ``allow_origins`` (``--allow-origin`` values) only."""

    def __init__(self, app: ASGIApp, allow_origins: Iterable[str]) -> None:
        self.app = app
        self.allowed = frozenset(normal_origin(o) for o in allow_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not str(scope.get("path", "")).startswith(API):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is None or not origin_listed(origin, self.allowed):
            await self.app(scope, receive, send)
            return
        if scope.get("method") == "OPTIONS" and "access-control-request-method" in headers:
            await send({"type": "http.response.start", "status": 204, "headers": [
                (b"access-control-allow-origin", origin.encode("latin-1")),
                (b"access-control-allow-methods", METHODS.encode()),
                (b"access-control-allow-headers", HEADERS.encode()),
                (b"access-control-max-age", str(MAX_AGE).encode()),
                (b"vary", b"Origin"),
            ]})
            await send({"type": "http.response.body", "body": b""})
            return

        async def allowing(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                answer = MutableHeaders(scope=message)
                answer["Access-Control-Allow-Origin"] = origin
                answer["Access-Control-Expose-Headers"] = "Retry-After"
                answer.add_vary_header("Origin")
            await send(message)

        await self.app(scope, receive, allowing)
