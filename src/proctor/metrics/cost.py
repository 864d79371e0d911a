"""Cost of the run at the manifest's prices: total (the model's and the judge's), per sample, per correct."""

from __future__ import annotations

from collections.abc import Sequence

from ..log.runlog import Cost, Manifest, Outcome, Sample
from ..run.pricing import Price, run_cost
from ..scoring.judge import judge_usages
from .base import RunContext


def run_cost_of(samples: Sequence[Sample], manifest: Manifest) -> Cost | None:
    """None when the run has no price; errors with no usage are not billed."""
    if manifest.price is None:
        return None
    billed = [s for s in samples
              if not (s.outcome is Outcome.ERROR and s.input_tokens is None and s.output_tokens is None)]
    correct = sum(s.outcome is Outcome.CORRECT for s in samples)
    judged = manifest.judge is not None
    judge_price = Price.of(manifest.judge_price) if manifest.judge_price else None
    summary = run_cost(Price.of(manifest.price), [(s.input_tokens, s.output_tokens) for s in billed],
                       correct, judge_price=judge_price,
                       judge_usages=[u for s in samples for u in judge_usages(s.details)] if judged else None)
    return summary.as_cost()


class CostMetric:
    name = "cost"
    label = "cost"
    needs = frozenset({"input_tokens", "output_tokens", "outcome", "details"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> Cost | None:
        return run_cost_of(samples, context.manifest) if context.manifest is not None else None
