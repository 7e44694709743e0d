"""The analysis board (issue 27, part 3): /analyse?position=... opens a
position with every column's score above the board after every move, for
whoever is to move, checked against the exact solver (``c4lab solve
--analyse``); moves for both sides, undo, redo and the line; the link and
its copy; a bonus board with a ban; a bad position; the form's entry and
the switch in a game. The numbers are read as a person sees them: large,
the ink's colour on the panel's, inside their pill, in both themes and at
both sizes."""

from __future__ import annotations

import asyncio
import re
import sqlite3
import threading
import urllib.parse

import pytest
from browser_helpers import (
    board,
    click_cell,
    create_room,
    open_room,
    play_online_game,
    resign,
    wait_position,
    wait_still,
)
from playwright.sync_api import expect

from c4lab.rules import Position
from c4lab.solver import Solver
from testkit import hold_moves

MINUS = "\u2212"
#: (width, height, pieces theme)
LOOKS = {"desktop-contrast": (1280, 800, "contrast"), "phone-classic": (390, 844, "classic")}
#: The sides' names in each theme: A, B.
NAMES = {"contrast": ("A (white)", "B (black)"), "classic": ("A (red)", "B (yellow)")}


def score_text(score: int) -> str:
    return f"+{score}" if score > 0 else f"{MINUS}{-score}" if score < 0 else "0"


def exact_columns(position: str) -> dict[str, str]:
    """Every column's best exact score (with the bonus: its best ban), as the page writes it."""
    best: dict[str, int] = {}
    for move, score in Solver().analyse(Position.parse(position)).items():
        assert score is not None
        letter = move.token[0]
        best[letter] = max(score, best.get(letter, score))
    return {letter: score_text(score) for letter, score in best.items()}


def notes(page) -> dict[str, str]:
    """Column letter -> the number as drawn (the SVG text a person reads)."""
    found = page.locator("#board .col-note").evaluate_all(
        "ns => ns.map(n => [n.dataset.note, n.querySelector('text').textContent])"
    )
    return dict(found)


def wait_notes(page, position: str, count: int) -> dict[str, str]:
    """Once ``position`` shows a note above each of its ``count`` columns:
    the notes, exact scores or, where the solver's first pass left a column
    open, the engine's estimates."""
    wait_position(page, position)
    expect(page.locator("#board .col-note")).to_have_count(count, timeout=60_000)
    return notes(page)


#: The notes of exact scores (a win, a draw or a loss; not an estimate, not "?").
EXACT_NOTES = '#board .col-note:is([data-kind="win"], [data-kind="draw"], [data-kind="loss"])'


def wait_exact_notes(page, position: str, count: int) -> dict[str, str]:
    """Once ``position`` shows the exact score of each of its ``count``
    columns: the notes. The solver's first pass has half a second off the
    classic board (10 s on it); on a loaded machine it can leave a column
    to an estimate, which the page's further passes make exact while the
    position stays."""
    wait_position(page, position)
    expect(page.locator(EXACT_NOTES)).to_have_count(count, timeout=60_000)
    return notes(page)


def luminance(rgb: str) -> float:
    values = [int(v) / 255 for v in re.findall(r"\d+", rgb)[:3]]
    linear = [v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4 for v in values]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def check_readable(page, min_px: float) -> None:
    """Each number: at least ``min_px`` tall on screen, its colour against
    its pill's at least 7:1, and wholly inside its pill (the sign never cut
    or covered)."""
    found = page.locator("#board .col-note").evaluate_all("""ns => ns.map(n => {
        const t = n.querySelector('text'), p = n.querySelector('rect');
        const a = t.getBBox(), tr = t.getBoundingClientRect(), pr = p.getBoundingClientRect();
        return {text: t.textContent, fill: getComputedStyle(t).fill, pill: getComputedStyle(p).fill,
                size: parseFloat(getComputedStyle(t).fontSize) * tr.width / Math.max(a.width, 1e-6),
                t: [tr.left, tr.right, tr.top, tr.bottom], p: [pr.left, pr.right, pr.top, pr.bottom],
                inside: tr.left >= pr.left - 0.5 && tr.right <= pr.right + 0.5 && tr.top >= pr.top - 1 && tr.bottom <= pr.bottom + 1};
    })""")
    assert found
    for note in found:
        assert note["inside"], (note["t"], note["p"])
        assert note["size"] >= min_px, note
        assert contrast(note["fill"], note["pill"]) >= 7, note


@pytest.mark.parametrize("look", LOOKS)
def test_the_link_opens_an_analysis_board_with_the_solvers_scores(server, new_page, artifacts, look):
    width, height, pieces = LOOKS[look]
    page = new_page(width, height)
    page.goto(server.url + "/games")
    page.evaluate("p => localStorage.setItem('c4lab.pieces', p)", pieces)
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote("7x6:dd"))
    expect(page).to_have_url(re.compile(r"/r/[^/?]+$"))  # the room's own address from now on
    expect(board(page)).to_have_attribute("data-analysing", "1")
    assert page.evaluate("document.documentElement.dataset.pieces") == pieces
    # no Hint pressed: the scores are there, for White (to move), exact on the classic board
    assert wait_exact_notes(page, "7x6:dd", 7) == exact_columns("7x6:dd")
    check_readable(page, 16 if width < 600 else 20)
    expect(page.locator("#analysis-key")).to_contain_text(NAMES[pieces][0])
    expect(page.locator("#hint")).to_be_hidden()
    expect(page.locator("#resign")).to_be_hidden()
    # a move for White, then the scores are Black's
    click_cell(page, "c1")
    assert wait_exact_notes(page, "7x6:ddc", 7) == exact_columns("7x6:ddc")
    expect(page.locator("#analysis-key")).to_contain_text(NAMES[pieces][1])
    check_readable(page, 16 if width < 600 else 20)
    page.mouse.move(0, 0)
    wait_still(page)  # the piece has landed, the marks on it are in
    page.screenshot(path=str(artifacts / f"analysis-{look}.png"))
    # and one for Black: both sides are played here
    click_cell(page, "b1")
    wait_notes(page, "7x6:ddcb", 7)
    # undo, undo, redo along the line (buttons and keys); the list keeps the moves ahead
    page.locator("#undo").click()
    wait_notes(page, "7x6:ddc", 7)
    page.locator("#step-back").click()
    assert wait_exact_notes(page, "7x6:dd", 7) == exact_columns("7x6:dd")
    expect(page.locator("#moves .mv.ahead")).to_have_count(2)
    # a reload keeps the moves ahead for redo (the tab keeps the line; they were lost)
    page.reload()
    assert wait_exact_notes(page, "7x6:dd", 7) == exact_columns("7x6:dd")
    expect(page.locator("#moves .mv.ahead")).to_have_count(2)
    expect(page.locator("#redo")).to_be_enabled()
    # the link's own moves are part of the line: back to the empty board, and forward again
    page.locator("#board").focus()
    page.keyboard.press("Home")
    assert wait_exact_notes(page, "7x6", 7) == exact_columns("7x6")
    expect(page.locator("#step-back")).to_be_disabled()
    expect(page.locator("#moves .mv.ahead")).to_have_count(4)
    page.locator('#moves .mv[data-ply="2"]').click()
    wait_notes(page, "7x6:dd", 7)
    page.locator("#redo").click()
    wait_notes(page, "7x6:ddc", 7)
    page.locator("#board").focus()
    page.keyboard.press("Shift+ArrowRight")
    wait_notes(page, "7x6:ddcb", 7)
    expect(page.locator("#redo")).to_be_disabled()
    # a click in the list goes along the line; a new move ends it there
    page.locator('#moves .mv[data-ply="3"]').click()
    wait_notes(page, "7x6:ddc", 7)
    click_cell(page, "e1")
    wait_notes(page, "7x6:ddce", 7)
    expect(page.locator("#moves .mv.ahead")).to_have_count(0)
    # the link of the position on screen, and its copy
    link = page.locator("#analysis-link").input_value()
    assert link == f"{server.url}/analyse?position={urllib.parse.quote('7x6:ddce', safe='')}"
    page.locator("#copy-analysis").click()
    expect(page.locator("#toast")).to_contain_text("copied")


def test_while_numba_compiles_the_solver_the_board_says_so(server, new_page, monkeypatch):
    """The first scores on a fresh numba cache wait for the compiler (7 s for
    a 12x12 board here): the line under the board says the engine is being
    prepared, as a game's agent does, not only "solving every column"."""
    from c4lab.server import review, warmup

    released = threading.Event()
    real = review.Reviewer.hint

    async def compiling(self, position, solver=None):  # a hint that waits for a compile, as on a first start
        with warmup.COMPILING._lock:
            warmup.COMPILING.started += 1
        await asyncio.to_thread(released.wait, 60)
        return await real(self, position, solver)

    monkeypatch.setattr(review.Reviewer, "hint", compiling)
    page = new_page()
    try:
        page.goto(server.url + "/analyse?position=7x6:dd")
        expect(page.locator("#analysis-key")).to_contain_text("solving every column")
        expect(page.locator("#analysis-key")).to_contain_text("preparing the engine, first start only")
        expect(page.locator("#hint")).to_be_hidden()  # so the bar over the board does not send the person to it
        expect(page.locator("#eval-label")).to_have_text("No evaluation yet")
    finally:
        released.set()
    assert wait_exact_notes(page, "7x6:dd", 7) == exact_columns("7x6:dd")
    expect(page.locator("#analysis-key")).not_to_contain_text("preparing")


def hold_the_solver(monkeypatch) -> threading.Event:
    """The hints' first pass answers nothing (every column an estimate) and
    their further passes wait until the returned event is set: the page
    shows what it shows while the solver is still at work, on any machine."""
    from c4lab.server import review

    released = threading.Event()
    real = review.Reviewer.deeper

    async def held(self, position, answer, timeout, solver):
        await asyncio.to_thread(released.wait, 60)
        return await real(self, position, answer, timeout, solver)

    monkeypatch.setattr(review, "PER_POSITION", 1e-6)
    monkeypatch.setattr(review, "SOLVABLE_CELLS", 0)  # nor while the engine compiles, on a first hint
    monkeypatch.setattr(review.Reviewer, "deeper", held)
    return released


def test_columns_left_to_estimates_turn_exact_while_the_position_stays(server, new_page, monkeypatch):
    """Off the classic board the first scores come within 0.5 s, an estimate
    where the solver had not finished; while the position stays on screen
    the solver goes on (here the first pass answers nothing and the second
    waits for the test), the line under the board says so, and the exact
    scores replace the estimates."""
    released = hold_the_solver(monkeypatch)
    page = new_page()
    try:
        page.goto(server.url + "/analyse?position=6x5/Xc2:dd")
        expect(page.locator("#analysis-key")).to_contain_text("a percentage in a dashed box: still being solved")
        assert any(text.endswith("%") for text in notes(page).values())
        # each estimate's tooltip says what the key says (it said "not solved in time" while the solver went on)
        titles = page.locator("#board .col-note.note-estimate title").all_text_contents()
        assert titles and all(title.endswith("(the engine's estimate, still being solved)") for title in titles), titles
    finally:
        released.set()
    exact = exact_columns("6x5/Xc2:dd")
    expect(page.locator("#board .col-note text")).to_have_text([exact[c] for c in sorted(exact)], timeout=60_000)
    expect(page.locator("#analysis-key")).not_to_contain_text("percentage")


def test_a_move_made_while_the_first_scores_are_worked_out_stops_that_work(server, new_page, monkeypatch):
    """On a first start the first hint holds the room's thread while the
    engine compiles (the solver going on meanwhile, tens of seconds): a move
    made then stops that work at once, the page (which asks one question
    at a time) is told and asks for the new position, and its scores come
    as soon as the engine is ready, not after the old position's work."""
    from c4lab.agents import make_agent
    from c4lab.server import review

    compiled = threading.Event()
    monkeypatch.setattr(review, "PER_POSITION", 1e-6)
    monkeypatch.setattr(review, "SOLVABLE_CELLS", 99)  # 9x8 too, which the solver never settles here
    monkeypatch.setattr(review, "_engines", {})
    monkeypatch.setattr(review, "warm_up_agent", lambda spec, position: compiled.wait(60))
    monkeypatch.setattr(review, "make_agent", lambda spec: make_agent("heuristic"))  # an engine with nothing to compile
    solvers = []
    real = review.Reviewer.hint

    async def watched(self, position, solver=None):
        solvers.append(solver)
        return await real(self, position, solver)

    monkeypatch.setattr(review.Reviewer, "hint", watched)
    page = new_page()
    try:
        page.goto(server.url + "/analyse?position=9x8")
        expect(page.locator("#analysis-key")).to_contain_text("solving every column")
        for _ in range(600):  # the first hint's work has begun (the key says so as soon as the page shows the board:
            if solvers:  # a move sent before the server started that work is simply the position it works on)
                break
            page.wait_for_timeout(50)
        click_cell(page, "d1")
        wait_position(page, "9x8:d")
        for _ in range(600):  # the page asked again: the second hint's work starts while the engine compiles
            if len(solvers) == 2:
                break
            page.wait_for_timeout(50)
        assert len(solvers) == 2 and solvers[0].cancelled and not compiled.is_set()
    finally:
        compiled.set()
    wait_notes(page, "9x8:d", 9)


def test_a_long_jump_along_the_line_goes_all_the_way(server, new_page):
    """Home and End over 21 moves: more messages than the server's burst
    allows at once, paced by the page, and shown without the agents' pacing."""
    page = new_page()
    line = "7x6:" + "abcdefg" * 3
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(line))
    wait_notes(page, line, 7)
    page.locator("#board").focus()
    page.keyboard.press("Home")
    assert wait_exact_notes(page, "7x6", 7) == exact_columns("7x6")
    page.keyboard.press("End")
    assert wait_exact_notes(page, line, 7) == exact_columns(line)
    expect(page.locator("#message")).not_to_contain_text("Too many")
    # Home and End again and again, each as soon as the last one's position is there: the jumps share the
    # server's message budget (in one CI run the hint asked at the end of one went over it, and no scores came)
    for _ in range(2):
        page.keyboard.press("Home")
        wait_position(page, "7x6")
        page.keyboard.press("End")
        wait_position(page, line)
    assert wait_exact_notes(page, line, 7) == exact_columns(line)
    expect(page.locator("#message")).not_to_contain_text("Too many")


def test_a_bonus_board_with_a_ban_is_analysed_too(server, new_page):
    page = new_page()
    start = "5x4/Bc2:c"  # Black's piece in column c lands on the bonus cell
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
    assert wait_exact_notes(page, start, 5) == exact_columns(start)
    click_cell(page, "c2")
    expect(page.locator("#ban-panel")).to_be_visible()
    # while the ban is chosen, above each column the score of the ban there (not of the drops)
    scores = {m.token: v for m, v in Solver().analyse(Position.parse(start)).items()}
    bans = {token[2]: score_text(v) for token, v in scores.items() if len(token) == 3 and token[0] == "c"}
    assert bans != exact_columns(start)
    page.wait_for_function("n => document.querySelectorAll('#board .col-note').length === n", arg=len(bans))
    assert notes(page) == bans
    expect(page.locator("#ban-text")).to_contain_text(f"Declining scores {score_text(scores['c'])}.")
    click_cell(page, "a1")  # the ban piece in column a
    after = "5x4/Bc2:cc+a"
    assert wait_exact_notes(page, after, 5) == exact_columns(after)
    assert page.locator("#analysis-link").input_value().endswith(urllib.parse.quote(after, safe=""))
    page.locator("#undo").click()
    wait_notes(page, start, 5)
    page.locator("#redo").click()
    wait_notes(page, after, 5)


def test_undo_or_a_step_back_while_a_ban_is_chosen_takes_back_the_drop_alone(server, new_page):
    """The drop on the bonus cell is not played until its ban is chosen:
    Undo (or the step back) takes it back, and the position, its side to
    move and its scores stay; it took back the move before it too."""
    page = new_page()
    start = "5x4/Bc2:c"  # Black's piece in column c lands on the bonus cell
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
    scores = wait_exact_notes(page, start, 5)
    for button in ("#undo", "#step-back"):
        click_cell(page, "c2")
        expect(page.locator("#ban-panel")).to_be_visible()
        page.locator(button).click()
        expect(page.locator("#ban-panel")).to_be_hidden()
        assert notes(page) == scores  # the drops' scores again, for Black
        expect(page.locator("#analysis-key")).to_contain_text("Scores for B (black), to move")
        click_cell(page, "d1")  # still Black's move, from the same position
        wait_notes(page, start + "d", 5)
        page.locator("#undo").click()
        assert wait_exact_notes(page, start, 5) == scores
    # the first move of the board on the bonus cell: Undo takes back that drop too
    first = "5x4/Bc1"
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote(first))
    wait_notes(page, first, 5)
    click_cell(page, "c1")
    expect(page.locator("#undo")).to_be_enabled()
    page.locator("#undo").click()
    expect(page.locator("#ban-panel")).to_be_hidden()
    click_cell(page, "d1")
    wait_notes(page, first + ":d", 5)


def test_while_a_ban_is_chosen_the_key_explains_the_ban_scores_shown(server, new_page, monkeypatch):
    """While the ban piece is chosen, the scores above the columns are the
    ban choices', not the drops': here the solver has answered nothing
    yet, so each column shows the engine's estimate of putting the ban
    there, marked as one (they were all "?"), the key says the numbers are
    where the ban piece goes (it spoke of the drops'), and the ban panel
    says about what declining scores."""
    released = hold_the_solver(monkeypatch)
    page = new_page()
    key = page.locator("#analysis-key")
    try:
        start = "6x5/Bc1"
        page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
        expect(key).to_contain_text("a percentage in a dashed box: still being solved")
        click_cell(page, "c1")  # White's piece lands on the bonus cell
        expect(page.locator("#ban-panel")).to_be_visible()
        expect(page.locator("#board .col-note.note-estimate text")).to_have_text([re.compile(r"^\d+%$")] * 6)
        expect(key).to_have_text(
            "Scores for A (white), where the ban piece goes: + a win (the larger, the sooner), 0 a draw, "
            f"{MINUS} a loss; a percentage in a dashed box: still being solved, the engine's estimate."
        )
        expect(page.locator("#ban-text")).to_contain_text(re.compile(r"Declining: about \d+% \(the engine's estimate\)\."))
        page.locator("#cancel-ban").click()  # the drops' estimates again, and their key
        expect(key).to_contain_text("Scores for A (white), to move")
    finally:
        released.set()


def test_the_ban_panels_declining_score_turns_exact_while_the_ban_is_chosen(server, new_page, monkeypatch):
    """The panel said what declining scores as the hint stood when the piece
    landed on the bonus cell, and kept it: the engine's estimate stayed
    there after the solver's later pass had put the exact scores above the
    columns (a loaded machine's first pass left it open; here the solver is
    held). It follows the hint, as the scores above the columns do."""
    released = hold_the_solver(monkeypatch)
    page = new_page()
    try:
        start = "6x5/Bc1"
        page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
        expect(page.locator("#analysis-key")).to_contain_text("a percentage in a dashed box: still being solved")
        click_cell(page, "c1")  # White's piece lands on the bonus cell
        expect(page.locator("#ban-text")).to_contain_text(re.compile(r"Declining: about \d+% \(the engine's estimate\)\."))
    finally:
        released.set()
    exact = {m.token: v for m, v in Solver().analyse(Position.parse(start)).items()}
    expect(page.locator("#ban-text")).to_contain_text(f"Declining scores {score_text(exact['c'])}.", timeout=60_000)
    expect(page.locator("#ban-panel")).to_be_visible()  # the ban still to choose


def test_a_link_typed_by_hand_with_a_literal_plus_opens_the_bonus_move(server, new_page):
    """A query reads "+" as a space; a position has none, so the page reads it
    as the bonus move's "+" that the person typed."""
    page = new_page()
    after = "5x4/Bc2:cc+a"
    page.goto(server.url + "/analyse?position=" + after)  # not encoded: "/", ":" and "+" as typed
    assert wait_exact_notes(page, after, 5) == exact_columns(after)


def test_the_current_move_in_the_list_stays_readable_under_the_pointer(server, new_page):
    """A newcomer's review: on a phone the move just tapped keeps :hover,
    and the hover's pale background under the current move's white text
    left it unreadable (1.2:1); the current move keeps its own colours."""
    page = new_page(390, 700)
    page.goto(server.url + "/analyse?position=7x6:ddc")
    wait_exact_notes(page, "7x6:ddc", 7)  # the scores are in: the list is drawn for the last time
    current = page.locator("#moves .mv.current")
    expect(current).to_have_text("c")
    current.hover()
    colour, background = current.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
    assert contrast(colour, background) >= 4.5, (colour, background)


def test_a_bad_position_in_the_link_is_one_line_and_makes_no_room(server, new_page):
    page = new_page()
    page.goto(server.url + "/analyse?position=" + urllib.parse.quote("7x6:dz"))
    expect(page.locator("#view-missing")).to_be_visible()
    expect(page.locator("#missing-text")).to_contain_text("character 5")
    assert "\n" not in page.locator("#missing-text").inner_text()
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0
    page.goto(server.url + "/analyse")
    expect(page.locator("#missing-text")).to_contain_text("names no position")
    page.goto(server.url + "/analyse?position=9x8/Xd3/Bb1:b+")  # typed by hand: its "+" at the very end
    expect(page.locator("#missing-text")).to_contain_text("'+' must be followed by a ban column letter")
    # the link's own words quoted: a player's review saw 'hello+world' for hello%20world
    page.goto(server.url + "/analyse?position=hello%20world")
    expect(page.locator("#missing-text")).to_contain_text("invalid position 'hello world'")
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 0
    page.goto(server.url + "/analyse?board=9x8&position=7x6%3Add")  # encoded, after another field
    expect(page.locator("#board")).to_have_attribute("data-position", "7x6:dd")


def test_a_bad_position_pasted_on_the_analysis_board_says_it_cannot_be_analysed(server, new_page):
    """The analysis board's paste box goes on from a position, it starts no
    game: its refusal says so (it said "That position cannot start a
    game"), and the board stays as it was."""
    page = new_page()
    page.goto(server.url + "/analyse?position=7x6:dd")
    wait_position(page, "7x6:dd")
    room = page.url
    page.locator("#paste-here").fill("7x6:dz")
    page.locator("#paste-start").click()
    expect(page.locator("#paste-error")).to_have_text(
        "That position cannot be analysed: invalid position '7x6:dz': move 1 (the 2nd) 'z' at character 5: "
        "column z is beyond the board's width 7 (columns a..g)"
    )
    assert page.url == room
    wait_position(page, "7x6:dd")
    with sqlite3.connect(server.db_path) as db:
        assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 1


def test_the_paste_box_of_an_analysis_board_offers_to_analyse_not_to_start_a_game(server, new_page):
    """A position pasted on an analysis board is analysed, on a board of its
    own: the box said "Start a new game from a position (on the analysis
    board: go on from it)" over a Start button, a game's words first. Now
    it says what it does; in a game it still starts one."""
    page = new_page()
    page.goto(server.url + "/analyse?position=7x6:dd")
    wait_position(page, "7x6:dd")
    expect(page.locator('label[for="paste-here"]')).to_have_text("Analyse another position",
                                                                 use_inner_text=True)
    expect(page.get_by_role("button", name="Analyse", exact=True)).to_be_visible()
    page.locator("#paste-here").fill("7x6:dcdc")
    page.get_by_role("button", name="Analyse", exact=True).click()
    wait_position(page, "7x6:dcdc")
    expect(page.locator("#analysis-toggle")).to_be_checked()
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    expect(page.locator('label[for="paste-here"]')).to_have_text("Start a new game from a position",
                                                                 use_inner_text=True)
    expect(page.get_by_role("button", name="Start", exact=True)).to_be_visible()


def test_a_finished_games_replay_links_its_position_to_the_analysis_board(server, new_page):
    code = play_online_game(server, "dcdcdcd")
    page = new_page()
    page.goto(f"{server.url}/games/{code}")
    link = page.locator("#replay-analyse")
    expect(link).to_have_attribute("href", "/analyse?position=" + urllib.parse.quote("7x6:dcdcdcd", safe=""))
    page.locator("#replay-first").click()
    expect(link).to_have_attribute("href", "/analyse?position=7x6")
    link.click()
    assert wait_exact_notes(page, "7x6", 7) == exact_columns("7x6")


def test_the_new_game_form_and_the_switch_in_a_game(server, new_page):
    page = new_page()
    page.goto(server.url + "/?board=7x6")
    page.locator("#mode-analysis").check()
    expect(page.locator("#player1")).to_be_hidden()
    page.locator("#start").click()
    expect(page).to_have_url(re.compile(r"/r/[^/?]+$"))
    assert wait_exact_notes(page, "7x6", 7) == exact_columns("7x6")
    expect(page.locator("#seat-B .seat-kind")).to_contain_text("at this screen")
    # review: Undo said "take back your last move" here, where both sides are the person's
    expect(page.locator("#undo")).to_have_attribute("title", "take back the last move")
    page.reload()  # the room stays an analysis board
    assert wait_exact_notes(page, "7x6", 7) == exact_columns("7x6")

    # a game against the computer: the switch keeps the scores for the person's moves
    ticket = create_room(server, board="7x6:dd", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    expect(page.locator("#board .col-note")).to_have_count(0)
    page.locator("#analysis-toggle").check()
    assert wait_exact_notes(page, "7x6:dd", 7) == exact_columns("7x6:dd")
    expect(page.locator("#resign")).to_be_visible()  # still a game: the person may resign with the scores on
    expect(page.locator("#undo")).to_have_attribute("title", "take back your last move")
    page.locator("#analysis-toggle").uncheck()
    expect(page.locator("#board .col-note")).to_have_count(0)


def test_with_the_switch_on_in_a_game_the_computers_turn_promises_no_scores(server, new_page, monkeypatch):
    """The switch gives the scores for the person's moves only: while the
    computer thinks (here held until the test lets it move) the line under
    the board says they come for the next move; it said "Black to move:
    solving every column…", and no scores for Black ever came."""
    from c4lab.agents.random_agent import RandomAgent

    released = hold_moves(monkeypatch, RandomAgent)
    page = new_page()
    key = page.locator("#analysis-key")
    try:
        ticket = create_room(server, board="5x4", players={"A": "human", "B": "random"})
        open_room(page, server, ticket)
        page.locator("#analysis-toggle").check()
        wait_notes(page, "5x4", 5)
        expect(key).to_contain_text("Scores for A (white), to move")
        click_cell(page, "c1")
        wait_position(page, "5x4:c")
        expect(page.locator("#status")).to_contain_text("thinking")
        expect(key).to_have_text("B (black) to move: the scores come for your next move.")
        expect(page.locator("#board .col-note")).to_have_count(0)
    finally:
        released.set()
    expect(page.locator("#board .col-note")).to_have_count(5, timeout=60_000)  # White's, after Black's move
    expect(key).to_contain_text("Scores for A (white), to move")


def test_an_analysis_boards_address_opened_elsewhere_says_it_only_watches(server, new_page):
    """The room's own address (/r/<code>, in the address bar once the board
    is made) opened in another browser watches it: no scores are asked
    there, and the line under the board says so and where a board of one's
    own is; it said "White to move: solving every column…" for ever."""
    ticket = create_room(server, board="7x6:dd", players={"A": "human", "B": "human"}, analysis=True)
    page = new_page()  # without the room's token: it holds no seat
    page.goto(server.url + ticket["url"])
    wait_position(page, "7x6:dd")
    expect(page.locator("#analysis-key")).to_have_text(
        "You are watching: no scores here. The position panel's link opens this position on an analysis board of your own."
    )
    expect(page.locator("#analysis-link")).to_be_visible()
    expect(page.locator("#board .col-note")).to_have_count(0)
    for side in "AB":  # its people are at another screen: "at this screen" was a watcher's seats too
        expect(page.locator(f"#seat-{side} .seat-kind")).not_to_contain_text("at this screen")


def test_the_key_under_the_board_after_the_game_names_only_what_takes_a_move_back(server, new_page):
    """With the switch on, the key under a finished game says how to go on
    analysing: undo (and stepping back, on the analysis board's line, where
    a step back is an undo). Against the computer a step back only shows an
    earlier position; after a resignation no move can be taken back at all
    (Undo is disabled), and the key says so."""
    page = new_page()
    page.clock.install()  # held by resign() between its two clicks
    key = page.locator("#analysis-key")
    ticket = create_room(server, board="7x6:dd", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    page.locator("#analysis-toggle").check()
    resign(page)
    expect(board(page)).to_have_attribute("data-status", "over")
    expect(page.locator("#undo")).to_be_disabled()
    expect(key).to_have_text("The game is over and was given up: no move can be taken back. Review scores every move.")

    # won on the board against the computer: undo takes the moves back, a step back only looks
    ticket = create_room(server, board="7x6:dcdcdc", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    page.locator("#analysis-toggle").check()
    click_cell(page, "d4")
    expect(board(page)).to_have_attribute("data-status", "over")
    expect(page.locator("#undo")).to_be_enabled()
    expect(key).to_have_text("The game is over: undo to go on analysing.")

    # the analysis board: a step back is an undo along the line
    ticket = create_room(server, board="7x6:dcdcdc", players={"A": "human", "B": "human"}, analysis=True)
    open_room(page, server, ticket)
    page.locator("#analysis-toggle").check()
    click_cell(page, "d4")
    expect(board(page)).to_have_attribute("data-status", "over")
    expect(key).to_have_text("The game is over: undo, or step back, to go on analysing.")


def test_a_link_to_an_analysis_board_from_another_browser_opens_it_as_one(server, new_page):
    """A room made as an analysis board, opened where no choice was made
    for it (a link sent to another browser): the switch is on, the scores
    are shown, and a game won on the board offers undo, not Rematch or Swap
    sides. Switched off there, it stays off on a reload."""
    page = new_page()
    ticket = create_room(server, board="7x6:dcdcdc", players={"A": "human", "B": "human"}, analysis=True)
    open_room(page, server, ticket)
    expect(page.locator("#analysis-toggle")).to_be_checked()
    assert wait_exact_notes(page, "7x6:dcdcdc", 7) == exact_columns("7x6:dcdcdc")
    click_cell(page, "d4")
    expect(board(page)).to_have_attribute("data-status", "over")
    expect(page.locator("#undo")).to_be_enabled()
    for control in ("#play-again", "#swap-sides"):
        expect(page.locator(control)).to_be_hidden()
    page.locator("#analysis-toggle").uncheck()
    page.reload()
    expect(page.locator("#board")).to_have_attribute("data-live", "1")
    expect(page.locator("#analysis-toggle")).not_to_be_checked()


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_a_wide_boards_scores_take_two_staggered_rows_and_stay_as_large_as_on_7x6(server, new_page, size):
    """From 9 columns on, a column is too narrow for a score in large type:
    the pills take two rows (a, c, e... above; b, d, f... below), each two
    columns wide and over its own column, none over another, every number
    whole, unsqueezed and at least as large as the 7x6 board's minimum, an
    estimate's italic moved left of the centre by part of its lean."""
    width, height = size
    page = new_page(width, height)
    page.goto(server.url + "/analyse?position=12x12/Xf4")
    wait_notes(page, "12x12/Xf4", 12)
    check_readable(page, 16 if width < 600 else 20)
    pills = page.locator("#board .col-note").evaluate_all("""ns => ns.map(n => {
        const p = n.querySelector('rect').getBoundingClientRect();
        const c = document.querySelector(`#board .col[data-col="${n.dataset.note}"] .col-hit`).getBoundingClientRect();
        return {col: n.dataset.note, left: p.left, right: p.right, top: p.top, bottom: p.bottom,
                column: [c.left, c.right], squeezed: n.querySelector('text').hasAttribute('textLength'),
                kind: n.dataset.kind, text: (r => (r.left + r.right) / 2)(n.querySelector('text').getBoundingClientRect())};
    })""")
    rows = sorted({round(p["top"]) for p in pills})
    assert len(rows) == 2, rows
    for i, pill in enumerate(pills):
        assert (round(pill["top"]) == rows[0]) == (i % 2 == 0), pill  # a, c, e... above
        centre = (pill["left"] + pill["right"]) / 2
        assert pill["column"][0] <= centre <= pill["column"][1] or i in (0, len(pills) - 1), pill  # the edges may be cut
        assert pill["right"] - pill["left"] > pill["column"][1] - pill["column"][0], pill  # wider than its column
        assert not pill["squeezed"] or i in (0, len(pills) - 1), pill  # cut at the frame's side: may be narrowed
        if pill["kind"] == "estimate" and not pill["squeezed"]:  # its italic leans right: it sits left of the centre
            assert pill["text"] < (pill["left"] + pill["right"]) / 2 - 0.5, pill  # (the "%" touched the border)
    for a, b in zip(pills, pills[2:]):  # the same row: side by side, not over each other
        assert a["right"] <= b["left"] + 0.5, (a, b)
    assert pills[1]["bottom"] < page.locator("#board rect.frame").bounding_box()["y"] + 1


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
@pytest.mark.parametrize("start", ["7x6", "10x9/Xe5", "12x12/Xf4"])
def test_the_keyboards_column_is_marked_on_its_score_and_nothing_peeks_out(server, new_page, start, size):
    """The scores take the row above the board where the keyboard's dashed
    box and the piece it would drop are drawn (from 9 columns on, in two
    rows that cover it): the score of the keyboard's column is boxed
    instead, in either row, its arrow down to the column in the box's
    colour, and no other; the box covers no other score, and nothing of the
    row under the scores shows between them (the box and the piece peeked
    out there, under the arrows)."""
    page = new_page(*size)
    columns = int(start.split("x")[0])
    page.goto(server.url + "/analyse?position=" + start)
    wait_notes(page, start, columns)
    page.locator("#board").focus()  # the cursor starts on the middle column
    middle = "abcdefghijkl"[(columns - 1) // 2]
    for letter in (middle, chr(ord(middle) + 1)):  # on a wide board, a score in the upper row, then one in the lower
        expect(page.locator("#board [data-preview]")).to_have_attribute("data-preview", letter)
        expect(page.locator("#board .col-note.at-cursor")).to_have_count(1)
        marked = page.locator("#board .col-note.at-cursor")
        expect(marked).to_have_attribute("data-note", letter)
        for hidden in (".preview .cursor", ".preview .preview-piece"):
            expect(page.locator("#board " + hidden)).to_be_hidden()
        expect(marked.locator(".note-cursor")).to_be_visible()
        # outlines (without their strokes): [left, right, top, bottom]
        outline = "n => { const r = n.getBoundingClientRect(); return [r.left, r.right, r.top, r.bottom]; }"
        box = marked.locator(".note-cursor").evaluate(outline)
        pill = marked.locator(".note-pill").evaluate(outline)
        assert box[0] < pill[0] and box[1] > pill[1] and box[2] < pill[2] and box[3] > pill[3], (box, pill)
        line = float(marked.locator(".note-cursor").evaluate("n => parseFloat(getComputedStyle(n).strokeWidth)"))
        scale = (box[1] - box[0]) / float(marked.locator(".note-cursor").get_attribute("width") or 1)
        reach = line * scale / 2  # the box's dashes, half outside its outline
        others = page.locator("#board .col-note:not(.at-cursor) .note-pill").evaluate_all(f"ps => ps.map({outline})")
        for left, right, top, bottom in others:  # no other score under the box
            apart = right <= box[0] - reach or left >= box[1] + reach or bottom <= box[2] - reach or top >= box[3] + reach
            assert apart, (letter, box, (left, right, top, bottom))
        colour = marked.locator(".note-cursor").evaluate("n => getComputedStyle(n).stroke")
        if columns >= 9:  # two columns wide: its arrow says which
            assert marked.locator(".note-pointer").evaluate("n => getComputedStyle(n).fill") == colour
        page.keyboard.press("ArrowRight")
    page.locator("#board").blur()  # no keyboard column: no score boxed
    expect(page.locator("#board .col-note.at-cursor")).to_have_count(0)
    expect(page.locator("#board .note-cursor:visible")).to_have_count(0)


@pytest.mark.parametrize("size", [(390, 844), (1280, 800)], ids=["phone", "desktop"])
def test_a_hints_arrow_does_not_peek_out_between_the_scores(server, new_page, size):
    """A hint writes every column's score in the row above the board, where
    its gold arrow over the hinted column is drawn: on 9 columns and more the
    arrow showed between the lower row's pills, beside the arrows down to
    the columns, one more pointer to read. The hint is the gold-ringed
    score and the piece drawn on the board."""
    page = new_page(*size)
    ticket = create_room(server, board="10x9/Xe5", players={"A": "human", "B": "human"})
    open_room(page, server, ticket)
    page.locator("#hint").click()
    expect(page.locator("#board .col-note")).to_have_count(10, timeout=60_000)
    expect(page.locator("#board .hint[data-hint]")).to_be_visible()
    expect(page.locator("#board .col-note.best")).not_to_have_count(0)
    expect(page.locator("#board .hint-arrow")).to_be_hidden()


def test_the_evaluation_bar_states_an_exact_result_in_the_scores_terms(server, new_page):
    """Where every column is solved the position's result is known: the bar
    says it ("A (white) wins with best play", "Draw with best play"). It
    said "A (white) is winning (+1.00)" beside the column scores' +1, and
    the same +1.00 beside a best score of +5 or, with B to move, of -1: a
    second signed number on another scale; a solved draw was "About even
    (0.00)". An engine's estimate keeps its words and number."""
    page = new_page()
    for start, count, words in (
        ("7x6:dd", 7, "A (white) wins with best play"),
        ("7x6:d", 7, "A (white) wins with best play"),  # B to move: -1 at best above the columns
        ("4x4:bc", 4, "Draw with best play"),
    ):
        page.goto(server.url + "/analyse?position=" + urllib.parse.quote(start))
        wait_exact_notes(page, start, count)
        expect(page.locator("#eval-label")).to_have_text(words)
    page.goto(server.url + "/analyse?position=12x12/Xf4")
    expect(page.locator('#board .col-note[data-kind="estimate"]').first).to_be_visible(timeout=60_000)
    # the engine's estimate as the expected score of the side ahead: "A (white) is better (59 %)" (it was "+0.18")
    expect(page.locator("#eval-label")).to_have_text(re.compile(r"^(About even \(\d\d %( for [AB])\)|.* \((5\d|[6-9]\d|100) %\))$"))
    expect(page.locator("#eval-label")).to_have_attribute("title", re.compile(r"expected score in the engine's estimate: \d+ %"))


def test_the_keys_line_of_an_analysis_board_names_what_its_keys_do_along_the_line(server, new_page):
    """On an analysis board Shift+arrows take a move back and play it
    again, Home and End go to the line's start and end: the line under the
    board said "step through the moves, End back to the game", a game's
    words, where no game is left to go back to. In a game against the
    computer, the switch on, the keys still look back at the game."""
    page = new_page()
    page.goto(server.url + "/analyse?position=7x6:dd")
    wait_notes(page, "7x6:dd", 7)
    keys = page.locator("#keys-help")
    expect(keys).to_contain_text(
        "Shift+←→ take a move back and play it again (←→ alone when you cannot move), Home End the line's start "
        "and end", use_inner_text=True)
    expect(keys).not_to_contain_text("back to the game", use_inner_text=True)
    page.keyboard.press("Home")  # as the line says
    wait_position(page, "7x6")
    page.keyboard.press("End")
    wait_position(page, "7x6:dd")
    ticket = create_room(server, board="7x6", players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    page.locator("#analysis-toggle").check()
    expect(keys).to_contain_text("step through the moves (←→ alone when you cannot move), End back to the game",
                                 use_inner_text=True)


def test_a_tall_board_keeps_its_bottom_row_and_its_controls_in_view_on_a_phone(server, new_page):
    page = new_page(390, 844)
    page.goto(server.url + "/analyse?position=4x12")
    wait_notes(page, "4x12", 4)
    board = page.locator("#board").bounding_box()
    assert board is not None and board["y"] + board["height"] <= 844, f"the board ends at {board}"
    for control in ("#undo", "#redo", "#analysis-toggle"):
        box = page.locator(control).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 844, f"{control}: {box}"


@pytest.mark.parametrize("board_size", ["4x4", "12x12", "12x4"])
def test_every_control_of_the_analysis_board_is_in_view_at_1280x800(server, new_page, board_size):
    page = new_page(1280, 800)
    page.goto(server.url + "/analyse?position=" + board_size)
    wait_notes(page, board_size, int(board_size.split("x")[0]))
    for control in ("#undo", "#redo", "#step-back", "#analysis-toggle", "#analysis-key"):
        box = page.locator(control).bounding_box()
        assert box is not None, control
        assert box["y"] + box["height"] <= 800, f"{control} ends at {box['y'] + box['height']:.0f}px"
    assert page.evaluate("window.scrollY") == 0
    # and the switch of a game, beside Undo, Hint and Resign
    ticket = create_room(server, board=board_size, players={"A": "human", "B": "hard"})
    open_room(page, server, ticket)
    for control in ("#undo", "#hint", "#resign", "#analysis-toggle"):
        box = page.locator(control).bounding_box()
        assert box is not None and box["y"] + box["height"] <= 800, control
