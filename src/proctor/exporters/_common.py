"""What every exporter reads from a run: the overall accuracy with its interval, the model, the samples.

The one place exporters read `results.json`'s metric blocks (`overall_accuracy`); everything per sample
comes from the typed `Sample` records.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..errors import InputError
from ..metrics.accuracy import scored_scores
from ..runlog import MetricBlock, Outcome, RunLog, Sample


def overall_accuracy(log: RunLog) -> MetricBlock:
    """results.json's overall accuracy block (typed: accuracy, ci_low, ci_high, ci_method, n_scored, n); a run
    without results.json is refused (it did not finish)."""
    if log.results is None:
        raise InputError.at(log.path, "no results.json: the run did not finish (re-run its command to finish it)")
    return log.results.overall


@dataclass
class RunTally:
    """What an exporter needs about all of a run's samples, gathered in one streamed pass (a few bytes a sample):
    the counts, the scores accuracy counts, the tokens and the item ids."""

    n: int = 0
    n_errors: int = 0
    scores: list[float] = field(default_factory=list)  # of the counted samples (scored, with a score)
    input_tokens: int = 0
    output_tokens: int = 0
    item_ids: set[str] = field(default_factory=set)

    @property
    def n_scored(self) -> int:
        return len(self.scores)

    @property
    def n_unscored(self) -> int:
        """Neither counted nor errored."""
        return self.n - self.n_scored - self.n_errors


def tally(samples: Iterable[Sample]) -> RunTally:
    """The `RunTally` of samples (a run's `iter_samples()`: streamed, never all held)."""
    t = RunTally()
    for s in samples:
        t.n += 1
        t.n_errors += s.outcome is Outcome.ERROR
        t.scores += scored_scores([s])
        t.input_tokens += s.input_tokens or 0
        t.output_tokens += s.output_tokens or 0
        t.item_ids.add(s.item_id)
    return t


def stderr(samples: Sequence[Sample]) -> float | None:
    """Standard error of the mean score over the scored samples (sample standard deviation / √n), None under 2."""
    return stderr_of(scored_scores(samples))


def stderr_of(values: Sequence[float]) -> float | None:
    """Standard error of the mean of `values` (sample standard deviation / √n), None under 2."""
    n = len(values)
    if n < 2:
        return None
    mean = sum(values) / n
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1) / n)


def model_name(log: RunLog) -> str:
    """The model as the run named it (`openai:qwen3` → `qwen3`; a local path's last part for `hf:out/tiny`)."""
    model = log.manifest.model
    spec = str(model.get("model") or model.get("spec") or "model")
    return spec.split(":", 1)[-1]


def model_spec(log: RunLog) -> str:
    """The backend and model as given on the command line (`openai:qwen3`)."""
    return str(log.manifest.model.get("spec") or model_name(log))


def dataset_name(log: RunLog) -> str:
    return str(log.manifest.dataset.get("name") or "dataset")
