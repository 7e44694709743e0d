"""What a keyboard and screen-reader player meets: the board, drawn in SVG,
is put in words (each move played, the column under the keyboard's
cursor and its score), the status is heard once per change, and a
320-px phone keeps the top bar on screen."""

from __future__ import annotations

import asyncio
import re
import urllib.parse

import pytest
from browser_helpers import (
    RECORD_SHOWN,
    ann_and_bob,
    create_room,
    hold_clock,
    open_room,
    play_online_game,
    tokens_of,
    wait_my_turn,
    wait_position,
)
from playwright.sync_api import expect


def announce(page):
    return page.locator("#announce")


def test_each_move_is_said_the_computers_too(server, new_page):
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "random"})
    open_room(page, server, ticket)
    expect(announce(page)).to_have_attribute("aria-live", "polite")
    page.locator("#board").focus()
    page.keyboard.press("d")
    expect(page.locator("#board")).to_have_attribute("data-position", re.compile(r"^7x6:d.$"))
    reply = tokens_of(page.locator("#board").get_attribute("data-position"))[1]
    row = "2" if reply == "d" else "1"
    expect(announce(page)).to_contain_text(f"B (black) played {reply} ({reply}{row}).")
    page.locator("#undo").click()  # back to before White's move
    wait_position(page, "7x6")
    expect(announce(page)).to_contain_text("taken back")


def test_the_keyboard_cursor_reads_its_column(server, new_page):
    page = new_page()
    ticket = create_room(server, board="7x6/Xd4:dd", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    page.locator("#board").focus()  # the cursor starts on the middle column
    expect(announce(page)).to_have_text(
        "Column d: d1 A (white), d2 B (black), d4 forbidden; your piece lands on d3."
    )
    page.keyboard.press("ArrowRight")
    expect(announce(page)).to_have_text("Column e: empty; your piece lands on e1.")
    # the classic theme's words
    page.evaluate("document.documentElement.dataset.pieces = 'classic'")
    page.keyboard.press("ArrowLeft")
    expect(announce(page)).to_contain_text("d1 A (red), d2 B (yellow)")


def test_the_analysis_boards_scores_are_said_with_their_column(server, new_page):
    page = new_page()
    page.goto(server.url + "/analyse?position=7x6:dd")
    # (the first scores on a fresh numba cache wait for the solver's compile: the suite's bound for a hint)
    expect(page.locator('#board [data-note="d"]')).to_have_attribute("data-score", "+1", timeout=60_000)
    page.locator("#board").focus()
    expect(announce(page)).to_have_text(
        "Column d: d1 A (white), d2 B (black); your piece lands on d3; score +1, a win, best."
    )
    page.keyboard.press("ArrowLeft")
    expect(announce(page)).to_contain_text("Column c: empty; your piece lands on c1; score −2, a loss.")


def test_the_status_is_rebuilt_only_when_it_changes(server, new_page):
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    expect(page.locator("#status")).to_contain_text("A (white) to move")
    page.evaluate("window.__words = document.querySelector('#status .status-text')")
    page.locator("#board").focus()
    page.keyboard.press("ArrowRight")  # redraws the preview, says nothing new
    page.locator("#hint").click()  # a redraw of the whole page
    expect(page.locator("#message")).to_contain_text("Hint", timeout=60_000)  # (a first hint compiles the solver)
    assert page.evaluate("document.querySelector('#status .status-text') === window.__words")
    page.locator("#board").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("B (black) to move")
    expect(announce(page)).to_have_text("A (white) played d (d1).")


def test_a_jump_along_the_analysis_line_rebuilds_the_status_once(server, new_page):
    """Home over 14 moves brings 14 states, each with the other side to
    move: the status (a live region) said each of them, "Black (Player B) to
    move", "White (Player A) to move"... It is rebuilt for the position the
    jump lands on alone, and only if that says something new."""
    page = new_page()
    line = "7x6:" + "abcdefg" * 2
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(line))
    wait_position(page, line)
    expect(page.locator("#status")).to_contain_text("A (white) to move")
    page.evaluate("""() => {
      window.__statuses = [];
      new MutationObserver((records) => {
        for (const record of records) {
          const words = [...record.addedNodes].find((node) => node.classList && node.classList.contains("status-text"));
          if (words) window.__statuses.push(words.querySelector(".status-said").textContent);
        }
      }).observe(document.getElementById("status"), { childList: true });
    }""")
    page.locator("#board").focus()
    page.keyboard.press("Home")
    wait_position(page, "7x6")
    expect(page.locator("#status")).to_contain_text("A (white) to move")  # as before: not rebuilt
    page.keyboard.press("Shift+ArrowRight")  # one step: its state is shown at once
    wait_position(page, "7x6:a")
    expect(page.locator("#status")).to_contain_text("B (black) to move")
    page.keyboard.press("End")
    wait_position(page, line)
    expect(page.locator("#status")).to_contain_text("A (white) to move")
    assert page.evaluate("window.__statuses") == ["B (black) to move", "A (white) to move"]


def test_the_resign_confirmation_is_said_and_taken_by_keyboard(server, new_page):
    """Enter on Resign asks (said as an alert), Enter again resigns. The
    question turns back by itself after 3.5 s of the page's clock, which
    stands still from the first Enter to the second here: a loaded machine's
    checks in between could outlast the question."""
    page = new_page()
    page.clock.install()  # the page's timers on a clock the test can stop; it runs as usual until then
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "random"})
    open_room(page, server, ticket)
    page.locator("#resign").focus()
    hold_clock(page)
    page.keyboard.press("Enter")
    expect(page.locator("#resign")).to_have_text("Really resign?")
    expect(page.locator("#message")).to_have_attribute("role", "alert")
    expect(page.locator("#message")).to_contain_text("Press Resign again to resign")
    page.keyboard.press("Enter")
    page.clock.resume()
    expect(page.locator("#board")).to_have_attribute("data-status", "over")
    expect(page.locator("#status")).to_contain_text("A (white) resigned")


def test_a_320_px_phone_keeps_the_top_bar_on_screen(server, new_page):
    page = new_page(320, 640)
    page.goto(server.url + "/")
    expect(page.locator("#start")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= 320
    box = page.locator("#settings-button").bounding_box()
    assert box["x"] + box["width"] <= 320
    page.locator("#settings-button").click()
    expect(page.locator("#settings-panel")).to_be_visible()


def focused(page) -> str:
    """The focused element, as tag#id (data-ply for a list's entry)."""
    return page.evaluate(
        "() => { const e = document.activeElement;"
        " return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (e.dataset.ply ? '@' + e.dataset.ply : ''); }"
    )


def test_a_control_that_goes_away_hands_the_keyboard_focus_on(server, new_page):
    """Hint while it thinks, Resign once the game is over, the bonus panel
    once the ban is cancelled, a move of the list rebuilt: the keyboard's
    focus stays on the page where it was, never back on the page's top."""
    page = new_page()
    ticket = create_room(server, board="7x6/Bd1", players={"A": "human", "B": "random"})
    open_room(page, server, ticket)
    page.locator("#board").focus()
    page.keyboard.press("d")  # the bonus cell: the panel takes the focus
    assert focused(page) == "button#decline-ban"
    page.keyboard.press("Escape")  # cancelled: back to the board
    expect(page.locator("#ban-panel")).to_be_hidden()
    assert focused(page) == "svg#board"
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")  # e, then the computer's move (on d1, the bonus cell, with a ban: one time in 7)
    expect(page.locator("#board")).to_have_attribute("data-position", re.compile(r"^7x6/Bd1:e[a-g](\+[a-g])?$"))
    page.locator("#hint").focus()
    page.keyboard.press("Enter")
    # (a first hint on an empty numba cache prepares the engine first)
    expect(page.locator("#message")).to_contain_text("Hint: drop in column", timeout=120_000)
    assert focused(page) == "button#hint"
    page.locator("#moves .mv[data-ply='1']").focus()
    page.keyboard.press("Enter")  # the list is drawn again, its first move marked
    expect(page.locator("#moves .mv[data-ply='1']")).to_have_class(re.compile(r"\bcurrent\b"))
    assert focused(page) == "button@1"
    page.keyboard.press("End")
    page.locator("#resign").focus()
    page.keyboard.press("Enter")
    page.keyboard.press("Enter")
    expect(page.locator("#board")).to_have_attribute("data-status", "over")
    expect(page.locator("#resign")).to_be_hidden()
    assert focused(page) == "svg#board"


def replay_of_seven_moves(server, new_page):
    """A page on the replay of a finished game of seven moves, at its end."""
    page = new_page()
    code = play_online_game(server, "ddeeffg")
    page.goto(server.url + f"/games/{code}")
    expect(page.locator("#replay-ply")).to_have_text("7 / 7")
    return page


def test_the_replays_buttons_keep_the_keyboard_focus(server, new_page):
    page = replay_of_seven_moves(server, new_page)
    page.locator("#replay-prev").focus()
    page.keyboard.press("Home")  # Prev is disabled at the start
    expect(page.locator("#replay-ply")).to_have_text("0 / 7")
    assert focused(page) == "input#replay-slider"
    page.locator("#replay-review").focus()
    page.keyboard.press("Enter")  # the button goes: the focus goes to the list it brings
    expect(page.locator("#replay-review-list .review-row")).to_have_count(7)
    assert focused(page) == "button@1"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    expect(page.locator("#replay-ply")).to_have_text("1 / 7")
    assert focused(page) == "button@2"


#: Keeps every text #announce has said in window.__said.
RECORD_SAID = """() => { window.__said = []; const a = document.getElementById('announce');
  new MutationObserver(() => window.__said.push(a.textContent)).observe(a, {childList: true, characterData: true, subtree: true}); }"""


def test_a_rematch_is_said_as_a_new_game_not_as_moves_taken_back(server, new_page):
    _, (ann, bob) = ann_and_bob(server, new_page, "5x4")
    for ply, move in enumerate("abababa"):
        page = ann if ply % 2 == 0 else bob
        wait_my_turn(page)  # its page has the last move too: a key pressed before is no move
        page.locator("#board").focus()
        page.keyboard.press(move)
        wait_position(bob, "5x4:" + "abababa"[: ply + 1])
    for page in (ann, bob):
        expect(page.locator("#board")).to_have_attribute("data-status", "over")
        page.evaluate(RECORD_SAID)
        page.evaluate(RECORD_SHOWN)
    # focus() does not wait for a button to show: on a loaded machine Enter went to the board (the offer
    # had not reached Ann's page yet) and no rematch began
    expect(bob.locator("#offer-rematch")).to_be_visible()
    bob.locator("#offer-rematch").focus()
    bob.keyboard.press("Enter")
    expect(ann.locator("#rematch-accept")).to_be_visible()
    ann.locator("#rematch-accept").focus()
    ann.keyboard.press("Enter")
    for page in (ann, bob):
        wait_position(page, "5x4")
        page.wait_for_function("() => window.__shown.some((text) => text.includes('Rematch: a new game in this room'))")
    wait_my_turn(bob)
    bob.locator("#board").focus()
    bob.keyboard.press("c")  # Bob plays white now
    for page in (ann, bob):
        expect(announce(page)).to_have_text("A (white) played c (c1).")
        said = page.evaluate("window.__said")
        assert not [text for text in said if "taken back" in text], said


def test_the_analysis_boards_key_is_not_read_again_after_every_move(server, new_page):
    """Its legend ("Scores for A (white), to move: + a win ...") and its
    "solving every column…" change with every move: a live region would
    say them after each move on top of the move itself. The scores are
    heard with their column, under the keyboard's cursor."""
    page = new_page()
    page.goto(server.url + "/analyse?position=7x6:dd")
    expect(page.locator('#board [data-note="d"]')).to_have_attribute("data-score", "+1", timeout=60_000)
    page.locator("#board").focus()
    page.keyboard.press("c")
    expect(announce(page)).to_have_text("A (white) played c (c1).")
    expect(page.locator("#analysis-key")).to_contain_text("Scores for B (black), to move")
    live = "[aria-live]:not([aria-live=off]), [role=status], [role=alert], [role=log]"
    assert page.evaluate(f"document.getElementById('analysis-key').closest('{live}') === null")


def test_the_boards_name_gives_the_keys_of_its_own_columns(server, new_page):
    page = new_page()
    ticket = create_room(server, board="5x4", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    expect(page.locator("#board")).to_have_attribute(
        "aria-label", "game board; column keys a to e or 1 to 5, arrows and Enter"
    )


def test_the_move_shown_is_marked_in_the_lists_not_only_by_its_colour(server, new_page):
    page = replay_of_seven_moves(server, new_page)
    page.locator("#replay-review").click()
    expect(page.locator("#replay-review-list .review-row")).to_have_count(7)
    page.keyboard.press("Home")
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#replay-ply")).to_have_text("2 / 7")
    expect(page.locator("#replay-moves [aria-current=step]")).to_have_attribute("data-ply", "2")
    expect(page.locator("#replay-moves [aria-current]")).to_have_count(1)
    # the review's row: the move played from the position shown
    expect(page.locator("#replay-review-list [aria-current=step]")).to_have_attribute("data-ply", "3")
    expect(page.locator("#replay-review-list [aria-current]")).to_have_count(1)


#: Counts, in window.__rebuilt[id], each time the text of a live region is replaced.
COUNT_REBUILDS = """(ids) => { window.__rebuilt = {}; for (const id of ids) { const node = document.getElementById(id);
  window.__rebuilt[id] = 0;
  new MutationObserver(() => { window.__rebuilt[id] += 1; }).observe(node, {childList: true, characterData: true, subtree: true}); } }"""


def test_who_watches_is_said_when_it_changes_not_after_every_move(server, new_page):
    _, (ann, bob, watcher) = ann_and_bob(server, new_page, "7x6", watcher=True)
    expect(watcher.locator("#watchers")).to_have_text("You are watching")
    expect(ann.locator("#watchers")).to_have_text("1 watching")
    for page in (ann, watcher):
        page.evaluate(COUNT_REBUILDS, ["watchers", "history-text"])
    for ply, move in enumerate("ddee"):
        page = ann if ply % 2 == 0 else bob
        wait_my_turn(page)  # its page has the last move too: a key pressed before is no move (it failed so once)
        page.locator("#board").focus()
        page.keyboard.press(move)
        wait_position(watcher, "7x6:" + "ddee"[: ply + 1])
    watcher.keyboard.press("ArrowLeft")  # the watcher looks back; the game goes on
    expect(watcher.locator("#history-text")).to_have_text("Viewing move 3 of 4: A (white) played e (e1).")
    wait_my_turn(ann)
    ann.locator("#board").focus()
    ann.keyboard.press("f")
    expect(watcher.locator("#history-text")).to_contain_text("The game went on meanwhile.")
    expect(announce(watcher)).to_have_text("A (white) played f (f1).")
    assert ann.evaluate("window.__rebuilt.watchers") == 0
    assert watcher.evaluate("window.__rebuilt") == {"watchers": 0, "history-text": 2}


def test_the_analysis_switch_says_what_it_does(server, new_page):
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "random"})
    open_room(page, server, ticket)
    switch = page.get_by_role("checkbox", name="Analysis")
    expect(switch).to_have_accessible_description("every column's score above the board after every move")


def test_the_first_tab_offers_to_skip_the_top_bar_to_the_board(server, new_page):
    """The first stop of Tab is a skip link, off screen until focused: on a
    room page Enter on it puts the keyboard on the board (before: five Tabs
    through the logo, the two links and Settings); on the form, on its first
    field."""
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    link = page.locator("#skip-link")
    assert link.bounding_box()["y"] < 0  # out of sight until it has the focus
    page.keyboard.press("Tab")
    expect(link).to_be_focused()
    expect(link).to_have_text("Skip to the game")
    assert link.bounding_box()["y"] >= 0
    page.keyboard.press("Enter")
    expect(page.locator("#board")).to_be_focused()
    page.keyboard.press("d")
    wait_position(page, "7x6:d")
    page.goto(server.url + "/")
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.closest('#view-home') !== null")


@pytest.mark.parametrize("pace", [0.0, 0.3], ids=["at-once", "slowly"])
def test_a_jump_along_the_analysis_boards_line_is_said_once_where_it_ends(server, new_page, monkeypatch, pace):
    """Home on the analysis board takes back every move, one undo (and one
    state) each: said once, "6 moves taken back", not six times "One move
    taken back"; End plays them again, the last four said. Also when the
    server answers each move ``pace`` seconds apart (a loaded machine, a
    slow line): the states came further apart than the page's 150 ms for
    "at once", and End was said in two pieces, its last two moves alone."""
    if pace:
        from c4lab.server.rooms import RoomManager

        real = RoomManager.handle

        async def slowly(self, room, conn, message):
            await asyncio.sleep(pace)
            await real(self, room, conn, message)

        monkeypatch.setattr(RoomManager, "handle", slowly)
    page = new_page()
    ticket = create_room(server, board="7x6:dcdcdc", players={"A": "human", "B": "human"}, analysis=True)
    open_room(page, server, ticket)
    page.evaluate(RECORD_SAID)
    page.locator("#board").focus()
    page.keyboard.press("Home")
    wait_position(page, "7x6")
    expect(announce(page)).to_have_text("6 moves taken back.")
    assert [text for text in page.evaluate("window.__said") if "taken back" in text] == ["6 moves taken back."]
    page.keyboard.press("End")
    wait_position(page, "7x6:dcdcdc")
    expect(announce(page)).to_have_text(
        "A (white) played d (d2). B (black) played c (c2). A (white) played d (d3). B (black) played c (c3).")


def test_the_move_lists_entries_are_named_by_the_move_in_words(server, new_page):
    """A screen reader said "c, button" for an entry of the move list: each
    is named by its number, who played it, where it landed and, on the
    bonus cell, what became of the ban -- in the words that announce the
    move when it is played -- and the move on the board is the current one."""
    page = new_page()
    start = "5x4/Bc2:c"  # Black's piece in column c lands on the bonus cell
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
    wait_position(page, start)
    page.locator("#board").focus()
    page.keyboard.press("c")
    expect(page.locator("#ban-panel")).to_be_visible()
    page.keyboard.press("a")  # the ban piece in column a
    said = "B (black) played c (c2), on the bonus cell, and drops the ban piece in a"
    expect(announce(page)).to_have_text(f"{said}.")
    entries = page.locator("#moves .mv")
    expect(entries).to_have_count(2)
    assert [entries.nth(i).get_attribute("aria-label") for i in range(2)] == [
        "Move 1: A (white) played c (c1)", f"Move 2: {said}",
    ]
    expect(page.locator("#moves [aria-current=step]")).to_have_attribute("data-ply", "2")
    entries.nth(0).click()  # back along the line: the first move is the one on the board
    wait_position(page, start)
    expect(page.locator("#moves [aria-current=step]")).to_have_attribute("data-ply", "1")
    expect(page.locator("#moves [aria-current]")).to_have_count(1)
    # a bonus declined says so, as the list's "(no ban)" shows it
    page.locator("#board").focus()
    page.keyboard.press("c")
    page.keyboard.press("n")
    wait_position(page, "5x4/Bc2:cc")
    expect(entries.nth(1)).to_have_attribute(
        "aria-label", "Move 2: B (black) played c (c2), on the bonus cell, and declines the ban piece"
    )


def test_the_top_bars_link_to_the_page_shown_is_marked_current(server, new_page):
    """"New game" and "Finished games" were told apart by an underline alone."""
    page = new_page()
    page.goto(server.url + "/")
    expect(page.locator("#nav-new")).to_have_attribute("aria-current", "page")
    expect(page.locator("#nav-games")).not_to_have_attribute("aria-current", re.compile(".*"))
    page.locator("#nav-games").click()
    expect(page.locator("#nav-games")).to_have_attribute("aria-current", "page")
    expect(page.locator("#nav-new")).not_to_have_attribute("aria-current", re.compile(".*"))
