"""Tool calling over the OpenAI wire (models.openai_tools): `tools` and `tool_choice` go out, names OpenAI refuses
are mapped and mapped back, a reply's parallel calls come back as sent, and a call that cannot be read is the
sample's, never a crash. Against the stand-in server's scripted tool calls."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from proctor.core.model import Capability, GenerateRequest, Message
from proctor.core.tools import ToolCall, ToolChoice, ToolDef, call_problem
from proctor.models.openai import OpenAIModel
from proctor.models.openai_tools import read_calls, wire_names
from proctor.testing import LocalServer

ADD = ToolDef("math.add", "Add two numbers.", {"type": "object", "properties": {"a": {"type": "number"},
                                                                               "b": {"type": "number"}}})
ECHO = ToolDef("echo", "Say it back.", {"type": "object", "properties": {"text": {"type": "string"}}})


@pytest.fixture
def server(srv: LocalServer) -> Iterator[LocalServer]:
    yield srv
    srv.configure(tool_replies=[], tool_repeat=False, answer_with_result=False, responder="first")


def _ask(server: LocalServer, request: GenerateRequest) -> Any:
    import asyncio

    async def go() -> Any:
        model = OpenAIModel("m", base_url=server.base_url, api_key="x", max_retries=0)
        try:
            return (await model.generate([request]))[0]
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_names_openai_refuses_are_mapped_distinctly_and_back() -> None:
    tools = [ToolDef("math.add"), ToolDef("math_add"), ToolDef("a/b c"), ToolDef("x" * 80), ToolDef("ok-name_1")]
    names = wire_names(tools)
    assert names["math_add"] == "math_add" and names["ok-name_1"] == "ok-name_1"
    assert names["math.add"].startswith("math_add_") and names["a/b c"] == "a_b_c"
    assert len(set(names.values())) == 5 and all(len(w) <= 64 for w in names.values())
    back = read_calls([{"id": "1", "function": {"name": names["math.add"], "arguments": "{}"}},
                       {"id": "2", "function": {"name": "never_offered", "arguments": "{}"}}], names)
    assert [c.name for c in back] == ["math.add", "never_offered"]


def test_tools_and_a_named_choice_go_out_in_the_openai_shape(server: LocalServer) -> None:
    server.configure(tool_replies=[[{"name": "math_add", "arguments": {"a": 1, "b": 2}}]])
    g = _ask(server, GenerateRequest((Message("user", "1+2?"),), tools=(ADD, ECHO),
                                     tool_choice=ToolChoice(function="math.add")))
    body = server.stats()["last_body"]
    assert [t["function"]["name"] for t in body["tools"]] == ["math_add", "echo"]
    assert body["tools"][0]["type"] == "function" and body["tools"][0]["function"]["parameters"] == dict(ADD.parameters)
    assert body["tool_choice"] == {"type": "function", "function": {"name": "math_add"}}
    assert g.error is None and g.finish_reason == "tool_calls"
    assert [(c.name, json.loads(c.arguments)) for c in g.tool_calls] == [("math.add", {"a": 1, "b": 2})]


def test_a_plain_request_sends_no_tools_and_keeps_its_body(server: LocalServer) -> None:
    g = _ask(server, GenerateRequest((Message("user", "Q? (A) x (B) y"),)))
    body = server.stats()["last_body"]
    assert "tools" not in body and "tool_choice" not in body and body["messages"] == [
        {"role": "user", "content": "Q? (A) x (B) y"}]
    assert g.tool_calls == ()


def test_parallel_calls_and_the_results_sent_back(server: LocalServer) -> None:
    server.configure(tool_replies=[[{"name": "echo", "arguments": '{"text": "a"}', "id": "c1"},
                                    {"name": "math_add", "arguments": '{"a": 1}', "id": "c2"}]],
                     answer_with_result=True)
    first = _ask(server, GenerateRequest((Message("user", "go"),), tools=(ADD, ECHO), tool_choice=ToolChoice("required")))
    assert server.stats()["last_body"]["tool_choice"] == "required"
    assert [(c.id, c.name) for c in first.tool_calls] == [("c1", "echo"), ("c2", "math.add")]
    convo = (Message("user", "go"), Message("assistant", "", tool_calls=first.tool_calls),
             Message("tool", "a", tool_call_id="c1"), Message("tool", "1", tool_call_id="c2"))
    second = _ask(server, GenerateRequest(convo, tools=(ADD, ECHO)))
    sent = server.stats()["last_body"]["messages"]
    assert sent[1]["tool_calls"][1] == {"id": "c2", "type": "function",
                                        "function": {"name": "math_add", "arguments": '{"a": 1}'}}
    assert sent[3] == {"role": "tool", "content": "1", "tool_call_id": "c2"}
    assert second.text == "result: 1" and second.tool_calls == ()


@pytest.mark.parametrize("calls", [
    [{"name": "echo", "arguments": '{"text": '}],  # arguments that are not JSON
    [{"name": "", "arguments": "{}"}],  # no name
    [{"name": "rm_rf", "arguments": "{}"}],  # a function never offered
    [{"name": "echo", "arguments": '{"text": "x"}'}] * 300,  # hundreds in one reply
])
def test_calls_that_cannot_be_run_come_back_as_sent(server: LocalServer, calls: list[dict[str, Any]]) -> None:
    server.configure(tool_replies=[calls])
    g = _ask(server, GenerateRequest((Message("user", "go"),), tools=(ECHO,)))
    assert g.error is None and len(g.tool_calls) == len(calls)
    assert [c.arguments for c in g.tool_calls] == [c["arguments"] for c in calls]
    problems = {call_problem(c, ["echo"]) for c in g.tool_calls}
    assert (problems == {None}) == (len(calls) == 300)


@pytest.mark.parametrize("raw", [
    [{"id": 7, "function": {"name": 3, "arguments": None}}], ["not a call"], [{"function": "x"}],
    [{"id": "c", "function": {"name": "echo", "arguments": {"text": "obj"}}}],
])
def test_odd_call_shapes_are_read_without_a_crash(raw: list[Any]) -> None:
    [call] = read_calls(raw, {})
    assert isinstance(call, ToolCall) and call.id
    if call.name == "echo":
        assert json.loads(call.arguments) == {"text": "obj"}
    else:
        assert call_problem(call, ["echo"]) is not None


def test_tool_calls_not_a_list_is_an_error_record_not_a_crash() -> None:
    from proctor.models.replies import InvalidReply, chat_generation

    with pytest.raises(InvalidReply):
        chat_generation({"choices": [{"message": {"content": None, "tool_calls": "echo"}}]}, 0.1)


def test_tools_on_a_text_prompt_are_refused_per_request(server: LocalServer) -> None:
    g = _ask(server, GenerateRequest((Message("user", "go"),), completion=True, tools=(ECHO,)))
    assert g.error is not None and "chat completions" in g.error


def test_the_openai_backend_declares_tool_calling() -> None:
    assert Capability.TOOLS in OpenAIModel("m", base_url="http://127.0.0.1:9/v1", api_key="x").capabilities
