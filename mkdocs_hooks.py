"""MkDocs hooks of the manual (``mkdocs.yml``, ``hooks:``): what the site
shows but no page writes by hand.

- ``rules-reference.md``: ``../shared/RULES.md`` as it is, the contract
  every part of c4lab follows (it lives beside the project, not in it; the
  site shows it, never a copy that could drift).
  Its lists are set apart from the paragraph above them (GitHub starts a
  list right under a line of text; Python-Markdown would run the items into
  that paragraph), the one change to how it reads.
- A page links RULES.md where a checkout has it, ``../../shared/RULES.md``
  (the file beside the project, so that the link works on the page read
  in a checkout or a repository's browser); the site's link goes to its
  own copy, ``rules-reference.md``.
- The agents' parameters: the marker ``<!-- c4lab:agents -->`` in a page is
  replaced by a table per agent built from the registry
  (:func:`c4lab.agents.agent_infos`), the same data ``c4lab agents`` prints.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent
RULES = ROOT.parent / "shared" / "RULES.md"
AGENTS_MARKER = "<!-- c4lab:agents -->"
#: A page's link to RULES.md beside the project (``docs/x.md`` -> ``../../shared/RULES.md``, anchor kept).
RULES_LINK = re.compile(r"\]\(\.\./\.\./shared/RULES\.md(#[^)]*)?\)")


def on_files(files: Files, config: Any) -> Files:
    """Add the rules page, read from ``../shared/RULES.md``."""
    if not RULES.is_file():
        raise FileNotFoundError(f"{RULES} is missing: the rules page of the site is that file")
    files.append(File.generated(config, "rules-reference.md", content=RULES.read_text(encoding="utf-8")))
    return files


def _cell(text: object) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def agents_markdown() -> str:
    """Every registered agent with its parameters and their defaults (a
    preset's own values in place of the defaults), as ``c4lab agents``."""
    # lazy: c4lab (and numba with it) is imported only by a build whose pages ask for the table
    import c4lab.engine.client  # noqa: F401  registers engine:cmd=... (the CLI's arena and move import it too)
    from c4lab.agents import agent_infos

    parts: list[str] = []
    for info in agent_infos():
        parts.append(f"### `{info.name}`\n\n{_cell(info.help)}")
        if info.unavailable:
            parts.append(f"*Unavailable here: {_cell(info.unavailable)}.*")
        if info.params:
            rows = ["| parameter | type | default | what it sets |", "|---|---|---|---|"]
            for param in info.params:
                default = param.default
                if param.name in info.defaults:
                    default = param.convert(info.name, info.defaults[param.name])
                allowed = []
                if param.choices:
                    allowed.append("one of " + ", ".join(f"`{c}`" for c in param.choices))
                if param.minimum is not None:
                    allowed.append(f"{'above' if param.above else 'at least'} {param.minimum:g}")
                if param.nullable or param.default is None:
                    allowed.append("`none` allowed")
                what = _cell(param.help) + (f" ({'; '.join(allowed)})" if allowed else "")
                rows.append(f"| `{param.name}` | {param.type.__name__} | `{_cell(default)}` | {what} |")
            parts.append("\n".join(rows))
        else:
            parts.append("No parameters.")
    return "\n\n".join(parts) + "\n"


def lists_apart(markdown: str) -> str:
    """``markdown`` with a blank line before each list that starts right
    under a line of text (outside code blocks)."""
    lines: list[str] = []
    fence = ""
    for line in markdown.splitlines(keepends=True):
        opened = re.match(r"\s*(`{3,}|~{3,})", line)
        if opened:
            fence = "" if fence else opened.group(1)
        elif (not fence and re.match(r"(?:[-*+]|\d+\.) ", line) and lines and lines[-1].strip()
              and not re.match(r"\s|(?:[-*+]|\d+\.) |[#|<>]", lines[-1])):
            lines.append("\n")
        lines.append(line)
    return "".join(lines)


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if page.file.src_uri == "rules-reference.md":
        markdown = lists_apart(markdown)
    markdown = RULES_LINK.sub(lambda m: f"](rules-reference.md{m.group(1) or ''})", markdown)
    if AGENTS_MARKER in markdown:
        markdown = markdown.replace(AGENTS_MARKER, agents_markdown())
    return markdown
