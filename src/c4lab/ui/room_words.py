"""What ``c4lab connect`` says about an online room, in words.

Each function reads a room's state as the server sends it (``room``: the
``state`` message's room, ``docs/protocol.md``) and ``you``, the seats this
client plays (empty for a spectator), and returns the sentences; nothing
here prints, reads the keyboard or touches the socket
(``ui/online.py`` does, and says these).  A player is named with the
side names of every screen (``rules.sides``): "A (white), Ann (you)",
and the end of a game in their one sentence ("A (white), Ann, wins: four
in a row (d1 e1 f1 g1).").
"""

from __future__ import annotations

from collections.abc import Set as AbstractSet
from typing import Any

from c4lab.rules import Position
from c4lab.rules.sides import SIDE_NAMES, SIDES, other, result_words, side_with_name
from c4lab.ui.board_view import move_words

Room = dict[str, Any]


def name(room: Room, side: str) -> str:
    """The name of the player in ``side``'s seat, or that it is free."""
    return room["seats"][side]["name"] or f"seat {side} (free)"


def label(room: Room, you: set[str], side: str) -> str:
    """``side`` and its player: "A (white), Ann", with "(you)" for this
    client's one seat."""
    said = side_with_name(side, name(room, side))
    return said + (" (you)" if side in you and len(you) == 1 else "")


def subject(room: Room, you: set[str], side: str) -> str:
    """``label`` as the subject of a sentence, its closing comma after
    the name: "A (white), Ann, plays d"."""
    return f"{label(room, you, side)},"


def sides(seats: set[str] | list[str]) -> str:
    """Seats in words: "A (white) and B (black)"."""
    return " and ".join(SIDE_NAMES[side] for side in sorted(seats))


def players(room: Room, you: set[str]) -> str:
    """Both seats: who sits there, free, a computer, not connected."""
    parts = []
    for side in SIDES:
        seat = room["seats"][side]
        who = label(room, you, side) if seat["taken"] else f"{SIDE_NAMES[side]}, free"
        if seat["kind"] == "agent":
            who += " (computer)"
        elif seat["taken"] and not seat["connected"] and room["status"] != "over":
            who += " (not connected)"
        parts.append(who)
    return "; ".join(parts)


def introduction(room: Room, you: set[str], position: Position) -> list[str]:
    """The first lines in a room: its board, its players, this client's part."""
    variant = position.variant
    extras = []
    if variant.forbidden:
        extras.append("forbidden " + " ".join(c.name for c in variant.forbidden))
    if variant.bonus is not None:
        extras.append(f"bonus cell {variant.bonus.name}")
    lines = [f"Room {room['code']} ({room['mode']}), {variant.width}x{variant.height} board"
             + (f" ({', '.join(extras)})" if extras else "") + f": {players(room, you)}."]
    if you:
        lines.append(f"You play {sides(you)}.")
        if room.get("watchers"):
            lines.append(watching(room["watchers"]))
    else:
        lines.append("You are watching.")
        if room["status"] != "over":  # (after a game, its question says so): a watcher is asked nothing till then
            lines.append("Type e to stop watching.")
    return lines + away(room, you)


def away(room: Room, you: set[str], arriving: AbstractSet[str] = frozenset()) -> list[str]:
    """A line for each player of a game under way who is not connected
    (one who left before this client came, or before the game began): the
    forfeit clock runs for them, and a player who joins such a room is
    told so, as a player who drops during the game is announced.  Not of
    the seats ``arriving`` (:func:`still_arriving`): taken, their socket
    not open yet."""
    if room["status"] != "playing":
        return []
    return [f"{subject(room, you, side)} is not connected: they can come back; {forfeit_in(seat)}."
            for side, seat in room["seats"].items()
            if side not in you and side not in arriving and seat.get("kind") == "human" and seat.get("taken")
            and not seat.get("connected")]


def still_arriving(old: Room, room: Room, arriving: AbstractSet[str]) -> set[str]:
    """The seats of ``room`` taken and not connected since: the page takes
    its seat, then opens its socket, and the state between the two is no
    absence (review: the host was told "B (black), Player, is not
    connected: ... they forfeit", then "is connected").  ``arriving``: the
    same, of ``old``."""
    return {side for side in SIDES
            if room["seats"][side]["taken"] and not room["seats"][side]["connected"]
            and (side in arriving or not old["seats"][side]["taken"])}


def rematch_started(room: Room, you: set[str]) -> list[str]:
    """A rematch started a new game in the room: the players, sides swapped."""
    lines = [f"A new game in this room, the sides swapped: {players(room, you)}."]
    if you:
        lines.append(f"You play {sides(you)} now.")
    return lines


def changes(old: Room, room: Room, you: set[str], position: Position,
            arriving: AbstractSet[str] = frozenset()) -> list[str]:
    """What changed from ``old`` to ``room`` (``position``, its position):
    seats taken, players gone or back, spectators, the game begun, moves
    played or taken back.  ``arriving``: the seats of ``old`` taken and not
    connected yet (:func:`still_arriving`): neither their absence nor their
    arrival is news."""
    lines = []
    for side in SIDES:
        before, now = old["seats"][side], room["seats"][side]
        who = subject(room, you, side)
        if not before["taken"] and now["taken"]:
            lines.append(f"{now['name']} took seat {SIDE_NAMES[side]}.")
        elif side not in you and now["kind"] == "human" and now["taken"]:
            if before["connected"] and not now["connected"] and room["status"] == "playing":
                lines.append(f"{who} disconnected: they can come back; {forfeit_in(now)}.")
            elif before["connected"] and not now["connected"] and room["status"] == "over":
                unless = ": no rematch unless they come back" if you else ""
                lines.append(f"{who} left the room{unless}.")
            elif before["connected"] and not now["connected"]:
                lines.append(f"{who} disconnected.")
            elif not before["connected"] and now["connected"] and side not in arriving:
                lines.append(f"{who} is connected.")
    if you and old.get("watchers", 0) != room.get("watchers", 0):
        lines.append(watching(room.get("watchers", 0)))
    if old["status"] == "waiting" and room["status"] == "playing":
        lines.append("Both seats are taken: the game starts.")
        lines += away(room, you, still_arriving(old, room, arriving))  # (its host left while the room waited)
    before_position = Position.parse(old["position"])
    old_moves, moves = before_position.moves, position.moves
    if moves[: len(old_moves)] != old_moves:
        lines.append("Moves were taken back.")
    else:
        for index in range(len(old_moves), len(moves)):
            after = before_position.play(moves[index])
            lines.append(f"{subject(room, you, SIDES[index % 2])} plays "
                         f"{move_words(before_position, moves[index], after)}.")
            before_position = after
    return lines


def whose_turn(room: Room, you: set[str], link: str, my_turn: bool) -> str:
    """Who is to move (or that a second player is awaited: ``link`` is
    the room's, for the host to share); ``my_turn``: "Your move, A
    (white).", said only where the move question, which says it too,
    cannot be drawn again under the news (``OnlineClient._on_state``)."""
    if room["status"] == "waiting":
        if not you:  # the link is the host's to share
            return "Waiting for a second player to take the free seat."
        return f"Waiting for a second player: share the link {link}"
    side = room["to_move"]
    if my_turn:
        return f"Your move, {SIDE_NAMES[side]}."
    away = "" if room["seats"][side]["connected"] else " (not connected)"
    return f"{label(room, you, side)}{away}, to move."


def result(room: Room, you: set[str], replay_link: str, kept_link: str | None = None) -> list[str]:
    """The end of a game: who won and how, for a player whether they won,
    the game in notation and where to step through it (``kept_link``:
    where it goes if a rematch is played in the room, whose new game then
    has ``replay_link``)."""
    outcome, reason = room["result"], room["reason"]
    win_line = " ".join(room.get("win_line") or [])
    lines = [result_words(outcome, reason, lambda side: subject(room, you, side), win_line=win_line) + "."]
    if outcome in SIDES and len(you) == 1:
        lines.append("You won." if outcome in you else "You lost.")
    lines.append(f"The game in notation: {room['position']}")
    after = f" (after a rematch in this room: {kept_link})" if kept_link else ""
    lines.append(f"Step through it move by move in a browser: {replay_link}{after}")
    return lines


def after_prompt(room: Room, you: set[str]) -> str:
    """What a player may do after the game (a spectator: leave)."""
    if not you:
        return "e to stop watching: "
    offered = room.get("rematch")
    gone = [side for side, seat in room["seats"].items()
            if side not in you and seat["kind"] == "human" and not seat["connected"]]
    if offered is None and gone:
        return f"{name(room, gone[0])} has left: m to offer a rematch should they come back, e to exit: "
    if offered is None:
        return "m for a rematch (the sides swapped), e to exit: "
    if offered in you:
        return f"Waiting for {name(room, other(offered))} to answer: n to take the rematch back, e to exit: "
    return f"{name(room, offered)} offers a rematch: y to accept, n to decline, e to exit: "


def rematch_news(room: Room, you: set[str], event: str, seat: str, kept: str | None, base: str) -> str:
    """``seat`` (a seat of the game that ended) offered, accepted, declined
    or withdrew a rematch, in words (``kept``: the code the last game is
    kept under, on the server at ``base``)."""
    mine = seat in you
    who = "You" if mine else subject(room, you, seat)
    if event == "offered" and mine:
        return f"You offered a rematch (the sides swapped): waiting for {subject(room, you, other(seat))} to answer."
    if event == "offered":
        would = f": you would play {SIDE_NAMES[seat]}" if you else ""
        return f"{who} offers a rematch in this room, the sides swapped{would}."
    if event == "declined":
        return f"{who} declined the rematch."
    if event == "withdrawn":
        return "You took back your offer of a rematch." if mine else f"The rematch {who} offered is withdrawn."
    where = f" The last game stays at {base}/games/{kept}" if kept else ""
    return f"{who} accepted the rematch: a new game in this room.{where}"


def comeback(link: str, token: str, token_file: str | None, when: str = "") -> tuple[str, str, str]:
    """How to come back to a seat, as three lines: what they are (with
    ``when``, :func:`forfeit_words`), the command on a line of its own,
    printed whole so that it is copied whole (wrapped with the words
    around it, a triple-click copied ``c4lab connect`` without its link),
    and what else may be done ("" with a token's file).  The token's file,
    or the token in the environment: never ``--token TOKEN``, since a
    command line is visible to anyone who runs ``ps`` on the machine."""
    lead = f"To come back to this game{when}, run:"
    if token_file:
        return lead, f"c4lab connect {link} --token-file {token_file}", ""
    return lead, f"C4LAB_TOKEN={token} c4lab connect {link}", "(or save the token in a file and add --token-file FILE)"


def watching(count: int) -> str:
    """What a player is told of the spectators (the room's ``watchers``)."""
    if not count:
        return "Nobody is watching now."
    return "1 person is watching." if count == 1 else f"{count} people are watching."


def tries(count: int) -> str:
    """``count`` tries in words: "tried once", "tried 3 times"."""
    return "tried once" if count == 1 else f"tried {count} times"


def span(seconds: float) -> str:
    """A time in words: "2 minutes", "2.5 minutes", "90 s"."""
    return f"{round(seconds / 60, 1):g} minutes" if seconds >= 120 else f"{round(seconds)} s"


def forfeit_in(seat: dict[str, Any]) -> str:
    """When an absent player forfeits, as their seat's ``forfeit_in`` says."""
    seconds = seat.get("forfeit_in")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds < 0:
        return "if they stay away too long they forfeit"
    return f"they forfeit unless they are back within {span(seconds)}"


def forfeit_words(room: Room) -> str:
    """How long an absent player has before forfeiting, as the room's
    state says (``forfeit_after``), for the come-back line; nothing for a
    local room (``c4lab play``), whose players never forfeit."""
    if room.get("mode", "online") != "online":
        return ""
    seconds = room.get("forfeit_after")
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or seconds <= 0:
        return " (an absent player forfeits after the server's time limit)"
    return f" (while a game is played, an absent player forfeits after {span(seconds)})"
