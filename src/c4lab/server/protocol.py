"""Reading client messages: strict, with an error code and a reason for
anything that is not a message of ``docs/protocol.md``."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from c4lab.server.rooms import RoomError

MAX_MESSAGE = 4096
#: Rate limit: a bucket of this many messages, refilled at RATE a second.
BURST = 40
RATE = 20.0

# type -> {field: type} of the required fields
MESSAGES: dict[str, dict[str, type]] = {
    "hello": {},
    "move": {"move": str},
    "undo": {},
    "hint": {},
    "resign": {},
    "ping": {},
    "review": {},
}


def parse(text: str | bytes) -> dict[str, Any]:
    """The message in ``text``; ``RoomError`` if it is not a valid one."""
    if isinstance(text, bytes):
        raise RoomError("bad-message", "messages are JSON text frames, not binary")
    if len(text) > MAX_MESSAGE:
        raise RoomError("too-large", f"a message has at most {MAX_MESSAGE} bytes, this one {len(text)}")
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RoomError("bad-json", f"not JSON: {exc.msg} at character {exc.pos}") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, arrays nested too deep
        raise RoomError("bad-json", f"not JSON this server reads: {exc}") from None
    if not isinstance(message, dict):
        raise RoomError("bad-message", "a message is a JSON object with a 'type'")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in MESSAGES:  # an object or a list is no type (nor hashable)
        known = ", ".join(MESSAGES)
        raise RoomError("bad-message", f"unknown message type {kind!r} (known: {known})")
    for name, expected in MESSAGES[kind].items():
        if not isinstance(message.get(name), expected):
            raise RoomError("bad-message", f"'{kind}' needs a {expected.__name__} field {name!r}")
    if kind == "hello" and message.get("token") is not None and not isinstance(message["token"], str):
        raise RoomError("bad-message", "'hello' takes a string 'token' (or none, to watch)")
    return message


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
