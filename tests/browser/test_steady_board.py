"""The board stays where it is while what is above it changes: the ban
panel opening and closing, the status growing longer. A touch screen shows
no key labels. At 390x844 (a phone, touch) and 1280x800 (mouse)."""

from __future__ import annotations

import json

import pytest
from browser_helpers import api, create_room, open_room, status_said, wait_my_turn, wait_over, wait_position
from playwright.sync_api import expect

from c4lab.server.run import BackgroundServer
from c4lab.server.storage import GameStore

SIZES = {"phone": (390, 844), "desktop": (1280, 800)}
#: the narrower phones, for the texts that wrap more there
NARROW = {"phone-320": (320, 640), "phone-360": (360, 740)}


def open_page(new_page, size: str):
    width, height = {**SIZES, **NARROW}[size]
    if size.startswith("phone"):
        return new_page(width, height, is_mobile=True, has_touch=True)
    return new_page(width, height)


def press_cell(page, size: str, cell: str) -> None:
    """A tap on a phone, a click with the mouse."""
    target = page.locator(f'#board [data-cell="{cell}"]')
    if size.startswith("phone"):
        target.tap()
    else:
        target.click()


def board_top(page) -> float:
    return page.locator("#board").bounding_box()["y"]


@pytest.mark.parametrize("size", SIZES)
def test_the_ban_panels_buttons_show_their_keys_only_where_there_is_a_keyboard(server, new_page, size):
    """Like the keys line under the board: N and Esc mean nothing on a touch
    screen."""
    page = open_page(new_page, size)
    ticket = create_room(server, board="5x5/Bc1", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    press_cell(page, size, "c5")
    expect(page.locator("#ban-panel")).to_be_visible()
    labels = page.locator("#ban-panel kbd")
    expect(labels).to_have_count(2)
    for button, word in (("#decline-ban", "Decline"), ("#cancel-ban", "Cancel")):
        expect(page.locator(button)).to_be_visible()
        expect(page.locator(button)).to_contain_text(word)
    if size == "phone":
        expect(page.locator("#keys-help")).to_be_hidden()
        expect(labels.first).to_be_hidden()
        expect(labels.last).to_be_hidden()
        expect(page.locator("#decline-ban")).to_have_accessible_name("Decline")
    else:
        expect(page.locator("#keys-help")).to_be_visible()
        expect(labels.first).to_have_text("N")
        expect(labels.last).to_have_text("Esc")
        expect(labels.first).to_be_visible()
        expect(labels.last).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_the_board_does_not_move_when_the_status_grows_to_two_lines(server, new_page, size):
    """'Your move, A (white)' takes one line; 'You lose. B (black), hard, wins: four
    in a row' takes two on a phone: the status row keeps room for two."""
    page = open_page(new_page, size)
    # B (the computer) has d1-d3 and wins at d4 once A plays elsewhere
    ticket = create_room(server, board="7x6:adadbd", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    expect(status_said(page)).to_have_text("Your move, A (white)")
    before = board_top(page)
    press_cell(page, size, "g1")
    wait_over(page)
    expect(page.locator("#status")).to_contain_text("You lose. B (black), hard, wins: four in a row")
    lines = page.locator("#status .status-text").evaluate(
        "e => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))"
    )
    assert lines == (2 if size == "phone" else 1)  # the case this test is about: the status wraps on a phone
    assert board_top(page) == pytest.approx(before, abs=0.5), "the board moved when the status grew"


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize(
    ("board", "cell", "ban"), [("4x4/Bb2:b", "b4", "a1"), ("9x8/Be1", "e8", "e1"), ("12x12/Bf1", "f12", "a1")]
)
def test_the_board_does_not_move_when_the_ban_panel_opens_or_closes(server, new_page, size, board, cell, ban):
    """The piece lands on the bonus cell: the ban panel takes the place kept
    above the board (on a phone the status row's too, which says the same),
    whole, on screen, over nothing of the board; the board stays put while it
    opens, when the ban is chosen, when it is declined."""
    page = open_page(new_page, size)
    for finish in ("ban", "decline"):
        ticket = create_room(server, board=board, players={"A": "human", "B": "human"})
        open_room(page, server, ticket)
        wait_my_turn(page)
        top = board_top(page)
        press_cell(page, size, cell)
        panel = page.locator("#ban-panel")
        expect(panel).to_be_visible()
        assert board_top(page) == pytest.approx(top, abs=0.5), f"the board moved when the panel opened ({finish})"
        box = panel.bounding_box()
        topbar = page.locator(".topbar").bounding_box()
        assert box["y"] >= topbar["y"] + topbar["height"] - 0.5, "the panel is under the top bar"
        assert box["y"] + box["height"] <= top + 0.5, "the panel covers the board"
        for button in ("#decline-ban", "#cancel-ban"):
            inside = page.locator(button).bounding_box()
            assert box["y"] <= inside["y"] and inside["y"] + inside["height"] <= box["y"] + box["height"], button
        if finish == "ban":
            press_cell(page, size, ban)
            token = f"{cell[0]}+{ban[0]}"
        else:
            page.locator("#decline-ban").click()
            token = cell[0]
        wait_position(page, board + ("" if ":" in board else ":") + token)
        expect(panel).to_be_hidden()
        assert board_top(page) == pytest.approx(top, abs=0.5), f"the board moved when the panel closed ({finish})"


@pytest.mark.parametrize("size", SIZES)
def test_with_the_scores_shown_the_ban_panels_longer_text_moves_nothing_either(server, new_page, size):
    """With Analysis on, the panel also says what declining scores (three
    lines of text on a phone)."""
    page = open_page(new_page, size)
    ticket = create_room(server, board="5x5/Bc1", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    page.locator("#analysis-toggle").check()
    expect(page.locator("#board .col-note")).to_have_count(5, timeout=60_000)  # (a first hint compiles the solver)
    top = board_top(page)
    press_cell(page, size, "c5")
    expect(page.locator("#ban-text")).to_contain_text("Declining scores")
    assert board_top(page) == pytest.approx(top, abs=0.5), "the board moved when the panel opened"
    box = page.locator("#ban-panel").bounding_box()
    assert box["y"] + box["height"] <= top + 0.5, "the panel covers the board"
    page.locator("#cancel-ban").click()
    expect(page.locator("#ban-panel")).to_be_hidden()
    assert board_top(page) == pytest.approx(top, abs=0.5), "the board moved when the panel closed"


@pytest.mark.parametrize(("board", "full"), [("12x8/Bc1:aaaaaaaa", "a"), ("12x12/Bc1:aaaaaaaaaaaabbbbbbbbbbbb", "a and b")])
def test_on_a_320_px_phone_the_ban_panel_naming_the_full_columns_keeps_to_its_place(server, new_page, board, full):
    """With a column full the panel says which columns the ban can go to:
    "any column but a" (before, the eleven others one by one, five lines at
    320 px, moved the board down by 6 px). Its whole text shows within the
    place kept above the board, and the board stays put."""
    page = open_page(new_page, "phone-320")
    ticket = create_room(server, board=board, players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    top = board_top(page)
    press_cell(page, "phone-320", "c8")
    expect(page.locator("#ban-panel")).to_be_visible()
    assert board_top(page) == pytest.approx(top, abs=0.5), "the board moved when the panel opened"
    box = page.locator("#ban-panel").bounding_box()
    assert box["y"] + box["height"] <= top + 0.5, "the panel covers the board"
    text = page.locator("#ban-text")
    expect(text).to_contain_text(f"pick any column but {full} for a neutral ban piece")
    assert text.evaluate("e => e.scrollHeight <= e.clientHeight"), "the panel's text is cut"
    page.locator("#decline-ban").click()
    expect(page.locator("#ban-panel")).to_be_hidden()
    assert board_top(page) == pytest.approx(top, abs=0.5), "the board moved when the panel closed"


@pytest.fixture
def quick_forfeits(tmp_path):
    """A server whose absent players forfeit after one second."""
    store = GameStore(tmp_path / "games.sqlite")
    running = BackgroundServer(store, forfeit_after=1.0).start()
    yield running
    running.stop()
    store.close()


LONG_NAMES = {"A": "Bartholomew Featherstone", "B": "Maximilian Wolfensberger"}  # 24 characters, the most


@pytest.mark.parametrize("size", [*NARROW, *SIZES])
def test_the_board_does_not_move_for_the_longest_status_long_names_and_a_forfeit(quick_forfeits, new_page, size):
    """The longest status, "You win! A (white), Bartholomew Featherstone, wins:
    B (black) forfeited (away too long)", took four lines at 320 px, three at 360 and 390 (the status
    row keeps two) and two on a desktop (it kept one): the board moved down
    by 39 px at 320, 19 at 360 and 390, 14 on a desktop. The name is cut with an
    ellipsis where the line is short, and a phone leaves "(away too long)"
    and the loser's "(black)" to screen readers: the status keeps to its two lines. What is read out
    is the whole sentence; the seat cards show the names whole."""
    from websockets.sync.client import connect

    server = quick_forfeits
    page = open_page(new_page, size)
    ticket = create_room(server, mode="online", board="7x6", seat="A", name=LONG_NAMES["A"])
    guest = api(server, "POST", f"/api/rooms/{ticket['code']}/join", {"name": LONG_NAMES["B"]})
    with connect(server.url.replace("http", "ws", 1) + f"/ws/{ticket['code']}") as bob:
        bob.send(json.dumps({"type": "hello", "token": guest["token"]}))
        open_room(page, server, ticket)
        wait_my_turn(page)
        expect(status_said(page)).to_have_text("Your move, A (white)")
        before = board_top(page)
    # Bob has gone: a second later he forfeits
    wait_over(page)
    status = page.locator("#status")
    sentence = f"You win! A (white), {LONG_NAMES['A']}, wins: B (black) forfeited (away too long)"
    expect(status_said(page)).to_have_text(sentence)
    # screen readers hear the whole reason, as one sentence ("A (white) , Ann , wins" before)
    assert status.aria_snapshot() in (f"- status: {sentence}", f'- status: "{sentence}"')
    assert board_top(page) == pytest.approx(before, abs=0.5), "the board moved when the status grew"
    lines = status.locator(".status-text").evaluate(
        "e => Math.round(e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight))"
    )
    assert lines <= 2
    for side, name in LONG_NAMES.items():
        expect(page.locator(f"#seat-{side} .seat-name")).to_have_text(name)
    name = status.locator(".status-name")
    cut = name.evaluate("e => e.scrollWidth > e.clientWidth")
    assert cut == size.startswith("phone"), "the name is cut on a phone only"


@pytest.mark.parametrize("size", [(360, 640), (768, 1024), (1280, 800)])
def test_the_ban_panel_of_an_analysis_board_covers_the_status_whole_and_shows_its_whole_text(server, new_page,
                                                                                             size):
    """Review: the panel lay over the slot and grew upwards; with three
    lines of text (the engine's estimate of declining, at 768 px) it hid the
    status's last line by half, and at 360 px its last line was cut. It
    takes the place of the status row and the slot exactly now, at every
    width: the status, which says the same, is under it whole, its text
    shows whole, and the board stays put."""
    import urllib.parse

    page = new_page(*size)
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote("7x6/Bc2:c"))
    expect(page.locator("#board .col-note")).to_have_count(7, timeout=60_000)
    top = board_top(page)
    page.locator("#board").focus()
    page.keyboard.press("c")  # Black's piece on the bonus cell c2
    panel = page.locator("#ban-panel")
    expect(panel).to_be_visible()
    expect(page.locator("#ban-text")).to_contain_text("Declining")
    assert board_top(page) == pytest.approx(top, abs=0.5), "the board moved when the panel opened"
    box, row = panel.bounding_box(), page.locator("#view-room .status-row").bounding_box()
    assert box["y"] <= row["y"] + 0.5 and row["y"] + row["height"] <= box["y"] + box["height"], (box, row)
    assert box["y"] + box["height"] <= top + 0.5, "the panel covers the board"
    assert page.locator("#ban-text").evaluate("e => e.scrollHeight <= e.clientHeight"), "the panel's text is cut"


@pytest.mark.parametrize("width", [600, 1000, 1280])
def test_the_watchers_badge_stays_beside_a_long_status_and_the_ban_panel_covers_the_row(server, new_page, width):
    """In an online room someone watches: the players see "1 watching"
    beside the status. Taking the bonus cell makes the status "Bonus!
    Choose where the ban piece goes"; at 561-600 and 901-1000 px the badge
    went onto a row of its own under it, the status row grew 11 px, the
    board went down, and the ban panel, placed for the row's kept height,
    left the status's first line showing above it. The status now wraps its
    own words beside the badge."""
    from browser_helpers import ann_and_bob, click_cell

    _, (ann, _bob, _watcher) = ann_and_bob(server, new_page, "7x6/Bd1", watcher=True)
    ann.set_viewport_size({"width": width, "height": 900})
    expect(ann.locator("#watchers")).to_have_text("1 watching")
    row = ann.locator("#view-room .status-row")
    kept = row.evaluate("e => parseFloat(getComputedStyle(e).minHeight)")
    top = board_top(ann)
    click_cell(ann, "d1")
    expect(ann.locator("#ban-panel")).to_be_visible()
    expect(ann.locator("#status")).to_contain_text("Bonus!")
    assert row.bounding_box()["height"] == pytest.approx(kept, abs=0.5), "the status row grew"
    assert board_top(ann) == pytest.approx(top, abs=0.5), "the board moved when the bonus was taken"
    badge, status = ann.locator("#watchers").bounding_box(), ann.locator("#status").bounding_box()
    assert badge["x"] >= status["x"] + status["width"], "the badge is beside the status"
    assert ann.locator("#ban-panel").bounding_box()["y"] <= row.bounding_box()["y"] + 0.5, "the status shows above the panel"


def test_after_the_game_the_keys_line_offers_only_the_keys_that_still_do_something(server, new_page):
    """A player's review: once the game was over, the line under the board
    still said "a...g or 1...7 drop a piece"."""
    page = open_page(new_page, "desktop")
    open_room(page, server, create_room(server, board="4x4", players={"A": "human", "B": "human"}))
    expect(page.locator("#keys-help .keys-play")).to_be_visible()
    expect(page.locator("#keys-help .keys-watch")).to_be_hidden()
    played = "4x4:"
    for column in "ababab":
        press_cell(page, "desktop", f"{column}1")
        played += column
        wait_position(page, played)
    expect(page.locator("#keys-help .keys-play")).to_be_visible()  # still playing: A's fourth in a wins
    press_cell(page, "desktop", "a1")
    wait_over(page)
    expect(page.locator("#keys-help .keys-play")).to_be_hidden()
    expect(page.locator("#keys-help .keys-watch")).to_be_visible()
    expect(page.locator("#keys-help")).to_contain_text("step through the moves")
