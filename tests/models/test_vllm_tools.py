"""`vllm:` tool calling: the engine is started with `--enable-auto-tool-choice --tool-call-parser P` only when a run
needs tools, P named or the model family's, the parser in the identity; a family without a default is refused
before anything starts. Against the stand-in engine (fake_vllm.py) answering with scripted tool calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from proctor.core.tools import ToolDef
from proctor.models import Capability, GenerateRequest, Message, get_model
from proctor.models.vllm_engine import TOOL_PARSERS, VLLMModel, tool_args, tool_parser
from proctor.util.errors import CapabilityError

FAKE = Path(__file__).with_name("fake_vllm.py")
SRC = str(Path(__file__).resolve().parents[2] / "src")
ADD = ToolDef("math.add", "Add.", {"type": "object", "properties": {"a": {"type": "number"}}})


@pytest.fixture
def fake_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    exe = tmp_path / "fake-vllm-python"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PYTHONPATH", SRC)
    monkeypatch.setenv("FAKE_VLLM_CHILD_PIDFILE", str(tmp_path / "child.pid"))
    monkeypatch.delenv("PROCTOR_VLLM_PYTHON", raising=False)
    return exe


def checkpoint(tmp_path: Path, model_type: str) -> str:
    d = tmp_path / model_type
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"model_type": model_type}))
    return str(d)


def test_the_parser_is_the_given_one_else_the_family_default(tmp_path: Path) -> None:
    assert tool_args("hermes") == ["--enable-auto-tool-choice", "--tool-call-parser", "hermes"] and tool_args(None) == []
    assert tool_parser(checkpoint(tmp_path, "qwen2"), None) == "hermes" == TOOL_PARSERS["qwen3"]
    assert tool_parser(checkpoint(tmp_path, "llama"), None) == "llama3_json"
    assert tool_parser(checkpoint(tmp_path, "llama"), "pythonic") == "pythonic"
    with pytest.raises(CapabilityError, match="--tool-call-parser"):
        tool_parser(checkpoint(tmp_path, "gpt2"), None)
    with pytest.raises(CapabilityError, match="no config.json"):
        tool_parser("org/not-here", None)


def test_a_run_without_tools_starts_the_engine_without_them(fake_python: Path, tmp_path: Path) -> None:
    m = get_model("vllm:org/m", vllm_python=str(fake_python), tool_call_parser="hermes")
    assert isinstance(m, VLLMModel) and Capability.TOOLS in m.capabilities
    assert "--enable-auto-tool-choice" not in m.command and "--tool-call-parser" not in m.describe()["engine_command"]


async def test_no_parser_is_refused_before_the_engine_starts(fake_python: Path, tmp_path: Path) -> None:
    m = VLLMModel(checkpoint(tmp_path, "gpt2"), vllm_python=str(fake_python))
    m.set_log_dir(tmp_path)
    with pytest.raises(CapabilityError, match="tool-call-parser"):
        await m.probe({Capability.GENERATE, Capability.TOOLS})
    assert m.engine is None and not (tmp_path / "engine.log").exists()


async def test_a_tools_run_starts_the_engine_with_the_parser_and_a_call_comes_back(
    fake_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_CONFIG", json.dumps(
        {"tool_replies": [[{"name": "math_add", "arguments": {"a": 1}}]], "answer_with_result": True}))
    m = VLLMModel(checkpoint(tmp_path, "qwen2"), vllm_python=str(fake_python))
    m.set_log_dir(tmp_path)
    try:
        await m.probe({Capability.GENERATE})  # a plain start first (kept running between runs)
        plain = m.identity()
        await m.probe({Capability.GENERATE, Capability.TOOLS})  # started again, with tool calling on
        starts = [line for line in (tmp_path / "engine.log").read_text().splitlines()
                  if line.startswith("fake vllm starting")]
        assert len(starts) == 2 and "--tool-call-parser" not in starts[0]
        assert "--enable-auto-tool-choice --tool-call-parser hermes" in starts[1]
        assert m.identity()["tool_call_parser"] == "hermes" and "tool_call_parser" not in plain
        [g] = await m.generate([GenerateRequest((Message("user", "1+?"),), tools=(ADD,))])
        assert g.error is None and [(c.name, json.loads(c.arguments)) for c in g.tool_calls] == [("math.add", {"a": 1})]
        await m.probe({Capability.GENERATE, Capability.TOOLS})  # already serving tools: not started again
        assert (tmp_path / "engine.log").read_text().count("fake vllm starting") == 2
    finally:
        await m.aclose()


async def test_tools_sent_without_a_tools_probe_start_the_parser_or_are_error_records(
    fake_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_VLLM_CONFIG", json.dumps({"tool_replies": [[{"name": "math_add", "arguments": {}}]]}))
    tooled, plain = GenerateRequest((Message("user", "1+?"),), tools=(ADD,)), GenerateRequest((Message("user", "hi"),))
    bare = VLLMModel(checkpoint(tmp_path, "gpt2"), vllm_python=str(fake_python))
    bare.set_log_dir(tmp_path / "bare")
    try:
        refused, answered = await bare.generate([tooled, plain])
        assert refused.error is not None and "tool-call-parser" in refused.error and answered.error is None
    finally:
        await bare.aclose()
    m = VLLMModel(checkpoint(tmp_path, "mistral"), vllm_python=str(fake_python))
    m.set_log_dir(tmp_path / "m")
    try:
        [g] = await m.generate([tooled])
        assert g.error is None and g.tool_calls[0].name == "math.add" and m.tools_parser == "mistral"
        assert "--tool-call-parser mistral" in (tmp_path / "m" / "engine.log").read_text()
    finally:
        await m.aclose()
