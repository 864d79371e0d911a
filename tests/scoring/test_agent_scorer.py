"""scoring.agent_scorer: an agent kind's item played through the agent loop, its trajectory the sample's verdict:
calls as the answer (declared functions: nothing runs), a run tool's result read back, each limit and a failed
request a named outcome, the tokens of every turn counted, a task the loop refuses an error sample."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from proctor.core.model import Capability, GenerateRequest, Generation, Message, ModelBase
from proctor.core.spec import AgentLimits
from proctor.core.tools import ToolCall, ToolDef
from proctor.core.trajectory import Trajectory
from proctor.data.records import Item, Modality
from proctor.data.tasks import Task
from proctor.log.runlog import GenerationDetails, Outcome
from proctor.scoring.agent import python_tool
from proctor.scoring.agent_scorer import (
    AgentScorer,
    AgentTask,
    agent_kinds,
    is_agent_kind,
    usage_of_trajectory,
)
from proctor.scoring.base import Scored
from proctor.scoring.extract import AnswerRule, Extraction

Script = Callable[[GenerateRequest], Generation]
SUM = ToolDef("sum", "Add.", {"type": "object", "properties": {"a": {"type": "integer"}}})


class FakeModel(ModelBase):
    capabilities = frozenset({Capability.GENERATE, Capability.TOOLS})

    def __init__(self, script: Script) -> None:
        self.name, self.script = "fake", script
        self.requests: list[GenerateRequest] = []

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.requests.extend(requests)
        return [self.script(r) for r in requests]


def _called(item: Any, t: Trajectory) -> Scored:
    """The test rule: right when the last turn calls `sum` with a = the item's answer."""
    calls = t.turns[-1].tool_calls
    ok = len(calls) == 1 and calls[0].arguments == f'{{"a": {item.response}}}'
    return Scored(Outcome.CORRECT if ok else Outcome.WRONG, GenerationDetails(), score=float(ok),
                  extracted=calls[0].arguments if calls else None, extraction_rule="test-calls")


RULE = AnswerRule("test-calls", "grader", "here", read=lambda text: Extraction(None, "none"), score_trajectory=_called)


@dataclass
class Prompts:
    tools: tuple[Any, ...] = ()
    kinds: tuple[str, ...] = ("plain", "tools")
    agent_kinds: tuple[str, ...] = ("tools",)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("user", item.prompt),)

    def agent_task(self, item: Item, kind: str) -> AgentTask:
        if self.tools:
            return AgentTask(self.messages(item, kind), tools=self.tools)
        return AgentTask(self.messages(item, kind), declared=(SUM,), calls_answer=True)

    def template_hash(self, kind: str) -> str:
        return "h"


def _task(prompts: Prompts | None = None) -> Task:
    item = Item(identifier="t.1", modality=Modality.SINGLE_VALUE, prompt="add 2", response="2")
    return Task(name="t", items=[item], prompts=prompts or Prompts(), answer_rules={"tools": RULE})  # type: ignore[arg-type]


def _play(script: Script, limits: AgentLimits | None = None, prompts: Prompts | None = None
          ) -> tuple[Scored, Trajectory | None, FakeModel]:
    task, model = _task(prompts), FakeModel(script)
    scorer = AgentScorer("tools", limits=limits or AgentLimits())
    scorer.check(task)
    v, t = asyncio.run(scorer.play(task, model, task.items[0], 0))
    return v, t, model


def _calls(*args: str) -> Generation:
    return Generation(tool_calls=tuple(ToolCall(f"c{i}", "sum", a) for i, a in enumerate(args)),
                      finish_reason="tool_calls", input_tokens=7, output_tokens=3, latency_s=0.5)


def test_the_agent_kinds_are_the_builders() -> None:
    task = _task()
    assert agent_kinds(task) == ("tools",) and is_agent_kind(task, "tools") and not is_agent_kind(task, "plain")


def test_declared_functions_one_turn_its_calls_the_answer() -> None:
    v, t, model = _play(lambda r: _calls('{"a": 2}'))
    assert t is not None and t.stop == "called" and len(t.turns) == 1 and t.turns[0].results == []
    assert v.outcome is Outcome.CORRECT and v.extraction_rule == "test-calls"
    assert model.requests[0].tools == (SUM,) and v.prompt == [{"role": "user", "content": "add 2"}]
    wrong, _, _ = _play(lambda r: _calls('{"a": 3}'))
    assert wrong.outcome is Outcome.WRONG


def test_a_reply_without_calls_is_scored_by_the_rule_too() -> None:
    v, t, _ = _play(lambda r: Generation(text="I cannot.", input_tokens=4, output_tokens=2))
    assert t is not None and t.stop == "answered" and v.outcome is Outcome.WRONG and v.raw_output == "I cannot."


def test_run_tools_results_go_back_and_every_turns_tokens_count() -> None:
    def add(a: int) -> int:
        return a + 40

    def script(r: GenerateRequest) -> Generation:
        if r.messages[-1].role == "tool":
            return Generation(text="done " + r.messages[-1].content, input_tokens=11, output_tokens=1, latency_s=0.25)
        return _calls('{"a": 2}')

    v, t, _ = _play(script, prompts=Prompts(tools=(python_tool(add, name="sum"),)))
    assert t is not None and t.stop == "answered" and t.turns[0].results[0].content == "42"
    assert v.raw_output == "done 42" and v.outcome is Outcome.WRONG  # the rule reads the last turn: no call
    assert (v.usage.input_tokens, v.usage.output_tokens, v.usage.latency_s) == (18, 4, 0.75)


def test_a_limit_is_truncated_and_names_itself_a_failed_request_an_error() -> None:
    def add(a: int) -> int:
        return a

    v, t, _ = _play(lambda r: _calls('{"a": 1}'), AgentLimits(max_turns=3), Prompts(tools=(python_tool(add, name="sum"),)))
    assert t is not None and t.stop == "max_turns" and v.outcome is Outcome.TRUNCATED
    assert v.extraction_rule == "agent:max_turns" and v.score == 0.0
    failed, t, _ = _play(lambda r: Generation(error="HTTP 500: boom"))
    assert t is not None and t.stop == "model_error" and failed.outcome is Outcome.ERROR and failed.error == "HTTP 500: boom"


def test_a_task_the_loop_refuses_is_the_samples_error() -> None:
    dup = python_tool(lambda a: a, name="sum")
    prompts = Prompts(tools=(dup, dup))
    v, t, _ = _play(lambda r: _calls(), prompts=prompts)
    assert t is None and v.outcome is Outcome.ERROR and "share a name" in str(v.error)


def test_usage_is_unknown_when_a_turn_did_not_say() -> None:
    t = Trajectory(turns=[{"index": 0, "input_tokens": 3, "output_tokens": None}])  # type: ignore[list-item]
    u = usage_of_trajectory(t)
    assert (u.input_tokens, u.output_tokens) == (3, None)
    assert usage_of_trajectory(Trajectory()).input_tokens is None
