"""The accuracy of a `--retry-truncated` run's first attempts (`proctor.run.retry`), beside its `overall` accuracy
after the retry: every retried sample counted as its first attempt (`Sample.first_attempt`) scored, under the run's
--truncated-as and --no-answer, with the same interval as `overall`. Absent for a run nothing was asked again in."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.results import MetricValue
from ..log.runlog import FirstAttempt, Sample
from .accuracy import BlockTally, run_cluster
from .base import RunContext, Tallied
from .counting import no_answer_counted, truncated_as_counted


def first_attempt(s: Sample) -> Sample:
    """The sample as its first attempt scored it (a sample asked once is its own first attempt)."""
    return s if s.first_attempt is None else as_attempt(s, s.first_attempt)


def as_attempt(s: Sample, attempt: FirstAttempt) -> Sample:
    """The sample as one of its earlier attempts scored it (`first_attempt`, a ladder's `earlier_attempts`)."""
    return s.model_copy(update={"outcome": attempt.outcome, "score": attempt.score,
                                "output_tokens": attempt.output_tokens, "first_attempt": None, "earlier_attempts": []})


@dataclass
class FirstAttemptTally:
    """`overall`'s tally fed each sample's first attempt, counted by the run's policies (a sample already counted
    by them is its own first attempt; a retried one's first attempt is counted here)."""

    truncated_as: str
    no_answer: str
    block: BlockTally
    retried: int = 0

    def add(self, s: Sample) -> None:
        if s.first_attempt is not None:
            self.retried += 1
            s = no_answer_counted(truncated_as_counted(first_attempt(s), self.truncated_as), self.no_answer)
        self.block.add(s)

    def result(self) -> MetricValue | None:
        return self.block.result().estimate if self.retried else None


class FirstAttemptAccuracy(Tallied):
    name = "first_attempt_accuracy"
    label = "accuracy of the first attempts (before --retry-truncated asked the truncated ones again)"
    needs = frozenset({"first_attempt", "score", "outcome", "item_id", "dataset", "cluster", "category",
                       "subcategory"})

    def tally(self, context: RunContext) -> FirstAttemptTally:
        policy = context.manifest.truncated_as if context.manifest is not None else "wrong"
        return FirstAttemptTally(policy, context.no_answer, BlockTally(cluster=run_cluster(context), seed=context.seed))


METRICS = [FirstAttemptAccuracy()]
