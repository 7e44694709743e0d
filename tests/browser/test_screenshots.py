"""Screenshots of the page at desktop (1280x800) and phone (390x844) sizes,
saved under artifacts/screenshots/ for people to look at. The test also
checks that nothing sticks out sideways on a phone."""

from __future__ import annotations

import pytest
from browser_helpers import (
    board,
    click_cell,
    create_room,
    open_room,
    play_online_game,
    wait_my_turn,
    wait_over,
    wait_still,
)
from playwright.sync_api import expect

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
# a 9x8 board with a forbidden cell, a bonus cell taken and a ban piece; A to move
IN_PROGRESS = "9x8/Xd3/Bb1:ecdb+addcfef"


def settled(page) -> None:
    """Until nothing on the page moves (``wait_still`` of the whole body: a
    piece falling, the evaluation bar sliding, a panel's button easing), so
    the screenshot shows where things come to rest; a fixed 200-700 ms
    could end before a loaded machine had drawn it."""
    wait_still(page, "body")


def no_sideways_scroll(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= page.viewport_size["width"], f"the page is {width}px wide"


@pytest.mark.parametrize("size", SIZES)
def test_screenshots(server, new_page, artifacts, size):
    width, height = SIZES[size]
    page = new_page(width, height)

    page.goto(server.url + "/")
    expect(page.locator("#player2 optgroup option")).not_to_have_count(0)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-home.png"), full_page=True)

    # a game in progress against the computer, with a hint on the board
    ticket = create_room(server, board=IN_PROGRESS, players={"A": "human", "B": "hard"}, name="Ann")
    open_room(page, server, ticket)
    wait_my_turn(page)
    page.locator("#hint").click()
    expect(page.locator("#board .hint[data-hint]")).to_have_count(1, timeout=60_000)
    page.mouse.move(0, 0)
    settled(page)
    no_sideways_scroll(page)
    board_box = board(page).bounding_box()
    assert board_box["x"] >= 0 and board_box["x"] + board_box["width"] <= width
    if size == "phone":
        assert board_box["width"] >= 0.9 * width - 20, "the board takes the phone's width"
    page.screenshot(path=str(artifacts / f"{size}-game.png"))
    page.screenshot(path=str(artifacts / f"{size}-game-full.png"), full_page=True)

    # choosing where the ban piece goes
    bonus = create_room(server, board="8x7/Xe2/Bd2:dc", players={"A": "human", "B": "human"})
    open_room(page, server, bonus)
    page.locator('#board [data-cell="d4"]').click()
    expect(page.locator("#ban-panel")).to_be_visible()
    page.locator('#board [data-cell="f3"]').hover()
    expect(page.locator('#board [data-preview="f"]')).to_be_visible()  # the ban piece shown over the hovered column
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-ban-choice.png"))

    # an online room waiting for its guest
    online = create_room(server, mode="online", board="random", bonus=True, seat="A", name="Ann")
    open_room(page, server, online)
    expect(page.locator("#share-panel")).to_be_visible()
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-online-waiting.png"), full_page=True)

    # a finished game: the winning line
    over = create_room(server, board="7x6/Xd1:cdcdce", players={"A": "human", "B": "human"})  # a finished one is refused
    open_room(page, server, over)
    click_cell(page, "c4")
    wait_over(page)
    settled(page)
    page.screenshot(path=str(artifacts / f"{size}-game-over.png"))

    # the hint's exact score above every column, then stepping back through the game
    classic = create_room(server, board="7x6:ddcc", players={"A": "human", "B": "human"})
    open_room(page, server, classic)
    page.locator("#hint").click()
    expect(page.locator("#board .col-note")).to_have_count(7, timeout=60_000)
    page.mouse.move(0, 0)
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-hint-scores.png"))
    page.locator("#step-back").click()
    page.locator("#step-back").click()
    expect(board(page)).to_have_attribute("data-view", "2")
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-stepping.png"))

    # the review after the game: White's blunder (a) marked, and the
    # position it was played from with White's score of every column
    reviewed = create_room(server, board="7x6:adcdcdc", players={"A": "human", "B": "human"})
    open_room(page, server, reviewed)
    page.locator('#board [data-cell="d4"]').click()
    wait_over(page)
    page.locator("#review").click()
    expect(page.locator("#review-list .review-row")).to_have_count(8, timeout=60_000)
    page.locator('#review-list .review-row[data-ply="1"]').click()
    expect(board(page)).to_have_attribute("data-view", "0")
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-review.png"))
    page.screenshot(path=str(artifacts / f"{size}-review-full.png"), full_page=True)

    # the finished games and a replay
    code = play_online_game(server, "dcdcded")
    page.goto(server.url + "/games")
    expect(page.locator(f'#games-list tr[data-code="{code}"]')).to_be_visible()
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-games.png"))
    page.goto(server.url + f"/games/{code}")
    expect(page.locator("#replay-board")).to_have_attribute("data-ply", "7")
    page.locator("#replay-prev").click()
    page.locator("#replay-prev").click()
    expect(page.locator("#replay-board")).to_have_attribute("data-ply", "5")
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-replay.png"), full_page=True)
    page.locator("#replay-review").click()
    expect(page.locator("#replay-review-list .review-row")).to_have_count(7, timeout=60_000)
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-replay-review.png"), full_page=True)


LOOKS = [("contrast", "light"), ("classic", "light"), ("contrast", "dark"), ("classic", "dark")]


@pytest.mark.parametrize("size", SIZES)
def test_theme_screenshots(server, new_page, artifacts, size):
    """Each theme, light and dark, on a finished double win (both lines
    drawn) with a forbidden cell; and the settings panel open."""
    width, height = SIZES[size]
    page = new_page(width, height)
    over = create_room(server, board="7x6/Xa3:fcgffgeggggcec", players={"A": "human", "B": "human"}, name="Ann")
    page.goto(server.url + "/")  # a finished position starts no room: its last move is played here
    open_room(page, server, over)
    click_cell(page, "d1")
    wait_over(page)
    for pieces, mode in LOOKS:
        page.goto(server.url + "/games")
        page.evaluate("([p, m]) => { localStorage.setItem('c4lab.pieces', p); localStorage.setItem('c4lab.mode', m); }", [pieces, mode])
        open_room(page, server, over)
        wait_over(page)
        expect(page.locator("#board .win-line")).to_have_count(2)
        assert page.evaluate("document.documentElement.dataset.scheme") == mode
        settled(page)
        no_sideways_scroll(page)
        page.screenshot(path=str(artifacts / f"{size}-theme-{pieces}-{mode}.png"))
    page.locator("#settings-button").click()
    expect(page.locator("#settings-panel")).to_be_visible()
    settled(page)
    no_sideways_scroll(page)
    page.screenshot(path=str(artifacts / f"{size}-settings.png"))
