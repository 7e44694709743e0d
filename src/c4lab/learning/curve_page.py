"""The HTML page of a learning curve: the plot embedded, a note, and the
table of its points, one file to open or send (``c4lab train ntuple`` and
``c4lab train qlearning`` both write one beside their CSV and PNG)."""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence


def curve_page(title: str, png: bytes, note: str, head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """The page: ``title``, the plot (``png``, embedded), ``note`` (plain
    text: what the figures mean), and a table whose columns are ``head`` and
    whose rows are ``rows`` (text, escaped here)."""
    esc = html.escape
    header = "".join(f"<th>{esc(c)}</th>" for c in head)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em; color: #222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
th, td {{ border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }}
img {{ max-width: 100%; }}
</style></head><body>
<h1>{esc(title)}</h1>
<p>{esc(note)}</p>
<figure><img alt="learning curve" src="data:image/png;base64,{base64.b64encode(png).decode()}"></figure>
<table><tr>{header}</tr>{body}</table>
</body></html>
"""
