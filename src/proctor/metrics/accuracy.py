"""Accuracy with its 95% interval and the counts behind it (METRICS), overall and per group.

The one place accuracy is computed: `BlockTally`, one sample at a time (`group_block` for a group of samples);
`mean_score` for the bare mean.
"""

from __future__ import annotations

import sys
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.results import MetricBlock, MetricValue
from ..data.coverage import difficulty_band
from ..log.runlog import Outcome, Sample
from ..stats.intervals import accuracy_ci, clustered_accuracy
from ..util.columns import Labels
from .base import RunContext, Tallied


def counted(samples: Sequence[Sample]) -> list[Sample]:
    """The samples accuracy counts: scored, with a score (errors and unscored samples never are)."""
    return [s for s in samples if s.scored and s.score is not None]


def scored_scores(samples: Sequence[Sample]) -> list[float]:
    """The scores that count (`counted`)."""
    return [s.score for s in counted(samples) if s.score is not None]


def mean_score(samples: Sequence[Sample]) -> float | None:
    """Accuracy without its interval: the mean of the scores that count (None when nothing was scored)."""
    scores = scored_scores(samples)
    return float(np.mean(scores)) if scores else None


def _item_key(s: Sample) -> str:
    """The item's label in a tally: one string an item, shared by every tally that holds it (interned)."""
    return sys.intern(f"{s.dataset}\x1f{s.item_id}")


def sample_cluster(s: Sample, attribute: str) -> str:
    """The cluster of a sample under `attribute` (category, subcategory, or metadata.KEY as the run recorded it in
    `Sample.cluster`); an item without a value is a cluster of its own."""
    value = s.category if attribute == "category" else s.subcategory if attribute == "subcategory" else s.cluster
    return f"\x1e{value}" if value is not None and value != "" else _item_key(s)  # "" is no value, as in cluster_value


def _interval(scores: Sequence[float], items: Sequence[str], clusters: Sequence[str] | None,
              seed: int) -> tuple[MetricValue, dict[str, Any]]:
    """Accuracy with its interval: items as the unit, or `clusters` of items (with the naive interval, the design
    effect, the number of clusters, the degrees of freedom and a note beside it); a group with one cluster (a
    category when clustering by category) keeps the items' interval, and so does every case
    `proctor.stats.smallsample.cluster_plan` sets apart (few clusters, no variance, every item its own cluster), with
    its note."""
    if clusters is None:
        return accuracy_ci(scores, items, seed=seed), {}
    got = clustered_accuracy(scores, items, clusters, seed=seed)
    if got.n_clusters < 2:
        return got.naive, {}
    plan = got.plan
    return got.clustered, {"n_clusters": got.n_clusters, "design_effect": got.design_effect,
                           "naive_ci_low": got.naive.ci_low, "naive_ci_high": got.naive.ci_high,
                           "cluster_df": plan.df if plan is not None else None,
                           "cluster_note": plan.note if plan is not None else None}


def clustering_text(o: MetricBlock) -> str:
    """The clustered interval in words: its clusters, design effect and df, or why items stayed the unit."""
    if o.cluster_note is not None and o.design_effect is None:
        return f"{o.n_clusters} clusters; {o.cluster_note}"
    deff = _design_effect_text(o)
    df = f", t on {o.cluster_df:.1f} df" if o.cluster_df is not None else ""
    note = f"; {o.cluster_note}" if o.cluster_note is not None else ""
    return f"{o.n_clusters} clusters{deff}{df} (CR2, Bell–McCaffrey){note}"


def _design_effect_text(o: MetricBlock) -> str:
    """The design effect the interval used: the estimate, and the bound it was held to where it was out of [1, n/C]
    (an estimate of 0.00 shown bare beside an interval widened by t read as a contradiction)."""
    if o.design_effect is None:
        return ""
    used = max(o.design_effect, 1.0)
    if o.n_clusters and o.n_scored:
        used = min(used, o.n_scored / o.n_clusters)
    if abs(used - o.design_effect) < 5e-3:
        return f", design effect {o.design_effect:.2f}"
    why = "never below 1: clusters do not narrow the items' interval" if used > o.design_effect else \
        "at most items per cluster"
    return f", design effect estimated {o.design_effect:.2f}, used {used:.2f} ({why})"


def group_block(samples: Iterable[Sample], seed: int = 0, cluster: str | None = None) -> MetricBlock:
    """The METRICS block of results.json for a group of samples (epochs of an item cluster its interval; so
    do items sharing a value of the attribute `cluster`, when one is given)."""
    acc = BlockTally(cluster=cluster)
    for s in samples:
        acc.add(s)
    return acc.block(seed)


@dataclass
class BlockTally:
    """What `group_block` needs of each sample, gathered one sample at a time (a few bytes a sample: each counted
    score, its item and cluster as codes; the latencies summed), so that a streamed run (`RunLog.iter_samples`) gets the
    same block, to the last digit, without holding its samples."""

    cluster: str | None = None  # the item attribute whose values cluster the interval (None: items alone)
    seed: int = 0  # the bootstrap's, for `result`
    n: int = 0
    n_errors: int = 0
    n_unscored: int = 0
    n_no_answer: int = 0
    n_truncated: int = 0
    sum_untruncated: float = 0.0  # the counted samples that were not truncated: their scores' sum and number
    n_untruncated: int = 0
    n_read_twice: int = 0
    n_ambiguous: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    scores: array[float] = field(default_factory=lambda: array("d"))  # of the counted samples
    items: Labels = field(default_factory=Labels)  # their dataset and item (epochs of an item cluster)
    clusters: Labels = field(default_factory=Labels)  # their cluster under `cluster`, when one is chosen
    stops: Counter[str] = field(default_factory=Counter)  # trajectories by how they ended (agent samples)
    latency_sum: float = 0.0  # the latencies' sum and number: their mean is all a block shows
    n_latencies: int = 0

    def add(self, s: Sample) -> None:
        self.n += 1
        self.n_errors += s.outcome is Outcome.ERROR
        self.n_unscored += s.outcome is Outcome.UNSCORED
        self.n_no_answer += s.outcome is Outcome.NO_ANSWER
        self.n_truncated += s.outcome is Outcome.TRUNCATED
        if s.trajectory is not None and s.trajectory.stop is not None:
            self.stops[s.trajectory.stop] += 1
        self.n_read_twice += s.ambiguous is not None
        self.n_ambiguous += bool(s.ambiguous)
        self.input_tokens += s.input_tokens or 0
        self.output_tokens += s.output_tokens or 0
        if s.latency_s is not None:
            self.latency_sum += s.latency_s
            self.n_latencies += 1
        if s.scored and s.score is not None and s.outcome is not Outcome.TRUNCATED:
            self.sum_untruncated += s.score
            self.n_untruncated += 1
        if s.scored and s.score is not None:  # `counted`
            self.scores.append(s.score)
            self.items.append(_item_key(s))
            if self.cluster is not None:
                self.clusters.append(sample_cluster(s, self.cluster))

    def truncation_bounds(self) -> tuple[float | None, float | None]:
        """The accuracy if every truncated sample were wrong, and if every one were right, over the scored and the
        truncated samples (whatever `--truncated-as` counts); None when none was truncated."""
        total = self.n_untruncated + self.n_truncated
        if not self.n_truncated or not total:
            return None, None
        return self.sum_untruncated / total, (self.sum_untruncated + self.n_truncated) / total

    def result(self) -> MetricBlock:
        return self.block(self.seed)

    def _stops(self) -> dict[str, Any]:
        """`agent_stops` and `agent_stop_rates` (of the trajectories), in name order; nothing without any."""
        total = sum(self.stops.values())
        if not total:
            return {}
        names = sorted(self.stops)
        return {"agent_stops": {k: self.stops[k] for k in names},
                "agent_stop_rates": {k: self.stops[k] / total for k in names}}

    def block(self, seed: int = 0) -> MetricBlock:
        n_scored, n_answered = len(self.scores), self.n - self.n_errors - self.n_unscored  # unscored: no key
        low, high = self.truncation_bounds()
        acc, clustering = _interval(self.scores, self.items, self.clusters if self.cluster is not None else None,
                                    seed)
        n_items = len(set(self.items))
        return MetricBlock(
            n=self.n, n_scored=n_scored, n_items=n_items if n_items != n_scored else None, n_errors=self.n_errors, n_unscored=self.n_unscored,
            n_no_answer=self.n_no_answer, accuracy=acc.value, ci_low=acc.ci_low, ci_high=acc.ci_high,
            ci_method=acc.method, no_answer_rate=self.n_no_answer / n_scored if n_scored else None,
            n_truncated=self.n_truncated, truncated_rate=self.n_truncated / n_answered if n_answered else None,
            truncated_low=low, truncated_high=high, **self._stops(),
            n_ambiguous=self.n_ambiguous,
            ambiguous_rate=self.n_ambiguous / self.n_read_twice if self.n_read_twice else None,
            input_tokens=self.input_tokens, output_tokens=self.output_tokens,
            latency_s_mean=self.latency_sum / self.n_latencies if self.n_latencies else None,
        ).model_copy(update=clustering)


GROUP_KEYS: dict[str, Callable[[Sample], str | None]] = {
    "category": lambda s: s.category,
    "subcategory": lambda s: s.subcategory,
    "modality": lambda s: s.modality,
    "difficulty": lambda s: difficulty_band(s.difficulty),
}


def breakdown(samples: Iterable[Sample], by: str, seed: int = 0, cluster: str | None = None
              ) -> dict[str, MetricBlock]:
    """METRICS per group, sorted by group name: `by` is category, subcategory, modality or difficulty (bands);
    samples with no group are left out."""
    acc = BreakdownTally(by, seed, cluster)
    for s in samples:
        acc.add(s)
    return acc.result()


@dataclass
class BreakdownTally:
    """`breakdown` gathered one sample at a time: a `BlockTally` per group."""

    by: str
    seed: int = 0
    cluster: str | None = None
    groups: dict[str, BlockTally] = field(default_factory=dict)

    def add(self, s: Sample) -> None:
        k = GROUP_KEYS[self.by](s)
        if k is not None:
            tally = self.groups.get(k)
            if tally is None:
                tally = self.groups[k] = BlockTally(cluster=self.cluster, seed=self.seed)
            tally.add(s)

    def result(self) -> dict[str, MetricBlock]:
        return {k: self.groups[k].block(self.seed) for k in sorted(self.groups)}


def run_cluster(context: RunContext) -> str | None:
    """The attribute a run's intervals are clustered by (its manifest's `cluster`), if any."""
    return context.manifest.cluster if context.manifest is not None else None


class Accuracy(Tallied):
    """Accuracy over every sample: results.json's `overall`."""

    name = "overall"
    label = "overall"
    needs = frozenset({"score", "outcome", "item_id", "dataset", "input_tokens", "output_tokens", "latency_s",
                       "ambiguous", "cluster", "category", "subcategory"})

    def tally(self, context: RunContext) -> BlockTally:
        return BlockTally(cluster=run_cluster(context), seed=context.seed)


class Breakdown(Tallied):
    """Accuracy per group: results.json's `by_category`, `by_subcategory`, `by_modality`, `by_difficulty`."""

    needs = Accuracy.needs | {"category", "subcategory", "modality", "difficulty"}

    def __init__(self, by: str) -> None:
        if by not in GROUP_KEYS:
            raise ValueError(f"no breakdown by {by!r}; one of {', '.join(GROUP_KEYS)}")
        self.by = by
        self.name = f"by_{by}"
        self.label = by

    def tally(self, context: RunContext) -> BreakdownTally:
        return BreakdownTally(self.by, context.seed, run_cluster(context))
