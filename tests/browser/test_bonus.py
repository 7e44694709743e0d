"""The bonus cell: a ban chosen by click, a ban chosen by keyboard, a
declined ban."""

from __future__ import annotations

import pytest
from browser_helpers import (
    RECORD_SHOWN,
    click_cell,
    create_room,
    moves,
    open_room,
    piece,
    wait_my_turn,
    wait_position,
)
from playwright.sync_api import expect


def start_from_paste(page, server, text: str) -> None:
    """A local game for two people at this screen, from the paste box."""
    page.goto(server.url + "/")
    page.locator("#board-paste").check()
    page.locator("#paste-position").fill(text)
    expect(page.locator("#player2 option[value=hard]")).to_be_attached()  # listed: their arrival sets the defaults
    page.locator("#player1").select_option("human")
    page.locator("#player2").select_option("human")
    page.locator("#start").click()
    wait_position(page, text)


def test_a_ban_piece_is_placed_and_drawn(server, new_page):
    page = new_page()
    start_from_paste(page, server, "5x5/Bc1")
    expect(page.locator('#board [data-bonus="c1"]')).to_be_visible()
    expect(page.locator("#keys-bonus")).to_be_visible()  # the keys of the ban, while the bonus is to take
    # A plays c: the piece lands on the bonus cell, the page asks for a ban
    click_cell(page, "c4")
    expect(page.locator("#ban-panel")).to_be_visible()
    expect(page.locator("#ban-text")).to_contain_text("bonus cell c1")
    expect(page.locator('#board [data-pending="c1"]')).to_be_visible()
    expect(page.locator("#board [data-ban-target]")).to_have_count(5)
    wait_position(page, "5x5/Bc1")  # nothing sent yet
    # the ban goes into column a (a click in the middle of it)
    click_cell(page, "a3")
    wait_position(page, "5x5/Bc1:c+a")
    expect(page.locator("#ban-panel")).to_be_hidden()
    expect(page.locator("#keys-bonus")).to_be_hidden()  # taken: no ban to choose any more
    expect(piece(page, "c1")).to_have_attribute("data-owner", "A")
    expect(piece(page, "a1")).to_have_attribute("data-owner", "ban")
    expect(page.locator('#board [data-piece="a1"] .ban-bar')).to_have_count(1)
    assert moves(page) == ["c+a"]
    # B's next piece in column a lands on the ban piece
    click_cell(page, "a1")
    wait_position(page, "5x5/Bc1:c+aa")
    expect(piece(page, "a2")).to_have_attribute("data-owner", "B")


def test_ban_by_keyboard_and_cancel(server, new_page):
    page = new_page()
    start_from_paste(page, server, "6x5/Xb1/Bb2")
    page.locator("#board").focus()
    page.keyboard.press("b")  # lands on b2 (b1 is forbidden): the bonus
    expect(page.locator("#ban-panel")).to_be_visible()
    page.keyboard.press("Escape")  # changed my mind
    expect(page.locator("#ban-panel")).to_be_hidden()
    expect(page.locator("#board [data-pending]")).to_have_count(0)
    page.keyboard.press("2")  # column b again, by its number
    expect(page.locator("#ban-panel")).to_be_visible()
    page.keyboard.press("b")  # the ban into the column just played
    wait_position(page, "6x5/Xb1/Bb2:b+b")
    expect(piece(page, "b2")).to_have_attribute("data-owner", "A")
    expect(piece(page, "b3")).to_have_attribute("data-owner", "ban")


def test_declining_the_ban(server, new_page):
    page = new_page()
    ticket = create_room(server, board="5x5/Bc2:c", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    click_cell(page, "c5")  # B lands on c2, the bonus cell
    expect(page.locator("#ban-panel")).to_be_visible()
    page.locator("#decline-ban").click()
    wait_position(page, "5x5/Bc2:cc")
    expect(piece(page, "c2")).to_have_attribute("data-owner", "B")
    expect(page.locator('#board [data-owner="ban"]')).to_have_count(0)
    # the notation writes a declined ban as a plain drop; the move list says it
    assert moves(page) == ["c", "c (no ban)"]
    # by keyboard: N declines (a fresh game where A lands on the bonus)
    ticket = create_room(server, board="5x5/Bd1", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)  # a key pressed before the page knows whose seat it holds would be ignored
    page.keyboard.press("d")
    expect(page.locator("#ban-panel")).to_be_visible()
    page.keyboard.press("n")
    wait_position(page, "5x5/Bd1:d")
    expect(page.locator('#board [data-owner="ban"]')).to_have_count(0)


def test_a_bonus_landing_that_wins_declined_nothing_in_the_move_list(server, new_page):
    """Review: a landing on the bonus cell that won was listed as "d (no
    ban)", its name "... and declines the ban piece": RULES.md offers no ban
    after a winning landing, so nobody declined one."""
    page = new_page()
    ticket = create_room(server, board="4x4/Bd1:aabbcc", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    click_cell(page, "d4")  # A lands on d1, the bonus cell, and wins along row 1
    wait_position(page, "4x4/Bd1:aabbccd")
    assert moves(page)[-1] == "d"
    label = page.locator('#moves .mv[data-ply="7"]').get_attribute("aria-label")
    assert label == "Move 7: A (white) played d (d1), on the bonus cell", label


#: A system font wider than this machine's, for "(no ban)": the style sheet's widths were measured here.
WIDER_FONT = """document.addEventListener("DOMContentLoaded", () => {
  const sheet = new CSSStyleSheet();  // the page's policy allows no <style> element: a sheet made in script
  sheet.replaceSync(".moves .mv .no-ban { letter-spacing: .2em; }");
  document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
});"""


@pytest.mark.parametrize("font", ["this machine's", "wider"])
@pytest.mark.parametrize("width", [360, 390, 768, 1280])
def test_a_declined_ban_in_the_move_list_stays_on_one_line_in_columns_of_pairs(server, new_page, width, font):
    """'(no ban)' is read on one line beside its move, inside its pair's
    place in the list, on a phone as on a desktop (it folded into '(no' over
    'ban)' in a pair's column, and on a phone ran past it); and the list
    stays a grid of pairs: every pair as wide as the others, one after the
    other in reading order, no cell left empty before the last row (the
    pair took two columns, and where it came to a row's last one it went
    to the next row, leaving that cell empty: "1. a b  2. c d  __" over
    "3. e e (no ban)  4. a b"), nothing wider than its place."""
    page = new_page(width, 844)
    if font == "wider":  # review: the columns must fit the pairs in whatever font the browser has
        page.add_init_script(WIDER_FONT)
    ticket = create_room(server, board="7x7/Xd4/Be2:abcdeeabgfgfab", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    assert moves(page)[5] == "e (no ban)"
    note = page.locator("#moves .no-ban")
    assert note.evaluate("n => n.getClientRects().length") == 1  # one box: not folded
    heights = page.locator("#moves .mv").evaluate_all("ms => ms.map(m => m.getBoundingClientRect().height)")
    assert max(heights) == min(heights), heights  # as tall as a plain move: one line
    overflow = page.locator("#moves li").evaluate_all("ls => ls.map(l => l.scrollWidth - l.clientWidth)")
    assert max(overflow) <= 0, overflow  # no pair runs past its place
    listed = page.locator("#moves")
    assert listed.evaluate("l => l.scrollWidth - l.clientWidth") <= 0  # the list does not scroll sideways
    places = page.locator("#moves li").evaluate_all(
        "ls => ls.map(l => { const r = l.getBoundingClientRect(); return [r.left, r.top, r.width]; })"
    )
    assert len({round(w, 1) for _, _, w in places}) == 1, places  # one width
    columns = sorted({round(left) for left, _, _ in places})
    assert len(columns) >= 2 or font == "wider", places  # pairs side by side (in this machine's fonts)
    for i, (left, top, _) in enumerate(places):  # in reading order, no cell skipped
        assert round(left) == columns[i % len(columns)], (i, places)
        assert round(top) == round(places[i - i % len(columns)][1]), (i, places)


def test_a_hint_asked_while_the_ban_is_chosen_says_what_the_ban_scores_are(server, new_page):
    """While the ban piece is chosen the scores above the columns are the
    ban choices' (exact, else the engine's estimate, else ?), so the hint's
    message speaks of those, not of the drops.  (Checked on every text the
    line showed: a look for what it does not say passed once the line had
    cleared itself, 4 s later, whatever it had said.)"""
    page = new_page()
    start_from_paste(page, server, "5x5/Bc1")
    click_cell(page, "c4")  # the piece lands on the bonus cell
    expect(page.locator("#ban-panel")).to_be_visible()
    page.evaluate(RECORD_SHOWN)
    page.locator("#hint").click()
    # (a first hint on a fresh numba cache compiles the solver first)
    page.wait_for_function("() => window.__shown.some((text) => text.includes('above each column'))", timeout=60_000)
    said = [text for text in page.evaluate("window.__shown") if "above each column" in text.lower()]
    assert said and all("While the ban piece is chosen, above each column: the score of putting it there" in text
                        and "Above each column: its exact score" not in text for text in said), said


def test_a_pasted_board_with_its_own_bonus_cell_and_the_bonus_box_ticked_is_refused_in_the_form(server, new_page):
    """The room played the pasted board's bonus cell and dropped the one
    the ticked box asked for without a word; the form says why no game
    started, and keeps what was typed."""
    page = new_page()
    page.goto(server.url + "/")
    page.locator("#board-paste").check()
    page.locator("#paste-position").fill("5x5/Bc1")
    page.locator("#bonus").check()
    page.locator("#start").click()
    expect(page.locator("#form-error")).to_have_text(
        "The game could not start: the board 5x5/Bc1 has its bonus cell (c1) already, and the bonus asked for "
        "would draw another: give one or the other")
    assert page.url.rstrip("/") == server.url
    expect(page.locator("#paste-position")).to_have_value("5x5/Bc1")
    expect(page.locator("#bonus")).to_be_checked()


def test_a_hint_asked_while_the_ban_is_chosen_names_the_best_ban(server, new_page, monkeypatch):
    """The drop on the bonus cell is made and its ban is to choose: the
    hint names the best place for the ban piece (here b: c+b keeps a draw,
    every other ban and declining lose), draws its ghost there and rings
    its score, where it named the drop from the position before (a newcomer
    who followed it put the ban in the worst column).  The solver has all
    the time it needs here: in its usual half second a loaded machine left
    the bans to the engine's estimate, which named c."""
    from c4lab.server import review

    monkeypatch.setattr(review, "PER_POSITION", 60.0)
    page = new_page()
    ticket = create_room(server, board="5x5/Bc1:abab", players={"A": "human", "B": "random:seed=1"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    click_cell(page, "c1")  # A's piece lands on the bonus cell c1
    expect(page.locator("#ban-panel")).to_be_visible()
    page.locator("#hint").click()
    expect(page.locator("#message")).to_contain_text("Hint: put the ban piece in column b", timeout=60_000)
    expect(page.locator("#board .hint[data-hint]")).to_have_attribute("data-hint", "c+b")
    expect(page.locator('#board .col-note.best[data-note="b"]')).to_have_count(1)
    wait_position(page, "5x5/Bc1:abab")  # nothing played by the hint
