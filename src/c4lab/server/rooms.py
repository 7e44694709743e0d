"""Rooms: one game each, its seats, its connections, its agents.

Everything that changes a room happens under the room's lock, is checked by
the rules engine, is written to the store, and is then broadcast to every
connection of the room -- in that order, so that what a client is told is
always on disk.  Agents think in worker threads (the search kernels release
the GIL) and their move is applied only if the room has not changed since
they started (an undo or a resignation cancels it).

A change whose write fails (a full disk, a database locked too long: a
``StorageError``) is not kept: the room is put back as it was, the client
gets the error ``storage-failed`` and the server goes on (``_change``).  A
presence stamp that cannot be written (a player leaving or coming back) is
only logged: it is kept in memory and written with the next change.

Connections are anything with ``async send_json(obj)`` and ``async
send_text(text)`` (a broadcast writes the room as JSON once and sends
text): the WebSocket handler in ``app.py`` wraps Starlette's socket, tests
may pass fakes.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import logging
import random
import re
import secrets
import time
from collections.abc import Iterator
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

from c4lab.agents import Agent, make_agent, parse_spec
from c4lab.rules import IllegalMoveError, Position
from c4lab.rules.setup import starting_position
from c4lab.server import review as reviews
from c4lab.server import warmup
from c4lab.server.limits import AgentLimits, LimitError
from c4lab.server.storage import GameRow, GameStore, StorageError

log = logging.getLogger(__name__)

SIDES = ("A", "B")
#: The statuses of a room still open (an online one has a countdown for absent players).
OPEN = ("waiting", "playing")
NAME_MAX = 24
HINT_SPEC = "master:time=0.5"
#: Seconds a room nobody has connected to since it was made (or since the
#: guest took their seat) stays open (``--expire-idle``): then an online
#: room ends abandoned, a local one leaves memory (its row stays, and its
#: page can take it up again).
IDLE_AFTER = 600.0
#: Seconds into an agent's move when, if numba is compiling, the room says
#: it is preparing the engine; then how often it says how long so far.
PREPARING_FIRST = 0.3
PREPARING_EVERY = 1.0
#: Seconds before an agent whose move could not be saved tries again.
STORAGE_RETRY = 5.0
#: What a client is told when a change could not be saved (the log has the details).
STORAGE_FAILED = "the server could not save this change (its disk may be full): nothing changed, try again later"


class RoomError(ValueError):
    """A request that cannot be done; ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


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


def check_name(name: str | None, default: str) -> str:
    """A display name: plain text, 1 to 24 characters, no markup."""
    if name is None or name == "":
        return default
    if not isinstance(name, str):
        raise RoomError("bad-message", "a name must be a string")
    name = name.strip()
    bad = sorted({c for c in name if c in "<>&\"'`" or not c.isprintable()})
    if bad:
        raise RoomError("bad-name", f"a name must be plain text: {''.join(bad)!r} not allowed")
    if not 1 <= len(name) <= NAME_MAX:
        raise RoomError("bad-name", f"a name has 1 to {NAME_MAX} characters, not {len(name)}")
    return name


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
    forfeit_task: asyncio.Task[None] | None = None
    #: When the room last changed or was sent to anyone (``broadcast``): idle rooms expire.
    touched: float = field(default_factory=time.time)
    #: One job of the room in the agent pool at a time (a move, a hint):
    #: a room never holds more than one worker thread, so none starves the others.
    work: asyncio.Lock = field(default_factory=asyncio.Lock)
    #: Answers to joins by (client, request id): the same seat and token again.
    joins: dict[tuple[str, str], tuple[str, list[str]]] = field(default_factory=dict)

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
            watchers=sum(1 for seats in self.connections.values() if not seats),  # connections holding no seat
        )
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

    def row(self) -> GameRow:
        return GameRow(
            self.code, self.mode, self.position.notation, self.start_ply,
            {side: seat.stored() for side, seat in self.seats.items()},
            self.public, self.status, self.result, self.reason, self.created,
            finished=self.finished,
        )

    def seats_of(self, token: str | None) -> set[str]:
        if not token:
            return set()
        digest = token_hash(token)
        return {side for side, seat in self.seats.items() if seat.token_hash == digest}


class RoomManager:
    """Every live room of a server, loaded from the store on first use."""

    def __init__(
        self,
        store: GameStore,
        executor: Executor,
        forfeit_after: float = 120.0,
        hint_spec: str = HINT_SPEC,
        rng: random.Random | None = None,
        limits: AgentLimits | None = None,
        idle_after: float | None = IDLE_AFTER,
        room_prefix: str = "",
    ) -> None:
        """``limits`` bound the agents of rooms and hints (``AgentLimits``'
        defaults if none); ``idle_after``: see ``IDLE_AFTER`` (None: never);
        ``room_prefix``: the start of every new room's code (``new_code``)."""
        self.store = store
        self.room_prefix = check_prefix(room_prefix) if room_prefix else ""
        self.executor = executor
        self.forfeit_after = forfeit_after
        self.hint_spec = hint_spec
        self.rng = rng or random.Random()
        self.rooms: dict[str, Room] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Reviews of finished games by position (and those being computed),
        #: so that asking again, or from another page, costs nothing.
        self._reviews: dict[tuple[str, int], asyncio.Future[dict[str, Any]]] = {}
        self.limits = limits or AgentLimits()
        self.limits.make(hint_spec, listed=False)  # the hints keep the same limits: a bad one stops the server at start
        self.idle_after = idle_after
        #: Reviews at once: at most half the pool, so that agents always find a thread.
        self._reviewing = asyncio.Semaphore(max(1, self.limits.threads // 2))
        warmup.COMPILING.install()  # a move that waits for numba's compiler says so (``preparing``)

    # -- creating and finding rooms -------------------------------------------------

    def create(self, options: dict[str, Any]) -> tuple[Room, str, list[str]]:
        """A new room from the creation body of the protocol; the room, the
        creator's token and the seats it holds."""
        mode = options.get("mode", "local")
        if mode not in ("local", "online"):
            raise RoomError("bad-request", f"mode must be 'local' or 'online', not {mode!r}")
        position = self._start(options)
        token = new_token()
        digest = token_hash(token)
        name = check_name(options.get("name"), "Player")
        seats: dict[str, Seat] = {}
        if mode == "local":
            players = options.get("players") or {"A": "human", "B": "hard"}
            if not isinstance(players, dict) or set(players) != set(SIDES):
                raise RoomError("bad-request", "players must give 'A' and 'B': 'human' or an agent spec")
            entries = [players["A"], players["B"]]
            first = options.get("first", "A")
            if first not in ("A", "B", "random"):
                raise RoomError("bad-request", f"first must be 'A', 'B' or 'random', not {first!r}")
            if first == "B" or (first == "random" and self.rng.random() < 0.5):
                entries.reverse()
            for side, who in zip(SIDES, entries):
                if not isinstance(who, str):
                    raise RoomError("bad-request", f"player {side} must be 'human' or an agent spec")
                if who == "human":
                    seats[side] = Seat("human", name if name != "Player" else f"Player {side}", token_hash=digest)
                else:
                    seats[side] = self._agent_seat(who)
            held = [side for side in SIDES if seats[side].kind == "human"]
            status = "playing"
        else:
            choice = options.get("seat", "random")
            if choice not in ("A", "B", "random"):
                raise RoomError("bad-request", f"seat must be 'A', 'B' or 'random', not {choice!r}")
            mine = self.rng.choice(SIDES) if choice == "random" else choice
            for side in SIDES:
                seats[side] = Seat("human", name if side == mine else "", token_hash=digest if side == mine else None)
            held = [mine]
            status = "waiting"
        room = Room(
            new_code(self.room_prefix), mode, position, position.ply, seats,
            public=bool(options.get("public", False)) and mode == "online", status=status,
        )
        self._settle(room)
        try:
            self.store.save(room.row())
        except StorageError as exc:
            room.generation += 1  # an agent that started on the first move has nothing to play in
            raise self._unsaved(room, exc) from None
        self.rooms[room.code] = room
        for side, seat in seats.items():
            if seat.kind == "agent" and room.thinking != side:  # an agent to move warms up by moving
                self.prepare(seat.spec or seat.name, position)
        return room, token, held

    def prepare(self, spec: str, start: Position) -> None:
        """Compile ``spec``'s kernels (numba's first start; later starts load
        them from the cache) in the agent pool, off the event loop, while the
        person thinks: once per agent and kind of board in this process (the
        agent's name, not its options, and the board's size and bonus, not its
        cells: a visitor varying a seed or a cell queues no more warm-ups)."""
        if not warmup.claim(warmup.board_kind(spec, start)):
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop here (a test): nothing to hide the compile behind
            return
        self._spawn(self._warm_up(spec, start))

    async def _warm_up(self, spec: str, start: Position) -> None:
        await asyncio.get_running_loop().run_in_executor(self.executor, warmup.warm_up, spec, start)

    def _start(self, options: dict[str, Any]) -> Position:
        bonus = bool(options.get("bonus", False))
        if "width" in options or "height" in options:
            try:
                width, height = int(options["width"]), int(options["height"])
            except (KeyError, TypeError, ValueError):
                raise RoomError("bad-request", "width and height must both be integers") from None
            forbidden = options.get("forbidden")
            board = f"{width}x{height}" + (f"/X{forbidden}" if forbidden else "")
        else:
            board = options.get("board", "7x6")
        if not isinstance(board, str):
            raise RoomError("bad-request", "board must be a string: '7x6', 'random' or a position")
        try:
            return starting_position(board, bonus, self.rng)
        except ValueError as exc:
            raise RoomError("bad-board", str(exc)) from None

    def _agent_seat(self, spec: str, stored: bool = False) -> Seat:
        """An agent's seat, if the server's limits allow ``spec`` (a room
        ``stored`` under other limits keeps its agent, if still allowed)."""
        if spec == "human":
            raise AssertionError("not an agent")
        try:
            if stored and parse_spec(spec)[0] in self.limits.allowed:
                agent = make_agent(spec)
            else:
                agent = self.limits.make(spec)
        except LimitError as exc:
            raise RoomError("over-limit" if exc.limit != "agent" else "bad-agent", exc.message) from None
        except ValueError as exc:
            raise RoomError("bad-agent", str(exc)) from None
        if agent.is_human:
            raise RoomError("bad-agent", f"{spec!r} is not a computer player")
        return Seat("agent", spec, spec=spec, agent=agent)

    def get(self, code: str) -> Room | None:
        """The live room of ``code``, loaded from the store if needed."""
        room = self.rooms.get(code)
        if room is not None:
            return room
        if not isinstance(code, str) or len(code) > 64:
            return None
        row = self.store.load(code)
        if row is None:
            return None
        try:
            room = self._from_row(row)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:  # RoomError is a ValueError
            detail = exc.message if isinstance(exc, RoomError) else f"{type(exc).__name__}: {exc}"
            raise StorageError(f"{self.store.path}: the stored room {code!r} cannot be loaded ({detail})") from None
        self.rooms[code] = room
        self._settle(room)  # an agent to move (the server stopped while it thought) starts again
        self._schedule_expiry(room)
        return room

    def _from_row(self, row: GameRow) -> Room:
        """The live room of a stored row (a ValueError, KeyError or
        TypeError if the row is damaged)."""
        seats = {}
        for side, stored in row.seats.items():
            if stored["kind"] == "agent":
                seat = self._agent_seat(stored["spec"], stored=True)
            else:
                seat = Seat("human", stored["name"], token_hash=stored["token_hash"])
                if row.mode == "online" and row.status in OPEN and seat.taken:
                    # nobody is connected to a room just loaded: absent since
                    # they left, or since now (the server stopped under them)
                    seat.absent_since = stored.get("absent_since") or time.time()
            seats[side] = seat
        if set(seats) != set(SIDES):
            raise ValueError(f"the seats are {sorted(seats)}, not A and B")
        return Room(
            row.code, row.mode, Position.parse(row.position), row.start_ply, seats, row.public,
            row.status, row.result, row.reason, row.created, row.finished,
        )

    def resume(self) -> int:
        """Load every online room left open in the store (a restart), so
        that each ends on time even if nobody comes back; how many.  A
        stored room that cannot be loaded is logged and left on disk."""
        try:
            rows = self.store.open_rooms("online")
        except StorageError as exc:  # a damaged row among them: each loads (or fails) when it is opened
            log.warning("the open rooms were not resumed: %s", exc)
            return 0
        for row in rows:
            try:
                self.get(row.code)
            except StorageError as exc:
                log.warning("not resumed: %s", exc)
        return len(rows)

    def join(
        self, room: Room, name: str | None, request_id: str | None = None, client: str = ""
    ) -> tuple[str, list[str]]:
        """Take the free seat of an online room: the token and the seat.

        With a ``request_id`` (chosen by the client), the same request again
        from the same ``client`` -- its answer was lost -- gets the same token
        and seat, as long as that token still holds it (while the room is in
        memory: not across a restart)."""
        key = (client, request_id) if request_id else None
        if key is not None and key in room.joins:
            token, held = room.joins[key]
            if room.seats_of(token) == set(held):
                return token, list(held)
        if room.mode != "online":
            raise RoomError("not-allowed", "only online rooms have a seat to take")
        if room.status == "over":
            raise RoomError("game-over", "this game is over (its players left): open the link to see it")
        free = [side for side, seat in room.seats.items() if not seat.taken]
        if not free:
            raise RoomError("room-full", "both seats are taken; open the link to watch")
        side = free[0]
        token = new_token()
        shown = check_name(name, f"Player {side}")
        with self._change(room):
            room.seats[side].token_hash = token_hash(token)
            room.seats[side].name = shown
            room.status = "playing"
            now = time.time()
            for seat in room.seats.values():  # an absent host's countdown starts with the game
                if seat.absent_since is not None:
                    seat.absent_since = now
            self.store.save(room.row())
        self._schedule_expiry(room)
        self._spawn(self.broadcast(room))
        if key is not None:
            room.joins[key] = (token, [side])
        return token, [side]

    # -- connections ---------------------------------------------------------------

    async def attach(self, code: str, conn: Connection) -> Room | None:
        """The live room of ``code`` with ``conn`` registered as a spectator
        (None if there is no such room).  Registering under the room's lock
        keeps a room that just emptied from being dropped under us."""
        while True:
            room = self.get(code)
            if room is None:
                return None
            async with room.lock:
                if self.rooms.get(code) is room:
                    room.connections.setdefault(conn, set())
                    return room

    async def connect(self, room: Room, conn: Connection, token: str | None) -> set[str]:
        """Register ``conn`` for the seats of ``token`` (none: a spectator)."""
        async with room.lock:
            seats = room.seats_of(token)
            if token and not seats:
                raise RoomError("bad-token", "this token holds no seat of this room; you are watching")
            old = room.connections.get(conn, set())
            for side in old - seats:
                self._leave_seat(room, side)
            came_back = False
            for side in seats - old:
                seat = room.seats[side]
                seat.connections += 1
                came_back = came_back or seat.absent_since is not None
                seat.absent_since = None
            room.connections[conn] = seats
            if seats != old:
                self._schedule_expiry(room)
            if came_back and room.mode == "online" and room.status in OPEN:
                self._save_presence(room)  # a restart must not count them absent since before
        await self.broadcast(room)
        return seats

    async def disconnect(self, room: Room, conn: Connection) -> None:
        async with room.lock:
            seats = room.connections.pop(conn, set())
            for side in seats:
                self._leave_seat(room, side)
            if not room.connections and room.thinking is None and room.forfeit_task is None:
                # Nobody is here and nothing is pending: the row on disk is
                # the room; ``get`` loads it again when someone comes back.
                self.rooms.pop(room.code, None)
        if seats or room.connections:  # a player left, or a spectator: the others see the count
            await self.broadcast(room)

    def _leave_seat(self, room: Room, side: str) -> None:
        seat = room.seats[side]
        seat.connections = max(0, seat.connections - 1)
        if seat.connections == 0:
            seat.absent_since = time.time()
            if room.mode == "online" and room.status in OPEN:
                self._save_presence(room)
                self._schedule_expiry(room)

    # -- absent players: forfeits and abandoned rooms ----------------------------------

    def _absent(self, room: Room) -> list[tuple[float, str]]:
        """The absent players of a room, (since when, side), first to leave first."""
        return sorted(
            (seat.absent_since, side) for side, seat in room.seats.items()
            if seat.kind == "human" and seat.taken and seat.connections == 0 and seat.absent_since is not None
        )

    def _schedule_expiry(self, room: Room) -> None:
        """(Re)start the room's countdown: an online room being played, or
        waiting for its guest, wakes when the first absent player's
        ``forfeit_after`` seconds run out (no absent player: no countdown)."""
        if room.forfeit_task is not None:
            room.forfeit_task.cancel()
            room.forfeit_task = None
        absent = self._absent(room)
        if room.mode != "online" or room.status not in OPEN or not absent:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop here: the room is scheduled when it is next loaded or left
            return
        room.forfeit_task = self._spawn(self._expire_at(room, absent[0][0] + self.forfeit_after))

    async def _expire_at(self, room: Room, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time()))
        async with room.lock:
            room.forfeit_task = None
            ended = self._expire(room)
            if ended:
                self._save_presence(room)  # kept in memory if not on disk: a restart ends it again
                if not room.connections and room.thinking is None:
                    self.rooms.pop(room.code, None)  # over: the row on disk is the room
            else:
                self._schedule_expiry(room)
        if ended:
            await self.broadcast(room)

    def _expire(self, room: Room) -> bool:
        """End the room if an absent player's time has run out (True if so).

        A room waiting for its guest whose host has left ends *abandoned*.
        In a game, the player whose countdown ran out first loses by
        forfeit -- unless both have left and no move was played in the
        room, or both left at the same moment (a server restart), which
        ends it abandoned (no result)."""
        if room.mode != "online" or room.status not in OPEN:
            return False
        absent = self._absent(room)
        now = time.time()
        if not absent or absent[0][0] + self.forfeit_after > now + 0.01:
            return False
        if room.status == "waiting":
            self._finish(room, None, "abandoned")
            return True
        humans = [seat for seat in room.seats.values() if seat.kind == "human" and seat.taken]
        everyone_left = len(absent) == len(humans)
        unplayed = room.position.ply == room.start_ply
        tied = len(absent) > 1 and absent[1][0] == absent[0][0]
        if everyone_left and (unplayed or tied):
            self._finish(room, None, "abandoned")
        else:
            self._finish(room, _other(absent[0][1]), "forfeit")
        return True

    async def send_state(self, room: Room, conn: Connection) -> None:
        """The room's state to one connection."""
        await conn.send_text(state_message(to_json(room.state(self.forfeit_after)), room.connections.get(conn, set())))

    async def broadcast(self, room: Room, extra: dict[str, Any] | None = None) -> None:
        """Send the room's state (or ``extra``) to every connection.  The
        room is written as JSON once, not once per connection (each gets
        its own ``you``)."""
        room.touched = time.time()
        text = to_json(extra) if extra is not None else None
        room_json = to_json(room.state(self.forfeit_after)) if extra is None else ""
        for conn, seats in list(room.connections.items()):
            try:
                await conn.send_text(text if text is not None else state_message(room_json, seats))
            except Exception as exc:  # noqa: BLE001  (a dead socket: its handler cleans up)
                log.debug("room %s: a send failed: %s", room.code, exc)

    # -- moves -------------------------------------------------------------------------

    async def handle(self, room: Room, conn: Connection, message: dict[str, Any]) -> None:
        """One parsed client message (``hello`` is handled by ``connect``)."""
        kind = message["type"]
        seats = room.connections.get(conn, set())
        if kind == "move":
            await self._move(room, seats, message["move"])
        elif kind == "undo":
            await self._undo(room, seats)
        elif kind == "hint":
            await self._hint(room, conn, seats)
        elif kind == "review":
            await conn.send_json({"type": "review", **await self.review(room)})
        elif kind == "resign":
            await self._resign(room, seats)
        elif kind == "ping":
            await conn.send_json({"type": "pong"})

    async def _move(self, room: Room, seats: set[str], token: str) -> None:
        async with room.lock:
            self._turn_of(room, seats)
            try:
                position = room.position.play(token)
            except IllegalMoveError as exc:
                raise RoomError("illegal-move", str(exc)) from None
            with self._change(room):
                room.position = position
                room.evaluation = None
                self._settle(room)
                self.store.save(room.row())
        await self.broadcast(room)

    def _turn_of(self, room: Room, seats: set[str]) -> str:
        """The side to move, if ``seats`` may move it; else the reason."""
        if room.status == "over":
            raise RoomError("game-over", f"the game is over ({_outcome(room)})")
        if room.status == "waiting":
            raise RoomError("not-your-turn", "the other seat is still free: waiting for a second player")
        if not seats:
            raise RoomError("not-your-seat", "you hold no seat of this room (you are watching)")
        side = room.position.to_move
        assert side is not None
        if side not in seats:
            raise RoomError("not-your-turn", f"it is {side}'s turn")
        if room.seats[side].kind != "human":
            raise RoomError("not-your-seat", f"{side} is played by the computer")
        return side

    def _settle(self, room: Room) -> None:
        """After a change: the end of the game, or the next agent's move."""
        room.generation += 1
        room.preparing = None  # said by the move that waits (``_while_preparing``)
        if room.position.is_over and room.status != "over":
            result = room.position.result
            self._finish(room, result, "full" if result == "draw" else "four")
        if room.status == "playing":
            side = room.position.to_move
            if side is not None and room.seats[side].kind == "agent":
                room.thinking = side
                self._spawn(self._agent_move(room, side, room.generation))
                return
        room.thinking = None

    def _finish(self, room: Room, result: str | None, reason: str) -> None:
        room.status = "over"
        room.result = result
        room.reason = reason
        room.finished = time.time()
        room.thinking = None
        if room.forfeit_task is not None:
            room.forfeit_task.cancel()
            room.forfeit_task = None

    async def _agent_move(self, room: Room, side: str, generation: int) -> None:
        await self.broadcast(room, {"type": "thinking", "seat": side})
        agent = room.seats[side].agent
        assert agent is not None
        position = room.position
        loop = asyncio.get_running_loop()
        async with room.work:  # one thread a room at most
            thought = loop.run_in_executor(self.executor, agent.analyse, position, None)
            move, analysis = await self._while_preparing(room, generation, thought)
        async with room.lock:
            if room.generation != generation or room.status != "playing":
                return  # undone, resigned or forfeited meanwhile
            failed: dict[str, Any] | None = None
            try:
                with self._change(room, resettle=False):
                    room.position = position.play(move)
                    if analysis.value is not None:
                        room.evaluation = (2 * analysis.value - 1) * (1 if side == "A" else -1)
                    self._settle(room)
                    self.store.save(room.row())
            except RoomError as exc:  # not saved: the room is as it was; the agent tries again later
                room.thinking = None
                self._spawn(self._retry_agent(room, room.generation))
                failed = {"type": "error", "code": exc.code, "message": exc.message}
        if failed is not None:
            await self.broadcast(room, failed)
        await self.broadcast(room)

    async def _while_preparing(self, room: Room, generation: int, thought: asyncio.Future[Any]) -> Any:
        """The agent's answer.  Meanwhile, from a compile of numba's seen
        on (the first start after an install), the room's ``preparing`` says
        how long the move has waited, sent to everyone every second."""
        started = time.monotonic()
        compiles = warmup.COMPILING.started
        wait = PREPARING_FIRST
        try:
            while True:
                done, _ = await asyncio.wait({thought}, timeout=wait)
                if done:
                    return thought.result()
                wait = PREPARING_EVERY
                if room.generation != generation:
                    continue  # undone meanwhile: this move will not be played
                if room.preparing is None and not (
                    warmup.COMPILING.active or warmup.COMPILING.started != compiles
                ):
                    continue
                room.preparing = warmup.waited(started)
                await self.broadcast(room)
        finally:
            if room.generation == generation:
                room.preparing = None

    async def _retry_agent(self, room: Room, generation: int) -> None:
        """An agent whose move could not be saved thinks again after
        ``STORAGE_RETRY`` seconds, unless the room changed meanwhile."""
        await asyncio.sleep(STORAGE_RETRY)
        async with room.lock:
            if room.generation != generation or room.status != "playing" or room.thinking is not None:
                return
            self._settle(room)
        await self.broadcast(room)

    async def _undo(self, room: Room, seats: set[str]) -> None:
        async with room.lock:
            if room.mode != "local":
                raise RoomError("not-allowed", "undo is for local games only")
            if not seats:
                raise RoomError("not-your-seat", "you hold no seat of this room")
            if room.status == "over" and room.reason in ("resign", "forfeit"):
                # A game someone gave up stays over: only a move on the board can be taken back.
                raise RoomError("game-over", f"the game is over ({room.reason}): start a new one")
            moves = room.position.moves
            keep = len(moves)
            # Take back moves until a person is to move again, at least one
            # of theirs, never into the starting position.
            while keep > room.start_ply:
                keep -= 1
                side = "A" if keep % 2 == 0 else "B"
                if room.seats[side].kind == "human":
                    break
            else:
                raise RoomError("not-allowed", "there is no move of yours to take back")
            with self._change(room):
                room.position = Position(room.position.variant).play(*moves[:keep])
                room.status, room.result, room.reason, room.finished = "playing", None, None, None
                room.evaluation = None
                self._settle(room)
                self.store.save(room.row())
        await self.broadcast(room)

    async def _hint(self, room: Room, conn: Connection, seats: set[str]) -> None:
        if room.mode != "local":
            raise RoomError("not-allowed", "hints are for local games only")
        if room.status != "playing" or room.position.is_over:
            raise RoomError("game-over", "the game is over")
        position = room.position
        loop = asyncio.get_running_loop()
        adviser = make_agent(self.hint_spec)  # within the limits: checked at start
        timeout = min(reviews.budget_for(position), self.limits.max_time)
        async with room.work:  # one thread a room at most
            move, analysis, columns = await loop.run_in_executor(self.executor, _advise, adviser, position, timeout)
        value = 0.5 if analysis.value is None else analysis.value
        exact = columns["score"]
        if exact is not None:
            # Every column is solved: the hint is a best move, the value exact.
            value = 1.0 if exact > 0 else 0.5 if exact == 0 else 0.0
            if columns["moves"].get(move.token) != exact:
                move = min(
                    (m for m in position.legal_moves() if columns["moves"].get(m.token) == exact),
                    key=lambda m: (abs(2 * m.column - (position.variant.width - 1)), m.column, m.token),
                )
        evaluation = (2 * value - 1) * (1 if position.to_move == "A" else -1)
        await conn.send_json({
            "type": "hint", "move": move.token, "value": value, "evaluation": evaluation,
            "columns": columns["columns"], "best": columns["best"],
        })

    async def review(self, room: Room) -> dict[str, Any]:
        """The review of a finished game (``docs/protocol.md``): computed once
        in the executor, within ``reviews.REVIEW_TOTAL`` seconds, then kept."""
        if room.status != "over":
            raise RoomError("not-allowed", "the review is for finished games: this one is still going on")
        position = room.position
        key = (position.notation, 0)  # every move, those of a pasted start too
        future = self._reviews.get(key)
        if future is None or (future.done() and (future.cancelled() or future.exception() is not None)):
            future = asyncio.ensure_future(self._review_in_pool(position))
            self._reviews[key] = future
            while len(self._reviews) > 64:  # forget the oldest
                self._reviews.pop(next(iter(self._reviews)))
        try:
            return await asyncio.shield(future)
        except Exception as exc:  # noqa: BLE001  (the solver failed: say so, keep the server up)
            log.warning("room %s: the review failed: %s", room.code, exc)
            raise RoomError("review-failed", f"the review could not be computed: {exc}") from None

    async def _review_in_pool(self, position: Position) -> dict[str, Any]:
        """A review in the agent pool, each position within the think-time
        limit, never more reviews at once than half the pool."""
        each = min(reviews.budget_for(position), self.limits.max_time)
        async with self._reviewing:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                self.executor, functools.partial(reviews.review_game, position, 0, per_position=each)
            )

    async def _resign(self, room: Room, seats: set[str]) -> None:
        async with room.lock:
            if room.status == "over":
                raise RoomError("game-over", "the game is over")
            human = {s for s in seats if room.seats[s].kind == "human"}
            if not human:
                raise RoomError("not-your-seat", "you hold no seat of this room")
            # In a local game against the computer, or with both seats, the
            # side to move (or else A) is the one that resigns.
            loser = room.position.to_move if room.position.to_move in human else min(human)
            with self._change(room):
                self._finish(room, _other(loser), "resign")
                room.generation += 1
                self.store.save(room.row())
        await self.broadcast(room)

    # -- saving -----------------------------------------------------------------------------

    @contextlib.contextmanager
    def _change(self, room: Room, resettle: bool = True) -> Iterator[None]:
        """A change to ``room`` that is kept only if it is saved.

        The body changes the room in memory and ends with ``store.save``.
        If anything in it fails -- a ``StorageError`` (a full disk, a lock
        held too long) above all -- the room is put back as it was: what the
        players see is what is on disk, never half a change.  The agent move
        the change may have started is cancelled; with ``resettle`` the
        agent of the restored position (if it is to move) starts again.  A
        ``StorageError`` becomes the client's ``storage-failed`` error."""
        before = _snapshot(room)
        try:
            yield
        except BaseException as exc:
            _restore(room, before)
            room.generation += 1  # void any agent move the change started
            if resettle:
                room.thinking = None
                self._settle(room)
            self._schedule_expiry(room)  # a countdown the change stopped runs again
            if isinstance(exc, StorageError):
                raise self._unsaved(room, exc) from None
            raise

    def _unsaved(self, room: Room, exc: StorageError) -> RoomError:
        """The client's error for a change of ``room`` that could not be saved (logged, one line)."""
        log.warning("room %s: a change was not saved, the room is kept as it was: %s", room.code, exc)
        return RoomError("storage-failed", STORAGE_FAILED)

    def _save_presence(self, room: Room) -> None:
        """Write a presence stamp (who left or came back, and when, or a
        room that ended by the clock); if the write fails it is logged and
        kept in memory: the next change writes it."""
        try:
            self.store.save(room.row())
        except StorageError as exc:
            log.warning("room %s: a presence change was not saved (kept in memory): %s", room.code, exc)

    # -- open rooms and idle ones ----------------------------------------------------------

    def open_count(self) -> int:
        """The rooms open now (waiting or being played, in memory: an online
        room stays there until it ends; a local one while someone is there)."""
        return sum(1 for room in self.rooms.values() if room.status in OPEN)

    def is_open(self, code: str) -> bool:
        room = self.rooms.get(code)
        return room is not None and room.status in OPEN

    def sweep(self, now: float | None = None) -> int:
        """Rooms nobody has used for ``idle_after`` seconds -- nobody connected,
        no agent thinking, no countdown running (a player who left has one) --
        leave memory; an online one ends abandoned first (a room made, or
        joined, by a client that never connected).  How many."""
        if self.idle_after is None:
            return 0
        now = time.time() if now is None else now
        idle = [
            room for room in self.rooms.values()
            if not room.connections and room.thinking is None and room.forfeit_task is None
            and not room.lock.locked() and not room.work.locked() and now - room.touched >= self.idle_after
        ]
        for room in idle:
            if room.mode == "online" and room.status in OPEN:
                self._finish(room, None, "abandoned")
                self._save_presence(room)
            self.rooms.pop(room.code, None)
        return len(idle)

    def start_sweeping(self) -> None:
        """Sweep idle rooms now and then (from the server's start-up)."""
        if self.idle_after is not None:
            self._spawn(self._sweep_every(min(60.0, max(0.05, self.idle_after / 4))))

    async def _sweep_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                self.sweep()
            except Exception:  # the sweeper must outlive one bad room
                log.exception("sweeping idle rooms failed")

    # -- housekeeping ---------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def _advise(adviser: Agent, position: Position, timeout: float | None = None) -> tuple[Any, Any, dict[str, Any]]:
    """The hint's work, in a worker thread: the adviser's move and analysis,
    and the exact score of every column (``reviews.column_scores``, within
    ``timeout`` seconds)."""
    move, analysis = adviser.analyse(position, None)
    return move, analysis, reviews.column_scores(position, analysis, timeout, favourite=move.token)


def _snapshot(room: Room) -> dict[str, Any]:
    """What a change may alter in ``room`` (``_restore`` puts it back)."""
    return {
        "fields": (room.position, room.status, room.result, room.reason, room.finished, room.evaluation, room.thinking),
        "seats": {side: (seat.name, seat.token_hash, seat.absent_since) for side, seat in room.seats.items()},
    }


def _restore(room: Room, before: dict[str, Any]) -> None:
    (room.position, room.status, room.result, room.reason, room.finished, room.evaluation,
     room.thinking) = before["fields"]
    for side, (name, digest, absent_since) in before["seats"].items():
        seat = room.seats[side]
        seat.name, seat.token_hash, seat.absent_since = name, digest, absent_since


def _other(side: str | None) -> str:
    return "B" if side == "A" else "A"


def _outcome(room: Room) -> str:
    if room.result == "draw":
        return "a draw"
    return f"{room.result} won by {room.reason}"

