"""Judge agreement: how often the LLM judge agreed with exact-match scoring on items checked both ways."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.results import JudgeAgreement
from ..log.runlog import JudgeCheck, Outcome, Sample
from ..scoring.judge import judge_agreement
from .base import RunContext, Tallied


def agreement_of(samples: Iterable[Sample]) -> JudgeAgreement | None:
    """Over the samples that carry a `judge_check` (`--judge-agreement N`); None when none do."""
    acc = AgreementTally()
    for s in samples:
        acc.add(s)
    return acc.result()


class JudgeAgreementMetric(Tallied):
    name = "judge_agreement"
    label = "judge agreement"
    needs = frozenset({"details", "outcome"})

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
