"""The page's look and sound, and the double win: the theme picker (classic
red and yellow, the colour-blind-safe default, dark mode that follows the
system or is chosen), remembered across a reload and applied before the
first paint; the optional drop sound, which never throws; both lines of a
double win drawn. At 1280x800 and 390x844."""

from __future__ import annotations

import pytest
from browser_helpers import (
    RECORD_LANDINGS,
    click_cell,
    create_room,
    open_room,
    wait_landed,
    wait_over,
    wait_position,
)
from playwright.sync_api import expect

SIZES = {"desktop": (1280, 800), "phone": (390, 844)}
#: A drops in d: d1-g1 and d1-g4 at once (7x6:fcgffgeggggcecd, a double win)
BEFORE_DOUBLE_WIN = "7x6:fcgffgeggggcec"


def rgb(page, selector: str, prop: str) -> tuple[int, ...]:
    """A computed colour of the first match, as (r, g, b)."""
    text = page.locator(selector).first.evaluate(f"(n) => getComputedStyle(n).{prop}")
    inside = text[text.index("(") + 1 : text.index(")")]
    return tuple(int(float(v)) for v in inside.replace("/", ",").split(",")[:3])


def distance(a, b) -> float:
    return sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5


def look(page) -> tuple[str | None, str | None, str | None]:
    found = page.evaluate("(() => { const d = document.documentElement.dataset; return [d.pieces, d.mode, d.scheme]; })()")
    return tuple(found)


def check_pieces_and_forbidden(page) -> None:
    """The two sides' pieces differ in colour and marker; the forbidden cell
    is a red X."""
    a, b = rgb(page, "#board .piece .owner-A .disc", "fill"), rgb(page, "#board .piece .owner-B .disc", "fill")
    assert distance(a, b) > 150, (a, b)
    expect(page.locator("#board .piece .owner-B .ring-inner").first).to_be_attached()
    expect(page.locator("#board .piece .owner-A .ring-inner")).to_have_count(0)
    red, green, blue = rgb(page, "#board .forbidden-x", "stroke")
    assert red > 200 and green < 90 and blue < 90, (red, green, blue)
    hole = rgb(page, "#board .board-back", "fill")  # a piece stands out from an empty hole (fill or edge)
    for side in "AB":
        fill = rgb(page, f"#board .piece .owner-{side} .disc", "fill")
        edge = rgb(page, f"#board .piece .owner-{side} .disc", "stroke")
        assert max(distance(fill, hole), distance(edge, hole)) > 100, (side, fill, edge, hole)


def open_settings(page) -> None:
    if page.locator("#settings-panel").is_hidden():
        page.locator("#settings-button").click()
    expect(page.locator("#settings-panel")).to_be_visible()


@pytest.mark.parametrize("size", SIZES)
def test_the_theme_picker_switches_the_look_and_remembers_it(server, new_page, size):
    page = new_page(*SIZES[size], color_scheme="light")
    ticket = create_room(server, board="7x6/Xd3:dcd", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    assert look(page) == ("contrast", "auto", "light")
    white = rgb(page, "#board .piece .owner-A .disc", "fill")
    assert min(white) > 200, white
    check_pieces_and_forbidden(page)
    expect(page.locator("#seat-A .seat-kind")).to_contain_text("A (white)")

    open_settings(page)
    expect(page.locator("#theme-pieces")).to_have_value("contrast")
    page.locator("#theme-pieces").select_option("classic")
    assert look(page)[0] == "classic"
    red = rgb(page, "#board .piece .owner-A .disc", "fill")
    yellow = rgb(page, "#board .piece .owner-B .disc", "fill")
    assert red[0] > 180 and red[1] < 80, red
    assert yellow[0] > 200 and yellow[1] > 160 and yellow[2] < 80, yellow
    check_pieces_and_forbidden(page)
    # the words name the new colours at once, not after the next move (a newcomer's review)
    expect(page.locator("#status")).to_contain_text("B (yellow)")
    expect(page.locator("#seat-A .seat-kind")).to_contain_text("A (red)")

    page.locator("#theme-mode").select_option("dark")
    assert look(page) == ("classic", "dark", "dark")
    assert max(rgb(page, "html", "backgroundColor")) < 60
    check_pieces_and_forbidden(page)
    page.keyboard.press("Escape")
    expect(page.locator("#settings-panel")).to_be_hidden()

    page.reload()
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    assert look(page) == ("classic", "dark", "dark")
    expect(page.locator("#seat-A .seat-kind")).to_contain_text("A (red)")
    open_settings(page)
    expect(page.locator("#theme-pieces")).to_have_value("classic")
    expect(page.locator("#theme-mode")).to_have_value("dark")
    check_pieces_and_forbidden(page)

    # back to the colour-blind-safe pieces, still dark
    page.locator("#theme-pieces").select_option("contrast")
    assert look(page) == ("contrast", "dark", "dark")
    check_pieces_and_forbidden(page)
    expect(page.locator("#status")).to_contain_text("B (black)")
    page.locator("#settings-close").click()
    expect(page.locator("#settings-panel")).to_be_hidden()
    assert page.evaluate("document.documentElement.scrollWidth") <= SIZES[size][0]


@pytest.mark.parametrize("size", SIZES)
def test_dark_mode_follows_the_system_unless_light_or_dark_is_chosen(server, new_page, size):
    page = new_page(*SIZES[size], color_scheme="dark")
    ticket = create_room(server, board="7x6/Xd3:dc", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    assert look(page) == ("contrast", "auto", "dark")
    assert max(rgb(page, "html", "backgroundColor")) < 60
    check_pieces_and_forbidden(page)
    # the system turns light while the page is open: the page follows
    page.emulate_media(color_scheme="light")
    page.wait_for_function("() => document.documentElement.dataset.scheme === 'light'")
    assert min(rgb(page, "html", "backgroundColor")) > 200
    page.emulate_media(color_scheme="dark")
    page.wait_for_function("() => document.documentElement.dataset.scheme === 'dark'")
    # light chosen explicitly wins over the system's dark, after a reload too
    open_settings(page)
    page.locator("#theme-mode").select_option("light")
    assert look(page) == ("contrast", "light", "light")
    page.reload()
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    assert look(page) == ("contrast", "light", "light")
    assert min(rgb(page, "html", "backgroundColor")) > 200


@pytest.mark.parametrize("size", SIZES)
def test_the_saved_look_is_there_before_any_module_runs(server, new_page, size):
    """No flash: the <head> sets the look before the first paint, without
    waiting for the page's modules (here they never load)."""
    page = new_page(*SIZES[size], color_scheme="light")
    page.goto(server.url + "/games")
    page.evaluate("localStorage.setItem('c4lab.pieces', 'classic'); localStorage.setItem('c4lab.mode', 'dark')")
    page.route("**/static/*.js", lambda route: route.abort())
    page.goto(server.url + "/")
    assert look(page) == ("classic", "dark", "dark")
    assert max(rgb(page, "html", "backgroundColor")) < 60
    assert page.evaluate("window.c4lab === undefined")


def sounds(page) -> int:
    return int(page.evaluate("document.documentElement.dataset.sounds || '0'"))


@pytest.mark.parametrize("size", SIZES)
def test_the_drop_sound_is_off_by_default_and_remembered_when_on(server, new_page, size):
    page = new_page(*SIZES[size])
    page.add_init_script(RECORD_LANDINGS)
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    open_settings(page)
    expect(page.locator("#sound-toggle")).not_to_be_checked()
    page.keyboard.press("Escape")
    click_cell(page, "d1")
    wait_position(page, "7x6:d")
    wait_landed(page, "d1")  # the moment its sound would have played
    assert sounds(page) == 0
    open_settings(page)
    page.locator("#sound-toggle").check()
    page.keyboard.press("Escape")
    page.reload()
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    open_settings(page)
    expect(page.locator("#sound-toggle")).to_be_checked()
    page.keyboard.press("Escape")
    click_cell(page, "d2")  # B's piece (both seats are this screen's)
    wait_position(page, "7x6:dd")
    page.wait_for_function("() => Number(document.documentElement.dataset.sounds || 0) >= 1")
    # the opponent's piece sounds too: an agent's reply
    vs_agent = create_room(server, board="7x6", players={"A": "human", "B": "random:seed=3"})
    open_room(page, server, vs_agent)
    click_cell(page, "a1")
    page.wait_for_function("() => window.c4lab.R.state.position.split(':')[1]?.length === 2")
    page.wait_for_function("() => Number(document.documentElement.dataset.sounds || 0) >= 2")  # once its piece has landed
    # off again: remembered, and silent
    open_settings(page)
    page.locator("#sound-toggle").uncheck()
    page.reload()
    open_settings(page)
    expect(page.locator("#sound-toggle")).not_to_be_checked()


@pytest.mark.parametrize("audio", ["missing", "broken"])
@pytest.mark.parametrize("size", SIZES)
def test_the_drop_sound_never_throws_without_audio(server, new_page, size, audio):
    page = new_page(*SIZES[size])
    page.add_init_script(RECORD_LANDINGS)
    if audio == "missing":
        page.add_init_script("delete window.AudioContext; delete window.webkitAudioContext;")
    else:
        page.add_init_script(
            "window.AudioContext = function () { throw new Error('no audio device'); };"
            "window.webkitAudioContext = window.AudioContext;"
        )
    ticket = create_room(server, board="5x4:abacac", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    open_settings(page)
    page.locator("#sound-toggle").check()
    page.keyboard.press("Escape")
    click_cell(page, "a4")
    wait_over(page)
    wait_landed(page, "a4")  # the moment its sound would have played
    assert sounds(page) == 0  # nothing played, nothing thrown (page errors fail the test)


@pytest.mark.parametrize("size", SIZES)
def test_a_double_win_draws_both_lines(server, new_page, size):
    page = new_page(*SIZES[size])
    ticket = create_room(server, board=BEFORE_DOUBLE_WIN, players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    expect(page.locator("#board .win-line")).to_have_count(0)
    click_cell(page, "d1")
    wait_over(page)
    lines = page.locator("#board .win-line")
    expect(lines).to_have_count(2)
    assert sorted(lines.evaluate_all("ls => ls.map(l => l.dataset.win)")) == ["d1 e1 f1 g1", "d1 e2 f3 g4"]
    # each line has its own stroke; every winning piece is ringed once
    expect(page.locator("#board .win-line .win-stroke")).to_have_count(2)
    expect(page.locator("#board .win-line .win-ring")).to_have_count(7)
    # the replay of the stored game draws both too
    page.goto(server.url + f"/games/{ticket['code']}")
    expect(page.locator("#replay-board")).to_have_attribute("data-ply", "15")
    expect(page.locator("#replay-board .win-line")).to_have_count(2)


def _contrast(a: tuple[int, ...], b: tuple[int, ...]) -> float:
    def luminance(rgb: tuple[int, ...]) -> float:
        linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in (c / 255 for c in rgb)]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def test_in_dark_mode_the_skip_link_and_the_accents_words_read_at_4_5_to_1(server, new_page):
    """A player's review: in dark mode the skip link was light blue on blue
    (1.9:1: the dark scheme's link colour over its own), and white on the
    accent (the "you" badge, the start button, the current move) 4.3:1."""
    page = new_page(1280, 800)
    page.emulate_media(color_scheme="dark")
    open_room(page, server, create_room(server, board="7x6", players={"A": "human", "B": "human"}))
    assert look(page)[2] == "dark"
    page.locator(".skip-link").focus()
    expect(page.locator(".skip-link")).to_be_in_viewport()
    for selector in (".skip-link", '#seat-A .seat-badge[data-kind="you"]'):
        words, ground = rgb(page, selector, "color"), rgb(page, selector, "backgroundColor")
        assert _contrast(words, ground) >= 4.5, (selector, words, ground)


@pytest.mark.parametrize("size", SIZES)
def test_a_large_boards_two_digit_row_numbers_keep_clear_of_the_frame(server, new_page, size):
    """A player's review: on 12x12 the numbers 10 to 12, centred in their
    room, touched the frame's left edge."""
    page = new_page(*SIZES[size])
    open_room(page, server, create_room(server, board="12x12", players={"A": "human", "B": "human"}))
    frame = page.locator("#board .frame").bounding_box()
    scale = frame["width"] / page.locator("#board .frame").evaluate("n => n.width.baseVal.value")
    for label in page.locator("#board .row-label").all():
        box = label.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= frame["x"] - 3 * scale, (label.text_content(), box, frame)
