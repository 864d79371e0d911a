"""Tool calling on `hf:` models (models.hf.tool_calls): the tools reach the chat template, the Hermes
`<tool_call>` blocks of a generated reply come back as calls, a block that cannot be read is the sample's outcome,
and a model whose template writes no format proctor reads declares no tool calling."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")

from proctor.core.model import Capability, GenerateRequest, GenerationSettings, Message
from proctor.core.tools import ToolCall, ToolChoice, ToolDef, call_problem
from proctor.models.hf import HFModel
from proctor.models.hf.tool_calls import call_format, read_calls, template_messages

# a Hermes/Qwen-style template, written here (no model's files are copied): tools as JSON in a system block,
# calls as <tool_call> blocks, results as <tool_response> in a user turn
HERMES = """{%- if tools %}<|im_start|>system
# Tools
<tools>
{%- for tool in tools %}
{{ tool | tojson }}
{%- endfor %}
</tools>
Call a function with <tool_call>{"name": ..., "arguments": ...}</tool_call>.<|im_end|>
{% endif %}
{%- for m in messages %}
{%- if m.role == "assistant" and m.tool_calls %}<|im_start|>assistant
{{ m.content }}{% for tc in m.tool_calls %}<tool_call>
{"name": "{{ tc.function.name }}", "arguments": {{ tc.function.arguments | tojson }}}
</tool_call>{% endfor %}<|im_end|>
{% elif m.role == "tool" %}<|im_start|>user
<tool_response name="{{ m.name }}">
{{ m.content }}
</tool_response><|im_end|>
{% else %}<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif %}{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant
{% endif %}"""

ADD = ToolDef("math.add", "Add two numbers.", {"type": "object", "properties": {"a": {"type": "number"}}})


@pytest.fixture(scope="module")
def hermes_dir(tiny_model_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("tiny-hermes") / "model"
    shutil.copytree(tiny_model_dir, out)
    (out / "chat_template.jinja").write_text(HERMES)
    return out


@pytest.fixture(scope="module")
def hermes(hermes_dir: Path) -> HFModel:
    return HFModel(str(hermes_dir))


def scripted(model: HFModel, text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every row of a batch generates `text` (its tokens, then EOS), whatever the weights would."""
    ids = list(model.tokenizer(text, add_special_tokens=False)["input_ids"]) + [model.tokenizer.eos_token_id]

    def fake(jobs: list[Any], settings: Any, max_new: int) -> tuple[list[list[int]], list[int | None]]:
        return [ids[:max_new] for _ in jobs], [None] * len(jobs)

    monkeypatch.setattr(model, "_generate_batch", fake)


def test_a_template_that_writes_hermes_calls_declares_tools(hermes: HFModel, tiny_model_dir: Path) -> None:
    assert hermes.call_format == "hermes" and Capability.TOOLS in hermes.capabilities
    plain = HFModel(str(tiny_model_dir))
    assert plain.call_format is None and Capability.TOOLS not in plain.capabilities
    assert call_format("{{ tools | tojson }} [TOOL_CALLS]") is None and call_format(None) is None


def test_tools_and_the_conversation_reach_the_template(hermes: HFModel) -> None:
    first = ToolCall("call_0", "math.add", '{"a": 1}')
    convo = (Message("user", "1+?"), Message("assistant", "", tool_calls=(first,)),
             Message("tool", "1", tool_call_id="call_0"))
    text = hermes.tokenizer.decode(hermes.render(GenerateRequest(convo, tools=(ADD,))))
    assert '"name": "math.add"' in text and '"description": "Add two numbers."' in text
    assert '<tool_call>\n{"name": "math.add", "arguments": {"a": 1}}\n</tool_call>' in text
    assert '<tool_response name="math.add">\n1\n</tool_response>' in text and text.endswith("<|im_start|>assistant\n")
    none = hermes.tokenizer.decode(hermes.render(GenerateRequest(convo[:1], tools=(ADD,),
                                                                 tool_choice=ToolChoice("none"))))
    assert "<tools>" not in none
    assert template_messages((Message("assistant", "", tool_calls=(ToolCall("c", "f", "{bad"),)),))[0][
        "tool_calls"][0]["function"]["arguments"] == "{bad"  # not an object: as sent


def test_calls_come_back_from_the_generated_text(hermes: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    scripted(hermes, 'Sure.<tool_call>\n{"name": "math.add", "arguments": {"a": 2}}\n</tool_call>\n'
                     '<tool_call>{"name": "math.add", "arguments": {"a": 3}}</tool_call>', monkeypatch)
    settings = GenerationSettings(max_tokens=200)
    [g] = hermes.generate_sync([GenerateRequest((Message("user", "add"),), settings, tools=(ADD,))])
    assert g.error is None and g.text == "Sure."
    assert [(c.id, c.name, json.loads(c.arguments)) for c in g.tool_calls] == [
        ("call_0", "math.add", {"a": 2}), ("call_1", "math.add", {"a": 3})]
    [plain] = hermes.generate_sync([GenerateRequest((Message("user", "add"),), settings)])
    assert plain.tool_calls == () and "<tool_call>" in plain.text  # no tools offered: text as generated
    [off] = hermes.generate_sync([GenerateRequest((Message("user", "add"),), settings, tools=(ADD,),
                                                  tool_choice=ToolChoice("none"))])
    assert off.tool_calls == ()


@pytest.mark.parametrize("body", [
    '{"name": "math.add", "arguments": {"a": ',  # cut off by the token limit: no closing tag, not JSON
    '["math.add"]',  # JSON, not an object
    '{"arguments": {}}',  # no name
    '{"name": "rm_rf", "arguments": {}}',  # never offered
    '{"name": "math.add", "arguments": "{\\"a\\": 1"}',  # arguments a text that is not JSON
])
def test_blocks_that_cannot_be_run_are_outcomes(body: str) -> None:
    closed = "" if body.endswith(": ") else "</tool_call>"
    _, (call,) = read_calls(f"<tool_call>{body}{closed}", "hermes")
    assert call_problem(call, ["math.add"]) is not None


def test_hundreds_of_calls_are_read(hermes: HFModel) -> None:
    text, calls = read_calls('<tool_call>{"name": "math.add", "arguments": {}}</tool_call>' * 300, "hermes")
    assert text == "" and len(calls) == 300 and {call_problem(c, ["math.add"]) for c in calls} == {None}


def test_tools_without_a_template_that_takes_them_are_an_error_record(tiny_model_dir: Path) -> None:
    plain = HFModel(str(tiny_model_dir))
    [g] = plain.generate_sync([GenerateRequest((Message("user", "x"),), GenerationSettings(max_tokens=2),
                                               tools=(ADD,))])
    assert g.error is not None and "chat template" in g.error


def test_the_agent_runs_a_call_of_a_local_model(hermes: HFModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Turn 1 calls (scripted text), the result goes back through the template, turn 2 answers."""
    import asyncio

    from proctor.core.spec import AgentLimits
    from proctor.scoring.agent import Agent, python_tool

    replies = iter(['<tool_call>{"name": "math.add", "arguments": {"a": 2, "b": 3}}</tool_call>', "It is 5."])
    prompts: list[str] = []

    def fake(jobs: list[Any], settings: Any, max_new: int) -> tuple[list[list[int]], list[int | None]]:
        prompts.extend(hermes.tokenizer.decode(j.prompt) for j in jobs)
        ids = list(hermes.tokenizer(next(replies), add_special_tokens=False)["input_ids"])
        return [ids + [hermes.tokenizer.eos_token_id]], [None]

    monkeypatch.setattr(hermes, "_generate_batch", fake)

    def add(a: int, b: int = 0) -> int:
        """Add two numbers."""
        return a + b

    agent = Agent(hermes, [python_tool(add, name="math.add")], AgentLimits(max_turns=3))
    t = asyncio.run(agent.run([Message("user", "2+3?")]))
    assert t.stop == "answered" and t.answer == "It is 5." and [r.content for r in t.turns[0].results] == ["5"]
    assert '<tool_response name="math.add">\n5\n</tool_response>' in prompts[1]


# a Llama-3.1-style template, written here: the tools as JSON in the user turn, the reply the bare call
LLAMA3 = """{%- for m in messages %}<|{{ m.role }}|>
{%- if tools and loop.last %}Respond in the format {"name": function name, "parameters": dictionary of argument name and
its value}. {% for t in tools %}{{ t | tojson }}{% endfor %}{% endif %}
{%- if m.tool_calls %}{% for tc in m.tool_calls %}{"name": "{{ tc.function.name }}", "parameters": {{ tc.function.arguments |
tojson }}}{% endfor %}{% else %}{{ m.content }}{% endif %}
{% endfor %}{% if add_generation_prompt %}<|assistant|>
{% endif %}"""


def test_llama3_bare_json_calls(tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert call_format(LLAMA3) == "llama3_json"
    out = tmp_path / "llama3"
    shutil.copytree(tiny_model_dir, out)
    (out / "chat_template.jinja").write_text(LLAMA3)
    m = HFModel(str(out))
    assert Capability.TOOLS in m.capabilities
    assert '"name": "math.add"' in m.tokenizer.decode(m.render(GenerateRequest((Message("user", "x"),), tools=(ADD,))))
    scripted(m, '{"name": "math.add", "parameters": {"a": 1}}; {"name": "math.add", "parameters": {"a": 2}}',
             monkeypatch)
    [g] = m.generate_sync([GenerateRequest((Message("user", "x"),), GenerationSettings(max_tokens=200), tools=(ADD,))])
    assert g.text == "" and [json.loads(c.arguments) for c in g.tool_calls] == [{"a": 1}, {"a": 2}]
    assert read_calls("The answer is 3.", "llama3_json") == ("The answer is 3.", ())
    assert read_calls('{"answer": 3}', "llama3_json") == ('{"answer": 3}', ())
    _, (cut,) = read_calls('{"name": "math.add", "parameters": {"a": ', "llama3_json")  # the token limit cut it
    assert call_problem(cut, ["math.add"]) is not None
    _, many = read_calls('{"name": "math.add", "parameters": {}};' * 300, "llama3_json")
    assert len(many) == 300 and {call_problem(c, ["math.add"]) for c in many} == {None}
