"""A benchmark whose samples are trajectories: each item of an agent prompt kind is played through the agent loop
(`proctor.scoring.agent`) and its trajectory scored by the kind's answer rule (`AnswerRule.score_trajectory`).

A prompt builder declares its agent kinds (`agent_kinds`) and, per item, what the loop gets (`agent_task(item,
kind) -> AgentTask`): the opening messages, the tools it runs, the functions only declared (their calls are the
answer: BFCL's single-turn categories) and the first turn's tool choice. `proctor.run.chunk` runs every
trajectory of a chunk at once, each model turn through the request cache (the model it is given), and makes one
sample of each, its `trajectory` the record. The trajectory's end is the sample's: a limit is `truncated`, a failed
request `error` (asked again on resume), otherwise the rule's verdict (docs/agents.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.model import Capability, GenerationSpec, Message, Model
from ..core.spec import AgentLimits
from ..core.tools import ToolChoice, ToolDef
from ..core.trajectory import Trajectory
from ..data.records import Item
from ..log.runlog import GenerationDetails, Outcome
from ..util.errors import ProctorError
from .agent import Agent, Tool, stop_outcome
from .base import Answered, Request, Scored, Usage
from .extract import EXTRACTOR_VERSION, NONE
from .scorers import settings_for_epoch

if TYPE_CHECKING:
    from ..data.tasks import Task

AGENT_SCORER = "agent"


@dataclass(frozen=True)
class AgentTask:
    """What one item gives the agent loop: its opening messages, the tools that run, the functions only declared,
    the first turn's tool choice, and whether a reply's calls are the answer (`calls_answer`: the first reply that
    calls ends the trajectory, nothing run: BFCL's single-turn categories)."""

    messages: tuple[Message, ...]
    tools: tuple[Tool, ...] = ()
    declared: tuple[ToolDef, ...] = ()
    first_choice: ToolChoice | None = None
    calls_answer: bool = False


def agent_kinds(task: Task) -> tuple[str, ...]:
    """The task's prompt kinds whose samples are trajectories (none for every other benchmark)."""
    kinds = getattr(task.prompts, "agent_kinds", ())
    return tuple(kinds) if isinstance(kinds, tuple | list) else ()


def is_agent_kind(task: Task, kind: str | None) -> bool:
    return kind is not None and kind in agent_kinds(task)


@dataclass(frozen=True)
class AgentScorer:
    """Play each item's trajectory in prompt kind `prompt_kind` under `limits`; score it by the kind's rule."""

    prompt_kind: str
    settings: GenerationSpec = field(default_factory=GenerationSpec)
    epochs: int = 1
    limits: AgentLimits = field(default_factory=AgentLimits)
    no_answer: str = "wrong"
    kind: str = AGENT_SCORER
    mode: str = "generate"
    capability: Capability = Capability.GENERATE

    def check(self, task: Task) -> None:
        if not is_agent_kind(task, self.prompt_kind):
            raise ProctorError(f"{task.name} has no agent prompt {self.prompt_kind!r}")
        rule = task.answer_rule(self.prompt_kind)
        if rule is None or rule.score_trajectory is None:
            raise ProctorError(f"internal: {task.name}'s {self.prompt_kind!r} prompt has no trajectory rule")

    def identity(self) -> dict[str, Any]:
        # the limits are the spec's `agent` (in the run id), not repeated here
        return {"scorer": self.kind, "prompt_kind": self.prompt_kind, "generation": self.settings.as_dict(),
                "extractor": EXTRACTOR_VERSION, "no_answer": self.no_answer}

    def template_hash(self, task: Task) -> str:
        return task.prompts.template_hash(self.prompt_kind)

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        return []  # a trajectory's requests are made turn by turn (`play`)

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        raise ProctorError("internal: an agent scorer scores trajectories (proctor.run.chunk plays them)")

    async def play(self, task: Task, model: Model, item: Item, epoch: int) -> tuple[Scored, Trajectory | None]:
        """The item's trajectory with `model` (the cached one: each turn through the request cache) and its
        verdict; a task the loop refuses (two tools of one name) is the sample's error."""
        spec: AgentTask = task.prompts.agent_task(item, self.prompt_kind)  # type: ignore[attr-defined]
        try:
            agent = Agent(model, spec.tools, self.limits, settings_for_epoch(self.settings, epoch, self.epochs),
                          first_choice=spec.first_choice, declared=spec.declared, calls_answer=spec.calls_answer)
        except ValueError as e:
            return Scored(Outcome.ERROR, GenerationDetails(), error=str(e), prompt=_prompt(spec.messages)), None
        trajectory = await agent.run(spec.messages)
        return self.verdict(task, item, trajectory), trajectory

    def verdict(self, task: Task, item: Item, t: Trajectory) -> Scored:
        """The sample's verdict on its trajectory: its end (a limit, a failed request) or the kind's rule's."""
        last = t.turns[-1] if t.turns else None
        common: dict[str, Any] = {"prompt": _prompt(t.messages), "raw_output": last.text if last else None,
                                  "usage": usage_of_trajectory(t)}
        outcome = stop_outcome(t)
        if outcome is Outcome.ERROR:
            return Scored(Outcome.ERROR, GenerationDetails(), error=t.stop_detail or "the model failed", **common)
        if outcome is Outcome.TRUNCATED:
            return Scored(Outcome.TRUNCATED, GenerationDetails(), score=0.0, extraction_rule=f"agent:{t.stop}",
                          **common)
        if not item.is_scored:
            return Scored(Outcome.UNSCORED, GenerationDetails(), extraction_rule="unscored", **common)
        rule = task.answer_rule(self.prompt_kind)
        assert rule is not None and rule.score_trajectory is not None  # `check` made sure
        verdict: Scored = rule.score_trajectory(item, t)
        return Scored(verdict.outcome, verdict.details, score=verdict.score, extracted=verdict.extracted,
                      extraction_rule=verdict.extraction_rule or NONE, ambiguous=verdict.ambiguous, **common)


def usage_of_trajectory(t: Trajectory) -> Usage:
    """The trajectory's tokens over every turn (None where a turn's server did not say), its model time and the
    last turn's finish reason and reasoning."""
    turns = t.turns
    last = turns[-1] if turns else None
    inputs = [x.input_tokens for x in turns]
    outputs = [x.output_tokens for x in turns]
    latencies = [x.latency_s for x in turns]
    return Usage(input_tokens=sum(v for v in inputs if v is not None) if turns and None not in inputs else None,
                 output_tokens=sum(v for v in outputs if v is not None) if turns and None not in outputs else None,
                 latency_s=sum(v for v in latencies if v is not None) if turns and None not in latencies else None,
                 finish_reason=last.finish_reason if last else None, reasoning=last.reasoning if last else None)


def _prompt(messages: Sequence[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


__all__ = ["AGENT_SCORER", "AgentScorer", "AgentTask", "agent_kinds", "is_agent_kind", "usage_of_trajectory"]
