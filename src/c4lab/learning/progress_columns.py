"""Columns for the progress bars of long runs (``c4lab train``): the
words at the end of the line give way on a narrow terminal, not the bar.

Rich squeezes the columns of a progress line that may wrap, and its own
text columns may not: on an 80-column terminal a long summary at the end
(the last evaluation's scores) left of the label, the bar, the counts and
the times nothing but the label's first letter ("4… 75,256 ep/s, ...").
With :func:`whole` columns before a :class:`Tail`, the tail alone is cut
short, with an ellipsis.  (A module of its own: importing rich's progress
bars costs the short commands' start-up time.)
"""

from __future__ import annotations

from rich.progress import Task, TextColumn
from rich.table import Column
from rich.text import Text


def whole() -> Column:
    """The table column of a part of the line that keeps its width (the
    label, the bar, the counts, the times)."""
    return Column(no_wrap=True)


class Tail(TextColumn):
    """The last column of a progress line: its words (a template of the
    task's fields, plain text: no markup, no emoji codes), cut short with
    an ellipsis where the terminal is too narrow for the whole line."""

    def __init__(self, template: str) -> None:
        super().__init__(template, markup=False, table_column=Column())  # the one column that may give way

    def render(self, task: Task) -> Text:
        text = super().render(task)
        text.no_wrap, text.overflow = True, "ellipsis"
        return text


__all__ = ["Tail", "whole"]
