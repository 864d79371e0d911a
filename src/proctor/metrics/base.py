"""The `Metric` protocol and what a metric may know beyond the samples (the registry is `metrics.registry`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..log.runlog import (
    AnswerReading,
    Calibration,
    Cost,
    EpochSpread,
    JudgeAgreement,
    Manifest,
    MetricBlock,
    MetricValue,
    Sample,
)

# What a metric computes: a built-in's typed block (its `Results` field), or a `MetricValue` for any other
MetricOutput = (MetricValue | MetricBlock | dict[str, MetricBlock] | EpochSpread | Calibration | JudgeAgreement | Cost
                | AnswerReading | float)


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
    """A metric gathered one sample at a time (`add`), then computed (`result`): what a streamed summary
    (`proctor.log.results.summarize_stream`) asks of a metric, so that a run is summarized without holding its
    samples. `result` equals the metric's `compute` over the same samples in the same order, to the last digit."""

    def add(self, sample: Sample) -> None: ...

    def result(self) -> MetricOutput | None: ...


@runtime_checkable
class StreamedMetric(Metric, Protocol):
    """A metric that can also be gathered one sample at a time (every built-in; a plugin may add `tally`). One
    without it is given its samples held in memory (`proctor.metrics.registry.compute_metrics_stream`)."""

    def tally(self, context: RunContext) -> Tally: ...
