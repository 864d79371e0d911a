"""mean@k and pass@k over items answered in several epochs, with the per-item spread."""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..core.results import EpochSpread, MetricValue
from ..log.runlog import Sample
from ..stats.intervals import bootstrap_ci, pass_at_k
from .base import RunContext, Tallied


def pass_at_every_k(per_item: Sequence[Sequence[float]], k: int, seed: int = 0) -> dict[str, MetricValue]:
    """pass@j for j = 1..k: the unbiased estimator on each item answered at least j times (n samples, c fully
    correct), averaged over those items, with a percentile bootstrap interval over them, never narrower than the
    small-sample floor at their number (`stats.intervals.floored`: 2 items all failing give [0, 0.802], not
    [0, 0])."""
    out: dict[str, MetricValue] = {}
    for j in range(1, k + 1):
        values = [pass_at_k(len(v), sum(x >= 1.0 for x in v), j) for v in per_item if len(v) >= j]
        if not values:
            continue
        lo, hi = bootstrap_ci(values, seed=seed)
        out[str(j)] = MetricValue(value=float(np.mean(values)), n=len(values), ci_low=lo, ci_high=hi,
                                  method="chen2021_unbiased+bootstrap")
    return out


def epoch_spread(samples: Iterable[Sample], seed: int = 0) -> EpochSpread | None:
    """mean@k and pass@k over items answered in several epochs (None for a single epoch).

    k is the number of epochs. An item with fewer scored epochs (errors) uses its own n as k.
    A sample counts as a pass when fully correct.
    """
    acc = EpochTally(seed)
    for s in samples:
        acc.add(s)
    return acc.result()


def _spread(k: int, per_item: dict[str, array[float]], seed: int) -> EpochSpread:
    """mean@k, pass@k and the spread from each item's scores over its epochs."""
    if not per_item:
        return EpochSpread(k=k)
    means = [float(np.mean(v)) for v in per_item.values()]
    passes = [pass_at_k(len(v), sum(x >= 1.0 for x in v), min(k, len(v))) for v in per_item.values()]
    sds = [float(np.std(v, ddof=1)) for v in per_item.values() if len(v) > 1]
    by_correct = Counter(sum(x >= 1.0 for x in v) for v in per_item.values())
    # the per-item spread: mean sd of an item's scores over its epochs, and how many items were fully
    # correct in 0, 1, …, k epochs (an item answered fewer times counts by its own correct ones)
    return EpochSpread(k=k, mean_at_k=float(np.mean(means)), pass_at_k=float(np.mean(passes)),
                       item_sd_mean=float(np.mean(sds)) if sds else None,
                       items_by_correct={str(c): by_correct.get(c, 0) for c in range(k + 1)},
                       pass_at=pass_at_every_k(list(per_item.values()), k, seed))


class Epochs(Tallied):
    name = "epochs"
    label = "mean@k / pass@k"
    needs = frozenset({"score", "outcome", "item_id", "dataset", "epoch"})

    def tally(self, context: RunContext) -> EpochTally:
        return EpochTally(context.seed)


@dataclass
class EpochTally:
    """`epoch_spread` gathered one sample at a time: the epochs seen and each item's scores (per-item data: a few
    bytes a sample)."""

    seed: int = 0
    epochs: set[int] = field(default_factory=set)
    per_item: dict[str, array[float]] = field(default_factory=dict)

    def add(self, s: Sample) -> None:
        self.epochs.add(s.epoch)
        if s.scored and s.score is not None:
            self.per_item.setdefault(f"{s.dataset}\x1f{s.item_id}", array("d")).append(s.score)

    def result(self) -> EpochSpread | None:
        return _spread(len(self.epochs), self.per_item, self.seed) if len(self.epochs) > 1 else None
