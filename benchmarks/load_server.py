"""A game server under load: N online rooms of two real WebSocket players.

    python3 benchmarks/load_server.py [--rooms 500 1000 2000 5000] [--duration 60] [--drivers 2]
    python3 benchmarks/load_server.py --kill [--rooms 1000] [--kill-after 20]
    python3 benchmarks/load_server.py --rooms 2 --duration 2 --drivers 1   # a quick check that it runs

For each N, a fresh ``c4lab serve`` (a subprocess, on a free loopback port
or ``--port``, with a new temporary database and its per-client rate limits
and caps lifted) gets N online rooms made over REST; each room gets two players,
each on its own WebSocket, who send ``hello`` with their token and then
play random legal moves with a think pause of 1 to 3 seconds.  When a game
ends, its two players make a new room and play again, so N games are always
going on.  The players run in ``--drivers`` processes (asyncio, the
``websockets`` client, like a browser offering permessage-deflate): one
process of Python is the bottleneck before the server is, beyond about
2,000 rooms.

A move's round trip is from sending the move to receiving the ``state``
broadcast that includes it (the server writes the move to SQLite before it
broadcasts: the state is the acknowledgement).  After ``--duration``
seconds the players stop starting moves, wait for the moves they sent, and
the stored games are read back: a move that was acknowledged but is not in
its stored game, or a move never acknowledged, is *lost*.  Printed per N:
moves per second (acknowledged within the window), the round trip at p50,
p99 and its maximum, the server's resident memory at the end and at its
peak (MiB: ``VmRSS`` and ``VmHWM`` of ``/proc/<pid>/status``), the CPU the
server and the drivers used (percent of one core, over the window), errors
(``error`` messages, failed requests, dropped connections), lost moves,
the games finished in the window and the seconds it took to make the
rooms and seat their players (the slowest driver's).

``--kill``: the server is killed with SIGKILL ``--kill-after`` seconds into
the games, restarted on the same database and port, and every player comes
back with its token and plays its game to the end (no new games then).
Printed: the moves acknowledged before the kill and how many of them the
restarted server has (in the state it sends a player coming back, and in
the database at the end), the players back, the games finished.

The machine is shared: run it alone (``flock /tmp/c4lab-cpu.lock ...``).
Run it on a numba cache the server has already filled (one ``c4lab
serve`` or one run of this script before): a server's first start
compiles its agents in the background (about 24 s of CPU, once per
install), and that lands in the first N's window (measured here: 500
rooms p99 243 ms on a cache missing some kernels, 3.7 ms right after).
The ``c4lab`` that runs is the one this Python imports.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import math
import multiprocessing
import os
import random
import resource
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from c4lab import precompiled
from c4lab.ctrl_c import run_stoppable

precompiled.measure_this_cpu()  # the server it starts runs the code compiled for this CPU, as after c4lab prepare

#: A player's think pause, seconds (uniform).
THINK = (1.0, 3.0)
#: Seconds a player waits for the acknowledgement of its last move once the run is over.
GRACE = 20.0
#: Seconds a player keeps trying to come back after losing its connection.
COME_BACK = 120.0
#: --kill: seconds without a message after which a player gives up (a stalled game).
STALLED = 60.0
#: Room set-ups (REST and WebSocket handshakes) a driver runs at once.
SETUPS_AT_ONCE = 50


# -- the server ---------------------------------------------------------------------------


def loopback_port(port: int = 0) -> int:
    """``port`` on 127.0.0.1 if a server can listen there now (bound as
    uvicorn binds it: the address may be reused), or with 0 a free one;
    ``OSError`` where it cannot (the port taken)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("127.0.0.1", port))
        return int(s.getsockname()[1])


class Server:
    """``c4lab serve`` in a subprocess on ``port``, over the database ``db``."""

    def __init__(self, db: Path, port: int, log: Path, extra: list[str]) -> None:
        self.db, self.port, self.log, self.extra = db, port, log, extra
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> None:
        command = [
            sys.executable, "-m", "c4lab", "serve", "--host", "127.0.0.1", "--port", str(self.port),
            "--db", str(self.db), "--rooms-per-minute", "0", "--joins-per-minute", "0",
            "--rooms-per-client", "0", "--max-rooms", "0", "--sockets-per-client", "0",
            "--forfeit-after", "3600", "--expire-idle", "3600",
            *self.extra,
        ]
        with open(self.log, "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            self._wait_until_it_answers(timeout)
        except BaseException:  # a stop (run_stoppable) or no answer: the server ends with this script
            self.kill()
            raise

    def _wait_until_it_answers(self, timeout: float) -> None:
        """Return once ``/api/limits`` answers; SystemExit if the server
        exits or is silent for ``timeout`` seconds."""
        assert self.process is not None
        deadline = time.monotonic() + timeout
        while True:
            if self.process.poll() is not None:
                # The log is in a temporary folder that is gone once this
                # exits: say its last line here, not only where it was.
                lines = [line for line in self.log.read_text(errors="replace").splitlines() if line.strip()]
                raise SystemExit(f"the server exited at start (status {self.process.returncode}): "
                                 f"{lines[-1].strip() if lines else 'no output'}")
            try:
                with urllib.request.urlopen(self.url + "/api/limits", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:  # (start kills it)
                raise SystemExit(f"the server did not answer within {timeout:g} s: see {self.log}")
            time.sleep(0.1)

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def memory_mib(self) -> tuple[float, float]:
        """(resident now, peak resident) in MiB, from ``/proc/<pid>/status``."""
        values = {}
        with open(f"/proc/{self.pid}/status") as status:
            for line in status:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    name, kib, _ = line.split()
                    values[name] = int(kib) / 1024
        return values["VmRSS:"], values["VmHWM:"]

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server has used (``/proc/<pid>/stat``)."""
        with open(f"/proc/{self.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()


def stored_games(db: Path) -> dict[str, tuple[str, str, str | None]]:
    """code -> (moves, status, reason) of every game in ``db`` (read only)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        rows = conn.execute("SELECT code, position, status, reason FROM games").fetchall()
    return {code: (position.partition(":")[2], status, reason) for code, position, status, reason in rows}


# -- the players --------------------------------------------------------------------------


@dataclass
class Stats:
    """What one driver process saw (sent back to the main process)."""

    rtts: list[float] = field(default_factory=list)  # seconds, moves acknowledged in the window
    moves: int = 0  # moves acknowledged in the window
    sent: int = 0
    unacknowledged: int = 0  # sent and never acknowledged
    errors: dict[str, int] = field(default_factory=dict)
    acked: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # room -> (ply, move) acknowledged
    games_finished: int = 0
    games_started: int = 0
    cpu: float = 0.0  # the driver's CPU seconds over the window
    setup: float = 0.0  # seconds to make and open the first rooms
    # --kill
    acked_before_kill: int = 0
    found_after_restart: int = 0
    players_cut: int = 0  # players whose connection dropped under a game still going on
    players_back: int = 0
    stored_unacknowledged: int = 0  # sent, not acknowledged before the kill, yet stored

    def error(self, kind: str) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1


@dataclass
class Game:
    code: str
    tokens: dict[str, str]
    over: bool = False
    reason: str | None = None


def _ply_and_moves(room: dict[str, Any]) -> tuple[int, str]:
    """The room's moves (one letter each: the classic board, no bonus) and their count."""
    moves = room["position"].split(":", 1)[1]
    return len(moves), moves


class Driver:
    """The players of ``rooms`` rooms, in one process."""

    def __init__(self, url: str, rooms: int, seed: int, kill: bool, pipe: Connection) -> None:
        self.url = url
        self.ws_url = url.replace("http://", "ws://")
        self.rooms = rooms
        self.rng = random.Random(seed)
        self.kill = kill
        self.pipe = pipe
        self.stats = Stats()
        self.go = asyncio.Event()
        self.window_end = float("inf")  # time.monotonic() when players stop starting moves
        self.setups = asyncio.Semaphore(SETUPS_AT_ONCE)
        self.http: httpx.AsyncClient | None = None

    @property
    def playing(self) -> bool:
        return time.monotonic() < self.window_end

    async def run(self) -> Stats:
        limits = httpx.Limits(max_connections=SETUPS_AT_ONCE, max_keepalive_connections=SETUPS_AT_ONCE)
        async with httpx.AsyncClient(base_url=self.url, limits=limits, timeout=60) as self.http:
            started = time.monotonic()
            ready = 0
            opened: asyncio.Queue[None] = asyncio.Queue()
            pairs = [asyncio.create_task(self.pair(opened)) for _ in range(self.rooms)]
            while ready < self.rooms:
                await opened.get()
                ready += 1
            self.stats.setup = time.monotonic() - started
            loop = asyncio.get_running_loop()
            self.pipe.send(("ready", self.stats.setup))
            message = await loop.run_in_executor(None, self.pipe.recv)
            assert message[0] == "go"
            self.window_end = message[1]
            cpu = time.process_time()
            self.go.set()
            if not self.kill:
                await asyncio.sleep(max(0.0, self.window_end - time.monotonic()))
                self.stats.cpu = time.process_time() - cpu
            await asyncio.gather(*pairs)
            if self.kill:
                self.stats.cpu = time.process_time() - cpu
        return self.stats

    async def pair(self, opened: asyncio.Queue[None]) -> None:
        """Two players: a room, its game to the end, then (unless ``--kill``) the next room."""
        first = True
        while first or (self.playing and not self.kill):
            game = await self.new_game()
            if game is None:
                if first:
                    opened.put_nowait(None)
                    first = False
                await asyncio.sleep(1.0)
                continue
            joined = {side: asyncio.Event() for side in ("A", "B")}
            players = [asyncio.create_task(self.player(game, side, joined[side])) for side in ("A", "B")]
            if first:
                for event in joined.values():
                    await event.wait()  # both said hello (or failed to)
                opened.put_nowait(None)
                first = False
            await asyncio.gather(*players)
            if game.over:
                self.stats.games_finished += 1

    async def new_game(self) -> Game | None:
        """A new online room with both seats taken (REST); None if it failed."""
        assert self.http is not None
        async with self.setups:
            try:
                made = await self.http.post("/api/rooms", json={"mode": "online", "seat": "A", "name": "bench"})
                if made.status_code != 200:
                    self.stats.error(f"create {made.status_code}")
                    return None
                ticket = made.json()
                joined = await self.http.post(f"/api/rooms/{ticket['code']}/join", json={"name": "bench"})
                if joined.status_code != 200:
                    self.stats.error(f"join {joined.status_code}")
                    return None
            except httpx.HTTPError as exc:
                self.stats.error(f"http {type(exc).__name__}")
                return None
        self.stats.games_started += 1
        return Game(ticket["code"], {"A": ticket["token"], "B": joined.json()["token"]})

    async def open(self, game: Game, gone_since: float | None) -> ClientConnection | None:
        """A socket to ``game``'s room; while coming back (``gone_since``),
        tried again until it opens or ``COME_BACK`` seconds have passed."""
        while True:
            try:
                if gone_since is None:
                    async with self.setups:
                        return await connect(f"{self.ws_url}/ws/{game.code}", open_timeout=30, ping_interval=None)
                return await connect(f"{self.ws_url}/ws/{game.code}", open_timeout=30, ping_interval=None)
            except (OSError, InvalidHandshake, TimeoutError) as exc:
                if gone_since is None:
                    self.stats.error(f"connect {type(exc).__name__}")
                    return None
                if time.monotonic() - gone_since > COME_BACK:
                    self.stats.error("did not come back")
                    return None
                await asyncio.sleep(0.2 + self.rng.random() * 0.3)

    def deadline(self, pending: tuple[int, str, float] | None) -> float | None:
        """Until when to wait for the next message (``time.monotonic()``)."""
        if self.kill:
            return time.monotonic() + STALLED
        if self.window_end == float("inf"):
            # Before the go: look again within a second for the window's end
            # (was: no deadline, and where the first move's think outlasted
            # a short --duration, no move ever came and the run never ended).
            return time.monotonic() + 1.0
        if self.playing:
            return self.window_end
        return pending[2] + GRACE if pending is not None else time.monotonic()

    async def player(self, game: Game, side: str, joined: asyncio.Event) -> None:
        """One seat of ``game`` until it is over (or the run is, with nothing of its own in flight)."""
        pending: tuple[int, str, float] | None = None  # (ply, move, sent) of the move in flight
        thinking: asyncio.Task[None] | None = None
        acked = self.stats.acked.setdefault(game.code, [])
        said_hello = False
        came_back = False
        gone_since: float | None = None

        def mine(ply: int) -> bool:
            return (ply % 2 == 0) == (side == "A")

        async def think(socket: ClientConnection, ply: int, legal: list[str]) -> None:
            nonlocal pending
            await self.go.wait()
            await asyncio.sleep(self.rng.uniform(*THINK))
            if not self.playing:
                return
            move = self.rng.choice(legal)
            pending = (ply, move, time.monotonic())
            self.stats.sent += 1
            try:
                await socket.send(json.dumps({"type": "move", "move": move}))
            except ConnectionClosed:
                pass  # the reader sees it too

        while True:
            socket = await self.open(game, gone_since)
            if socket is None:
                joined.set()
                return
            try:
                await socket.send(json.dumps({"type": "hello", "token": game.tokens[side]}))
                while True:
                    deadline = self.deadline(pending)
                    try:
                        async with asyncio.timeout_at(deadline):  # asyncio's clock is time.monotonic()
                            raw = await socket.recv()
                    except TimeoutError:
                        if self.kill:
                            self.stats.error("stalled")
                            return
                        if self.playing or (pending is not None and time.monotonic() < pending[2] + GRACE):
                            continue
                        break  # the run is over (and the grace period of our move too)
                    message = json.loads(raw)
                    kind = message["type"]
                    if kind == "error":
                        self.stats.error(f"error {message['code']}")
                        if message["code"] == "rate-limited" and not said_hello:
                            # The server refused the socket (a cap of --server-option):
                            # this seat is out (was: reopened for ever, the run never began).
                            joined.set()
                            return
                        continue
                    if kind != "state" or message["you"] != [side]:
                        continue  # the spectator's first state
                    if not said_hello:
                        said_hello = True
                        joined.set()
                    now = time.monotonic()
                    room = message["room"]
                    moves = room["position"].partition(":")[2]  # one letter a move: the classic board
                    ply = len(moves)
                    if gone_since is not None:  # back after losing the connection (the kill)
                        if not came_back:
                            came_back = True
                            self.stats.players_back += 1
                            self.stats.found_after_restart += sum(
                                1 for p, m in acked if mine(p) and p < ply and moves[p] == m
                            )
                        gone_since = None
                        if pending is not None:
                            if pending[0] < ply and moves[pending[0]] == pending[1]:
                                self.stats.stored_unacknowledged += 1
                                acked.append((pending[0], pending[1]))
                            pending = None
                    if pending is not None and ply > pending[0]:
                        if moves[pending[0]] != pending[1]:
                            self.stats.error("a different move was stored")
                        else:
                            self.stats.moves += 1 if self.playing else 0
                            self.stats.rtts.append(now - pending[2])
                            acked.append((pending[0], pending[1]))
                        pending = None
                    if room["status"] == "over":
                        game.over, game.reason = True, room["reason"]
                        break
                    if not self.playing and not self.kill:
                        if pending is None:
                            break  # the run is over and nothing of ours is in flight
                        continue
                    to_move = room["status"] == "playing" and room["to_move"] == side and pending is None
                    if to_move and (thinking is None or thinking.done()):
                        thinking = asyncio.create_task(think(socket, ply, room["legal_moves"]))
            except ConnectionClosed:
                pass
            finally:
                if thinking is not None:
                    thinking.cancel()
                await socket.close()
            if game.over or not (self.playing or self.kill):
                if pending is not None:
                    self.stats.unacknowledged += 1
                return
            # the connection dropped under a game still going on: come back with the token
            if not self.kill:
                self.stats.error("connection dropped")
            if gone_since is None:
                gone_since = time.monotonic()
                self.stats.acked_before_kill += sum(1 for p, _ in acked if mine(p))
                if not came_back:
                    self.stats.players_cut += 1
            await asyncio.sleep(0.2 + self.rng.random() * 0.3)


def drive(url: str, rooms: int, seed: int, kill: bool, pipe: Connection) -> None:
    """A driver process: play, then send back its ``Stats``.  Its garbage
    collector is off: a full collection over thousands of sockets pauses the
    process for hundreds of milliseconds, which would count as round trips
    of the server's (the run is short: its cyclic garbage waits)."""
    gc.disable()
    raise_file_limit()
    try:
        stats = asyncio.run(Driver(url, rooms, seed, kill, pipe).run())
    except Exception as exc:  # noqa: BLE001  (one line to the main process, no traceback)
        pipe.send(("failed", f"{type(exc).__name__}: {exc}"))
        return
    pipe.send(("done", stats))


# -- the runs -----------------------------------------------------------------------------


def raise_file_limit() -> None:
    """As many open files as allowed: 5,000 rooms are 10,000 sockets on each side."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def start_drivers(url: str, rooms: int, drivers: int, kill: bool, seed: int) -> list[tuple[Any, Connection]]:
    context = multiprocessing.get_context("spawn")
    started = []
    for i in range(drivers):
        share = rooms // drivers + (1 if i < rooms % drivers else 0)
        ours, theirs = context.Pipe()
        process = context.Process(target=drive, args=(url, share, seed + i, kill, theirs), daemon=True)
        process.start()
        started.append((process, ours))
    return started


def receive(pipe: Connection, kind: str) -> Any:
    message = pipe.recv()
    if message[0] == "failed":
        raise SystemExit(f"a driver failed: {message[1]}")
    assert message[0] == kind, message
    return message[1]


def merge(all_stats: list[Stats]) -> Stats:
    total = Stats()
    for s in all_stats:
        total.rtts += s.rtts
        for name in ("moves", "sent", "unacknowledged", "games_finished", "games_started", "cpu",
                     "acked_before_kill", "found_after_restart", "players_cut", "players_back",
                     "stored_unacknowledged"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        total.setup = max(total.setup, s.setup)
        for kind, count in s.errors.items():
            total.errors[kind] = total.errors.get(kind, 0) + count
        total.acked.update(s.acked)
    return total


def missing_from_store(stats: Stats, db: Path) -> int:
    """Acknowledged moves that are not in their stored game."""
    games = stored_games(db)
    missing = 0
    for code, acked in stats.acked.items():
        moves = games.get(code, ("", "", None))[0]
        missing += sum(1 for ply, move in acked if ply >= len(moves) or moves[ply] != move)
    return missing


def py_spy() -> str | None:
    """py-spy's program (beside this Python, else on the PATH), or None."""
    return shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")


def profile(pid: int, seconds: float, output: Path) -> subprocess.Popen[bytes]:
    """py-spy (``pip install py-spy``) sampling the server for ``seconds``,
    without pausing it: its stacks, collapsed (one line each, with a count)."""
    output.parent.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [py_spy() or "py-spy", "record", "--pid", str(pid), "--duration", str(int(seconds)), "--rate", "200",
         "--nonblocking", "--format", "raw", "--output", str(output)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


def run_load(
    rooms: int, duration: float, drivers: int, workdir: Path, extra: list[str], seed: int,
    profile_dir: Path | None = None, port: int = 0,
) -> dict[str, Any]:
    """One N: a fresh server (on ``port``, 0: a free one), ``rooms`` rooms
    played for ``duration`` seconds."""
    db = workdir / f"load-{rooms}.sqlite"
    server = Server(db, loopback_port(port), workdir / f"server-{rooms}.log", extra)
    server.start()
    try:
        started = start_drivers(server.url, rooms, drivers, False, seed)
        setup = max(receive(pipe, "ready") for _, pipe in started)
        cpu = server.cpu_seconds()
        window_start = time.monotonic()
        end = window_start + duration
        for _, pipe in started:
            pipe.send(("go", end))
        spy = profile(server.pid, duration, profile_dir / f"server-{rooms}.txt") if profile_dir else None
        while time.monotonic() < end:
            time.sleep(min(1.0, max(0.0, end - time.monotonic())))
        if spy is not None:
            spy.wait()
        server_cpu = server.cpu_seconds() - cpu
        rss, peak = server.memory_mib()
        stats = merge([receive(pipe, "done") for _, pipe in started])
        for process, _ in started:
            process.join(10)
        missing = missing_from_store(stats, db)
        lost = stats.unacknowledged + missing
        if lost:
            stats.errors[f"lost: {stats.unacknowledged} never acknowledged, {missing} acknowledged not stored"] = 0
    finally:
        server.stop()
    return {
        "rooms": rooms, "moves/s": stats.moves / duration, "p50": percentile(stats.rtts, 0.50) * 1000,
        "p99": percentile(stats.rtts, 0.99) * 1000, "max": max(stats.rtts, default=float("nan")) * 1000,
        "rss": rss, "peak": peak, "server_cpu": 100 * server_cpu / duration, "driver_cpu": 100 * stats.cpu / duration,
        "errors": sum(stats.errors.values()), "error_kinds": stats.errors, "lost": lost, "setup": setup,
        "games": stats.games_finished,
    }


def run_kill(rooms: int, kill_after: float, drivers: int, workdir: Path, extra: list[str], seed: int,
             port: int = 0) -> None:
    """``--kill``: SIGKILL mid-game, restart on the same database (and
    port: 0, a free one), everyone back and finishing."""
    db = workdir / f"kill-{rooms}.sqlite"
    server = Server(db, loopback_port(port), workdir / f"server-kill-{rooms}.log", extra)
    server.start()
    try:
        started = start_drivers(server.url, rooms, drivers, True, seed)
        for _, pipe in started:
            receive(pipe, "ready")
        for _, pipe in started:
            pipe.send(("go", float("inf")))
        time.sleep(kill_after)
        server.kill()
        killed = time.monotonic()
        server.start()
        print(f"killed the server {kill_after:g} s into the games; it listens again after "
              f"{time.monotonic() - killed:.1f} s", flush=True)
        stats = merge([receive(pipe, "done") for _, pipe in started])
        for process, _ in started:
            process.join(10)
        missing = missing_from_store(stats, db)
        games = stored_games(db)
    finally:
        server.stop()
    ours = [games[code] for code in stats.acked if code in games]
    by_result = sum(1 for _, status, reason in ours if status == "over" and reason in ("four", "full"))
    acked = sum(len(a) for a in stats.acked.values())
    print(f"rooms {rooms}, players {2 * rooms}")
    print(f"moves acknowledged before the kill: {stats.acked_before_kill}; "
          f"in the state each player got on coming back: {stats.found_after_restart}")
    print(f"moves acknowledged in all: {acked}; in the stored games at the end: {acked - missing} (missing {missing})")
    print(f"sent but not acknowledged before the kill, yet stored: {stats.stored_unacknowledged}")
    print(f"players back with their token: {stats.players_back} of the {stats.players_cut} cut off by the kill "
          f"({2 * rooms - stats.players_cut} had finished their game before it)")
    print(f"games finished (four in a row or a full board): {by_result} of {rooms} "
          f"(players saw {stats.games_finished} end)")
    print(f"errors: {sum(stats.errors.values())} {stats.errors or ''}")


def _ms(value: float, digits: int) -> str:
    """A round trip in the table's 7 columns: ``-`` where no move was
    acknowledged in the window (was: ``nan``)."""
    return f"{'-':>7}" if math.isnan(value) else f"{value:>7.{digits}f}"


def check_options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """One line naming the option and the value for a bad count, time or
    port, before any server starts (was: "--rooms, --drivers and
    --duration must be positive" for any of them, whichever it was)."""
    for rooms in args.rooms:
        if rooms < 1:
            parser.error(f"--rooms must be 1 or more (rooms at once), got {rooms}")
    if args.drivers < 1:
        parser.error(f"--drivers must be 1 or more (player processes), got {args.drivers}")
    if not 0 < args.duration < math.inf:
        parser.error(f"--duration must be a number of seconds above 0, got {args.duration:g}")
    if not 0 <= args.kill_after < math.inf:
        parser.error(f"--kill-after must be 0 or more seconds, got {args.kill_after:g}")
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0 (a free one) to 65535, got {args.port}")
    if args.port:
        try:
            loopback_port(args.port)
        except OSError as exc:
            parser.error(f"--port {args.port}: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rooms", type=int, nargs="+", default=[500, 1000, 2000, 5000],
                        help="N: rooms at once, one run each (default 500 1000 2000 5000)")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of play measured per N (default %(default)s)")
    parser.add_argument("--drivers", type=int, default=2, help="player processes, asyncio each (default %(default)s)")
    parser.add_argument("--kill", action="store_true", help="SIGKILL the server mid-game and restart it")
    parser.add_argument("--kill-after", type=float, default=20.0, help="--kill: seconds into the games (default %(default)s)")
    parser.add_argument("--seed", type=int, default=1,
                        help="the players' random moves and thinks (default %(default)s)")
    parser.add_argument("--profile", type=Path, metavar="DIR",
                        help="sample the server with py-spy over each window: DIR/server-N.txt (collapsed stacks)")
    parser.add_argument("--server-option", action="append", default=[], metavar="OPTION",
                        help="pass this on to c4lab serve (repeatable, e.g. --server-option=--agent-threads=1)")
    parser.add_argument("--port", type=int, default=0,
                        help="the server's port on 127.0.0.1 (default: a free one; on a shared machine, one of "
                             "yours)")
    args = parser.parse_args()
    check_options(parser, args)
    if args.profile is not None:
        # Before any server starts (was: exit status 1 once the rooms were up);
        # a profile of an earlier run is kept, not overwritten.
        taken = [str(args.profile / f"server-{n}.txt") for n in args.rooms
                 if (args.profile / f"server-{n}.txt").exists()]
        if taken:
            parser.error(f"--profile: {', '.join(taken)} exists already (not overwritten): another DIR")
        if py_spy() is None:
            parser.error("--profile needs py-spy: python3 -m pip install py-spy")
    raise_file_limit()
    limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    if 2 * max(args.rooms) / args.drivers + 200 > limit or 2 * max(args.rooms) + 200 > limit:
        parser.error(f"{max(args.rooms)} rooms need more open files than this system allows ({limit}): "
                     "fewer rooms or more --drivers")

    with tempfile.TemporaryDirectory(prefix="c4lab-load-") as tmp:
        workdir = Path(tmp)
        if args.kill:
            for rooms in args.rooms:
                run_kill(rooms, args.kill_after, args.drivers, workdir, args.server_option, args.seed, args.port)
            return
        print(f"{args.duration:g} s per N, think 1-3 s, {args.drivers} driver process(es); "
              "RTT: move sent -> its state received", flush=True)
        print(f"{'rooms':>6} {'moves/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'RSS MiB':>8} "
              f"{'peak MiB':>8} {'srv CPU':>7} {'drv CPU':>7} {'errors':>6} {'lost':>5} {'games':>6} {'setup s':>7}",
              flush=True)
        for rooms in args.rooms:
            r = run_load(rooms, args.duration, args.drivers, workdir, args.server_option, args.seed, args.profile,
                         args.port)
            print(f"{r['rooms']:>6} {r['moves/s']:>8.0f} {_ms(r['p50'], 1)} {_ms(r['p99'], 1)} {_ms(r['max'], 0)} "
                  f"{r['rss']:>8.0f} {r['peak']:>8.0f} {r['server_cpu']:>6.0f}% {r['driver_cpu']:>6.0f}% "
                  f"{r['errors']:>6} {r['lost']:>5} {r['games']:>6} {r['setup']:>7.1f}", flush=True)
            if r["error_kinds"]:
                print(f"       errors: {r['error_kinds']}", flush=True)


if __name__ == "__main__":
    run_stoppable(main)  # Ctrl-C, SIGTERM, SIGHUP: one line, the children ended (the finally blocks)
