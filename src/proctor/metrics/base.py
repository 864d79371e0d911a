"""The `Metric` protocol and what a metric may know beyond the samples (the registry is `metrics.registry`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..core.results import (
    AnswerReading,
    BudgetCurve,
    Calibration,
    Cost,
    EpochSpread,
    JudgeAgreement,
    JudgeCorrected,
    MetricBlock,
    MetricValue,
)
from ..log.runlog import Manifest, Sample

# What a metric computes: a built-in's typed block (its `Results` field), or a `MetricValue` for any other
MetricOutput = (MetricValue | MetricBlock | dict[str, MetricBlock] | EpochSpread | Calibration | JudgeAgreement | Cost
                | AnswerReading | BudgetCurve | JudgeCorrected | float)


@dataclass(frozen=True)
class RunContext:
    """What a metric may know beyond the samples: the run's manifest (prices, judge), the bootstrap seed, the
    --no-answer policy."""

    manifest: Manifest | None = None
    seed: int = 0
    no_answer: str = "wrong"  # how the samples' unread replies were counted ("guess": 1/k already in their score)


@runtime_checkable
class Metric(Protocol):
    """A metric of a run, a pure function of its samples.

    `name` is its key in results.json: a built-in fills the `Results` field of that name; any other metric
    returns a `MetricValue`, stored under `metrics.<name>` and shown by the console summary and the report.
    `needs` names the `Sample` fields it reads (documentation, and what a sample must carry for it).
    `compute` returns None when the samples hold nothing it can be computed from (then it is left out).
    """

    name: str
    label: str
    needs: frozenset[str]

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricOutput | None: ...


class Tally(Protocol):
    """A metric gathered one sample at a time (`add`), then computed (`result`): how `proctor.metrics.results.summarize`
    reads a run in one pass without holding its samples."""

    def add(self, sample: Sample) -> None: ...

    def result(self) -> MetricOutput | None: ...


@runtime_checkable
class StreamedMetric(Metric, Protocol):
    """A metric that can be gathered one sample at a time (every built-in; a plugin may add `tally`). One without
    it is given its samples held in memory (`proctor.metrics.registry.compute_metrics`)."""

    def tally(self, context: RunContext) -> Tally: ...


def fold(tally: Tally, samples: Iterable[Sample]) -> MetricOutput | None:
    """`tally` fed every sample, then its result."""
    for s in samples:
        tally.add(s)
    return tally.result()


class Tallied:
    """Base of the built-in metrics: `compute` is `tally` fed the samples, so a run held in memory and a run read
    one sample at a time are summarized by the one implementation (the metric's tally)."""

    def tally(self, context: RunContext) -> Tally:
        raise NotImplementedError

    def compute(self, samples: Iterable[Sample], context: RunContext) -> MetricOutput | None:
        return fold(self.tally(context), samples)
