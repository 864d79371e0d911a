"""No import cycle among proctor's own modules, and no import of proctor's own modules hidden in a function.

The import graph is built with `ast` over src/proctor: an edge for each `import`/`from … import` of a proctor
module, at module level (imports under `if TYPE_CHECKING:` are not run and are left out). A function-level import
of proctor's own code hides a cycle from the module-level graph, so it is refused too — except in the pipeline's
modules (issue 30, items 1-2: runner, pipeline, spec and the run/score/llm-wc commands), rebuilt apart; the graph
counting every import, those inside functions included, has no cycle either. Heavy third-party libraries (torch,
transformers, aiohttp, inspect_ai) may still be imported lazily.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import proctor

SRC = Path(proctor.__file__).resolve().parent
PIPELINE = {"runner.py", "pipeline.py", "spec.py", "cli/run_cmds.py", "cli/score_cmds.py", "cli/llmwc_cmds.py"}


def _module(path: Path) -> str:
    parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module(p): p for p in SRC.rglob("*.py")}


def _targets(module: str, is_package: bool, node: ast.Import | ast.ImportFrom) -> list[str]:
    """The proctor modules an import statement imports (a name that is a submodule counts as that module)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in MODULES]
    base = module if is_package else module.rpartition(".")[0]
    for _ in range(max(node.level - 1, 0)):
        base = base.rpartition(".")[0]
    target = (f"{base}.{node.module}" if node.module else base) if node.level else (node.module or "")
    found = [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]
    return [m for m in found if m in MODULES]


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement that runs, with whether it is inside a function (TYPE_CHECKING blocks skipped)."""
    def walk(body: list[ast.stmt], in_function: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for node in body:
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node, in_function
            elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                yield from walk(node.orelse, in_function)
            else:
                inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                for block in ("body", "orelse", "finalbody"):
                    yield from walk(getattr(node, block, None) or [], inner)
                for handler in getattr(node, "handlers", None) or []:
                    yield from walk(handler.body, inner)
    yield from walk(tree.body, False)


def _graph(with_functions: bool) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        graph[module] = {t for node, in_function in _imports(tree) if with_functions or not in_function
                         for t in _targets(module, path.name == "__init__.py", node) if t != module}
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


def test_no_module_outside_the_pipeline_imports_proctor_inside_a_function() -> None:
    hidden = []
    for module, path in MODULES.items():
        rel = path.relative_to(SRC).as_posix()
        if rel in PIPELINE:
            continue
        for node, in_function in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if in_function and _targets(module, path.name == "__init__.py", node):
                hidden.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert hidden == []


def test_no_cycle_even_counting_imports_inside_functions() -> None:
    assert _cycles(_graph(with_functions=True)) == []


def test_the_graph_sees_a_cycle_when_there_is_one() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []
