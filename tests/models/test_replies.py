"""Item 1 of issue 13: every reply is validated at the HTTP boundary; a bad shape is an error record."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.models.replies import InvalidReply, anthropic_generation, chat_generation, completion_generation

OK_CHAT = {"choices": [{"message": {"content": "B"}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 3, "completion_tokens": 1}}


def _chat(**message: Any) -> dict[str, Any]:
    return {"choices": [{"message": message, "finish_reason": "stop"}]}


def test_chat_reply_becomes_a_generation() -> None:
    g = chat_generation(OK_CHAT, 0.25)
    assert (g.text, g.finish_reason, g.input_tokens, g.output_tokens, g.latency_s) == ("B", "stop", 3, 1, 0.25)


def test_content_as_a_list_of_text_parts_is_accepted() -> None:
    parts = [{"type": "text", "text": "The answer "}, {"type": "image_url"}, {"type": "text", "text": "is B"}]
    assert chat_generation(_chat(content=parts), 0.0).text == "The answer is B"


def test_null_content_missing_usage_and_extra_fields_are_accepted() -> None:
    g = chat_generation({**_chat(content=None, reasoning_content="think", extra=1), "system_fingerprint": "x"}, 0.0)
    assert (g.text, g.reasoning, g.input_tokens) == ("", "think", None)


@pytest.mark.parametrize("body", [
    _chat(content=5),
    {"choices": [{"message": "B"}]},
    {**_chat(content="B"), "usage": "12"},
    {**_chat(content="B"), "usage": {"prompt_tokens": math.nan}},
    {**_chat(content="B"), "usage": {"prompt_tokens": -1}},
    {**_chat(content="B"), "usage": {"prompt_tokens": True}},
    {"choices": [{"message": {"content": "B"}, "finish_reason": 7}]},
    _chat(content="B\ud800"),
    _chat(content=[{"type": "text", "text": "\udfff"}]),
    {"choices": []},
    {"choices": "B"},
    {"object": "chat.completion"},
    [],
])
def test_unexpected_chat_shapes_are_invalid_replies(body: Any) -> None:
    with pytest.raises(InvalidReply, match="invalid reply"):
        chat_generation(body, 0.0)


@pytest.mark.parametrize("body", [
    {"content": "text"}, {"content": [{"type": "text", "text": 3}]}, {"content": [], "stop_reason": 1},
    {"content": [], "usage": {"output_tokens": "9"}}, {"content": [{"type": "text", "text": "\ud800"}]},
])
def test_unexpected_anthropic_shapes_are_invalid_replies(body: Any) -> None:
    with pytest.raises(InvalidReply):
        anthropic_generation(body, 0.0)


def test_anthropic_text_and_thinking_blocks() -> None:
    body = {"content": [{"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "B"}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 4, "output_tokens": 2}}
    g = anthropic_generation(body, 0.0)
    assert (g.text, g.reasoning, g.finish_reason, g.output_tokens) == ("B", "hmm", "end_turn", 2)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=5),
    max_leaves=30,
)
# bodies close to the real shapes, so the fuzzer reaches the nested fields and not only the top level
near_chat = st.fixed_dictionaries({
    "choices": st.lists(st.fixed_dictionaries({"message": json_values | st.fixed_dictionaries(
        {"content": json_values}), "finish_reason": json_values}), max_size=2),
    "usage": json_values,
})
near_anthropic = st.fixed_dictionaries({"content": st.lists(st.fixed_dictionaries(
    {"type": st.sampled_from(["text", "thinking", "tool_use"]) | json_values, "text": json_values}), max_size=3),
    "stop_reason": json_values, "usage": json_values})


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=json_values | near_chat | near_anthropic)
def test_fuzz_random_bodies_give_a_record_or_invalid_reply(body: Any) -> None:
    for parse in (chat_generation, completion_generation, anthropic_generation):
        try:
            g = parse(body, 0.1)
        except InvalidReply:
            continue
        assert isinstance(g.text, str)
        g.text.encode("utf-8")  # whatever is accepted can be logged
        json.dumps([g.text, g.finish_reason, g.input_tokens, g.output_tokens, g.reasoning], allow_nan=False)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode())
       | st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n) | st.integers(4000, 6000).map(lambda n: b"9" * n))
def test_fuzz_raw_bodies_through_the_http_decoder(body: bytes) -> None:
    """Raw bytes as a 200 body: the decoder and the reply parser give a record or a failure, never a crash."""
    from proctor.models._http import RequestFailed, _decode

    try:
        data = _decode(200, {}, body, "http://127.0.0.1:1/v1/chat/completions")
    except RequestFailed:
        return
    for parse in (chat_generation, completion_generation, anthropic_generation):
        try:
            parse(data, 0.0)
        except InvalidReply:
            pass
