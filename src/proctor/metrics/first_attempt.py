"""The accuracy of a `--retry-truncated` run's first attempts (`proctor.run.retry`), beside its `overall` accuracy
after the retry: every retried sample counted as its first attempt (`Sample.first_attempt`) scored, under the run's
--truncated-as and --no-answer, with the same interval as `overall`. Absent for a run nothing was asked again in."""

from __future__ import annotations

from collections.abc import Sequence

from ..log.runlog import MetricValue, Sample
from ..stats.intervals import apply_no_answer, apply_truncated_as
from .accuracy import group_block, run_cluster
from .base import RunContext


def first_attempts(samples: Sequence[Sample]) -> list[Sample]:
    """Each sample as its first attempt scored it (a sample asked once is its own first attempt)."""
    return [s.model_copy(update={"outcome": s.first_attempt.outcome, "score": s.first_attempt.score,
                                 "output_tokens": s.first_attempt.output_tokens, "first_attempt": None})
            if s.first_attempt is not None else s for s in samples]


class FirstAttemptAccuracy:
    name = "first_attempt_accuracy"
    label = "accuracy of the first attempts (before --retry-truncated asked the truncated ones again)"
    needs = frozenset({"first_attempt", "score", "outcome", "item_id", "dataset", "cluster", "category",
                       "subcategory"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricValue | None:
        if not any(s.first_attempt is not None for s in samples):
            return None
        policy = context.manifest.truncated_as if context.manifest is not None else "wrong"
        firsts = apply_no_answer(apply_truncated_as(first_attempts(samples), policy), context.no_answer)
        block = group_block(firsts, context.seed, run_cluster(context))
        return block.estimate


METRICS = [FirstAttemptAccuracy()]
