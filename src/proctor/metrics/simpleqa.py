"""SimpleQA's five numbers, as openai/simple-evals' `SimpleQAEval.__call__` aggregates them.

Over the samples its grader graded (`proctor.scoring.simpleqa`; a judge error is not graded, where simple-evals
would have stopped): is_correct, is_incorrect and is_not_attempted (the share of grades A, B and C),
accuracy_given_attempted (is_correct / (is_correct + is_incorrect), 0 when nothing was attempted) and f1 (their
harmonic mean with is_correct, 0 when both are 0). None for runs without SimpleQA grades.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ..core.results import MetricValue
from ..log.runlog import Sample
from ..scoring.simpleqa import GRADES, JUDGE_NAME
from .base import RunContext, Tallied

NAMES = ("is_correct", "is_incorrect", "is_not_attempted", "accuracy_given_attempted", "f1")


def simpleqa_metrics(grades: Sequence[str]) -> dict[str, float]:
    """simple-evals' aggregate metrics of a list of grade letters (not empty)."""
    return simpleqa_of_counts(Counter(grades), len(grades))


def simpleqa_of_counts(counts: Mapping[str, int], n: int) -> dict[str, float]:
    """`simpleqa_metrics` from how many of the `n` grades are each letter."""
    out = {name: counts.get(letter, 0) / n
           for name, letter in (("is_correct", "A"), ("is_incorrect", "B"), ("is_not_attempted", "C"))}
    attempted = out["is_correct"] + out["is_incorrect"]
    out["accuracy_given_attempted"] = out["is_correct"] / attempted if attempted > 0 else 0
    both = out["accuracy_given_attempted"] + out["is_correct"]
    out["f1"] = 2 * out["accuracy_given_attempted"] * out["is_correct"] / both if both > 0 else 0
    return out


class SimpleQAMetric(Tallied):
    """One of simple-evals' five SimpleQA numbers (`NAMES`)."""

    needs = frozenset({"details", "outcome"})

    def __init__(self, which: str) -> None:
        self.which = which
        self.name = f"simpleqa_{which}"
        self.label = f"SimpleQA {which.replace('_', ' ')}"

    def tally(self, context: RunContext) -> GradesTally:
        return GradesTally(self.which)


@dataclass
class GradesTally:
    """`SimpleQAMetric` gathered one sample at a time: how many graded samples got each letter."""

    which: str
    counts: Counter[str] = field(default_factory=Counter)

    def add(self, s: Sample) -> None:
        grade = s.details.get("judge_grade")
        if s.scored and s.details.get("judge_version") == JUDGE_NAME and grade in GRADES:
            self.counts[str(grade)] += 1

    def result(self) -> MetricValue | None:
        n = sum(self.counts.values())
        if not n:
            return None
        return MetricValue(value=simpleqa_of_counts(self.counts, n)[self.which], n=n, method="simple-evals")


METRICS = tuple(SimpleQAMetric(name) for name in NAMES)
