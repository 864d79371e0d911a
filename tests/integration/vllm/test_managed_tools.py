"""Tool calling through the managed engine (`vllm:`): the run needs tools, so proctor starts vLLM with
`--enable-auto-tool-choice --tool-call-parser pythonic` (named here: the tiny model's family default, llama3_json,
needs Llama 3's special tokens); a call goes out (the first turn names the function: structured outputs force
arguments that fit its schema) and its result comes back in the next turn's prompt. One managed start on CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from system_tools import require

from proctor.core.model import Capability, GenerationSpec, Message
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolChoice
from proctor.models.vllm_engine import VLLMModel
from proctor.scoring.agent import Agent, python_tool

from .conftest import VLLM_PYTHON
from .test_managed import ENGINE_ENV

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]

RESULT = "the weather in Paris is mild and dry " * 8
ENGINE_ARGS = ["--max-num-seqs 16", "--enforce-eager",
               """--structured-outputs-config '{"backend": "xgrammar", "disable_any_whitespace": true}'"""]


async def test_the_managed_engine_serves_tool_calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require("vllm")
    from proctor.models.tiny import TinyShape, build_tiny_model

    for k, v in ENGINE_ENV.items():
        monkeypatch.setenv(k, v)
    model_dir = build_tiny_model(tmp_path / "llama", shape=TinyShape(hidden_size=256))
    model = VLLMModel(str(model_dir), vllm_python=str(VLLM_PYTHON), dtype="float32", max_model_len=2048,
                      gpu_memory_utilization=0.05, engine_args=ENGINE_ARGS, tool_call_parser="pythonic",
                      startup_timeout=900, max_retries=0)
    model.set_log_dir(tmp_path)

    def weather(unit: str) -> str:
        return RESULT

    schema = {"type": "object", "properties": {"unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
              "required": ["unit"], "additionalProperties": False}
    tool = python_tool(weather, name="weather.now", description="The weather now.", parameters=schema)
    agent = Agent(model, [tool], AgentLimits(max_turns=2, wall_time_s=600), GenerationSpec(temperature=0.0, max_tokens=48),
                  first_choice=ToolChoice(function="weather.now"), tool_choice=ToolChoice("none"))
    try:
        await model.probe({Capability.GENERATE, Capability.TOOLS})
        t = await agent.run([Message("user", "What is the weather in Paris?")])
    finally:
        await model.aclose()
    assert "--enable-auto-tool-choice --tool-call-parser pythonic" in (tmp_path / "engine.log").read_text()
    assert model.identity()["tool_call_parser"] == "pythonic"
    first, second = t.turns
    assert first.error is None, first.error
    [call] = first.tool_calls
    assert call.name == "weather.now" and json.loads(call.arguments)["unit"] in ("celsius", "fahrenheit")
    assert [r.status for r in first.results] == ["ok"] and first.results[0].content == RESULT
    assert second.error is None and t.stop == "answered"
    assert first.input_tokens is not None and second.input_tokens is not None
    assert second.input_tokens > first.input_tokens + 40
