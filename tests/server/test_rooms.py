"""The room manager without a server: fake connections, a real store.

Each test runs one event loop (``asyncio.run``) around a ``RoomManager``
over a SQLite file, with connections that keep what they are sent.  What
a player is told must be what is on disk: every test reads the store too.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from c4lab.agents.base import Agent, Analysis
from c4lab.rules import Move, Position
from c4lab.server import presence, rooms, telling
from c4lab.server.errors import RoomError
from c4lab.server.limits import DEFAULT_AGENTS, AgentLimits
from c4lab.server.names import NAME_MAX
from c4lab.server.room import Room
from c4lab.server.rooms import RoomManager
from c4lab.server.storage import GameStore, StorageError
from c4lab.server.warmup import AgentPool
from testkit import ROOT, first_pass_solves_nothing


class FakeConnection:
    """A connection that keeps every message it is sent."""

    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    async def send_json(self, data: Any) -> None:
        self.sent.append(json.loads(json.dumps(data)))

    async def send_text(self, text: str) -> None:
        self.sent.append(json.loads(text))

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [m for m in self.sent if m["type"] == kind]


class FailingStore(GameStore):
    """A store whose writes fail while ``failing`` is set (a full disk)."""

    failing = False

    def save(self, row: Any) -> None:
        if self.failing:
            raise StorageError("database or disk is full")
        super().save(row)

#: How many times a test looks, a hundredth of a second apart, for what the
#: manager does in its tasks and threads (a move, a hint, a forfeit): it
#: stops looking once it is there, so a minute at most costs nothing, and a
#: first solve or search may compile on an empty numba cache meanwhile.
POLLS = 6000


class GatedAgent:
    """An agent that thinks until it is let go, then plays its first legal move."""

    is_human = False

    def __init__(self) -> None:
        self.started = threading.Event()
        self.go = threading.Event()

    def analyse(self, position: Position, budget: Any = None) -> tuple[Move, Analysis]:
        self.started.set()
        assert self.go.wait(10), "never let go"
        return position.legal_moves()[0], Analysis()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[FailingStore]:
    store = FailingStore(tmp_path / "games.sqlite")
    try:
        yield store
    finally:
        store.close()


def with_manager(store: GameStore, body: Callable[[RoomManager], Any], **options: Any) -> Any:
    """Run ``body(manager)`` (a coroutine function) in a fresh event loop."""
    executor = AgentPool(max_workers=2)  # the server's own pool (``create_app``)

    async def main() -> Any:
        manager = RoomManager(store, executor, hint_spec="heuristic", **options)
        try:
            return await body(manager)
        finally:
            await manager.close()

    try:
        return asyncio.run(main())
    finally:
        executor.shutdown(wait=True, cancel_futures=True)


async def settled(room: Room, plies: int) -> None:
    """Wait until the room's position has ``plies`` moves, no agent thinks,
    and everyone has been told (the agent's move is broadcast after it is
    made: ``room.telling`` is held from then until every connection has the
    state, and a test that looked between the two read the state before)."""
    for _ in range(POLLS):
        if room.position.ply == plies and room.thinking is None and not room.telling.locked():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"still {room.position.notation}, thinking {room.thinking}")


async def seated(manager: RoomManager, options: dict[str, Any]) -> tuple[Room, FakeConnection]:
    room, token, _ = manager.create(options)
    return room, await connected(manager, room, token)


async def connected(manager: RoomManager, room: Room, token: str | None, conn: Any = None) -> Any:
    """``conn`` (a new ``FakeConnection`` if none) attached to ``room`` and
    connected with ``token`` (``None``: a watcher)."""
    conn = conn if conn is not None else FakeConnection()
    assert await manager.attach(room.code, conn) is room
    await manager.connect(room, conn, token)
    return conn


def test_a_move_is_saved_then_told_and_an_undo_takes_back_the_agents_reply_too(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "random"}, "board": "7x6"})
        await manager.handle(room, conn, {"type": "move", "move": "d"})
        await settled(room, 2)
        stored = store.load(room.code)
        assert stored is not None and stored.position == room.position.notation
        assert conn.of_type("state")[-1]["room"]["position"] == room.position.notation
        await manager.handle(room, conn, {"type": "undo"})
        assert room.position.notation == "7x6" and room.status == "playing"
        assert store.load(room.code).position == "7x6"  # type: ignore[union-attr]
        with pytest.raises(RoomError, match="there is no move of yours to take back") as nothing:
            await manager.handle(room, conn, {"type": "undo"})
        assert nothing.value.code == "not-allowed"
        # two people at one screen: both sides are theirs, no move is more "yours" than another
        both, conn = await seated(manager, {"players": {"A": "human", "B": "human"}, "board": "7x6"})
        with pytest.raises(RoomError, match="there is no move to take back"):
            await manager.handle(both, conn, {"type": "undo"})

    with_manager(store, body)


def test_a_resignation_ends_the_game_for_the_side_to_move(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "human"}})
        await manager.handle(room, conn, {"type": "move", "move": "d"})
        await manager.handle(room, conn, {"type": "resign"})  # B is to move: B resigns
        assert (room.status, room.result, room.reason) == ("over", "A", "resign")
        stored = store.load(room.code)
        assert stored is not None and (stored.status, stored.result, stored.reason) == ("over", "A", "resign")
        for message in ({"type": "move", "move": "c"}, {"type": "undo"}, {"type": "resign"}):
            with pytest.raises(RoomError) as refused:
                await manager.handle(room, conn, message)
            assert refused.value.code == "game-over"
        assert conn.of_type("state")[-1]["room"]["status"] == "over"

    with_manager(store, body)


def test_a_change_that_cannot_be_saved_changes_nothing(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "human"}})
        await manager.handle(room, conn, {"type": "move", "move": "d"})
        told = len(conn.sent)
        store.failing = True
        for message in ({"type": "move", "move": "c"}, {"type": "undo"}, {"type": "resign"}):
            with pytest.raises(RoomError) as failed:
                await manager.handle(room, conn, message)
            assert failed.value.code == "storage-failed"
            assert (room.position.notation, room.status) == ("7x6:d", "playing")
        assert len(conn.sent) == told  # nobody was told of a change that did not happen
        store.failing = False
        await manager.handle(room, conn, {"type": "move", "move": "c"})
        assert store.load(room.code).position == "7x6:dc"  # type: ignore[union-attr]

    with_manager(store, body)


def test_the_log_tells_each_room_made_and_each_game_ended_once_it_is_saved(
    store: FailingStore, caplog: pytest.LogCaptureFixture
) -> None:
    """``c4lab serve``'s log at its default level (info): the room made
    (with its agents), the game that ended and how; a resignation that
    could not be saved did not end the game, and is not told."""
    async def body(manager: RoomManager) -> list[str]:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "human"}, "board": "4x4"})
        store.failing = True
        with pytest.raises(RoomError):
            await manager.handle(room, conn, {"type": "resign"})
        store.failing = False
        await manager.handle(room, conn, {"type": "resign"})
        agent, _ = await seated(manager, {"players": {"A": "human", "B": "random"}, "board": "6x5/Xc2"})
        return [room.code, agent.code]

    with caplog.at_level(logging.INFO, logger="c4lab.server"):
        resigned, agent = with_manager(store, body)
    told = [r.getMessage() for r in caplog.records if r.name.startswith("c4lab.server.")]
    assert f"room {resigned}: created (local, 4x4)" in told
    assert f"room {agent}: created (local, 6x5/Xc2; B: random)" in told
    assert f"room {resigned}: game over, B wins: A resigned, after 0 moves" in told
    assert sum(f"room {resigned}: game over" in line for line in told) == 1  # not the one that was not saved


def test_the_log_line_of_a_game_over_counts_its_moves_in_words(
    store: FailingStore, caplog: pytest.LogCaptureFixture
) -> None:
    """The line says "after 1 move" for one move, "after N moves" for
    any other number."""
    async def body(manager: RoomManager) -> list[str]:
        codes = []
        for moves in ("d", "dc"):
            room, conn = await seated(manager, {"players": {"A": "human", "B": "human"}, "board": "7x6"})
            for move in moves:
                await manager.handle(room, conn, {"type": "move", "move": move})
            await manager.handle(room, conn, {"type": "resign"})
            codes.append(room.code)
        return codes

    with caplog.at_level(logging.INFO, logger="c4lab.server"):
        one, two = with_manager(store, body)
    told = [r.getMessage() for r in caplog.records if r.name.startswith("c4lab.server.")]
    assert f"room {one}: game over, A wins: B resigned, after 1 move" in told
    assert f"room {two}: game over, B wins: A resigned, after 2 moves" in told


@pytest.mark.parametrize(("options", "words"), [
    ({"width": True, "height": 6}, "width and height must both be integers"),  # int(True) is 1
    ({"width": " 7", "height": 6}, "width and height must both be integers"),  # int(" 7") is 7
    ({"width": 7.9, "height": 6}, "width and height must both be integers"),  # int(7.9) is 7
    # review: one without the other was "must both be integers" (9 was one); with a board, the board was dropped
    ({"width": 9}, "width and height go together: height is missing"),
    ({"height": 8, "forbidden": "d3"}, "width and height go together: width is missing"),
    ({"board": "7x6:dd", "width": 9, "height": 8},
     "give either board or width and height, not both (board '7x6:dd', width 9, height 8)"),
    ({"width": 7, "height": 6, "forbidden": 3}, "forbidden must be a cell name"),
    ({"width": 7, "height": 6, "forbidden": "d3/Bb1:dd"}, "forbidden: 'd3/Bb1:dd' is not a cell name"),
    # off this board: said with its own columns and rows (it was "columns go from a to l", the notation's
    # limit, on a board whose columns go to i; and "invalid position '9x8/Xj1'", a string nobody wrote)
    ({"width": 9, "height": 8, "forbidden": "z9"},
     "forbidden: cell z9 is off the 9x8 board (columns a to i, rows 1 to 8)"),
    ({"width": 9, "height": 8, "forbidden": "j1"},
     "forbidden: cell j1 is off the 9x8 board (columns a to i, rows 1 to 8)"),
    ({"width": 7, "height": 6, "forbidden": "a13"},
     "forbidden: cell a13 is off the 7x6 board (columns a to g, rows 1 to 6)"),
    ({"width": 13, "height": 6, "forbidden": "z9"}, "size 13x6 out of range: width and height go from 4 to 12"),
])
def test_a_board_from_its_parts_takes_whole_numbers_and_one_cell_name(
    store: FailingStore, options: dict[str, Any], words: str
) -> None:
    """``width``, ``height`` and ``forbidden`` build the board's string:
    the two numbers together and instead of ``board``, nothing that int()
    would bend into a number, and no more of a position string after the
    cell (``d3/Bb1:dd`` made 7x6/Xd3/Bb1:dd, with a bonus cell and two moves)."""
    async def body(manager: RoomManager) -> None:
        with pytest.raises(RoomError, match=re.escape(words)):
            manager.create(options)
        assert not manager.rooms
        room, _, _ = manager.create({"width": 7, "height": 6, "forbidden": "d3"})
        assert room.position.notation == "7x6/Xd3"

    with_manager(store, body)


def test_a_bonus_cell_asked_for_on_a_board_with_its_own_is_a_bad_board_and_makes_no_room(store: FailingStore) -> None:
    """A room on ``6x5/Xc2/Bb2`` with ``bonus`` played the board's own bonus
    cell and dropped the one asked for without a word; a bonus on a board
    without one is drawn as before."""
    async def body(manager: RoomManager) -> None:
        with pytest.raises(RoomError) as raised:
            manager.create({"board": "6x5/Xc2/Bb2", "bonus": True, "players": {"A": "human", "B": "human"}})
        assert raised.value.code == "bad-board" and raised.value.message == (
            "the board 6x5/Xc2/Bb2 has its bonus cell (b2) already, and the bonus asked for would draw another: "
            "give one or the other")
        assert not manager.rooms
        for board in ("6x5/Xc2", "random"):
            room, _, _ = manager.create({"board": board, "bonus": True, "players": {"A": "human", "B": "human"}})
            assert room.position.variant.bonus is not None

    with_manager(store, body)


def test_an_undo_cancels_the_move_the_agent_is_thinking_about(store: FailingStore) -> None:
    gated = GatedAgent()

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "random"}})
        room.seats["B"].agent = gated  # type: ignore[assignment]
        await manager.handle(room, conn, {"type": "move", "move": "d"})
        assert room.thinking == "B"
        await asyncio.get_running_loop().run_in_executor(None, gated.started.wait, 10)
        await manager.handle(room, conn, {"type": "undo"})
        assert room.position.notation == "7x6" and room.thinking is None
        gated.go.set()
        for _ in range(50):  # the agent's answer comes back, and is dropped
            await asyncio.sleep(0.02)
        assert room.position.notation == "7x6"
        assert store.load(room.code).position == "7x6"  # type: ignore[union-attr]
        await manager.handle(room, conn, {"type": "move", "move": "c"})  # the game goes on
        await settled(room, 2)

    with_manager(store, body)


class FaultyAgent:
    """A computer player of one's own that fails: raises, or answers
    something that is no legal move."""

    is_human = False

    def __init__(self, answer: Callable[[Position], Any]) -> None:
        self.answer = answer

    def analyse(self, position: Position, budget: Any = None) -> Any:
        return self.answer(position)


def oops(position: Position) -> Any:
    raise RuntimeError("oops in my agent")


@pytest.mark.parametrize(("answer", "said"), [
    (oops, r"^agent 'mine' raised RuntimeError: oops in my agent at .*test_rooms\.py:\d+: it loses the game$"),
    (lambda position: (3, Analysis()), (r"^illegal move '3' in '7x6:ddddddc': agent 'mine' answered 3, which is not a "
                                        r"move: it loses the game$")),
    (lambda position: Move.parse("d"), (r"^agent 'mine' failed: FaultyAgent\.analyse must return \(Move, Analysis\), "
                                        r"not Move\.parse\('d'\): it loses the game$")),
    (lambda position: (Move.parse("d"), Analysis()), r"column d is full \(played by agent 'mine'\): it loses the game$"),
])
def test_a_computer_player_that_fails_loses_the_game_and_the_room_is_told_why(
    store: FailingStore, answer: Callable[[Position], Any], said: str
) -> None:
    """Review: a plugin agent that raised (or answered no legal move) under
    ``serve --allow-agent`` left the room "thinking" for good, and only the
    server's log said "Task exception was never retrieved"."""

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "7x6:dddddd", "players": {"A": "human", "B": "random"}})
        room.seats["B"].agent, room.seats["B"].spec = FaultyAgent(answer), "mine"  # type: ignore[assignment]
        await manager.handle(room, conn, {"type": "move", "move": "c"})
        for _ in range(POLLS):  # until the room's last word: the state after the error (the game ends before both)
            if room.status == "over" and conn.sent[-1]["type"] == "state":
                break
            await asyncio.sleep(0.01)
        assert (room.status, room.result, room.reason, room.thinking) == ("over", "A", "failed", None)
        assert room.position.notation == "7x6:ddddddc"  # nothing of the bad answer played
        assert store.load(room.code).reason == "failed"  # type: ignore[union-attr]
        [error] = conn.of_type("error")
        assert error["code"] == "agent-failed" and re.search(said, error["message"]), error
        assert conn.sent[-1]["type"] == "state" and conn.sent[-1]["room"]["reason"] == "failed"
        assert room.outcome() == "A wins: B failed (its player raised an error or gave no legal move)"
        with pytest.raises(RoomError, match="the game is over"):  # given up, as a resignation: no undo
            await manager.handle(room, conn, {"type": "undo"})

    with_manager(store, body)


def test_an_absent_player_forfeits_after_the_countdown(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, host = await seated(manager, {"mode": "online", "seat": "A"})
        guest_token, _ = manager.join(room, "guest")
        guest = await connected(manager, room, guest_token)
        await manager.handle(room, host, {"type": "move", "move": "d"})
        await manager.disconnect(room, guest)
        # the countdown started (on a loaded machine it may already have run out during the broadcast)
        assert presence.absent(room) and (room.forfeit_task is not None or room.status == "over")
        for _ in range(POLLS):  # the room is over, and the host has been told (a broadcast that follows)
            if room.status == "over" and host.of_type("state")[-1]["room"]["status"] == "over":
                break
            await asyncio.sleep(0.01)
        assert (room.status, room.result, room.reason) == ("over", "A", "forfeit")
        assert store.load(room.code).reason == "forfeit"  # type: ignore[union-attr]
        assert host.of_type("state")[-1]["room"]["status"] == "over"

    with_manager(store, body, forfeit_after=0.2)


class DeafConnection(FakeConnection):
    """A client that reads nothing: once its buffers are full, a send to it
    waits for ever (here: at once); ``drop`` is how the server gives it up."""

    def __init__(self) -> None:
        super().__init__()
        self.dropped = 0

    async def send_text(self, text: str) -> None:
        await asyncio.Event().wait()

    def drop(self) -> None:
        self.dropped += 1


def test_a_client_that_reads_nothing_is_dropped_and_holds_up_no_one(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(telling, "SEND_TIMEOUT", 0.05)

    async def body(manager: RoomManager) -> None:
        room, host = await seated(manager, {"mode": "online", "seat": "A"})
        deaf = [DeafConnection(), DeafConnection()]  # watchers who came before the guest
        for conn in deaf:
            await connected(manager, room, None, conn)
        guest_token, _ = manager.join(room, "guest")
        guest = await connected(manager, room, guest_token)
        for player, move in ((host, "d"), (guest, "d"), (host, "e")):
            await manager.handle(room, player, {"type": "move", "move": move})
        # each move was told to the players, and its sender was free again, though two
        # watchers never take a message (before: the first broadcast waited for them for ever)
        assert host.of_type("state")[-1]["room"]["position"] == "7x6:dde"
        assert guest.of_type("state")[-1]["room"]["position"] == "7x6:dde"
        assert all(conn.dropped for conn in deaf)  # given up: a SocketConnection closes its socket

    with_manager(store, lambda manager: asyncio.wait_for(body(manager), 30))  # a failure, not a hang


def test_a_crowd_of_spectators_is_told_in_one_state_not_one_each(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fifty spectators arrive, then leave: each newcomer gets its state at
    once, and the others hear of the whole crowd in one state (within
    ``CROWD_EVERY``), not of each one (before: 50·51/2 = 1,275 states for
    the arrivals alone).  A player's coming or going is told at once.
    ``CROWD_EVERY`` is 2 s here: the fifty arrive (and leave) within it
    even on a loaded machine (at 0.2 s, the first of them were told of the
    crowd before the last had come)."""
    monkeypatch.setattr(rooms, "CROWD_EVERY", 2.0)

    async def news(host: FakeConnection, since: int, crowd: list[FakeConnection], sent: int) -> list[int]:
        """The watchers of the host's states after its first ``since``, once
        the crowd's broadcast has reached every one of the crowd."""
        for _ in range(POLLS):
            if len(host.of_type("state")) > since and sum(len(c.sent) for c in crowd) >= sent:
                break
            await asyncio.sleep(0.01)
        return [s["room"]["watchers"] for s in host.of_type("state")[since:]]

    async def body(manager: RoomManager) -> None:
        room, host = await seated(manager, {"mode": "online", "seat": "A"})
        told = len(host.of_type("state"))
        crowd = [await connected(manager, room, None) for _ in range(50)]
        assert [len(c.of_type("state")) for c in crowd] == [1] * 50  # its own, at once
        assert crowd[-1].of_type("state")[-1]["room"]["watchers"] == 50
        assert await news(host, told, crowd, 100) == [50]
        assert sum(len(c.sent) for c in crowd) == 100  # each: its own state, then the crowd's
        told = len(host.of_type("state"))
        for conn in crowd:
            await manager.disconnect(room, conn)
        assert await news(host, told, [], 0) == [0]
        # a player is not a crowd: the guest's arrival is told at once
        guest_token, _ = manager.join(room, "guest")
        await connected(manager, room, guest_token)
        assert host.of_type("state")[-1]["room"]["seats"]["B"]["connected"] is True

    with_manager(store, body)


def test_a_connection_is_no_watcher_before_its_hello_and_one_that_never_says_it_is_counted_after_a_grace(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Review (two ``c4lab connect`` players, the server restarted): the
    host heard "1 person is watching", then "Nobody is watching now": the
    guest's new socket, before its hello, was counted as a spectator in the
    state the host's own hello sent to everyone.  A connection is counted
    once it said hello, or once it kept silent for ``HELLO_GRACE`` seconds
    (a client that never says it), and the others are told then."""
    monkeypatch.setattr(rooms, "HELLO_GRACE", 0.3)

    async def body(manager: RoomManager) -> None:
        room, host = await seated(manager, {"mode": "online", "seat": "A"})
        guest_token, _ = manager.join(room, "guest")
        guest = FakeConnection()
        assert await manager.attach(room.code, guest) is room  # its socket open, its hello not read yet
        await manager.handle(room, host, {"type": "move", "move": "d"})  # a state for everyone meanwhile
        for _ in range(POLLS):
            if host.of_type("state")[-1]["room"]["position"] == "7x6:d":
                break
            await asyncio.sleep(0.01)
        assert [s["room"]["watchers"] for s in host.of_type("state")] == [0] * len(host.of_type("state"))
        await manager.connect(room, guest, guest_token)
        assert host.of_type("state")[-1]["room"]["seats"]["B"]["connected"] is True
        silent = FakeConnection()
        await manager.attach(room.code, silent)
        assert silent.sent == [] and host.of_type("state")[-1]["room"]["watchers"] == 0
        for _ in range(POLLS):  # HELLO_GRACE, then the crowd's CROWD_EVERY
            if host.of_type("state")[-1]["room"]["watchers"] == 1:
                break
            await asyncio.sleep(0.01)
        assert host.of_type("state")[-1]["room"]["watchers"] == 1
        assert all(s["room"]["watchers"] == 0 for s in guest.of_type("state")[:-1])

    with_manager(store, body)


def test_a_rooms_broadcasts_go_out_one_at_a_time_so_a_crowd_leaving_holds_one_message_a_socket(
    store: FailingStore,
) -> None:
    in_flight = [0, 0]  # now, most

    class Counted(FakeConnection):
        async def send_text(self, text: str) -> None:
            in_flight[0] += 1
            in_flight[1] = max(in_flight)
            await asyncio.sleep(0)  # a send that takes a turn of the loop
            in_flight[0] -= 1
            await super().send_text(text)

    async def body(manager: RoomManager) -> None:
        room, host = await seated(manager, {"mode": "online", "seat": "A"})
        crowd = [Counted() for _ in range(40)]
        for conn in crowd:
            await manager.attach(room.code, conn)
        # every watcher leaves at once: each departure is told to those still there
        await asyncio.gather(*(manager.disconnect(room, conn) for conn in crowd))
        assert in_flight[1] <= len(crowd)  # not 40 broadcasts at once: 780 messages in flight
        assert host.of_type("state")[-1]["room"]["watchers"] == 0

    with_manager(store, body)


def test_a_finished_game_is_shown_and_reviewed_from_the_store_without_its_agent(store: FailingStore) -> None:
    async def play(manager: RoomManager) -> str:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "random"}, "board": "4x4"})
        await manager.handle(room, conn, {"type": "move", "move": "a"})
        await settled(room, 2)
        await manager.handle(room, conn, {"type": "resign"})
        return room.code

    code = with_manager(store, play)

    async def reopen(manager: RoomManager) -> None:
        state = manager.view(code)
        assert state is not None and state["status"] == "over" and state["seats"]["B"]["spec"] == "random"
        assert code not in manager.rooms  # shown from its row: no live room
        review = await manager.review(code)
        assert review is not None and [e["ply"] for e in review["entries"]] == [1, 2]
        conn = FakeConnection()  # a page opening it gets the room too, without its agent
        room = await manager.attach(code, conn)
        assert room is not None and room.seats["B"].agent is None
        await manager.send_state(room, conn)
        assert conn.sent[-1]["room"]["status"] == "over"
        assert manager.view("no-such-room") is None

    with_manager(store, reopen, limits=AgentLimits(allowed=DEFAULT_AGENTS - {"random"}))


def test_reading_a_frame_loads_no_room_manager_agent_or_numba() -> None:
    import subprocess
    import sys

    code = (
        "import sys, c4lab.server.protocol as p; p.parse('{\"type\": \"ping\"}');"
        "print(sorted(m for m in sys.modules if m.startswith(('numba', 'c4lab.agents', 'c4lab.server.rooms',"
        " 'c4lab.rules'))))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]", loaded


def test_the_socket_error_codes_are_the_documented_ones() -> None:
    from c4lab.server.errors import SOCKET_CODES

    text = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    paragraph = text[text.index("Error codes:"):].split("\n\n")[0]
    documented = set(re.findall(r"`([a-z]+(?:-[a-z]+)+)`", paragraph))
    assert documented == set(SOCKET_CODES)


def test_an_analysis_board_is_two_people_who_can_take_back_every_move(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "5x4/Bc2:c", "analysis": True})
        assert [room.seats[s].kind for s in "AB"] == ["human", "human"] and room.start_ply == 0
        await manager.handle(room, conn, {"type": "move", "move": "c+a"})
        await manager.handle(room, conn, {"type": "hint"})  # worked out in a task: the undo below does not wait
        for _ in range(POLLS):
            if conn.of_type("hint"):
                break
            await asyncio.sleep(0.01)
        assert conn.of_type("hint")[-1]["position"] == "5x4/Bc2:cc+a"  # the hint names its position
        for expected in ("5x4/Bc2:c", "5x4/Bc2"):  # the pasted move too
            await manager.handle(room, conn, {"type": "undo"})
            assert room.position.notation == expected
        with pytest.raises(RoomError) as online:
            manager.create({"mode": "online", "analysis": True})
        assert online.value.code == "bad-request"

    with_manager(store, body)


def test_an_analysis_board_is_stored_and_listed_as_one_and_comes_back_as_one(store: FailingStore) -> None:
    """Not a game: ``c4lab games`` says "analysis board" (never "playing",
    "abandoned" or who won), and after a restart its moves can still all
    be taken back."""
    async def made(manager: RoomManager) -> tuple[str, str]:
        board, conn = await seated(manager, {"board": "5x4:c", "analysis": True})
        await manager.handle(board, conn, {"type": "move", "move": "d"})
        game, _ = await seated(manager, {"board": "5x4", "players": {"A": "human", "B": "human"}})
        return board.code, game.code

    board, game = with_manager(store, made)
    rows = {row.code: row for row in store.all()}
    assert (rows[board].mode, rows[game].mode) == ("analysis", "local")
    assert rows[board].listing_line().endswith(f"{board}  analysis board  5x4:cd")
    assert rows[board].shown_status(now=rows[board].updated + 10 * 3600) == "open"  # never abandoned
    assert rows[game].shown_status(now=rows[game].updated + 10 * 3600) == "abandoned"

    async def reopen(manager: RoomManager) -> None:
        conn = FakeConnection()
        room = await manager.attach(board, conn)
        assert room is not None and (room.mode, room.analysis) == ("local", True)
        await manager.connect(room, conn, None)
        assert room.row().mode == "analysis"
        # the room object says so, for a page that has no choice of its own for the room
        assert conn.of_type("state")[-1]["room"]["analysis"] is True
        other = await manager.attach(game, FakeConnection())
        assert other is not None and other.state()["analysis"] is False

    with_manager(store, reopen)


async def two_players(manager: RoomManager) -> tuple[Room, FakeConnection, FakeConnection, str, str]:
    """An online room: Ann (A, the host) and Bob (B) connected; their tokens."""
    room, host_token, _ = manager.create({"mode": "online", "seat": "A", "name": "Ann", "board": "5x4"})
    host = await connected(manager, room, host_token)
    guest_token, _ = manager.join(room, "Bob")
    guest = await connected(manager, room, guest_token)
    return room, host, guest, host_token, guest_token


async def refused(manager: RoomManager, room: Room, conn: FakeConnection, action: str, code: str) -> None:
    """``action`` draws the error ``code`` and changes nothing, in memory or on disk."""
    before, row = room.state(), store_row(manager, room.code)
    with pytest.raises(RoomError) as error:
        await manager.handle(room, conn, {"type": "rematch", "action": action})
    assert error.value.code == code, error.value.message
    assert room.state() == before and store_row(manager, room.code) == row


def store_row(manager: RoomManager, code: str) -> Any:
    row = manager.store.load(code)
    assert row is not None
    return (row.position, row.status, row.result, row.seats)


def test_a_rematch_offered_and_accepted_swaps_the_sides_in_the_same_room_and_keeps_the_old_game(
    store: FailingStore,
) -> None:
    async def body(manager: RoomManager) -> None:
        room, host, guest, host_token, guest_token = await two_players(manager)
        watcher = FakeConnection()
        await manager.attach(room.code, watcher)
        await manager.connect(room, watcher, None)
        await manager.handle(room, host, {"type": "move", "move": "c"})
        await refused(manager, room, host, "offer", "not-allowed")  # during the game
        await manager.handle(room, guest, {"type": "resign"})
        finished = room.position.notation
        await refused(manager, room, watcher, "offer", "not-your-seat")  # a spectator
        await refused(manager, room, guest, "accept", "not-allowed")  # nothing offered yet
        await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        assert room.rematch == "A" and guest.of_type("state")[-1]["room"]["rematch"] == "A"
        assert watcher.of_type("rematch")[-1] == {"type": "rematch", "event": "offered", "seat": "A"}
        await refused(manager, room, host, "offer", "not-allowed")  # twice
        await refused(manager, room, host, "accept", "not-allowed")  # one's own offer
        await manager.handle(room, guest, {"type": "rematch", "action": "accept"})
        kept = f"{room.code}-1"
        assert host.of_type("rematch")[-1] == {"type": "rematch", "event": "accepted", "seat": "B", "kept": kept}
        # the same room: the new game from the start, Bob now A, Ann now B, the spectator still there
        assert (room.status, room.position.notation, room.rematch, room.earlier) == ("playing", "5x4", None, [kept])
        assert (room.seats["A"].name, room.seats["B"].name) == ("Bob", "Ann")
        assert room.seats_of(host_token) == {"B"} and room.seats_of(guest_token) == {"A"}
        assert (room.connections[host], room.connections[guest], room.connections[watcher]) == ({"B"}, {"A"}, set())
        for conn, you in ((host, ["B"]), (guest, ["A"]), (watcher, [])):
            state = conn.of_type("state")[-1]
            assert state["you"] == you and state["room"]["earlier"] == [kept] and state["room"]["kept"] is False
            assert state["room"]["seats"]["A"]["connected"] and state["room"]["seats"]["B"]["connected"]
        assert store_row(manager, room.code)[:3] == ("5x4", "playing", None)
        # the finished game, kept as its own: shown and reviewed, no seat for anyone's token
        old = manager.view(kept)
        assert old is not None and (old["position"], old["status"], old["result"]) == (finished, "over", "A")
        assert (old["seats"]["A"]["name"], old["seats"]["B"]["name"]) == ("Ann", "Bob")
        assert old["seats"]["A"]["taken"] and (await manager.review(kept)) is not None
        assert old["kept"] is True  # a record: a page shows no one present or away in it
        kept_room = await manager.attach(kept, FakeConnection())
        assert kept_room is not None and kept_room.seats_of(host_token) == set()
        # the new game is played by the swapped sides: Bob (A) moves first
        with pytest.raises(RoomError) as turn:
            await manager.handle(room, host, {"type": "move", "move": "a"})
        assert turn.value.code == "not-your-turn"
        await manager.handle(room, guest, {"type": "move", "move": "a"})
        await refused(manager, room, host, "offer", "not-allowed")
        # a second rematch keeps the second game under the next code
        await manager.handle(room, host, {"type": "resign"})
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        await manager.handle(room, host, {"type": "rematch", "action": "accept"})
        assert room.earlier == [kept, f"{room.code}-2"] and room.seats["A"].name == "Ann"
        assert manager.view(f"{room.code}-2")["position"] == "5x4:a"  # type: ignore[index]

    with_manager(store, body)


def test_a_rematch_declined_or_withdrawn_changes_nothing_but_the_offer(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rooms, "REMATCH_GRACE", 0.05)

    async def body(manager: RoomManager) -> None:
        room, host, guest, _, guest_token = await two_players(manager)
        await manager.handle(room, host, {"type": "resign"})
        finished = store_row(manager, room.code)
        await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        await manager.handle(room, guest, {"type": "rematch", "action": "decline"})
        assert host.of_type("rematch")[-1] == {"type": "rematch", "event": "declined", "seat": "B"}
        assert room.rematch is None and room.status == "over" and store_row(manager, room.code) == finished
        await refused(manager, room, guest, "decline", "not-allowed")  # nothing to decline
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        await manager.handle(room, guest, {"type": "rematch", "action": "decline"})  # taken back
        assert guest.of_type("rematch")[-1] == {"type": "rematch", "event": "withdrawn", "seat": "B"}
        assert room.rematch is None
        # offered, then whoever offered leaves: the offer goes with them, once they are not back in time
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        await manager.disconnect(room, guest)
        # the page then says that B left, not that B took the offer back (told after the offer is gone: waited for)
        await until(lambda: host.of_type("rematch")[-1].get("event") == "withdrawn")
        assert host.of_type("rematch")[-1] == {"type": "rematch", "event": "withdrawn", "seat": "B", "left": True}
        assert room.rematch is None
        # and the state that follows it says so (the page kept the offer's Accept, which then failed)
        await until(lambda: host.sent[-1]["type"] == "state")
        assert host.sent[-1]["room"]["rematch"] is None
        await refused(manager, room, host, "accept", "not-allowed")
        # both offering is both accepting
        await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        await connected(manager, room, guest_token, guest)
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        assert room.status == "playing" and room.earlier == [f"{room.code}-1"]
        assert store.load(f"{room.code}-1") is not None and store.load(room.code).status == "playing"  # type: ignore[union-attr]

    with_manager(store, body)


def test_a_rematch_that_cannot_be_saved_changes_nothing_and_keeps_no_game(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, host, guest, host_token, _ = await two_players(manager)
        await manager.handle(room, host, {"type": "resign"})
        await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        before = room.state()
        store.failing = True
        with pytest.raises(RoomError) as error:
            await manager.handle(room, guest, {"type": "rematch", "action": "accept"})
        store.failing = False
        assert error.value.code == "storage-failed"
        assert room.state() == before and room.seats_of(host_token) == {"A"} and room.connections[host] == {"A"}
        assert store.load(f"{room.code}-1") is None and store.load(room.code).status == "over"  # type: ignore[union-attr]
        await manager.handle(room, guest, {"type": "rematch", "action": "accept"})  # the offer stands: try again
        assert room.status == "playing" and room.earlier == [f"{room.code}-1"]

    with_manager(store, body)


def test_a_room_waiting_for_its_guest_has_no_game_to_move_resign_rematch_or_review(store: FailingStore) -> None:
    """Before a guest comes there is no game: a resignation made the absent
    guest the winner ("B won by resign", listed as a finished game).  Each
    is refused saying why, and nothing changes."""
    async def body(manager: RoomManager) -> None:
        room, host_token, _ = manager.create({"mode": "online", "seat": "A", "name": "Ann", "board": "5x4"})
        host = await connected(manager, room, host_token)
        before, row = room.state(), store_row(manager, room.code)
        for message, code in (({"type": "resign"}, "not-allowed"), ({"type": "move", "move": "a"}, "not-your-turn"),
                              ({"type": "rematch", "action": "offer"}, "not-allowed"), ({"type": "review"}, "not-allowed")):
            with pytest.raises(RoomError) as error:
                await manager.handle(room, host, message)
            assert error.value.code == code and "waiting for a second player" in error.value.message, message
            assert room.state() == before and store_row(manager, room.code) == row, message
        assert manager.join(room, "Bob")[1] == ["B"]  # the seat is still free

    with_manager(store, body)


def test_a_game_over_without_a_result_says_so_and_one_never_joined_has_no_rematch(store: FailingStore) -> None:
    """A room abandoned while it waited for its guest: a move said "the game
    is over (None won by abandoned)", a join "its players left" whatever the
    end, and a rematch could be offered to nobody."""
    async def body(manager: RoomManager) -> None:
        room, host_token, _ = manager.create({"mode": "online", "seat": "A", "name": "Ann", "board": "5x4"})
        host = await connected(manager, room, host_token)
        room.finish(None, "abandoned")  # as the countdown ends it (``presence``)
        manager.save_presence(room)
        with pytest.raises(RoomError) as error:
            await manager.handle(room, host, {"type": "move", "move": "a"})
        assert (error.value.code, error.value.message) == ("game-over", "the game is over (abandoned: the players left)")
        with pytest.raises(RoomError) as error:
            manager.join(room, "Bob")
        assert error.value.code == "game-over" and "(abandoned: the players left)" in error.value.message
        await refused(manager, room, host, "offer", "not-allowed")
        with pytest.raises(RoomError) as error:
            await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        assert "nobody took the other seat" in error.value.message
        # a game that was played names its end
        played, played_host, *_ = await two_players(manager)
        await manager.handle(played, played_host, {"type": "resign"})
        with pytest.raises(RoomError) as error:
            manager.join(played, "Cy")
        assert error.value.message == "this game is over (B wins: A resigned): open the link to see it"

    with_manager(store, body)


def test_a_rematch_is_for_online_rooms_and_its_message_is_checked() -> None:
    from c4lab.server.protocol import parse

    assert parse('{"type": "rematch", "action": "offer"}') == {"type": "rematch", "action": "offer"}
    for text in ('{"type": "rematch"}', '{"type": "rematch", "action": "again"}', '{"type": "rematch", "action": 1}'):
        with pytest.raises(RoomError) as error:
            parse(text)
        assert error.value.code == "bad-message"


def test_a_local_room_has_no_rematch(store: FailingStore) -> None:
    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"players": {"A": "human", "B": "human"}})
        await manager.handle(room, conn, {"type": "resign"})
        await refused(manager, room, conn, "offer", "not-allowed")

    with_manager(store, body)


def test_a_rooms_earlier_games_are_read_back_from_the_store(store: FailingStore) -> None:
    async def play(manager: RoomManager) -> tuple[str, str]:
        room, host, guest, host_token, guest_token = await two_players(manager)
        await manager.handle(room, host, {"type": "resign"})
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        await manager.connect(room, guest, None)  # the offer's player now only watches: the offer goes
        assert room.rematch is None and host.of_type("rematch")[-1]["event"] == "withdrawn"
        await manager.connect(room, guest, guest_token)
        await manager.handle(room, guest, {"type": "rematch", "action": "offer"})
        await manager.handle(room, host, {"type": "rematch", "action": "accept"})
        for conn in (host, guest):
            await manager.disconnect(room, conn)
        return room.code, host_token

    manager_tokens: dict[str, str] = {}
    original = RoomManager.join

    def join(self: RoomManager, room: Room, *args: Any, **kwargs: Any) -> tuple[str, list[str]]:
        token, seats = original(self, room, *args, **kwargs)
        manager_tokens[room.code] = token
        return token, seats

    async def reopen(manager: RoomManager) -> None:
        state = manager.view(code)
        assert state is not None and state["earlier"] == [f"{code}-1"] and state["rematch"] is None
        room = manager.get(code)
        assert room is not None and room.earlier == [f"{code}-1"] and room.seats_of(host_token) == {"B"}
        assert manager.view(f"{code}-1")["status"] == "over"  # type: ignore[index]

    code, host_token = with_manager(store, play)
    with_manager(store, reopen)  # a restart: a new manager over the same store


def test_the_background_warm_up_prepares_what_is_offered_once_in_its_own_thread(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``prepare_in_background`` (what the server compiles while the form is
    open) warms each agent the server offers on its board, one after the
    other in a thread that is not the agent pool, claims each like a room's
    warm-up, and skips what is not offered or already claimed."""
    from c4lab.agents import base as agents_base

    # a process of its own as far as claims go: an earlier test's room (random on 5x4, in the same pytest
    # process) claimed both kinds, and nothing was left to warm (a CI run)
    monkeypatch.setattr(agents_base, "_warmed", set())

    limits = AgentLimits(allowed=DEFAULT_AGENTS - {"heuristic"})

    async def body(manager: RoomManager) -> None:
        thread = manager.prepare_in_background((("random", "5x4"), ("heuristic", "5x4"), ("random", "5x4/Bb1")))
        assert thread is not None and thread.name == "c4lab-warm-up"
        thread.join(timeout=60)
        assert not thread.is_alive()
        assert {"random@5x4", "random@5x4B"} <= agents_base._warmed
        assert "heuristic@5x4" not in agents_base._warmed  # not offered here
        assert manager.prepare_in_background((("random", "5x4"),)) is None  # claimed already

    with_manager(store, body, limits=limits)


def test_what_comes_after_the_background_warm_ups_runs_after_the_last_one(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``then`` (``c4lab play``'s whole prepare in a child) runs in the
    warm-ups' thread once the last is done, and also where every warm-up
    was claimed already; not once the manager is closing."""
    from c4lab.agents import base as agents_base
    from c4lab.server import warmup

    monkeypatch.setattr(agents_base, "_warmed", set())
    events: list[str] = []
    monkeypatch.setattr(warmup, "warm_up", lambda spec, start: events.append(f"warm {spec}"))

    async def body(manager: RoomManager) -> None:
        thread = manager.prepare_in_background((("random", "5x4"), ("heuristic", "5x4")), then=lambda: events.append("then"))
        assert thread is not None
        thread.join(timeout=60)
        assert events == ["warm random", "warm heuristic", "then"]
        events.clear()
        thread = manager.prepare_in_background((("random", "5x4"),), then=lambda: events.append("then"))  # claimed
        assert thread is not None
        thread.join(timeout=60)
        assert events == ["then"]
        events.clear()
        manager._closing.set()
        thread = manager.prepare_in_background((("random", "6x5"),), then=lambda: events.append("then"))
        assert thread is not None
        thread.join(timeout=60)
        assert events == []

    with_manager(store, body)


def test_the_background_warm_ups_give_way_to_a_persons_move_hint_or_review(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background warm-up starts only while the agent pool is idle: numba
    compiles one function at a time, and a person's first hint on an empty
    cache waited behind the speculative ones.  One under way finishes; the
    next waits for the pool's task to end."""
    from c4lab.server import warmup

    events: list[str] = []
    first_started, release = threading.Event(), threading.Event()

    def warm_up(spec: str, start: Any) -> None:
        events.append(f"warm {spec}")
        first_started.set()

    monkeypatch.setattr(warmup, "warm_up", warm_up)
    monkeypatch.setattr(warmup, "claim", lambda kind: True)

    def persons_hint() -> None:
        release.wait(10)
        events.append("hint done")

    async def body(manager: RoomManager) -> None:
        pool = manager.executor
        assert isinstance(pool, AgentPool) and not pool.busy
        hint = asyncio.get_running_loop().run_in_executor(pool, persons_hint)
        assert pool.busy
        thread = manager.prepare_in_background((("random", "6x5"), ("heuristic", "6x5")))
        assert thread is not None
        await asyncio.sleep(0.3)
        assert events == [] and not first_started.is_set()  # waits while the hint runs
        release.set()
        await hint
        await asyncio.get_running_loop().run_in_executor(None, thread.join, 10)
        assert events == ["hint done", "warm random", "warm heuristic"]
        assert not pool.busy

    with_manager(store, body)


def test_the_agent_pool_counts_its_tasks_and_stops_waiting_when_told() -> None:
    """``AgentPool.busy`` covers a task waiting for a thread and one running,
    a task that raised too; ``wait_idle`` returns False at once when its
    stop event is set while the pool is busy."""
    pool = AgentPool(max_workers=1)
    gate = threading.Event()
    try:
        running = pool.submit(gate.wait, 10)
        queued = pool.submit(lambda: 1 / 0)
        assert pool.busy
        stop = threading.Event()
        stop.set()
        assert pool.wait_idle(stop) is False
        gate.set()
        running.result(10)
        with pytest.raises(ZeroDivisionError):
            queued.result(10)
        assert pool.wait_idle(threading.Event()) is True and not pool.busy
    finally:
        pool.shutdown(wait=True)


def test_closing_the_manager_waits_for_the_background_warm_up_under_way(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that stops while a warm-up compiles waits for it to end
    (bounded: ``WARM_UP_WAIT``) and starts no other: no thread is left
    inside numba's compiler while the interpreter shuts down."""
    from c4lab.server import rooms, warmup

    started: list[str] = []
    inside = threading.Event()

    def slow_warm_up(spec: str, start: Any) -> None:
        started.append(spec)
        inside.set()
        time.sleep(0.5)  # a compile under way when the manager closes

    monkeypatch.setattr(warmup, "warm_up", slow_warm_up)
    monkeypatch.setattr(warmup, "claim", lambda kind: True)
    threads: list[threading.Thread] = []

    async def body(manager: RoomManager) -> None:
        thread = manager.prepare_in_background((("random", "6x5"), ("heuristic", "6x5")))
        assert thread is not None
        threads.append(thread)
        await asyncio.get_running_loop().run_in_executor(None, inside.wait, 10)

    with_manager(store, body)  # closes the manager at the end of ``body``
    assert not threads[0].is_alive()
    assert started == ["random"]
    assert rooms.WARM_UP_WAIT >= 5


def test_a_server_that_ends_its_process_stops_without_waiting_for_the_warm_up_under_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``c4lab serve`` and ``play`` (``create_app(ends_process=True)``): the
    process ends at once after the server (``quick_exit.at_once``), so a
    Ctrl-C does not wait for a warm-up in numba's compiler (up to
    ``WARM_UP_WAIT``, 10 s, on a first start).  A server in a longer-lived
    process (the tests', an embedding program's) still waits for it."""
    from fastapi.testclient import TestClient

    from c4lab.server import warmup
    from c4lab.server.app import create_app

    release = threading.Event()
    inside = threading.Event()
    threads: list[threading.Thread] = []

    def slow_warm_up(spec: str, start: Any) -> None:
        inside.set()
        release.wait(60)  # a compile under way when the server stops

    background = RoomManager.prepare_in_background

    def recorded(self: RoomManager, wanted: tuple[tuple[str, str], ...], then: Any = None) -> threading.Thread | None:
        thread = background(self, wanted, then)
        if thread is not None:
            threads.append(thread)
        return thread

    monkeypatch.setattr(warmup, "warm_up", slow_warm_up)
    monkeypatch.setattr(warmup, "claim", lambda kind: True)
    monkeypatch.setattr(RoomManager, "prepare", lambda self, spec, start: None)
    monkeypatch.setattr(RoomManager, "prepare_in_background", recorded)
    monkeypatch.setattr(rooms, "WARM_UP_WAIT", 120.0)
    store = GameStore(tmp_path / "g.sqlite")
    try:
        with TestClient(create_app(store, warm_up=True, ends_process=True)):
            assert inside.wait(30)
        assert threads[0].is_alive()  # the server stopped while the warm-up went on
        release.set()
        threads[0].join(30)
        release.clear()
        inside.clear()
        with TestClient(create_app(store, warm_up=True)):
            assert inside.wait(30)
            threading.Timer(0.3, release.set).start()
        assert not threads[1].is_alive()  # this one was waited for
    finally:
        release.set()
        store.close()


def test_an_agent_that_cannot_play_on_the_rooms_board_is_refused_when_the_room_is_made(
    store: FailingStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from c4lab.learning import qlearning
    from c4lab.server.offered import QTABLE, offered_files

    table, _ = qlearning.train(qlearning.TrainConfig(board="4x4", episodes=200), eval_games=0)
    path = tmp_path / "q.npz"
    table.save(path)
    spec = "qlearning:table=q.npz"  # a room names a table the server offers by its file name

    async def body(manager: RoomManager) -> None:
        with pytest.raises(RoomError) as refused:
            manager.create({"players": {"A": "human", "B": spec}, "board": "7x6"})
        assert refused.value.code == "bad-agent"
        assert "cannot play on 7x6" in refused.value.message and "trained on 4x4 boards" in refused.value.message
        assert manager.rooms == {}
        closed: list[str] = []
        monkeypatch.setattr(Agent, "close", lambda self: closed.append(type(self).__name__))
        with pytest.raises(RoomError):  # the first seat's agent made, the second's refused: the first is closed
            manager.create({"players": {"A": "random", "B": spec}, "board": "7x6", "first": "A"})
        assert "RandomAgent" in closed
        room, _, _ = manager.create({"players": {"A": "human", "B": spec}, "board": "4x4"})  # its own board
        assert room.seats["B"].spec == spec

    with_manager(store, body, limits=AgentLimits(files=offered_files([(QTABLE, path)])))


async def answered(conn: FakeConnection, count: int, kinds: tuple[str, ...] = ("hint", "error")) -> list[dict[str, Any]]:
    """The first ``count`` hint answers (hints or error frames) ``conn`` got, waiting for them."""
    for _ in range(POLLS):
        got = [m for m in conn.sent if m["type"] in kinds]
        if len(got) >= count:
            return got
        await asyncio.sleep(0.01)
    raise AssertionError(f"only {conn.sent}")


def test_a_deeper_hint_goes_on_solving_the_columns_left_unknown(store: FailingStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """The analysis board asks ``{"type": "hint", "deeper": true}``: the
    first answer comes within the usual budget (here a millionth of a second:
    every column unknown), says ``solving``, and a further pass follows with
    the columns the solver settled then, the last one with ``solving``
    false.  A plain hint gets no further pass."""
    from c4lab.server import review
    from c4lab.server.limits import PERSONAL
    from c4lab.solver import Solver

    first_pass_solves_nothing(monkeypatch)
    monkeypatch.setattr(review, "DEEPER", (60.0,))

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "5x4", "analysis": True})
        await manager.handle(room, conn, {"type": "hint", "deeper": True})
        first, second = await answered(conn, 2)
        assert first["position"] == second["position"] == "5x4"
        assert first["solving"] is True and not all(c["exact"] for c in first["columns"])
        exact = {move.token: score for move, score in Solver().analyse(Position.parse("5x4")).items()}
        assert second["solving"] is False and second["moves"] == exact
        assert [c["score"] for c in second["columns"]] == [exact[letter] for letter in "abcde"]
        assert second["best"] == ["b", "c", "d"] and second["value"] == 0.5  # a draw, exact now
        await manager.handle(room, conn, {"type": "move", "move": "c"})
        await manager.handle(room, conn, {"type": "hint"})  # not deeper: one answer
        third = (await answered(conn, 3))[-1]
        await asyncio.sleep(0.3)
        assert third["position"] == "5x4:c" and third["solving"] is False and len(conn.of_type("hint")) == 3

    with_manager(store, body, limits=PERSONAL)


def test_a_deeper_hint_stops_its_search_once_its_position_is_left(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A further pass holds the room's thread for up to its budget (here a
    minute, on a board it never solves): a move, another hint or the page
    leaving stops it at once, and the next hint is answered."""
    from c4lab.server import review
    from c4lab.server.limits import PERSONAL

    monkeypatch.setattr(review, "PER_POSITION", 1e-6)

    monkeypatch.setattr(review, "SOLVABLE_CELLS", 0)  # nor while the engine compiles
    monkeypatch.setattr(review, "DEEPER", (60.0,))
    passes: list[review.Solver] = []
    deeper = review.Reviewer.deeper

    async def watched(self: review.Reviewer, position: Position, answer: dict, timeout: float, solver: Any) -> dict:
        passes.append(solver)
        return await deeper(self, position, answer, timeout, solver)

    monkeypatch.setattr(review.Reviewer, "deeper", watched)

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "9x8", "analysis": True})
        await manager.handle(room, conn, {"type": "hint", "deeper": True})
        first = (await answered(conn, 1))[0]
        assert first["position"] == "9x8" and first["solving"] is True
        for _ in range(POLLS):
            if passes and passes[0]._running is not None:
                break
            await asyncio.sleep(0.01)
        await manager.handle(room, conn, {"type": "move", "move": "d"})  # the position is left
        await manager.handle(room, conn, {"type": "hint", "deeper": True})
        second = (await answered(conn, 2))[-1]  # (would wait a minute for the thread)
        assert second["position"] == "9x8:d" and second["solving"] is True
        assert passes[0]._cancelled
        assert [m["position"] for m in conn.of_type("hint")] == ["9x8", "9x8:d"]  # nothing more for 9x8
        for _ in range(POLLS):  # the second pass under way (left before it began, it never begins)
            if len(passes) == 2 and passes[1]._running is not None:
                break
            await asyncio.sleep(0.01)
        await manager.disconnect(room, conn)  # the page leaves: its pass stops too
        for _ in range(POLLS):
            if len(passes) == 2 and passes[1]._cancelled and passes[1]._running is None:
                break
            await asyncio.sleep(0.01)
        assert passes[1]._cancelled and passes[1]._running is None

    with_manager(store, body, limits=PERSONAL)


def test_a_first_hint_stops_its_search_once_its_position_is_left(store: FailingStore, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a first start the solver goes on with a hint's open moves while
    the hint engine compiles (tens of seconds, holding the room's thread):
    a move stops it at once, the answer for the position left is only
    ``dropped`` (the page, which asks one question at a time, asks again),
    and the next position's hint is answered as soon as the engine is
    ready (before: the first hint ran on until the engine was ready, then
    asked it, and only then could the page ask for the one on screen)."""
    from c4lab.server import review
    from c4lab.server.limits import PERSONAL

    monkeypatch.setattr(review, "PER_POSITION", 1e-6)
    monkeypatch.setattr(review, "SOLVABLE_CELLS", 99)  # 9x8 too, which the solver never settles here
    monkeypatch.setattr(review, "_engines", {})
    compiled = threading.Event()
    monkeypatch.setattr(review, "warm_up_agent", lambda spec, position: compiled.wait(60))
    solvers: list[Any] = []
    hint = review.Reviewer.hint

    async def watched(self: review.Reviewer, position: Position, solver: Any = None) -> dict:
        solvers.append(solver)
        return await hint(self, position, solver)

    monkeypatch.setattr(review.Reviewer, "hint", watched)

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "9x8", "analysis": True})
        await manager.handle(room, conn, {"type": "hint"})
        for _ in range(POLLS):  # the solver goes on with the hint's open moves while the engine compiles
            if solvers and any(t.name == "c4lab-hint-solver-stop" for t in threading.enumerate()):
                break
            await asyncio.sleep(0.01)
        await manager.handle(room, conn, {"type": "move", "move": "d"})  # the position is left
        dropped = (await answered(conn, 1))[0]
        assert solvers[0].cancelled and not compiled.is_set()  # stopped while the engine still compiles
        assert dropped["position"] == "9x8" and dropped["dropped"] is True and dropped["columns"] == []
        await manager.handle(room, conn, {"type": "hint"})  # asked again, as the page does
        compiled.set()
        answer = (await answered(conn, 2))[-1]
        assert answer["position"] == "9x8:d" and len(answer["columns"]) == 9 and "dropped" not in answer
        await asyncio.sleep(0.2)
        assert [m.get("dropped", False) for m in conn.of_type("hint")] == [True, False]

    try:
        with_manager(store, body, limits=PERSONAL)
    finally:
        compiled.set()


def test_further_passes_take_at_most_half_the_threads_so_other_rooms_are_answered_meanwhile(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three analysis boards (one client may make dozens) each want a long
    further pass: one runs, the others wait for it, and the pool's other
    thread answers another room's hint at once (before: both threads held
    passes of up to --max-think seconds, and agents' moves queued behind
    them: ten such boards kept a 'hard' reply waiting 7 to 25 s)."""
    from c4lab.server import review
    from c4lab.server.limits import PERSONAL

    monkeypatch.setattr(review, "PER_POSITION", 1e-6)  # the first answers leave columns unknown

    monkeypatch.setattr(review, "SOLVABLE_CELLS", 0)  # nor while the engine compiles
    monkeypatch.setattr(review, "DEEPER", (60.0,))
    lock, running, most, go = threading.Lock(), [0], [0], threading.Event()

    def held(position: Position, answer: dict, timeout: float, solver: Any) -> dict:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            assert go.wait(30), "never let go"
            return answer
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(review, "deeper_hint", held)

    async def body(manager: RoomManager) -> None:
        boards = [await seated(manager, {"board": "9x8", "analysis": True}) for _ in range(3)]
        for room, conn in boards:
            await manager.handle(room, conn, {"type": "hint", "deeper": True})
            assert (await answered(conn, 1))[0]["solving"] is True
        for _ in range(POLLS):
            if running[0]:
                break
            await asyncio.sleep(0.01)
        other, conn = await seated(manager, {"board": "9x8", "analysis": True})
        await manager.handle(other, conn, {"type": "hint"})
        assert (await answered(conn, 1))[0]["position"] == "9x8"  # while the passes wait
        assert most[0] == 1
        go.set()
        for room, conn in boards:
            assert (await answered(conn, 2))[-1]["solving"] is False
        assert most[0] == 1

    with_manager(store, body, limits=PERSONAL)


def test_a_hints_deeper_must_be_true_or_false() -> None:
    from c4lab.server.protocol import parse

    assert parse('{"type": "hint", "deeper": true}')["deeper"] is True
    with pytest.raises(RoomError, match="'hint' takes a true or false 'deeper'"):
        parse('{"type": "hint", "deeper": "yes"}')


def test_hints_are_answered_in_turn_one_waiting_at_most_and_a_failure_is_an_error_frame(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    async def body(manager: RoomManager) -> None:
        room, conn = await seated(manager, {"board": "5x4", "analysis": True})

        async def slow_hint(position: Position, solver: Any = None) -> dict[str, Any]:
            asked.append(position.notation)
            await asyncio.sleep(0.05)
            if position.ply == 2:
                raise RuntimeError("the solver ran out of memory")
            return {"position": position.notation, "move": "a"}

        monkeypatch.setattr(manager.reviewer, "hint", slow_hint)
        for _ in range(5):  # asked faster than answered: one at work, one waiting, the rest dropped
            await manager.handle(room, conn, {"type": "hint"})
        await asyncio.sleep(0.01)  # the first is at work
        await manager.handle(room, conn, {"type": "move", "move": "c"})  # not held up by the hints
        assert room.position.notation == "5x4:c"
        first, second = await answered(conn, 2)
        assert (first["position"], second["position"]) == ("5x4", "5x4:c")  # each for the position when it starts
        await asyncio.sleep(0.2)
        assert asked == ["5x4", "5x4:c"]
        await manager.handle(room, conn, {"type": "move", "move": "c"})
        await manager.handle(room, conn, {"type": "hint"})
        failed = (await answered(conn, 3))[-1]
        assert failed["type"] == "error" and failed["code"] == "review-failed"
        assert "the solver ran out of memory" in failed["message"]
        await manager.handle(room, conn, {"type": "hint"})
        await manager.disconnect(room, conn)  # gone before its hint: nothing is worked out or sent
        await asyncio.sleep(0.2)
        assert asked == ["5x4", "5x4:c", "5x4:cc"] and len(conn.of_type("hint")) == 2

    with_manager(store, body)


def test_the_pages_name_fields_take_as_many_characters_as_the_server() -> None:
    """The page's name fields keep their ``maxlength`` (they work before any
    script runs); it is held here to the server's one rule, ``NAME_MAX``."""
    page = (Path(rooms.__file__).parent / "static" / "index.html").read_text(encoding="utf-8")
    fields = re.findall(r'<input id="(name|join-name)"[^>]*maxlength="(\d+)"', page)
    assert sorted(f for f, _ in fields) == ["join-name", "name"]
    assert {int(n) for _, n in fields} == {NAME_MAX}


class ClosedConnection(FakeConnection):
    """A page closed while it waited: every send fails as Starlette's does
    on a socket whose close was sent ("Cannot call "send" once a close
    message has been sent.", a RuntimeError)."""

    async def send_json(self, data: Any) -> None:
        raise RuntimeError('Cannot call "send" once a close message has been sent.')

    async def send_text(self, text: str) -> None:
        raise RuntimeError('Cannot call "send" once a close message has been sent.')


def test_a_review_whose_page_closed_while_it_was_solved_is_dropped_quietly(store: FailingStore) -> None:
    """A review takes seconds: a page closed meanwhile gets nothing, and
    the server goes on. The answer was sent to the closed socket and the
    error came out of the socket's handler (a traceback in the server's
    log, "Exception in ASGI application")."""
    async def body(manager: RoomManager) -> None:
        room, host, guest, _, _ = await two_players(manager)
        await manager.handle(room, host, {"type": "move", "move": "a"})
        await manager.handle(room, guest, {"type": "resign"})
        closed = ClosedConnection()
        await manager.handle(room, closed, {"type": "review"})  # before: the RuntimeError came out here
        await manager.handle(room, guest, {"type": "review"})  # the others' reviews still come
        assert [e["ply"] for e in guest.of_type("review")[-1]["entries"]] == [1]

    with_manager(store, body)


async def until(condition: Callable[[], bool]) -> None:
    """Wait (at most ``POLLS`` hundredths of a second) for ``condition()``."""
    for _ in range(POLLS):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came true")


def test_a_rematch_offer_stands_while_its_player_reloads_the_page(
    store: FailingStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page reloaded closes its socket and opens another at once: the
    offer was withdrawn at the close, so the player found it gone (and the
    other had been told they left). It stands for ``REMATCH_GRACE``
    seconds; a player gone for longer takes it with them."""
    monkeypatch.setattr(rooms, "REMATCH_GRACE", 0.3)

    async def body(manager: RoomManager) -> None:
        room, host, guest, host_token, _ = await two_players(manager)
        await manager.handle(room, host, {"type": "resign"})
        await manager.handle(room, host, {"type": "rematch", "action": "offer"})
        await manager.disconnect(room, host)  # the reload: the old page's socket closes...
        reloaded = await connected(manager, room, host_token)  # ...and the new page's opens
        await asyncio.sleep(0.5)  # past the grace
        assert room.rematch == "A" and reloaded.of_type("state")[-1]["room"]["rematch"] == "A"
        assert guest.of_type("rematch")[-1]["event"] == "offered"  # no word of a withdrawal
        await manager.handle(room, guest, {"type": "rematch", "action": "accept"})
        assert room.status == "playing" and room.seats["A"].name == "Bob"
        # offered again after the next game, then gone for good, with nobody else here
        await manager.handle(room, reloaded, {"type": "resign"})
        await manager.handle(room, reloaded, {"type": "rematch", "action": "offer"})
        await manager.disconnect(room, guest)
        await manager.disconnect(room, reloaded)
        assert manager.rooms.get(room.code) is room  # kept in memory while the offer stands
        await until(lambda: room.rematch is None and room.code not in manager.rooms)

    with_manager(store, body)
