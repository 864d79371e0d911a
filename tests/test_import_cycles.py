"""No import cycle among proctor's own modules, no import of proctor's own modules hidden in a function, and a
top level that reads as the table of contents of docs/architecture.md.

The import graph is built with `ast` over src/proctor: an edge for each `import`/`from … import` of a proctor
module, at module level (imports under `if TYPE_CHECKING:` are not run and are left out). A function-level import
of proctor's own code hides a cycle from the module-level graph, so it is refused everywhere outside `cli/` (the
commands, which import what each command needs when it runs, to keep `proctor --help` fast); the graph counting
every import, those inside functions included, has no cycle either. Heavy third-party libraries (torch,
transformers, aiohttp, inspect_ai) may still be imported lazily.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import proctor

SRC = Path(proctor.__file__).resolve().parent
ROOT = SRC.parents[1]
# in-function imports of proctor's own modules still allowed, per file (none: keep it so; a number may only fall)
HIDDEN_ALLOWED: dict[str, int] = {}


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in SRC.rglob("*.py")}


def import_targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The proctor modules an import statement imports (a name that is a submodule counts as that module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        base = base.rpartition(".")[0]
    target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
    found = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
    return [m for m in found if m in MODULES]


def all_imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement, with whether it is inside a function and whether it is for the type checker only
    (under `if TYPE_CHECKING:`, never run)."""
    def walk(body: list[ast.stmt], in_function: bool,
             type_only: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node, in_function, type_only
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from walk(node.body, in_function, True)
                yield from walk(node.orelse, in_function, type_only)
            else:
                inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                for block in ("body", "orelse", "finalbody"):
                    yield from walk(getattr(node, block, None) or [], inner, type_only)
                for handler in getattr(node, "handlers", None) or []:
                    yield from walk(handler.body, inner, type_only)
    yield from walk(tree.body, False, False)


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that runs, with whether it is inside a function (TYPE_CHECKING blocks skipped)."""
    return ((node, in_function) for node, in_function, type_only in all_imports(tree) if not type_only)


def _graph(with_functions: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = {t for node, in_function in _imports(tree) if with_functions or not in_function
                         for t in import_targets(module, path.name == "__init__.py", node) if t != module}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_module_level_import_graph_has_no_cycle() -> None:
    assert _cycles(_graph(with_functions=False)) == []


def _hidden() -> dict[str, list[str]]:
    """The imports of proctor's own modules inside functions, per file outside cli/."""
    hidden: dict[str, list[str]] = {}
    for module, path in MODULES.items():
        rel = path.relative_to(SRC).as_posix()
        if rel.startswith("cli/"):
            continue
        for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if in_function and import_targets(module, path.name == "__init__.py", node):
                hidden.setdefault(rel, []).append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    return hidden


def test_no_module_outside_cli_imports_proctor_inside_a_function() -> None:
    grown = [line for rel, lines in _hidden().items() if len(lines) > HIDDEN_ALLOWED.get(rel, 0) for line in lines]
    assert grown == []


def test_the_top_level_is_the_table_of_contents_of_docs_architecture() -> None:
    """docs/architecture.md's tree under "The house" names every package and module at the top of src/proctor,
    and nothing that is not there."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("## The house", 1)[1].split("```")[1]
    top = sorted(p.name + "/" if p.is_dir() else p.name for p in SRC.iterdir()
                 if (p.is_dir() and (p / "__init__.py").is_file()) or p.suffix == ".py")
    assert len(top) <= 20, top  # a table of contents, not an index
    assert [name for name in top if not re.search(rf"(^|\s){re.escape(name)}(\s|$)", tree, re.MULTILINE)] == []
    listed = re.findall(r"^  (\S+)", tree, re.MULTILINE)
    assert listed and [name for name in listed if name not in top] == []


def test_no_cycle_even_counting_imports_inside_functions() -> None:
    assert _cycles(_graph(with_functions=True)) == []


def test_the_graph_sees_a_cycle_when_there_is_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
