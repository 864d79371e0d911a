"""Truncation as its own outcome, settings each backend can send, `--extra-body`."""

from __future__ import annotations

import pytest

from proctor.models import Generation, GenerationSettings
from proctor.scoring.reasoning import (
    DEFAULT_TRUNCATED_AS,
    TruncatedAs,
    answer_text,
    is_truncated,
    parse_extra_body,
    unsupported_settings,
)
from proctor.util.errors import ProctorError


@pytest.mark.parametrize(("gen", "truncated"), [
    (Generation(text="The answer is 4", finish_reason="stop"), False),
    (Generation(text="The answer is 4", finish_reason="length"), True),  # OpenAI-compatible, hf
    (Generation(text="The answer is 4", finish_reason="max_tokens"), True),  # Anthropic
    (Generation(text="The answer is 4", finish_reason="end_turn"), False),
    (Generation(text="<think>so it is 4", finish_reason="stop"), True),  # a stop sequence inside the thought
    (Generation(text="4</think>The answer is 4", finish_reason=None), False),
    (Generation(error="HTTP 500", finish_reason=None), False),  # an error is an error, not a truncation
])
def test_is_truncated(gen: Generation, truncated: bool) -> None:
    assert is_truncated(gen) is truncated


def test_answer_text_is_the_final_answer_or_none_when_truncated() -> None:
    assert answer_text(Generation(text="<think>(A)? (B)?</think> The answer is (C)", finish_reason="stop")) == \
        "The answer is (C)"
    assert answer_text(Generation(text="<think>(A)? (B)? so (C", finish_reason="length")) is None
    assert answer_text(Generation(text="The answer is (", finish_reason="length")) is None


def test_truncated_as_values_and_default() -> None:
    assert [t.value for t in TruncatedAs] == ["wrong", "excluded"]
    assert TruncatedAs.parse(" Excluded ") is TruncatedAs.EXCLUDED
    assert DEFAULT_TRUNCATED_AS is TruncatedAs.WRONG
    with pytest.raises(ProctorError, match="wrong or excluded"):
        TruncatedAs.parse("ignore")


def test_unsupported_settings_name_the_flags() -> None:
    s = GenerationSettings(reasoning_effort="high", thinking_budget=2048, max_tokens=8192)
    assert unsupported_settings("openai", s) == ["openai: backend cannot send --thinking-budget"]
    assert unsupported_settings("anthropic", s) == ["anthropic: backend cannot send --reasoning-effort"]
    assert unsupported_settings("hf", GenerationSettings(top_k=20)) == ["hf: backend cannot send --top-k"]
    assert unsupported_settings("openai", GenerationSettings()) == []


def test_anthropic_thinking_budget_rules() -> None:
    problems = unsupported_settings("anthropic", GenerationSettings(thinking_budget=512, max_tokens=256, top_k=5))
    assert any("at least 1024" in p for p in problems)
    assert any("below --max-tokens" in p for p in problems)
    assert any("--top-k cannot" in p for p in problems)
    assert unsupported_settings("anthropic", GenerationSettings(thinking_budget=16000, max_tokens=32000)) == []


def test_parse_extra_body() -> None:
    assert parse_extra_body(None) == {} and parse_extra_body("  ") == {}
    assert parse_extra_body('{"chat_template_kwargs": {"thinking": true}, "repetition_penalty": 1.05}') == {
        "chat_template_kwargs": {"thinking": True}, "repetition_penalty": 1.05}
    with pytest.raises(ProctorError, match="line 1 column 2"):
        parse_extra_body("{oops}")
    with pytest.raises(ProctorError, match="JSON object, got list"):
        parse_extra_body("[1, 2]")


def test_settings_enter_the_cache_key_only_when_set() -> None:
    plain = GenerationSettings()
    assert set(plain.as_dict()) == {"temperature", "top_p", "max_tokens", "stop", "seed"}  # old cache keys hold
    rich = GenerationSettings(reasoning_effort="low", enable_thinking=False, top_k=20, min_p=0.0, system="Be brief.",
                              presence_penalty=1.5, frequency_penalty=0.0, thinking_budget=1024,
                              extra_body={"x": {"y": 1}})
    d = rich.as_dict()
    assert d["reasoning_effort"] == "low" and d["enable_thinking"] is False and d["top_k"] == 20
    assert d["min_p"] == 0.0 and d["frequency_penalty"] == 0.0 and d["extra_body"] == {"x": {"y": 1}}
    assert d["system"] == "Be brief." and d["thinking_budget"] == 1024 and d["presence_penalty"] == 1.5
    assert GenerationSettings(reasoning_effort="low").as_dict() != GenerationSettings(reasoning_effort="high").as_dict()
