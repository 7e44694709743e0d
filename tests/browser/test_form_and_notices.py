"""A newcomer's small stumbles around the new-game form and the notices,
each a page that behaves as a person expects: "Your games" names the
colours of the theme chosen, the form offers the mode last started again,
a copy says so under its button, and Start puts the keyboard on the board
(but a finger's tap on a phone does not). At 390x700 and 1400x900, in the
light and the dark look."""

from __future__ import annotations

import sqlite3

import pytest
from browser_helpers import click_cell, resign, status_said, wait_position
from playwright.sync_api import expect

SIZES = {"phone": (390, 700), "desktop": (1400, 900)}
SCHEMES = ("light", "dark")


def start_from_form(page, server, mode: str, *, players=("human", "human")) -> None:
    """The form on a classic board in `mode`, started with a click; waits for the room."""
    page.goto(server.url + "/")
    page.locator("#board-classic").check()
    page.locator(f"#mode-{mode}").check()
    if mode == "local":
        expect(page.locator("#player2 option[value=hard]")).to_be_attached()  # the agents are listed
        page.locator("#player1").select_option(players[0])
        page.locator("#player2").select_option(players[1])
    page.locator("#start").click()
    page.wait_for_url("**/r/**")
    expect(page.locator("#board")).to_have_attribute("data-live", "1")


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_your_games_name_the_colours_of_the_theme_chosen(server, new_page, size, scheme):
    page = new_page(*SIZES[size], color_scheme=scheme)
    start_from_form(page, server, "local")
    page.locator("#nav-new").click()
    recent = page.locator("#recent")
    expect(recent).to_contain_text("A (white) to move")
    page.locator("#settings-button").click()
    page.locator("#theme-pieces").select_option("classic")
    expect(recent).to_contain_text("A (red) to move")  # at once, as the rest of the page does
    expect(recent).not_to_contain_text("(white)")


@pytest.mark.parametrize("size", SIZES)
def test_the_form_offers_the_mode_last_started_again(server, new_page, size):
    page = new_page(*SIZES[size])
    start_from_form(page, server, "online")
    page.locator("#nav-new").click()  # the top bar's New game, after an online game
    expect(page.locator("#mode-online")).to_be_checked()
    expect(page.locator("#online-options")).to_be_visible()
    start_from_form(page, server, "local")
    page.goto(server.url + "/")
    expect(page.locator("#mode-local")).to_be_checked()
    page.goto(server.url + "/?mode=analysis")  # an address that names a mode has the last word
    expect(page.locator("#mode-analysis")).to_be_checked()


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("size", SIZES)
def test_link_copied_is_said_under_the_button_pressed(server, new_page, size, scheme):
    page = new_page(*SIZES[size], color_scheme=scheme)
    start_from_form(page, server, "online")
    for button in ("#copy-link", "#copy-position"):
        if not page.locator(button).is_visible():
            continue  # the position's panel, folded away on a phone
        page.locator(button).click()
        notice = page.locator("#toast")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("copied")
        pressed, said = page.locator(button).bounding_box(), notice.bounding_box()
        assert 0 <= said["y"] - (pressed["y"] + pressed["height"]) <= 20, (pressed, said)  # just under it
        assert said["x"] >= 0 and said["x"] + said["width"] <= SIZES[size][0]  # inside the window
        assert said["y"] + said["height"] <= SIZES[size][1] or button != "#copy-link"  # the invite is in view
        expect(notice).to_be_hidden()  # it goes by itself


@pytest.mark.parametrize("mode", ["local", "analysis"])
@pytest.mark.parametrize("size", SIZES)
def test_start_puts_the_keyboard_on_the_board(server, new_page, size, mode):
    page = new_page(*SIZES[size])
    start_from_form(page, server, mode)
    expect(page.locator("#board")).to_be_focused()
    page.keyboard.press("d")  # the keys play at once, no click or Tab first
    wait_position(page, "7x6:d")


@pytest.mark.parametrize("size", SIZES)
def test_start_tapped_on_a_phone_leaves_the_focus_alone(server, new_page, size):
    page = new_page(*SIZES[size], has_touch=True, is_mobile=True)
    page.goto(server.url + "/")
    page.locator("#board-classic").tap()
    expect(page.locator("#player2 option[value=hard]")).to_be_attached()
    page.locator("#player2").select_option("human")
    page.locator("#start").tap()
    page.wait_for_url("**/r/**")
    # a focus given on arrival is given before the socket opens (room.js): it would be there by now
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    assert page.evaluate("document.activeElement === document.body")
    expect(page.locator("#board .preview-piece")).to_have_count(0)  # no piece hovering over a column it never touched


@pytest.mark.parametrize("button", ["#play-again", "#swap-sides"])
def test_rematch_and_swap_sides_put_the_keyboard_on_the_new_board(server, new_page, button):
    """After a game, Rematch or Swap sides opens the new game's page with
    the keys on its board, as Start does: a keyboard player goes on at once."""
    from browser_helpers import click_cell, create_room, open_room, wait_over

    page = new_page(*SIZES["desktop"])
    ticket = create_room(server, board="5x4:abacac", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    click_cell(page, "a4")  # A wins at once
    wait_over(page)
    first_room = page.url
    page.locator(button).focus()
    page.keyboard.press("Enter")
    page.wait_for_url(lambda url: url != first_room)
    wait_position(page, "5x4:abacac")
    expect(page.locator("#board")).to_be_focused()
    page.keyboard.press("d")
    wait_position(page, "5x4:abacacd")


def test_a_rematch_tapped_where_a_click_has_no_pointer_type_leaves_the_focus_alone(server, new_page):
    """Some browsers (Safari before 17) give a click no pointerType: the
    finger pressed just before it tells it was a tap, so the new board
    takes no focus (a piece would hover over a column never touched)."""
    from browser_helpers import click_cell, create_room, open_room, wait_over

    page = new_page(*SIZES["phone"], has_touch=True, is_mobile=True)
    ticket = create_room(server, board="5x4:abacac", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    click_cell(page, "a4")  # A wins at once
    wait_over(page)
    first_room = page.url
    page.locator("#play-again").evaluate("""button => {
        button.dispatchEvent(new PointerEvent("pointerdown", { pointerType: "touch", bubbles: true }));
        button.dispatchEvent(new MouseEvent("click", { detail: 1, bubbles: true }));  // no pointerType
    }""")
    page.wait_for_url(lambda url: url != first_room)
    wait_position(page, "5x4:abacac")  # a focus given on arrival is given before the socket opens (room.js)
    assert page.evaluate("document.activeElement === document.body")



FINISHED = "7x6:abababa"  # A's four in column a: no move left to play


@pytest.mark.parametrize("mode", ["local", "online"])
def test_a_finished_position_pasted_in_the_form_is_refused_and_makes_no_room(server, new_page, mode):
    """A game cannot start where it is already over: the form says so in one
    line, as ``c4lab play --board`` does, and stays; it opened a room that
    told its player "You win!" for a game never played (an online one was
    listed on Finished games with no move)."""
    page = new_page(*SIZES["desktop"])
    page.goto(server.url + "/")
    page.locator("#board-paste").check()
    page.locator("#paste-position").fill(FINISHED)
    page.locator(f"#mode-{mode}").check()
    page.locator("#start").click()
    error = page.locator("#form-error")
    expect(error).to_have_text(
        f"The game could not start: the game is over in {FINISHED}: start from a position with a move to play"
    )
    assert page.url == server.url + "/"
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0


def test_a_finished_position_opens_on_the_analysis_board_but_starts_no_game_from_a_room(server, new_page):
    """The analysis board takes a finished game (to step back through it);
    a game's own paste box refuses one, saying why under it."""
    page = new_page(*SIZES["desktop"])
    page.goto(server.url + "/analyse?position=" + FINISHED)
    wait_position(page, FINISHED)
    expect(page.locator("#status")).to_contain_text("wins")
    start_from_form(page, server, "local")
    room = page.url
    page.locator("#paste-here").fill(FINISHED)
    page.locator("#paste-start").click()
    expect(page.locator("#paste-error")).to_have_text(
        f"That position cannot start a game: the game is over in {FINISHED}: start from a position with a move to play"
    )
    assert page.url == room
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 2  # the analysis board and the game


def test_an_agent_above_the_servers_limit_is_refused_with_what_to_choose(server, new_page):
    """A person asking the form for a longer think than the server allows
    is told what the server lets an agent do and what to choose; the
    refusal named ``--max-think``, an option of ``c4lab serve`` a player
    of the page does not have."""
    page = new_page(*SIZES["desktop"])
    page.goto(server.url + "/")
    page.locator("#board-classic").check()
    page.locator("#mode-local").check()
    expect(page.locator("#player2 option[value=master]")).to_be_attached()
    page.locator("#player2").select_option("master")
    page.locator("#player2-options").fill("time=60")
    page.locator("#start").click()
    expect(page.locator("#form-error")).to_have_text(
        "The game could not start: 'master:time=60': time=60 is more than this server allows: it lets an agent "
        "think at most 5 s a move; choose time=5 or less"
    )
    assert page.url == server.url + "/"



def test_the_form_waits_for_its_computer_players_and_keeps_a_choice_made_before(server, new_page):
    """The list of computer players comes from the server after the page:
    until it is there Start waits (pressed before, the browser sent the form
    itself: the page loaded again and no game started), and a player chosen meanwhile
    stays chosen (it was set back to the default, hard, as the list came).
    Tests met both on a loaded machine."""
    page = new_page(*SIZES["desktop"])
    held = []
    page.route("**/api/agents", lambda route: held.append(route))  # the list is on its way until the test lets it come
    page.goto(server.url + "/")
    page.locator("#board-classic").check()
    page.locator("#player2").select_option("human")
    expect(page.locator("#start")).to_be_disabled()
    expect(page.locator("#player2 option[value=hard]")).to_have_count(0)
    for _ in range(300):  # the route's handler runs while Playwright waits: until it has had the request
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    held[0].continue_()
    expect(page.locator("#player2 option[value=hard]")).to_be_attached()
    expect(page.locator("#start")).to_be_enabled()
    expect(page.locator("#player2")).to_have_value("human")
    expect(page.locator("#player1")).to_have_value("human")
    page.locator("#start").click()
    page.wait_for_url("**/r/**")
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    seats = page.evaluate("window.c4lab.R.state.seats")
    assert (seats["A"]["kind"], seats["B"]["kind"]) == ("human", "human")


def test_the_form_and_the_room_name_the_sides_as_every_screen_does(server, new_page):
    """One vocabulary (docs/design.md): the form's players 1 and 2 are told
    which side each gets, by its letter with the theme's colour ("A
    (white)"), and the room names a side so ("A (white) to move": where
    one person plays both sides, no name beside it, which would be the
    same each turn); the form said "Whoever moves first plays white (A)",
    the room "White (Player A) to move", the terminal "A (white)"."""
    page = new_page(*SIZES["desktop"])
    page.clock.install()  # (resign holds the page's clock between its two clicks)
    page.goto(server.url + "/?first=B")
    help_line = page.locator("#first-help")
    expect(help_line).to_have_text("Player 2 plays A (white) and moves first; player 1 plays B (black).")
    page.locator("#first").select_option("random")
    expect(help_line).to_have_text("Drawn at the start: one player plays A (white) and moves first, the other B (black).")
    page.locator("#settings-button").click()
    page.locator("#theme-pieces").select_option("classic")  # no colour the pieces shown are not
    expect(help_line).to_contain_text("A (red)")
    expect(page.locator("#seat option[value=A]")).to_have_text("A (red), moves first")
    page.locator("#theme-pieces").select_option("contrast")
    page.locator("#settings-close").click()
    start_from_form(page, server, "local")  # two people at this screen, no names given
    status = status_said(page)
    expect(status).to_have_text("A (white) to move")
    expect(page.locator("#seat-A .seat-kind")).to_have_text("A (white) · at this screen")
    click_cell(page, "d1")
    expect(status).to_have_text("B (black) to move")
    resign(page)  # B's, to move
    expect(status).to_have_text("A (white) wins: B (black) resigned")
