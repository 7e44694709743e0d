"""``Analysis`` and ``MoveStats``: what an agent returns beside its move is
checked where it is built, field by field, as ``agents/base.py`` documents
it; an agent of one's own (docs/writing-agents.md) that fills a field
wrongly hears which one there, not as a traceback of ``c4lab move`` or
``c4lab engine``, nor as ``NaN`` in their JSON."""

from __future__ import annotations

import json

import numpy as np
import pytest

from c4lab.agents import Analysis, AnswerError, MoveStats
from c4lab.rules import Move


@pytest.mark.parametrize(("kind", "fields", "message"), [
    (Analysis, {"value": 75.0}, ("Analysis.value must be an expected score for the side to move in [0, 1] "
                                "(win 1, draw 0.5, loss 0), not 75.0")),
    (Analysis, {"value": float("nan")}, ("Analysis.value must be an expected score for the side to move in [0, 1] "
                                        "(win 1, draw 0.5, loss 0), not nan")),
    (Analysis, {"value": "0.5"}, ("Analysis.value must be an expected score for the side to move in [0, 1] "
                                 "(win 1, draw 0.5, loss 0), not '0.5'")),
    (Analysis, {"pv": ("d", "e")}, "Analysis.pv must hold Move objects, not 'd' (Move.parse('d') reads a token)"),
    (Analysis, {"pv": "de"}, "Analysis.pv must be a tuple of Move, not 'de'"),
    (Analysis, {"moves": (Move(3),)}, "Analysis.moves must hold MoveStats objects, not Move.parse('d')"),
    (Analysis, {"iterations": -1}, "Analysis.iterations must be 0 or more, not -1"),
    (Analysis, {"iterations": 2.5}, "Analysis.iterations must be an integer, not 2.5"),
    (Analysis, {"seconds": float("inf")}, "Analysis.seconds must be a number of seconds, 0 or more, not inf"),
    (Analysis, {"note": 123}, "Analysis.note must be a str or None, not 123"),
    (Analysis, {"fallback": b"heuristic"}, "Analysis.fallback must be a str or None, not b'heuristic'"),
    (MoveStats, {"move": "d"}, "MoveStats.move must be a Move (like Move.parse('d')), not 'd'"),
    (MoveStats, {"move": Move(3), "value": 1.5}, ("MoveStats.value must be an expected score for the side to move "
                                                 "in [0, 1] (win 1, draw 0.5, loss 0), not 1.5")),
    (MoveStats, {"move": Move(3), "visits": -2}, "MoveStats.visits must be 0 or more, not -2"),
    (MoveStats, {"move": Move(3), "score": 0.5}, "MoveStats.score must be an integer, not 0.5"),
])
def test_a_field_that_is_not_what_it_documents_is_refused_naming_it(
    kind: type, fields: dict[str, object], message: str
) -> None:
    with pytest.raises(AnswerError) as caught:
        kind(**fields)
    assert str(caught.value) == message


def test_lists_and_numpys_numbers_are_taken_as_tuples_and_pythons_numbers() -> None:
    """A network's ``float32`` value and a NumPy count are what a learner
    has at hand; ``json`` takes neither, and ``c4lab move --json`` dumps
    the analysis as it is."""
    stats = MoveStats(Move(3), visits=np.int64(7), value=np.float32(0.25), score=np.int32(-2))
    analysis = Analysis(moves=[stats], value=np.float32(0.75), pv=[Move(3), Move(2)],
                        iterations=np.int64(12), seconds=np.float32(0.5))
    assert analysis.moves == (stats,) and analysis.pv == (Move(3), Move(2))
    assert (type(stats.visits), type(stats.value), type(stats.score)) == (int, float, int)
    assert (type(analysis.value), type(analysis.iterations), type(analysis.seconds)) == (float, int, float)
    assert json.loads(json.dumps(analysis.to_dict())) == {
        "note": None, "value": 0.75, "pv": ["d", "c"], "iterations": 12, "seconds": 0.5,
        "moves": [{"move": "d", "visits": 7, "value": 0.25, "score": -2}],
    }


def test_an_empty_analysis_and_the_bounds_of_its_value_are_fine() -> None:
    assert Analysis() == Analysis(moves=(), value=None, pv=())
    assert [Analysis(value=v).value for v in (0, 0.5, 1)] == [0.0, 0.5, 1.0]


def test_a_value_a_rounding_error_past_an_end_is_that_end() -> None:
    """A search's mean of wins can come out a rounding error over 1 (or
    under 0): that is its arithmetic, not an agent's mistake."""
    assert Analysis(value=1 + 2e-16).value == 1.0 and MoveStats(Move(3), value=-1e-12).value == 0.0
    with pytest.raises(AnswerError):
        Analysis(value=1.001)
