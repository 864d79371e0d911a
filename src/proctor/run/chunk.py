"""One chunk of a run: ask the model everything the chunk's items need in one call, score each, make samples."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from ..core.model import Capability, GenerateRequest, LoglikelihoodRequest, Model
from ..core.trajectory import Trajectory
from ..data.records import Item
from ..data.tasks import Task, cluster_value
from ..log.runlog import Sample
from ..scoring.agent_scorer import AgentScorer
from ..scoring.base import Answer, Answered, Request, Scored, Scorer
from ..util.progress import expect
from .cache import CachedModel


async def _ask(model: Model, capability: Capability, requests: Sequence[Request]) -> list[Answer]:
    """Send one scorer's requests (all of one kind) to the model in one batch-first call."""
    if capability is Capability.GENERATE:
        gen = [r for r in requests if isinstance(r, GenerateRequest)]
        return list(await model.generate(gen))
    ll = [r for r in requests if isinstance(r, LoglikelihoodRequest)]
    return list(await model.loglikelihood(ll))


def sample_of(task: Task, item: Item, epoch: int, scorer: Scorer, v: Scored,
              cached_requests: int | None = None, trajectory: Trajectory | None = None) -> Sample:
    return Sample(
        sample_id=f"{item.identifier}#{epoch}", item_id=item.identifier, epoch=epoch, dataset=task.name,
        category=item.category, subcategory=item.subcategory, modality=item.modality.value,
        difficulty=item.difficulty, mode=scorer.mode, reference=item.model_dump(mode="json")["response"],
        prompt=v.prompt, raw_output=v.raw_output, extracted=v.extracted, extraction_rule=v.extraction_rule,
        ambiguous=v.ambiguous, score=v.score, outcome=v.outcome, error=v.error, details=v.details,
        cluster=cluster_value(item, task.cluster),
        input_tokens=v.usage.input_tokens, output_tokens=v.usage.output_tokens, latency_s=v.usage.latency_s,
        finish_reason=v.usage.finish_reason, reasoning=v.usage.reasoning, cached_requests=cached_requests,
        trajectory=trajectory,
    )


async def score_chunk(task: Task, model: Model, scorer: Scorer, plan: Sequence[tuple[Item, int]]) -> list[Sample]:
    """Ask the model everything `plan` needs in one call, score each item, return its samples (an agent scorer:
    every trajectory of the chunk played at once, `_agent_chunk`)."""
    if isinstance(scorer, AgentScorer):
        return await _agent_chunk(task, model, scorer, plan)
    per_item = [scorer.requests(task, item, epoch) for item, epoch in plan]
    unique = list(dict.fromkeys(r for reqs in per_item for r in reqs))  # e.g. PMI's shared unconditionals
    expect(requests=len(unique))  # a backend's report(requests=k) is then k/len(unique) of this call
    by_request = dict(zip(unique, await _ask(model, scorer.capability, unique), strict=True))
    answers = [by_request[r] for reqs in per_item for r in reqs]
    batch, offset = [], 0
    for (item, epoch), reqs in zip(plan, per_item, strict=True):
        batch.append(Answered(item, epoch, reqs, answers[offset : offset + len(reqs)]))
        offset += len(reqs)
    batch = await _second_asks(task, model, scorer, batch)
    verdicts = await scorer.score(task, batch)
    counted = isinstance(model, CachedModel)  # without the cache: not counted (None)
    return [sample_of(task, a.item, a.epoch, scorer, as_sent(model, a, v),
                      sum(r.cached for r in a.answers) if counted else None)
            for a, v in zip(batch, verdicts, strict=True)]


async def _agent_chunk(task: Task, model: Model, scorer: AgentScorer,
                       plan: Sequence[tuple[Item, int]]) -> list[Sample]:
    """Each (item, epoch)'s trajectory, played concurrently (each model turn through `model`: the request cache),
    as its sample; `cached_requests` counts the turns the cache answered."""
    expect(requests=len(plan))  # at least a turn each
    played = await asyncio.gather(*(scorer.play(task, model, item, epoch) for item, epoch in plan))
    counted = isinstance(model, CachedModel)
    return [sample_of(task, item, epoch, scorer, v, sum(t.cached for t in traj.turns) if counted and traj else
                      (0 if counted else None), traj)
            for (item, epoch), (v, traj) in zip(plan, played, strict=True)]


async def _second_asks(task: Task, model: Model, scorer: Scorer, batch: list[Answered]) -> list[Answered]:
    """Each answered item with the second ask its scorer wants (MathArena's: no boxed answer read) asked, in one
    call, and added to its requests and answers."""
    wants = getattr(scorer, "second_request", None)
    if wants is None:
        return batch
    wanted: list[GenerateRequest | None] = [wants(task, a) for a in batch]
    todo = [r for r in wanted if r is not None]
    if not todo:
        return batch
    expect(requests=len(todo))
    replies = iter(await _ask(model, scorer.capability, todo))
    return [a if r is None else Answered(a.item, a.epoch, [*a.requests, r], [*a.answers, next(replies)])
            for a, r in zip(batch, wanted, strict=True)]


def as_sent(model: Model, answered: Answered, verdict: Scored) -> Scored:
    """`verdict` recording the prompt as the model sent it (`Model.sent_prompt`: a completion's text, or chat
    messages), the decision the backend sends by; a log-likelihood sample keeps its context."""
    request = answered.requests[0] if answered.requests else None
    if not isinstance(request, GenerateRequest):
        return verdict
    return replace(verdict, prompt=model.sent_prompt(request))


__all__ = ["as_sent", "sample_of", "score_chunk"]
