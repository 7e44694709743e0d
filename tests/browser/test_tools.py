"""Undo, hint, the evaluation bar, copying and pasting positions, and the
socket coming back after the server restarts."""

from __future__ import annotations

import re

from browser_helpers import (
    ann_and_bob,
    board,
    click_cell,
    create_room,
    open_room,
    position,
    wait_my_turn,
    wait_position,
)
from playwright.sync_api import expect

from c4lab.server.run import BackgroundServer
from testkit import hold_moves


def test_undo_hint_and_evaluation_bar(server, new_page):
    page = new_page()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "random:seed=1"})
    open_room(page, server, ticket)
    expect(page.locator("#evalbar")).to_be_visible()
    expect(page.locator("#eval-label")).to_contain_text("No evaluation yet")
    expect(page.locator("#undo")).to_be_disabled()

    click_cell(page, "d2")
    expect(board(page)).to_have_attribute("data-position", re.compile(r"^7x6:d[a-g]$"))
    wait_my_turn(page)
    expect(page.locator("#undo")).to_be_enabled()
    page.locator("#undo").click()  # takes back the agent's reply and my move
    wait_position(page, "7x6")
    expect(page.locator("#board [data-piece]")).to_have_count(0)

    # a hint: shown on the board, in words, and on the evaluation bar
    page.locator("#hint").click()
    hint = page.locator("#board .hint[data-hint]")
    expect(hint).to_have_count(1, timeout=60_000)
    token = hint.get_attribute("data-hint")
    assert re.fullmatch(r"[a-g]", token), token
    expect(page.locator("#message")).to_contain_text(f"Hint: drop in column {token}")
    value = page.locator("#evalbar").get_attribute("data-value")
    assert value and -1 <= float(value) <= 1
    expect(page.locator("#eval-label")).to_contain_text(re.compile(r"even|better|winning|with best play"))
    # playing the hinted move clears the hint
    click_cell(page, f"{token}1")
    expect(page.locator("#board .hint")).to_have_count(0)
    wait_my_turn(page)

    # copy the position string; paste one to start a new game from it
    page.locator("#copy-position").click()
    expect(page.locator("#toast")).to_have_text("Position copied")
    assert page.evaluate("navigator.clipboard.readText()") == position(page)
    page.locator("#paste-here").fill("7x6/Xd1:cc")
    page.locator("#paste-start").click()
    expect(page).not_to_have_url(server.url + ticket["url"])
    wait_position(page, "7x6/Xd1:cc")
    expect(page.locator("#seat-B .seat-kind")).to_contain_text("random:seed=1")  # the same players
    wait_my_turn(page)
    page.locator("#paste-here").fill("7x6:zz")
    page.locator("#paste-start").click()
    expect(page.locator("#paste-error")).to_contain_text("cannot start a game")


def test_the_evaluation_bar_keeps_the_hints_score_after_a_reload(server, new_page):
    """A page reloaded in a running game showed "No evaluation yet: ask for a
    hint" though a hint had just been given (the server keeps no hint's
    score: the room leaves its memory when its last page goes). The tab
    keeps it for the room and its position, and the bar shows it again;
    a move leaves it stale."""
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    click_cell(page, "d1")
    wait_position(page, "7x6:d")
    page.locator("#hint").click()
    expect(page.locator("#board .hint[data-hint]")).to_have_count(1, timeout=60_000)
    value = page.locator("#evalbar").get_attribute("data-value")
    label = page.locator("#eval-label").text_content()
    assert value and re.search(r"even|better|winning|with best play", label or ""), (value, label)
    page.reload()
    wait_position(page, "7x6:d")
    expect(page.locator("#evalbar")).to_have_attribute("data-value", value)
    expect(page.locator("#eval-label")).to_have_text(label or "")
    click_cell(page, "c1")
    wait_position(page, "7x6:dc")
    expect(page.locator("#eval-label")).to_contain_text("before the last move")


def test_page_reconnects_after_the_server_restarts(tmp_path, new_page):
    from c4lab.server.storage import GameStore

    store = GameStore(tmp_path / "games.sqlite")
    first = BackgroundServer(store).start()
    try:
        ticket = create_room(first, board="7x6", players={"A": "human", "B": "human"})
        page = new_page()
        open_room(page, first, ticket)
        click_cell(page, "d1")
        wait_position(page, "7x6:d")
    finally:
        first.stop()
    expect(page.locator("#conn-banner")).to_contain_text("reconnecting")
    second = BackgroundServer(store, port=first.port).start()
    try:
        expect(page.locator("#conn-banner")).to_be_hidden(timeout=20_000)
        wait_position(page, "7x6:d")
        expect(board(page)).to_have_attribute("data-you", "AB")
        click_cell(page, "e1")
        wait_position(page, "7x6:de")
    finally:
        second.stop()
        store.close()


def test_during_a_server_outage_the_seats_say_their_presence_is_not_known(tmp_path, new_page):
    """Review: while the server was restarting, the page still marked both
    players "online" (the last state it had); it now says it does not know,
    and shows the server's word again once it is back."""
    from c4lab.server.storage import GameStore

    store = GameStore(tmp_path / "games.sqlite")
    first = BackgroundServer(store).start()
    try:
        _code, (ann, _bob) = ann_and_bob(first, new_page)
        for side in "AB":
            expect(ann.locator(f"#seat-{side} .seat-conn")).to_have_attribute("data-state", "online")
    finally:
        first.stop()
    expect(ann.locator("#conn-banner")).to_contain_text("reconnecting")
    for side in "AB":
        expect(ann.locator(f"#seat-{side} .seat-conn")).to_have_attribute("data-state", "unknown")
        expect(ann.locator(f"#seat-{side} .seat-conn")).to_have_text("not known: no connection")
        expect(ann.locator(f"#seat-{side}")).to_have_attribute("data-connected", "")
    second = BackgroundServer(store, port=first.port).start()
    try:
        expect(ann.locator("#conn-banner")).to_be_hidden(timeout=20_000)
        for side in "AB":  # both pages come back by themselves
            expect(ann.locator(f"#seat-{side} .seat-conn")).to_have_attribute("data-state", "online", timeout=20_000)
    finally:
        second.stop()
        store.close()


def test_thinking_is_shown_and_the_page_stays_responsive(server, new_page, monkeypatch):
    """While the agent thinks (here held until the test lets it move: its
    own 5 s left a loaded machine's checks racing its move), the page says
    so and answers a click at once, before the agent's move."""
    from c4lab.agents.uct import UCTAgent

    released = hold_moves(monkeypatch, UCTAgent)
    page = new_page()
    try:
        ticket = create_room(server, board="7x6", players={"A": "human", "B": "uct:time=5"})
        open_room(page, server, ticket)
        click_cell(page, "d3")
        expect(page.locator("#status")).to_have_attribute("data-kind", "thinking")
        expect(page.locator("#status")).to_contain_text("B (black), uct:time=5, is thinking")
        expect(page.locator("#seat-B .seat-badge")).to_have_text("thinking…")
        # it pulses in its background, never in its words' opacity (it blinked to a fifth: pale on pale)
        frames = page.locator("#seat-B .seat-badge").evaluate(
            "n => n.getAnimations().flatMap((a) => a.effect.getKeyframes().map((k) => Object.keys(k)))")
        assert frames and not any("opacity" in keys for keys in frames), frames
        expect(board(page)).to_have_attribute("data-thinking", "B")
        # the page answers meanwhile: not after the agent's move, which cannot come yet
        click_cell(page, "a1")
        expect(page.locator("#message")).to_contain_text("is thinking: wait for its move")
        assert position(page) == "7x6:d"
    finally:
        released.set()
    # then the agent's move arrives (its 5 s, and on a fresh numba cache its search's compile first)
    expect(board(page)).to_have_attribute("data-position", re.compile(r"^7x6:d[a-g]$"), timeout=60_000)
    wait_my_turn(page)
    expect(page.locator("#status")).to_contain_text("Your move")
    expect(page.locator("#seat-B .seat-badge")).to_have_text("")


def test_after_an_undo_the_bar_reads_the_hint_that_stands_for_the_position(server, new_page):
    """Review: a hint, its move, the computer's reply, then Undo: the board
    showed the hint's exact column scores again, and the bar beside them
    the computer's evaluation of the position undone ("About even (-0.04)
    · before the last move")."""
    page = new_page()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    page.locator("#hint").click()
    hint = page.locator("#board .hint[data-hint]")
    expect(hint).to_have_count(1, timeout=60_000)
    token = hint.get_attribute("data-hint")
    expect(page.locator("#eval-label")).to_have_text("A (white) wins with best play")  # the 12-ply database's
    click_cell(page, f"{token}1")
    expect(board(page)).to_have_attribute("data-position", re.compile(rf"^7x6:{token}[a-g]$"), timeout=60_000)
    wait_my_turn(page)
    page.locator("#undo").click()
    wait_position(page, "7x6")
    expect(page.locator("#eval-label")).to_have_text("A (white) wins with best play")
