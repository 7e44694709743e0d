"""The room manager: every live room of a server, and every change to one.

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

The manager's parts live beside it: the room and its views in ``room.py``,
presence, forfeits and expiry in ``presence.py``, when each connection's
hints are worked out and stopped in ``hints.py``, the scores of hints and
reviews in ``review.py``, sending to connections in ``telling.py``, the
error codes in ``errors.py``.  A finished game is shown
and reviewed from its stored row (``view``, ``review``): no live room, no
agent.  ``tests/server/test_rooms.py`` drives a manager with fake connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import Executor
from typing import Any

from c4lab.agents import parse_spec
from c4lab.agents.base import checked_answer
from c4lab.agents.catalogue import DEFAULT_LEVEL
from c4lab.game import answer_move, failure_words
from c4lab.rules import IllegalMoveError, Position, Variant
from c4lab.rules.position import load_kernels
from c4lab.rules.setup import check_start
from c4lab.rules.sides import other
from c4lab.server import warmup
from c4lab.server.errors import (
    AGENT_FAILED,
    BAD_AGENT,
    BAD_BOARD,
    BAD_REQUEST,
    BAD_TOKEN,
    GAME_OVER,
    ILLEGAL_MOVE,
    NOT_ALLOWED,
    NOT_YOUR_SEAT,
    NOT_YOUR_TURN,
    OVER_LIMIT,
    ROOM_FULL,
    STORAGE_FAILED,
    RoomError,
)
from c4lab.server.hints import HintDesk
from c4lab.server.limits import AgentLimits, LimitError
from c4lab.server.names import DEFAULT_NAME, check_name
from c4lab.server.presence import FORFEIT_AFTER, IDLE_AFTER, Presence
from c4lab.server.review import HINT_SPEC, Reviewer
from c4lab.server.room import (
    OPEN,
    SIDES,
    Connection,
    Room,
    Seat,
    check_prefix,
    kept_row,
    new_code,
    new_token,
    plays_instead,
    state_message,
    to_json,
    token_hash,
)
from c4lab.server.storage import DamagedRow, GameStore, StorageError
from c4lab.server.telling import tell, tell_all, while_compiling

log = logging.getLogger(__name__)


#: Seconds within which a spectator's coming or going is told to the
#: others: one state for every spectator who came or went meanwhile.  Told
#: one by one, a crowd of n arriving would send n states to each of up to n
#: sockets (n² in all: 300 watchers, 45,000 messages); the newcomer gets
#: its own state at once.
CROWD_EVERY = 0.5
#: Seconds a new connection that has not said ``hello`` is left out of the
#: count of watchers: a player's socket holds no seat until its hello is
#: answered, and counted meanwhile (a broadcast in between: the other
#: player's hello after a server restart) the others were told "1 person
#: is watching", then "Nobody is watching now".  A client that never says
#: hello is counted after it, as a spectator.
HELLO_GRACE = 2.0
#: Seconds a rematch offer stands after its player's last connection
#: closed: a page reloaded (or a terminal client's connection made again)
#: finds its offer still there; a player gone for longer takes it with them.
REMATCH_GRACE = 5.0


#: Seconds before an agent whose move could not be saved tries again.
STORAGE_RETRY = 5.0
#: Seconds a closing manager waits for the background warm-up under way
#: (one agent's compile on one kind of board: a few seconds on a fresh cache).
WARM_UP_WAIT = 10.0
#: What a client is told when a change could not be saved (the log has the details).
STORAGE_FAILED_MESSAGE = (
    "the server could not save this change (its disk may be full): nothing changed, try again later"
)
#: Why an online room waiting for its guest refuses a move, a resignation, a rematch or a review.
WAITING_FOR_GUEST = "the other seat is still free: waiting for a second player"


class RoomManager:
    """Every live room of a server, loaded from the store on first use."""

    def __init__(
        self,
        store: GameStore,
        executor: Executor,
        forfeit_after: float = FORFEIT_AFTER,
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
        self.rng = rng or random.Random()
        self.rooms: dict[str, Room] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        #: Set when the manager closes: the background warm-ups stop after the one under way.
        self._closing = threading.Event()
        self._warming: threading.Thread | None = None  # ``prepare_in_background``'s thread
        self.limits = limits or AgentLimits()
        self.reviewer = Reviewer(executor, self.limits, hint_spec)
        self.hints = HintDesk(self.rooms, self.reviewer, self.spawn)
        self.presence = Presence(self, forfeit_after, idle_after)
        warmup.COMPILING.install()  # a move that waits for numba's compiler says so (``preparing``)

    @property
    def forfeit_after(self) -> float:
        return self.presence.forfeit_after

    @property
    def idle_after(self) -> float | None:
        return self.presence.idle_after

    # -- creating and finding rooms -------------------------------------------------

    def create(self, options: dict[str, Any]) -> tuple[Room, str, list[str]]:
        """A new room from the creation body of the protocol; the room, the
        creator's token and the seats it holds."""
        mode = options.get("mode", "local")
        if mode not in ("local", "online"):
            raise RoomError(BAD_REQUEST, f"mode must be 'local' or 'online', not {mode!r}")
        # an analysis board: every move can be taken back, those of the position it starts from too
        analysis = options.get("analysis", False) is True
        if analysis and mode != "local":
            raise RoomError(BAD_REQUEST, "an analysis board is a local room")
        if mode == "online" and options.get("players") is not None:
            raise RoomError(BAD_REQUEST, "players are for local rooms: an online room's two seats are people, "
                                         "its creator's and a guest's (seat chooses the creator's)")
        if mode == "online" and "first" in options:  # it was ignored: the creator's seat was 'seat's
            raise RoomError(BAD_REQUEST, "first is for local rooms (which of its players moves first): in an online "
                                         "room A moves first, and seat chooses the creator's side")
        position = self._start(options, analysis)
        token = new_token()
        digest = token_hash(token)
        name = check_name(options.get("name"), DEFAULT_NAME)
        seats: dict[str, Seat] = {}
        if mode == "local":
            players = options.get("players") or {"A": "human", "B": "human" if analysis else DEFAULT_LEVEL}
            if not isinstance(players, dict) or set(players) != set(SIDES):
                raise RoomError(BAD_REQUEST, "players must give 'A' and 'B': 'human' or an agent spec")
            entries = [players["A"], players["B"]]
            first = options.get("first", "A")
            if first not in ("A", "B", "random"):
                raise RoomError(BAD_REQUEST, f"first must be 'A', 'B' or 'random', not {first!r}")
            if first == "B" or (first == "random" and self.rng.random() < 0.5):
                entries.reverse()
            try:
                for side, who in zip(SIDES, entries):
                    if not isinstance(who, str):
                        raise RoomError(BAD_REQUEST, f"player {side} must be 'human' or an agent spec")
                    if who == "human":
                        seats[side] = Seat("human", name, token_hash=digest)
                    else:
                        seats[side] = self._agent_seat(who, variant=position.variant)
            except RoomError:  # the other seat refused: the agent made for this one goes too
                for seat in seats.values():
                    if seat.agent is not None:
                        seat.agent.close()
                raise
            held = [side for side in SIDES if seats[side].kind == "human"]
            status = "playing"
        else:
            choice = options.get("seat", "random")
            if choice not in ("A", "B", "random"):
                raise RoomError(BAD_REQUEST, f"seat must be 'A', 'B' or 'random', not {choice!r}")
            mine = self.rng.choice(SIDES) if choice == "random" else choice
            for side in SIDES:
                seats[side] = Seat("human", name if side == mine else "", token_hash=digest if side == mine else None)
            held = [mine]
            status = "waiting"
        room = Room(
            new_code(self.room_prefix), mode, position, 0 if analysis else position.ply, seats,
            public=bool(options.get("public", False)) and mode == "online", status=status, analysis=analysis,
        )
        self._settle(room)
        try:
            self.store.save(room.row())
        except StorageError as exc:
            room.generation += 1  # an agent that started on the first move has nothing to play in
            raise self._unsaved(room, exc) from None
        self.rooms[room.code] = room
        kind = "analysis board" if analysis else mode
        who = ", ".join(f"{side}: {seat.spec or seat.name}" for side, seat in seats.items() if seat.kind == "agent")
        log.info("room %s: created (%s, %s%s)", room.code, kind, position.notation, f"; {who}" if who else "")
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
        self.spawn(self._warm_up(spec, start))

    def prepare_in_background(
        self, wanted: tuple[tuple[str, str], ...], then: Callable[[], None] | None = None
    ) -> threading.Thread | None:
        """Compile the kernels of each ``(spec, board)`` of ``wanted`` that
        this server offers, one after the other, in a thread of their own
        (not the agent pool, whose threads stay free for moves), while the
        new-game form is open: what a person may pick next (another level,
        another kind of board, ``master``, the hint, the exact solver) is
        then loaded from the cache rather than compiled.  Each one is
        claimed like :meth:`prepare`'s; each starts only while the agent pool
        is idle (when it is a ``warmup.AgentPool``: a person's move, hint or
        review goes first); they stop, after the one under way, when the
        manager closes.  ``then`` runs in the same thread after the last
        one, unless the manager closed meanwhile (``c4lab play``'s and
        ``serve``'s prepare in the background, ``warmup.PrepareAhead``).
        Returns the thread (``None`` when there is nothing to do)."""
        todo = [
            (spec, Position.parse(board)) for spec, board in wanted
            if spec in self.limits.agents and warmup.claim(warmup.board_kind(spec, Position.parse(board)))
        ]
        if not todo and then is None:
            return None

        pool = self.executor if isinstance(self.executor, warmup.AgentPool) else None

        def run() -> None:
            load_kernels()  # the rules' first, as the pool's threads do (the app's executor)
            for spec, start in todo:
                # Each one waits until a person's move, hint or review is done: numba compiles one function
                # at a time in a process, and theirs would wait behind this speculative one.
                if self._closing.is_set() or (pool is not None and not pool.wait_idle(self._closing)):
                    return
                warmup.warm_up(spec, start)
            if then is not None and not self._closing.is_set():
                then()

        thread = threading.Thread(target=run, name="c4lab-warm-up", daemon=True)
        thread.start()
        self._warming = thread
        return thread

    async def _warm_up(self, spec: str, start: Position) -> None:
        await asyncio.get_running_loop().run_in_executor(self.executor, warmup.warm_up, spec, start)

    def _start(self, options: dict[str, Any], analysis: bool) -> Position:
        """The position a new room starts from, as the creation body asks;
        a game (not an ``analysis`` board, which steps back through one)
        never starts where it is already over."""
        bonus = bool(options.get("bonus", False))
        if "width" in options or "height" in options:
            width, height = options.get("width"), options.get("height")
            if "board" in options:  # one of them would be dropped without a word
                raise RoomError(BAD_REQUEST, "give either board or width and height, not both (board "
                                             f"{str(options['board'])[:40]!r}, width {width!r}, height {height!r})")
            if width is None or height is None:
                missing = "height" if height is None else "width"
                raise RoomError(BAD_REQUEST, f"width and height go together: {missing} is missing")
            # whole numbers, not their text (' 7', '1_2'), a fraction or a bool, which int() would take
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in (width, height)):
                raise RoomError(BAD_REQUEST, "width and height must both be integers")
            forbidden = options.get("forbidden")
            if forbidden is not None:  # a cell name, not more of a position string ('d3/Bb1:dd')
                if not isinstance(forbidden, str):
                    raise RoomError(BAD_REQUEST, "forbidden must be a cell name (like 'd3')")
                try:  # the size first: its cell is off a board that cannot be
                    shape = Variant(width, height)
                except ValueError as exc:
                    raise RoomError(BAD_BOARD, str(exc)) from None
                try:  # off this board, said with its own columns and rows (not the notation's a to l)
                    shape.cell(forbidden)
                except ValueError as exc:
                    raise RoomError(BAD_BOARD, f"forbidden: {exc}") from None
            board = f"{width}x{height}" + (f"/X{forbidden}" if forbidden else "")
        else:
            if options.get("forbidden") is not None:
                raise RoomError(BAD_REQUEST, "forbidden goes with width and height (or in the board's "
                                             "position string, e.g. '7x6/Xd3')")
            board = options.get("board", "7x6")
        if not isinstance(board, str):
            raise RoomError(BAD_REQUEST, "board must be a string: '7x6', 'random' or a position")
        try:
            return check_start(board, bonus, finished=analysis, rng=self.rng)
        except ValueError as exc:
            raise RoomError(BAD_BOARD, str(exc)) from None

    def _agent_seat(self, spec: str, stored: bool = False, variant: Variant | None = None) -> Seat:
        """An agent's seat, if the server's limits allow ``spec`` (a room
        ``stored`` under other limits keeps its agent, if still allowed) and,
        given the room's ``variant``, the agent can play there."""
        if spec == "human":
            raise AssertionError("not an agent")
        try:
            if stored and parse_spec(spec)[0] in self.limits.agents:
                agent = self.limits.make_stored(spec)  # an offered file's name read as its path
            else:
                agent = self.limits.make(spec)
        except LimitError as exc:
            raise RoomError(OVER_LIMIT if exc.limit != "agent" else BAD_AGENT, exc.message) from None
        except ValueError as exc:
            raise RoomError(BAD_AGENT, str(exc)) from None
        if agent.is_human:
            raise RoomError(BAD_AGENT, f"{spec!r} is not a computer player")
        if variant is not None:
            try:
                agent.check_board(variant)
            except ValueError as exc:
                agent.close()
                raise RoomError(BAD_AGENT, f"{spec!r} cannot play on {variant}: {exc}") from None
        return Seat("agent", spec, spec=spec, agent=agent)

    def get(self, code: str) -> Room | None:
        """The live room of ``code``, loaded from the store if needed."""
        room = self.rooms.get(code)
        if room is not None:
            return room
        room = self._row(code)
        if room is None:
            return None
        if room.status in OPEN:
            try:
                self._arm(room)
            except RoomError as exc:  # its agent is no longer allowed here
                raise StorageError(
                    f"{self.store.path}: the stored room {code!r} cannot be loaded ({exc.message})"
                ) from None
        self._find_earlier(room)
        self.rooms[code] = room
        self._settle(room)  # an agent to move (the server stopped while it thought) starts again
        self.presence.schedule(room)
        return room

    def _arm(self, room: Room) -> None:
        """Give the agent seats of a room read from the store their agents
        (a room stored under other limits keeps its agent, if still
        allowed): needed only to play on, never to show or review it."""
        for seat in room.seats.values():
            if seat.kind == "agent" and seat.agent is None:
                seat.agent = self._agent_seat(seat.spec or seat.name, stored=True).agent

    def _row(self, code: str) -> Room | None:
        """The room of ``code``'s stored row, without agents, not kept in memory."""
        if not isinstance(code, str) or len(code) > 64:
            return None
        row = self.store.load(code)
        if row is None:
            return None
        try:
            return Room.from_row(row)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            detail = f"{type(exc).__name__}: {exc}"
            raise DamagedRow(f"{self.store.path}: the stored room {code!r} cannot be loaded ({detail})") from None

    def view(self, code: str) -> dict[str, Any] | None:
        """The public state of the room ``code`` (None if there is none).  A
        finished game is read from the store: no live room, no agent."""
        room = self.rooms.get(code)
        if room is None:
            stored = self._row(code)
            if stored is None:
                return None
            room = stored if stored.status == "over" else self.get(code)
            if room is None:
                return None
            if room is stored:
                self._find_earlier(room)
        return room.state(self.forfeit_after)

    def _find_earlier(self, room: Room) -> None:
        """The codes of an online room's earlier games (kept by rematches,
        ``<code>-1``, ``<code>-2``...), read from the store."""
        if room.mode != "online":
            return
        number = len(room.earlier) + 1
        while self.store.load(f"{room.code}-{number}") is not None:
            room.earlier.append(f"{room.code}-{number}")
            number += 1

    def resume(self) -> int:
        """Load every online room left open in the store (a restart), so
        that each ends on time even if nobody comes back; how many.  A
        stored room that cannot be loaded is logged and left on disk."""
        damaged: list[str] = []
        try:
            rows = self.store.open_rooms("online", damaged)
        except StorageError as exc:  # the database cannot be read now: each room loads when it is opened
            log.warning("the open rooms were not resumed: %s", exc)
            return 0
        for problem in damaged:  # the others are resumed
            log.warning("not resumed: %s", problem)
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
            raise RoomError(NOT_ALLOWED, "only online rooms have a seat to take")
        if room.status == "over":
            raise RoomError(GAME_OVER, f"this game is over ({room.outcome()}): open the link to see it")
        free = [side for side, seat in room.seats.items() if not seat.taken]
        if not free:
            raise RoomError(ROOM_FULL, "both seats are taken; open the link to watch")
        side = free[0]
        token = new_token()
        shown = check_name(name, DEFAULT_NAME)
        if shown == DEFAULT_NAME and any(seat.taken and seat.name == DEFAULT_NAME for seat in room.seats.values()):
            shown = f"{DEFAULT_NAME} 2"  # two who gave no name: "Player / Player" told neither who was who
        with self._change(room):
            room.seats[side].token_hash = token_hash(token)
            room.seats[side].name = shown
            room.status = "playing"
            now = time.time()
            for seat in room.seats.values():  # an absent host's countdown starts with the game
                if seat.absent_since is not None:
                    seat.absent_since = now
            self.store.save(room.row())
        self.presence.schedule(room)
        self.spawn(self.broadcast(room))
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
                    if conn not in room.connections:
                        room.connections[conn] = set()
                        room.unheard.add(conn)
                        self.spawn(self._heard_or_counted(room, conn))
                    return room

    async def _heard_or_counted(self, room: Room, conn: Connection) -> None:
        """A connection still silent ``HELLO_GRACE`` seconds after it came
        is counted as a watcher from then on, and the others told."""
        await asyncio.sleep(HELLO_GRACE)
        if conn in room.unheard:
            room.unheard.discard(conn)
            if conn in room.connections:
                self._tell_crowd(room)

    async def connect(self, room: Room, conn: Connection, token: str | None) -> set[str]:
        """Register ``conn`` for the seats of ``token`` (none: a spectator)."""
        async with room.lock:
            was_unheard = conn in room.unheard
            room.unheard.discard(conn)  # counted from now on (a spectator's), or a player
            seats = room.seats_of(token)
            old = room.connections.get(conn, set())
            if token and not seats:  # the connection keeps what it had
                if was_unheard and not old:  # a spectator now: the others see the count
                    self._tell_crowd(room)
                kept = f"this connection keeps seat {' and '.join(sorted(old))}" if old else "you are watching"
                raise RoomError(BAD_TOKEN, f"this token holds no seat of this room; {kept}")
            for side in old - seats:
                self.presence.leave(room, side)
            came_back = False
            for side in seats - old:
                came_back = self.presence.arrive(room, side) or came_back
            room.connections[conn] = seats
            withdrawn = self._withdraw_if_gone(room, old - seats)
            if seats != old:
                self.presence.schedule(room)
            if came_back and room.mode == "online" and room.status in OPEN:
                self.save_presence(room)  # a restart must not count them absent since before
        if withdrawn:
            await self.broadcast(room, {"type": "rematch", "event": "withdrawn", "seat": withdrawn, "left": True})
        if seats == old:  # a spectator's hello: only the count of watchers changed for the others
            await self.send_state(room, conn)
            self._tell_crowd(room)
        else:
            await self.broadcast(room)
        return seats

    async def disconnect(self, room: Room, conn: Connection) -> None:
        async with room.lock:
            seats = room.connections.pop(conn, set())
            room.unheard.discard(conn)
            for side in seats:
                self.presence.leave(room, side)
            if room.rematch in seats and room.seats[room.rematch].connections == 0:
                self.spawn(self._withdraw_later(room, room.rematch))
            self._forget_if_unused(room)
        if seats:  # a player left: at once
            await self.broadcast(room)
        elif room.connections:  # a spectator: the others see the count
            self._tell_crowd(room)

    def _tell_crowd(self, room: Room) -> None:
        """The room's state to everyone within ``CROWD_EVERY`` seconds: one
        broadcast for all the spectators who come or go until then."""
        if room.crowd_told_soon:
            return
        room.crowd_told_soon = True

        async def tell_soon() -> None:
            try:
                await asyncio.sleep(CROWD_EVERY)
            finally:
                room.crowd_told_soon = False
            if room.connections:
                await self.broadcast(room)

        self.spawn(tell_soon())

    def _forget_if_unused(self, room: Room) -> None:
        """Nobody is here and nothing is pending (a move, a countdown, an
        offer): the row on disk is the room; ``get`` loads it again when
        someone comes back."""
        if (not room.connections and room.thinking is None and room.forfeit_task is None and room.rematch is None
                and self.rooms.get(room.code) is room):
            self.rooms.pop(room.code, None)

    async def _withdraw_later(self, room: Room, side: str) -> None:
        """The rematch ``side`` offered is withdrawn if they are not back
        within ``REMATCH_GRACE`` seconds (a reload keeps it)."""
        await asyncio.sleep(REMATCH_GRACE)
        async with room.lock:
            withdrawn = self._withdraw_if_gone(room, {side})
            self._forget_if_unused(room)
        if withdrawn:  # the event, then the state without the offer (the page drops its Accept on a state)
            await self.broadcast(room, {"type": "rematch", "event": "withdrawn", "seat": withdrawn, "left": True})
            await self.broadcast(room)

    @staticmethod
    def _withdraw_if_gone(room: Room, left: set[str]) -> str | None:
        """A rematch offered by a seat of ``left`` that has no connection now
        is withdrawn (nobody is there to play it): that seat, else None."""
        offered = room.rematch
        if offered is None or offered not in left or room.seats[offered].connections > 0:
            return None
        room.rematch = None
        return offered

    async def send_state(self, room: Room, conn: Connection) -> None:
        """The room's state to one connection: in turn with the broadcasts
        (never an older state after a newer one), and given up after
        ``SEND_TIMEOUT`` like theirs."""
        async with room.telling:
            await tell(conn, state_message(to_json(room.state(self.forfeit_after)), room.connections.get(conn, set())))

    async def broadcast(self, room: Room, extra: dict[str, Any] | None = None) -> None:
        """Send the room's state (or ``extra``) to every connection.  The
        room is written as JSON once, not once per connection (each gets
        its own ``you``)."""
        room.touched = time.time()
        async with room.telling:  # in the order they were asked for; the state as it is then
            text = to_json(extra) if extra is not None else None
            room_json = to_json(room.state(self.forfeit_after)) if extra is None else ""
            await tell_all([
                (conn, text if text is not None else state_message(room_json, seats))
                for conn, seats in room.connections.items()
            ])

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
            self.hints.ask(room, conn, message.get("deeper") is True)
        elif kind == "review":
            over = self._finished(room)
            review = await self.reviewer.review(over.position, over.start_ply)
            # sent as the broadcasts are: a review takes seconds, and a page closed meanwhile gets nothing
            await tell(conn, to_json({"type": "review", **review}))
        elif kind == "resign":
            await self._resign(room, seats)
        elif kind == "rematch":
            await self._rematch(room, seats, message["action"])
        elif kind == "ping":  # as every other reply: a closed page gets nothing, a stuck one is dropped
            await tell(conn, to_json({"type": "pong"}))

    async def _move(self, room: Room, seats: set[str], token: str) -> None:
        async with room.lock:
            self._turn_of(room, seats)
            try:
                position = room.position.play(token)
            except IllegalMoveError as exc:
                raise RoomError(ILLEGAL_MOVE, str(exc)) from None
            with self._change(room):
                room.position = position
                room.evaluation = None
                self._settle(room)
                self.store.save(room.row())
        await self.broadcast(room)

    def _turn_of(self, room: Room, seats: set[str]) -> str:
        """The side to move, if ``seats`` may move it; else the reason."""
        if room.status == "over":
            raise RoomError(GAME_OVER, f"the game is over ({room.outcome()})")
        if room.status == "waiting":
            raise RoomError(NOT_YOUR_TURN, WAITING_FOR_GUEST)
        if not seats:
            raise RoomError(NOT_YOUR_SEAT, "you hold no seat of this room (you are watching)")
        side = room.position.to_move
        assert side is not None
        if side not in seats:
            raise RoomError(NOT_YOUR_TURN, f"it is {side}'s turn")
        if room.seats[side].kind != "human":
            raise RoomError(NOT_YOUR_SEAT, f"{side} is played by the computer")
        return side

    def _settle(self, room: Room) -> None:
        """After a change: the end of the game, or the next agent's move."""
        room.generation += 1
        room.preparing = None  # said by the move that waits (``_while_preparing``)
        if room.position.is_over and room.status != "over":
            result = room.position.result
            room.finish(result, "full" if result == "draw" else "four")
        if room.status == "playing":
            side = room.position.to_move
            if side is not None and room.seats[side].kind == "agent":
                room.thinking = side
                self.spawn(self._agent_move(room, side, room.generation))
                return
        room.thinking = None

    async def _agent_move(self, room: Room, side: str, generation: int) -> None:
        await self.broadcast(room, {"type": "thinking", "seat": side})
        agent = room.seats[side].agent
        assert agent is not None
        who = f"agent {room.seats[side].spec!r}"
        position = room.position
        loop = asyncio.get_running_loop()
        async with room.work:  # one thread a room at most
            thought = loop.run_in_executor(self.executor, agent.analyse, position, None)
            try:
                answer, analysis = checked_answer(agent, await self._while_preparing(room, generation, thought))
                move = answer_move(position, answer, who)
            except Exception as exc:  # noqa: BLE001 - an agent of one's own (a plugin, an engine's program)
                # raised, or answered no legal move: it loses the game, as in the arena (the room hung, thinking)
                await self._agent_failed(room, side, generation, failure_words(exc, who))
                return
        async with room.lock:
            if room.generation != generation or room.status != "playing":
                return  # undone, resigned or forfeited meanwhile
            failed: dict[str, Any] | None = None
            try:
                with self._change(room, resettle=False):
                    room.position = position.play(move)
                    # a move another agent chose says so on the seat (a board-wide stand-in says it already)
                    instead = analysis.fallback is not None and plays_instead(agent, position.variant) is None
                    room.seats[side].fallback = analysis.note if instead else None
                    if analysis.value is not None:
                        room.evaluation = (2 * analysis.value - 1) * (1 if side == "A" else -1)
                    self._settle(room)
                    self.store.save(room.row())
            except RoomError as exc:  # not saved: the room is as it was; the agent tries again later
                room.thinking = None
                self.spawn(self._retry_agent(room, room.generation))
                failed = exc.frame()
        if failed is not None:
            await self.broadcast(room, failed)
        await self.broadcast(room)

    async def _agent_failed(self, room: Room, side: str, generation: int, detail: str) -> None:
        """The agent of ``side`` failed (``detail`` says how): it loses the
        game by ``failed``, the server's log and everyone in the room are
        told why, unless the room changed meanwhile."""
        async with room.lock:
            if room.generation != generation or room.status != "playing":
                return
            with self._change(room):
                room.finish(other(side), "failed")
                room.generation += 1
                self.store.save(room.row())
        log.warning("room %s: %s", room.code, detail)
        await self.broadcast(room, {"type": "error", "code": AGENT_FAILED, "message": f"{detail}: it loses the game"})
        await self.broadcast(room)

    async def _while_preparing(self, room: Room, generation: int, thought: asyncio.Future[Any]) -> Any:
        """The agent's answer.  Meanwhile, from a compile of numba's seen
        on (the first start after an install), the room's ``preparing`` says
        how long the move has waited, sent to everyone every second."""
        async def say_preparing(seconds: float) -> None:
            room.preparing = seconds
            await self.broadcast(room)

        try:  # (undone meanwhile: this move will not be played, nothing to say)
            return await while_compiling(thought, say_preparing, skip=lambda: room.generation != generation)
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
                raise RoomError(NOT_ALLOWED, "undo is for local games only")
            if not seats:
                raise RoomError(NOT_YOUR_SEAT, "you hold no seat of this room")
            if room.status == "over" and room.reason in ("resign", "forfeit", "failed"):
                # A game someone gave up stays over: only a move on the board can be taken back.
                raise RoomError(GAME_OVER, f"the game is over ({room.outcome()}): start a new one")
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
                yours = any(seat.kind != "human" for seat in room.seats.values())  # else both sides are the person's
                raise RoomError(NOT_ALLOWED, f"there is no move{' of yours' if yours else ''} to take back")
            self._arm(room)  # a finished game read from the store plays on
            with self._change(room):
                room.position = Position(room.position.variant).play(*moves[:keep])
                room.status, room.result, room.reason, room.finished = "playing", None, None, None
                room.evaluation = None
                self._settle(room)
                self.store.save(room.row())
        await self.broadcast(room)

    async def review(self, code: str) -> dict[str, Any] | None:
        """The review of the finished game ``code`` (``docs/protocol.md``;
        None if there is no such room), computed once (``Reviewer``): a
        game no longer in memory is read from the store, with no agent."""
        room = self.rooms.get(code) or self._row(code)
        if room is None:
            return None
        over = self._finished(room)
        return await self.reviewer.review(over.position, over.start_ply)

    @staticmethod
    def _finished(room: Room) -> Room:
        if room.status == "waiting":
            raise RoomError(NOT_ALLOWED, f"the review is for finished games: {WAITING_FOR_GUEST}")
        if room.status != "over":
            raise RoomError(NOT_ALLOWED, "the review is for finished games: this one is still going on")
        return room

    async def _resign(self, room: Room, seats: set[str]) -> None:
        async with room.lock:
            if room.status == "over":
                raise RoomError(GAME_OVER, f"the game is over ({room.outcome()})")
            human = {s for s in seats if room.seats[s].kind == "human"}
            if not human:
                raise RoomError(NOT_YOUR_SEAT, "you hold no seat of this room")
            if room.status == "waiting":  # no game yet: nobody to win it (a room nobody joins ends by itself)
                raise RoomError(NOT_ALLOWED, f"there is no game to resign yet: {WAITING_FOR_GUEST}")
            # In a local game against the computer, or with both seats, the
            # side to move (or else A) is the one that resigns.
            loser = room.position.to_move if room.position.to_move in human else min(human)
            with self._change(room):
                room.finish(other(loser), "resign")
                room.generation += 1
                self.store.save(room.row())
        await self.broadcast(room)

    # -- rematches ---------------------------------------------------------------------------

    async def _rematch(self, room: Room, seats: set[str], action: str) -> None:
        """A rematch in an online room whose game is over: one player offers
        it, the other accepts (or declines; the one who offered may take it
        back by declining).  Accepted, the room starts a new game from the
        same start with the sides swapped; the finished one is kept in the
        store as its own game (``<code>-N``, listed in ``earlier``)."""
        async with room.lock:
            if room.mode != "online":
                raise RoomError(NOT_ALLOWED, "a rematch is for online rooms: start a new game instead")
            if not seats:
                raise RoomError(NOT_YOUR_SEAT, "you hold no seat of this room (you are watching): the players decide")
            if room.status == "waiting":
                raise RoomError(NOT_ALLOWED, f"a rematch is offered once the game is over: {WAITING_FOR_GUEST}")
            if room.status != "over":
                raise RoomError(NOT_ALLOWED, "the game is still going on: a rematch is offered once it is over")
            if not all(seat.taken for seat in room.seats.values()):  # ended before a guest came: abandoned
                raise RoomError(NOT_ALLOWED, "nobody took the other seat: there is no one to play a rematch with")
            side = min(seats)
            offered = room.rematch
            if action == "offer" and offered == side:
                raise RoomError(NOT_ALLOWED, "you have offered a rematch already: the other player accepts it")
            if action in ("accept", "decline") and offered is None:
                raise RoomError(NOT_ALLOWED, "no rematch is offered: offer one")
            if action == "accept" and offered in seats and other(offered) not in seats:
                raise RoomError(NOT_ALLOWED, "this is your own offer: the other player accepts it")
            event: dict[str, Any] = {"type": "rematch", "seat": side}
            if action == "decline":
                room.rematch = None
                event["event"] = "withdrawn" if offered == side else "declined"
            elif action == "offer" and offered is None:
                room.rematch = side
                event["event"] = "offered"
            else:  # accepted (or offered by both)
                event.update(event="accepted", kept=self._start_rematch(room))
        await self.broadcast(room, event)
        await self.broadcast(room)

    def _start_rematch(self, room: Room) -> str:
        """The room's next game, sides swapped (under the room's lock); the
        code under which the finished one is kept.  Nothing changes if
        either row cannot be saved."""
        kept = f"{room.code}-{len(room.earlier) + 1}"
        first, second = room.seats["A"], room.seats["B"]
        with self._change(room), self._or_forget(kept):
            self.store.save(kept_row(room, kept))
            was_first = (first.name, first.token_hash, first.absent_since)
            first.name, first.token_hash, first.absent_since = second.name, second.token_hash, second.absent_since
            second.name, second.token_hash, second.absent_since = was_first
            variant, moves = room.position.variant, room.position.moves
            room.position = Position(variant).play(*moves[: room.start_ply])
            room.status, room.result, room.reason, room.finished = "playing", None, None, None
            room.evaluation = None
            now = time.time()
            for seat in room.seats.values():  # an absent player's countdown starts with the game
                if seat.absent_since is not None:
                    seat.absent_since = now
            self._settle(room)
            self.store.save(room.row())
        # saved: what no snapshot covers follows the players to their new sides
        first.connections, second.connections = second.connections, first.connections
        swap = {"A": "B", "B": "A"}
        for conn, held in room.connections.items():
            room.connections[conn] = {swap[side] for side in held}
        for key, (token, sides) in room.joins.items():
            room.joins[key] = (token, [swap[side] for side in sides])
        room.rematch = None
        room.earlier.append(kept)
        self.presence.schedule(room)
        return kept

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
        before = room.snapshot()
        was_over = room.status == "over"
        try:
            yield
            if room.status == "over" and not was_over:
                log.info(room.ended_line())
        except BaseException as exc:
            room.restore(before)
            room.generation += 1  # void any agent move the change started
            if resettle:
                room.thinking = None
                self._settle(room)
            self.presence.schedule(room)  # a countdown the change stopped runs again
            if isinstance(exc, StorageError):
                raise self._unsaved(room, exc) from None
            raise

    @contextlib.contextmanager
    def _or_forget(self, kept: str) -> Iterator[None]:
        """A rematch whose room could not be saved leaves no kept game behind."""
        try:
            yield
        except BaseException:
            with contextlib.suppress(StorageError):
                self.store.delete(kept)
            raise

    def _unsaved(self, room: Room, exc: StorageError) -> RoomError:
        """The client's error for a change of ``room`` that could not be saved (logged, one line)."""
        log.warning("room %s: a change was not saved, the room is kept as it was: %s", room.code, exc)
        return RoomError(STORAGE_FAILED, STORAGE_FAILED_MESSAGE)

    def save_presence(self, room: Room) -> None:
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
        """Idle rooms leave memory (``Presence.sweep``): how many."""
        return self.presence.sweep(now)

    def start_sweeping(self) -> None:
        """Sweep idle rooms now and then (from the server's start-up)."""
        self.presence.start_sweeping()

    # -- housekeeping ---------------------------------------------------------------------

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def close(self, warm_up_wait: float | None = None) -> None:
        """Stop the background warm-ups and the rooms' tasks.  The warm-up
        under way is waited for (at most ``warm_up_wait`` seconds, by
        default ``WARM_UP_WAIT``): a thread
        still inside numba's compiler when the interpreter shuts down can
        take the process down with it.  A process that ends without that
        shutdown (``c4lab serve`` and ``play``: ``quick_exit.at_once``)
        need not wait: 0."""
        self._closing.set()
        for task in list(self._tasks):
            task.cancel()
        wait = WARM_UP_WAIT if warm_up_wait is None else warm_up_wait
        if wait > 0 and self._warming is not None and self._warming.is_alive():
            await asyncio.get_running_loop().run_in_executor(None, self._warming.join, wait)
