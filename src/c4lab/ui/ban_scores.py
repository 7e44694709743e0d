"""The analysis board's scores while the ban piece is chosen.

When a piece lands on the bonus cell, the ban question is asked before the
move is played, and the columns' scores of the position before the drop
(one per column, the best of its ban choices) no longer answer it: what
the person chooses now is where the ban goes.  As the page's analysis
board does (``banNotes`` in ``review.js``), the terminal then shows, above
each column that can take the ban piece, the score of putting it there
for the side choosing it (the hint's ``moves``: exact, else the engine's
estimate of it, the hint's ``estimates``, else ``?``), and in words what
declining scores.
"""

from __future__ import annotations

from typing import Any

from c4lab.ui.board_view import score_sign, scores_key


def ban_columns(
    moves: dict[str, int | None], letter: str, estimates: dict[str, float] | None = None
) -> list[dict[str, Any]]:
    """The ban choices of a drop in column ``letter`` as the hint's columns
    (``column``, ``score``, ``exact``, ``estimate``), so that the scores row
    draws them: each column the ban piece can go to, with the score of the
    move ``letter+column`` in ``moves`` (the hint's, for the side to move;
    ``None``: not solved: the engine's estimate of it in ``estimates``, by
    token, drawn ``~N``, else ``?``, as the page draws them)."""
    columns = []
    for token, score in sorted(moves.items()):
        if len(token) == 3 and token[0] == letter and token[1] == "+":
            estimate = None if score is not None else (estimates or {}).get(token)
            columns.append({"column": token[2], "score": score, "exact": score is not None, "estimate": estimate})
    return columns


def ban_scores_line(
    side: str, columns: list[dict[str, Any]], declined: int | None, listed: bool = True,
    declined_estimate: float | None = None, solve_on: bool = True,
) -> str:
    """The ban choices' ``columns`` in words, one line, with what declining
    scores (``declined``: the hint's score of the drop alone, else
    ``declined_estimate``, the engine's), for ``side``
    (its name: the side that dropped the piece and chooses the ban).  Not
    ``listed``: the key only (the scores are above the board), for a
    screen short of rows.  ``solve_on``: the key names the analysis
    board's ``s`` (a game has none)."""
    declining = {"score": declined, "exact": declined is not None,
                 "estimate": None if declined is not None else declined_estimate}
    choices = ", ".join(f"{c['column']} {score_sign(c)}" for c in columns)
    scores = f": {choices}" if listed else ", above the board"
    return (f"Scores for {side}, where the ban piece goes{scores}; declining: {score_sign(declining)}"
            f"  ({scores_key([*columns, declining], solve_on)})")
