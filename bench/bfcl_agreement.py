"""proctor's BFCL verdicts against bfcl-eval's own, on every item of every AST category proctor supports, with
replayed replies: each item's possible answer rendered as calls (Python, Java or JavaScript source) and
perturbations of it, plus empty, prose, malformed and 300-call replies; also proctor's prompt against
bfcl-eval's own messages for the item. Data: the files bfcl-eval's wheel ships (its installed `data/`).

    make setup-dev   # installs bfcl-eval 2026.3.23 --no-deps, tree-sitter and its grammars, overrides
    PYTHONPATH=src python bench/bfcl_agreement.py [--limit N] [--show 5] [--mode prompting|function-calling|both]

bfcl-eval's verdict is its own code: `eval_checker/eval_runner.py` `_evaluate_single_ast_entry` and
`_evaluate_single_relevance_entry`, with a prompting handler whose `decode_ast` is
`default_decode_ast_prompting`. Its model registry (`constants/model_config.py`) imports every vendor's SDK, so
it is replaced by a registry answering every name with a prompting model's settings (`underscore_to_dot`
False), the only thing the checker reads from it. Prints per category agree/total and every disagreement;
exit 1 on any.

`--mode function-calling` (also in `both`, the default) replays tool-call replies (name, arguments as JSON text,
or a text reply without calls) through bfcl-eval's FC path: `OpenAICompletionsHandler.decode_ast` with
`is_fc_model` (its `openai` import stood in for: nothing is sent) and a registry entry of an OpenAI FC model
(`underscore_to_dot` True), against proctor's `bfcl_ast.grade_calls` on the same reply as a trajectory; and
proctor's tools against bfcl-eval's `convert_to_tool(..., GORILLA_TO_OPENAPI, OPENAI_COMPLETIONS)` of the hinted
docs.
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
from proctor.core.tools import ToolCall
from proctor.core.trajectory import Trajectory, Turn
from proctor.models.openai_tools import tools_body, wire_names
from proctor.scoring import bfcl_ast

MODEL = "gpt-4o-2024-11-20"  # a prompting model of bfcl-eval's registry
FC_MODEL = "gpt-4o-2024-11-20-FC"  # and its function-calling entry
CALLS_FLOOD = 300
# replies where proctor differs on purpose: bfcl-eval `eval`s arithmetic over any call (here it imports a module),
# proctor runs none of a reply's code but a few pure builtins (`abs(5) * 1`, which agrees)
DIVERGENT = ("arithmetic running code",)
PROSE = "I'm sorry, none of the functions can answer that; please tell me more about what you need."


class _Prompting:
    """What bfcl-eval's checker reads of a model's registry entry: names are not rewritten."""

    underscore_to_dot = False
    is_fc_model = False


class _FunctionCalling(_Prompting):
    """An OpenAI FC model's entry: `.` in a name was sent as `_`."""

    underscore_to_dot = True
    is_fc_model = True


class _Registry(dict[str, _Prompting]):
    def __missing__(self, key: str) -> _Prompting:
        return _FunctionCalling() if key.endswith("-FC") else _Prompting()


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
                                 hint=add_language_specific_hint_to_function_doc, handler=Handler(),
                                 fc_handler=_fc_handler())


def _fc_handler() -> Any:
    """bfcl-eval's OpenAI handler in FC mode, unconstructed (no client: its `openai` import stood in for)."""
    if "openai" not in sys.modules:
        stub = types.ModuleType("openai")
        stub.OpenAI = object  # type: ignore[attr-defined]
        stub.RateLimitError = type("RateLimitError", (Exception,), {})  # type: ignore[attr-defined]
        sys.modules["openai"] = stub
    from bfcl_eval.model_handler.api_inference.openai_completion import OpenAICompletionsHandler

    handler = object.__new__(OpenAICompletionsHandler)
    handler.is_fc_model = True
    return handler


def bfcl_valid(o: types.SimpleNamespace, category: str, entry: dict[str, Any], truth: Any, reply: Any,
               fc: bool = False) -> bool | str:
    """bfcl-eval's verdict on one reply (or the name of the exception it raises); `fc`: a function-calling
    model's reply (`[{name: arguments}]`, or its text), judged as an OpenAI FC model's."""
    handler, model = (o.fc_handler, FC_MODEL) if fc else (o.handler, MODEL)
    try:
        if bfcl_ast.is_relevance(category):
            r = o.runner._evaluate_single_relevance_entry(handler, entry["id"], reply, copy.deepcopy(entry), model,
                                                          category)
        else:
            lang = bfcl_ast.language_of(category)
            language = {"python": o.Language.PYTHON, "java": o.Language.JAVA, "javascript": o.Language.JAVASCRIPT}[lang]
            fmt = {"python": o.ReturnFormat.PYTHON, "java": o.ReturnFormat.JAVA,
                   "javascript": o.ReturnFormat.JAVASCRIPT}[lang]
            r = o.runner._evaluate_single_ast_entry(handler, entry["id"], reply, copy.deepcopy(truth),
                                                    copy.deepcopy(entry), model, category, language, fmt)
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


# ------------------------------------------------------------------------------- function-calling replies

FcReply = tuple[tuple[tuple[str, str], ...], str]  # a reply's calls (name, arguments as JSON text), and its text


def fc(parts: list[tuple[str, Any]], text: str = "") -> FcReply:
    """Calls under their sent names (`.` as `_`), arguments written as JSON unless given as text."""
    return tuple((n.replace(".", "_"), a if isinstance(a, str) else json.dumps(a, ensure_ascii=False))
                 for n, a in parts), text


def fc_replies(entry: dict[str, Any], truth: list[dict[str, Any]] | None, category: str) -> dict[str, FcReply]:
    """Every tool-calling reply replayed for one item, by name."""
    language = bfcl_ast.language_of(category)
    docs = {f["name"]: f for f in entry["function"]}
    out: dict[str, FcReply] = {"prose": ((), PROSE), "empty": ((), "")}
    if truth is None:
        doc = entry["function"][0] if entry["function"] else {"name": "f", "parameters": {"properties": {}}}
        made = {k: 1 for k in doc["parameters"].get("required", [])}
        return out | {"a call": fc([(doc["name"], made)]), "no arguments": fc([(doc["name"], {})]),
                      "arguments not JSON": fc([(doc["name"], '{"a": ')]), "unknown name": fc([("zz_nope", made)]),
                      "call and text": fc([(doc["name"], made)], PROSE),
                      f"{CALLS_FLOOD} calls": fc([(doc["name"], made)] * CALLS_FLOOD)}
    parts = [chosen(c) for c in truth]
    name, params = parts[0]
    rest = parts[1:]
    required = docs.get(name, {}).get("parameters", {}).get("required", [])
    key = next(iter(params), None)
    props = docs.get(name, {}).get("parameters", {}).get("properties", {})
    out |= {"correct": fc(parts), "other right values": fc([chosen(c, second) for c in truth]),
            "correct with text": fc(parts, "Calling it now."),
            "dotted name": (((name, json.dumps(params)),) + fc(rest)[0], ""),
            "wrong function name": fc([(name + "_v2", params), *rest]),
            "extra param": fc([(name, {**params, "zz_extra": 1}), *rest]),
            "arguments not JSON": fc([(name, json.dumps(params)[:-1]), *rest]),
            "arguments a list": fc([(name, "[1, 2]"), *rest]), "arguments a number": fc([(name, "3"), *rest]),
            "arguments empty": fc([(name, ""), *rest]), "arguments {}": fc([(name, {}), *rest]),
            "restyled strings": fc([(name, {k: restyled(v) for k, v in params.items()}), *rest]),
            "non-ascii": fc([(name, {k: f"{v} café" if isinstance(v, str) else v for k, v in params.items()}),
                             *rest]),
            "rendered as source": fc([(n, {k: RENDER[language](v, docs.get(n, {}).get("parameters", {})
                                                               .get("properties", {}).get(k, {}))
                                           for k, v in p.items()}) for n, p in parts]),
            "values as text": fc([(n, {k: str(v) for k, v in p.items()}) for n, p in parts]),
            f"{CALLS_FLOOD} calls": fc(parts * CALLS_FLOOD)}
    if required:
        out["missing required"] = fc([(name, {k: v for k, v in params.items() if k != required[0]}), *rest])
    if key is not None:
        out["wrong value"] = fc([(name, {**params, key: wrong(params[key])}), *rest])
        out["wrong type"] = fc([(name, {**params, key: retyped(params[key])}), *rest])
        out["duplicate key"] = fc([(name, json.dumps(params)[:-1] + f", {json.dumps(key)}: "
                                   f"{json.dumps(wrong(params[key]))}}}"), *rest])
    numeric = next((k for k, v in params.items() if isinstance(v, int | float) and not isinstance(v, bool)), None)
    if numeric is not None:
        v = params[numeric]
        out["int for float"] = fc([(name, {**params, numeric: int(v) if float(v).is_integer() else v}), *rest])
        out["float for int"] = fc([(name, {**params, numeric: float(v)}), *rest])
        out["NaN"] = fc([(name, json.dumps({**params, numeric: 0}).replace(": 0", ": NaN", 1)), *rest])
    if props and key is not None and props.get(key, {}).get("type") in ("array", "tuple", "dict"):
        out["nested as text"] = fc([(name, {**params, key: json.dumps(params[key])}), *rest])
    if len(parts) > 1:
        out["reversed order"] = fc(parts[::-1])
        out["one call missing"] = fc(parts[:-1])
    return out


def fc_trajectory(reply: FcReply) -> Trajectory:
    """A reply as the agent loop records it: one turn, its calls (under the names sent) or its text."""
    calls, text = reply
    turn = Turn(index=0, text=text, tool_calls=[ToolCall(f"call_{i}", n, a) for i, (n, a) in enumerate(calls)])
    return Trajectory(turns=[turn], stop="called" if calls else "answered")


def fc_result(reply: FcReply) -> Any:
    """The reply as bfcl-eval's FC handler hands it to the checker: `[{name: arguments}]`, or the text."""
    calls, text = reply
    return [{n: a} for n, a in calls] if calls else text


def bfcl_tools(o: types.SimpleNamespace, entry: dict[str, Any]) -> list[dict[str, Any]]:
    """bfcl-eval's OpenAI tools for the item: `convert_to_tool` of its hinted docs."""
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI

    hinted = o.hint([copy.deepcopy(entry)])[0]
    return list(o.utils.convert_to_tool(hinted["function"], GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS))


def same_tools(o: types.SimpleNamespace, entry: dict[str, Any], item: Any, category: str) -> tuple[bool, bool]:
    """(proctor's tools as sent equal bfcl-eval's, bfcl-eval's carry keys proctor does not send)."""
    tools = bfcl.openai_tools(item.metadata["function"], category)
    ours = tools_body(tools, None, wire_names(tools)).get("tools", [])  # an item without functions: none sent
    theirs = bfcl_tools(o, entry)
    kept = [{"type": t["type"], "function": {k: t["function"][k] for k in ("name", "description", "parameters")}}
            for t in theirs]
    return ours == kept, any(set(t["function"]) - {"name", "description", "parameters"} for t in theirs)


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


def compare_fc(name: str, category: str, data: Path, o: types.SimpleNamespace, limit: int | None,
               disagreements: list[str]) -> tuple[Counter[str], int, int]:
    """One category in function-calling mode: verdicts on tool-call replies, and tools equal to bfcl-eval's."""
    entries, answers = read_entries(category, data)
    task = load_task(name)
    counts: Counter[str] = Counter()
    same = 0
    for entry, truth, item in list(zip(entries, answers, task.items, strict=True))[:limit]:
        equal, extra = same_tools(o, entry, item, category)
        same += equal
        counts["docs with keys not sent"] += extra
        ours_first = [{"role": m.role, "content": m.content} for m in task.prompts.messages(item, bfcl.FUNCTION_CALLING)]
        counts["messages differ"] += ours_first != entry["question"][0]
        for kind, reply in fc_replies(entry, truth, category).items():
            theirs = bfcl_valid(o, category, entry, truth, fc_result(reply), fc=True)
            mine = bfcl_ast.grade_calls(item, fc_trajectory(reply))
            agree = theirs is mine.correct
            counts["agree" if agree else "disagree"] += 1
            counts[f"bfcl {'valid' if theirs is True else 'invalid' if theirs is False else theirs}"] += 1
            if not agree:
                disagreements.append(f"{entry['id']} [{kind}] bfcl-eval: {theirs}, proctor: {mine.outcome} "
                                     f"({mine.details.rejected}) reply: {str(reply)[:160]!r}")
    return counts, same, min(len(entries), limit or len(entries))


def run_mode(mode: str, data: Path, o: types.SimpleNamespace, limit: int | None, show: int) -> Counter[str]:
    """Every category in one mode, a line each; the totals."""
    fc_mode = mode == bfcl.FUNCTION_CALLING
    same = "tools equal" if fc_mode else "prompts equal"
    print(f"\n{mode}\n{'category':24} {'items':>6} {same:>14} {'replies':>8} {'agree':>8} {'known':>6}  "
          "bfcl-eval verdicts  (known: proctor refuses to run the reply's code, see DIVERGENT)")
    total: Counter[str] = Counter()
    for name, (category, _) in bfcl.CATEGORIES.items():
        found: list[str] = []
        counts, equal, items = (compare_fc if fc_mode else compare)(name, category, data, o, limit, found)
        total += counts
        replies_n = counts["agree"] + counts["disagree"] + counts["known"]
        verdicts = ", ".join(f"{k[5:]} {v}" for k, v in sorted(counts.items()) if k.startswith("bfcl "))
        notes = "".join(f"; {k} {counts[k]}" for k in ("docs with keys not sent", "messages differ") if counts[k])
        print(f"{category:24} {items:6} {equal:14} {replies_n:8} {counts['agree']:8} {counts['known']:6}  "
              f"{verdicts}{notes}")
        for line in found[:show]:
            print("   ", line)
    print(f"{'all':24} {'':6} {'':14} {total['agree'] + total['disagree'] + total['known']:8} {total['agree']:8} "
          f"{total['known']:6}")
    return total


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=None, help="items per category (default: every item)")
    parser.add_argument("--show", type=int, default=10, help="disagreements printed per category")
    parser.add_argument("--mode", choices=(bfcl.PROMPTING, bfcl.FUNCTION_CALLING, "both"), default="both")
    args = parser.parse_args()
    o = oracle()
    data = bfcl.installed_data()
    if data is None:
        print(f"bfcl-eval is not installed: {bfcl.INSTALL_DATA}", file=sys.stderr)
        return 2
    modes = (bfcl.PROMPTING, bfcl.FUNCTION_CALLING) if args.mode == "both" else (args.mode,)
    bad = 0
    for mode in modes:
        total = run_mode(mode, data, o, args.limit, args.show)
        bad += total["disagree"]
    return 1 if bad else 0



if __name__ == "__main__":
    sys.exit(main())
