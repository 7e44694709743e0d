"""A hostile visitor's values reach the page as text, never as markup; the
page does all it does under the server's Content-Security-Policy; and no
other site can put the board in a frame of its own to steer a player's
clicks."""

from __future__ import annotations

import re
import urllib.parse

from browser_helpers import click_cell, create_room, open_room, wait_my_turn, wait_position
from playwright.sync_api import expect

#: Markup that would set ``window.pwned`` if the page ever took it as HTML.
PAYLOAD = '<img src=x onerror="window.pwned=1">'
QUOTED = urllib.parse.quote(PAYLOAD, safe="")
#: The same in a name's 24 characters.
NAME = "<svg onload=pwned=1>"

#: Records what the policy refused, from before the page's first script.
WATCH_POLICY = """
window.refused = [];
document.addEventListener("securitypolicyviolation", (e) => window.refused.push(`${e.violatedDirective} ${e.blockedURI}`));
"""


def injected(page) -> bool:
    """Whether anything of the payload ran or became an element."""
    return bool(page.evaluate("window.pwned")) or page.locator("[onerror], [onload]").count() > 0


def test_values_in_the_address_are_shown_as_text(server, new_page):
    page = new_page()
    for path, shown in [
        (f"/r/{QUOTED}", f"There is no room {PAYLOAD}: check the link, or start a new game."),
        (f"/games/{QUOTED}", f"There is no game {PAYLOAD}."),
        # a character nobody can read, as its escape (review: "There is no game  ." with a NUL in the gap)
        ("/games/a%00b%1b", "There is no game a\\u0000b\\u001b."),
        ("/r/a%07b", "There is no room a\\u0007b: check the link"),
        # quoted as the link says it (a %20 a space; a literal "+" would be the ban piece's mark)
        (f"/analyse?position={QUOTED}", f"invalid position '{PAYLOAD}'"),
    ]:
        page.goto(server.url + path)
        expect(page.locator("#missing-text")).to_contain_text(shown)
        assert not injected(page), path
    for path in (f"/?board={QUOTED}", f"/?name={QUOTED}"):  # the form, as if neither were given
        page.goto(server.url + path)
        expect(page.locator("#start")).to_be_visible()
        assert not injected(page), path


def test_markup_as_a_name_is_refused_in_one_line_and_shown_as_typed(server, new_page):
    page = new_page()
    page.goto(server.url + "/")
    page.locator("#mode-online").check()
    page.locator("#name").fill(NAME)
    page.locator("#start").click()
    expect(page.locator("#form-error")).to_have_text("The game could not start: a name must be plain text: '<>' not allowed")
    assert not injected(page)

    ticket = create_room(server, mode="online", seat="A", name="Ann")
    page.goto(server.url + ticket["url"])
    page.locator("#join-name").fill(NAME)
    page.locator("#join-seat").click()
    expect(page.locator("#message")).to_have_text("You could not take the seat: a name must be plain text: '<>' not allowed")
    assert not injected(page)


def test_the_page_plays_under_its_content_security_policy(server, new_page):
    """A game against an agent, the finished games, the analysis board:
    the policy refuses nothing the page does (a refusal is also a console
    error, which fails every browser test)."""
    page = new_page()
    page.add_init_script(WATCH_POLICY)
    ticket = create_room(server, mode="local", players={"A": "human", "B": "random"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    click_cell(page, "d1")
    expect(page.locator("#board")).to_have_attribute("data-position", re.compile(r"^7x6:d[a-g]$"))  # and the answer
    page.goto(server.url + "/games")
    expect(page.locator("#nav-games")).to_have_attribute("aria-current", "page")
    page.goto(server.url + "/analyse?position=7x6:dd")
    wait_position(page, "7x6:dd")
    assert page.evaluate("window.refused") == []


def test_no_other_site_can_frame_the_page(server, browser):
    """``frame-ancestors 'none'``: the frame stays empty, so a foreign page
    cannot lay the board under a decoy and have a player click for it."""
    context = browser.new_context()
    try:
        page = context.new_page()
        # set_content returns once the document has loaded, its frame's answer with it (shown or refused)
        page.set_content(f'<iframe id="decoy" src="{server.url}/" width="800" height="600"></iframe>')
        expect(page.frame_locator("#decoy").locator("#start")).to_have_count(0)
    finally:
        context.close()
