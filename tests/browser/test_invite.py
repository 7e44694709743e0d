"""The invite link of an online room is the room on the address the page
was opened at (not 127.0.0.1, nor the 0.0.0.0 a server listens on), and the
page warns when that address only works on this computer, while a seat is
free. At 1280x800 and 390x844."""

from __future__ import annotations

import pytest
from browser_helpers import api, create_room, open_room
from playwright.sync_api import expect

from c4lab.server.run import BackgroundServer, shown_host
from c4lab.server.storage import GameStore

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


class Reached:
    """A running server seen at another address (same port)."""

    def __init__(self, server, host: str) -> None:
        self.url = f"http://{host}:{server.port}"


@pytest.mark.parametrize("size", SIZES)
def test_the_invite_link_uses_the_address_the_page_was_opened_at(server, new_page, size):
    page = new_page(*SIZES[size])
    for host in ("127.0.0.1", "localhost"):
        at = Reached(server, host)
        ticket = create_room(server, mode="online", seat="A", name="Ann")
        open_room(page, at, ticket)
        expect(page.locator("#share-link")).to_have_value(f"http://{host}:{server.port}/r/{ticket['code']}")
        expect(page.locator("#share-local")).to_be_visible()  # only this computer can open it


def test_the_warning_about_an_opponent_elsewhere_goes_once_both_seats_are_taken(server, new_page):
    """Review: once Bob had joined, the invite still told Ann and Bob, who
    were playing, how to invite "an opponent elsewhere".  The link stays:
    whoever opens it watches."""
    page = new_page(*SIZES["desktop"])
    ticket = create_room(server, mode="online", seat="A", name="Ann")
    open_room(page, server, ticket)
    expect(page.locator("#share-local")).to_be_visible()
    api(server, "POST", f"/api/rooms/{ticket['code']}/join", {"name": "Bob"})
    expect(page.locator("#share-text")).to_have_text("Anyone who opens this link watches the game.")
    expect(page.locator("#share-local")).to_be_hidden()
    expect(page.locator("#share-link")).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_a_server_on_every_interface_invites_on_the_network_address(tmp_path, new_page, size):
    host = shown_host("0.0.0.0")
    if host.startswith("127."):
        pytest.skip("this machine has no network address")
    store = GameStore(tmp_path / "games.sqlite")
    running = BackgroundServer(store, host="0.0.0.0").start()
    try:
        at = Reached(running, host)
        ticket = create_room(at, mode="online", seat="A", name="Ann")
        assert ticket["link"] == f"http://{host}:{running.port}/r/{ticket['code']}"
        page = new_page(*SIZES[size])
        open_room(page, at, ticket)
        expect(page.locator("#share-link")).to_have_value(ticket["link"])
        expect(page.locator("#share-local")).to_be_hidden()
        # a guest who follows the link takes the free seat
        guest = new_page(*SIZES[size])
        guest.goto(page.locator("#share-link").input_value())
        expect(guest.locator("#join-panel")).to_be_visible()
    finally:
        running.stop()
        store.close()
