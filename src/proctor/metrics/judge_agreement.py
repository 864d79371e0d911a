"""Judge agreement: how often the LLM judge agreed with exact-match scoring on items checked both ways."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..log.runlog import JudgeAgreement, JudgeCheck, Outcome, Sample
from ..scoring.judge import judge_agreement
from .base import RunContext


def agreement_of(samples: Sequence[Sample]) -> JudgeAgreement | None:
    """Over the samples that carry a `judge_check` (`--judge-agreement N`); None when none do."""
    pairs = []
    for s in samples:
        check = s.details.get("judge_check")
        if isinstance(check, JudgeCheck):
            pairs.append((check.outcome, s.outcome))
    return judge_agreement(pairs) if pairs else None


class JudgeAgreementMetric:
    name = "judge_agreement"
    label = "judge agreement"
    needs = frozenset({"details", "outcome"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> JudgeAgreement | None:
        return agreement_of(samples)

    def tally(self, context: RunContext) -> AgreementTally:
        return AgreementTally()


@dataclass
class AgreementTally:
    """`agreement_of` gathered one sample at a time (the pairs of the samples checked both ways: a few)."""

    pairs: list[tuple[Outcome, Outcome]] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        check = s.details.get("judge_check")
        if isinstance(check, JudgeCheck):
            self.pairs.append((check.outcome, s.outcome))

    def result(self) -> JudgeAgreement | None:
        return judge_agreement(self.pairs) if self.pairs else None
