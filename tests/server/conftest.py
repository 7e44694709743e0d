"""Fixtures shared by the server's tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from c4lab.server.storage import GameStore


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GameStore]:
    """A game database in the test's own folder, closed afterwards."""
    opened = GameStore(tmp_path / "games.sqlite")
    try:
        yield opened
    finally:
        opened.close()
