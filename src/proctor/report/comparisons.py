"""The report's comparison section: paired comparisons of the runs that can be compared, the others set apart.

Which runs are comparable is `proctor.analysis.comparable`'s rule (the one `compare` and the leaderboard follow): same
dataset and content, same setting and prompt template (or only the same items with `mix_settings`). Each group of
two or more gets `proctor.stats.comparison` records (every pair up to `MAX_PAIRWISE` runs, the best against the rest
beyond), their p-values Holm-adjusted over the group (`proctor.stats.family`). A run that another run on its dataset
could not be compared with is listed with the reason; a run alone on its dataset is only named (nothing was refused).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING

from ..analysis.agree import Agreement, agreement
from ..analysis.comparable import MIX_HINT, group_key
from ..analysis.compare import compare_scores, provenance_warnings
from ..run.store import RunRecord, RunScores, item_scores, record_from_log
from ..stats.comparison import Comparison
from ..stats.family import MAX_PAIRWISE, adjust_comparisons
from ..util.errors import ProctorError

if TYPE_CHECKING:  # data builds the report and calls comparison_section: the summaries are only annotated here
    from .data import RunSummary


@dataclass(frozen=True)
class ComparedPair:
    """One comparison, with the report's indices of its two runs (A first), and how often their answers agree."""

    a: int
    b: int
    record: Comparison
    agreement: Agreement | None = None


@dataclass
class ComparableGroup:
    """Runs that can be compared: same dataset, setting, revision and prompt."""

    label: str
    runs: list[int]
    pairs: list[ComparedPair] = field(default_factory=list)
    best_vs_rest: bool = False
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SetApart:
    """A run compared with no other, and why."""

    run: int
    reason: str


@dataclass
class ComparisonSection:
    groups: list[ComparableGroup]
    apart: list[SetApart]  # runs another run on their dataset is not comparable with, each with the reason
    alone: list[int] = field(default_factory=list)  # runs no other run shares a dataset with: nothing to compare

    @property
    def shown(self) -> bool:
        """Whether the section says anything: a comparison made, or one refused (runs alone say nothing)."""
        return bool(self.groups or self.apart)


def _pair(a: RunSummary, b: RunSummary, scores: dict[int, RunScores], n_boot: int) -> ComparedPair | None:
    """A against B on their shared items; None when they share none."""
    try:
        return ComparedPair(a.index, b.index, compare_scores(scores[a.index], scores[b.index], n_boot=n_boot))
    except ProctorError:
        return None


def _mean(r: RunScores) -> float:
    return sum(s.score for s in r.items.values()) / len(r.items) if r.items else 0.0


def _group_pairs(group: ComparableGroup, by_index: dict[int, RunSummary], scores: dict[int, RunScores],
                 n_boot: int) -> None:
    """Every pair (better-scoring run as A), or the best against the rest when the group is large."""
    ranked = sorted(group.runs, key=lambda i: -_mean(scores[i]))
    group.best_vs_rest = len(ranked) > MAX_PAIRWISE
    todo = [(ranked[0], j) for j in ranked[1:]] if group.best_vs_rest else list(combinations(ranked, 2))
    for i, j in todo:
        got = _pair(by_index[i], by_index[j], scores, n_boot)
        if got is None:
            group.notes.append(f"{by_index[i].model} and {by_index[j].model} share no scored item")
        else:
            group.pairs.append(got)
    adjusted = adjust_comparisons([p.record for p in group.pairs])
    group.pairs = [ComparedPair(p.a, p.b, rec, _agreement(by_index[p.a], by_index[p.b]))
                   for p, rec in zip(group.pairs, adjusted, strict=True)]


def _agreement(a: RunSummary, b: RunSummary) -> Agreement | None:
    """`proctor agree` of two runs (None when they answered no item in common)."""
    try:
        return agreement(a.log, b.log)
    except ProctorError:
        return None


def _reason(rec: RunRecord, others: Sequence[RunRecord]) -> str:
    """Why a run is not compared: what differs from the nearest other run (same dataset first)."""
    if not others:
        return "no other run"
    same_ds = [o for o in others if o.dataset == rec.dataset]
    if not same_ds:
        return f"no other run on {rec.dataset}"
    other = same_ds[0]
    provenance = provenance_warnings([rec, other])
    if rec.setting_key == other.setting_key:
        return "; ".join(provenance) or "not comparable"
    # the setting says most of it: the other differences are named, their values are in Provenance
    also = [w.split(":", 1)[0].removeprefix("different ") for w in provenance]
    return f"setting: {rec.setting_label} vs {other.setting_label}" + (f" (also different: {', '.join(also)})"
                                                                         if also else "") + f"; {MIX_HINT}"


def comparison_section(runs: Sequence[RunSummary], n_boot: int = 2000,
                       mix_settings: bool = False) -> ComparisonSection | None:
    """Comparable groups with their paired comparisons, and the runs set apart; None for fewer than two runs."""
    if len(runs) < 2:
        return None
    records = {r.index: record_from_log(r.log) for r in runs}
    scores = {r.index: RunScores(records[r.index], item_scores(r.log.samples, records[r.index].setting))
              for r in runs}
    by_key: dict[tuple[str | None, ...], list[int]] = {}
    for r in runs:
        by_key.setdefault(group_key(records[r.index], mix_settings), []).append(r.index)
    by_index = {r.index: r for r in runs}
    groups, apart, alone = [], [], []
    for members in by_key.values():
        if len(members) < 2:
            rec = records[members[0]]
            others = [records[i] for i in records if i != members[0]]
            if any(o.dataset == rec.dataset for o in others):
                apart.append(SetApart(members[0], _reason(rec, others)))
            else:
                alone.append(members[0])
            continue
        rec = records[members[0]]
        labels = {records[i].setting_label for i in members}
        group = ComparableGroup(f"{rec.dataset} · {rec.setting_label if len(labels) == 1 else 'mixed settings'}",
                                members)
        _group_pairs(group, by_index, scores, n_boot)
        groups.append(group)
    return ComparisonSection(groups, apart, alone)


__all__ = ["MAX_PAIRWISE", "ComparableGroup", "ComparedPair", "ComparisonSection", "SetApart", "comparison_section"]
