"""What every exporter reads from a run: the overall accuracy with its interval, the model, the samples.

The one place exporters get the overall accuracy block (`overall_accuracy`): recomputed from the streamed samples
in the pass that tallies them (`RunTally`), never taken from `results.json` (a hand edit is named on stderr);
everything per sample comes from the typed `Sample` records.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.results import MetricBlock
from ..log.runlog import Outcome, RunLog, Sample
from ..metrics.accuracy import BlockTally, scored_scores
from ..metrics.counting import apply_no_answer, apply_truncated_as
from ..metrics.results import warn_if_disagrees
from ..util.errors import InputError


def overall_accuracy(run: RunLog, t: RunTally | None = None) -> MetricBlock:
    """The run's overall accuracy block (typed: accuracy, ci_low, ci_high, ci_method, n_scored, n) recomputed
    from its samples (`t`: tallied already; default: tallied here, streamed). A run without results.json is
    refused (it did not finish); one whose `overall` disagrees with its samples is named on stderr, never used."""
    if run.results is None:
        raise InputError.at(run.path, "no results.json: the run did not finish (re-run its command to finish it)")
    truth = (t or tally(run)).overall.block()
    warn_if_disagrees(run.path, run.results.overall.model_dump(mode="json"), truth.model_dump(mode="json"), "overall")
    return truth


@dataclass
class RunTally:
    """What an exporter needs about all of a run's samples beyond results.json's overall block, gathered in the one
    streamed pass that tallies that block (a few bytes a sample): the samples' own scores (before the counting
    rules), their item ids and outcomes. The counts and tokens are the block's (`overall_accuracy`)."""

    scores: list[float] = field(default_factory=list)  # of the scored samples with a score, as recorded
    item_ids: set[str] = field(default_factory=set)
    outcomes: Counter[Outcome] = field(default_factory=Counter)  # the samples' own outcomes, as recorded
    overall: BlockTally = field(default_factory=BlockTally)  # the overall block's inputs, counting rules applied

    @property
    def n_scored(self) -> int:
        return len(self.scores)

    @property
    def n_unscored(self) -> int:
        """Neither scored nor errored."""
        return self.overall.n - self.n_scored - self.overall.n_errors


def tally(run: RunLog) -> RunTally:
    """The `RunTally` of a run's samples (`iter_samples()`: streamed, never all held)."""
    m = run.manifest
    t = RunTally(overall=BlockTally(cluster=m.cluster))
    for s in run.iter_samples():
        for counted_as in apply_no_answer(apply_truncated_as([s], m.truncated_as), m.no_answer):
            t.overall.add(counted_as)
        t.scores += scored_scores([s])
        t.item_ids.add(s.item_id)
        t.outcomes[s.outcome] += 1
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
    spec = model.model or model.spec or "model"
    return spec.split(":", 1)[-1]


def model_spec(log: RunLog) -> str:
    """The backend and model as given on the command line (`openai:qwen3`)."""
    return log.manifest.model.spec or model_name(log)


def dataset_name(log: RunLog) -> str:
    return log.manifest.dataset.name or "dataset"
