"""Browser tests: the page of ``src/c4lab/server/static`` driven by Playwright
(sync API) in Debian's chromium, against a real server per test.

Chromium comes from Debian (``/usr/lib/chromium/chromium``), never from
``playwright install``: if it is missing, the session installs it with
``apt-get`` (as root) or fails saying how to get it. See
``../shared/KNOWN-TO-WORK.md``.

The page runs under the server's Content-Security-Policy, as a visitor's
does: ``page.wait_for_function`` takes a function (``"() => ..."``), which
Playwright evaluates once; a bare expression is evaluated again at each
poll, which the policy refuses (no ``'unsafe-eval'``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from c4lab.server.run import BackgroundServer
from c4lab.server.storage import GameStore
from testkit import one_at_a_time

CHROMIUM = Path(os.environ.get("C4LAB_CHROMIUM", "/usr/lib/chromium/chromium"))
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts" / "screenshots"


def _install_chromium() -> None:
    """``apt-get install chromium`` when it is missing (we run as root),
    by one of the suite's workers: the others wait for it."""
    with one_at_a_time("chromium-install"):
        if not CHROMIUM.exists():
            _apt_get_chromium()


def _apt_get_chromium() -> None:
    """``apt-get`` it, or fail saying how to get it."""
    how = "apt-get update && apt-get install -y chromium"
    if not shutil.which("apt-get"):
        pytest.fail(
            f"{CHROMIUM} is missing and this machine has no apt-get: install Chromium and set C4LAB_CHROMIUM"
        )
    if os.geteuid() != 0:
        pytest.fail(f"{CHROMIUM} is missing: run `sudo {how}` (the tests install it only when run as root)")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    try:
        done = subprocess.run(
            ["sh", "-c", how], check=False, env=env, capture_output=True, text=True, timeout=1200
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{how}` took more than 20 minutes: install chromium by hand")
    if done.returncode != 0 or not CHROMIUM.exists():
        tail = (done.stdout + done.stderr)[-2000:]
        pytest.fail(f"`{how}` failed (exit {done.returncode}); {CHROMIUM} still missing:\n{tail}")


@pytest.fixture(scope="session", autouse=True)
def compiled_default_level() -> None:
    """The default level (``hard`` on 7x6) and the hint's solver compiled,
    or loaded from numba's cache, once per worker before any page opens.
    A first compile in a server's pool holds the GIL: on an empty cache and
    a loaded machine, for longer than a page waits for its room's socket
    (15 s), and the first test of a worker to open a room could time out
    on it (the page tests are not about compiling; the notices shown while
    it is done have tests of their own)."""
    from c4lab.agents.base import warm_up
    from c4lab.rules import Position
    from c4lab.server import review
    from c4lab.solver import Solver

    classic = Position.parse("7x6")
    warm_up("hard", classic)
    review.warm_up(Solver(review.TABLE_SIZE), classic)


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's chromium, installed if missing (once per session and worker)."""
    _install_chromium()
    return CHROMIUM


# One browser per test module, not per session: Playwright's sync API keeps
# its event loop marked as running on the main thread until it stops, and
# the tests that follow (tests/test_*.py call asyncio.run) must not see it.
@pytest.fixture(scope="module")
def browser(chromium):
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: python3 -m pip install -e '.[test]'")
    expect.set_options(timeout=15_000)
    playwright = sync_playwright().start()
    try:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=["--disable-gpu", "--disable-quic"]
        )
    except Exception as exc:  # noqa: BLE001
        playwright.stop()
        pytest.fail(f"chromium at {chromium} did not start under Playwright: {exc}")
    yield browser
    browser.close()
    playwright.stop()


@pytest.fixture
def server(tmp_path):
    """A real server (uvicorn in a thread) over a fresh SQLite file."""
    store = GameStore(tmp_path / "games.sqlite")
    running = BackgroundServer(store).start()
    running.store = store
    running.db_path = tmp_path / "games.sqlite"
    yield running
    running.stop()
    store.close()


@pytest.fixture
def new_page(browser):
    """``new_page(width=1280, height=800)``: a page in a fresh browser
    context (its own localStorage). Page errors fail the test."""
    contexts = []
    errors: list[str] = []

    def make(width: int = 1280, height: int = 800, **options):
        context = browser.new_context(viewport={"width": width, "height": height}, **options)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(f"{page.url}: {exc}"))
        page.on("console", lambda msg: _console(page, msg, errors))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, "errors in the page:\n" + "\n".join(errors)


# Chromium logs failed requests by itself: an HTTP error the page explains
# (a 400 for a bad position) and a socket that cannot connect while the
# server restarts are expected; anything else the page logs is an error.
EXPECTED_CONSOLE = ("Failed to load resource", "WebSocket connection to")


def _console(page, msg, errors: list[str]) -> None:
    if msg.type == "error" and not msg.text.startswith(EXPECTED_CONSOLE):
        errors.append(f"{page.url}: console: {msg.text}")


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Where screenshots go (not in git: the folder ignores itself)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    ignore = ARTIFACTS.parent / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# screenshots written by tests/browser; not part of the repository\n*\n")
    return ARTIFACTS
