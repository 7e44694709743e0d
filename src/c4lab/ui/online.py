"""``c4lab connect URL``: play or watch an online room from the terminal.

The client speaks the protocol of ``docs/protocol.md``: it looks the room up
(``GET /api/rooms/{code}``), takes the free seat if asked to play (``POST
/api/rooms/{code}/join``), or with ``--new`` opens a room on the server
(``POST /api/rooms``, a seat of it taken and its link said), then holds the room's WebSocket: ``hello`` with
the seat's token, a board for every new position (drawn like the terminal
game), a line for every other change (a player who leaves or comes back, an
agent thinking, an error), and the result at the end.  After a game in an
online room the players are offered a rematch (``m`` offers it, ``y``
accepts the other's, ``n`` declines or takes one's own back: the
``rematch`` message of the page); accepted, the next game, sides swapped,
is played in the same room and session, and spectators watch it too.
A server message the client cannot read is one line, and it goes on.
As in the terminal game, a player's lone ``e`` in a game on a board with
a column e asks before leaving (it may mean the column).

The keyboard is read in a daemon thread, one line at a time, so that the
socket is served while a person thinks: "your opponent left" shows up under
the prompt (``ui/keyboard_lines.py``).  At a terminal the line is edited as a shell's (arrow keys,
Home, End, Up for a line typed before: ``ui/line_editor.py``), and what
was typed so far is drawn again under such news.  On a terminal the keyboard is read all the time, on the
opponent's turn too (``KeyboardLines.live``): a line typed then is answered
at once (``e`` leaves, ``r`` asks whether to resign, anything else is told
it is not this player's move), never kept to answer a later prompt; a move
typed ahead would be played, and a "y" typed ahead would confirm a
resignation before its question was shown.  Lines piped in (a script)
answer the prompts in turn, as they come.  The client checks an entry
against the state's legal moves only to explain a mistake at once; the
server decides.

A server that goes away (a restart: 4 to 35 s on a slow machine) is
tried again for ``RETRY_FOR`` seconds (a player in a game: at least as
long as the server keeps an absent player's seat), with a line when the connection is
lost and one about every ``NOTE_EVERY`` seconds while it stays down.  An
address where nothing answers at the first contact (a wrong port, a
server not started) is tried for ``FIRST_CONTACT_FOR`` seconds only,
then said in one line with what to check.

Exit status: 0 when the person leaves (or the game is over and no rematch
can follow: a local room, a replay link, a spectator whose players left), 2 for a link
that leads to no room (bad URL, unknown room, no such host, nothing
answering at its address at the first contact, not a c4lab server), 1
when the connection is lost and cannot be made again within that time.

This module is the display and the keyboard; the transport (addresses, the
REST calls, the socket, the messages, what a failure means) is
``ui/room_link.py``, and what is said about the room, in words,
``ui/room_words.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from rich.console import Console

from c4lab.agents.human import (
    CONFIRM_WORDS,
    LEAVE_QUESTION,
    QUIT_WORDS,
    RESIGN_KEY,
    RESIGN_QUESTION,
    RESIGN_WORDS,
    _read_column,
    ban_offer,
    ban_prompt,
    column_full,
    move_prompt,
    not_a_ban,
    not_a_column,
    not_a_key,
    read_move_with_ban,
)
from c4lab.rules import Move, Position
from c4lab.rules.variant import column_letter
from c4lab.server import errors
from c4lab.ui import room_link as link
from c4lab.ui import room_words as words
from c4lab.ui.board_view import (
    board_text,
    draws_in_colour,
    game_console,
    legend,
    wrap_words,
)
from c4lab.ui.keyboard_lines import KeyboardLines, is_tty, read_in_thread
from c4lab.ui.room_link import EXIT_BAD_ROOM, EXIT_LOST, EXIT_OK, ConnectError, RoomAddress

EXIT_INTERRUPTED = 130
#: Server messages the client reads and has nothing to show for.
QUIET_MESSAGES = ("pong", "hint", "review")
#: After a game: offer a rematch (or accept the other's); decline one (or take one's own back).
REMATCH_WORDS = ("m", "rematch")
DECLINE_WORDS = ("n", "no")
#: Seconds the client keeps trying to reach a server that went away.  A
#: restart of ``c4lab serve`` (SIGTERM, then start) took 4 to 25 s on a
#: loaded 2-core machine (the stop 2 s, or up to 10 s while a background
#: warm-up finishes; the start 2.5 to 15 s), 35 s at worst: two minutes
#: is several times that, and the default forfeit time of a seat.
RETRY_FOR = 120.0
#: Seconds the first contact with a server (looking the room up) is tried
#: for: three tries, 1 and 2 s apart (a refused connection fails at once;
#: a try that times out takes ``timeout``).  An address where nothing has
#: answered yet is most likely a wrong port or a server not started, said
#: within seconds; the patience of ``RETRY_FOR`` is for a server that
#: answered and went away (``c4lab serve`` prints its address once it is
#: ready: a script can wait for that line).
FIRST_CONTACT_FOR = 3.0
#: The longest pause between two attempts, in ``retry_delay``s (1 s by
#: default): a server back is found within 5 s.
LONGEST_PAUSE = 5
#: While the server stays away, a line about it after about this many
#: ``retry_delay``s (not one a pause: the board would scroll away).
NOTE_EVERY = 15


# ---------------------------------------------------------------------------
# The client
# ---------------------------------------------------------------------------


class OnlineClient:
    """One person at a terminal in one room: a player or a spectator.

    ``read(prompt) -> str`` is called in a worker thread (default: standard
    input); everything shown goes to ``console``.  ``run()`` returns the exit
    status."""

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        token: str | None = None,
        token_file: str | None = None,
        watch: bool = False,
        console: Console | None = None,
        read: Callable[[str], str] | None = None,
        color: bool | None = None,
        retry_for: float | None = None,
        retry_delay: float = 1.0,
        timeout: float = 10.0,
        first_contact_for: float = FIRST_CONTACT_FOR,
        new_room: dict[str, Any] | None = None,
    ) -> None:
        self.url = url
        self.new_room = new_room  # the body of the room to open on the server at ``url`` (``--new``)
        self.name = name
        self.token = token
        self.token_file = token_file  # where the token came from, if from a file
        self.watch = watch
        self.console = console or game_console(color)
        self.color = draws_in_colour(self.console)
        self.read = read or KeyboardLines(self.console)
        # seconds of attempts before giving up (None: ``retry_window``); the pause: ``retry_delay``, up to 5 times it
        self.retry_for = retry_for
        self.retry_delay = retry_delay
        self.first_contact_for = first_contact_for  # seconds of tries before the server has ever answered
        self.attempts = 0  # attempts to connect that failed since the connection was last made
        self.timeout = timeout
        self.address: RoomAddress | None = None
        self.room: dict[str, Any] | None = None
        self.you: set[str] = set()
        self._arriving: set[str] = set()  # seats taken whose socket is not open yet (``room_words.still_arriving``)
        self._entry: asyncio.Future[tuple[bool, Any]] | None = None
        self._asking: tuple[str, str, list[str]] = ("column", "", [])  # kind (column, ban, resign), position, options
        self._in_flight = False  # a move or resignation sent, no answer yet
        self._asking_prompt = ""
        self._received = False  # a message came on the current connection
        self._hello_pending = False  # a hello with a token sent, its answer not yet come
        self._reconnecting = False  # the connection was lost: say so when it is back

    # -- output ------------------------------------------------------------------

    def say(self, message: str, whole: bool = False) -> None:
        """A line for the person; ``whole``: never broken (a command to copy)."""
        with self._aside():
            self._end_prompt_line()
            if self.console.is_terminal and not whole:  # broken between words at the terminal's edge
                message = wrap_words(message, self.console.width)
            self.console.print(message, highlight=False, markup=False, soft_wrap=True)

    def _aside(self) -> contextlib.AbstractContextManager[None]:
        """Around a print: the line being edited at a terminal out of its way."""
        return self.read.aside() if isinstance(self.read, KeyboardLines) else contextlib.nullcontext()

    def _end_prompt_line(self) -> None:
        """What is printed under an open prompt starts on a line of its own."""
        if isinstance(self.read, KeyboardLines) and self.read.line_open:
            self.read.line_open = False
            self.console.print()

    def _note(self, message: str) -> None:
        """A line about the room; under an open prompt, the prompt again
        (on a terminal: what was typed so far is still taken)."""
        self.say(message)
        self._prompt_again()

    def _prompt_again(self) -> None:
        """The open prompt again, under what was printed (on a terminal)."""
        if (self._prompts_again() and isinstance(self.read, KeyboardLines)
                and (self._asking_prompt or self.read.editor is not None)):  # (an editor: what was typed, too)
            self.read.show_prompt(self._asking_prompt)

    def _prompts_again(self) -> bool:
        """Whether a line is being read whose prompt ``_prompt_again`` can
        draw again: on a terminal (its output piped, what was printed would
        be all a person sees)."""
        return self._entry is not None and isinstance(self.read, KeyboardLines) and is_tty(self.console)

    def _label(self, side: str) -> str:
        assert self.room is not None
        return words.subject(self.room, self.you, side)

    def _comeback(self, holding: bool = False, when: str = "") -> None:
        """Say how to come back to this seat (``room_words.comeback``), if
        this client holds one (``holding``: one it has just taken)."""
        assert self.address is not None
        if not (self.you or holding) or not self.token:
            return
        lead, command, more = words.comeback(self.address.link, self.token, self.token_file, when)
        self.say(lead)
        self.say(command, whole=True)
        if more:
            self.say(more)

    # -- running ---------------------------------------------------------------------

    def run(self) -> int:
        """Play or watch until the game is over; the exit status."""
        try:
            return asyncio.run(self.run_async())
        except KeyboardInterrupt:
            self.say("\nInterrupted.")
            if self.room is not None and self.room["status"] != "over":
                self._comeback(when=words.forfeit_words(self.room))
            return EXIT_INTERRUPTED
        finally:
            if isinstance(self.read, KeyboardLines):
                self.read.close()

    async def run_async(self) -> int:
        try:
            if self.new_room is not None:
                await self._open_room()
                return await self._play()
            self.address = RoomAddress.parse(self.url)
            room = await self._first_contact(self.address.base, self._fetch_room)
            if self.address.replay and self.token is None and not self.watch:
                # a replay link (/games/CODE) is for watching: a free seat is taken with the room's link
                self.watch = True
                if room.get("status") != "over":
                    self.say(f"A replay link: you are watching. To take a free seat, use the room's link {self.address.link}")
            if self.token is None and not self.watch:
                await self._take_seat(room)
            elif self.watch:
                self.token = None
            return await self._play()
        except ConnectError as exc:
            self.say(exc.message)
            return exc.status

    async def _open_room(self) -> None:
        """``--new``: a room opened on the server at ``url`` (tried as a
        first contact is, but only again where the connection was refused:
        a request that timed out may have opened one), its seat taken."""
        assert self.new_room is not None
        base = link.server_base(self.url)
        body = {"mode": "online", **self.new_room, **({"name": self.name} if self.name else {})}
        answer = await self._first_contact(base, lambda: link.open_room(base, body, self.timeout), again=False)
        self.address = RoomAddress(base, answer["code"])
        self.token = answer["token"]
        self.say(f"You opened a room and took seat {words.sides(answer['seats'])}. Share its link: "
                 f"{self.address.link}")
        self.say(f"Your token (keep it): {self.token}")
        self._comeback(holding=True)

    async def _first_contact(
        self, base: str, call: Callable[[], dict[str, Any]], again: bool = True,
    ) -> dict[str, Any]:
        """``call``'s answer from the server at ``base`` (the room looked
        up, or a room opened): tried again after a pause (``_delay``) while nothing
        answers, for ``first_contact_for`` seconds; then a ``ConnectError``
        (status 2: the link leads nowhere) saying where nothing answered,
        why, and what to check.  It tried for two minutes, as for a server
        that went away: a newcomer who typed a wrong port waited that long
        for the error.  Without ``again`` (a request that changes
        something), only a refused connection is tried again."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        give_up = started + self.first_contact_for
        tries = 0
        while True:
            try:
                return await asyncio.to_thread(call)
            except link.Unreachable as exc:
                reason = str(exc)
                if not (again or exc.refused):
                    raise ConnectError(f"{base} did not answer ({reason}): whether it opened the room is not "
                                       "known (one that nobody joins ends by itself); try again.", EXIT_LOST) from None
            tries += 1
            now = loop.time()
            if now >= give_up:
                raise ConnectError(
                    f"Nothing answers at {base} ({reason}; {words.tries(tries)} in {words.span(now - started)}): "
                    "is the server running (c4lab serve prints its address once it is ready), and are the host "
                    "and port right?", EXIT_BAD_ROOM)
            await asyncio.sleep(min(self._delay(tries - 1), give_up - now))

    def _delay(self, attempt: int) -> float:
        """The pause after the ``attempt``-th failure (from 0): 1, 2, 4, 5, 5... ``retry_delay``s."""
        return self.retry_delay * min(2**min(attempt, 8), LONGEST_PAUSE)

    def retry_window(self) -> float:
        """Seconds of attempts to connect before giving up: ``retry_for``
        if given, else ``RETRY_FOR``, or for a player in a game the time
        the server keeps an absent player's seat (``forfeit_after``) if
        that is longer: the seat is still theirs when the server is back."""
        if self.retry_for is not None:
            return self.retry_for
        room = self.room or {}
        kept = room.get("forfeit_after")
        if (self.you and room.get("status") == "playing" and isinstance(kept, (int, float))
                and not isinstance(kept, bool) and 0 < kept < 365 * 86400):
            return max(RETRY_FOR, float(kept))
        return RETRY_FOR

    @staticmethod
    def _time_left(seconds: float, window: float) -> str:
        return f"for {words.span(max(0.0, seconds))} more" if seconds < window else f"for up to {words.span(window)}"

    def _fetch_room(self) -> dict[str, Any]:
        assert self.address is not None
        return link.fetch_room(self.address, self.timeout)

    async def _take_seat(self, room: dict[str, Any]) -> None:
        """Take the free seat of an online room, if there is one; else watch."""
        assert self.address is not None
        free = [side for side, seat in room["seats"].items() if not seat["taken"]]
        if room.get("mode") != "online" or not free or room.get("status") == "over":
            why = "the game is over" if room.get("status") == "over" else "no seat is free"
            self.say(f"You are watching: {why}.")
            return
        answer = await asyncio.to_thread(link.join_room, self.address, self.name, self.timeout)
        if answer is None:
            self.say("The free seat was just taken: you are watching.")
            return
        self.token = answer["token"]
        self.say(f"You took seat {words.sides(answer['seats'])}. Your token (keep it): {self.token}")
        self._comeback(holding=True)

    async def _play(self) -> int:
        """Hold the socket; after a loss, connect again for ``retry_window()``
        seconds (a restart of the server is waited for)."""
        assert self.address is not None
        loop = asyncio.get_running_loop()
        give_up = noted = window = 0.0
        while True:
            self._received = False
            try:
                async with link.open_socket(self.address, self.timeout) as ws:
                    self._in_flight = False
                    outcome = await self._session(ws)
                    if outcome is not None:
                        return outcome
                reason = "the server closed the connection"
            except link.SOCKET_ERRORS as exc:
                reason = link.lost_because(exc, self.address)  # or ConnectError: not worth another try
            if self.room is not None and self.room["status"] == "over":
                self.say(f"The connection to {self.address.base} ended after the game ({reason}).")
                return EXIT_OK
            self.attempts = 1 if self._received else self.attempts + 1
            now = loop.time()
            if self.attempts == 1:
                window = self.retry_window()
                give_up = now + window
            if now >= give_up:
                self.say(f"Lost the connection to {self.address.base} ({reason}); no answer for "
                         f"{words.span(window)}: giving up.")
                self._comeback()
                return EXIT_LOST
            delay = self._delay(self.attempts - 1)
            self._reconnecting = True
            exit_key = " (e exits)" if self._entry is not None else ""
            if self.attempts == 1:
                noted = now
                self.say(f"Connection lost ({reason}); connecting again, {self._time_left(window, window)}"
                         f"...{exit_key}")
            elif now - noted >= NOTE_EVERY * self.retry_delay:
                noted = now
                self.say(f"Still not connected ({reason}); trying again every few seconds, "
                         f"{self._time_left(give_up - now, window)}...{exit_key}")
            outcome = await self._pause(delay)
            if outcome is not None:
                return outcome

    async def _pause(self, delay: float) -> int | None:
        """The pause before connecting again, ``delay`` seconds.  A line
        typed at the open prompt meanwhile is answered at once: ``e`` leaves
        (with the way back), anything else is told it was not sent, and the
        prompt stays open for the connection to come.  The exit status if
        the person left, else None."""
        loop = asyncio.get_running_loop()
        end = loop.time() + delay
        while (left := end - loop.time()) > 0:
            if self._entry is None:
                await asyncio.sleep(left)
                return None
            done, _ = await asyncio.wait({self._entry}, timeout=left)
            if not done:
                return None
            ok, value = self._entry.result()
            self._entry = None
            entry = str(value).strip()
            if not ok or entry.lower() in QUIT_WORDS:
                self._say_leaving()
                return EXIT_OK
            kind, _, options = self._asking
            self.say(f"Not connected to the server: {entry!r} was not sent (e exits).")
            self._ask(kind, self._asking_prompt, options)
        return None

    async def _session(self, ws: Any) -> int | None:
        """One connection: hello, then messages and entries as they come.
        The exit status when the game is over (or the person left), None if
        the connection closed."""
        # The server sends a spectator's state as soon as the socket opens,
        # before it reads the hello: with a token, wait for the answer.
        self._hello_pending = bool(self.token)
        self._skipped: dict[str, Any] | None = None
        await ws.send(link.hello(self.token))
        receiving: asyncio.Future[Any] = asyncio.ensure_future(ws.recv())
        try:
            while True:
                self._maybe_ask()
                waiting: set[asyncio.Future[Any]] = {receiving}
                if self._entry is not None:
                    waiting.add(self._entry)
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if receiving in done:
                    text = receiving.result()  # ConnectionClosed: the caller connects again
                    self._received = True
                    outcome = self._on_message(text)
                    if outcome is not None:
                        return outcome
                    receiving = asyncio.ensure_future(ws.recv())
                if self._entry is not None and self._entry in done:
                    outcome = await self._on_entry(ws)
                    if outcome is not None:
                        return outcome
        finally:
            if not receiving.done():
                receiving.cancel()
            elif not receiving.cancelled():
                receiving.exception()  # read: the close that ends a session left on purpose is no news

    # -- messages from the server ----------------------------------------------------

    def _on_message(self, text: str | bytes) -> int | None:
        try:
            message = link.read_message(text)
        except link.BadMessage as exc:  # one line, and the client goes on
            self._note(f"(a message from the server was ignored, {' '.join(str(exc).split())}: {str(text)[:80]!r})")
            return None
        kind = message["type"]
        if kind == "state":
            if self._hello_pending and not message.get("you"):
                self._skipped = message
                return None
            self._hello_pending = False
            return self._on_state(message["room"], message.get("you") or [])
        if kind == "thinking":
            if self.room is not None:
                self._note(f"{self._label(message['seat'])} is thinking...")
            return None
        if kind == "rematch":
            self._on_rematch(message["event"], message["seat"], message.get("kept"))
            return None
        if kind == "error":
            return self._on_error(str(message.get("code")), str(message.get("message")))
        if kind not in QUIET_MESSAGES:
            self._note(f"(a message of a type this client does not know was ignored: {kind[:40]!r})")
        return None

    def _on_error(self, code: str, text: str) -> int | None:
        if code == errors.UNKNOWN_ROOM:
            assert self.address is not None
            raise ConnectError(self.address.missing(), EXIT_BAD_ROOM)
        if code == errors.BAD_TOKEN:
            self.token = None
            self._hello_pending = False
            self._note(f"The server did not accept the token: {text}. (To take a free seat, if there is one, "
                       "leave with e and connect again without the token.)")
            skipped, self._skipped = self._skipped, None
            if skipped is not None:  # what a spectator sees: show it now
                return self._on_state(skipped["room"], [])
            return None
        words = {
            errors.ILLEGAL_MOVE: "The server refused the move",
            errors.NOT_YOUR_TURN: "Not your turn",
            errors.NOT_YOUR_SEAT: "You cannot move here",
            errors.GAME_OVER: "The game is over",
            errors.RATE_LIMITED: "Too many messages",
            errors.NOT_ALLOWED: "The server did not allow it",
            errors.STORAGE_FAILED: "The server could not save it",
        }.get(code, f"The server answered an error ({code})")
        self._in_flight = False
        self._note(f"{words}: {text}")
        return None

    def _on_state(self, room: dict[str, Any], you: list[str]) -> int | None:
        old = self.room
        self.room = room
        self.you = {side for side in you if room["seats"][side]["kind"] == "human"}
        position = Position.parse(room["position"])
        if self._reconnecting:
            self._reconnecting = False
            self._note("Connected again." if old is not None else "Connected.")
        if old is None:
            self._introduce(room, position)
        elif old["status"] == "over" and room["status"] != "over":
            self._introduce_rematch(room)
        else:
            self._report_changes(old, room, position)
        new_board = old is None or old["position"] != room["position"] or old["status"] != room["status"]
        if new_board:
            self._in_flight = False
            self._draw(position)
            self._rebind_entry()
        if room["status"] == "over":
            if new_board:
                self._announce_result(room)
            return self._after_game(old, room, new_board)
        if new_board:
            if self._my_turn() and (self._entry is None or self._prompts_again()):
                # the move question, asked next, says it: "A (white) to move: column ..." (under "Your move, A
                # (white)." it said it twice); a line open with no prompt shows it again (``_rebind_entry``)
                self._prompt_again()
            else:
                self._note(self._whose_turn(room))
        return None

    def _introduce(self, room: dict[str, Any], position: Position) -> None:
        for line in words.introduction(room, self.you, position):
            self.say(line)

    def _introduce_rematch(self, room: dict[str, Any]) -> None:
        """A rematch started a new game in the room: the players, sides swapped."""
        for line in words.rematch_started(room, self.you):
            self._note(line)

    def _report_changes(self, old: dict[str, Any], room: dict[str, Any], position: Position) -> None:
        for line in words.changes(old, room, self.you, position, self._arriving):
            self._note(line)
        self._arriving = words.still_arriving(old, room, self._arriving)

    def _draw(self, position: Position) -> None:
        with self._aside():
            self._end_prompt_line()  # (a prompt from after the game, when a rematch begins)
            if self.color:
                self.console.print(board_text(position))
                self.console.print(legend(position))
            else:  # with the rules' key to its symbols, as the terminal game's plain board: X, * and # said nothing
                self.console.print(position.render(), highlight=False, markup=False)
                key = position.legend()
                if key:
                    self.say("   " + key)

    def _whose_turn(self, room: dict[str, Any]) -> str:
        assert self.address is not None
        return words.whose_turn(room, self.you, self.address.link, self._my_turn())

    def _announce_result(self, room: dict[str, Any]) -> None:
        """The result; the replay link, and where the game goes if a
        rematch follows in this online room (its link then shows the new
        game: the finished one is kept as ``CODE-N``)."""
        assert self.address is not None
        kept = None
        if (room.get("mode") == "online" and not self.address.replay
                and all(seat.get("taken") for seat in room["seats"].values())):
            kept = f"{self.address.replay_link}-{len(room.get('earlier') or []) + 1}"
        for line in words.result(room, self.you, self.address.replay_link, kept):
            self.say(line)

    # -- the person's entries ---------------------------------------------------------

    def _my_turn(self) -> bool:
        room = self.room
        return (
            room is not None
            and room["status"] == "playing"
            and room["to_move"] in self.you
            and room["seats"][room["to_move"]]["kind"] == "human"
        )

    def _ask(self, kind: str, prompt: str, options: list[str]) -> None:
        assert self.room is not None
        self._asking = (kind, self.room["position"], options)
        self._asking_prompt = prompt
        self._entry = read_in_thread(self.read, prompt)

    def _maybe_ask(self) -> None:
        """Open the column prompt when it is this client's move; after the
        game, the rematch's (a spectator's: the way out); on a live keyboard,
        in the game, a line read at once with no prompt (``wait``)."""
        if self._entry is not None or self._in_flight or self.room is None:
            return
        if self._my_turn():
            self._ask("column", self._column_prompt(), [])
        elif self.room["status"] == "over":
            self._ask("after" if self.you else "watch", self._after_prompt(), [])
        elif getattr(self.read, "live", False):
            self._ask("wait", "", [])

    def _column_prompt(self) -> str:
        """The terminal game's move question (``move_prompt``), with this client's ``r``."""
        assert self.room is not None
        variant = Position.parse(self.room["position"]).variant
        return move_prompt(variant, self.room["to_move"], keys=(RESIGN_KEY,))

    async def _on_entry(self, ws: Any) -> int | None:
        assert self._entry is not None and self.room is not None
        ok, value = self._entry.result()
        self._entry = None
        kind, asked_at, options = self._asking
        if not ok:
            if isinstance(value, (EOFError, KeyboardInterrupt)):
                return await self._leave(ws)
            self.say(f"Cannot read the keyboard: {value}")
            return await self._leave(ws)
        entry = str(value).strip()
        word = entry.lower()
        if kind == "resign":  # the answer to "Really resign?"
            if word not in CONFIRM_WORDS:
                self.say("You did not resign: the game goes on.")
                return None
            if self.room["status"] != "playing" or not self.you:
                self.say("There is nothing to resign: the game is over.")
                return None
            await ws.send(link.resign())
            self._in_flight = True
            return None
        if kind == "leave":  # the answer to "Leave the game?" (a lone e where e is a column)
            if word in CONFIRM_WORDS:
                return await self._leave(ws)
            self.say("You stay: the game goes on.")
            if options and self._my_turn():  # the ban question it interrupted, again
                self._ask_ban(options)
            return None
        if word in QUIT_WORDS:
            if word == "e" and self._e_may_be_a_column(kind, options):
                self._ask("leave", LEAVE_QUESTION, options if kind == "ban" else [])
                return None
            return await self._leave(ws)
        if word in RESIGN_WORDS:
            if self.room["status"] != "playing" or not self.you:
                self.say("There is nothing to resign.")
                return None
            self._ask("resign", RESIGN_QUESTION, [])
            return None
        if kind in ("after", "watch"):
            await self._on_after_entry(ws, kind, entry)
            return None
        if kind == "wait":  # typed on the opponent's turn (or before a game began)
            self.say(self._not_now())
            return None
        if not self._my_turn() or self.room["position"] != asked_at:
            self.say("The game moved on meanwhile: look at the board again.")
            return None
        width = self.room["width"]
        legal: list[str] = list(self.room["legal_moves"])
        if kind == "column" and "+" in entry:  # the notation's bonus move, column and ban at once: d+e
            try:
                token = read_move_with_ban(entry, legal, width)
            except ValueError as exc:
                self.say(str(exc))
                return None
            await self._send_move(ws, token)
            return None
        if kind == "column":
            column = _read_column(entry, width)
            if column is None and not entry.strip():  # Enter alone: the question again, no reproach
                return None
            if column is None:
                self.say(not_a_column(entry, width))
                return None
            letter = column_letter(column)
            choices = [m for m in legal if m == letter or m.startswith(letter + "+")]
            if not choices:
                self.say(column_full(column))
                return None
            if len(choices) == 1:
                await self._send_move(ws, choices[0])
                return None
            # as in the terminal game: the piece drawn on the bonus cell, no ban yet (nothing is sent before the ban)
            position = Position.parse(self.room["position"])
            assert position.variant.bonus is not None  # a move with a ban lands on it
            self._draw(position.play(min(choices, key=len)))
            self.say(ban_offer(position.variant.bonus))
            self._ask_ban(choices)
            return None
        # kind == "ban": options are the tokens of one column (plain and with a ban)
        if not entry:
            await self._send_move(ws, min(options, key=len))
            return None
        if word in ("u", "undo"):  # the drop is not sent yet: the column is asked again (``_maybe_ask``)
            self.say("The drop on the bonus cell is taken back.")
            return None
        column = _read_column(entry, width)
        played = min(options, key=len)
        banned = f"{played}+{column_letter(column)}" if column is not None else None
        if banned in options:
            await self._send_move(ws, banned)
            return None
        self.say(not_a_ban(entry, _bans(options)))
        self._ask_ban(options)
        return None

    def _e_may_be_a_column(self, kind: str, options: list[str]) -> bool:
        """Whether a lone ``e`` typed by a player in a game may mean column e
        (a move, a ban, a move typed ahead): then it is asked about first, as
        in the terminal game, since leaving starts the forfeit countdown."""
        assert self.room is not None
        if not self.you or self.room["status"] != "playing":
            return False
        if kind == "ban":
            return any(option.endswith("+e") for option in options)
        return kind in ("column", "wait") and self.room["width"] >= 5

    def _not_now(self) -> str:
        """What a line typed out of turn is told."""
        assert self.room is not None
        if not self.you:
            return "You are watching: e to stop watching."
        if self.room["status"] == "waiting":
            return "The game has not begun: waiting for a second player (e to exit)."
        return f"Not your move: {self._whose_turn(self.room).rstrip('.')} ({RESIGN_KEY}, e to exit)."

    def _ask_ban(self, options: list[str]) -> None:
        """The terminal game's ban question (``ban_prompt``), with the ``u`` that takes the drop back."""
        self._ask("ban", ban_prompt(_bans(options), take_back=True), options)

    async def _send_move(self, ws: Any, token: str) -> None:
        await ws.send(link.move(token))
        self._in_flight = True

    async def _leave(self, ws: Any) -> int:
        self._say_leaving()
        await ws.close()
        return EXIT_OK

    def _say_leaving(self) -> None:
        """The person leaves: in words, with the way back to a seat."""
        status = None if self.room is None else self.room["status"]
        self.say("You stopped watching." if not self.you else "You left the room." if status != "playing"
                 else "You left the game.")
        if status == "playing":
            assert self.room is not None
            self._comeback(when=words.forfeit_words(self.room))
        elif status == "waiting":
            self._comeback()

    # -- after the game: a rematch -----------------------------------------------------

    def _stays(self, room: dict[str, Any]) -> bool:
        """Whether the client stays in a room whose game is over: in an
        online room whose seats are both taken, a player stays for a
        rematch, a spectator (not from a replay link) while a player is
        there to play one."""
        assert self.address is not None
        seats = room["seats"].values()
        if room["mode"] != "online" or not all(seat["taken"] for seat in seats):
            return False
        if self.you:
            return True
        return not self.address.replay and any(seat["connected"] for seat in seats if seat["kind"] == "human")

    def _after_game(self, old: dict[str, Any] | None, room: dict[str, Any], ended: bool) -> int | None:
        """The game is over (``ended``: just now): the exit status, or None
        to stay for a rematch."""
        if self._stays(room):
            prompt = self._after_prompt()
            if self._entry is not None and self._asking[0] in ("after", "watch") and (ended or prompt != self._asking_prompt):
                self._asking_prompt = prompt  # (a prompt of the game, or of an offer gone without news)
                self._end_prompt_line()
                self._prompt_again()
            return None
        if old is not None and old["status"] == "over" and self._stays(old):
            self.say("Both players have left the room: there is nothing more to watch.")
        return EXIT_OK

    def _after_prompt(self) -> str:
        """What a player may do after the game (a spectator: leave)."""
        assert self.room is not None
        return words.after_prompt(self.room, self.you)

    def _on_rematch(self, event: str, seat: str, kept: str | None) -> None:
        """A rematch's news; the state that follows shows what it changed."""
        if self.room is None:
            return
        self.room["rematch"] = seat if event == "offered" else None  # as the next state will say
        self._in_flight = event == "accepted"  # no prompt until the new game's board
        if self._entry is not None and self._asking[0] in ("after", "watch"):  # accepted: the new board comes next
            self._asking_prompt = "" if event == "accepted" else self._after_prompt()
        assert self.address is not None
        self._note(words.rematch_news(self.room, self.you, event, seat, kept, self.address.base))

    async def _on_after_entry(self, ws: Any, kind: str, entry: str) -> None:
        """A line typed after the game: a player offers, accepts or declines
        a rematch (the server's answer, news or an error, follows)."""
        assert self.room is not None
        if kind == "watch" or not self.you:
            self.say("You are watching: the players decide on a rematch; e to stop watching.")
            return
        if self.room["status"] != "over":
            self.say("The game moved on meanwhile: look at the board again.")
            return
        word = entry.lower()
        offered = self.room.get("rematch")
        mine = offered is not None and offered in self.you
        if word in REMATCH_WORDS and offered is None:
            action = "offer"
        elif word in REMATCH_WORDS + CONFIRM_WORDS and offered is not None and not mine:
            action = "accept"
        elif word in DECLINE_WORDS and offered is not None:
            action = "decline"
        elif mine and word in REMATCH_WORDS + CONFIRM_WORDS:
            self.say("You have offered a rematch already: waiting for the answer.")
            return
        else:
            self.say(not_a_key(entry, self._after_prompt().rstrip(": ")))
            return
        await ws.send(link.rematch(action))
        self._in_flight = True

    def _rebind_entry(self) -> None:
        """A new board while a line is still being read: when the game ends
        (a resignation, a forfeit), the line answers the rematch's prompt;
        in the game a rematch began, a line of the prompt after the last
        one is a move when it is this player's turn, else it waits for the
        opponent's, as a spectator's does (no prompt), and so does a column
        prompt whose move was played elsewhere (the seat's other connection,
        a page).  (Any other line read for a board that changed is refused:
        the game moved on.)"""
        if self._entry is None or self.room is None:
            return
        kind, over = self._asking[0], self.room["status"] == "over"
        if over and kind in ("column", "wait"):
            kind, prompt = ("after" if self.you else "watch"), self._after_prompt()
        elif not over and (kind in ("after", "wait", "watch") or (kind == "column" and not self._my_turn())):
            kind, prompt = ("column", self._column_prompt()) if self._my_turn() else ("wait", "")
        else:
            return
        self._asking = (kind, self.room["position"], [])
        self._asking_prompt = prompt


def _bans(options: list[str]) -> set[int]:
    """The ban columns (0-based) of a bonus drop's move ``options`` (``b``, ``b+a``, ``b+c``...)."""
    return {ban for ban in (Move.parse(option).ban for option in options) if ban is not None}


def run_online(
    url: str, *, name: str | None = None, token: str | None = None, token_file: str | None = None,
    watch: bool = False, color: bool | None = None, new_room: dict[str, Any] | None = None,
) -> int:
    """``c4lab connect``: the exit status (``token_file``: where ``token``
    was read; ``new_room``: the room ``--new`` opens, ``url`` its server)."""
    return OnlineClient(url, name=name, token=token, token_file=token_file, watch=watch, color=color,
                        new_room=new_room).run()
