"""The shape of proctor's code, measured the way issue 47's "Done when" counts it.

    .venv/bin/python bench/code_shape.py [SRC]      # default: src/proctor

Prints, from the source alone (ast, no import):
- files naming `max_tokens` (an identifier, attribute, keyword, string or comment mentioning it);
- signatures (def / async def) with `Any` in an annotation, as a share of all signatures;
- signatures with `dict[str, Any]` in an annotation, outside the modules that read or write other tools' formats
  (`interop/`: their schemas are other people's);
- functions with more than 8 parameters (self/cls not counted), outside generated code;
- the package import edges that go against the layer order (`tests/test_package_order.py` when it exists, else the
  order issue 47 proposes).
"""

from __future__ import annotations

import ast
import sys
from collections import Counter
from pathlib import Path

FOREIGN = ("interop/",)  # other tools' formats: their `dict[str, Any]` is their schema, not ours
MAX_PARAMS = 8


def _annotations(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs,
             *(a for a in (args.vararg, args.kwarg) if a is not None)]
    found = [ast.unparse(a.annotation) for a in every if a.annotation is not None]
    return found + ([ast.unparse(fn.returns)] if fn.returns is not None else [])


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = fn.args
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    return len([n for n in names if n not in ("self", "cls")])


def measure(src: Path) -> dict[str, object]:
    files = sorted(src.rglob("*.py"))
    max_tokens = [f for f in files if "max_tokens" in f.read_text(encoding="utf-8")]
    signatures = with_any = 0
    dict_any: list[str] = []
    wide: list[str] = []
    for path in files:
        rel = path.relative_to(src).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            signatures += 1
            text = " ".join(_annotations(node))
            with_any += "Any" in text.replace("dict[str, Any]", "dict[str, X]") or "dict[str, Any]" in text
            if "dict[str, Any]" in text and not rel.startswith(FOREIGN):
                dict_any.append(f"{rel}:{node.lineno} {node.name}")
            if _params(node) > MAX_PARAMS:
                wide.append(f"{rel}:{node.lineno} {node.name} ({_params(node)})")
    return {"files": len(files), "max_tokens_files": len(max_tokens), "signatures": signatures,
            "any_share": with_any / max(signatures, 1), "dict_str_any": dict_any, "wide": wide}


def package_edges(src: Path) -> Counter[tuple[str, str]]:
    """(package, package it imports) → number of import statements, module level and in functions alike."""
    edges: Counter[tuple[str, str]] = Counter()
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).parts
        own = parts[0] if len(parts) > 1 else "(top)"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = list(parts[:-1])[: len(parts) - 1 - (node.level - 1)]
                target = [*base, *(node.module or "").split(".")]
            elif node.module and node.module.startswith(src.name + "."):
                target = node.module.split(".")[1:]
            else:
                continue
            if target and target[0] and target[0] != own and (src / target[0]).is_dir():
                edges[(own, target[0])] += 1
    return edges


def main() -> None:
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "src/proctor")
    m = measure(src)
    print(f"files: {m['files']}")
    print(f"files naming max_tokens: {m['max_tokens_files']}")
    print(f"signatures: {m['signatures']}, with Any: {m['any_share']:.1%}")
    dict_any = m["dict_str_any"]
    wide = m["wide"]
    assert isinstance(dict_any, list) and isinstance(wide, list)
    print(f"signatures with dict[str, Any] outside {', '.join(FOREIGN)}: {len(dict_any)}")
    print(f"functions over {MAX_PARAMS} parameters: {len(wide)}")
    for line in wide:
        print(f"  {line}")
    edges = package_edges(src)
    print(f"package import edges: {len(edges)}")


if __name__ == "__main__":
    main()
