"""Reading client messages: strict, with an error code and a reason for
anything that is not a message of ``docs/protocol.md``.

It loads no room manager, agent or numba (a test checks): what a frame
may be is decided before anything heavy is touched.  The rate of a
socket's frames is ``guard.RateLimit``'s business."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from c4lab.server.errors import BAD_JSON, BAD_MESSAGE, TOO_LARGE, RoomError

MAX_MESSAGE = 4096

# type -> {field: type} of the required fields
MESSAGES: dict[str, dict[str, type]] = {
    "hello": {},
    "move": {"move": str},
    "undo": {},
    "hint": {},
    "resign": {},
    "ping": {},
    "review": {},
    "rematch": {"action": str},
}
#: type -> the fields it may have besides ``type`` and its required ones
OPTIONAL: dict[str, frozenset[str]] = {"hello": frozenset({"token"}), "hint": frozenset({"deeper"})}
#: How much of a name the server did not expect an error quotes (a frame may hold 4096 bytes).
SHOWN_NAME = 40
#: What a ``rematch`` message may do.
REMATCH_ACTIONS = ("offer", "accept", "decline")


#: The messages that change a game or a seat: one dropped by the rate limit is answered, each time.
ACTIONS = ("move", "resign", "rematch", "hello")


def dropped_action(frame: Mapping[str, Any]) -> str | None:
    """The type of a frame the rate limit dropped, where it is one of the
    ``ACTIONS`` (a bot must learn that its move was not played); None for
    any other frame, and for one that is no message at all."""
    try:
        text = frame.get("text")
        message = parse(text if text is not None else frame.get("bytes") or b"")
    except RoomError:
        return None
    kind = message["type"]
    return kind if kind in ACTIONS else None


def parse(text: str | bytes) -> dict[str, Any]:
    """The message in ``text``; ``RoomError`` if it is not a valid one."""
    if isinstance(text, bytes):
        raise RoomError(BAD_MESSAGE, "messages are JSON text frames, not binary")
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))  # bytes, as said
    if size > MAX_MESSAGE:
        raise RoomError(TOO_LARGE, f"a message has at most {MAX_MESSAGE} bytes, this one {size}")
    try:
        message = json.loads(text)
    except json.JSONDecodeError as exc:
        raise RoomError(BAD_JSON, f"not JSON: {exc.msg} at character {exc.pos}") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, arrays nested too deep
        raise RoomError(BAD_JSON, f"not JSON this server reads: {exc}") from None
    if not isinstance(message, dict):
        raise RoomError(BAD_MESSAGE, "a message is a JSON object with a 'type'")
    kind = message.get("type")
    if not isinstance(kind, str) or kind not in MESSAGES:  # an object or a list is no type (nor hashable)
        known = ", ".join(MESSAGES)
        if "type" not in message:
            raise RoomError(BAD_MESSAGE, f"a message needs a 'type' (one of: {known})")
        if not isinstance(kind, str):  # said as JSON writes it: null, 3, true, not Python's None, 3, True
            shown = "an object" if isinstance(kind, dict) else "a list" if isinstance(kind, list) else json.dumps(kind)
            raise RoomError(BAD_MESSAGE, f"a message's 'type' is a string, not {shown} (one of: {known})")
        shown = kind if len(kind) <= SHOWN_NAME else f"{kind[:SHOWN_NAME]}..."
        raise RoomError(BAD_MESSAGE, f"unknown message type {shown!r} (known: {known})")
    for name, value in message.items():
        if not _is_text(name) or not _is_text(value):
            raise RoomError(BAD_MESSAGE, f"{name!r} of '{kind}' is not Unicode text: it has a \\uD800-\\uDFFF escape "
                                         "without its pair (a lone surrogate)")
    allowed = {"type", *MESSAGES[kind], *OPTIONAL.get(kind, ())}
    for name in message:
        if name not in allowed:  # a typo ('deep' for 'deeper') was answered as if the field were not there
            shown = name if len(name) <= SHOWN_NAME else f"{name[:SHOWN_NAME]}..."
            fields = ", ".join(repr(f) for f in sorted(allowed - {"type"})) or "none but 'type'"
            raise RoomError(BAD_MESSAGE, f"'{kind}' has no field {shown!r} (its fields: {fields})")
    for name, expected in MESSAGES[kind].items():
        if not isinstance(message.get(name), expected):
            raise RoomError(BAD_MESSAGE, f"'{kind}' needs a {expected.__name__} field {name!r}")
    if kind == "hello" and message.get("token") is not None and not isinstance(message["token"], str):
        raise RoomError(BAD_MESSAGE, "'hello' takes a string 'token' (or none, to watch)")
    if kind == "hint" and message.get("deeper") is not None and not isinstance(message["deeper"], bool):
        raise RoomError(BAD_MESSAGE, "'hint' takes a true or false 'deeper' (or none)")
    if kind == "rematch" and message["action"] not in REMATCH_ACTIONS:
        raise RoomError(BAD_MESSAGE, f"'rematch' takes an 'action': 'offer', 'accept' or 'decline', not {message['action']!r}")
    return message


def _is_text(value: Any) -> bool:
    """Whether every string in ``value`` (keys too, at any depth) is text
    that UTF-8 can write: JSON lets ``"\\ud800"`` through as a lone
    surrogate, which no token can be hashed from nor a message be sent with.
    A loop, not recursion: the JSON may be nested as deep as ``json`` reads."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return False
        elif isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True
