"""core.tools: what a call's problem is, and what a request with tools keys on (the cache)."""

from __future__ import annotations

import pytest

from proctor.core.model import GenerateRequest, Generation, Message
from proctor.core.tools import ToolCall, ToolChoice, ToolDef, call_problem, parsed_arguments

KNOWN = ["math.add", "echo"]


@pytest.mark.parametrize(("call", "problem"), [
    (ToolCall("1", "math.add", '{"a": 1}'), None),
    (ToolCall("1", "echo", ""), None),  # no arguments at all: an empty object
    (ToolCall("1", "", "{}"), "names no function"),
    (ToolCall("1", "   ", "{}"), "names no function"),
    (ToolCall("1", "rm_rf", "{}"), "no function 'rm_rf' was offered"),
    (ToolCall("1", "echo", '{"a": '), "not JSON"),
    (ToolCall("1", "echo", "[1, 2]"), "list, not an object"),
    (ToolCall("1", "echo", "[" * 5000 + "]" * 5000), "nested deeper"),
    (ToolCall("1", "echo", "NaN"), "not an object"),
])
def test_call_problem_names_what_cannot_be_run(call: ToolCall, problem: str | None) -> None:
    got = call_problem(call, KNOWN)
    assert (got is None) if problem is None else (got is not None and problem in got)


def test_parsed_arguments_are_the_object_sent() -> None:
    assert parsed_arguments(ToolCall("1", "echo", ' {"text": "hé", "n": [1]} ')) == {"text": "hé", "n": [1]}
    with pytest.raises(ValueError, match="not JSON"):
        parsed_arguments(ToolCall("1", "echo", "{'single': 1}"))


def test_a_request_without_tools_keys_as_before_and_tools_change_the_key() -> None:
    plain = GenerateRequest((Message("user", "hi"),))
    assert plain.as_dict() == {"messages": [{"role": "user", "content": "hi"}], "settings": plain.settings.as_dict()}
    tools = (ToolDef("echo", "say it", {"type": "object", "properties": {"text": {"type": "string"}}}),)
    offered = GenerateRequest(plain.messages, tools=tools)
    forced = GenerateRequest(plain.messages, tools=tools, tool_choice=ToolChoice(function="echo"))
    keys = [plain.as_dict(), offered.as_dict(), forced.as_dict()]
    assert keys[1]["tools"][0]["name"] == "echo" and keys[2]["tool_choice"] == {"function": "echo"}
    assert len({repr(k) for k in keys}) == 3


def test_tool_messages_key_on_their_calls() -> None:
    call = ToolCall("c1", "echo", '{"text": "x"}')
    asked = Message("assistant", "", tool_calls=(call,))
    answered = Message("tool", "x", tool_call_id="c1")
    assert asked.as_dict()["tool_calls"] == [{"id": "c1", "name": "echo", "arguments": '{"text": "x"}'}]
    assert answered.as_dict() == {"role": "tool", "content": "x", "tool_call_id": "c1"}


def test_a_generation_holds_its_calls_and_stays_hashable() -> None:
    g = Generation(text="", tool_calls=(ToolCall("c1", "echo", "{}"),))
    assert hash(g) == hash(Generation(text="", tool_calls=(ToolCall("c1", "echo", "{}"),)))
    assert hash(ToolDef("echo")) == hash(ToolDef("echo", parameters={"type": "object"}))
