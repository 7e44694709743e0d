"""The web application: the page, the REST API, a WebSocket per room.

See ``docs/protocol.md`` for the protocol.  ``create_app`` builds the app
around a ``GameStore``; ``c4lab play`` and ``c4lab serve`` run it on uvicorn.
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any, Literal

from fastapi import FastAPI, HTTPException, Request, WebSocket
from fastapi.encoders import jsonable_encoder
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.websockets import WebSocketDisconnect

from c4lab.agents import agent_infos
from c4lab.agents.catalogue import DEFAULT_LEVEL, catalogue
from c4lab.rules import Position
from c4lab.rules.position import load_kernels
from c4lab.server import warmup
from c4lab.server.cors import CrossOrigin
from c4lab.server.errors import BAD_TOKEN, NOT_ALLOWED, RATE_LIMITED, STORAGE_FAILED, UNKNOWN_ROOM, RoomError
from c4lab.server.guard import (
    UNLIMITED,
    Guard,
    GuardOptions,
    RateLimit,
    RoomOwners,
    Throttle,
    client_of,
    too_many,
)
from c4lab.server.headers import SecurityHeaders, page_policy
from c4lab.server.limits import AgentLimits
from c4lab.server.logs import one_line, refused
from c4lab.server.offered import KINDS
from c4lab.server.presence import FORFEIT_AFTER, IDLE_AFTER
from c4lab.server.protocol import dropped_action, parse
from c4lab.server.review import HINT_SPEC
from c4lab.server.rooms import RoomManager
from c4lab.server.storage import DamagedRow, GameStore, StorageError
from c4lab.server.telling import SEND_TIMEOUT

log = logging.getLogger(__name__)


class CreateRoom(BaseModel):
    """A new room (every field optional; a field of no such name is a 422
    naming it: a typo, ``borad``, made a 7x6 room without a word)."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["local", "online"] = "local"
    board: str | None = Field(None, description="'7x6', 'random' or a position string")
    width: StrictInt | None = None  # strict: "9" (a string) and 9.0 are refused, as true for 1 is
    height: StrictInt | None = None
    forbidden: str | None = Field(None, description="a cell name, with width and height")
    bonus: StrictBool = False
    players: dict[str, str] | None = Field(None, description="local: {'A': 'human' | spec, 'B': ...}")
    first: Literal["A", "B", "random"] = "A"
    seat: Literal["A", "B", "random"] = "random"
    name: str | None = None
    public: StrictBool = False  # strict: "yes" and 1 were taken for true
    analysis: StrictBool = Field(False, description="local: an analysis board (every move can be taken back)")


class JoinRoom(BaseModel):
    """Taking a room's free seat (a field of no such name is a 422 naming it)."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    request_id: str | None = Field(
        None, min_length=8, max_length=64, pattern=r"^[A-Za-z0-9_.:-]+$",
        description="chosen by the client: the same join again (its answer was lost) gets the same seat and token",
    )


class Ticket(BaseModel):
    """What the creator or the second player keeps: the room and a token."""

    code: str
    url: str
    token: str | None = Field(description="the token of the seats below; null where there are none (a room of two "
                                          "computers: its creator watches)")
    seats: list[str]
    link: str | None = Field(None, description="the room's full address, on the host and port the request was sent to")


class RevalidatedStatic(StaticFiles):
    """Static files that browsers re-check on each load (``no-cache``): the
    page has no build step to put versions in its script addresses, so this
    is what keeps a browser from running an old ``app.js`` after an upgrade."""

    def file_response(self, *args: Any, **kwargs: Any) -> Any:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


class SocketConnection:
    """A room connection over a WebSocket (sends are serialised), made in
    the task that handles it."""

    def __init__(self, socket: WebSocket, code: str = "") -> None:
        self.socket = socket
        self.code = code
        self._lock = asyncio.Lock()
        self.handler = asyncio.current_task()
        self.dropped = False

    async def send_json(self, data: Any) -> None:
        if not self.dropped:
            async with self._lock:
                await self.socket.send_json(data)

    async def send_text(self, text: str) -> None:
        if not self.dropped:
            async with self._lock:
                await self.socket.send_text(text)

    def drop(self) -> None:
        """Give up on a client that reads nothing (``telling.SEND_TIMEOUT``):
        nothing more is sent to it, and its handler ends as if it had left
        (the room lets its seat go; a send of its own that waits is
        cancelled with it)."""
        if not self.dropped:
            self.dropped = True
            log.warning("/ws/%s: a socket from %s took no message for %g s (it reads nothing): closed",
                        self.code, client_of(self.socket.scope), SEND_TIMEOUT)
            if self.handler is not None:
                self.handler.cancel()


def _load_kernels() -> None:
    """``load_kernels`` as the pool's initializer: a failure is logged, not
    raised (a pool whose initializer raised would refuse every later task:
    every move, hint and review of the server)."""
    try:
        load_kernels()
    except Exception:
        logging.getLogger(__name__).exception("the rules' kernels could not be loaded ahead")


def link_to(request: Request, code: str) -> str:
    """The room's address on the host the request reached (its Host header),
    not the address the server listens on (0.0.0.0 or 127.0.0.1)."""
    return f"{str(request.base_url).rstrip('/')}/r/{code}"


#: The most of an unknown room's code an answer repeats (a code is 16
#: characters, with a prefix some more).
SHOWN_CODE = 40


def no_room(code: str) -> str:
    """The answer for an unknown room: its code, cut to ``SHOWN_CODE``
    characters (an address of kilobytes is not sent back whole)."""
    shown = code if len(code) <= SHOWN_CODE else f"{code[:SHOWN_CODE]}... ({len(code)} characters)"
    return f"no room {shown!r}"


def _page() -> str:
    return resources.files("c4lab.server").joinpath("static/index.html").read_text(encoding="utf-8")


#: An address may open this many analysis boards for each game room its
#: ``rooms_per_minute`` allows (the default: 60 a minute against 10).
ANALYSIS_BOARDS = 6
#: What a server compiles (or loads) first, in the agent pool: the default
#: level on the classic board (``create_app``'s ``first_warm``).
FIRST_WARM_UP = (DEFAULT_LEVEL, "7x6")
#: What the server compiles (or loads) in the background after the default
#: level, while the new-game form is open, in this order: the random
#: playouts of the three other kinds of board (bonus or not, one-word
#: bitboard or line masks: about a second each; the levels' search is the
#: same on every board), ``master`` (also the hint) on the classic board
#: and on 9x8 (its policy playouts are compiled once per win-test
#: encoding, one-word bitboards or line masks), the exact solver's
#: three-word search, and last the learnt network of
#: the picker's research group, greedy and with PUCT (about 3 and 3-4 s of
#: CPU more; a first ``ntuple-puct`` move without it: 6.5-8 s).  Once per
#: install: later starts load them from numba's cache in milliseconds.
BACKGROUND_WARM_UPS: tuple[tuple[str, str], ...] = (
    ("hard", "7x6/Bd1"), ("hard", "9x8"), ("hard", "9x8/Bd1"), ("master", "7x6"), ("master", "9x8"), ("perfect", "9x8"),
    ("ntuple", "7x6"), ("ntuple-puct", "7x6"),
)


def create_app(
    store: GameStore,
    *,
    forfeit_after: float = FORFEIT_AFTER,
    agent_workers: int | None = None,
    hint_spec: str = HINT_SPEC,
    limits: AgentLimits | None = None,
    guard: GuardOptions = UNLIMITED,
    idle_after: float | None = IDLE_AFTER,
    warm_up: bool = False,
    first_warm: tuple[str, str] = FIRST_WARM_UP,
    room_prefix: str = "",
    ends_process: bool = False,
    after_warm_ups: Callable[[], None] | None = None,
) -> FastAPI:
    """The application over ``store`` (the caller opens and closes it).

    ``limits`` bound the agents (``AgentLimits()`` if none; ``agent_workers``
    overrides its thread count); ``guard`` sets the abuse limits (none by
    default: ``c4lab serve`` passes its options; the Origin check and the
    body cap always apply); ``idle_after``: ``presence.IDLE_AFTER``; ``warm_up``:
    at start, compile (or load) the kernels of ``first_warm`` (an agent and
    a board: the default level on the classic board; ``c4lab analyse``'s
    server, the exact solver and its fallback, the hint's engine, on the
    position's board) in the agent pool, before anyone asks, then those of
    ``BACKGROUND_WARM_UPS`` in a thread of their own once the pool is idle
    (``c4lab serve`` and ``play``: a new room's agents are prepared when it
    is made anyway);
    ``room_prefix``: every new room's code starts with it and a dash (one
    of several servers behind a proxy that routes by code); ``ends_process``:
    the server is the last work of its process, which ends at once when it
    stops (``c4lab serve`` and ``play``: ``quick_exit.at_once``), so its
    shutdown does not wait for a warm-up under way (up to
    ``rooms.WARM_UP_WAIT``, 10 s, in numba's compiler on a first start);
    ``after_warm_ups``: called in the background warm-ups' thread after the
    last of them (``c4lab play`` and ``serve``: ``warmup.PrepareAhead``)."""
    limits = limits or AgentLimits()
    threads = agent_workers or limits.threads
    # Each thread of the pool loads the rules' kernels before its first task (an agent's move or warm-up,
    # a hint, a review), so that no request of the event loop waits for numba's compiler lock while an
    # agent compiles (``load_kernels``).
    executor = warmup.AgentPool(max_workers=threads, thread_name_prefix="c4lab-agent", initializer=_load_kernels)
    manager = RoomManager(
        store, executor, forfeit_after=forfeit_after, hint_spec=hint_spec, limits=limits, idle_after=idle_after,
        room_prefix=room_prefix,
    )
    creations = Throttle(guard.rooms_per_minute) if guard.rooms_per_minute else None
    # An analysis board is a room too, but a person studying makes one for each position pasted or linked:
    # they have a budget of their own, ANALYSIS_BOARDS times the games'.
    analysis_rate = guard.rooms_per_minute * ANALYSIS_BOARDS if guard.rooms_per_minute else None
    analyses = Throttle(analysis_rate) if analysis_rate else None
    joins = Throttle(guard.joins_per_minute) if guard.joins_per_minute else None
    owners = RoomOwners()
    sockets: Counter[str] = Counter()  # client address -> its open room sockets

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        manager.resume()  # online rooms left open by a previous run end on time
        manager.start_sweeping()  # rooms nobody uses end (online) or leave memory (local)
        spec, board = first_warm
        if warm_up and spec in limits.agents:
            manager.prepare(spec, Position.parse(board))
        if warm_up:
            manager.prepare_in_background(BACKGROUND_WARM_UPS, then=after_warm_ups)
        yield
        await manager.close(0.0 if ends_process else None)
        executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="c4lab",
        description="Connect Four on variant boards: rooms, games and live play (see docs/protocol.md).",
        lifespan=lifespan,
    )
    app.state.manager = manager
    app.add_middleware(Guard, options=guard)  # the Origin check and the body cap, before anything is read
    if guard.allow_origins:  # outside the guard: its refusals (413) name the page's origin too, to be read
        app.add_middleware(CrossOrigin, allow_origins=guard.allow_origins)
    # outermost (added last): the guard's own refusals carry the headers too
    app.add_middleware(SecurityHeaders, policy=page_policy(_page()))

    @app.exception_handler(StorageError)
    async def storage_failed(request: Request, exc: StorageError) -> JSONResponse:
        """A read of the database that failed: one line in the log, never
        a traceback, and the client is not told the server's file names.
        A damaged row will not heal (500, said so); a lock held too long
        may (503: try again later)."""
        log.warning("%s %s: %s", request.method, one_line(request.url.path), exc)
        if isinstance(exc, DamagedRow):
            return JSONResponse({"detail": "this game's stored record is damaged: it cannot be read (the server's "
                                           "log says what is wrong)"}, 500)
        return JSONResponse({"detail": "the game database cannot be read right now: try again later"}, 503)

    @app.exception_handler(StarletteHTTPException)  # FastAPI's HTTPException is one, and the guard's ``too_many``
    async def refused_here(request: Request, exc: StarletteHTTPException) -> Response:
        """FastAPI's own answer; a refusal by the server's limits (429:
        a rate or a cap; 503: the server full) also gets its line in the
        log (``logs.refused``); an unknown address asked for by a browser
        (a page, not the API's JSON) gets the page, whose "Not found" says so."""
        if exc.status_code in (429, 503):
            refused(client_of(request.scope), request.method, request.url.path, exc.status_code, str(exc.detail))
        if (exc.status_code == 404 and request.method == "GET" and "text/html" in request.headers.get("accept", "")
                and not request.url.path.startswith(("/api/", "/static/"))):
            # a mistyped address in a browser: the page's own "Not found" (its router's), not {"detail": ...}
            return HTMLResponse(_page(), 404)
        cause = exc.__cause__
        if exc.status_code == 400 and isinstance(cause, (ValueError, RecursionError)):
            # FastAPI's "There was an error parsing the body" for JSON it could not read: say what
            return JSONResponse({"detail": f"the body is not JSON this server reads: {cause}"}, 400)
        return await http_exception_handler(request, exc)

    @app.exception_handler(RequestValidationError)
    async def invalid_body(request: Request, exc: RequestValidationError) -> JSONResponse:
        """A body of the wrong shape: 422 with where and what, as FastAPI
        says it, but without echoing the input back (it may be large, or a
        value JSON cannot write, such as ``Infinity``: FastAPI's own
        handler then failed with a 500).  Text that is not JSON says why
        (``ctx.error``: "Expecting ',' delimiter") where FastAPI says only
        "JSON decode error"; a key of the body in ``loc`` is cut short.  A
        body FastAPI did not read as JSON (its ``Content-Type`` is not
        JSON's: ``curl -d`` sends a form's) or no body says what to send,
        where FastAPI said "Input should be a valid dictionary or object to
        extract fields from" or "Field required"."""
        def where(part: Any) -> Any:
            return part if not isinstance(part, str) or len(part) <= SHOWN_CODE else f"{part[:SHOWN_CODE]}..."

        sent_as = request.headers.get("content-type")

        def what(error: dict[str, Any]) -> str:
            why = (error.get("ctx") or {}).get("error")
            if error.get("type") == "json_invalid" and why:
                return f"not JSON: {why}"
            if tuple(error.get("loc", ())) == ("body",) and error.get("type") == "missing":
                return "no body: send a JSON object ({} for every default) with Content-Type: application/json"
            if tuple(error.get("loc", ())) == ("body",) and isinstance(error.get("input"), bytes):  # not read as JSON
                return ("the body is read as JSON only when sent with Content-Type: application/json; this one "
                        + (f"was sent as {sent_as[:SHOWN_CODE]!r}" if sent_as else "has no Content-Type"))
            return str(error.get("msg", ""))

        errors = [{"loc": [where(part) for part in e.get("loc", ())], "msg": what(e), "type": str(e.get("type", ""))}
                  for e in exc.errors()]
        return JSONResponse({"detail": jsonable_encoder(errors)}, 422)
    static = resources.files("c4lab.server").joinpath("static")
    app.mount("/static", RevalidatedStatic(directory=str(static)), name="static")

    def fail(exc: RoomError) -> HTTPException:
        return HTTPException(exc.status, exc.message)

    def room_or_404(code: str) -> Any:
        room = manager.get(code)
        if room is None:
            raise HTTPException(404, no_room(code))
        return room

    def state_or_404(code: str) -> dict[str, Any]:
        state = manager.view(code)
        if state is None:
            raise HTTPException(404, no_room(code))
        return state

    @app.post("/api/rooms", response_model=Ticket)
    async def create_room(body: CreateRoom, request: Request) -> Ticket:
        """Create a room: local (you and/or agents) or online (you and a guest)."""
        client = client_of(request.scope)
        if body.analysis and analyses is not None and (wait := analyses.wait(client)):
            raise too_many(wait, f"too many new analysis boards from your address: at most {analysis_rate:g} a minute")
        if not body.analysis and creations is not None and (wait := creations.wait(client)):
            raise too_many(wait, f"too many new rooms from your address: at most {guard.rooms_per_minute:g} a minute")
        budget = analyses if body.analysis else creations  # its token goes back if no room is made
        try:
            if guard.rooms_per_client is not None and owners.open_count(client, manager.is_open) >= guard.rooms_per_client:
                raise too_many(60, f"your address has {guard.rooms_per_client} open rooms, the most allowed: "
                                   "finish or leave one first (a room nobody uses ends by itself)")
            if guard.max_rooms is not None and manager.open_count() >= guard.max_rooms:
                raise HTTPException(503, "this server is full: try again later", headers={"Retry-After": "60"})
            try:
                room, token, seats = manager.create(body.model_dump(exclude_unset=True, exclude_none=True))
            except RoomError as exc:
                raise fail(exc) from None
        except StarletteHTTPException:  # FastAPI's and the guard's ``too_many`` (Starlette's) alike
            if budget is not None:
                budget.give_back(client)
            raise
        owners.add(client, room.code)
        return Ticket(code=room.code, url=f"/r/{room.code}", token=token if seats else None, seats=seats,
                      link=link_to(request, room.code))

    @app.post("/api/rooms/{code}/join", response_model=Ticket)
    async def join_room(code: str, body: JoinRoom, request: Request) -> Ticket:
        """Take the free seat of an online room (a ``request_id`` makes a
        retry safe: the same id from the same address gets the same seat)."""
        client = client_of(request.scope)
        if joins is not None and (wait := joins.wait(client)):
            raise too_many(wait, f"too many joins from your address: at most {guard.joins_per_minute:g} a minute")
        room = room_or_404(code)
        try:
            token, seats = manager.join(room, body.name, body.request_id, client)
        except RoomError as exc:
            raise fail(exc) from None
        return Ticket(code=room.code, url=f"/r/{room.code}", token=token, seats=seats, link=link_to(request, room.code))

    @app.get("/api/rooms/{code}")
    async def get_room(code: str) -> dict[str, Any]:
        """A room's public state."""
        return state_or_404(code)

    @app.get("/api/agents")
    async def list_agents() -> list[dict[str, Any]]:
        """The computer players a seat can take, in the picker's order (the
        levels weakest first, the research agents, the experimental ones):
        name, group, a one-line summary, the full description and this
        server's ``limits`` on its parameters (``{"time": 5.0, ...}``), and
        for an agent that takes ``weights=`` the ``networks`` this server
        offers (``[{"name": "net.npz", "board": "6x5/Xc2"}]``: a room names
        one as ``weights=net.npz``), for one that takes ``table=`` its
        ``tables`` (``qlearning:table=q.npz``).  Only the server's
        allowlist, never the human, nor one whose optional package is
        missing here."""
        infos = {i.name: i for i in agent_infos() if limits.offered(i)}  # never offered if it cannot play
        files = {kind: [f.public() for f in limits.files if f.kind is kind] for kind in KINDS}
        return [
            {"name": o.name, "group": o.group, "summary": o.summary, "help": o.help,
             "limits": limits.agent_bounds(infos[o.name]),
             **{kind.key: listed for kind, listed in files.items()
                if any(p.name == kind.param for p in infos[o.name].params)}}
            for o in catalogue(list(infos.values()))
        ]

    @app.get("/api/limits")
    async def list_limits() -> dict[str, Any]:
        """This server's limits: on agents (think time, iterations, depth,
        threads, the allowed agents) and on each client (see docs/protocol.md)."""
        return {**limits.public(), **guard.public(), "idle_after": idle_after, "forfeit_after": forfeit_after}

    @app.get("/api/games")
    async def list_games() -> list[dict[str, Any]]:
        """Finished games whose host made them public, newest first (a
        damaged row is left out, with a warning in the log: the others are listed)."""
        damaged: list[str] = []
        rows = store.finished_public(damaged=damaged)
        for problem in damaged:
            log.warning("%s: left out of the public games", problem)
        return [
            {
                "code": row.code,
                "position": row.position,
                "result": row.result,
                "reason": row.reason,
                "finished": row.finished,
                "names": {side: seat["name"] for side, seat in row.seats.items()},
            }
            for row in rows
        ]

    @app.get("/api/games/{code}")
    async def get_game(code: str) -> dict[str, Any]:
        """One stored game, for replay (you need its code): read from the
        store if it is over (no live room, no agent)."""
        return state_or_404(code)

    @app.get("/api/games/{code}/review")
    async def review_game(code: str) -> dict[str, Any]:
        """The exact solver's verdict on every move of a finished game (the
        ``review`` message's answer); 409 while the game is still going on."""
        try:
            review = await manager.review(code)
        except RoomError as exc:
            raise HTTPException(409 if exc.code == NOT_ALLOWED else 503, exc.message) from None
        if review is None:
            raise HTTPException(404, no_room(code))
        return review

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/r/{code}", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/games", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/games/{code}", response_class=HTMLResponse, include_in_schema=False)
    @app.get("/analyse", response_class=HTMLResponse, include_in_schema=False)
    async def page(code: str | None = None) -> str:
        return _page()

    async def serve_socket(socket: WebSocket, code: str) -> None:
        """A room's socket, accepted and counted: its messages until it closes."""
        conn = SocketConnection(socket, code)
        try:
            room = await manager.attach(code, conn)
        except StorageError as exc:  # a stored room that cannot be read: say so, close cleanly
            log.warning("/ws/%s: %s", one_line(code), exc)
            await conn.send_json(RoomError(STORAGE_FAILED, "this room cannot be read right now").frame())
            await socket.close(code=1011)
            return
        if room is None:
            await conn.send_json(RoomError(UNKNOWN_ROOM, no_room(code)).frame())
            await socket.close(code=4404)
            return
        limiter = RateLimit()
        try:
            # its state at once, to this connection only: the others hear of it
            # with its hello (a player's page would count as a spectator until then)
            await manager.send_state(room, conn)
            while True:
                frame = await socket.receive()
                if frame["type"] == "websocket.disconnect":
                    break
                if not limiter.allow():
                    action = dropped_action(frame)
                    if action is not None:  # a move (resign, rematch, hello) lost unsaid: the bot could not know
                        await conn.send_json(RoomError(
                            RATE_LIMITED, f"too many messages: this '{action}' was not handled (slow down, then "
                                          "send it again)").frame())
                    elif limiter.should_warn():
                        refused(client_of(socket.scope), "WEBSOCKET", socket.url.path, 429,
                                "too many messages: dropped (said at most once a second)")
                        await conn.send_json(RoomError(RATE_LIMITED, "too many messages: slow down").frame())
                    continue
                try:
                    text = frame.get("text")
                    message = parse(text if text is not None else frame.get("bytes") or b"")
                    if message["type"] == "hello":
                        await manager.connect(room, conn, message.get("token"))
                    else:
                        await manager.handle(room, conn, message)
                except RoomError as exc:
                    await conn.send_json(exc.frame())
                    if exc.code == BAD_TOKEN:  # the connection keeps what it had: say what
                        await manager.send_state(room, conn)
        except WebSocketDisconnect:
            pass
        except asyncio.CancelledError:
            if not conn.dropped:  # the server stopping: not ours to swallow
                raise
        finally:
            await manager.disconnect(room, conn)

    @app.websocket("/ws/{code}")
    async def room_socket(socket: WebSocket, code: str) -> None:
        await socket.accept()
        client = client_of(socket.scope)
        cap = guard.sockets_per_client
        if cap is not None and sockets[client] >= cap:  # a page left open in every tab, or a flood
            message = f"too many open connections from your address: at most {cap} (close some pages)"
            refused(client, "WEBSOCKET", socket.url.path, 429, message)
            await socket.send_json(RoomError(RATE_LIMITED, message).frame())
            await socket.close(code=1013)  # try again later
            return
        sockets[client] += 1
        try:
            await serve_socket(socket, code)
        finally:
            sockets[client] -= 1
            if not sockets[client]:
                del sockets[client]

    return app
