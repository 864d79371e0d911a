"""Accuracy by token budget over a ladder of retries (`run --budgets`, or `--retry-truncated` of a retry): at each
budget of the ladder, every sample as it stood after the attempts asked at or below it — the first attempt
(`Sample.first_attempt`), the ladder's middle ones (`earlier_attempts`), the record itself (`asked_at`) — counted
as `overall` counts (the run's --truncated-as and --no-answer), with the same interval and truncation bounds.
Absent for a run that is not a retry. A pure function of the samples and the manifest's ladder of budgets."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.results import BudgetCurve, BudgetStep
from ..core.spec import RunSpec
from ..log.runlog import FirstAttempt, Sample
from .accuracy import BlockTally, run_cluster
from .base import RunContext, Tallied
from .counting import no_answer_counted, truncated_as_counted
from .first_attempt import as_attempt


def asked_with(sample: Sample, spec: RunSpec) -> int | None:
    """The budget `sample` (a record of retry run `spec`'s log) was asked with: its `asked_at`; for a second attempt
    a retry written before ladders logged (no `asked_at`), that retry's budget (this run's, or — copied into a
    ladder's later step — the run retried's); else the first run's (a record copied from it, never asked again)."""
    if sample.asked_at is not None:
        return sample.asked_at
    if spec.retry_of is None:
        return spec.generation.max_tokens
    if sample.first_attempt is not None:
        return spec.retry_of.max_tokens if spec.retry_of.budgets else spec.generation.max_tokens
    return spec.retry_of.first_budget


def attempts(s: Sample, spec: RunSpec) -> list[tuple[int | None, FirstAttempt | None]]:
    """The sample's attempts in the order asked, each with the budget it was asked at (`None` for the record
    itself: the sample as logged)."""
    before: list[tuple[int | None, FirstAttempt | None]] = []
    if s.first_attempt is not None:
        before = [(a.max_tokens, a) for a in (s.first_attempt, *s.earlier_attempts)]
    return [*before, (asked_with(s, spec), None)]


@dataclass
class BudgetTally:
    """A `BlockTally` per budget of the ladder, fed each sample as it stood at that budget."""

    spec: RunSpec | None
    truncated_as: str
    no_answer: str
    budgets: list[int]
    tallies: list[BlockTally]
    asked: list[int] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        if self.spec is None or not self.budgets:
            return
        tried = [(b, s if a is None else no_answer_counted(truncated_as_counted(as_attempt(s, a), self.truncated_as),
                                                           self.no_answer))
                 for b, a in attempts(s, self.spec) if b is not None]  # each attempt as counted, once
        for i, budget in enumerate(self.budgets):
            latest = next(((b, seen) for b, seen in reversed(tried) if b <= budget), None)
            if latest is not None:
                self.asked[i] += latest[0] == budget
                self.tallies[i].add(latest[1])

    def result(self) -> BudgetCurve | None:
        if not self.asked or not any(self.asked[1:]):
            return None
        steps = [BudgetStep(max_tokens=b, asked=n, block=t.result())
                 for b, n, t in zip(self.budgets, self.asked, self.tallies, strict=True)]
        last = steps[-1].block
        return BudgetCurve(steps=steps, settled_at=settled_at(steps), still_truncated=last.n_truncated)


def settled_at(steps: list[BudgetStep]) -> int | None:
    """The smallest budget whose interval holds the accuracy of every larger budget and, where samples are still
    cut at the largest, the accuracy they would give if every one were right (None: no budget does)."""
    last = steps[-1].block if steps else None
    beyond = [last.truncated_high] if last is not None and last.n_truncated else []
    for i, step in enumerate(steps):
        low, high = step.block.ci_low, step.block.ci_high
        if low is None or high is None:
            continue
        later = [s.block.accuracy for s in steps[i + 1:]] + beyond
        if all(a is not None and low <= a <= high for a in later):
            return step.max_tokens
    return None


def ladder(spec: RunSpec | None) -> list[int]:
    """The budgets of the run's ladder, the first run's first (empty: not a retry, or a budget unknown)."""
    if spec is None or spec.retry_of is None or spec.generation.max_tokens is None:
        return []
    budgets = [*spec.retry_of.ladder, spec.generation.max_tokens]
    known = [b for b in budgets if b is not None]
    return known if len(known) == len(budgets) else []


class BudgetCurveMetric(Tallied):
    name = "budget_curve"
    label = "accuracy at every budget of a ladder of retries"
    needs = frozenset({"first_attempt", "earlier_attempts", "asked_at", "score", "outcome", "item_id", "dataset",
                       "cluster"})

    def tally(self, context: RunContext) -> BudgetTally:
        manifest = context.manifest
        spec = manifest.spec if manifest is not None else None
        budgets = ladder(spec)
        policy = manifest.truncated_as if manifest is not None else "wrong"
        tallies = [BlockTally(cluster=run_cluster(context), seed=context.seed) for _ in budgets]
        return BudgetTally(spec, policy, context.no_answer, budgets, tallies, [0] * len(budgets))


METRICS = [BudgetCurveMetric()]

__all__ = ["BudgetCurveMetric", "BudgetTally", "asked_with", "attempts", "ladder", "settled_at"]
