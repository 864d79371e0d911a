"""acc_norm: log-likelihood multiple choice re-scored by the per-character-normalised choice."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.results import MetricBlock
from ..log.runlog import Outcome, Sample
from .accuracy import BlockTally, run_cluster
from .base import RunContext, Tallied

ACC_NORM = "acc_norm_correct"


def as_acc_norm(s: Sample) -> Sample:
    """The sample re-scored by its per-character-normalized choice."""
    if ACC_NORM not in s.details or not s.scored:
        return s
    ok = bool(s.details[ACC_NORM])
    return s.model_copy(update={"score": 1.0 if ok else 0.0, "outcome": Outcome.CORRECT if ok else Outcome.WRONG})


class AccNorm(Tallied):
    name = "acc_norm"
    label = "acc_norm (per char)"
    needs = frozenset({"details", "score", "outcome"})

    def tally(self, context: RunContext) -> AccNormTally:
        return AccNormTally(BlockTally(cluster=run_cluster(context), seed=context.seed))


@dataclass
class AccNormTally:
    """`AccNorm` gathered one sample at a time (None at the end when no sample carried acc_norm)."""

    block: BlockTally
    seen: bool = False

    def add(self, s: Sample) -> None:
        carries = ACC_NORM in s.details
        self.seen = self.seen or carries
        if carries or not s.scored:
            self.block.add(as_acc_norm(s))

    def result(self) -> MetricBlock | None:
        return self.block.result() if self.seen else None
