"""Who is in a room, and what happens when nobody is: forfeits, abandoned
rooms, idle rooms leaving memory.

An online room counts each taken seat's connections.  A player whose last
connection closes is *absent* from then on (``Seat.absent_since``, stored
with the room so that a restarted server ends it on time); when the first
absent player's ``forfeit_after`` seconds run out, the room ends
(``due``): forfeit by that player, or *abandoned* if nobody played or
everyone left at once.  A room nobody has used for ``idle_after`` seconds
leaves memory (``idle``), an online one ended abandoned first.

``Presence`` keeps the countdowns (one task a room) for the room manager,
which it reaches through the small ``Host`` surface: the live rooms, tasks,
a presence stamp's save and the broadcast.  The decisions themselves are
plain functions of a room and the time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Coroutine, Iterable
from typing import Any, Protocol

from c4lab.rules.sides import other
from c4lab.server.room import OPEN, Room

log = logging.getLogger(__name__)

#: Seconds an absent player of an online game has before forfeiting (``--forfeit-after``).
FORFEIT_AFTER = 120.0
#: Seconds a room nobody has connected to since it was made (or since the
#: guest took their seat) stays open (``--expire-idle``): then an online
#: room ends abandoned, a local one leaves memory (its row stays, and its
#: page can take it up again).
IDLE_AFTER = 600.0


def absent(room: Room) -> list[tuple[float, str]]:
    """The absent players of a room, (since when, side), first to leave first."""
    return sorted(
        (seat.absent_since, side) for side, seat in room.seats.items()
        if seat.kind == "human" and seat.taken and seat.connections == 0 and seat.absent_since is not None
    )


def due(room: Room, forfeit_after: float, now: float) -> tuple[str | None, str] | None:
    """How the room ends now that an absent player's time ran out --
    ``(result, reason)`` -- or ``None`` if nobody's has.

    A room waiting for its guest whose host has left ends *abandoned*.  In
    a game, the player whose countdown ran out first loses by forfeit --
    unless both have left and no move was played in the room, or both left
    at the same moment (a server restart), which ends it abandoned (no
    result).  A player who never opened the room (its host made it by the
    REST API) counts as gone: the guest who came and left before a move
    does not forfeit to them."""
    if room.mode != "online" or room.status not in OPEN:
        return None
    gone = absent(room)
    if not gone or gone[0][0] + forfeit_after > now + 0.01:
        return None
    if room.status == "waiting":
        return None, "abandoned"
    humans = [seat for seat in room.seats.values() if seat.kind == "human" and seat.taken]
    everyone_left = all(seat.connections == 0 for seat in humans)  # left, or never came
    unplayed = room.position.ply == room.start_ply
    tied = len(gone) > 1 and gone[1][0] == gone[0][0]
    if everyone_left and (unplayed or tied):
        return None, "abandoned"
    return other(gone[0][1]), "forfeit"


def idle(rooms: Iterable[Room], idle_after: float, now: float) -> list[Room]:
    """The rooms nobody has used for ``idle_after`` seconds: nobody
    connected, no agent thinking, no countdown running (a player who left
    has one), nothing holding its locks."""
    return [
        room for room in rooms
        if not room.connections and room.thinking is None and room.forfeit_task is None
        and not room.lock.locked() and not room.work.locked() and now - room.touched >= idle_after
    ]


class Host(Protocol):
    """What ``Presence`` needs of the room manager."""

    rooms: dict[str, Room]

    def spawn(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def save_presence(self, room: Room) -> None: ...

    async def broadcast(self, room: Room, extra: dict[str, Any] | None = None) -> None: ...


class Presence:
    """The countdowns of a server's rooms (see the module's docstring)."""

    def __init__(self, host: Host, forfeit_after: float = FORFEIT_AFTER, idle_after: float | None = IDLE_AFTER) -> None:
        self.host = host
        self.forfeit_after = forfeit_after
        self.idle_after = idle_after
        #: When the server began to stop (``stopping``): every player whose
        #: socket it closes then left at that one moment.
        self.stopped_at: float | None = None

    def stopping(self) -> None:
        """The server stops: the players it disconnects all leave at this
        moment, whichever socket closes first, so that a room nobody comes
        back to after a restart ends abandoned (``due``), never by the
        forfeit of the one whose socket happened to close first."""
        if self.stopped_at is None:
            self.stopped_at = time.time()

    def arrive(self, room: Room, side: str) -> bool:
        """A connection for ``side``: True if its player was absent."""
        seat = room.seats[side]
        seat.connections += 1
        came_back = seat.absent_since is not None
        seat.absent_since = None
        return came_back

    def leave(self, room: Room, side: str) -> None:
        """A connection of ``side`` closed: the last one starts its player's absence."""
        seat = room.seats[side]
        seat.connections = max(0, seat.connections - 1)
        if seat.connections == 0:
            seat.absent_since = self.stopped_at if self.stopped_at is not None else time.time()
            if room.mode == "online" and room.status in OPEN:
                self.host.save_presence(room)
                self.schedule(room)

    def schedule(self, room: Room) -> None:
        """(Re)start the room's countdown: an online room being played, or
        waiting for its guest, wakes when the first absent player's
        ``forfeit_after`` seconds run out (no absent player: no countdown)."""
        if room.forfeit_task is not None:
            room.forfeit_task.cancel()
            room.forfeit_task = None
        gone = absent(room)
        if room.mode != "online" or room.status not in OPEN or not gone:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # no event loop here: the room is scheduled when it is next loaded or left
            return
        room.forfeit_task = self.host.spawn(self._expire_at(room, gone[0][0] + self.forfeit_after))

    def expire(self, room: Room, now: float | None = None) -> bool:
        """End the room if an absent player's time has run out (True if so)."""
        ending = due(room, self.forfeit_after, time.time() if now is None else now)
        if ending is None:
            return False
        room.finish(*ending)
        log.info(room.ended_line())
        return True

    async def _expire_at(self, room: Room, deadline: float) -> None:
        await asyncio.sleep(max(0.0, deadline - time.time()))
        async with room.lock:
            room.forfeit_task = None
            ended = self.expire(room)
            if ended:
                self.host.save_presence(room)  # kept in memory if not on disk: a restart ends it again
                if not room.connections and room.thinking is None:
                    self.host.rooms.pop(room.code, None)  # over: the row on disk is the room
            else:
                self.schedule(room)
        if ended:
            await self.host.broadcast(room)

    def sweep(self, now: float | None = None) -> int:
        """Rooms nobody has used for ``idle_after`` seconds leave memory; an
        online one ends abandoned first (a room made, or joined, by a client
        that never connected).  How many."""
        if self.idle_after is None:
            return 0
        gone = idle(self.host.rooms.values(), self.idle_after, time.time() if now is None else now)
        for room in gone:
            if room.mode == "online" and room.status in OPEN:
                room.finish(None, "abandoned")
                log.info(room.ended_line())
                self.host.save_presence(room)
            self.host.rooms.pop(room.code, None)
        return len(gone)

    def start_sweeping(self) -> None:
        """Sweep idle rooms now and then (from the server's start-up)."""
        if self.idle_after is not None:
            self.host.spawn(self._sweep_every(min(60.0, max(0.05, self.idle_after / 4))))

    async def _sweep_every(self, seconds: float) -> None:
        while True:
            await asyncio.sleep(seconds)
            try:
                self.sweep()
            except Exception:  # the sweeper must outlive one bad room
                log.exception("sweeping idle rooms failed")
