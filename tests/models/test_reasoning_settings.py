"""Reasoning settings on the wire and reasoning back out, against the local test server (a real process)."""

from __future__ import annotations

import pytest

from proctor.models import GenerateRequest, GenerationSettings, Message
from proctor.models.anthropic import AnthropicModel
from proctor.models.openai import OpenAIModel
from proctor.scoring.extract import extract_choice
from proctor.scoring.reasoning import answer_text, is_truncated
from proctor.testing import LocalServer

pytest.importorskip("uvicorn")

QUESTION = (Message("user", "Which is larger?\n(A) one\n(B) two"),)
QWEN3 = GenerationSettings(temperature=0.6, top_p=0.95, top_k=20, min_p=0.0, max_tokens=32768, seed=7,
                           enable_thinking=True, presence_penalty=1.5, system="You are a careful solver.",
                           extra_body={"chat_template_kwargs": {"custom": 1}, "repetition_penalty": 1.05})


@pytest.fixture
def server(srv: LocalServer) -> LocalServer:
    srv.configure(responder="first", reasoning=None, truncate=False, fault_rate=0.0, max_faults=None)
    return srv


def openai(server: LocalServer, **kw: object) -> OpenAIModel:
    return OpenAIModel("qwen3", base_url=server.base_url, backoff_base=0.01, timeout=5.0, **kw)  # type: ignore[arg-type]


def anthropic(server: LocalServer) -> AnthropicModel:
    return AnthropicModel("claude-test", base_url=server.url, backoff_base=0.01, timeout=5.0)


async def test_openai_chat_payload_carries_every_setting(server: LocalServer) -> None:
    [g] = await openai(server).generate([GenerateRequest(QUESTION, QWEN3)])
    assert g.error is None
    body = server.stats()["last_body"]
    assert (body["temperature"], body["top_p"], body["top_k"], body["min_p"]) == (0.6, 0.95, 20, 0.0)
    assert (body["max_tokens"], body["seed"], body["presence_penalty"]) == (32768, 7, 1.5)
    assert "frequency_penalty" not in body and "reasoning_effort" not in body
    # enable_thinking becomes chat_template_kwargs; extra_body merges into it key by key and adds the rest
    assert body["chat_template_kwargs"] == {"enable_thinking": True, "custom": 1}
    assert body["repetition_penalty"] == 1.05
    assert body["messages"][0] == {"role": "system", "content": "You are a careful solver."}
    assert body["messages"][1]["role"] == "user"


async def test_openai_reasoning_effort_and_completions_endpoint(server: LocalServer) -> None:
    settings = GenerationSettings(reasoning_effort="high", frequency_penalty=0.5, max_tokens=16, system="S")
    await openai(server).generate([GenerateRequest(QUESTION, settings)])
    body = server.stats()["last_body"]
    assert body["reasoning_effort"] == "high" and body["frequency_penalty"] == 0.5
    await openai(server, chat=False).generate([GenerateRequest(QUESTION, settings)])
    body = server.stats()["last_body"]
    assert body["prompt"].startswith("S\n\nWhich is larger?")  # the system prompt leads the text prompt
    assert "reasoning_effort" not in body and "chat_template_kwargs" not in body  # chat-only fields


async def test_openai_reasoning_content_comes_back_apart(server: LocalServer) -> None:
    server.configure(reasoning="Two is more than one, so (B).")
    [g] = await openai(server).generate([GenerateRequest(QUESTION)])
    assert (g.text, g.reasoning) == ("The answer is (A)", "Two is more than one, so (B).")
    assert answer_text(g) == "The answer is (A)"


async def test_think_tags_in_content_are_removed_before_extraction(server: LocalServer) -> None:
    server.configure(responder="fixed=<think>Maybe (A)? No: two > one.</think> The answer is (B)")
    [g] = await openai(server).generate([GenerateRequest(QUESTION)])
    assert g.text.startswith("<think>")  # the raw text is kept
    answer = answer_text(g)
    assert answer == "The answer is (B)" and extract_choice(answer, "AB").answer == "B"


async def test_length_finish_is_truncation_for_both_apis(server: LocalServer) -> None:
    server.configure(truncate=True, responder="fixed=<think>First compare one and two then answer (B)")
    settings = GenerationSettings(max_tokens=4)
    [g] = await openai(server).generate([GenerateRequest(QUESTION, settings)])
    assert (g.finish_reason, g.output_tokens, is_truncated(g), answer_text(g)) == ("length", 4, True, None)
    [a] = await anthropic(server).generate([GenerateRequest(QUESTION, settings)])
    assert (a.finish_reason, is_truncated(a), answer_text(a)) == ("max_tokens", True, None)
    [ok] = await openai(server).generate([GenerateRequest(QUESTION, GenerationSettings(max_tokens=100))])
    assert ok.finish_reason == "stop" and is_truncated(ok)  # stopped, but the thought never closed


async def test_anthropic_thinking_budget_system_and_thinking_back(server: LocalServer) -> None:
    server.configure(reasoning="Compare: 2 > 1.")
    settings = GenerationSettings(temperature=0.3, top_k=5, thinking_budget=16000, max_tokens=32000, system="Be exact.",
                                  extra_body={"metadata": {"user_id": "u1"}})
    [g] = await anthropic(server).generate([GenerateRequest((Message("system", "Letters only."), *QUESTION), settings)])
    assert (g.text, g.reasoning) == ("The answer is (A)", "Compare: 2 > 1.")
    body = server.stats()["last_body"]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16000}
    assert "temperature" not in body and "top_k" not in body  # the API refuses them with thinking on
    assert body["system"] == "Be exact.\n\nLetters only." and body["max_tokens"] == 32000
    assert body["metadata"] == {"user_id": "u1"}
    await anthropic(server).generate([GenerateRequest(QUESTION, GenerationSettings(temperature=0.3, top_k=5))])
    body = server.stats()["last_body"]
    assert (body["temperature"], body["top_k"]) == (0.3, 5) and "thinking" not in body
