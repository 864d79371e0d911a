"""Tool calling against the real vLLM server (see conftest.py): a random tiny model makes no call by itself, so the
first turn names the function (`tool_choice` naming it: vLLM's structured outputs force arguments that fit its
schema, no `--enable-auto-tool-choice` needed); proctor runs the call and sends its result back, and the next turn
(`tool_choice: none`) reads it: its prompt holds the result's tokens."""

from __future__ import annotations

import json

import pytest

from proctor.core.model import GenerationSpec, Message
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolChoice
from proctor.models.openai import OpenAIModel
from proctor.scoring.agent import Agent, python_tool

from .conftest import VLLMServer

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

RESULT = "the weather in Paris is mild and dry " * 8  # ~64 words: tokens the next prompt must hold


async def test_a_tool_call_goes_out_and_its_result_comes_back(vllm_servers: dict[str, VLLMServer]) -> None:
    server = vllm_servers["tiny-llama"]
    seen: list[dict[str, str]] = []

    def weather(unit: str) -> str:
        seen.append({"unit": unit})
        return RESULT

    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
              "required": ["unit"], "additionalProperties": False}
    tool = python_tool(weather, name="weather.now", description="The weather now.", parameters=schema)
    model = OpenAIModel(server.name, base_url=server.base_url, api_key="unused", max_retries=0)
    agent = Agent(model, [tool], AgentLimits(max_turns=2, wall_time_s=300),
                  GenerationSpec(temperature=0.0, max_tokens=48),
                  first_choice=ToolChoice(function="weather.now"), tool_choice=ToolChoice("none"))
    try:
        t = await agent.run([Message("user", "What is the weather in Paris?")])
    finally:
        await model.aclose()
    first, second = t.turns
    assert first.error is None, first.error
    [call] = first.tool_calls
    assert call.name == "weather.now"  # sent as weather_now (OpenAI's alphabet), mapped back
    assert json.loads(call.arguments)["unit"] in ("celsius", "fahrenheit") and seen == [json.loads(call.arguments)]
    assert [r.status for r in first.results] == ["ok"] and first.results[0].content == RESULT
    assert second.error is None and second.tool_calls == [] and t.stop == "answered"
    assert first.input_tokens is not None and second.input_tokens is not None
    assert second.input_tokens > first.input_tokens + 40  # the result (and the call) were in the prompt
