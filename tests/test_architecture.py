"""The map of the code holds: imports point down a layer, no circles, no
function-level import that does not say why, and no private kernel name
outside ``rules/`` (docs/architecture.md draws the same layers).

The check reads the source with ``ast``: nothing is imported.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

#: Bottom to top.  A module may import its own layer and the layers below.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("foundations", ("c4lab.arrayfile", "c4lab.atomic", "c4lab.lazy", "c4lab.jitcache", "c4lab.precompiled",
                     "c4lab.compile_aside", "c4lab.quick_exit", "c4lab.ctrl_c", "c4lab.cores")),
    ("rules", ("c4lab.rules",)),
    ("solver", ("c4lab.solver",)),
    ("agents", ("c4lab.agents",)),
    ("game", ("c4lab.game",)),
    ("uses of agents", ("c4lab.arena", "c4lab.learning", "c4lab.engine", "c4lab.adapters", "c4lab.env")),
    ("interfaces", ("c4lab.server", "c4lab.ui")),
    ("commands", ("c4lab.cli", "c4lab.__main__", "c4lab.bench", "c4lab")),
)

#: A function-level import of a c4lab module must say why on its line or
#: the line above: a comment with this word (it saves start-up time).  A
#: module whose imports are all lazy for one reason says it once, in a
#: comment line that starts with ``LAZY_MODULE``.
LAZY_MARK = "lazy"
LAZY_MODULE = "# lazy imports:"


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported c4lab module (or package)
    names: tuple[str, ...]  # the names of a ``from`` import
    line: int
    in_function: bool
    marked: bool  # a "lazy" comment on the line or the line above


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer_of(module: str) -> int:
    """The index in ``LAYERS`` of the longest prefix that names ``module``."""
    best, depth = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > depth:
                best, depth = i, len(prefix)
    if best < 0:
        raise AssertionError(f"{module} is in no layer of LAYERS: add it")
    return best


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports_of(path: Path) -> list[Import]:
    """The c4lab imports that run (those under ``if TYPE_CHECKING`` do not)."""
    source = module_name(path)
    is_package = path.name == "__init__.py"
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    all_lazy = any(line.startswith(LAZY_MODULE) for line in lines)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other, in_function)
                continue
            inner = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
            if isinstance(child, ast.Import | ast.ImportFrom):
                marked = all_lazy or any(LAZY_MARK in lines[i] for i in range(max(child.lineno - 2, 0), child.lineno))
                if isinstance(child, ast.ImportFrom):
                    if child.level:
                        base = source.split(".")
                        keep = len(base) - child.level + (1 if is_package else 0)
                        target = ".".join(base[:keep] + ([child.module] if child.module else []))
                    else:
                        target = child.module or ""
                    entries = [(target, tuple(a.name for a in child.names))]
                else:
                    entries = [(a.name, ()) for a in child.names]
                for target, names in entries:
                    if target == "c4lab" or target.startswith("c4lab."):
                        found.append(Import(source, target, names, child.lineno, in_function, marked))
            visit(child, inner)

    visit(ast.parse(text), False)
    return found


def all_imports() -> list[Import]:
    return [imp for path in sorted((SRC / "c4lab").rglob("*.py")) for imp in imports_of(path)]


def resolved(imp: Import) -> list[str]:
    """The modules an import loads: ``from c4lab.x import y`` loads
    ``c4lab.x.y`` when that is a module, else ``c4lab.x``."""
    out = []
    for name in imp.names or ("",):
        candidate = f"{imp.target}.{name}" if name else imp.target
        path = SRC / Path(*candidate.split("."))
        out.append(candidate if path.with_suffix(".py").exists() or (path / "__init__.py").exists() else imp.target)
    return sorted(set(out))


def test_every_module_has_a_layer() -> None:
    for path in sorted((SRC / "c4lab").rglob("*.py")):
        layer_of(module_name(path))


def test_imports_point_down_the_layers() -> None:
    upward = [
        f"{imp.source}:{imp.line} imports {target} "
        f"({LAYERS[layer_of(imp.source)][0]} -> {LAYERS[layer_of(target)][0]})"
        for imp in all_imports()
        for target in resolved(imp)
        if layer_of(target) > layer_of(imp.source)
    ]
    assert upward == []


def test_function_level_imports_say_why() -> None:
    """A lazy import is there to save start-up time, never to dodge a circle,
    and it says so."""
    hidden = [f"{imp.source}:{imp.line} ({imp.target})" for imp in all_imports() if imp.in_function and not imp.marked]
    assert hidden == []


def test_there_is_no_import_circle() -> None:
    graph: dict[str, set[str]] = {}
    for imp in all_imports():
        for target in resolved(imp):
            if target != imp.source:
                graph.setdefault(imp.source, set()).add(target)
    # A package's __init__ runs before its modules: a module importing its
    # own package is not a circle unless the package imports it back.
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycle = path[path.index(nxt):] + [nxt]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                walk(nxt)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)


def _kernel_aliases(tree: ast.AST) -> set[str]:
    """Names bound to a module of ``c4lab.rules`` (``from c4lab.rules import kernels as K``)."""
    aliases = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("c4lab.rules"):
            for a in node.names:
                if (SRC / "c4lab" / "rules" / f"{a.name}.py").exists():
                    aliases.add(a.asname or a.name)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("c4lab.rules.") and a.asname:
                    aliases.add(a.asname)
    return aliases


#: The kernels' state and geometry layout: read through accessors outside ``rules/``.
LAYOUT = re.compile(r"^[SGL]_[A-Z]")


def _private(name: str) -> bool:
    return name.startswith("_") or bool(LAYOUT.match(name))


def test_only_rules_uses_private_kernel_names() -> None:
    """Searches outside ``rules/`` use the kernels' public surface: no
    ``K._name``, no ``from c4lab.rules.kernels import _name``, and no
    layout constant (``K.S_BOARD``): the accessors read a state."""
    offences = []
    for path in sorted((SRC / "c4lab").rglob("*.py")):
        module = module_name(path)
        if module.startswith("c4lab.rules"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        aliases = _kernel_aliases(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
            ):
                offences.append(f"{module}:{node.lineno} {node.value.id}.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("c4lab.rules"):
                offences += [f"{module}:{node.lineno} imports {a.name}" for a in node.names if _private(a.name)]
    assert offences == []


def test_the_page_is_small_es_modules_that_import_no_cycle() -> None:
    """The page's scripts: none over 400 lines, each reached from app.js by
    relative ES-module imports of files that exist, with no circle."""
    static = SRC / "c4lab" / "server" / "static"
    imports: dict[str, set[str]] = {}
    for path in sorted(static.glob("*.js")):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 400, f"{path.name} has {len(lines)} lines"
        text = "\n".join(lines)
        imports[path.name] = set(re.findall(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["']\./([\w.-]+)["']""", text, re.MULTILINE | re.DOTALL))
        for target in imports[path.name]:
            assert (static / target).is_file(), f"{path.name} imports ./{target}, which is missing"
    seen: set[str] = set()
    stack = ["app.js"]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(imports[name])
    assert seen == set(imports), f"not reached from app.js: {sorted(set(imports) - seen)}"

    def cycle_from(name: str, path: tuple[str, ...]) -> tuple[str, ...] | None:
        for target in imports[name]:
            if target in path:
                return (*path, target)
            found = cycle_from(target, (*path, target))
            if found:
                return found
        return None

    assert cycle_from("app.js", ("app.js",)) is None


def test_every_module_that_caches_compiled_code_makes_the_cache_safe_first() -> None:
    """A module with ``cache=True`` imports ``c4lab.jitcache`` (numba's
    cache under a lock) itself, not only through another module."""
    missing = [
        module_name(path)
        for path in sorted((SRC / "c4lab").rglob("*.py"))
        if re.search(r"@njit\([^)]*cache=True", text := path.read_text(encoding="utf-8"))
        and "import c4lab.jitcache" not in text
    ]
    assert missing == []


def _may_import(text: str) -> set[str]:
    """The modules a page script's ``May import:`` sentence names (what is
    in parentheses is commentary: ``(never the client)``)."""
    comment = " ".join(line.lstrip("/ ").strip() for line in text.splitlines() if line.startswith("//"))
    found = re.search(r"May import:(.*?)\.(?!js\b)", comment)
    assert found, "no 'May import:' sentence"
    return set(re.findall(r"[\w-]+\.js", re.sub(r"\([^)]*\)", "", found.group(1))))


def test_each_page_script_imports_what_its_may_import_line_says() -> None:
    """The page's layers, as the Python ones: each script's header says which
    scripts it may import, and it imports no other."""
    static = SRC / "c4lab" / "server" / "static"
    for path in sorted(static.glob("*.js")):
        text = path.read_text(encoding="utf-8")
        imported = set(re.findall(r"""^\s*(?:import|export)\b[^;]*?\bfrom\s+["']\./([\w.-]+)["']""", text,
                                  re.MULTILINE | re.DOTALL))
        allowed = _may_import(text)
        assert allowed <= {p.name for p in static.glob("*.js")}, f"{path.name} names a script that is not there"
        assert imported <= allowed, f"{path.name} imports {sorted(imported - allowed)}, not on its May import line"


def test_each_field_of_the_page_state_is_assigned_by_its_owner_alone() -> None:
    """``state.js``'s ``R`` groups its fields under ``// owner X.js``
    comments; a field is assigned (``R.f = ...``, ``R.f++``) in its owner
    alone: the other modules call the owner's named updates."""
    static = SRC / "c4lab" / "server" / "static"
    text = (static / "state.js").read_text(encoding="utf-8")
    block = text[text.index("export const R = {"):]
    block = block[:block.index("\n};")]
    owners: dict[str, str] = {}
    owner = None
    for line in block.splitlines()[1:]:
        if found := re.match(r"\s*// owner ([\w-]+\.js)", line):
            owner = found.group(1)
        elif found := re.match(r"\s*(\w+):", line):
            assert owner is not None, f"R.{found.group(1)} has no owner"
            owners[found.group(1)] = owner
    assert len(owners) >= 29  # the 29 fields of R, each under its owner
    for path in sorted(static.glob("*.js")):
        for field in set(re.findall(r"\bR\.(\w+)\s*(?:=(?![=>])|\+\+|--|[-+*/]=)", path.read_text(encoding="utf-8"))):
            assert field in owners, f"{path.name} assigns R.{field}, which R does not declare"
            assert owners[field] == path.name, f"{path.name} assigns R.{field}, owned by {owners[field]}"
