"""The headers every HTTP answer of the server carries, for the browsers
that visit it (``c4lab serve --host 0.0.0.0`` is a public web site).

- ``Content-Security-Policy`` (``page_policy``): the page runs only this
  server's own scripts and styles (its one inline script by its hash),
  connects only to this server (its REST calls and its socket) and may be
  framed by no page: a name or a message that ever reached the page as
  markup would still run nothing, and a foreign site cannot lay the board
  under an invisible frame of its own to steer a player's clicks.
- ``X-Frame-Options: DENY``: the same for browsers without CSP's
  ``frame-ancestors``.
- ``X-Content-Type-Options: nosniff``: an answer is read as the type it
  says (JSON that quotes a client's input is never taken for a page or a
  script).
- ``Referrer-Policy: same-origin``: a room's address (``/r/CODE``: whoever
  has it may watch, and take an online room's free seat) is never sent to
  another site.

A seat's token never travels in an address or a cookie: the page keeps it
in ``localStorage`` and sends it in its socket's ``hello`` (see
docs/server.md, *Security*).
"""

from __future__ import annotations

import base64
import hashlib
import re

from starlette.datastructures import MutableHeaders

from c4lab.server.guard import ASGIApp, Message, Receive, Scope, Send

#: The page's inline scripts (no ``src``): each is allowed by its hash.
INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)


def page_policy(page: str) -> str:
    """The ``Content-Security-Policy`` for ``page`` (the HTML of
    ``static/index.html``): this server's files only, and the page's inline
    scripts by their SHA-256 (an edit to one changes its hash with it)."""
    hashes = "".join(
        f" 'sha256-{base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()}'"
        for script in INLINE_SCRIPT.findall(page)
    )
    return "; ".join((
        "default-src 'self'",
        f"script-src 'self'{hashes}",
        "style-src 'self'",
        "img-src 'self' data:",  # the page's icon is a data: address
        "connect-src 'self'",  # fetch and the room's socket (ws: or wss: on this host)
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ))


class SecurityHeaders:
    """ASGI middleware: the module's headers on every HTTP answer (one the
    application set itself is left as it is)."""

    def __init__(self, app: ASGIApp, policy: str) -> None:
        self.app = app
        self.headers = {
            "Content-Security-Policy": policy,
            "X-Content-Type-Options": "nosniff",
            "X-Frame-Options": "DENY",
            "Referrer-Policy": "same-origin",
        }

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, with_headers)
