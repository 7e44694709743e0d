"""The manual (``docs/``, built by MkDocs from ``mkdocs.yml``) and the
README: the site builds with ``mkdocs build --strict`` (a broken link, a
missing page or a reference mkdocstrings cannot resolve fails it), the
pages' Python examples run as doctests, every ``c4lab`` command line they
show (in a shell block or a code span of the prose) names a command and
options that exist, and so does every ``python3 benchmarks/...`` line
(a script and its options), every command and option is
named on a page (the changelog aside), and the README stays a front
page (at most 250 lines, the two set-up commands as they are).

The two worked examples of "Writing your own agent" are run by
``tests/test_examples.py``.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import inspect
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import click
import pytest

import c4lab
from c4lab.cli import main

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SRC = Path(c4lab.__file__).resolve().parents[1]
PAGES = sorted(DOCS.glob("*.md"))
QUICK_START = (
    "python3 -m pip install -e . && python3 -m c4lab play",
    "python3 -m pip install -e '.[test]' && python3 -m pytest",
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The manual built with ``mkdocs build --strict`` (once for the tests
    that read it)."""
    pytest.importorskip("mkdocs")
    built = tmp_path_factory.mktemp("manual") / "site"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
           "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(built)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return built


def test_the_site_builds_strict(site: Path) -> None:
    # The generated parts: RULES.md as it is, and a section per registered agent.
    rules = (ROOT.parent / "shared" / "RULES.md").read_text(encoding="utf-8")
    assert "Position notation" in rules and "Position notation" in (site / "rules-reference" / "index.html").read_text()
    from c4lab.agents import agent_infos

    agents = (site / "agents" / "index.html").read_text(encoding="utf-8")
    for info in agent_infos():
        assert f'<h3 id="{info.name}"' in agents, info.name
    assert '<h3 id="engine"' in agents
    # Every page of docs/ is in the navigation (a missing page or picture is a broken link).
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in PAGES:
        assert f" {page.name}" in nav, f"{page.name} is not in mkdocs.yml's nav"


def _api_docstrings(site: Path) -> str:
    """The API reference page's content: mkdocstrings' rendering of the docstrings."""
    page = (site / "api" / "index.html").read_text(encoding="utf-8")
    return page[page.index("<article"):page.index("</article>")]


def test_the_api_page_renders_docstring_sections(site: Path) -> None:
    """The docstrings' Google-style sections (``Attributes:`` with one
    indented entry a line) render as sections, not as a paragraph that runs
    the entries together."""
    docs = _api_docstrings(site)
    assert 'doc-section-title">Attributes:' in docs
    assert not re.search(r"<p>(Args|Arguments|Attributes|Returns|Raises|Yields|Examples?|Notes?):", docs)


def test_the_api_page_shows_docstring_examples_as_code(site: Path) -> None:
    """A docstring's ``>>>`` example shows as code, prompts and all: it is
    indented as a code block (Markdown reads a ``>>>`` line at the margin as
    three nested quotes, and drops the prompts)."""
    docs = _api_docstrings(site)
    assert "<blockquote>" not in docs
    assert re.search(r"<code>[^<]*&gt;&gt;&gt; round\(sweep_bound\(10\)\)", docs)


def test_the_api_page_shows_no_sphinx_roles(site: Path) -> None:
    """The docstrings are Markdown: a reference is ``name`` or a
    mkdocstrings cross-reference (``[name][c4lab.module.name]``), never a
    Sphinx role, which the page would show as it is (``:func:`name```)."""
    text = re.sub(r"<[^>]+>", "", _api_docstrings(site))
    assert not re.findall(r":(?:func|meth|class|mod|attr|data|exc|obj):\S*", text)


def test_the_api_page_names_no_private_name(site: Path) -> None:
    """The reference is the public API: no ``_name`` member is documented,
    and no docstring on the page sends its reader to one."""
    docs = _api_docstrings(site)
    assert not re.findall(r'id="[\w.]*\._\w*"', docs)
    assert not re.findall(r"<code>_[a-z]\w*", docs)


def test_every_code_block_names_its_language() -> None:
    """Each fenced block of the pages and the README says what it holds
    (``sh``, ``python``, ``json``..., ``text`` for a diagram or a
    transcript): the commands test above reads the ``sh`` ones."""
    for path in [*PAGES, ROOT / "README.md"]:
        fence = None
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            opened = re.match(r"\s*(`{3,}|~{3,})\s*(\S*)", line)
            if not opened:
                continue
            if fence is None:
                fence = opened.group(1)
                assert opened.group(2), f"{path.name}:{number}: a code block without a language"
            elif opened.group(1).startswith(fence) and not opened.group(2):
                fence = None


def test_no_list_runs_into_the_paragraph_before_it() -> None:
    """A list on a page has a blank line before it: GitHub starts a list
    right under a line of text, but MkDocs (Python-Markdown) keeps the items
    in that paragraph, dashes and all."""
    for page in PAGES:
        fence, previous = None, ""
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            opened = re.match(r"\s*(`{3,}|~{3,})", line)
            if opened:
                fence, previous = (None if fence else opened.group(1)), ""
                continue
            if fence:
                continue
            item = re.match(r"(?:[-*+]|\d+\.) ", line)  # "+ 0.1·mean" at a line's start is an item on GitHub
            text = previous.strip() and not re.match(r"\s|[-*+] |\d+\. |[#|<>]", previous)
            assert not (item and text), f"{page.name}:{number}: a list with no blank line before it"
            previous = line


def test_no_paragraph_runs_into_the_list_item_before_it() -> None:
    """Text at the margin right under a list's last item (no blank line)
    is that item's lazy continuation: the site shows the paragraph inside
    the item.  (An item's own wrapped lines are indented.)"""
    for page in PAGES:
        fence, in_item = None, False
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            opened = re.match(r"\s*(`{3,}|~{3,})", line)
            if opened:
                fence, in_item = (None if fence else opened.group(1)), False
                continue
            if fence:
                continue
            if re.match(r"(?:[-*+]|\d+\.) ", line) or (in_item and re.match(r"\s+\S", line)):
                in_item = True
                continue
            assert not (in_item and line.strip() and not re.match(r"[|#<>!]", line)), (
                f"{page.name}:{number}: a paragraph with no blank line after the list above it")
            in_item = False


def test_every_list_of_the_site_renders_as_a_list(site: Path) -> None:
    """No page of the site, the generated ones included (RULES.md as it is,
    written for GitHub), shows list items as lines of a paragraph."""
    for page in site.glob("**/index.html"):
        html = page.read_text(encoding="utf-8")
        for paragraph in re.findall(r"<p>(.*?)</p>", html, re.DOTALL):
            assert not re.search(r"\n[-*] ", paragraph), f"{page.parent.name}: {paragraph[:80]!r}"
    assert "<li><code>7x6</code> the empty classic board.</li>" in (site / "rules-reference" / "index.html").read_text()


def test_a_broken_link_fails_the_strict_build(tmp_path: Path) -> None:
    """What makes the build above a check: with the manual's own settings
    (``strict`` and its link validation), a page that links to a missing
    page, anchor or picture fails the build, naming each."""
    yaml = pytest.importorskip("yaml")
    ours = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("# Home\n\n## Here\n\n[a](gone.md) [b](#nowhere) ![c](img/gone.png)\n")
    config = {"site_name": "t", "strict": ours["strict"], "validation": ours["validation"]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--site-dir", str(tmp_path / "site")],
                          cwd=tmp_path, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode != 0
    for target in ("gone.md", "#nowhere", "img/gone.png"):
        assert target in done.stderr, target


@pytest.mark.parametrize("page", [p for p in PAGES if ">>> " in p.read_text(encoding="utf-8")], ids=lambda p: p.name)
def test_the_python_examples_of_the_pages_run(page: Path) -> None:
    failures, tried = doctest.testfile(str(page), module_relative=False,
                                       optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert tried > 0 and failures == 0


def _api_reference_names() -> list[tuple[str, object]]:
    """What the API reference (``docs/api.md``) documents: each ``:::``
    directive's object, or its ``members:`` list, or a module's every
    public name defined in it, with its dotted name."""
    found: list[tuple[str, object]] = []
    text = (DOCS / "api.md").read_text(encoding="utf-8")
    for target, options in re.findall(r"^::: (\S+)\n((?:    .*\n)*)", text, re.MULTILINE):
        members = re.search(r"members: \[(.*?)\]", options)
        try:
            module, names = importlib.import_module(target), None
        except ModuleNotFoundError:
            module_name, _, name = target.rpartition(".")
            module, names = importlib.import_module(module_name), [name]
        if members:
            names = [n.strip() for n in members.group(1).split(",")]
        if names is None:
            names = [n for n, obj in vars(module).items()
                     if not n.startswith("_") and getattr(obj, "__module__", None) == module.__name__]
        found += [(f"{module.__name__}.{n}", getattr(module, n)) for n in names]
    return found


def _public_members(cls: type) -> list[tuple[str, object]]:
    """A class's own public methods and properties, as the reference shows them."""
    found = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        function = member.fget if isinstance(member, property) else getattr(member, "__func__", member)
        if inspect.isfunction(function):
            found.append((name, function))
    return found


def test_every_name_of_the_api_reference_has_a_docstring() -> None:
    """``help()`` and the reference page say what each public name is for:
    every function, class, method and property that ``docs/api.md`` lists
    has a docstring of its own (a dataclass's made-up ``Name(field, ...)``
    signature is not one)."""
    undocumented = []
    names = _api_reference_names()
    assert len(names) > 40
    for dotted, obj in names:
        own = obj.__doc__ or ""
        if not own.strip() or (inspect.isclass(obj) and own.startswith(f"{obj.__name__}(")):
            undocumented.append(dotted)
        if inspect.isclass(obj):
            undocumented += [f"{dotted}.{name}" for name, function in _public_members(obj)
                             if not (getattr(function, "__doc__", None) or "").strip()]
    assert not undocumented, f"no docstring: {undocumented}"


def _command_lines() -> list[tuple[str, str]]:
    """Every ``c4lab ...`` line of a shell block in the pages and the
    README (the comment after ``#`` dropped), with the file it is in."""
    found = []
    for path in [*PAGES, ROOT / "README.md"]:
        for block in re.findall(r"```(?:sh|console)\n(.*?)```", path.read_text(encoding="utf-8"), re.DOTALL):
            for line in block.splitlines():
                words = shlex.split(line, comments=True)
                if words[:1] == ["c4lab"]:
                    found.append((path.name, shlex.join(words)))
    return found


def _inline_command_lines() -> list[tuple[str, str]]:
    """Every command the pages' and the README's prose quote in a code span
    (`` `c4lab arena hard heuristic --limit 1` ``), with the file it is in;
    not the changelog (a history), nor a span whose second word is a
    placeholder in capitals (`` `c4lab SPEC` ``, an engine's name)."""
    found = []
    for path in [*PAGES, ROOT / "README.md"]:
        if path.name == "changelog.md":
            continue
        prose = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.DOTALL).replace("\n", " ")
        for span in re.findall(r"`(c4lab [^`]+)`", prose):
            words = shlex.split(span)
            if not words[1].isupper():
                found.append((path.name, shlex.join(words)))
    return found


def test_the_pages_show_command_lines() -> None:
    assert len(_command_lines()) > 60
    assert len(_inline_command_lines()) > 100


@pytest.mark.parametrize("where, line", _command_lines() + _inline_command_lines())
def test_every_command_line_shown_names_a_command_and_options_that_exist(where: str, line: str) -> None:
    """No page describes a command or an option that does not exist: click
    parses each line as the command would (nothing runs).  Values are not
    checked beyond that: a file a line names need not exist here."""
    args = shlex.split(line)[1:]
    command: click.Command = main
    parent = None
    while True:
        try:
            context = command.make_context(command.name or "c4lab", list(args), parent=parent)
        except click.NoSuchOption as err:
            pytest.fail(f"{where}: {line!r}: {err.format_message()}")
        except click.exceptions.Exit:  # --help, --version: they exist, and end the parse
            return
        except click.UsageError as err:  # a missing value or file: not what this test checks
            assert "No such command" not in err.format_message(), f"{where}: {line!r}: {err.format_message()}"
            return
        if not isinstance(command, click.Group):
            return
        with warnings.catch_warnings():  # click 8.2 deprecates protected_args, where a group keeps its command
            warnings.simplefilter("ignore", DeprecationWarning)
            rest = [*context.protected_args, *context.args]
        if not rest:
            return
        sub = command.get_command(context, rest[0])
        assert sub is not None, f"{where}: {line!r}: no command {rest[0]!r}"
        command, args, parent = sub, rest[1:], context


def _benchmark_lines() -> list[tuple[str, str]]:
    """Every ``python3 benchmarks/NAME.py ...`` the pages and the README
    show, in a shell block (the comment after ``#`` dropped) or a code span
    of the prose (not the changelog's), with the file it is in."""
    found = []
    for path in [*PAGES, ROOT / "README.md"]:
        if path.name == "changelog.md":
            continue
        text = path.read_text(encoding="utf-8")
        for block in re.findall(r"```(?:sh|console)\n(.*?)```", text, re.DOTALL):
            found += [(path.name, line.split(" #")[0].strip()) for line in block.splitlines()
                      if line.startswith("python3 benchmarks/")]
        prose = re.sub(r"```.*?```", "", text, flags=re.DOTALL).replace("\n", " ")
        found += [(path.name, span) for span in re.findall(r"`(python3 benchmarks/[^`]+)`", prose)]
    return found


def _script_options(script: Path) -> set[str]:
    """The options a benchmark script's argparse parser takes: the strings
    starting with ``-`` of its ``add_argument`` calls, read from its source."""
    return {
        arg.value for node in ast.walk(ast.parse(script.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument"
        for arg in node.args if isinstance(arg, ast.Constant) and str(arg.value).startswith("-")
    }


def test_the_pages_show_benchmark_lines() -> None:
    assert len(_benchmark_lines()) > 15


@pytest.mark.parametrize("where, line", _benchmark_lines())
def test_every_benchmark_line_shown_names_a_script_and_options_that_exist(where: str, line: str) -> None:
    """What the test above does for ``c4lab``, for the benchmarks a page
    sends its reader to run: the script is in ``benchmarks/`` and takes
    every option the line gives it (each by its whole name: argparse would
    take a prefix, a reader copies the page)."""
    script = ROOT / line.split()[1]
    assert script.is_file(), f"{where}: {line!r}: no {script.relative_to(ROOT)}"
    unknown = set(re.findall(r"(?<!\S)--?[a-z][\w-]*", line)) - _script_options(script)
    assert not unknown, f"{where}: {line!r}: {script.name} has no option {sorted(unknown)}"


def _commands(command: click.Command, path: str) -> list[tuple[str, click.Command]]:
    """``command`` and every command under it, each with its whole name
    (``c4lab bench solver``)."""
    found = [(path, command)]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, f"{path} {name}")
    return found


def _manual() -> str:
    """The manual's own pages: the changelog, a history, documents nothing."""
    return "\n".join(p.read_text(encoding="utf-8") for p in PAGES if p.name != "changelog.md")


@pytest.mark.parametrize("path, command", [pytest.param(path, command, id=path) for path, command in _commands(main, "c4lab")])
def test_every_command_and_option_is_in_the_manual(path: str, command: click.Command) -> None:
    """The other way round: what ``--help`` offers, a page names, each
    command (``c4lab bench solver``) and each spelling of each option
    (``--alpha`` and ``--learning-rate``; ``-1`` and ``--player1``)."""
    manual = _manual()
    assert path == "c4lab" or f"{path} " in manual or f"{path}`" in manual, f"no page names {path!r}"
    missing = [
        name for param in command.params if isinstance(param, click.Option)
        for name in (*param.opts, *param.secondary_opts)
        if name not in ("-h", "--help") and not re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", manual)
    ]
    assert not missing, f"{path}: no page names {missing}"


def test_the_readme_is_a_front_page() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250
    for command in QUICK_START:
        assert f"```sh\n{command}\n```" in readme
    assert "python3 -m mkdocs serve" in readme


def test_every_link_of_the_pages_works_in_a_checkout_too() -> None:
    """A page read in a checkout (or a repository's file browser) linked
    ``rules-reference.md``, a page only the built site has; RULES.md is
    linked where a checkout has it, beside the project, and the site's
    build turns that link into its own page's (``mkdocs_hooks``)."""
    broken = []
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)  # code blocks hold no links
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            path = target.split("#")[0]
            if not path or re.match(r"[a-z]+:", path):
                continue
            if not (page.parent / path).exists():
                broken.append(f"{page.name}: {target}")
    assert broken == []


def test_the_site_links_rules_md_to_its_own_page(site: Path) -> None:
    index = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="rules-reference/"' in index and "shared/RULES.md" not in index
