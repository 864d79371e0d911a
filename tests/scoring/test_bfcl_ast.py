"""proctor.scoring.bfcl_ast: BFCL's prompting decoder and AST checker, on synthetic items in BFCL's schema (and
against bfcl-eval's own verdicts where bfcl-eval is installed: `make setup-dev`)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from proctor.data.records import Item, Modality
from proctor.log.runlog import Outcome
from proctor.scoring import bfcl_ast
from proctor.scoring.bfcl_ast import JAVA, JAVASCRIPT, PYTHON, judge, read_reply, read_tool_calls

HAS_TREE_SITTER = all(importlib.util.find_spec(m) for m in ("tree_sitter", "tree_sitter_java",
                                                             "tree_sitter_javascript"))
HAS_ORACLE = HAS_TREE_SITTER and all(importlib.util.find_spec(m) for m in ("bfcl_eval", "overrides"))
needs_tree_sitter = pytest.mark.skipif(not HAS_TREE_SITTER, reason="tree-sitter 0.21.3 and its Java/JavaScript "
                                       "grammars are not installed (pip install 'proctor-eval[bfcl]')")
needs_oracle = pytest.mark.skipif(not HAS_ORACLE, reason="bfcl-eval (the oracle) is not installed: make setup-dev "
                                  "installs it --no-deps with tree-sitter and overrides")
BENCH = Path(__file__).parents[2] / "bench" / "bfcl_agreement.py"


def fn(name: str, props: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    return {"name": name, "description": f"{name} does a thing.",
            "parameters": {"type": "dict", "properties": props, "required": required}}


AREA = fn("geo.area", {"base": {"type": "integer", "description": "b"}, "unit": {"type": "string", "description": "u"},
                       "scale": {"type": "float", "description": "s"}}, ["base"])
AREA_TRUTH = [{"geo.area": {"base": [10], "unit": ["square meters", ""], "scale": [1.5, ""]}}]
TAGS = fn("tag", {"names": {"type": "array", "items": {"type": "string"}, "description": "n"},
                  "opts": {"type": "dict", "description": "o"},
                  "rows": {"type": "array", "items": {"type": "dict"}, "description": "r"}}, ["names"])
TAGS_TRUTH = [{"tag": {"names": [["Red", "blue"]], "opts": [{"deep": [True], "mode": ["fast", ""]}, ""],
                       "rows": [[{"k": [1]}, {"k": [2]}], ""]}}]
WEATHER = fn("weather", {"city": {"type": "string", "description": "c"}}, ["city"])


def verdict(category: str, functions: list[dict[str, Any]], truth: Any, reply: str,
            language: str = PYTHON) -> bfcl_ast.Verdict:
    lang = PYTHON if bfcl_ast.is_relevance(category) else language
    return judge(category, functions, truth, read_reply(reply, lang))


@pytest.mark.parametrize(("reply", "valid"), [
    ("[geo.area(base=10)]", True),
    ("geo.area(base=10, unit='Square-Meters ', scale=1.5)", True),  # unbracketed; strings standardized
    ("[geo.area(base=10, scale=1.5)]", True),
    ("[geo.area(base=10, scale=3/2)]", True),  # arithmetic over literals, evaluated
    ("[geo.area(base=abs(-5) * 2)]", True),  # and over a few pure builtins
    ("[geo.area(base=+10)]", False),  # bfcl-eval reads any unary operator as a minus: -10
    ("[geo.area(base=11)]", False),
    ("[geo.area(base='10')]", False),
    ("[geo.area(unit='square meters')]", False),  # required parameter missing
    ("[geo.area(base=10, colour='red')]", False),
    ("[geo_area(base=10)]", False),
    ("[geo.area(base=10), geo.area(base=10)]", False),
    ("[geo.area(10)]", False),  # positional arguments are not kept: `base` is missing
    ("```python\n[geo.area(base=10)]\n```", False),  # the fence's language tag is left in
    ("", False), ("[]", False),
])
def test_simple_checker(reply: str, valid: bool) -> None:
    assert verdict("simple_python", [AREA], AREA_TRUTH, reply).valid is valid


def test_an_int_stands_for_a_float_in_python() -> None:
    assert verdict("simple_python", [AREA], [{"geo.area": {"base": [10], "scale": [2.0]}}],
                   "[geo.area(base=10, scale=2)]").valid


@pytest.mark.parametrize(("reply", "valid", "error_type"), [
    ("[tag(names=['red', 'BLUE'])]", True, ""),
    ("[tag(names=['blue', 'red'])]", False, "value_error:list/tuple"),
    ("[tag(names=['red', 'blue'], opts={'deep': True})]", True, ""),
    ("[tag(names=['red', 'blue'], opts={'deep': True, 'x': 1})]", False, "value_error:dict_key"),
    ("[tag(names=['red', 'blue'], opts={'mode': 'fast'})]", False, "value_error:dict_key"),
    ("[tag(names=['red', 'blue'], rows=[{'k': 1}, {'k': 2}])]", True, ""),
    # the last answer tried ("": no rows) gives the reason
    ("[tag(names=['red', 'blue'], rows=[{'k': 2}, {'k': 1}])]", False, "value_error:list_dict_count"),
    ("[tag(names=['red', 3])]", False, "type_error:nested"),
    ("[tag(names='red')]", False, "type_error:simple"),
])
def test_lists_and_dicts(reply: str, valid: bool, error_type: str) -> None:
    v = verdict("simple_python", [TAGS], TAGS_TRUTH, reply)
    assert (v.valid, v.error_type) == (valid, error_type)
    assert v.outcome is (Outcome.CORRECT if valid else Outcome.WRONG)


def test_parallel_is_unordered_and_counted() -> None:
    truth = [{"weather": {"city": ["Paris"]}}, {"weather": {"city": ["Rome"]}}]
    assert verdict("parallel", [WEATHER], truth, "[weather(city='rome'), weather(city='Paris')]").valid
    one = verdict("parallel", [WEATHER], truth, "[weather(city='Rome')]")
    assert one.error_type == "parallel_function_checker_no_order:wrong_count"
    assert verdict("parallel", [WEATHER], truth, "[weather(city='Rome'), weather(city='Rome')]").error_type == \
        "parallel_function_checker_no_order:cannot_find_match"


def test_multiple_checks_the_expected_function() -> None:
    truth = [{"weather": {"city": ["Oslo"]}}]
    assert verdict("multiple", [AREA, WEATHER], truth, "[weather(city='Oslo')]").valid
    assert verdict("multiple", [AREA, WEATHER], truth, "[geo.area(base=10)]").error_type == \
        "simple_function_checker:wrong_func_name"


@pytest.mark.parametrize("reply", ["I cannot help with that.", "[geo.area(base=10", "[geo.area(base=abs(-10))*1]",
                                   "[geo.area(base=x * 5)]", "[geo.area(base=9**9**9)]", "[1, 2]",
                                   "[geo.area(base=len(open('/etc/passwd').read()) * 1)]",
                                   "[geo.area(base=10)] and more", "[lambda: 1]", "x" * 5 + "(" * 300])
def test_unreadable_replies_are_no_answer_with_a_reason(reply: str) -> None:
    v = verdict("simple_python", [AREA], AREA_TRUTH, reply)
    assert (v.valid, v.outcome, v.error_type) == (False, Outcome.NO_ANSWER, "ast_decoder:decoder_failed")
    assert v.error.startswith("Invalid syntax. Failed to decode AST.")


def test_arithmetic_is_never_run() -> None:
    reading = read_reply("[f(a=__import__('os').getpid() + 1)]", PYTHON)
    assert not reading.readable and reading.runs_code and "does not evaluate" in str(reading.problem)
    assert not verdict("irrelevance", [WEATHER], None, "[weather(city=open('x').read() + 'y')]").valid
    assert verdict("irrelevance", [WEATHER], None, "[weather(city=nowhere('x') + 'y')]").valid  # a NameError there


def test_hundreds_of_calls_are_not_checked_but_still_call() -> None:
    flood = "[" + ", ".join(["geo.area(base=10)"] * 300) + "]"
    v = verdict("simple_python", [AREA], AREA_TRUTH, flood)
    assert (v.outcome, v.error_type) == (Outcome.NO_ANSWER, "proctor:too_many_calls")
    assert verdict("live_relevance", [AREA], None, flood).valid
    assert not verdict("irrelevance", [AREA], None, flood).valid


@pytest.mark.parametrize(("reply", "irrelevant"), [("", True), ("[]", True), ("Sorry, I can't.", True),
                                                    ("[weather(city='Oslo')]", False), ("weather()", False)])
def test_relevance_is_whether_the_reply_calls(reply: str, irrelevant: bool) -> None:
    assert verdict("irrelevance", [WEATHER], None, reply).valid is irrelevant
    assert verdict("live_relevance", [WEATHER], None, reply).valid is not irrelevant


def test_python_decoder_quirks_are_bfcl_evals() -> None:
    calls = read_reply("[m.f(a=true, b=-3, c=g(), d=h(x=1), e=(1, 2), f=x[0], **rest)]", PYTHON).calls
    assert calls == [{"m.f": {"a": "true", "b": -3, "c": "g()", "d": {"h": {"x": 1}}, "e": (1, 2), "f": "x[0]",
                              None: "rest"}}]


def test_tool_calls_feed_the_same_checker() -> None:
    reading = read_tool_calls([("geo.area", '{"base": 10}')])
    assert judge("simple_python", [AREA], AREA_TRUTH, reading).valid
    bad = read_tool_calls([("geo.area", "{base: 10")])
    assert not bad.readable and judge("simple_python", [AREA], AREA_TRUTH, bad).outcome is Outcome.NO_ANSWER


def test_a_checker_that_would_raise_is_a_wrong_answer_with_its_reason() -> None:
    odd = [{"geo.area": {"base": [10], "unit": ["square meters", ""]}}]
    v = verdict("multiple", [WEATHER], odd, "[geo.area(base=10)]")  # the expected function is not offered
    assert (v.outcome, v.error_type) == (Outcome.WRONG, "proctor:checker_raised")


def test_the_grade_records_outcome_reason_and_calls() -> None:
    item = Item(identifier="bfcl-simple.simple_python_0", modality=Modality.SINGLE_VALUE, prompt="q", response="a",
                metadata={"bfcl_category": "simple_python", "function": [AREA], "ground_truth": AREA_TRUTH})
    right, wrong = bfcl_ast.grade(item, "[geo.area(base=10)]"), bfcl_ast.grade(item, "[geo.area(base=2)]")
    assert (right.outcome, right.score, right.extracted) == (Outcome.CORRECT, 1.0, "[{'geo.area': {'base': 10}}]")
    assert wrong.outcome is Outcome.WRONG and wrong.details["rejected"].startswith("value_error:others")


JAVA_FN = fn("Cache.put", {"key": {"type": "String", "description": "k"}, "size": {"type": "long", "description": "s"},
                           "ids": {"type": "Array", "items": {"type": "integer"}, "description": "i"},
                           "owner": {"type": "any", "description": "o"},
                           "conf": {"type": "HashMap", "description": "c"}}, ["key"])
JAVA_TRUTH = [{"Cache.put": {"key": ["user 1"], "size": [5, ""], "ids": [[1, 2], ""], "owner": ["ctx", ""],
                             "conf": ["cfg", ""]}}]


@needs_tree_sitter
@pytest.mark.parametrize(("reply", "valid"), [
    ('[Cache.put(key="user 1", size=5L, ids=new int[]{1, 2}, owner=ctx)]', True),
    ('Cache.put(key="USER-1", conf=cfg)', True),  # conf: a variable's name
    ('[Cache.put(key="user 1", size=5)]', False),  # a long needs its L
    ('[Cache.put(key="user 1", ids=new int[]{2, 1})]', False),
    ('[Cache.put(key="user 1"', False),
    ("[Cache.put(key='user 1')]", True),  # tree-sitter reads it as a char literal, unquoted as a string's
])
def test_java_replies(reply: str, valid: bool) -> None:
    assert verdict("simple_java", [JAVA_FN], JAVA_TRUTH, reply, JAVA).valid is valid


@needs_tree_sitter
def test_java_walk_keeps_bfcl_evals_text() -> None:
    calls = read_reply('[A.b(x=new HashMap<String, Object>() {{ put("k", 1); }}, y = - 5, z=Foo.BAR)]', JAVA).calls
    assert calls == [{"A.b": {"x": "new HashMap<String,Object>()", "y": "-5", "z": "Foo.BAR"}}]


JS_FN = fn("track", {"id": {"type": "String", "description": "i"}, "xy": {"type": "array", "items": {"type": "integer"},
                                                                          "description": "c"},
                     "meta": {"type": "dict", "description": "m"}, "on": {"type": "Boolean", "description": "o"}},
           ["id"])
JS_TRUTH = [{"track": {"id": ["form1"], "xy": [[60, 30], ""], "meta": [{"a": [1]}, ""], "on": [True, ""]}}]


@needs_tree_sitter
@pytest.mark.parametrize(("reply", "valid"), [
    ('[track(id="form1", xy=[60, 30], meta={"a": 1}, on=true)]', True),
    ("track(id='FORM1')", True),
    ('[track(id="form1", on=yes)]', False),
    ('[track(id="form1", xy=[30, 60])]', False),
    ('[track(id="form1"), track(id="form1")]', False),  # a sequence is not a call statement
])
def test_javascript_replies(reply: str, valid: bool) -> None:
    assert verdict("simple_javascript", [JS_FN], JS_TRUTH, reply, JAVASCRIPT).valid is valid


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bfcl_agreement", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@needs_oracle
def test_verdicts_equal_bfcl_evals_on_synthetic_items() -> None:
    bench = _bench()
    o = bench.oracle()
    cases = [("simple_python", [AREA], AREA_TRUTH), ("simple_python", [TAGS], TAGS_TRUTH),
             ("parallel", [WEATHER], [{"weather": {"city": ["Paris"]}}, {"weather": {"city": ["Rome"]}}]),
             ("multiple", [AREA, WEATHER], [{"weather": {"city": ["Oslo"]}}]),
             ("simple_java", [JAVA_FN], JAVA_TRUTH), ("simple_javascript", [JS_FN], JS_TRUTH),
             ("irrelevance", [WEATHER], None), ("live_relevance", [AREA], None)]
    compared = 0
    for category, functions, truth in cases:
        entry = {"id": f"{category}_0", "question": [[{"role": "user", "content": "q"}]], "function": functions}
        item = Item(identifier=f"x.{category}_0", modality=Modality.SINGLE_VALUE, prompt="q", response="a",
                    metadata={"bfcl_category": category, "function": functions, "ground_truth": truth})
        for kind, reply in bench.replies(entry, truth, category).items():
            theirs, ours = bench.bfcl_valid(o, category, entry, truth, reply), bfcl_ast.grade(item, reply)
            if kind in bench.DIVERGENT and theirs is not ours.correct:  # proctor does not run a reply's code
                assert "bfcl-eval would run it" in str(read_reply(reply, PYTHON).problem)
                continue
            assert theirs is ours.correct, (category, kind, reply, theirs)
            compared += 1
    assert compared > 100


def _fc_trajectory(calls: list[tuple[str, str]], text: str = "") -> Any:
    from proctor.core.tools import ToolCall
    from proctor.core.trajectory import Trajectory, Turn

    turn = Turn(index=0, text=text, tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(calls)])
    return Trajectory(turns=[turn], stop="called" if calls else "answered")


def _fc_item(category: str, functions: list[dict[str, Any]], truth: Any) -> Item:
    return Item(identifier=f"x.{category}_0", modality=Modality.SINGLE_VALUE, prompt="q", response="a",
                metadata={"bfcl_category": category, "function": functions, "ground_truth": truth})


@pytest.mark.parametrize(("calls", "text", "valid"), [
    ([("geo_area", '{"base": 10}')], "", True),  # the name as sent: `.` as `_`
    ([("geo_area", '{"base": 10, "unit": "Square-Meters "}')], "Calling.", True),  # text beside calls is ignored
    ([("geo.area", '{"base": 10}')], "", False),  # the name bfcl-eval's docs hold, not the one sent
    ([("geo_area", '{"base": 11}')], "", False),
    ([("geo_area", '{"base": "10"}')], "", False),
    ([("geo_area", '{"base": 10')], "", False),  # arguments that are not JSON: nothing decodes
    ([("geo_area", "[10]")], "", False), ([("geo_area", "")], "", False),
    ([("geo_area", '{"base": 10}')] * 2, "", False),
    ([], "[geo.area(base=10)]", False),  # a prompting-style reply is text: no call
    ([], "", False),
])
def test_function_calling_replies_are_decoded_as_bfcl_evals_fc_handler_does(calls: list[tuple[str, str]],
                                                                             text: str, valid: bool) -> None:
    scored = bfcl_ast.grade_calls(_fc_item("simple_python", [AREA], AREA_TRUTH), _fc_trajectory(calls, text))
    assert scored.correct is valid, scored.details.rejected


def test_function_calling_irrelevance_is_no_call() -> None:
    item = _fc_item("irrelevance", [WEATHER], None)
    assert bfcl_ast.grade_calls(item, _fc_trajectory([], "No function fits.")).correct
    assert bfcl_ast.grade_calls(item, _fc_trajectory([], "")).correct
    assert bfcl_ast.grade_calls(item, _fc_trajectory([("weather", "{bad")])).correct  # does not decode: no call
    assert not bfcl_ast.grade_calls(item, _fc_trajectory([("weather", '{"city": "x"}')])).correct
    relevance = _fc_item("live_relevance", [WEATHER], None)
    assert bfcl_ast.grade_calls(relevance, _fc_trajectory([("anything", "{}")])).correct


@needs_oracle
def test_function_calling_verdicts_equal_bfcl_evals_on_synthetic_items() -> None:
    bench = _bench()
    o = bench.oracle()
    cases = [("simple_python", [AREA], AREA_TRUTH), ("simple_python", [TAGS], TAGS_TRUTH),
             ("parallel", [WEATHER], [{"weather": {"city": ["Paris"]}}, {"weather": {"city": ["Rome"]}}]),
             ("multiple", [AREA, WEATHER], [{"weather": {"city": ["Oslo"]}}]),
             ("parallel_multiple", [AREA, WEATHER], [{"weather": {"city": ["Oslo"]}}, AREA_TRUTH[0]]),
             ("simple_java", [JAVA_FN], JAVA_TRUTH), ("simple_javascript", [JS_FN], JS_TRUTH),
             ("live_simple", [AREA], AREA_TRUTH), ("irrelevance", [WEATHER], None), ("live_irrelevance", [], None),
             ("live_relevance", [AREA], None)]
    compared = 0
    for category, functions, truth in cases:
        entry = {"id": f"{category}_0", "question": [[{"role": "user", "content": "q"}]], "function": functions}
        item = _fc_item(category, functions, truth)
        for kind, reply in bench.fc_replies(entry, truth, category).items():
            theirs = bench.bfcl_valid(o, category, entry, truth, bench.fc_result(reply), fc=True)
            ours = bfcl_ast.grade_calls(item, bench.fc_trajectory(reply))
            assert theirs is ours.correct, (category, kind, reply, theirs)
            compared += 1
    assert compared > 150
