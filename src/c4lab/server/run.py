"""Running the application on uvicorn: in the foreground (``c4lab serve``,
``c4lab play``) or in a background thread (tests, the local game)."""

from __future__ import annotations

import contextlib
import gc
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import uvicorn
from uvicorn.config import LOGGING_CONFIG

from c4lab.quick_exit import at_once
from c4lab.server import logs, storage
from c4lab.server.app import FIRST_WARM_UP, create_app
from c4lab.server.guard import UNLIMITED, GuardOptions
from c4lab.server.limits import AgentLimits
from c4lab.server.presence import IDLE_AFTER
from c4lab.server.storage import GameStore
from c4lab.server.warmup import PrepareAhead


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port nobody listens on right now."""
    return usable_port(host, None)


def usable_port(host: str, port: int | None) -> int:
    """The port a server can listen on at ``host`` now: ``port`` (bound as
    uvicorn binds it: the address may be reused), or with None a free one;
    ``ValueError``, one line that names the address and why, if there is
    none (the port taken, or a host that is no address of this machine)."""
    try:
        family = socket.getaddrinfo(host, port or 0, type=socket.SOCK_STREAM)[0][0]
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port or 0))
            return int(s.getsockname()[1])
    except OSError as exc:
        where = f"{host}:{port}" if port else host
        raise ValueError(f"cannot listen on {where}: {exc.strerror or exc}") from None


#: Listening on these means every interface: no one can open them.
EVERY_INTERFACE = ("0.0.0.0", "::", "")


def shown_host(host: str) -> str:
    """The host to print for a server on ``host``: itself, or for one on
    every interface (0.0.0.0, ::) this machine's address on its network --
    the one a visitor from elsewhere reaches it on (127.0.0.1 if none)."""
    if host not in EVERY_INTERFACE:
        return host
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.connect(("192.0.2.1", 9))  # sends nothing: only picks the outgoing address
            return str(s.getsockname()[0])
    except OSError:
        return "127.0.0.1"


#: The largest WebSocket frame uvicorn reads: above it the connection is
#: closed (1009) before the frame is read in full.  Messages between the
#: protocol's 4096 bytes and this get the ``too-large`` error instead.
MAX_FRAME = 16 * 1024


#: Seconds a stopping server waits for requests in progress (an agent's
#: move: at most ``--max-think``) before it cancels them and shuts down.
SHUTDOWN_WAIT = 15


#: The garbage collector's thresholds in a server that runs for long
#: (``gc.set_threshold``): the oldest generation is collected after 100
#: collections of the middle one rather than 10 (see ``settle_collector``).
GC_THRESHOLDS = (700, 10, 100)


def settle_collector() -> None:
    """Make the garbage collector's pauses rare in a long-running server.

    A full collection walks every object the process holds -- each open
    WebSocket has some 130 (uvicorn's protocol, the ASGI middleware's
    frames, the room's connection) -- with the event loop stopped: 500 ms
    at 2,000 rooms, every 10 to 15 s under load, which made the moves'
    p99 (``benchmarks/load_server.py``).  So: what the server holds at
    start (the modules, numba, FastAPI's models: 150,000 objects) is frozen
    out of every collection, and the oldest generation is collected ten
    times less often.  Reference cycles that die are still freed, later."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


class RoomServer(uvicorn.Server):
    """A uvicorn server of the rooms' app: when it stops, the rooms hear it
    before it closes their sockets (``Presence.stopping``: the players in a
    game all leave at the same moment, not in the order the sockets close)."""

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        state = getattr(self.config.app, "state", None)
        manager = getattr(state, "manager", None)
        if manager is not None:
            manager.presence.stopping()
        await super().shutdown(sockets)


class LongRunningServer(RoomServer):
    """``c4lab serve`` and ``c4lab play``: the collector settled before it
    starts; ``on_listening`` called once the socket accepts connections
    (the address is printed then, never before: a browser or a script that
    connects the moment it reads the line must not be refused)."""

    on_listening: Callable[[], None] | None = None
    #: Set when SIGTERM stopped it: the caller closes what it opened (the
    #: game database, checkpointed), then ends the process by SIGTERM.
    terminated: bool = False

    def run(self, sockets: list[socket.socket] | None = None) -> None:
        settle_collector()
        super().run(sockets)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self.on_listening is not None:
            self.on_listening()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """SIGINT and SIGTERM stop the server gracefully, lifespan shutdown
        included (the rooms closed), once: more presses change nothing, and
        the wait for requests in progress is bounded (``SHUTDOWN_WAIT``).
        uvicorn's own handling skips the app's shutdown on a second Ctrl-C
        and raises every captured signal again at the end: an impatient
        person's presses made tracebacks, "Aborted!" and status 1.  Here,
        after Ctrl-C the process ignores Ctrl-C and raises one
        ``KeyboardInterrupt`` (one line, status 130); after SIGTERM it sets
        ``terminated``, for the caller to close the database and raise
        SIGTERM once more, as uvicorn does (raised here, it ended the
        process before the database was closed: its ``-wal`` file stayed)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        from c4lab.ctrl_c import ctrl_c_ignored_from_now  # lazy: start-up time

        received: set[int] = set()

        def on_signal(signum: int, frame: Any) -> None:
            received.add(signum)
            self.should_exit = True

        previous = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            if signal.SIGINT in received:
                ctrl_c_ignored_from_now()
                del previous[signal.SIGINT]
            for signum, handler in previous.items():
                signal.signal(signum, handler)
        if signal.SIGINT in received:
            raise KeyboardInterrupt
        self.terminated = signal.SIGTERM in received


def make_server(
    store: GameStore, host: str, port: int, *, long_running: bool = False, log_level: str = "warning",
    access_log: bool = False, **options: Any
) -> uvicorn.Server:
    """A uvicorn server for the app over ``store`` (not started); ``options``
    are ``create_app``'s.  ``long_running``: a process of its own that
    serves until stopped (``settle_collector``), not a test's thread; its
    log has the time on every line, at ``log_level`` (``logs.config``,
    with uvicorn's line a request if ``access_log``)."""
    app = create_app(store, ends_process=long_running, **options)
    # A server of its own sets every logger's level in its configuration (uvicorn's
    # log_level would also set the access log's, which is on or off by itself).
    log_config, level = (logs.config(log_level, access_log), None) if long_running else (LOGGING_CONFIG, log_level)
    config = uvicorn.Config(
        app, host=host, port=port, ws="websockets-sansio", log_level=level, lifespan="on", ws_max_size=MAX_FRAME,
        log_config=log_config, access_log=access_log,
        loop="auto", http="auto",  # uvloop and httptools (dependencies), asyncio's loop and h11 where they are missing
        timeout_graceful_shutdown=SHUTDOWN_WAIT,
    )
    return (LongRunningServer if long_running else RoomServer)(config)


class BackgroundServer:
    """A server in a thread: ``start()`` waits until it listens, ``stop()``
    until it has shut down."""

    def __init__(self, store: GameStore, host: str = "127.0.0.1", port: int | None = None, **options: Any) -> None:
        self.host = host
        self.port = port or free_port(host)
        self.server = make_server(store, self.host, self.port, **options)
        self.thread = threading.Thread(target=self.server.run, name="c4lab-server", daemon=True)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 30.0) -> BackgroundServer:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start on {self.url}")
            time.sleep(0.01)
        return self

    def stop(self, timeout: float = 10.0) -> None:
        self.server.should_exit = True
        self.thread.join(timeout)


def run_in_foreground(
    db: str | Path | None, host: str, port: int | None, *, forfeit_after: float, local: bool,
    open_browser: bool = False, query: str = "", page: str = "", say: Callable[[str], None] = print,
    limits: AgentLimits | None = None, guard: GuardOptions = UNLIMITED, idle_after: float | None = IDLE_AFTER,
    room_prefix: str = "", log_level: str = "warning", access_log: bool = False,
    first_warm: tuple[str, str] = FIRST_WARM_UP,
) -> None:
    """``c4lab serve`` and ``c4lab play``: open the game database (a
    ``StorageError`` if it is not usable), say where the server listens and
    with which limits, open the page if asked (``page``: its path after
    the first ``/``, e.g. ``analyse``; ``query``: its query string), and
    serve until Ctrl-C.  ``first_warm``: the agent and board compiled (or
    loaded) first (``create_app``).
    The address is said (and the page opened) once the server accepts
    connections."""
    port = usable_port(host, port)  # before the database is opened: a refused start leaves nothing
    store = GameStore(db or storage.DEFAULT_DB)
    limits = limits or AgentLimits()

    def say_now(line: str) -> None:  # from the warm-ups' thread: a script reads it at once
        say(line)
        sys.stdout.flush()

    ahead = PrepareAhead(say_now)  # every agent on every board, once, when the server's own warm-ups are done
    server = make_server(
        store, host, port, forfeit_after=forfeit_after, limits=limits, guard=guard, idle_after=idle_after,
        warm_up=True, first_warm=first_warm, long_running=True, room_prefix=room_prefix, log_level=log_level,
        access_log=access_log, after_warm_ups=ahead,
    )
    root = f"http://{shown_host(host)}:{port}/"
    url = root + page + (f"?{query}" if query else "")
    where = " (listening on every interface)" if host in EVERY_INTERFACE else ""

    def announce() -> None:
        store.served_at(root, personal=local)  # a second ``c4lab play`` over this database opens this one
        what = "analysis board" if page == "analyse" else "game" if local else "server"
        say(f"c4lab {what} at {url}{where}  (games stored in {store.path}; Ctrl-C stops)")
        if not local:
            say(f"  {limits.describe()}")
            idle = "never" if idle_after is None else f"after {idle_after:g} s"
            say(f"  {guard.describe()}; absent players forfeit after {forfeit_after:g} s; rooms nobody uses end {idle}")
            if room_prefix:
                say(f"  room codes start with {room_prefix}-")
            say(f"  open a room on the page at that address, or in a terminal: c4lab connect {root.rstrip('/')} --new")
        sys.stdout.flush()  # a script reading the line may connect at once
        if open_browser:  # in a thread: some browsers' launchers wait, the server must not
            threading.Thread(target=open_page, args=(url,), name="c4lab-browser", daemon=True).start()

    # a LongRunningServer (make_server's type says only uvicorn.Server)
    server.on_listening = announce  # type: ignore[attr-defined]
    try:
        server.run()
    finally:
        ahead.stop()
        store.close()
        at_once()  # all is kept: a warm-up or a first move still compiling is not waited for
    if getattr(server, "terminated", False):  # its default disposition ends the process: status 143
        signal.raise_signal(signal.SIGTERM)


def open_page(url: str) -> None:
    """Open ``url`` in the default browser (nothing if none can be found)."""
    import webbrowser

    try:
        webbrowser.open(url)
    except webbrowser.Error:
        pass
