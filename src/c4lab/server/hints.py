"""Hints of the analysis board and of local games: each connection's
questions answered one after the other, each for the position on screen
when its work starts, the unknown columns solved again for longer while
the position stays, and the work stopped once the position is left.

The scores themselves come from ``review.Reviewer`` (the exact solver,
the hint engine where it does not answer in time); this module decides
when to work them out, for whom, and when to stop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from c4lab.rules import Position
from c4lab.server.errors import GAME_OVER, NOT_ALLOWED, REVIEW_FAILED, RoomError
from c4lab.server.review import TABLE_SIZE, HintCancelled, Reviewer
from c4lab.server.room import Connection, Room, to_json
from c4lab.server.telling import tell, while_compiling
from c4lab.solver import Solver

log = logging.getLogger(__name__)

#: Seconds between two looks, while the solver works on a hint (or on its
#: unknown columns again), at whether its position is still wanted.
DEEPER_WATCH = 0.05
#: The ``hint`` answer for a position left before its hint was worked out
#: (``docs/protocol.md``): no scores, ``dropped``; the page asks again.
DROPPED_HINT: dict[str, Any] = {
    "move": None, "value": None, "evaluation": None, "columns": [], "best": [], "moves": {}, "estimates": {},
    "solving": False, "dropped": True,
}


class HintDesk:
    """Every connection's hints on one server (``RoomManager.hints``)."""

    def __init__(self, rooms: dict[str, Room], reviewer: Reviewer,
                 spawn: Callable[[Coroutine[Any, Any, Any]], asyncio.Task[Any]]) -> None:
        """``rooms``: the manager's live rooms (a hint for a room no longer
        among them is not told); ``spawn`` starts a connection's task."""
        self.rooms = rooms
        self.reviewer = reviewer
        self.spawn = spawn
        self._asked: dict[Connection, int] = {}  # hints each connection asked for and has not had yet
        self._deeper: dict[Connection, bool] = {}  # whether its last one asked for the further passes (``deeper``)

    def ask(self, room: Room, conn: Connection, deeper: bool = False) -> None:
        """A hint for ``conn``, worked out in a task of its own: the
        connection's next messages (a move, an undo: the analysis board
        asks for a hint after each) are handled meanwhile, not after it
        (they waited a second each on large boards).  A connection's hints
        are answered one after the other, each for the room's position when
        its work starts (the answer names it; the page asks again for the
        one on screen); one at work and one waiting at most, so a client
        that asks faster than hints are found queues nothing more.
        ``deeper``: after the answer, the columns it left unknown are solved
        again for longer (``_deepen``)."""
        if room.mode != "local":
            raise RoomError(NOT_ALLOWED, "hints are for local games only")
        if room.status != "playing" or room.position.is_over:
            raise RoomError(GAME_OVER, "the game is over")
        asked = self._asked.get(conn, 0)
        self._deeper[conn] = deeper
        if asked >= 2:
            return  # the waiting one answers for the position on screen when it starts
        self._asked[conn] = asked + 1
        if not asked:
            self.spawn(self._answer(room, conn))

    async def _answer(self, room: Room, conn: Connection) -> None:
        """``conn``'s hints, while it asks (``ask``), stays and the
        room's game goes on; a hint that fails is an error frame
        (``review-failed``), as a review's is."""
        try:
            while self._asked.get(conn, 0) > 0:
                if conn not in room.connections or self.rooms.get(room.code) is not room:
                    return  # gone (or the room left memory): nobody to tell
                if room.status != "playing" or room.position.is_over:
                    await tell(conn, to_json(RoomError(GAME_OVER, "the game is over").frame()))
                    return
                position = room.position
                try:
                    async with room.work:  # one thread a room at most
                        answer = await self._telling(room, conn, position)
                except HintCancelled:  # the position was left before its hint was worked out
                    if self._asked.get(conn, 0) < 2 and conn in room.connections:
                        if room.position.notation == position.notation:
                            continue  # left and come back to: worked out again, for the same question
                        # the page asks one question at a time: told, it asks again for the one on screen
                        await tell(conn, to_json({"type": "hint", **DROPPED_HINT, "position": position.notation}))
                except Exception as exc:  # the pool's work failed: say so, the page stops waiting
                    log.exception("the hint for room %s failed", room.code)
                    await tell(conn, to_json(RoomError(REVIEW_FAILED, f"the hint could not be worked out: {exc}").frame()))
                else:
                    budgets = self.reviewer.deeper_budgets(position) if self._deeper.get(conn) else []
                    solving = bool(budgets) and not all(column["exact"] for column in answer["columns"])
                    await tell(conn, to_json({"type": "hint", **answer, "solving": solving}))
                    if solving:
                        await self._deepen(room, conn, position, answer, budgets)
                self._asked[conn] -= 1
        finally:
            self._asked.pop(conn, None)
            self._deeper.pop(conn, None)

    async def _deepen(
        self, room: Room, conn: Connection, position: Position, answer: dict[str, Any], budgets: list[float]
    ) -> None:
        """The hint ``answer`` for ``position`` had unknown columns: solve
        them again for longer (``budgets``, from ``Reviewer.deeper_budgets``:
        4 s, then 30 s, within the think-time limit), and send each pass
        that settles more, and the last (``solving`` false: no pass
        follows), as long as the room's position is ``position`` and
        ``conn`` asks nothing else.  Once that changes (a move, an undo,
        another hint, the page gone), the search is stopped at once
        (``Solver.cancel``): it holds the room's thread, which the next
        hint or an agent's move needs."""
        def still_wanted() -> bool:
            return self._asked.get(conn) == 1 and self.on_screen(room, conn, position)

        for number, seconds in enumerate(budgets, 1):
            if not still_wanted():
                return
            solver = Solver(TABLE_SIZE)
            async with room.work:
                work = asyncio.ensure_future(self.reviewer.deeper(position, answer, seconds, solver))
                try:
                    while not (await asyncio.wait({work}, timeout=DEEPER_WATCH))[0]:
                        if not still_wanted():
                            solver.cancel()  # the search stops at its next check of its limit
                            work.cancel()  # a pass still waiting for its turn in the pool: never starts
                            await asyncio.wait({work})
                            return
                finally:
                    if not work.done():  # this task cancelled (the server closing): the thread stops too
                        solver.cancel()
                try:
                    deeper = work.result()
                except Exception:  # the pool's work failed: the answer sent stands, with no pass to follow
                    log.exception("a further pass over the hint for room %s failed", room.code)
                    if still_wanted():
                        await tell(conn, to_json({"type": "hint", **answer, "solving": False}))
                    return
            solving = number < len(budgets) and not all(column["exact"] for column in deeper["columns"])
            if (deeper["columns"] != answer["columns"] or not solving) and still_wanted():
                await tell(conn, to_json({"type": "hint", **deeper, "solving": solving}))
            if not solving:
                return
            answer = deeper

    def on_screen(self, room: Room, conn: Connection, position: Position) -> bool:
        """Whether ``conn`` still shows ``position`` in ``room``: a hint's
        work for it is still wanted."""
        return (conn in room.connections and self.rooms.get(room.code) is room
                and room.status == "playing" and room.position.notation == position.notation)

    async def _telling(self, room: Room, conn: Connection, position: Position) -> dict[str, Any]:
        """The hint for ``position``.  Meanwhile, from a compile of numba's
        seen on (the first start after an install: the solver's kernels for
        this board), ``conn`` is told every second how long it has waited
        (``preparing``), as an agent's move says so in the room's state.
        Once the position is left (a move, an undo, the page gone), its
        work is stopped (``Solver.cancel``) and ``HintCancelled`` raised
        unless the solver had settled every move: it held the room's
        thread, which the next position's hint needs (on a first start the
        solver goes on while the engine compiles, tens of seconds)."""
        async def say_preparing(seconds: float) -> None:
            await tell(conn, to_json({"type": "preparing", "seconds": seconds}))

        async def watch() -> None:
            while self.on_screen(room, conn, position):
                await asyncio.sleep(DEEPER_WATCH)
            solver.cancel()

        solver = Solver(TABLE_SIZE)
        work = asyncio.ensure_future(self.reviewer.hint(position, solver))
        watching = asyncio.ensure_future(watch())
        try:
            answer: dict[str, Any] = await while_compiling(work, say_preparing)
            return answer
        finally:
            watching.cancel()
            if not work.done():  # this task cancelled (the server closing): the thread stops too
                solver.cancel()
            work.cancel()  # a work still waiting for its turn in the pool: never starts
