"""results.json from a run's samples: every registered metric (`proctor.metrics`) over them, under the run's
policies for truncated and unanswered samples (`proctor.stats`), and each distinct error with its count.

It sits above both `proctor.metrics` and `proctor.stats` (the metrics use the numerics of `stats`), so neither
imports the other's caller."""

from __future__ import annotations

from collections.abc import Sequence

from .metrics import RunContext, compute_metrics
from .runlog import Manifest, Results, Sample, error_counts
from .stats import apply_no_answer, apply_truncated_as


def summarize(
    samples: Sequence[Sample], seed: int = 0, truncated_as: str = "wrong", no_answer: str = "wrong",
    extract: str | None = None, manifest: Manifest | None = None,
) -> Results:
    """results.json from samples (see docs/runlog.md): every registered metric (`proctor.metrics`) over them,
    and each distinct error with its count. Truncated samples count as wrong, or leave accuracy with
    `truncated_as="excluded"` (rates kept either way); unanswered ones count as wrong, or as the expected value
    of a guess with `no_answer="guess"`. `manifest` gives the metrics that need it their prices and judge."""
    samples = apply_no_answer(apply_truncated_as(samples, truncated_as), no_answer)
    builtin, extra = compute_metrics(samples, RunContext(manifest=manifest, seed=seed))
    return Results.model_validate({**builtin, "metrics": extra, "truncated_as": truncated_as,
                                   "no_answer": no_answer, "extract": extract, "errors": error_counts(samples)})
