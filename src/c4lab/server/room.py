"""A room: one game, its two seats, its connections, and how it is shown.

``Room`` and ``Seat`` are the data the room manager (``rooms.py``) changes
under a room's lock; this module holds them with their views -- the
protocol's ``room`` object (``Room.state``) and the stored row
(``Room.row``, ``Room.from_row``) -- and the small vocabulary of rooms:
codes and tokens (display names: ``names.py``).  It builds no agent: a
room read from the store is shown, and a finished one replayed or
reviewed, without one.

Connections are anything with ``async send_json(obj)`` and ``async
send_text(text)`` (a broadcast writes the room as JSON once and sends
text): the WebSocket handler in ``app.py`` wraps Starlette's socket, tests
pass fakes.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from c4lab.rules import Position, Variant
from c4lab.rules.sides import LETTERS, SIDES, result_clause
from c4lab.server.storage import ANALYSIS, GameRow

if TYPE_CHECKING:  # a seat holds an agent; this module makes none
    from c4lab.agents.base import Agent

#: The statuses of a room still open (an online one has a countdown for absent players).
OPEN = ("waiting", "playing")


class Connection(Protocol):
    async def send_json(self, data: Any) -> None: ...

    async def send_text(self, text: str) -> None: ...


def to_json(data: Any) -> str:
    """``data`` as the server writes JSON on a WebSocket (Starlette's
    ``send_json``: compact, UTF-8 as is)."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def state_message(room_json: str, seats: set[str]) -> str:
    """The ``state`` message of a room already written as JSON, for a
    connection holding ``seats``: the text ``to_json`` gives the message
    ``{"type": "state", "room": ..., "you": [...]}``, without writing the
    room again for each connection.

    >>> state_message('{"code":"x"}', {"B", "A"})
    '{"type":"state","room":{"code":"x"},"you":["A","B"]}'
    """
    return f'{{"type":"state","room":{room_json},"you":{to_json(sorted(seats))}}}'


#: A server's room-code prefix (``--room-prefix``): letters and digits.
PREFIX = re.compile(r"[A-Za-z0-9]{1,16}")


def check_prefix(prefix: str) -> str:
    """A room-code prefix, if it is one (else a ValueError saying what is)."""
    if not PREFIX.fullmatch(prefix):
        raise ValueError(f"a room-code prefix has 1 to 16 letters and digits, not {prefix!r}")
    return prefix


def new_code(prefix: str = "") -> str:
    """An unguessable room code: 96 random bits, 16 URL-safe characters;
    after ``prefix`` and a dash if there is one (``east-...``), so that a
    proxy in front of several servers knows from the code which one holds
    the room (the random part has dashes too, the prefix none: ``a-`` is
    never the start of a code of prefix ``ab``)."""
    return f"{prefix}-{secrets.token_urlsafe(12)}" if prefix else secrets.token_urlsafe(12)


def new_token() -> str:
    return secrets.token_urlsafe(24)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class Seat:
    """One side of a room: a person or an agent."""

    kind: str  # "human" or "agent"
    name: str
    spec: str | None = None  # agent spec
    token_hash: str | None = None  # None: an online seat nobody has taken
    connections: int = 0
    absent_since: float | None = None
    agent: Agent | None = None
    #: How the agent's last move was found when another agent chose it (perfect
    #: on a board it cannot solve in time: "not solved in 0.50 s: master's move").
    fallback: str | None = None

    @property
    def taken(self) -> bool:
        return self.kind == "agent" or self.token_hash is not None

    def stored(self) -> dict[str, Any]:
        # absent_since is kept so that a restarted server ends an online room
        # on time (a row without it: the seat counts as absent from the load)
        return {
            "kind": self.kind, "name": self.name, "spec": self.spec, "token_hash": self.token_hash,
            "absent_since": self.absent_since,
        }

    def public(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "spec": self.spec,
            "taken": self.taken,
            "connected": self.kind == "agent" or self.connections > 0,
            "absent_since": self.absent_since if self.taken and self.kind == "human" else None,
            "plays_instead": None,
            "fallback": self.fallback,
        }


@dataclass
class Room:
    code: str
    mode: str
    position: Position
    start_ply: int
    seats: dict[str, Seat]
    public: bool = False
    status: str = "playing"
    result: str | None = None
    reason: str | None = None
    created: float = field(default_factory=time.time)
    finished: float | None = None
    evaluation: float | None = None
    thinking: str | None = None
    #: While the thinking agent waits for numba to compile (the first start
    #: after an install): the seconds it has waited so far, else None.
    preparing: float | None = None
    generation: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    connections: dict[Connection, set[str]] = field(default_factory=dict)
    #: Connections that have not said hello yet (for ``HELLO_GRACE`` seconds
    #: at most): not counted as watchers, since a player's page or terminal
    #: holds no seat until its hello is answered.
    unheard: set[Connection] = field(default_factory=set)
    forfeit_task: asyncio.Task[None] | None = None
    #: When the room last changed or was sent to anyone (``broadcast``): idle rooms expire.
    touched: float = field(default_factory=time.time)
    #: One job of the room in the agent pool at a time (a move, a hint):
    #: a room never holds more than one worker thread, so none starves the others.
    work: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: One broadcast of the room at a time (``RoomManager.broadcast``): each
    #: sends to every connection at once, so that many at once (a thousand
    #: watchers leaving together) would hold a task per message.
    telling: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: A broadcast for spectators who came or went is due (``RoomManager._tell_crowd``).
    crowd_told_soon: bool = False
    #: Answers to joins by (client, request id): the same seat and token again.
    joins: dict[tuple[str, str], tuple[str, list[str]]] = field(default_factory=dict)
    #: A local room made as an analysis board (``"analysis": true``): stored
    #: with the mode ``analysis``, so that a listing tells it from a game.
    analysis: bool = False
    #: Online rooms, after the game: the seat that offered a rematch (kept in memory only).
    rematch: str | None = None
    #: The codes of the room's earlier games, oldest first: each rematch keeps
    #: the finished game in the store as its own game, ``<code>-1``, ``<code>-2``...
    earlier: list[str] = field(default_factory=list)

    # -- views ------------------------------------------------------------------

    def state(self, forfeit_after: float | None = None) -> dict[str, Any]:
        """The public ``room`` object of the protocol."""
        record = self.position.to_dict()
        record.pop("ply", None)
        record.update(
            code=self.code,
            mode=self.mode,
            public=self.public,
            start_ply=self.start_ply,
            status=self.status,
            result=self.result,
            reason=self.reason,
            seats={side: seat.public() for side, seat in self.seats.items()},
            thinking=self.thinking,
            preparing=self.preparing if self.thinking else None,
            evaluation=self.evaluation,
            forfeit_after=forfeit_after if self.mode == "online" else None,
            # connections holding no seat, once they said hello (or kept silent for HELLO_GRACE)
            watchers=sum(1 for conn, seats in self.connections.items() if not seats and conn not in self.unheard),
        )
        for side, seat in self.seats.items():
            if seat.agent is not None:  # e.g. ntuple with no network for this board: heuristic's moves
                record["seats"][side]["plays_instead"] = plays_instead(seat.agent, self.position.variant)
        if self.mode == "local":
            record.update(analysis=self.analysis)  # a page that has no choice of its own for the room shows it so
        if self.mode == "online":
            record.update(rematch=self.rematch, earlier=list(self.earlier), kept=self.kept)
        if self.mode == "online" and self.status == "playing" and forfeit_after is not None:
            # The seconds an absent player has left before forfeiting, as of
            # this message (a page counts down from it: no clocks compared).
            now = time.time()
            for side, seat in self.seats.items():
                if seat.kind == "human" and seat.taken and seat.connections == 0 and seat.absent_since:
                    left = max(0.0, seat.absent_since + forfeit_after - now)
                    record["seats"][side]["forfeit_in"] = round(left, 1)
        if self.status == "over":
            record["to_move"] = None
            record["legal_moves"] = []
        elif self.status == "waiting":
            record["legal_moves"] = []
        return record

    @property
    def kept(self) -> bool:
        """A finished game a rematch kept as its own (``kept_row``): a
        record whose seats no token holds, so no one is present or away in it."""
        humans = [seat for seat in self.seats.values() if seat.kind == "human"]
        return bool(humans) and all(seat.token_hash == KEPT for seat in humans)

    def row(self) -> GameRow:
        return GameRow(
            self.code, ANALYSIS if self.analysis else self.mode, self.position.notation, self.start_ply,
            {side: seat.stored() for side, seat in self.seats.items()},
            self.public, self.status, self.result, self.reason, self.created,
            finished=self.finished,
        )

    def seats_of(self, token: str | None) -> set[str]:
        if not token:
            return set()
        digest = token_hash(token)
        return {side for side, seat in self.seats.items() if seat.token_hash == digest}

    @classmethod
    def from_row(cls, row: GameRow) -> Room:
        """The room of a stored row, without agents (the manager gives an
        open room its agents; a finished one needs none); a ValueError,
        KeyError or TypeError if the row is damaged."""
        seats = {}
        for side, stored in row.seats.items():
            if stored["kind"] == "agent":
                seat = Seat("agent", stored["spec"], spec=stored["spec"])
            else:
                seat = Seat("human", stored["name"], token_hash=stored["token_hash"])
                if row.mode == "online" and row.status in OPEN and seat.taken:
                    # nobody is connected to a room just loaded: absent since
                    # they left, or since now (the server stopped under them)
                    seat.absent_since = stored.get("absent_since") or time.time()
            seats[side] = seat
        if set(seats) != set(SIDES):
            raise ValueError(f"the seats are {sorted(seats)}, not A and B")
        analysis = row.mode == ANALYSIS
        room = cls(
            row.code, "local" if analysis else row.mode, Position.parse(row.position), row.start_ply, seats,
            row.public, row.status, row.result, row.reason, row.created, row.finished,
        )
        room.analysis = analysis
        return room

    def finish(self, result: str | None, reason: str) -> None:
        """End the game: ``result`` (A, B, draw or None) by ``reason``."""
        self.status = "over"
        self.result = result
        self.reason = reason
        self.finished = time.time()
        self.thinking = None
        if self.forfeit_task is not None:
            self.forfeit_task.cancel()
            self.forfeit_task = None

    def outcome(self) -> str:
        """The end of the game in words, in the sentence every screen says
        (``rules.sides.result_clause``), the sides by letter, begun in lower
        case for a message's parentheses: "A wins: four in a row", "B wins:
        A resigned", "draw: the board is full", "abandoned: the players left"."""
        return result_clause(self.result, self.reason, names=LETTERS)

    def ended_line(self) -> str:
        """A finished game in one line of the server's log."""
        how = self.outcome()
        ply = self.position.ply
        return f"room {self.code}: game over, {how}, after {ply} move{'' if ply == 1 else 's'}"

    def snapshot(self) -> tuple[Any, ...]:
        """What a change may alter (``restore`` puts it back)."""
        return (
            (self.position, self.status, self.result, self.reason, self.finished, self.evaluation, self.thinking),
            {side: (seat.name, seat.token_hash, seat.absent_since) for side, seat in self.seats.items()},
        )

    def restore(self, before: tuple[Any, ...]) -> None:
        fields, seats = before
        (self.position, self.status, self.result, self.reason, self.finished, self.evaluation,
         self.thinking) = fields
        for side, (name, digest, absent_since) in seats.items():
            seat = self.seats[side]
            seat.name, seat.token_hash, seat.absent_since = name, digest, absent_since


#: The token hash of the seats of a game kept by a rematch (``kept_row``):
#: no token's hash, so no connection holds a seat of it, yet its seats show as taken.
KEPT = "kept"


def plays_instead(agent: Any, variant: Variant) -> str | None:
    """The spec of the agent whose moves ``agent`` plays on ``variant``
    (``Agent.plays_instead``: ntuple with no network for the board), None
    for its own moves or an agent without the method."""
    method = getattr(agent, "plays_instead", None)
    return method(variant) if method is not None else None


def kept_row(room: Room, code: str) -> GameRow:
    """The finished game of ``room`` as its own stored game ``code`` (a
    rematch starts the next one in the room): a record, whose seats no token holds."""
    row = room.row()
    row.code = code
    row.seats = {side: {**seat, "token_hash": KEPT, "absent_since": None} for side, seat in row.seats.items()}
    return row

