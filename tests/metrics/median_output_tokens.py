"""A metric defined outside proctor in one module: the median output tokens of the answered samples."""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from proctor.core.results import MetricValue
from proctor.log.runlog import Outcome, Sample
from proctor.metrics import RunContext


class MedianOutputTokens:
    name = "median_output_tokens"
    label = "median output tokens"
    needs = frozenset({"output_tokens", "outcome"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> MetricValue | None:
        tokens = [s.output_tokens for s in samples if s.outcome is not Outcome.ERROR and s.output_tokens is not None]
        if not tokens:
            return None
        return MetricValue(value=float(statistics.median(tokens)), n=len(tokens), method="median")
