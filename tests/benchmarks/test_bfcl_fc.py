"""BFCL's function-calling kind (bfcl-eval's FC mode): the item's functions as OpenAI tools (as bfcl-eval's
`convert_to_tool` writes them), the first turn as it is, one turn; `proctor run` end to end against the stand-in
server's scripted tool calls; the run id with the kind and the agent limits; the limits refused elsewhere."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from benchmarks.bfcl_rows import AREA, WEATHER, category_file, fn, write

from proctor.benchmarks import bfcl, load_task
from proctor.cli import main
from proctor.models.openai_tools import tools_body, wire_names

pytest.importorskip("uvicorn")  # the stand-in server

from proctor.testing import serve

HAS_ORACLE = all(importlib.util.find_spec(m) for m in ("bfcl_eval", "overrides"))
needs_oracle = pytest.mark.skipif(not HAS_ORACLE, reason="bfcl-eval (the oracle) is not installed: make setup-dev")
FC = bfcl.FUNCTION_CALLING
NESTED = fn("shop.order", {
    "price": {"type": "float", "description": "Price."},
    "items": {"type": "array", "items": {"type": "dict", "properties": {"qty": {"type": "integer", "description": "Q."},
                                                                          "w": {"type": "float", "description": "W."}}},
              "description": "Items."},
    "grid": {"type": "array", "items": {"type": "array", "items": {"type": "float"}}, "description": "Grid."},
    "meta": {"type": "dict", "properties": {"tag": {"type": "any", "description": "T."}}, "description": "Meta."},
    "free": {"description": "No type."}}, ["price"])


def simple_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Area for base {i}?"}]],
                  "function": [AREA]} for i in range(3)]
    questions.append({"id": "simple_python_3", "question": [[{"role": "system", "content": "Be brief."},
                                                             {"role": "user", "content": "Weather in Oslo?"}]],
                      "function": [WEATHER]})
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"geo.area": {"base": [2], "unit": ["m", ""]}}]}
               for i in range(3)]
    answers.append({"id": "simple_python_3", "ground_truth": [{"weather": {"city": ["Oslo"]}}]})
    return questions, answers


def test_the_functions_are_tools_as_bfcl_eval_converts_them() -> None:
    (area,) = bfcl.openai_tools([AREA], "simple_python")
    assert area.name == "geo_area" and area.description == "Does geo.area. Note that the provided function is in " \
                                                            "Python 3 syntax."
    assert area.parameters["type"] == "object" and area.parameters["properties"]["base"]["type"] == "integer"
    (order,) = bfcl.openai_tools([NESTED], "simple_python")
    props = order.parameters["properties"]
    assert props["price"] == {"type": "number", "format": "float", "description": "Price. This is a float type value."}
    assert props["items"]["items"]["type"] == "object"
    assert props["items"]["items"]["properties"]["w"]["type"] == "number"
    assert props["grid"]["items"] == {"type": "array", "items": {"type": "number"}}
    assert props["meta"]["properties"]["tag"]["type"] == "string" and props["free"]["type"] == "string"
    assert NESTED["parameters"]["type"] == "dict" and AREA["name"] == "geo.area"  # the item's docs are untouched


def test_the_kind_sends_the_first_turn_as_it_is_and_hashes_apart(tmp_path: Path) -> None:
    task = load_task("bfcl-simple", data_file=write(tmp_path, "simple_python", *simple_rows()))
    item = task.items[3]
    assert [(m.role, m.content) for m in task.prompts.messages(item, FC)] == [("system", "Be brief."),
                                                                             ("user", "Weather in Oslo?")]
    agent = task.prompts.agent_task(item, FC)
    assert [t.name for t in agent.declared] == ["weather"] and agent.calls_answer and not agent.tools
    assert task.prompts.template_hash(FC) != task.prompts.template_hash(bfcl.PROMPTING)
    assert task.answer_rule(FC) is not None and task.answer_rule(FC).name == "bfcl-ast-fc"  # type: ignore[union-attr]


@needs_oracle
def test_tools_equal_bfcl_evals_convert_to_tool() -> None:
    from bfcl_eval.constants.enums import ModelStyle
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI
    from bfcl_eval.model_handler.utils import convert_to_tool
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    java = fn("Cache.get", {"key": {"type": "String", "description": "Key."},
                            "xs": {"type": "ArrayList", "items": {"type": "integer"}, "description": "N."}}, ["key"])
    js = fn("track", {"meta": {"type": "dict", "description": "Meta.", "properties": {"a": {"type": "integer"}}},
                      "xs": {"type": "array", "items": {"type": "String"}, "description": "Names."}}, ["meta"])
    for category, docs in (("simple_python", [AREA, NESTED, WEATHER]), ("simple_java", [java]),
                           ("simple_javascript", [js])):
        entry = {"id": f"{category}_0", "function": copy.deepcopy(docs)}
        hinted = add_language_specific_hint_to_function_doc([entry])[0]["function"]
        theirs = convert_to_tool(hinted, GORILLA_TO_OPENAPI, ModelStyle.OPENAI_COMPLETIONS)
        tools = bfcl.openai_tools(docs, category)
        assert tools_body(tools, None, wire_names(tools))["tools"] == theirs, category


def _run(tmp_path: Path, name: str, path: Path, srv: Any, *more: str, out: str = "run") -> int:
    return main(["run", name, "--data-file", str(path), "--prompt", FC, "--model", "openai:scripted",
                 "--base-url", srv.base_url, "-o", str(tmp_path / out), "--store", str(tmp_path / "store.sqlite"),
                 "--no-progress", "--no-history", *more])


def _samples(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "samples.jsonl").read_text().splitlines()]


def test_a_function_calling_run_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = write(tmp_path / "data", "simple_python", *simple_rows())
    with serve(tool_replies=[[{"name": "geo_area", "arguments": {"base": 2, "unit": "M"}}]]) as srv:
        assert _run(tmp_path, "bfcl-simple", path, srv) == 0
        body = srv.stats()["last_body"]  # the last item asked: no system prompt added, the turn as it is
        assert srv.stats()["by_path"]["/v1/chat/completions"] == 4  # one turn each
        # asked again: every turn from the request cache
        srv.reset()
        assert _run(tmp_path, "bfcl-simple", path, srv, out="again") == 0
        assert srv.stats()["by_path"].get("/v1/chat/completions", 0) == 0
    oslo = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Oslo?"}]
    assert body["messages"] in [oslo, *([{"role": "user", "content": f"Area for base {i}?"}] for i in range(3))]
    assert {t["function"]["name"] for t in body["tools"]} <= {"geo_area", "weather"}
    assert "max_tokens" not in body and body["temperature"] == 0  # bfcl-eval's FC request sends no token limit
    results = json.loads((tmp_path / "run" / "results.json").read_text())
    overall = results["overall"]
    assert overall["accuracy"] == pytest.approx(0.75)  # the weather item is asked for geo_area
    assert overall["agent_stops"] == {"called": 4} and overall["agent_stop_rates"] == {"called": 1.0}
    samples = sorted(_samples(tmp_path / "run"), key=lambda s: s["item_id"])
    first = samples[0]
    assert first["outcome"] == "correct" and first["extracted"] == "[{'geo_area': {'base': 2, 'unit': 'M'}}]"
    assert first["trajectory"]["stop"] == "called" and first["trajectory"]["turns"][0]["tool_calls"][0]["name"] \
        == "geo_area"
    assert samples[3]["outcome"] == "wrong" and "wrong_func_name" in samples[3]["details"]["rejected"]
    assert all(s["cached_requests"] == 1 for s in _samples(tmp_path / "again"))
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["spec"]["agent"]["max_turns"] == 20 and manifest["spec"]["scorer"]["prompt_kind"] == FC


def test_irrelevance_in_function_calling_mode_counts_replies_without_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = category_file(tmp_path / "data", "irrelevance", 3)
    with serve(responder="first") as srv:  # text, no call: right for irrelevance
        assert _run(tmp_path, "bfcl-irrelevance", path, srv) == 0
    overall = json.loads((tmp_path / "run" / "results.json").read_text())["overall"]
    assert overall["accuracy"] == 1.0 and overall["agent_stops"] == {"answered": 3}
    assert "trajectories: answered 3 (100.0%)" in capsys.readouterr().out


def test_a_trajectory_past_its_wall_time_is_truncated_and_counted_and_not_retried_by_tokens(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = write(tmp_path / "data", "simple_python", *simple_rows())
    with serve(tool_replies=[[{"name": "geo_area", "arguments": {"base": 2}}]], latency=1.0) as srv:
        assert _run(tmp_path, "bfcl-simple", path, srv, "--wall-time", "0.2") in (0, 1)
        overall = json.loads((tmp_path / "run" / "results.json").read_text())["overall"]
        assert overall["agent_stops"] == {"wall_time": 4} and overall["agent_stop_rates"] == {"wall_time": 1.0}
        assert overall["n_truncated"] == 4 and overall["truncated_rate"] == 1.0
        assert all(s["outcome"] == "truncated" and s["extraction_rule"] == "agent:wall_time"
                   for s in _samples(tmp_path / "run"))
        capsys.readouterr()
        srv.reset()
        # a retry at a larger token budget means nothing to a trajectory: refused, nothing asked
        assert main(["run", "--retry-truncated", str(tmp_path / "run"), "--max-tokens", "4096", "--base-url",
                     srv.base_url, "-o", str(tmp_path / "retry"), "--store", str(tmp_path / "store.sqlite"),
                     "--no-progress", "--no-history"]) == 2
        assert "cut by the agent's limits" in capsys.readouterr().err
        assert srv.stats()["by_path"].get("/v1/chat/completions", 0) == 0
        # nor a budget ladder: refused before its first step asks anything
        assert _run(tmp_path, "bfcl-simple", path, srv, "--budgets", "1024,4096", out="ladder") == 2
        assert "cut by the agent's limits" in capsys.readouterr().err
        assert srv.stats()["by_path"].get("/v1/chat/completions", 0) == 0 and not (tmp_path / "ladder").exists()


def test_the_kind_and_the_limits_are_in_the_run_id_and_refused_elsewhere(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.run.build import build_spec, eval_options
    from proctor.run.resolve import resolve

    path = write(tmp_path / "data", "simple_python", *simple_rows())

    def run_id(**given: Any) -> str:
        return resolve(build_spec("bfcl-simple", "openai:m", eval_options(data_file=str(path), **given))).run_id()

    ids = {run_id(prompt="prompting"), run_id(prompt=FC), run_id(prompt=FC, max_turns=3),
           run_id(prompt=FC, tool_timeout=5.0)}
    assert len(ids) == 4
    assert run_id(prompt=FC, max_turns=20) == run_id(prompt=FC)  # the default given is the default
    assert main(["run", "bfcl-simple", "--data-file", str(path), "--model", "scripted:first", "--max-turns", "3",
                 "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "apply only where a sample is a trajectory" in err and "--prompt function-calling" in err
    assert "Traceback" not in err
    assert main(["run", "bfcl-simple", "--data-file", str(path), "--prompt", FC, "--model", "openai:m",
                 "--max-turns", "0", "--no-history"]) == 2
    assert "--max-turns: Input should be greater than or equal to 1" in capsys.readouterr().err


def test_a_backend_without_tool_calling_is_refused_before_anything_runs(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "data", "simple_python", *simple_rows())
    code = main(["run", "bfcl-simple", "--data-file", str(path), "--prompt", FC, "--model", "scripted:first",
                 "-o", str(tmp_path / "run"), "--no-history", "--no-progress"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and "tool" in err.lower()
    assert not (tmp_path / "run" / "samples.jsonl").exists()


def test_hostile_tool_calls_end_in_verdicts_never_a_crash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    path = write(tmp_path / "data", "simple_python", *simple_rows())
    junk = [{"name": "geo_area", "arguments": "{not json"}, {"name": "", "arguments": "{}"},
            {"name": "nope", "arguments": "[1]"}] + [{"name": "geo_area", "arguments": {"base": 2}}] * 300
    with serve(tool_replies=[junk]) as srv:
        assert _run(tmp_path, "bfcl-simple", path, srv) in (0, 1)
    samples = _samples(tmp_path / "run")
    assert len(samples) == 4 and {s["outcome"] for s in samples} == {"no_answer"}  # not JSON: nothing decodes
    assert all(s["trajectory"]["stop"] == "called" and len(s["trajectory"]["turns"][0]["tool_calls"]) == 303
               for s in samples)
    assert all(s["trajectory"]["turns"][0]["results"] == [] for s in samples)  # declared functions: none ran
