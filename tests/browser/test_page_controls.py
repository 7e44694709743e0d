"""The page's controls: the grouped player picker, Rematch and Swap sides,
every control on screen at 1280x800, Undo after Resign, the evaluation bar."""

from __future__ import annotations

import re
import urllib.parse

import pytest
from playwright.sync_api import expect

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}


@pytest.mark.parametrize("size", SIZES)
def test_the_picker_groups_people_and_levels_first(server, new_page, size):
    page = new_page(*SIZES[size])
    page.goto(server.url + "/")
    picker = page.locator("#player2")
    expect(picker.locator("optgroup")).to_have_count(4)
    groups = picker.locator("optgroup").evaluate_all("gs => gs.map(g => g.dataset.group)")
    assert groups == ["people", "level", "agent", "experimental"]
    levels = picker.locator('optgroup[data-group="level"] option').evaluate_all("os => os.map(o => o.value)")
    assert levels == ["random", "normal", "hard", "impossible", "master", "perfect"]
    first = picker.locator('optgroup[data-group="level"] option').first
    expect(first).to_contain_text("random - ")
    picker.select_option("master")
    expect(page.locator("#player2-options")).to_be_visible()
    # the line under a picker says what its choice is, and a screen reader reads it with the picker
    help_text = page.locator("#player2-help").text_content()
    assert help_text
    expect(picker).to_have_accessible_description(help_text)
    expect(page.locator("#player2-options")).to_have_accessible_description(help_text)
    expect(page.locator("#player1")).to_have_accessible_description("a person at this screen")


@pytest.mark.parametrize("size", SIZES)
def test_rematch_and_swap_sides_start_a_new_game_from_the_same_start(server, new_page, size):
    from browser_helpers import click_cell, create_room, open_room, position, wait_over, wait_position

    page = new_page(*SIZES[size])
    # A (human) wins at once: the game is over after one click
    ticket = create_room(server, board="5x4:abacac", players={"A": "human", "B": "random:seed=1"})
    open_room(page, server, ticket)
    expect(page.locator("#play-again")).to_be_hidden()
    click_cell(page, "a4")
    wait_over(page)
    for button in ("#play-again", "#swap-sides"):
        expect(page.locator(button)).to_be_visible()
        assert page.locator(button).bounding_box()["y"] + 20 < SIZES[size][1] or size == "phone"
    first_room = page.url
    page.locator("#play-again").click()
    page.wait_for_url(lambda url: url != first_room)
    wait_position(page, "5x4:abacac")
    seats = page.evaluate("window.c4lab.R.state.seats")
    assert (seats["A"]["kind"], seats["B"].get("spec")) == ("human", "random:seed=1")
    # swap sides: the agent takes A, the person B
    click_cell(page, "a4")
    wait_over(page)
    second_room = page.url
    page.locator("#swap-sides").click()
    page.wait_for_url(lambda url: url != second_room)
    page.wait_for_function("() => window.c4lab && window.c4lab.R.state && window.c4lab.R.state.seats.A.kind === 'agent'")
    seats = page.evaluate("window.c4lab.R.state.seats")
    assert (seats["A"].get("spec"), seats["B"]["kind"]) == ("random:seed=1", "human")
    assert position(page).startswith("5x4:abacac")


def test_a_rematch_swapped_sides_and_a_pasted_position_keep_the_players_name(server, new_page):
    """The person named Zoe at the start is Zoe in the games she starts from
    this one, on whichever side she sits (each was 'Player': the new rooms
    were asked for with no name)."""
    from browser_helpers import click_cell, create_room, open_room, wait_over, wait_position

    page = new_page(390, 844)
    ticket = create_room(server, board="7x7/Xd4/Be2:abacac", players={"A": "human", "B": "random:seed=1"},
                         name="Zoe")
    open_room(page, server, ticket)
    expect(page.locator("#seat-A .seat-name")).to_have_text("Zoe")
    click_cell(page, "a4")  # four in a row: the game is over
    wait_over(page)
    page.locator("#play-again").click()
    wait_position(page, "7x7/Xd4/Be2:abacac")
    expect(page.locator("#seat-A .seat-name")).to_have_text("Zoe")
    click_cell(page, "a4")
    wait_over(page)
    page.locator("#swap-sides").click()
    expect(page.locator("#seat-B .seat-name")).to_have_text("Zoe")
    expect(page.locator("#seat-A .seat-name")).to_have_text("random:seed=1")
    page.locator("#paste-here").fill("6x5/Xc2")
    page.locator("#paste-start").click()
    expect(page.locator("#board")).to_have_attribute("data-position", re.compile(r"^6x5/Xc2(:[a-f])?$"))  # the agent, A, moves
    expect(page.locator("#seat-B .seat-name")).to_have_text("Zoe")  # the players of the game it came from


@pytest.mark.parametrize("bonus", [False, True], ids=["plain", "bonus"])
def test_new_game_after_a_board_drawn_at_random_draws_another(server, new_page, bonus):
    """The form's Random enhanced board: New game after the game comes back
    to the form with Random chosen (the bonus cell too, if it was asked
    for), not with the board it drew; Rematch plays the drawn board again,
    and its New game still draws."""
    from browser_helpers import resign, wait_over

    page = new_page()
    page.clock.install()  # held by resign() between its two clicks
    page.goto(server.url + "/")
    page.locator("#board-random").check()
    if bonus:
        page.locator("#bonus").check()
    page.locator("#player2").select_option("random")
    page.locator("#start").click()
    expect(page).to_have_url(re.compile(r"/r/[^/?]+$"))
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    drawn = page.evaluate("window.c4lab.R.state.position")
    assert ("/B" in drawn) == bonus
    resign(page)
    wait_over(page)
    expect(page.locator("#rematch")).to_have_attribute("href", re.compile(r"[?&]board=random(&|$)"))
    page.locator("#play-again").click()
    page.wait_for_function(
        "([p]) => window.c4lab && window.c4lab.R.state && window.c4lab.R.state.position === p "
        "&& window.c4lab.R.state.status === 'playing'", arg=[drawn])
    resign(page)
    wait_over(page)
    page.locator("#rematch").click()
    expect(page.locator("#board-random")).to_be_checked()
    if bonus:
        expect(page.locator("#bonus")).to_be_checked()
    else:
        expect(page.locator("#bonus")).not_to_be_checked()


@pytest.mark.parametrize("board_size", ["4x4", "7x6", "12x8", "12x12", "4x12", "12x4"])
def test_every_control_is_visible_without_scrolling_at_1280x800(server, new_page, board_size):
    from browser_helpers import create_room, open_room

    page = new_page(1280, 800)
    ticket = create_room(server, board=board_size, players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    for control in ("#undo", "#hint", "#resign"):
        box = page.locator(control).bounding_box()
        assert box is not None, control
        assert box["y"] + box["height"] <= 800, f"{control} ends at {box['y'] + box['height']:.0f}px on {board_size}"
    assert page.evaluate("window.scrollY") == 0


#: Phones and a tablet, upright: (width, height).
SMALL_SCREENS = {"phone-390x700": (390, 700), "phone-360x640": (360, 640), "tablet-768x1024": (768, 1024)}


def ends_in_view(page, controls: tuple[str, ...], height: int, where: str) -> None:
    """Each control shown, whole, above the window's bottom (no scrolling)."""
    assert page.evaluate("window.scrollY") == 0, where
    for control in controls:
        expect(page.locator(control)).to_be_visible()
        box = page.locator(control).bounding_box()
        assert box["y"] + box["height"] <= height, f"{where}: {control} ends at {box['y'] + box['height']:.0f}px"


@pytest.mark.parametrize("size", SMALL_SCREENS)
def test_on_a_phone_or_a_tablet_every_control_of_the_largest_board_is_in_view(server, new_page, size):
    """12x12 with a forbidden and a bonus cell against the computer, at
    390x700 (Resign, then Rematch and New game, lay below the window's
    bottom after the board: the person had to scroll to find them), at
    360x640 (no control was in view) and at 768x1024 (none either): the
    board leaves room under it for two rows of controls, which hold every
    button of the game and, after it, every button of its end. The
    analysis board's Undo and Redo too (its key to the scores goes under
    them on a phone). While a hint is shown too: on a phone its message
    keeps to one line, in short words (its three lines pushed the controls
    below the window). The top bar's links each keep to one line."""
    from browser_helpers import click_cell, create_room, open_room, wait_my_turn, wait_over

    width, height = SMALL_SCREENS[size]
    page = new_page(width, height)
    ticket = create_room(server, board="12x12/Xf4/Bc2:alalal", players={"A": "human", "B": "normal"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    ends_in_view(page, ("#step-back", "#step-forward", "#undo", "#hint", "#analysis-switch", "#resign"),
                 height, "during the game")
    page.locator("#hint").click()
    # read as the hint comes, in one go (its message goes after 4 s, which a loaded machine may take before a
    # second look): shown, and every control still above the bottom
    message, ends = page.wait_for_function("""ids => document.querySelector('#board .hint[data-hint]')
        && [document.getElementById('message').innerText,
            ids.map(id => [id, document.getElementById(id).getBoundingClientRect().bottom])]""",
                                           arg=["step-back", "step-forward", "undo", "hint", "analysis-switch", "resign"],
                                           timeout=60_000).json_value()
    assert message.startswith("Hint: drop in "), message
    assert all(bottom <= height for _, bottom in ends), f"while the hint ({message!r}) is shown: {ends}"
    click_cell(page, "a4")  # four in a row up column a
    wait_over(page)
    ends_in_view(page, ("#step-back", "#step-forward", "#undo", "#analysis-switch", "#play-again", "#swap-sides",
                        "#review", "#rematch"), height, "after the game")
    board = page.locator("#board").bounding_box()
    assert board["width"] >= 0.75 * width, f"the board shrank to {board['width']:.0f}px: more than it needed"
    for link in ("#nav-new", "#nav-games"):
        line = page.locator(link).evaluate("a => parseFloat(getComputedStyle(a).lineHeight)")
        assert page.locator(link).evaluate("a => a.getBoundingClientRect().height") < 2 * line, f"{link} wraps"
    page.goto(server.url + "/analyse?position=12x12/Xf4/Bc2:fgfgeh")
    expect(page.locator("#board .col-note")).to_have_count(12, timeout=60_000)
    page.locator("#undo").click()
    expect(page.locator("#redo")).to_be_visible()
    ends_in_view(page, ("#step-back", "#step-forward", "#undo", "#redo", "#analysis-switch"), height,
                 "on the analysis board")


@pytest.mark.parametrize("board", ["7x6", "12x12/Xf4/Bc2:alalal"])
def test_on_a_desktop_a_hint_moves_no_control(server, new_page, board):
    """Review: at 1280x800 a hint's message (its move, then the key to the
    column scores) took two lines and pushed the controls under the board
    20 px down, and back up when it faded 4 s later.  A message that would
    wrap shows its short words; the long ones are still read out."""
    from browser_helpers import create_room, open_room, wait_my_turn

    page = new_page(1280, 800)
    ticket = create_room(server, board=board, players={"A": "human", "B": "normal"})
    open_room(page, server, ticket)
    wait_my_turn(page)
    before = page.locator("#undo").bounding_box()["y"]
    page.locator("#hint").click()
    seen = page.wait_for_function("""() => {
        const message = document.getElementById('message');
        if (!document.querySelector('#board .hint[data-hint]') || !message.textContent) return null;
        const shown = [...message.children].filter(span => span.getBoundingClientRect().width > 1);
        return [shown.map(span => span.textContent), message.textContent,
                message.getBoundingClientRect().height, parseFloat(getComputedStyle(message).lineHeight),
                document.getElementById('undo').getBoundingClientRect().y];
    }""", timeout=60_000).json_value()
    shown, read, height, line, after = seen
    assert len(shown) == 1 and shown[0].startswith("Hint: drop in "), shown
    assert "Above each column" in read  # the key, for a screen reader
    assert height < 1.5 * line, f"the message takes {height / line:.1f} lines: {shown}"
    assert after == pytest.approx(before, abs=0.5), f"the controls moved from y {before} to {after} ({shown!r})"


def test_undo_after_resign_does_not_reopen_the_game(server, new_page):
    from browser_helpers import click_cell, create_room, open_room, resign, wait_over, wait_position

    page = new_page()
    page.clock.install()  # held by resign() between its two clicks
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    click_cell(page, "d1")
    wait_position(page, "7x6:d")
    expect(page.locator("#undo")).to_be_enabled()
    resign(page)
    wait_over(page)
    expect(page.locator("#undo")).to_be_disabled()


@pytest.mark.parametrize("size", {**SIZES, "tablet": (800, 1000)})
def test_the_evaluation_bar_keeps_its_width_whatever_its_label_says(server, new_page, size):
    from browser_helpers import click_cell, create_room, open_room, wait_over, wait_position

    page = new_page(*({**SIZES, "tablet": (800, 1000)}[size]))
    ticket = create_room(server, board="5x4:abacac", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    track = page.locator(".eval-track")
    empty = track.bounding_box()["width"]
    click_cell(page, "a4")  # four in a row: "A (white) wins (+1.00)"
    wait_over(page)
    expect(page.locator("#eval-label")).to_contain_text("A (white) wins")
    assert track.bounding_box()["width"] == pytest.approx(empty, abs=1)
    page.locator("#undo").click()
    wait_position(page, "5x4:abacac")
    expect(page.locator("#eval-label")).to_contain_text("No evaluation")
    assert track.bounding_box()["width"] == pytest.approx(empty, abs=1)


@pytest.mark.parametrize("size", [(1280, 800), (390, 700)], ids=["desktop", "phone"])
def test_the_page_says_the_engine_is_being_prepared_while_numba_compiles(server, new_page, size, monkeypatch):
    """The first start after an install: while the agent's move waits for
    numba's compiler (simulated with the compile event numba sends), the
    page says "preparing the engine, first start only" with the seconds so
    far; the notice goes with the move. On a phone the notice takes a line
    of its own under "B (black), uct:time=5,..., is thinking", which stays on one
    line (the notice squeezed it: "White (perfect" over ") is thinking")."""
    from browser_helpers import click_cell, create_room, open_room, wait_my_turn
    from numba.core import event

    from c4lab.agents.uct import UCTAgent
    from testkit import hold_moves

    # the agent's move waits for the test: the notice is looked at before the move takes it away (the
    # agent's own 5 s were not always enough for that on a busy machine)
    released = hold_moves(monkeypatch, UCTAgent)
    page = new_page(*size)
    event.start_event("numba:compile", data={})
    try:
        ticket = create_room(server, players={"A": "human", "B": "uct:time=5,seed=1"})
        open_room(page, server, ticket)
        wait_my_turn(page)
        click_cell(page, "d1")
        notice = page.locator("#preparing")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text("preparing the engine, first start only")
        expect(notice).to_contain_text(" s")
        # its seconds change every second: a screen reader is told to wait for the status's end
        expect(page.locator("#status")).to_have_attribute("aria-busy", "true")
        # the four boxes in one look: the status is drawn anew each second while the server counts (a box looked
        # at apart could be one the next drawing had just replaced: no box, in CI on a loaded machine)
        box, board, name, dots = page.evaluate("""() => ['#preparing', '#board', '#status .status-name',
            '#status .dots'].map(q => { const e = document.querySelector(q); if (!e) return null;
              const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, width: r.width, height: r.height}; })""")
        assert None not in (box, board, name, dots), "the notice went before the move came"
        assert box["y"] < board["y"] + board["height"] and box["y"] + box["height"] < size[1]  # by the board, on screen
        # "Black (uct:time=5,...) is thinking" on one line, the notice on the next, whole
        assert dots["y"] < name["y"] + name["height"], "the status broke over two lines"
        assert box["y"] >= max(name["y"] + name["height"], dots["y"] + dots["height"]) - 1, "the notice is not under it"
        assert box["height"] < 1.5 * name["height"] and box["x"] + box["width"] <= size[0], "the notice is cut or wraps"
    finally:
        event.end_event("numba:compile", data={})
        released.set()
    # the agent's 5 s, and on a fresh numba cache its search's compile first
    wait_my_turn(page, timeout=60_000)
    expect(page.locator("#preparing")).to_have_count(0)
    expect(page.locator("#status")).to_have_attribute("aria-busy", "false")


def _small_network(path) -> None:
    from c4lab.agents.ntuple_net import Network
    from c4lab.rules import Position

    Network.create(Position.parse("4x4").variant, tuples=5, seed=1).save(path)


def _empty_q_table(path) -> None:
    import numpy as np

    from c4lab.agents.qtable import QTable
    from c4lab.rules import Position

    QTable(Position.parse("4x4").variant, np.zeros(0, np.uint64), np.zeros((0, 8), np.float32),
           np.zeros(0, np.uint32), True).save(path)


@pytest.mark.parametrize("kind, spec, make, help_line", [
    ("NETWORK", "ntuple:weights=small.npz", _small_network, "Networks on this server, as options: weights=small.npz (4x4)."),
    ("QTABLE", "qlearning:table=small.npz", _empty_q_table, "Q-tables on this server, as options: table=small.npz (4x4)."),
])
def test_the_picker_offers_the_servers_files_and_a_game_plays_one(tmp_path, new_page, kind, spec, make, help_line):
    """``c4lab play -2 ntuple:weights=nets/small.npz`` (or ``serve
    --network``; ``--qtable`` and ``qlearning:table=`` alike): the agent's
    help names the file as the form's option takes it, the form comes
    filled in, and the game is played from it."""
    from c4lab.server import offered
    from c4lab.server.limits import AgentLimits
    from c4lab.server.run import BackgroundServer
    from c4lab.server.storage import GameStore

    path = tmp_path / "files" / "small.npz"
    path.parent.mkdir()
    make(path)
    store = GameStore(tmp_path / "games.sqlite")
    files = offered.offered_files([(getattr(offered, kind), path)])
    running = BackgroundServer(store, limits=AgentLimits(files=files)).start()
    try:
        page = new_page()
        page.goto(running.url + "/?board=4x4&p1=" + urllib.parse.quote(spec, safe="") + "&p2=human&first=A")
        expect(page.locator("#player1-options")).to_have_value(spec.split(":", 1)[1])
        expect(page.locator("#player1-help")).to_contain_text(help_line)
        page.locator("#start").click()
        page.wait_for_url(re.compile(r"/r/"))
        expect(page.locator("#board")).to_have_attribute("data-position", re.compile(r"^4x4:[a-d]$"), timeout=300_000)
        assert page.evaluate("window.c4lab.R.state.seats")["A"]["spec"] == spec
    finally:
        running.stop()
        store.close()


@pytest.mark.parametrize("size", [(600, 900), (800, 1000)], ids=["600", "800"])
def test_the_board_stays_put_when_the_evaluation_bars_label_grows(server, new_page, size):
    """Between a phone's width and a desktop's the label beside the bar was
    11rem wide: "A (white) wins with best play · before the last move" took
    three lines there, the bar's slot grew and the board went 11px down
    after a move. The label has the room of two lines at most."""
    from browser_helpers import click_cell, create_room, open_room, wait_position

    page = new_page(*size)
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    top = page.locator("#board").bounding_box()["y"]
    page.locator("#hint").click()
    expect(page.locator("#board .hint[data-hint]")).to_have_count(1, timeout=60_000)
    click_cell(page, "d1")
    wait_position(page, "7x6:d")
    expect(page.locator("#eval-label")).to_have_text("A (white) wins with best play · before the last move")
    assert page.locator("#board").bounding_box()["y"] == pytest.approx(top, abs=0.5)
