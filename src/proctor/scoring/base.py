"""The Scorer seam: what an item asks of a model, and how a sample is scored from the answers.

Every kind of task (generation with answer extraction, choice log-likelihood, probsem suites, LLM
judge) is one `Scorer`; `proctor.run.runner.evaluate_async` drives them all the same way:

    requests = scorer.requests(task, item, epoch)         # what the item needs from the model
    answers  = await model.generate/loglikelihood(...)    # through the cache, per answer
    scored   = await scorer.score(task, answered_batch)   # typed verdicts, one per item

A scorer never calls the model it scores; a judge calls its own judge model.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..core.model import Capability, GenerateRequest, Generation, Loglikelihood, LoglikelihoodRequest
from ..data.records import Item
from ..log.runlog import Outcome, SampleDetails

if TYPE_CHECKING:
    from ..data.tasks import Task

Request = GenerateRequest | LoglikelihoodRequest
Answer = Generation | Loglikelihood


@dataclass(frozen=True)
class Answered:
    """One item (one epoch) with the requests made for it and the model's answers, in order."""

    item: Item
    epoch: int
    requests: Sequence[Request]
    answers: Sequence[Answer]

    @property
    def error(self) -> str | None:
        """The first failed answer's message: an errored request makes the sample an error, never wrong."""
        return next((a.error for a in self.answers if a.error is not None), None)


JUDGE_PENDING = "judge_pending"  # the extraction rule of a prose answer left for the LLM judge


@dataclass(frozen=True)
class Usage:
    """What answering one sample cost and how it ended: the `Sample` fields a scorer takes from the answers."""

    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    reasoning: str | None = None  # the thought, apart from the answer


@dataclass(frozen=True)
class Scored:
    """The one verdict type: a rule's or a judge's verdict on one answer, and a scorer's on one sample (the
    `Sample` fields that depend on the answers; the prompt, raw output and usage are set by the scorer)."""

    outcome: Outcome
    details: SampleDetails  # typed by the scorer's kind
    score: float | None = None  # credit in [0, 1]; None when unscored or errored
    extracted: str | None = None
    extraction_rule: str | None = None
    ambiguous: bool | None = None  # the reference rule and proctor's reader disagree (None: one reader)
    error: str | None = None
    prompt: list[dict[str, str]] | str = ""
    raw_output: str | None = None
    usage: Usage = field(default_factory=lambda: Usage())  # input/output tokens, latency, finish reason…

    @property
    def correct(self) -> bool:
        return self.outcome is Outcome.CORRECT

    @property
    def needs_judge(self) -> bool:
        """A prose answer no rule can score: UNSCORED until the LLM judge grades it."""
        return self.extraction_rule == JUDGE_PENDING


class Scorer(Protocol):
    """One kind of task: the requests an item needs and the verdict from the answers."""

    @property
    def kind(self) -> str:
        """"generation" | "choice" | "suite" | "judge": the sample details' `kind`."""
        ...

    @property
    def mode(self) -> str:
        """"generate" | "logprob": recorded on every sample and in the manifest."""
        ...

    @property
    def capability(self) -> Capability:
        """What the model must do; checked before the run starts."""
        ...

    def check(self, task: Task) -> None:
        """Raise ProctorError, before anything runs, for items this scorer cannot score."""
        ...

    def identity(self) -> dict[str, Any]:
        """The settings that change the numbers (part of the run id and the manifest)."""
        ...

    def template_hash(self, task: Task) -> str:
        """A hash of the exact text template the model sees (the manifest's prompt_template_hash)."""
        ...

    def requests(self, task: Task, item: Item, epoch: int) -> list[Request]:
        """What `item` needs from the model on `epoch`; every request of one scorer is of one kind."""
        ...

    async def score(self, task: Task, batch: Sequence[Answered]) -> list[Scored]:
        """One verdict per answered item, in order (a batch lets a judge grade many at once)."""
        ...


def usage_of(answers: Sequence[Answer]) -> Usage:
    """Token counts, latency and finish reason of a one-generation sample; for log-likelihoods every token of
    every request, its context included (None when a backend did not say: an answer cached before it did)."""
    if len(answers) != 1 or not isinstance(answers[0], Generation):
        counts = [a.input_tokens for a in answers if isinstance(a, Loglikelihood)]
        return Usage(input_tokens=sum(counts) if counts and None not in counts else None)  # type: ignore[arg-type]
    g = answers[0]
    return Usage(input_tokens=g.input_tokens, output_tokens=g.output_tokens, latency_s=g.latency_s,
                 finish_reason=g.finish_reason, reasoning=g.reasoning)
