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

#: The key to the scores' signs (as the move question's line gives it).
_KEY = "+ a win, the larger the sooner; 0 a draw; - a loss"


def _signed(score: int | None, estimate: float | None = None) -> str:
    """A score as the scores row writes it: ``+3``, ``0``, ``-2``; not
    solved, the engine's estimate ``~57`` (in %); ``?`` neither."""
    if score is None:
        return "?" if estimate is None else f"~{min(99, round(estimate * 100)):02d}"
    return f"{score:+d}" if score else "0"


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
    declined_estimate: float | None = None,
) -> str:
    """The ban choices' ``columns`` in words, one line, with what declining
    scores (``declined``: the hint's score of the drop alone, else
    ``declined_estimate``, the engine's), for ``side``
    (its name: the side that dropped the piece and chooses the ban).  Not
    ``listed``: the key only (the scores are above the board), for a
    screen short of rows."""
    choices = ", ".join(f"{c['column']} {_signed(c['score'], c['estimate'])}" for c in columns)
    scores = f": {choices}" if listed else ", above the board"
    shown = [(c["score"], c["estimate"]) for c in columns] + [(declined, declined_estimate)]
    signs = ["~N: not solved in time, the engine's N %"] if any(s is None and e is not None for s, e in shown) else []
    if any(s is None and e is None for s, e in shown):
        signs.append("?: not solved in time")
    unsolved = "".join(f"; {sign}" for sign in [*signs, "s solves on"]) if signs else ""
    return (f"Scores for {side}, where the ban piece goes{scores}; declining: {_signed(declined, declined_estimate)}"
            f"  ({_KEY}{unsolved})")
