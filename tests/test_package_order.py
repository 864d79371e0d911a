"""The packages of src/proctor stack: a package imports only packages of the layers below its own, never one above
it nor one beside it in its layer (unless `BESIDE` declares it), at module level and inside functions alike.
`tests/test_import_cycles.py` finds module cycles; this finds the imports that would make one between packages.

The order, bottom first (docs/architecture.md, "The layers", says what each holds and why it sits there):
util < core < {data, log, models, stats} < scoring < {benchmarks, metrics} < run < analysis < {interop, report}
< testing < cli < the top level. `run` sits below `analysis` because the history store (`run/store.py`) records
what a run computed (it reads a run back through `metrics.results`) and the comparisons read it; `stats` sits beside
`log` because its numerics take and return core records only.

Imports the type checker alone reads (under `if TYPE_CHECKING:`) are held to the same order, except the ones
`TYPE_ONLY` names with the reason; that list may only shrink.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from test_import_cycles import MODULES, SRC, all_imports, import_targets  # tests/ is on sys.path

# bottom first; `_version` is the version, importable from anywhere; `proctor` is the top level (its __init__, api
# and __main__)
LAYERS: tuple[tuple[str, ...], ...] = (
    ("util", "_version"),
    ("core",),
    ("data", "log", "models", "stats"),
    ("scoring",),
    ("benchmarks", "metrics"),
    ("run",),
    ("analysis",),
    ("interop", "report"),
    ("testing",),
    ("cli",),
    ("proctor",),
)
# (package, package beside it in its layer that it may import): none
BESIDE: frozenset[tuple[str, str]] = frozenset()
# type-only imports against the order, with why they are still there (a number of them may only fall)
TYPE_ONLY: dict[tuple[str, str], str] = {
    ("data", "scoring"): "data/tasks.py: a Task carries its Scorer, its answer rules and its code tests (issue 47 "
                         "item 1: Task without its scorer)",
}
RANK = {package: rank for rank, layer in enumerate(LAYERS) for package in layer}


class Import(NamedTuple):
    where: str  # "log/store.py:39"
    source: str  # its package ("log")
    target: str  # the package it imports ("metrics")
    type_only: bool


def package_of(module: str) -> str:
    """`proctor.log.runlog` → "log"; `proctor._version` → "_version"; the top level (`proctor`, `proctor.api`,
    `proctor.__main__`) → "proctor"."""
    parts = module.split(".")
    if len(parts) > 1 and (parts[1] == "_version" or (SRC / parts[1]).is_dir()):
        return parts[1]
    return "proctor"


def package_imports() -> Iterator[Import]:
    """Every import of one proctor package by another, module level, in functions and type-only alike."""
    for module, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node, _, type_only in all_imports(tree):
            for target in import_targets(module, path.name == "__init__.py", node):
                source, imported = package_of(module), package_of(target)
                if imported != source:
                    where = f"{path.relative_to(SRC).as_posix()}:{node.lineno}"
                    yield Import(where, source, imported, type_only)


def against_the_order(imports: Iterable[Import]) -> list[str]:
    """The imports of a package above the importer's layer, or beside it undeclared: "where: a → b"."""
    return [f"{i.where}: {i.source} → {i.target}" for i in imports
            if RANK[i.target] > RANK[i.source]
            or (RANK[i.target] == RANK[i.source] and (i.source, i.target) not in BESIDE)]


def test_every_package_has_one_layer() -> None:
    named = [package for layer in LAYERS for package in layer]
    assert len(named) == len(set(named))
    present = {package_of(module) for module in MODULES}
    assert sorted(present - set(named)) == [] and sorted(set(named) - present) == []


def test_no_package_imports_one_above_it_or_beside_it() -> None:
    assert against_the_order(i for i in package_imports() if not i.type_only) == []


def test_type_only_imports_keep_the_order_but_the_declared_ones() -> None:
    found = against_the_order(i for i in package_imports() if i.type_only)
    undeclared = [line for line in found if tuple(line.split(": ", 1)[1].split(" → ")) not in TYPE_ONLY]
    assert undeclared == []
    # each declared exception is still there: when it goes, its entry goes with it
    assert sorted({tuple(line.split(": ", 1)[1].split(" → ")) for line in found}) == sorted(TYPE_ONLY)


def test_the_check_sees_an_import_against_the_order() -> None:
    up = Import("log/store.py:39", "log", "metrics", False)
    beside = Import("data/tasks.py:11", "data", "models", False)
    down = Import("metrics/results.py:17", "metrics", "log", False)
    assert against_the_order([up, beside, down]) == ["log/store.py:39: log → metrics", "data/tasks.py:11: data → models"]
