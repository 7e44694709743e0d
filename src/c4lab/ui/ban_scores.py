"""The analysis board's scores while the ban piece is chosen.

When a piece lands on the bonus cell, the ban question is asked before the
move is played, and the columns' scores of the position before the drop
(one per column, the best of its ban choices) no longer answer it: what
the person chooses now is where the ban goes.  As the page's analysis
board does (``banNotes`` in ``review.js``), the terminal then shows, above
each column that can take the ban piece, the score of putting it there
for the side choosing it (the hint's ``moves``: exact, or ``?`` where the
solver did not answer in time), and in words what declining scores.
"""

from __future__ import annotations

from typing import Any

#: The key to the scores' signs (as the move question's line gives it).
_KEY = "+ a win, the larger the sooner; 0 a draw; - a loss"


def _signed(score: int | None) -> str:
    """A score as the scores row writes it: ``+3``, ``0``, ``-2``; ``?`` unknown."""
    if score is None:
        return "?"
    return f"{score:+d}" if score else "0"


def ban_columns(moves: dict[str, int | None], letter: str) -> list[dict[str, Any]]:
    """The ban choices of a drop in column ``letter`` as the hint's columns
    (``column``, ``score``, ``exact``, ``estimate``), so that the scores row
    draws them: each column the ban piece can go to, with the score of the
    move ``letter+column`` in ``moves`` (the hint's, for the side to move;
    ``None``: not solved, drawn ``?``, as the page draws it)."""
    columns = []
    for token, score in sorted(moves.items()):
        if len(token) == 3 and token[0] == letter and token[1] == "+":
            columns.append({"column": token[2], "score": score, "exact": score is not None, "estimate": None})
    return columns


def ban_scores_line(side: str, columns: list[dict[str, Any]], declined: int | None, listed: bool = True) -> str:
    """The ban choices' ``columns`` in words, one line, with what declining
    scores (``declined``: the hint's score of the drop alone), for ``side``
    (its name: the side that dropped the piece and chooses the ban).  Not
    ``listed``: the key only (the scores are above the board), for a
    screen short of rows."""
    choices = ", ".join(f"{c['column']} {_signed(c['score'])}" for c in columns)
    scores = f": {choices}" if listed else ", above the board"
    unknown = "; ?: not solved in time, s solves on" if declined is None or any(not c["exact"] for c in columns) else ""
    return (f"Scores for {side}, where the ban piece goes{scores}; declining: {_signed(declined)}"
            f"  ({_KEY}{unknown})")
