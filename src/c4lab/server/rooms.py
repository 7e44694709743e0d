"""Rooms: one game each, its seats, its connections, its agents.

Everything that changes a room happens under the room's lock, is checked by
the rules engine, is written to the store, and is then broadcast to every
connection of the room -- in that order, so that what a client is told is
always on disk.  Agents think in worker threads (the search kernels release
the GIL) and their move is applied only if the room has not changed since
they started (an undo or a resignation cancels it).

Connections are anything with ``async send_json(obj)``: the WebSocket
handler in ``app.py`` wraps Starlette's socket, tests may pass fakes.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import random
import secrets
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any, Protocol

from c4lab.agents import Agent, make_agent, parse_spec
from c4lab.rules import IllegalMoveError, Position
from c4lab.rules.setup import starting_position
from c4lab.server import review as reviews
from c4lab.server.storage import GameRow, GameStore

log = logging.getLogger(__name__)

SIDES = ("A", "B")
#: The statuses of a room still open (an online one has a countdown for absent players).
OPEN = ("waiting", "playing")
NAME_MAX = 24
HINT_SPEC = "master:time=0.5"
#: Agents that start programs (``engine``) or open files (``qlearning``'s
#: table) on this machine: never from a network request, which could run
#: anything or probe the server's files.
LOCAL_ONLY = frozenset({"engine", "qlearning"})


class RoomError(ValueError):
    """A request that cannot be done; ``code`` is the protocol's error code."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class Connection(Protocol):
    async def send_json(self, data: Any) -> None: ...


def new_code() -> str:
    """An unguessable room code: 96 random bits, 16 URL-safe characters."""
    return secrets.token_urlsafe(12)


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
    generation: int = 0
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    connections: dict[Connection, set[str]] = field(default_factory=dict)
    forfeit_task: asyncio.Task[None] | None = None

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
            evaluation=self.evaluation,
            forfeit_after=forfeit_after if self.mode == "online" else None,
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
    ) -> None:
        self.store = store
        self.executor = executor
        self.forfeit_after = forfeit_after
        self.hint_spec = hint_spec
        self.rng = rng or random.Random()
        self.rooms: dict[str, Room] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Reviews of finished games by position (and those being computed),
        #: so that asking again, or from another page, costs nothing.
        self._reviews: dict[tuple[str, int], asyncio.Future[dict[str, Any]]] = {}

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
            new_code(), mode, position, position.ply, seats,
            public=bool(options.get("public", False)) and mode == "online", status=status,
        )
        self._settle(room)
        self.store.save(room.row())
        self.rooms[room.code] = room
        return room, token, held

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

    def _agent_seat(self, spec: str) -> Seat:
        if spec == "human":
            raise AssertionError("not an agent")
        try:
            if parse_spec(spec)[0] in LOCAL_ONLY:
                raise RoomError("bad-agent", f"{spec!r} runs a program or opens a file: only the local command line may use it")
            agent = make_agent(spec)
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
        seats = {}
        for side, stored in row.seats.items():
            if stored["kind"] == "agent":
                seat = self._agent_seat(stored["spec"])
            else:
                seat = Seat("human", stored["name"], token_hash=stored["token_hash"])
                if row.mode == "online" and row.status in OPEN and seat.taken:
                    # nobody is connected to a room just loaded: absent since
                    # they left, or since now (the server stopped under them)
                    seat.absent_since = stored.get("absent_since") or time.time()
            seats[side] = seat
        room = Room(
            row.code, row.mode, Position.parse(row.position), row.start_ply, seats, row.public,
            row.status, row.result, row.reason, row.created, row.finished,
        )
        self.rooms[code] = room
        self._settle(room)  # an agent to move (the server stopped while it thought) starts again
        self._schedule_expiry(room)
        return room

    def resume(self) -> int:
        """Load every online room left open in the store (a restart), so
        that each ends on time even if nobody comes back; how many."""
        rows = self.store.open_rooms("online")
        for row in rows:
            self.get(row.code)
        return len(rows)

    def join(self, room: Room, name: str | None) -> tuple[str, list[str]]:
        """Take the free seat of an online room: the token and the seat."""
        if room.mode != "online":
            raise RoomError("not-allowed", "only online rooms have a seat to take")
        if room.status == "over":
            raise RoomError("game-over", "this game is over (its players left): open the link to see it")
        free = [side for side, seat in room.seats.items() if not seat.taken]
        if not free:
            raise RoomError("room-full", "both seats are taken; open the link to watch")
        side = free[0]
        token = new_token()
        room.seats[side].token_hash = token_hash(token)
        room.seats[side].name = check_name(name, f"Player {side}")
        room.status = "playing"
        now = time.time()
        for seat in room.seats.values():  # an absent host's countdown starts with the game
            if seat.absent_since is not None:
                seat.absent_since = now
        self.store.save(room.row())
        self._schedule_expiry(room)
        self._spawn(self.broadcast(room))
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
                self.store.save(room.row())  # a restart must not count them absent since before
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
        if seats:
            await self.broadcast(room)

    def _leave_seat(self, room: Room, side: str) -> None:
        seat = room.seats[side]
        seat.connections = max(0, seat.connections - 1)
        if seat.connections == 0:
            seat.absent_since = time.time()
            if room.mode == "online" and room.status in OPEN:
                self.store.save(room.row())
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
                self.store.save(room.row())
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
        seats = sorted(room.connections.get(conn, set()))
        await conn.send_json({"type": "state", "room": room.state(self.forfeit_after), "you": seats})

    async def broadcast(self, room: Room, extra: dict[str, Any] | None = None) -> None:
        """Send the room's state (or ``extra``) to every connection."""
        state = room.state(self.forfeit_after)
        for conn, seats in list(room.connections.items()):
            message = extra if extra is not None else {"type": "state", "room": state, "you": sorted(seats)}
            try:
                await conn.send_json(message)
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
                room.position = room.position.play(token)
            except IllegalMoveError as exc:
                raise RoomError("illegal-move", str(exc)) from None
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
        move, analysis = await loop.run_in_executor(self.executor, agent.analyse, position, None)
        async with room.lock:
            if room.generation != generation or room.status != "playing":
                return  # undone, resigned or forfeited meanwhile
            room.position = position.play(move)
            if analysis.value is not None:
                room.evaluation = (2 * analysis.value - 1) * (1 if side == "A" else -1)
            self._settle(room)
            self.store.save(room.row())
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
        adviser = make_agent(self.hint_spec)
        move, analysis, columns = await loop.run_in_executor(self.executor, _advise, adviser, position)
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
            loop = asyncio.get_running_loop()
            future = asyncio.ensure_future(
                loop.run_in_executor(self.executor, reviews.review_game, position, 0)
            )
            self._reviews[key] = future
            while len(self._reviews) > 64:  # forget the oldest
                self._reviews.pop(next(iter(self._reviews)))
        try:
            return await asyncio.shield(future)
        except Exception as exc:  # noqa: BLE001  (the solver failed: say so, keep the server up)
            log.warning("room %s: the review failed: %s", room.code, exc)
            raise RoomError("review-failed", f"the review could not be computed: {exc}") from None

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
            self._finish(room, _other(loser), "resign")
            room.generation += 1
            self.store.save(room.row())
        await self.broadcast(room)

    # -- housekeeping ---------------------------------------------------------------------

    def _spawn(self, coroutine: Any) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self) -> None:
        for task in list(self._tasks):
            task.cancel()


def _advise(adviser: Agent, position: Position) -> tuple[Any, Any, dict[str, Any]]:
    """The hint's work, in a worker thread: the adviser's move and analysis,
    and the exact score of every column (``reviews.column_scores``)."""
    move, analysis = adviser.analyse(position, None)
    return move, analysis, reviews.column_scores(position, analysis, favourite=move.token)


def _other(side: str | None) -> str:
    return "B" if side == "A" else "A"


def _outcome(room: Room) -> str:
    if room.result == "draw":
        return "a draw"
    return f"{room.result} won by {room.reason}"

