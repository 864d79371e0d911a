"""What every exporter reads from a run: the overall accuracy with its interval, the model, the samples.

The one place exporters read `results.json`'s metric blocks (`overall_accuracy`); everything per sample
comes from the typed `Sample` records.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..errors import InputError
from ..metrics.accuracy import scored_scores
from ..runlog import MetricBlock, RunLog, Sample


def overall_accuracy(log: RunLog) -> MetricBlock:
    """results.json's overall accuracy block (typed: accuracy, ci_low, ci_high, ci_method, n_scored, n); a run
    without results.json is refused (it did not finish)."""
    if log.results is None:
        raise InputError.at(log.path, "no results.json: the run did not finish (re-run its command to finish it)")
    return log.results.overall


def stderr(samples: Sequence[Sample]) -> float | None:
    """Standard error of the mean score over the scored samples (sample standard deviation / √n), None under 2."""
    values = scored_scores(samples)
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def model_name(log: RunLog) -> str:
    """The model as the run named it (`openai:qwen3` → `qwen3`; a local path's last part for `hf:out/tiny`)."""
    model = log.manifest.model
    spec = model.model or model.spec or "model"
    return spec.split(":", 1)[-1]


def model_spec(log: RunLog) -> str:
    """The backend and model as given on the command line (`openai:qwen3`)."""
    return log.manifest.model.spec or model_name(log)


def dataset_name(log: RunLog) -> str:
    return log.manifest.dataset.name or "dataset"
