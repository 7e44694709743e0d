"""Small helpers shared by the browser tests."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import Page, expect


def api(server, method: str, path: str, body: dict | None = None) -> dict:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        server.url + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def create_room(server, **body) -> dict:
    """POST /api/rooms: the ticket (code, url, token, seats)."""
    return api(server, "POST", "/api/rooms", body)


def open_room(page: Page, server, ticket: dict) -> None:
    """Open a room page holding the ticket's token, as the page would have
    kept it after creating the room."""
    page.goto(server.url + "/games")
    page.evaluate("([k, v]) => localStorage.setItem(k, v)", [f"c4lab:{ticket['code']}", ticket["token"]])
    page.goto(server.url + ticket["url"])
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    if ticket.get("seats"):  # the page draws no state before the server has said which seats are its own
        # (client.js), so this holds at once; kept: a click before it would not be a move
        expect(page.locator("#board")).to_have_attribute("data-you", re.compile(r"^[AB]+$"))


def custom_board_form(page: Page, server, width: int, height: int) -> None:
    """The home page's form, its board chosen by size (a forbidden cell and
    the players still to fill in)."""
    page.goto(server.url + "/")
    page.locator("#board-custom").check()
    page.locator("#width").select_option(str(width))
    page.locator("#height").select_option(str(height))


def board(page: Page):
    return page.locator("#board")


def position(page: Page) -> str:
    return board(page).get_attribute("data-position") or ""


def wait_position(page: Page, value: str) -> None:
    expect(board(page)).to_have_attribute("data-position", value)


def wait_my_turn(page: Page, timeout: float | None = None) -> None:
    """Until the board takes this page's move (``timeout`` in ms: the suite's
    default unless given, as for an agent's first move on a fresh numba cache)."""
    expect(board(page)).to_have_class(re.compile(r"\bmy-turn\b"), timeout=timeout)


#: Keeps every text the line under the board (#message) has shown in window.__shown: an "info" line goes after
#: 4 s, which a loaded machine may take between two pages' checks.
RECORD_SHOWN = """() => { window.__shown = []; const m = document.getElementById('message');
  new MutationObserver(() => window.__shown.push(m.textContent)).observe(m, {childList: true, characterData: true, subtree: true}); }"""


def wait_shown(page: Page, text: str) -> None:
    """Wait until the line under the board has shown ``text`` (within what
    it showed, kept by :data:`RECORD_SHOWN`, evaluated before), now or for
    a moment since: an "info" line is gone after 4 s."""
    page.wait_for_function(
        "(text) => window.__shown.some((shown) => shown.includes(text))"
        " || document.getElementById('message').textContent.includes(text)", arg=text)


def status_said(page: Page):
    """The status line as screen readers hear it: its whole sentence, one
    text (the page shows it in parts: names cut short, a phone's asides
    hidden)."""
    return page.locator("#status .status-said")


def wait_over(page: Page) -> None:
    expect(board(page)).to_have_attribute("data-status", "over", timeout=30_000)


def hold_clock(page: Page) -> None:
    """Stop the page's clock (Playwright's, installed by the test before the
    page opened: ``page.clock.install()``) half a second of it from now;
    ``page.clock.resume()`` lets it run on. ``pause_at`` takes seconds. If
    that moment passed before the clock was told (this thread can wait
    seconds for the GIL while the server's thread compiles), the clock
    stopped where it was and the moment is read again from it."""
    for _ in range(3):
        try:
            page.clock.pause_at(page.evaluate("Date.now()") / 1000 + 0.5)
            return
        except PlaywrightError as exc:
            if "to the past" not in str(exc):
                raise
    raise AssertionError("the page's clock could not be stopped")


def resign(page: Page) -> None:
    """Resign by two clicks on Resign (the second confirms), the page's clock
    standing still between them (``hold_clock``): "Really resign?" turns back
    by itself after 3.5 s of it, which a loaded machine could let pass
    between two clicks. It runs as usual before and after."""
    hold_clock(page)
    page.locator("#resign").click()
    expect(page.locator("#resign")).to_have_text("Really resign?")
    page.locator("#resign").click()  # confirm
    page.clock.resume()


def click_cell(page: Page, cell: str) -> None:
    """Click the centre of one cell of the board (any cell of a column plays
    that column)."""
    page.locator(f'#board [data-cell="{cell}"]').click()


def moves(page: Page, list_id: str = "moves") -> list[str]:
    return page.locator(f"#{list_id} .mv").all_text_contents()


def tokens_of(position_string: str) -> list[str]:
    """The move tokens of a position string."""
    text = position_string.partition(":")[2]
    out, i = [], 0
    while i < len(text):
        if i + 1 < len(text) and text[i + 1] == "+":
            out.append(text[i : i + 3])
            i += 3
        else:
            out.append(text[i])
            i += 1
    return out


def piece(page: Page, cell: str):
    return page.locator(f'#board [data-piece="{cell}"]')


def play_online_game(server, moves_: str, *, public: bool = True, board: str = "7x6") -> str:
    """An online game played to its end through the protocol (no browser):
    Ann (A) and Bob (B) play ``moves_``, one letter each. Returns the code."""
    from websockets.sync.client import connect

    ticket = create_room(server, mode="online", board=board, seat="A", name="Ann", public=public)
    guest = api(server, "POST", f"/api/rooms/{ticket['code']}/join", {"name": "Bob"})
    ws_url = server.url.replace("http", "ws", 1) + f"/ws/{ticket['code']}"
    with connect(ws_url) as a, connect(ws_url) as b:
        for sock, token in ((a, ticket["token"]), (b, guest["token"])):
            sock.send(json.dumps({"type": "hello", "token": token}))
        for ply, move in enumerate(moves_):
            sock = a if ply % 2 == 0 else b
            sock.send(json.dumps({"type": "move", "move": move}))
            while True:  # until this move is on the board
                message = json.loads(sock.recv(timeout=10))
                if message["type"] == "error":
                    raise AssertionError(message)
                if message["type"] == "state" and len(tokens_of(message["room"]["position"])) == ply + 1:
                    break
    assert message["room"]["status"] == "over", message["room"]
    return ticket["code"]


#: A page script that records, in ``window.__seen``, every position the
#: board shows (for comparing what players and spectators saw).
def board_attribute_recorder(name: str, into: str) -> str:
    """An init script that keeps in ``window[into]`` every value the board's
    ``data-<name>`` takes, in order (a value repeated at once counted once):
    what the page showed, however briefly, between two checks."""
    return f"""
window.{into} = [];
new MutationObserver(() => {{
  const b = document.getElementById('board');
  const value = b && b.getAttribute('data-{name}');
  if (value && window.{into}[window.{into}.length - 1] !== value) window.{into}.push(value);
}}).observe(document, {{attributes: true, subtree: true, attributeFilter: ['data-{name}']}});
"""


RECORD_POSITIONS = board_attribute_recorder("position", "__seen")


def ann_and_bob(server, new_page, board: str = "7x6", watcher: bool = False) -> tuple[str, list[Page]]:
    """An online room on ``board``: Ann hosts it as A, Bob has joined as B,
    each on a page of their own (and, with ``watcher``, a third page that
    watches); the room's code and the pages [ann, bob(, watcher)]."""
    ticket = create_room(server, mode="online", board=board, seat="A", name="Ann")
    code = ticket["code"]
    guest = api(server, "POST", f"/api/rooms/{code}/join", {"name": "Bob"})
    pages = [new_page() for _ in range(3 if watcher else 2)]
    open_room(pages[0], server, ticket)
    open_room(pages[1], server, {**guest, "url": f"/r/{code}"})
    if watcher:
        pages[2].goto(server.url + f"/r/{code}")
    return code, pages



#: A page script that records, in ``window.__sent``, every message the page
#: sends on its sockets (parsed), as it sends it: a test that a click or key
#: sent nothing reads this after a later move's answer, which comes only
#: once everything sent before it was handled.
RECORD_SENT = """
window.__sent = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  try { window.__sent.push(JSON.parse(data)); } catch (err) { window.__sent.push(String(data)); }
  return send.call(this, data);
};
"""


def moves_sent(page: Page) -> list[str]:
    """The moves the page has sent, in order (with ``RECORD_SENT``)."""
    return page.evaluate("window.__sent.filter((m) => m.type === 'move').map((m) => m.move)")


#: A page script that records, in ``window.__landed``, every landing a board
#: announces (the cell of each ``c4lab:land``, the event the drop's sound
#: plays on): once a cell is there, its sound has played or never will.
RECORD_LANDINGS = """
window.__landed = [];
document.addEventListener("c4lab:land", (event) => window.__landed.push(event.detail.cell));
"""


def wait_landed(page: Page, cell: str) -> None:
    """Until the board has announced that the piece on ``cell`` landed (with ``RECORD_LANDINGS``)."""
    page.wait_for_function("cell => window.__landed.includes(cell)", arg=cell)


def wait_still(page: Page, selector: str = "#board") -> None:
    """Until nothing in ``selector`` moves: every animation there that ends
    (a piece's fall and bounce, a mark fading in) has ended; the endless
    ones (a winning line's pulse, the hint's ring) are left running."""
    page.wait_for_function(
        """s => [...document.querySelectorAll(s)].every((node) => node.getAnimations({ subtree: true }).every(
             (a) => a.playState === "finished" || a.effect.getComputedTiming().iterations === Infinity))""",
        arg=selector,
    )
