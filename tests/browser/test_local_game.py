"""A whole local game against an agent, started from the new-game form and
played by clicks in the middle and at the bottom of columns; a game between
two agents, watched."""

from __future__ import annotations

import re
import threading

import pytest
from browser_helpers import (
    RECORD_POSITIONS,
    board,
    click_cell,
    custom_board_form,
    moves,
    piece,
    position,
    tokens_of,
    wait_my_turn,
    wait_still,
)
from playwright.sync_api import expect

from c4lab.agents.base import warm_once
from c4lab.rules import Position

PREFERENCE = "cebfagd"  # our columns, in order, when one is full


@pytest.mark.slow
def test_full_game_against_an_agent_on_a_board_with_a_forbidden_cell(server, new_page):
    page = new_page()
    # the form: chosen size 7x6 with d1 forbidden; player 2 a seeded random agent
    custom_board_form(page, server, 7, 6)
    page.locator("#forbidden").fill("")
    page.locator('#forbidden-picker [data-mini="d1"]').click()  # the picture sets the cell
    expect(page.locator("#forbidden")).to_have_value("d1")
    page.locator("#player1").select_option("human")
    page.locator("#player2").select_option("random")
    page.locator("#player2-options").fill("seed=1")
    page.locator("#first").select_option("A")
    page.locator("#name").fill("Ann")
    page.locator("#start").click()
    expect(page).to_have_url(re.compile(r"/r/[\w-]{16}$"))
    wait_my_turn(page)
    assert position(page) == "7x6/Xd1"
    expect(page.locator('#board [data-forbidden="d1"]')).to_be_visible()
    expect(page.locator("#seat-A .seat-name")).to_have_text("Ann")
    expect(page.locator("#seat-B .seat-kind")).to_contain_text("random:seed=1")

    # first move: a click in the middle of column d; the piece skips the X
    click_cell(page, "d4")
    expect(piece(page, "d2")).to_have_attribute("data-owner", "A")
    expect(piece(page, "d1")).to_have_count(0)
    wait_still(page, '#board [data-piece="d2"]')  # the fall is over
    x_box = page.locator('#board [data-forbidden="d1"]').bounding_box()
    piece_box = piece(page, "d2").bounding_box()
    assert piece_box["y"] + piece_box["height"] <= x_box["y"] + 2, (
        "the piece must sit above the forbidden cell"
    )

    # then play on, clicking the bottom cell or a middle cell, until the end
    clicks = 1
    while board(page).get_attribute("data-status") == "playing":
        wait_my_turn_or_over(page)
        if board(page).get_attribute("data-status") != "playing":
            break
        before = position(page)
        cells = page.evaluate("() => window.c4lab.R.state.cells")
        for letter in PREFERENCE:
            height_used = sum(1 for name in cells if name[0] == letter)
            if height_used < 6 - (letter == "d"):
                break
        row = 1 if clicks % 2 else 3  # the bottom cell, or the middle one
        click_cell(page, f"{letter}{row}")
        clicks += 1
        expect(board(page)).not_to_have_attribute("data-position", before)
        assert clicks < 30

    expect(board(page)).to_have_attribute("data-status", "over")
    status = page.locator("#status").inner_text()
    assert re.search(r"wins|Draw", status), status
    result = board(page).get_attribute("data-result")
    assert result in ("A", "B", "draw")
    if result != "draw":
        expect(page.locator("#board .win-line")).to_have_count(1)
        expect(page.locator(f"#seat-{result}")).to_have_class(re.compile("winner"))
    # the move list is the game in notation
    assert moves(page) == tokens_of(position(page))
    expect(page.locator("#position")).to_have_value(position(page))


def wait_my_turn_or_over(page) -> None:
    expect(board(page)).to_have_attribute("data-to-move", re.compile(r"^(A|)$"), timeout=15_000)
    if board(page).get_attribute("data-status") == "playing":
        wait_my_turn(page)


def test_a_size_chosen_keeps_the_forbidden_cell_on_its_board(server, new_page):
    """The form proposes d3, a cell of every board (4 to 12 a side). A
    cell picked on a large board and then off a smaller one stayed in the
    field while the picture showed none, and Start was refused ("cell k10
    is off the 5x4 board"): the form proposes d3 again, and says why; a cell
    typed off the board is said at once."""
    page = new_page()
    custom_board_form(page, server, 12, 12)
    expect(page.locator("#forbidden")).to_have_value("d3")
    page.locator('#forbidden-picker [data-mini="k10"]').click()
    expect(page.locator("#forbidden")).to_have_value("k10")
    page.locator("#width").select_option("5")
    page.locator("#height").select_option("4")
    expect(page.locator("#forbidden")).to_have_value("d3")
    note = page.locator("#forbidden-note")
    # the line follows the size (it said "5 × 12" on a 5 × 4 board), and a size k10 fits again brings it back
    expect(note).to_have_text("k10 is not on a 5 × 4 board: the forbidden cell is d3 now.")
    expect(note).to_have_attribute("aria-live", "polite")
    expect(page.locator("#forbidden-picker .is-forbidden")).to_have_attribute("data-mini", "d3")
    page.locator("#width").select_option("12")
    page.locator("#height").select_option("12")
    expect(page.locator("#forbidden")).to_have_value("k10")
    expect(note).to_have_text("")
    page.locator("#width").select_option("5")
    page.locator("#height").select_option("4")
    expect(page.locator("#forbidden")).to_have_value("d3")
    expect(note).to_have_text("k10 is not on a 5 × 4 board: the forbidden cell is d3 now.")
    page.locator("#forbidden").fill("f2")
    expect(note).to_have_text("f2 is not on a 5 × 4 board: columns a to e, rows 1 to 4.")
    page.locator("#forbidden").fill("e4")  # the top right corner: on the board
    expect(note).to_have_text("")
    page.locator("#forbidden").fill("d3")
    expect(page.locator("#player2 option[value=hard]")).to_be_attached()  # listed: their arrival sets the defaults
    page.locator("#player2").select_option("human")
    page.locator("#start").click()
    expect(page).to_have_url(re.compile(r"/r/[^/?]+$"))
    expect(board(page)).to_have_attribute("data-position", "5x4/Xd3")


@pytest.mark.slow
def test_two_agents_can_be_watched(server, new_page):
    page = new_page()
    page.goto(server.url + "/")
    page.locator("#board-custom").check()
    page.locator("#width").select_option("4")
    page.locator("#height").select_option("4")
    page.locator("#forbidden").fill("b2")
    page.locator("#player1").select_option("random")
    page.locator("#player1-options").fill("seed=3")
    page.locator("#player2").select_option("random")
    page.locator("#player2-options").fill("seed=4")
    # record every position the page shows, and every message it says
    page.add_init_script(RECORD_POSITIONS)
    page.add_init_script("""window.__said = [];
new MutationObserver(() => {
  const m = document.getElementById('message');
  if (m && m.textContent) window.__said.push(m.textContent);
}).observe(document, {subtree: true, childList: true, characterData: true});""")
    page.locator("#start").click()
    expect(board(page)).to_have_attribute("data-status", "over", timeout=30_000)
    # the person watches from the start: no "Your saved seat for this room is not valid" as the room opens
    # (the page kept the creator's token, which holds no seat here, and said hello with it)
    assert page.evaluate("window.__said") == []
    seen = page.evaluate("window.__seen")
    final = position(page)
    n = len(tokens_of(final))
    # the game unfolds move by move on screen, although the agents played it at once
    assert len(seen) >= n, seen
    assert seen[-1] == final
    expect(page.locator("#status")).to_contain_text(re.compile(r"wins|Draw"))


def test_an_agent_that_plays_another_agents_moves_on_this_board_says_so(server, new_page):
    # ntuple ships a network for 7x6 only: on 9x8 it plays heuristic's moves, and its seat says so
    page = new_page()
    custom_board_form(page, server, 9, 8)
    page.locator("#player1").select_option("human")
    page.locator("#player2").select_option("ntuple")
    page.locator("#first").select_option("A")
    page.locator("#start").click()
    wait_my_turn(page)
    expect(page.locator("#seat-B .seat-kind")).to_have_text("B (black) · computer · ntuple, heuristic's moves on this board")
    expect(page.locator("#seat-A .seat-kind")).to_have_text("A (white) · at this screen")


def test_a_move_another_agent_chose_says_so_on_the_seat(server, new_page):
    # perfect cannot solve the empty 12x12 board in its second: master's move, said on perfect's seat
    # Its kernels for 12x12 (and master's) compiled, or loaded from numba's cache, before Start, in this
    # process the server shares: the server's own warm-up is then skipped (claimed), and the wait for the
    # first move covers that move alone, not a compile (a minute on an empty cache and a loaded machine).
    # Its throwaway moves think 0.05 s, not perfect's second: the same kernels, run shorter.
    warming = threading.Thread(target=warm_once, args=("perfect:time=0.05", Position.parse("12x12")))
    warming.start()  # while the page opens and its form is filled in
    page = new_page(390, 844, has_touch=True, is_mobile=True)
    custom_board_form(page, server, 12, 12)
    page.locator("#player1").select_option("human")
    page.locator("#player2").select_option("perfect")
    page.locator("#first").select_option("B")  # the computer moves first
    warming.join()
    page.locator("#start").click()
    wait_my_turn(page)
    expect(page.locator("#seat-A .seat-conn")).to_have_text(re.compile(r"^· last move not solved in [\d.]+ s: master's move$"))
    expect(page.locator("#seat-B .seat-conn")).to_have_text("")
    # on a phone the sentence wraps inside its card
    assert page.locator("#seat-A").evaluate("e => e.scrollWidth <= e.clientWidth")
