"""``c4lab play``, ``analyse``, ``serve``, ``connect`` and ``games``: the
commands that start a game (the page or the terminal), a server, the
terminal client of an online room, and the list of stored games."""

from __future__ import annotations

import json
import os
import sys
import urllib.parse
from typing import TYPE_CHECKING, Any

import click

from c4lab.cli.group import main
from c4lab.cli.options import (
    GUARD,
    INT64,
    LIMITS,
    PRESENCE,
    BadInput,
    Finite,
    Int64,
    PageOrTerminal,
    bad_option,
    bonus_refused,
    checked_room_prefix,
    db_option,
    default_from,
    given,
    named_files,
    no_colour_option,
    no_page_options,
)
from c4lab.server.names import NAME_MAX  # the display name's rule: light (no server loaded)

if TYPE_CHECKING:
    from c4lab.rules import Position

# lazy imports: every command imports the parts it uses, so that ``c4lab
# --help`` and the light commands never load numba or the rules engine.


def _checked_start(board: str, bonus: bool) -> Position:
    """The start of a game on ``board`` (``--bonus``: with a bonus cell
    drawn), refused with the option that is wrong (``Invalid value for
    '--board': ...``) before anything starts (``play``, ``connect --new``)."""
    from c4lab.rules.errors import SecondBonusCellError  # lazy: start-up time
    from c4lab.rules.setup import check_start  # lazy: as above

    try:
        return check_start(board, bonus)
    except SecondBonusCellError as exc:  # --bonus with a board that names its own bonus cell
        raise bonus_refused(exc) from None
    except ValueError as exc:
        raise bad_option(str(exc), "--board") from None


def _check_game_options(board: str, bonus: bool, player1: str, player2: str) -> None:
    """``c4lab play``'s board and players, refused with the option that is
    wrong (``Invalid value for '--board': ...``) before a game starts: the page
    would only show a bad board in its form and refuse an agent when the game
    starts; the terminal game's own refusal would not name the option."""
    from c4lab.agents import make_agent  # lazy: start-up time

    start = _checked_start(board, bonus)
    for option, spec in (("--player1", player1), ("--player2", player2)):
        if spec != "human":
            try:
                agent = make_agent(spec)
                if not bonus and board != "random":  # the board of every game (else drawn for each game)
                    agent.check_board(start.variant)
            except ValueError as exc:
                raise bad_option(str(exc), option) from None


@main.command(cls=PageOrTerminal)
@click.option("--tui", is_flag=True, help="Play in the terminal instead of the browser.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser (print the address only).")
@click.option("--port", type=Int64(0, 65535), default=None,
              help="Port of the local server (default or 0: a free one, in the address printed).")
@db_option
@click.option(
    "--board",
    default="7x6",
    show_default=True,
    callback=given("board"),
    help="7x6, WxH, 'random' (the enhanced setup: a random size from 4x4 to 12x12 and one forbidden cell), "
    "or a position string: a board with its cells "
    "(6x5/Xc2: c2 forbidden; 8x7/Bd1: the bonus cell on d1) and moves to start from (9x8/Xd3:ddde).",
)
@click.option("--bonus", is_flag=True, help="Add a random bonus cell to a board that has none.")
@click.option("--player1", "-1", "player1", default="human", show_default=True, help="Agent spec or 'human'.")
@click.option(
    "--player2", "-2", "player2", **default_from("c4lab.agents.catalogue", "DEFAULT_LEVEL"),
    help="Agent spec or 'human' (levels: normal, hard, impossible, master).",
)
@click.option(
    "--first",
    type=click.Choice(["1", "2", "random"]),
    default="random",
    show_default=True,
    help="Which player plays A (moves first).",
)
@click.option("--seed", type=INT64, default=None,
              help="Seed for the draws (first player, random boards) of the terminal game (default: none, "
                   "new draws each run).")
@click.option("--delay", type=Finite(0), default=None,
              help="Seconds to pause after an agent's move (terminal game; default: 0.5 when two agents play on "
                   "a colour terminal, else 0).")
@click.option("--color/--no-color", default=None,
              help="Force the terminal game's colours on or off (default: when a terminal).")
@click.option("--network", "networks", multiple=True, metavar="FILE", callback=named_files,
              help="Offer this n-tuple network to the page's players as weights=ITS-FILE-NAME (repeatable; a "
                   "--player1/--player2 with weights=FILE or qlearning:table=FILE offers its file by itself).")
def play(
    tui: bool,
    no_browser: bool,
    port: int | None,
    db: str | None,
    board: str,
    bonus: bool,
    player1: str,
    player2: str,
    first: str,
    seed: int | None,
    delay: float | None,
    color: bool | None,
    networks: tuple[str, ...],
) -> None:
    """Play: in the browser (a local server on 127.0.0.1), or with --tui in
    the terminal."""
    if tui:  # the terminal game is local: a program named on one's own command line may play (engine:cmd=...)
        import c4lab.engine.client  # noqa: F401  (registers 'engine:cmd=...'; the page's server never starts programs)
    _check_game_options(board, bonus, player1, player2)
    if tui:
        no_page_options(port, db, no_browser)
        if networks:
            raise click.UsageError("--network is for the page in the browser: the terminal game's players "
                                   "name their own files (weights=FILE)")
        from c4lab.ui.terminal import GameSettings, run_terminal_game

        settings = GameSettings(
            board=board, bonus=bonus, players=(player1, player2), first=first, seed=seed, delay=delay,
            color=color,
        )
        try:
            sys.exit(run_terminal_game(settings))
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    for option, value in (("--seed", seed), ("--delay", delay)):
        if value is not None:  # the page's form draws the board and the first player, and paces the agents itself
            raise click.UsageError(f"{option} is for the terminal game (--tui): the page draws its own boards "
                                   "and first player, and plays the agents' moves as they come")
    no_colour_option(color)
    import dataclasses  # lazy: start-up time

    from c4lab.agents import parse_spec
    from c4lab.server.guard import PERSONAL_GUARD
    from c4lab.server.limits import PERSONAL
    from c4lab.server.offered import NETWORK, by_file_name, offered_files, spec_file  # lazy: as above
    from c4lab.server.presence import FORFEIT_AFTER

    # The page names a file by its file name (a room never opens a path): the players' own files (networks,
    # Q-tables) and --network's are offered to it, and the form gets the players with their file's name.
    wanted = [*(f for f in (spec_file(p) for p in (player1, player2) if p != "human") if f),
              *((NETWORK, n) for n in networks)]
    # An agent of one's own (a plugin's) named here is offered by this server, which is one's own too: it was
    # accepted here, then the page's own request for the game was refused ("not offered by this server").
    own = {parse_spec(p)[0] for p in (player1, player2) if p != "human"} - PERSONAL.allowed - {"qlearning"}
    try:
        limits = dataclasses.replace(PERSONAL, allowed=PERSONAL.allowed | own, files=offered_files(wanted))
    except ValueError as exc:  # a players' file was read already: a --network one, named
        raise BadInput(str(exc)) from None
    # The page's new-game form starts filled in with the options given here.
    query = {"board": board, "p1": by_file_name(player1), "p2": by_file_name(player2),
             "first": {"1": "A", "2": "B"}.get(first, "random")}
    if bonus:
        query["bonus"] = "1"
    _serve(
        host="127.0.0.1", port=port, db=db, forfeit_after=FORFEIT_AFTER, open_browser=not no_browser, local=True,
        query=urllib.parse.urlencode(query), limits=limits, guard=PERSONAL_GUARD, idle_after=None,
    )


@main.command(cls=PageOrTerminal)
@click.argument("position")
@click.option("--tui", is_flag=True, help="Analyse in the terminal instead of the browser.")
@click.option("--no-browser", is_flag=True, help="Do not open a browser (print the link only).")
@click.option("--port", type=Int64(0, 65535), default=None,
              help="Port of the local server (default or 0: a free one, in the address printed).")
@db_option
@click.option("--color/--no-color", default=None, help="Force the terminal's colours on or off (default: when a terminal).")
def analyse(position: str, tui: bool, no_browser: bool, port: int | None, db: str | None, color: bool | None) -> None:
    """Open POSITION on the analysis board: you make the moves of both
    sides, and after every move each column shows its score for whoever is
    to move (exact where the solver answers in time, else the engine's
    estimate, marked as such). In the browser (a local server on 127.0.0.1,
    the page /analyse?position=POSITION), or with --tui in the terminal.
    A bad POSITION is one line that says where, and nothing starts."""
    from c4lab.rules import Position

    try:
        start = Position.parse(position)
    except ValueError as exc:
        click.echo(f"Error: {exc}", err=True)
        sys.exit(2)
    if tui:
        no_page_options(port, db, no_browser, "the terminal analysis board")
        from c4lab.ui.terminal import GameSettings, run_terminal_game

        settings = GameSettings(board=start.notation, players=("human", "human"), first="1", color=color, analyse=True)
        sys.exit(run_terminal_game(settings))
    no_colour_option(color)
    from c4lab.server.guard import PERSONAL_GUARD
    from c4lab.server.limits import PERSONAL
    from c4lab.server.presence import FORFEIT_AFTER

    _serve(
        host="127.0.0.1", port=port, db=db, forfeit_after=FORFEIT_AFTER, open_browser=not no_browser, local=True,
        page="analyse", query=urllib.parse.urlencode({"position": start.notation}), limits=PERSONAL,
        guard=PERSONAL_GUARD, idle_after=None,
        first_warm=("perfect", start.notation),  # the page's hints: the solver, its fallback (the hint's engine)
    )


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (0.0.0.0: every one).")
@click.option("--port", type=Int64(0, 65535), default=8000, show_default=True,
              help="Port to listen on (0: a free one, in the address printed).")
@db_option
@click.option("--forfeit-after", type=Finite(0, min_open=True), **default_from(PRESENCE, "FORFEIT_AFTER"),
              help="Seconds an absent player has to come back before forfeiting.")
@click.option("--max-think", type=Finite(), **default_from(*LIMITS, "max_time"),
              help="Most seconds an agent may think about one move (time=; at least 1).")
@click.option("--max-iterations", type=INT64, **default_from(*LIMITS, "max_iterations"),
              help="Most iterations an agent may run for one move (iterations=).")
@click.option("--max-depth", type=INT64, **default_from(*LIMITS, "max_depth"),
              help="Deepest search an agent may ask for (depth=).")
@click.option("--agent-threads", type=INT64, **default_from(*LIMITS, "threads"),
              help="Worker threads for agents, hints and reviews (one room uses one at most).")
@click.option("--allow-agent", "allow_agents", multiple=True, metavar="NAME",
              help="Also let rooms use this agent (repeatable; never engine, which runs programs, nor "
                   "qlearning: see --qtable).")
@click.option("--network", "networks", multiple=True, metavar="FILE", callback=named_files,
              help="Let rooms use this n-tuple network as weights=ITS-FILE-NAME (ntuple:weights=net.npz; "
                   "repeatable): loaded and checked at start; no other file is ever opened for weights=.")
@click.option("--qtable", "qtables", multiple=True, metavar="FILE", callback=named_files,
              help="Let rooms use qlearning with this Q-table as table=ITS-FILE-NAME (qlearning:table=q.npz; "
                   "repeatable): loaded and checked at start; no other file is ever opened for table=.")
@click.option("--rooms-per-minute", type=Finite(0), **default_from(*GUARD, "rooms_per_minute"),
              help="New rooms a minute from one client address (0: no limit).")
@click.option("--joins-per-minute", type=Finite(0), **default_from(*GUARD, "joins_per_minute"),
              help="Seats taken a minute from one client address (0: no limit).")
@click.option("--rooms-per-client", type=Int64(min=0), **default_from(*GUARD, "rooms_per_client"),
              help="Open rooms one client address may have made (0: no limit).")
@click.option("--max-rooms", type=Int64(min=0), **default_from(*GUARD, "max_rooms"),
              help="Open rooms in all (0: no limit).")
@click.option("--sockets-per-client", type=Int64(min=0), **default_from(*GUARD, "sockets_per_client"),
              help="Room connections (pages, clients) open at once from one client address (0: no limit).")
@click.option("--expire-idle", type=Finite(1.0), **default_from(PRESENCE, "IDLE_AFTER"),
              help="Seconds before a room nobody has connected to ends (online) or leaves memory (local).")
@click.option("--allow-origin", "allow_origins", multiple=True, metavar="ORIGIN",
              help="Also accept browser requests from this page origin, e.g. https://c4.example.com, and let its pages "
                   "call the REST API from their own site (CORS) (repeatable; * any).")
@click.option("--room-prefix", default="", metavar="NAME", callback=checked_room_prefix,
              help="Start every new room's code with NAME- (letters and digits): one of several servers "
                   "behind a proxy that routes /r/NAME-..., /ws/NAME-... to it.")
@click.option("--log-level", type=click.Choice(["error", "warning", "info", "debug"]), default="info",
              show_default=True,
              help="What the log (standard error, the time on each line) says: info adds each room made, "
                   "each game ended and each request refused by the limits to the warnings.")
@click.option("--access-log", is_flag=True, help="Also log every HTTP request (uvicorn's access log) and, at info, "
              "each WebSocket's handshake, opening and closing.")
def serve(
    host: str, port: int, db: str | None, forfeit_after: float, max_think: float, max_iterations: int,
    max_depth: int, agent_threads: int, allow_agents: tuple[str, ...], networks: tuple[str, ...],
    qtables: tuple[str, ...], rooms_per_minute: float,
    joins_per_minute: float, rooms_per_client: int, max_rooms: int, sockets_per_client: int, expire_idle: float,
    allow_origins: tuple[str, ...], room_prefix: str, log_level: str, access_log: bool,
) -> None:
    """Host rooms for online play (and local games) on HOST:PORT.

    Agents are bounded (a room asking for more is refused, never cut down),
    each client address is rate-limited, and browsers may act only from
    this server's own pages (or --allow-origin): see docs/protocol.md.
    """
    from c4lab.server.guard import GuardOptions, normal_origin
    from c4lab.server.limits import AgentLimits, LimitError
    from c4lab.server.offered import NETWORK, QTABLE, offered_files  # lazy: start-up time

    try:
        offered = offered_files([*((NETWORK, n) for n in networks), *((QTABLE, t) for t in qtables)])
    except ValueError as exc:  # it names the option and the file
        raise BadInput(str(exc)) from None

    try:
        for origin in allow_origins:
            normal_origin(origin)
    except ValueError as exc:
        raise bad_option(str(exc), "--allow-origin") from None
    try:  # AgentLimits holds the bounds of its own settings
        limits = AgentLimits.with_agents(
            allow_agents, max_time=max_think, max_iterations=max_iterations, max_depth=max_depth, threads=agent_threads,
            files=offered,
        )
    except LimitError as exc:  # the option that set it
        option = {"max_time": "--max-think", "max_iterations": "--max-iterations", "max_depth": "--max-depth",
                  "threads": "--agent-threads"}.get(exc.limit)
        raise bad_option(exc.message, option) from None
    except ValueError as exc:  # a name --allow-agent cannot offer
        raise bad_option(str(exc), "--allow-agent") from None
    guard = GuardOptions(
        rooms_per_minute=rooms_per_minute or None, joins_per_minute=joins_per_minute or None,
        rooms_per_client=rooms_per_client or None, max_rooms=max_rooms or None,
        sockets_per_client=sockets_per_client or None, allow_origins=allow_origins,
    )
    _serve(
        host=host, port=port, db=db, forfeit_after=forfeit_after, open_browser=False, local=False,
        limits=limits, guard=guard, idle_after=expire_idle, room_prefix=room_prefix, log_level=log_level,
        access_log=access_log,
    )


def _serve(
    host: str, port: int | None, db: str | None, forfeit_after: float, open_browser: bool, local: bool,
    query: str = "", page: str = "", **options: Any,
) -> None:
    from c4lab.server.run import open_page, run_in_foreground
    from c4lab.server.storage import StorageError, StoreInUse

    try:
        run_in_foreground(
            db, host, port, forfeit_after=forfeit_after, local=local, open_browser=open_browser, query=query,
            page=page, say=click.echo, **options,
        )
    except StoreInUse as exc:
        if not (local and exc.personal and exc.url):
            raise BadInput(str(exc)) from None
        # ``c4lab play`` (or analyse) already runs over this database: its page serves this request as well
        target = exc.url + page + (f"?{query}" if query else "")
        click.echo(f"c4lab is already running at {exc.url} (process {exc.pid}, the same game database): "
                   f"{'opening' if open_browser else 'open'} {target}")
        if open_browser:
            open_page(target)
    except StorageError as exc:
        raise BadInput(str(exc)) from None
    except ValueError as exc:  # a limit the hints or a stored setting do not fit
        raise BadInput(str(exc)) from None



#: The longest first line a token file may have (a token is 32 characters).
TOKEN_LINE_LIMIT = 4096


def _token_from_file(path: str) -> str:
    """The token on the first line of ``path`` (``--token-file``): a file
    that cannot be read, is not text or holds no token is one line naming
    it, before anything connects (it was a traceback for a file not text).
    At most ``TOKEN_LINE_LIMIT`` characters are read: the wrong file given
    (a log of one long line, ``/dev/zero``) was read whole, or for ever."""
    try:
        with open(path, encoding="utf-8") as lines:
            first = lines.readline(TOKEN_LINE_LIMIT + 1)
    except UnicodeDecodeError:
        raise bad_option(f"{path!r} is not a text file: the token is the first line of one", "--token-file") from None
    except OSError as exc:
        raise bad_option(f"cannot read {path!r}: {exc.strerror or exc}", "--token-file") from None
    if len(first.rstrip("\r\n")) > TOKEN_LINE_LIMIT:
        raise bad_option(f"{path!r} holds no token: its first line is longer than {TOKEN_LINE_LIMIT:,} characters "
                         "(a token is 32)", "--token-file")
    token = first.strip()
    if not token:
        raise bad_option(f"{path!r} holds no token: its first line is empty", "--token-file")
    return token


def _checked_name(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--name``, checked before anything connects by the rule the server
    applies (``server.names.check_name``): a name the server would refuse
    was said only after the room was looked up, as "Cannot take the free
    seat: ...", and ``--name ''`` (a variable left unset) took the
    server's default name without a word."""
    if value is None:
        return None
    from c4lab.server.errors import RoomError  # lazy: start-up time
    from c4lab.server.names import check_name  # lazy: as above

    if not value.strip():  # the server would take it for none given: its default name, without a word
        what = "an empty name" if value == "" else "a name of spaces alone"
        raise click.BadParameter(f"{what}: a name has 1 to {NAME_MAX} characters (leave --name out "
                                 "for the server's default)")
    try:
        return check_name(value, "")
    except RoomError as exc:
        raise click.BadParameter(exc.message) from None


def _checked_link(url: str, new: bool) -> None:
    """``URL``, read as a room's link (with ``--new``, a server's address)
    before anything connects: one that is none is refused as every bad
    argument is (``Invalid value for 'URL': ...``, on standard error); it
    was a line on standard output."""
    from c4lab.ui.room_link import ConnectError, RoomAddress, server_base  # lazy: start-up time

    try:
        server_base(url) if new else RoomAddress.parse(url)
    except ConnectError as exc:
        raise click.BadParameter(exc.message, param_hint="'URL'") from None


def _new_room(board: str | None, bonus: bool, seat: str | None, public: bool, new: bool,
              holds: tuple[tuple[str, object], ...]) -> dict[str, object] | None:
    """The body of the room ``connect --new`` opens (None without
    ``--new``), its board checked as ``play``'s is; a room's option
    without ``--new``, or ``--new`` with a seat's (``holds``), refused."""
    if not new:
        given_alone = [option for option, value in (("--board", board), ("--bonus", bonus), ("--seat", seat),
                                                    ("--public", public)) if value]
        if given_alone:
            raise click.UsageError(f"{given_alone[0]} is for the room --new opens: add --new (and give the "
                                   "server's address, http://HOST:PORT)")
        return None
    clash = [option for option, value in holds if value]
    if clash:
        raise click.UsageError(f"--new opens a room and takes a seat of it: {clash[0]} is for joining a room")
    board = board or "7x6"
    _checked_start(board, bonus)
    return {"board": board, "bonus": bonus, "seat": seat or "random", "public": public}


@main.command()
@click.argument("url")
@click.option("--name", default=None, callback=_checked_name,
              help=f"Your display name when you take a free seat (1-{NAME_MAX} characters, plain text).")
@click.option("--token", default=None, envvar="C4LAB_TOKEN", show_envvar=True,
              help="The token of your seat: come back to a game you left (visible to others in ps: "
                   "prefer --token-file or C4LAB_TOKEN).")
@click.option("--token-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Read the token from this file (its first line).")
@click.option("--watch", is_flag=True, help="Watch as a spectator, even if a seat is free.")
@click.option("--new", is_flag=True, help="Open a new online room on the server at URL (http://HOST:PORT) and "
                                          "take a seat of it: the link to share is printed.")
@click.option("--board", default=None, metavar="BOARD",
              help="With --new: the room's board, as play's --board (default 7x6; 'random', 9x8/Xd3, 8x7/Bd1...).")
@click.option("--bonus", is_flag=True, help="With --new: add a random bonus cell to a board that has none.")
@click.option("--seat", type=click.Choice(["A", "B", "random"]), default=None,
              help="With --new: your seat, A (moves first), B or random (the default).")
@click.option("--public", is_flag=True, help="With --new: list the finished game on the server's /games.")
@click.option("--color/--no-color", default=None, help="Force colours on or off (default: when a terminal).")
def connect(
    url: str, name: str | None, token: str | None, token_file: str | None, watch: bool, new: bool,
    board: str | None, bonus: bool, seat: str | None, public: bool, color: bool | None,
) -> None:
    """Play or watch an online room in the terminal, or open one.

    URL is the room's link, http://HOST:PORT/r/CODE (or ws://HOST:PORT/ws/CODE);
    with --new, the server's address, http://HOST:PORT, where a new room
    is opened (--board, --bonus, --seat, --public), its link printed to
    share, and you wait in it for the other player.
    Without a token you take the free seat (the token to come back is
    printed), or watch if there is none. The token comes from --token-file,
    the C4LAB_TOKEN environment variable or --token (which other users of
    this machine can see in ps). Type a column letter or number; r resigns
    (after a confirmation), e exits. After a game in an online room, m
    offers a rematch in the same room, sides swapped (y accepts the other
    player's, n declines); spectators see the next game. A replay link
    (/games/CODE) watches. Exit status: 0 when the person leaves (or the
    game ends and no rematch can follow), 2 for a bad link, an unknown
    room or an address where nothing answers (said within seconds: is the
    server running, is the port right?), 1 for a connection lost for good
    (a server that answered and went away is tried again for two minutes,
    or as long as it keeps an absent player's seat, with a line saying so).
    """
    from c4lab.ui.online import run_online

    _checked_link(url, new)
    if new and click.get_current_context().get_parameter_source("token") is click.core.ParameterSource.ENVIRONMENT:
        token = None  # C4LAB_TOKEN left from another game: the new room's token is printed instead
    new_room = _new_room(board, bonus, seat, public, new,
                         (("--token", token), ("--token-file", token_file), ("--watch", watch)))
    if token_file is not None:
        token = _token_from_file(token_file)
    token_file = os.path.abspath(token_file) if token_file is not None else None  # said in the come-back line
    sys.exit(run_online(url, name=name, token=token or None, token_file=token_file, watch=watch, color=color,
                        new_room=new_room))


def _fit_terminal(line: str) -> str:
    """``line`` as is, or at a terminal narrower than it, broken between
    words with its further lines indented, a word longer than a line (a
    position string) kept whole: a listing line of ``c4lab games`` (about
    100 characters) broke in the middle of a word on an 80-column terminal.
    Piped, every game stays one line, for grep."""
    import shutil  # lazy: as the command's other imports
    import textwrap  # lazy: as above

    if not sys.stdout.isatty():
        return line
    width = shutil.get_terminal_size().columns
    return textwrap.fill(line, max(20, width), subsequent_indent="    ", break_long_words=False,
                         break_on_hyphens=False)


@main.command()
@db_option
@click.option("--json", "as_json", is_flag=True, help="One JSON object per game.")
@click.option("--limit", type=Int64(min=1), default=50, show_default=True, help="The most games listed.")
@click.option("--all", "unplayed", is_flag=True,
              help="Also the rooms that ended abandoned before a move was played in them (no game: left out).")
def games(db: str | None, as_json: bool, limit: int, unplayed: bool) -> None:
    """List the games stored by `c4lab play` (in the browser) or `c4lab
    serve`, newest first; the terminal game stores none, and a room that
    ended abandoned before its first move is no game (--all lists it). The file is only
    read (a read-only one too). A damaged game is named in an error line
    and the others are listed (exit status 2)."""
    from pathlib import Path

    from c4lab.server.storage import DEFAULT_DB, StorageError, read_games

    if db is None and not Path(DEFAULT_DB).exists():  # nothing stored yet: not an error
        click.echo(f"no games stored yet: games in the browser (`c4lab play`) and on `c4lab serve` are kept in "
                   f"{DEFAULT_DB}; the terminal game keeps none", err=True)
        return
    damaged: list[str] = []
    try:
        rows = read_games(db or DEFAULT_DB, limit + 1, damaged, unplayed)  # creates no file; one more: any left?
    except StorageError as exc:
        raise BadInput(str(exc)) from None
    for row in rows[:limit]:
        click.echo(json.dumps(row.listing()) if as_json else _fit_terminal(row.listing_line()))
    if len(rows) > limit:  # said on stderr: the listing itself stays one game a line
        newest = "the newest game" if limit == 1 else f"the newest {limit} games"
        click.echo(f"({newest} shown: --limit N shows more)", err=True)
    elif not rows and not damaged:
        left_out = "" if unplayed else " (a room that ended before its first move is none: --all lists those)"
        click.echo(f"no games stored in {db or DEFAULT_DB} yet{left_out}", err=True)
    if damaged:  # the others are listed; each damaged one is said, and the status says it too
        for line in damaged:
            click.echo(f"Error: {line}", err=True)
        sys.exit(2)
