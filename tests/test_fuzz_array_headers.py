"""Fuzzing the JSON header of the array files (n-tuple networks, Q-tables,
opening books) with hypothesis.

An archive whose compressed data or zip structure is damaged is refused by
``load_arrays`` (``test_arrayfile.py`` flips every byte); what passes the
archive's checks reaches the header, read as JSON, then each field checked
by the format's own loader.  Here the header's text is cut, has a character
replaced or gains one, as an edit or a bad copy does: loading it either
raises the format's own error, one line naming the file, or gives a network,
table or book that plays -- never another exception.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from c4lab.agents.ntuple_net import Network, NetworkError
from c4lab.agents.qtable import QTable, TableError
from c4lab.rules.position import Position
from c4lab.solver.book import BookError, OpeningBook, book_key, book_move

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)

#: The characters a damaged header gains: JSON's own, and digits, signs and letters that make other numbers or words.
CHARACTERS = st.sampled_from(list('0123456789-+.eE{}[]",: tfnaxI\\'))


def _network() -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    net = Network.create(Position.parse("5x4").variant, tuples=3, seed=1)
    net.games = 200
    net.options = {"alpha": 1.0, "alpha_final": 0.1, "epsilon": 0.1, "epsilon_final": 0.0, "opening": 16,
                   "lam": 0.0, "average": 0.15, "rng": ["14134887681539893280"], "done": 1.0, "seconds": 0.5}
    return net.header(), {"tuples": net.tuples, "weights": net.weights}


def _table() -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    variant = Position.parse("4x4").variant
    table = QTable(variant, np.array([3, 9], dtype=np.uint64), np.zeros((2, 8), dtype=np.float32),
                   np.ones(2, dtype=np.uint32), True, (1.0, 0.5, 0.0), {"start": "4x4", "episodes": 20}, "")
    return table.header(), {"keys": table.keys, "q": table.q, "visits": table.visits}


def _book() -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    book = OpeningBook.from_entries({book_key(Position.parse("7x6")): 1, book_key(Position.parse("7x6:d")): -1}, 2,
                                    {"variant": "7x6", "start": "7x6", "unsolved": 0, "complete": True})
    return {"format": "c4lab-book-1", "depth": book.depth, **book.info}, {"keys": book.keys, "scores": book.scores}


def _plays_network(net: Network) -> None:
    net.move_values(Position(net.variant))


def _plays_table(table: QTable) -> None:
    table.values(Position(table.variant))


def _plays_book(book: OpeningBook) -> None:
    for start in ("7x6", "7x6:d"):
        book_move(Position.parse(start), book)


FORMATS: dict[str, tuple[Callable[[], tuple[dict[str, Any], dict[str, np.ndarray]]], Callable[[Path], Any],
                         type[Exception], Callable[[Any], None]]] = {
    "network": (_network, Network.load, NetworkError, _plays_network),
    "Q-table": (_table, QTable.load, TableError, _plays_table),
    "book": (_book, OpeningBook.load, BookError, _plays_book),
}


@st.composite
def damaged(draw: st.DrawFn, text: str) -> str:
    """``text`` cut, with a character replaced, or with one more."""
    at = draw(st.integers(0, len(text)))
    how = draw(st.sampled_from(["cut", "replace", "insert"]))
    if how == "cut":
        return text[:at]
    if how == "replace":
        return text[:at] + draw(CHARACTERS) + text[at + 1:]
    return text[:at] + draw(CHARACTERS) + text[at:]


@pytest.mark.parametrize("kind", list(FORMATS))
@given(data=st.data())
@FUZZ
def test_a_damaged_header_is_the_formats_own_error_or_a_file_that_plays(
    tmp_path: Path, kind: str, data: st.DataObject
) -> None:
    make, load, error, plays = FORMATS[kind]
    header, arrays = make()
    text = data.draw(damaged(json.dumps(header)))
    path = tmp_path / f"{kind}.npz"
    with path.open("wb") as f:
        np.savez_compressed(f, header=np.array(text), **arrays)  # type: ignore[arg-type]
    try:
        loaded = load(path)
    except error as exc:
        assert str(path) in str(exc) and "\n" not in str(exc), str(exc)
        return
    plays(loaded)
