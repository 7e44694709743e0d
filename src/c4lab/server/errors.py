"""The server's one error class and the protocol's error codes.

A request that cannot be done raises ``RoomError(code, message)``: the
WebSocket handler sends it as ``{"type": "error", "code", "message"}``, a
REST route answers it with the HTTP status of ``HTTP_STATUS`` (400 if the
code has none).  ``docs/protocol.md`` lists the socket's codes; ``SOCKET_CODES`` is
the same list, and a test keeps the two in step.

This module imports nothing of c4lab, so that reading a frame
(``server/protocol.py``) loads no room manager, agent or numba.
"""

from __future__ import annotations

BAD_JSON = "bad-json"
BAD_MESSAGE = "bad-message"
TOO_LARGE = "too-large"
RATE_LIMITED = "rate-limited"
BAD_TOKEN = "bad-token"
BAD_NAME = "bad-name"
BAD_REQUEST = "bad-request"
BAD_BOARD = "bad-board"
BAD_AGENT = "bad-agent"
OVER_LIMIT = "over-limit"
NOT_YOUR_SEAT = "not-your-seat"
NOT_YOUR_TURN = "not-your-turn"
ILLEGAL_MOVE = "illegal-move"
GAME_OVER = "game-over"
NOT_ALLOWED = "not-allowed"
ROOM_FULL = "room-full"
REVIEW_FAILED = "review-failed"
STORAGE_FAILED = "storage-failed"
UNKNOWN_ROOM = "unknown-room"
AGENT_FAILED = "agent-failed"

#: The codes of the WebSocket's ``error`` messages (``docs/protocol.md``).
SOCKET_CODES = (
    BAD_JSON, BAD_MESSAGE, TOO_LARGE, RATE_LIMITED, BAD_TOKEN, NOT_YOUR_SEAT, NOT_YOUR_TURN, ILLEGAL_MOVE,
    GAME_OVER, NOT_ALLOWED, REVIEW_FAILED, STORAGE_FAILED, UNKNOWN_ROOM, AGENT_FAILED,
)
#: Every code, those only the REST routes meet too (they answer the message
#: as ``detail`` with the code's HTTP status).
CODES = SOCKET_CODES + (BAD_NAME, BAD_REQUEST, BAD_BOARD, BAD_AGENT, OVER_LIMIT, ROOM_FULL)

#: The HTTP status of a code on the REST API (any other: 400).
HTTP_STATUS = {ROOM_FULL: 409, GAME_OVER: 409, UNKNOWN_ROOM: 404, STORAGE_FAILED: 503, OVER_LIMIT: 422}


class RoomError(ValueError):
    """A request that cannot be done; ``code`` is one of ``CODES``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.code, self.message))

    def frame(self) -> dict[str, str]:
        """The protocol's ``error`` message."""
        return {"type": "error", "code": self.code, "message": self.message}

    @property
    def status(self) -> int:
        """The HTTP status of this error on the REST API."""
        return HTTP_STATUS.get(self.code, 400)
