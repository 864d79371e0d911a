"""Tool calling over the Anthropic Messages wire (models.anthropic_tools): `tools` and `tool_choice` go out, the
conversation's calls and results as `tool_use` / `tool_result` blocks (consecutive results in one user message),
names Anthropic refuses mapped and mapped back, and a `tool_use` that cannot be read is the sample's, never a
crash. Against the stand-in server's scripted tool_use blocks, one by one and through Message Batches."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor.core.model import Capability, GenerateRequest, Message
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolCall, ToolChoice, ToolDef, call_problem
from proctor.models.anthropic import AnthropicModel
from proctor.models.anthropic_tools import read_tool_uses, wire_messages
from proctor.models.batch_anthropic import AnthropicBatchModel
from proctor.models.batch_openai import OpenAIBatchModel
from proctor.models.replies import InvalidReply, anthropic_generation
from proctor.scoring.agent import Agent, python_tool
from proctor.testing import LocalServer

pytest.importorskip("uvicorn")

ADD = ToolDef("math.add", "Add two numbers.", {"type": "object", "properties": {"a": {"type": "number"},
                                                                               "b": {"type": "number"}}})
ECHO = ToolDef("echo", "", {"type": "object", "properties": {"text": {"type": "string"}}})


@pytest.fixture
def server(srv: LocalServer) -> Iterator[LocalServer]:
    srv.configure(api_key=None, reasoning=None, responder="first", fault_rate=0.0, batch_polls=2, batch_expire=False)
    yield srv
    srv.configure(tool_replies=[], tool_repeat=False, answer_with_result=False, responder="first")


def _ask(server: LocalServer, request: GenerateRequest) -> Any:
    async def go() -> Any:
        model = AnthropicModel("claude-test", base_url=server.url, api_key="x", max_retries=0)
        try:
            return (await model.generate([request]))[0]
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_tools_and_each_choice_go_out_in_the_anthropic_shape(server: LocalServer) -> None:
    server.configure(tool_replies=[[{"name": "math_add", "arguments": {"a": 1, "b": 2}, "id": "toolu_1"}]])
    g = _ask(server, GenerateRequest((Message("system", "Be brief."), Message("user", "1+2?")), tools=(ADD, ECHO),
                                     tool_choice=ToolChoice(function="math.add")))
    body = server.stats()["last_body"]
    assert body["tools"] == [{"name": "math_add", "description": "Add two numbers.", "input_schema": dict(ADD.parameters)},
                             {"name": "echo", "input_schema": dict(ECHO.parameters)}]
    assert body["tool_choice"] == {"type": "tool", "name": "math_add"} and body["system"] == "Be brief."
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "1+2?"}]}]
    assert g.error is None and g.finish_reason == "tool_use"
    assert [(c.id, c.name, json.loads(c.arguments)) for c in g.tool_calls] == [("toolu_1", "math.add", {"a": 1, "b": 2})]
    model = AnthropicModel("claude-test", base_url=server.url, api_key="x")
    sent = {mode: model.body(GenerateRequest((Message("user", "x"),), tools=(ECHO,), tool_choice=ToolChoice(mode)))
            for mode in ("auto", "required", "none")}
    assert {m: b["tool_choice"] for m, b in sent.items()} == {
        "auto": {"type": "auto"}, "required": {"type": "any"}, "none": {"type": "none"}}


def test_a_plain_request_keeps_its_body(server: LocalServer) -> None:
    g = _ask(server, GenerateRequest((Message("user", "Q? (A) x (B) y"),)))
    body = server.stats()["last_body"]
    assert "tools" not in body and "tool_choice" not in body
    assert body["messages"] == [{"role": "user", "content": "Q? (A) x (B) y"}] and g.tool_calls == ()


def test_parallel_calls_and_their_results_in_one_user_message(server: LocalServer) -> None:
    server.configure(tool_replies=[[{"name": "echo", "arguments": '{"text": "a"}', "id": "c1"},
                                    {"name": "math_add", "arguments": '{"a": 1}', "id": "c.2"}]],
                     answer_with_result=True)
    first = _ask(server, GenerateRequest((Message("user", "go"),), tools=(ADD, ECHO)))
    assert [(c.id, c.name, c.arguments) for c in first.tool_calls] == [
        ("c1", "echo", '{"text": "a"}'), ("c.2", "math.add", '{"a": 1}')]
    convo = (Message("user", "go"), Message("assistant", "Let me.", tool_calls=first.tool_calls),
             Message("tool", "a", tool_call_id="c1"), Message("tool", "1", tool_call_id="c.2"))
    second = _ask(server, GenerateRequest(convo, tools=(ADD, ECHO)))
    sent = server.stats()["last_body"]["messages"]
    assert sent[1] == {"role": "assistant", "content": [
        {"type": "text", "text": "Let me."},
        {"type": "tool_use", "id": "c1", "name": "echo", "input": {"text": "a"}},
        {"type": "tool_use", "id": "c_2", "name": "math_add", "input": {"a": 1}}]}
    assert sent[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "a"},
                                                   {"type": "tool_result", "tool_use_id": "c_2", "content": "1"}]}
    assert len(sent) == 3 and second.text == "result: 1" and second.tool_calls == ()


def test_a_user_message_after_results_joins_them_and_bad_arguments_go_out_empty() -> None:
    calls = (ToolCall("t1", "echo", '{"text": '),)
    sent = wire_messages((Message("user", "go"), Message("assistant", "", tool_calls=calls),
                          Message("tool", "bad arguments", tool_call_id="t1"), Message("user", "try again")), {})
    assert sent[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "echo", "input": {}}]
    assert sent[2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "bad arguments"},
                                                   {"type": "text", "text": "try again"}]}


@pytest.mark.parametrize("calls", [
    [{"name": "echo", "input": "not an object"}],  # input a string
    [{"name": "echo", "input": [1, 2]}],  # input a list
    [{"name": "", "input": {}}],  # no name
    [{"name": "rm_rf", "input": {}}],  # a function never offered
    [{"name": "echo", "input": {"text": "x"}}] * 300,  # hundreds in one reply
])
def test_calls_that_cannot_be_run_are_outcomes_not_errors(server: LocalServer, calls: list[dict[str, Any]]) -> None:
    server.configure(tool_replies=[calls])
    g = _ask(server, GenerateRequest((Message("user", "go"),), tools=(ECHO,)))
    assert g.error is None and len(g.tool_calls) == len(calls)
    problems = {call_problem(c, ["echo"]) for c in g.tool_calls}
    assert (problems == {None}) == (len(calls) == 300)
    assert len({c.id for c in g.tool_calls}) == len(calls)


@pytest.mark.parametrize("block", [
    {"type": "tool_use", "id": 7, "name": 3, "input": None}, {"type": "tool_use"},
    {"type": "tool_use", "id": "t", "name": "echo", "input": {"text": "obj"}},
])
def test_odd_tool_use_blocks_are_read_without_a_crash(block: dict[str, Any]) -> None:
    g = anthropic_generation({"content": [block], "stop_reason": "tool_use"}, 0.1)
    [call] = g.tool_calls
    assert call.id
    if call.name == "echo":
        assert json.loads(call.arguments) == {"text": "obj"}
    else:
        assert call_problem(call, ["echo"]) is not None
    assert read_tool_uses([("t", "w", {})], {"a.b": "w"})[0].name == "a.b"
    with pytest.raises(InvalidReply):  # a lone surrogate in a call: the reply is an error record
        anthropic_generation({"content": [{"type": "tool_use", "id": "t", "name": "\ud800", "input": {}}]}, 0.1)


def test_the_agent_runs_a_call_through_the_messages_api(server: LocalServer) -> None:
    server.configure(tool_replies=[[{"name": "math_add", "arguments": {"a": 2, "b": 3}}]], answer_with_result=True)

    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    async def go() -> Any:
        model = AnthropicModel("claude-test", base_url=server.url, api_key="x", max_retries=0)
        try:
            return await Agent(model, [python_tool(add, name="math.add")], AgentLimits(max_turns=4)).run(
                [Message("user", "2+3?")])
        finally:
            await model.aclose()

    trajectory = asyncio.run(go())
    assert trajectory.stop == "answered" and trajectory.answer == "result: 5"
    assert [r.content for t in trajectory.turns for r in t.results] == ["5"]


@pytest.mark.parametrize("batched", ["anthropic", "openai"])
def test_batch_apis_send_tools_and_map_names_back(server: LocalServer, batched: str, tmp_path: Path) -> None:
    server.configure(tool_replies=[[{"name": "math_add", "arguments": {"a": 1}}]])
    if batched == "anthropic":
        model: Any = AnthropicBatchModel("claude-test", base_url=server.url, state_dir=tmp_path, poll_interval=0.01)
    else:
        model = OpenAIBatchModel("gpt-test", base_url=server.base_url, state_dir=tmp_path, poll_interval=0.01)
    assert Capability.TOOLS in model.capabilities
    [g] = asyncio.run(model.generate([GenerateRequest((Message("user", "1+?"),), tools=(ADD,))]))
    assert g.error is None and [(c.name, json.loads(c.arguments)) for c in g.tool_calls] == [("math.add", {"a": 1})]


def test_the_anthropic_backend_declares_tool_calling() -> None:
    assert Capability.TOOLS in AnthropicModel("m", base_url="http://127.0.0.1:9", api_key="x").capabilities


def test_a_bfcl_function_calling_run_through_the_messages_api(server: LocalServer, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """`proctor run` end to end: BFCL's function-calling kind on `anthropic:`, its calls scored by the rule."""
    from benchmarks.bfcl_rows import AREA, write

    from proctor.benchmarks import bfcl
    from proctor.cli import main

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    rows = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Area for base {i}?"}]],
             "function": [AREA]} for i in range(2)]
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"geo.area": {"base": [2], "unit": ["m", ""]}}]}
               for i in range(2)]
    path = write(tmp_path / "data", "simple_python", rows, answers)
    server.configure(tool_replies=[[{"name": "geo_area", "input": {"base": 2, "unit": "M"}}]])
    code = main(["run", "bfcl-simple", "--data-file", str(path), "--prompt", bfcl.FUNCTION_CALLING,
                 "--model", "anthropic:claude-test", "--base-url", server.url, "-o", str(tmp_path / "run"),
                 "--store", str(tmp_path / "store.sqlite"), "--no-progress", "--no-history"])
    assert code == 0
    body = server.stats()["last_body"]
    assert [t["name"] for t in body["tools"]] == ["geo_area"] and body["max_tokens"] == 4096
    overall = json.loads((tmp_path / "run" / "results.json").read_text())["overall"]
    assert overall["accuracy"] == pytest.approx(1.0) and overall["agent_stops"] == {"called": 2}
