"""proctor's BFCL verdicts against bfcl-eval's own, on every item of every AST category proctor supports, with
replayed replies: each item's possible answer rendered as calls (Python, Java or JavaScript source) and
perturbations of it, plus empty, prose, malformed and 300-call replies; also proctor's prompt against
bfcl-eval's own messages for the item. Data: the files bfcl-eval's wheel ships (its installed `data/`).

    make setup-dev   # installs bfcl-eval 2026.3.23 --no-deps, tree-sitter and its grammars, overrides
    PYTHONPATH=src python bench/bfcl_agreement.py [--limit N] [--show 5]

bfcl-eval's verdict is its own code: `eval_checker/eval_runner.py` `_evaluate_single_ast_entry` and
`_evaluate_single_relevance_entry`, with a prompting handler whose `decode_ast` is
`default_decode_ast_prompting`. Its model registry (`constants/model_config.py`) imports every vendor's SDK, so
it is replaced by a registry answering every name with a prompting model's settings (`underscore_to_dot`
False), the only thing the checker reads from it. Prints per category agree/total and every disagreement;
exit 1 on any.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import types
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from proctor.benchmarks import bfcl
from proctor.benchmarks.registry import load_task
from proctor.scoring import bfcl_ast

MODEL = "gpt-4o-2024-11-20"  # a prompting model of bfcl-eval's registry
CALLS_FLOOD = 300
# replies where proctor differs on purpose: bfcl-eval `eval`s arithmetic over any call (here it imports a module),
# proctor runs none of a reply's code but a few pure builtins (`abs(5) * 1`, which agrees)
DIVERGENT = ("arithmetic running code",)
PROSE = "I'm sorry, none of the functions can answer that; please tell me more about what you need."


class _Prompting:
    """What bfcl-eval's checker reads of a model's registry entry: names are not rewritten."""

    underscore_to_dot = False
    is_fc_model = False


class _Registry(dict[str, _Prompting]):
    def __missing__(self, key: str) -> _Prompting:
        return _Prompting()


def oracle() -> types.SimpleNamespace:
    """bfcl-eval's entry evaluators, decoder and prompt builder (its model registry stood in for)."""
    registry = types.ModuleType("bfcl_eval.constants.model_config")
    registry.MODEL_CONFIG_MAPPING = _Registry()  # type: ignore[attr-defined]
    sys.modules.setdefault("bfcl_eval.constants.model_config", registry)
    from bfcl_eval.constants.enums import Language, ReturnFormat
    from bfcl_eval.eval_checker import eval_runner
    from bfcl_eval.model_handler import utils
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    class Handler:
        def decode_ast(self, result: str, language: Any, has_tool_call_tag: bool) -> Any:
            return utils.default_decode_ast_prompting(result, language, has_tool_call_tag)

    return types.SimpleNamespace(runner=eval_runner, utils=utils, Language=Language, ReturnFormat=ReturnFormat,
                                 hint=add_language_specific_hint_to_function_doc, handler=Handler())


def bfcl_valid(o: types.SimpleNamespace, category: str, entry: dict[str, Any], truth: Any, reply: str) -> bool | str:
    """bfcl-eval's verdict on one reply (or the name of the exception it raises)."""
    try:
        if bfcl_ast.is_relevance(category):
            r = o.runner._evaluate_single_relevance_entry(o.handler, entry["id"], reply, copy.deepcopy(entry), MODEL,
                                                          category)
        else:
            lang = bfcl_ast.language_of(category)
            language = {"python": o.Language.PYTHON, "java": o.Language.JAVA, "javascript": o.Language.JAVASCRIPT}[lang]
            fmt = {"python": o.ReturnFormat.PYTHON, "java": o.ReturnFormat.JAVA,
                   "javascript": o.ReturnFormat.JAVASCRIPT}[lang]
            r = o.runner._evaluate_single_ast_entry(o.handler, entry["id"], reply, copy.deepcopy(truth),
                                                    copy.deepcopy(entry), MODEL, category, language, fmt)
    except Exception as e:  # noqa: BLE001 - the oracle's own crash is a result to report
        return f"raised {type(e).__name__}"
    return bool(r["valid"])


def bfcl_messages(o: types.SimpleNamespace, entry: dict[str, Any]) -> list[dict[str, str]]:
    """The first-turn messages bfcl-eval sends a prompting model (OpenAI completions handler)."""
    hinted = o.hint([copy.deepcopy(entry)])[0]
    return list(o.utils.system_prompt_pre_processing_chat_model(hinted["question"][0], hinted["function"],
                                                                entry["id"]))


# ------------------------------------------------------------------------------- rendering replies


def first(values: list[Any]) -> tuple[bool, Any]:
    """The first allowed value that is not the optional marker "" (False: only optional)."""
    for v in values:
        if v != "":
            return True, v
    return False, None


def render_python(value: Any, schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if kind == "dict" and isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {render_python(v, {})}" for k, (ok, v) in
                               ((k, first(vs)) for k, vs in value.items()) if ok) + "}"
    if kind in ("array", "tuple") and isinstance(value, list) and schema.get("items", {}).get("type") == "dict":
        return "[" + ", ".join(render_python(v, {"type": "dict"}) for v in value) + "]"
    if kind == "tuple" and isinstance(value, list):
        return repr(tuple(value))
    return repr(value)


def render_java(value: Any, schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(value, Identifier):
        return str(value)
    inner = schema.get("items", {}).get("type")
    if isinstance(value, bool):
        return "true" if value else "false"
    if kind == "long" and isinstance(value, int):
        return f"{value}L"
    if kind == "float" and isinstance(value, (int, float)):
        return f"{float(value)}f"
    if kind == "double" and isinstance(value, (int, float)):
        return str(float(value))
    if kind == "Array" and isinstance(value, list):
        return f"new {inner or 'Object'}[]{{" + ", ".join(render_java(v, {"type": inner}) for v in value) + "}"
    if kind == "ArrayList" and isinstance(value, list):
        return "new ArrayList<>(Arrays.asList(" + ", ".join(render_java(v, {"type": inner}) for v in value) + "))"
    if kind == "HashMap" and isinstance(value, dict):
        puts = " ".join(f'put("{k}", {render_java(first(v)[1], {})});' for k, v in value.items() if first(v)[0])
        return f"new HashMap<String, Object>() {{{{ {puts} }}}}"
    if isinstance(value, str):
        return value if kind not in ("String", "char", None) and value.isidentifier() else f'"{value}"'
    return str(value)


def render_js(value: Any, schema: dict[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(value, Identifier):
        return str(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(render_js(v, {"type": schema.get("items", {}).get("type")}) for v in value) + "]"
    if isinstance(value, dict):
        pairs = ((k, first(v) if isinstance(v, list) else (True, v)) for k, v in value.items())
        return "{" + ", ".join(f'"{k}": {render_js(v, {})}' for k, (ok, v) in pairs if ok) + "}"
    if kind == "Bigint" and isinstance(value, int):
        return f"{value}n"
    if isinstance(value, str):
        return value if kind in ("any",) and value.isidentifier() else f'"{value}"'
    return str(value)


RENDER: dict[str, Callable[[Any, dict[str, Any]], str]] = {
    "python": render_python, "java": render_java, "javascript": render_js}


def render_call(name: str, params: dict[str, Any], doc: dict[str, Any] | None, language: str) -> str:
    props = (doc or {}).get("parameters", {}).get("properties", {})
    args = ", ".join(f"{k}={RENDER[language](v, props.get(k, {}))}" for k, v in params.items())
    return f"{name}({args})"


def chosen(truth_call: dict[str, Any], pick: Callable[[list[Any]], tuple[bool, Any]] = first) -> tuple[str, dict[str, Any]]:
    name, params = next(iter(truth_call.items()))
    return name, {k: v for k, (ok, v) in ((k, pick(vs)) for k, vs in params.items()) if ok}


def second(values: list[Any]) -> tuple[bool, Any]:
    """The last allowed value that is not "" (another right answer where there are several)."""
    kept = [v for v in values if v != ""]
    return (True, kept[-1]) if kept else (False, None)


def wrong(value: Any) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, (int, float)):
        return value + 7
    if isinstance(value, str):
        return value + " elsewhere"
    if isinstance(value, list):
        return [*value, value[0]] if value else ["x"]
    return "unexpected"


def retyped(value: Any) -> Any:
    return 123456 if isinstance(value, str) else str(value)


def replies(entry: dict[str, Any], truth: list[dict[str, Any]] | None, category: str) -> dict[str, str]:
    """Every reply replayed for one item, by name."""
    language = bfcl_ast.language_of(category)
    docs = {f["name"]: f for f in entry["function"]}

    def calls(parts: list[tuple[str, dict[str, Any]]]) -> str:
        return "[" + ", ".join(render_call(n, p, docs.get(n), language) for n, p in parts) + "]"

    out = {"empty": "", "prose": PROSE, "empty list": "[]"}
    if truth is None:  # relevance categories: a call to the first function with made-up values
        doc = entry["function"][0] if entry["function"] else {"name": "f", "parameters": {"properties": {}}}
        made = {k: 1 for k in doc["parameters"].get("required", [])}
        out |= {"a call": calls([(doc["name"], made)]), "malformed": calls([(doc["name"], made)])[:-2],
                "json reply": json.dumps([{"name": doc["name"], "arguments": made}]),
                "statements": render_call(doc["name"], made, doc, language) + ";",
                "arithmetic with a call": f"[{doc['name']}(zz=abs(-2) * 3)]",
                "arithmetic running code": f"[{doc['name']}(zz=__import__('math').fabs(-2) * 3)]",
                f"{CALLS_FLOOD} calls": calls([(doc["name"], made)] * CALLS_FLOOD)}
        return out
    parts = [chosen(c) for c in truth]
    good = calls(parts)
    name, params = parts[0]
    required = docs.get(name, {}).get("parameters", {}).get("required", [])
    key = next(iter(params), None)
    out |= {"correct": good, "other right values": calls([chosen(c, second) for c in truth]),
            "fenced": f"```python\n{good}\n```", "malformed": good[:-2], "wrong function name":
            calls([(name + "_v2", params), *parts[1:]]), "extra param": calls([(name, {**params, "zz_extra": 1}),
                                                                                *parts[1:]]),
            f"{CALLS_FLOOD} calls": calls(parts * CALLS_FLOOD), "unbracketed": good[1:-1]}
    if required:
        out["missing required"] = calls([(name, {k: v for k, v in params.items() if k != required[0]}),
                                         *parts[1:]])
    if key is not None:
        out["wrong value"] = calls([(name, {**params, key: wrong(params[key])}), *parts[1:]])
        out["wrong type"] = calls([(name, {**params, key: retyped(params[key])}), *parts[1:]])
    out |= quirks(parts, docs, language, calls)
    if len(parts) > 1:
        out["reversed order"] = calls(parts[::-1])
        out["one call missing"] = calls(parts[:-1])
    return out


def restyled(value: Any) -> Any:
    """A string upper-cased with a space and a dash (bfcl-eval compares strings standardized)."""
    return f"{value.upper()} -" if isinstance(value, str) else value


def quirks(parts: list[tuple[str, dict[str, Any]]], docs: dict[str, Any], language: str,
           calls: Callable[[list[tuple[str, dict[str, Any]]]], str]) -> dict[str, str]:
    """Replies that reach the decoder's and checker's corners: standardized strings, positional arguments,
    arithmetic, a unary plus, a variable's name, non-ASCII text, JSON instead of calls, statements."""
    name, params = parts[0]
    rest = parts[1:]
    out: dict[str, str] = {
        "restyled strings": calls([(name, {k: restyled(v) for k, v in params.items()}), *rest]),
        "non-ascii": calls([(name, {k: f"{v} café" if isinstance(v, str) else v for k, v in params.items()}),
                            *rest]),
        "json reply": json.dumps([{"name": n, "arguments": p} for n, p in parts]),
        "python rendering": "[" + ", ".join(render_call(n, p, docs.get(n), "python") for n, p in parts) + "]",
        "statements": "; ".join(render_call(n, p, docs.get(n), language) for n, p in parts) + ";",
    }
    numeric = next((k for k, v in params.items() if isinstance(v, (int, float)) and not isinstance(v, bool)), None)
    if numeric is not None:
        v = params[numeric]
        args = {k: RENDER[language](x, docs.get(name, {}).get("parameters", {}).get("properties", {}).get(k, {}))
                for k, x in params.items()}
        for label, text in (("arithmetic", f"({v} - 1) + 1"), ("unary plus", f"+{v}"),
                            ("arithmetic with a call", f"abs({v}) * 1"),
                            ("arithmetic running code", f"__import__('math').fabs({v}) * 1"),
                            ("int for float", str(int(v)) if float(v).is_integer() else repr(v))):
            out[label] = "[" + f"{name}(" + ", ".join(f"{k}={text if k == numeric else a}" for k, a in args.items()) \
                + ")" + "".join(", " + render_call(n, p, docs.get(n), language) for n, p in rest) + "]"
    if params:
        key = next(iter(params))
        out["variable name"] = calls([(name, {**params, key: Identifier("my_variable")}), *rest])
        body = render_call(name, params, docs.get(name), language)
        positional = body.replace(f"{key}=", "", 1)
        out["positional argument"] = "[" + positional + "]"
    return out


class Identifier(str):
    """A bare name in any language's rendering."""

    def __repr__(self) -> str:
        return str(self)


# ----------------------------------------------------------------------------------------- compare


def read_entries(category: str, data: Path) -> tuple[list[dict[str, Any]], list[Any]]:
    path = data / f"BFCL_v4_{category}.json"
    entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if bfcl_ast.is_relevance(category):
        return entries, [None] * len(entries)
    answers = [json.loads(line)["ground_truth"] for line in (data / "possible_answer" / path.name).read_text()
               .splitlines() if line.strip()]
    return entries, answers


def compare(name: str, category: str, data: Path, o: types.SimpleNamespace, limit: int | None,
            disagreements: list[str]) -> tuple[Counter[str], int, int]:
    """One category: verdicts (agree per reply kind) and prompts equal to bfcl-eval's."""
    entries, answers = read_entries(category, data)
    task = load_task(name)
    counts: Counter[str] = Counter()
    same_prompts = 0
    for entry, truth, item in list(zip(entries, answers, task.items, strict=True))[:limit]:
        ours = [{"role": m.role, "content": m.content} for m in task.prompts.messages(item, bfcl.PROMPTING)]
        same_prompts += ours == bfcl_messages(o, entry)
        for kind, reply in replies(entry, truth, category).items():
            theirs = bfcl_valid(o, category, entry, truth, reply)
            mine = bfcl_ast.grade(item, reply)
            agree = theirs is mine.correct
            counts["agree" if agree else "known" if kind in DIVERGENT else "disagree"] += 1
            counts[f"bfcl {'valid' if theirs is True else 'invalid' if theirs is False else theirs}"] += 1
            if not agree and kind not in DIVERGENT:
                disagreements.append(f"{entry['id']} [{kind}] bfcl-eval: {theirs}, proctor: {mine.outcome} "
                                     f"({mine.details.get('rejected')}) reply: {reply[:160]!r}")
    return counts, same_prompts, min(len(entries), limit or len(entries))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="items per category (default: every item)")
    parser.add_argument("--show", type=int, default=10, help="disagreements printed per category")
    args = parser.parse_args()
    o = oracle()
    data = bfcl.installed_data()
    if data is None:
        print(f"bfcl-eval is not installed: {bfcl.INSTALL_DATA}", file=sys.stderr)
        return 2
    total: Counter[str] = Counter()
    print(f"{'category':24} {'items':>6} {'prompts equal':>14} {'replies':>8} {'agree':>8} {'known':>6}  "
          "bfcl-eval verdicts  (known: proctor refuses to run the reply's code, see DIVERGENT)")
    for name, (category, _) in bfcl.CATEGORIES.items():
        found: list[str] = []
        counts, prompts, items = compare(name, category, data, o, args.limit, found)
        total += counts
        replies_n = counts["agree"] + counts["disagree"] + counts["known"]
        verdicts = ", ".join(f"{k[5:]} {v}" for k, v in sorted(counts.items()) if k.startswith("bfcl "))
        print(f"{category:24} {items:6} {prompts:14} {replies_n:8} {counts['agree']:8} {counts['known']:6}  {verdicts}")
        for line in found[:args.show]:
            print("   ", line)
    print(f"{'all':24} {'':6} {'':14} {total['agree'] + total['disagree'] + total['known']:8} {total['agree']:8} "
          f"{total['known']:6}")
    return 1 if total["disagree"] else 0


if __name__ == "__main__":
    sys.exit(main())
