"""A Task of choice items and a counting fake model, for runner tests that need no backend."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from proctor.core.model import (
    Capability,
    GenerateRequest,
    Generation,
    GenerationSettings,
    Loglikelihood,
    LoglikelihoodRequest,
    Message,
    ModelBase,
)
from proctor.core.spec import GenerationSpec, ScorerSpec
from proctor.data.records import Item, Modality
from proctor.data.tasks import Task, text_hash
from proctor.log.runlog import RunLog
from proctor.run.pipeline import evaluate
from proctor.run.runner import RunOptions


class LetterPrompts:
    kinds = ("zero_shot",)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        options = "\n".join(f"({k}) {v}" for k, v in (item.choices or {}).items())
        return (Message("user", f"{item.prompt}\n{options}"),)

    def logprob_context(self, item: Item) -> str:
        return f"{item.prompt}\nAnswer:"

    def template_hash(self, kind: str) -> str:
        return text_hash("letters", kind)


class CountingModel(ModelBase):
    """Answers 'The answer is (X)' with X = the gold letter for even items, 'A' otherwise;
    fails requests whose prompt contains a marker in `fail_on`."""

    def __init__(self, gold: dict[str, str], fail_on: Sequence[str] = (), crash_after: int | None = None) -> None:
        self.name = "fake:counting"
        self.capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD})
        self.gold = gold
        self.fail_on = list(fail_on)
        self.crash_after = crash_after
        self.calls = 0
        self.requests = 0

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.calls += 1
        if self.crash_after is not None and self.calls > self.crash_after:
            raise RuntimeError("simulated crash")
        self.requests += len(requests)
        out = []
        for r in requests:
            text = r.messages[-1].content
            if any(m in text for m in self.fail_on):
                out.append(Generation(error="HTTP 500 after 5 retries"))
                continue
            qid = text.split(" ", 1)[0]
            letter = self.gold[qid] if int(qid.split("-")[1]) % 2 == 0 else "A"
            out.append(Generation(text=f"Thinking... The answer is ({letter})", input_tokens=10, output_tokens=5))
        return out

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        self.calls += 1
        self.requests += len(requests)
        return [Loglikelihood(logprob=-float(len(r.continuation)), n_tokens=1) for r in requests]

    def describe(self) -> dict[str, Any]:
        return {"spec": self.name, "api_key_env": "FAKE_KEY"}


def make_items(n: int) -> list[Item]:
    items = []
    for i in range(n):
        gold = "ABCD"[i % 4]
        items.append(
            Item(
                identifier=f"q-{i}",
                modality=Modality.CHOICE4,
                prompt=f"q-{i} What is item {i}?",
                response=gold,
                choices={"A": "alpha", "B": "beta", "C": "gamma", "D": "delta"},
                category=["math", "law"][i % 2],
                difficulty=(i % 5) / 5,
            )
        )
    return items


@pytest.fixture
def task() -> Task:
    return Task(name="toy", items=make_items(40), prompts=LetterPrompts(), source={"source": "test"})


@pytest.fixture
def gold(task: Task) -> dict[str, str]:
    return {it.identifier: str(it.response) for it in task.items}


_SCORER_KEYS = {"mode", "prompt_kind", "judge_agreement", "extract", "no_answer", "truncated_as"}


def run_with(task: Task, model: Any, judge: Any = None, settings: GenerationSettings | None = None,
             epochs: int = 1, **kw: Any) -> RunLog:
    """`proctor.evaluate` with the spec's scorer fields and the run options given as keywords side by side."""
    scorer = ScorerSpec(**{k: kw.pop(k) for k in list(kw) if k in _SCORER_KEYS})
    generation = settings if settings is not None else GenerationSpec()
    return evaluate(task, model, RunOptions(**kw), judge, scorer=scorer, generation=generation, epochs=epochs)
