"""Compare two runs honestly: on the items both answered, with paired statistics.

Pairing matters: two models answer the *same* questions, so most of the item-to-item noise cancels,
and a paired interval on the difference is far narrower (and truer) than two overlapping per-run
intervals suggest. McNemar's test looks only at the items where the two runs disagree. The record and
its statistics are `proctor.stats.comparison`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..run.store import RunRecord, RunScores, Store, load_run_scores
from ..stats.comparison import CORRECT_THRESHOLD, Comparison, PairedDifference, RunRef, paired_difference
from ..stats.family import Correction, adjust_comparisons
from ..util.errors import ProctorError
from .comparable import first_reason

_PROVENANCE = (
    ("dataset", "datasets"),
    ("dataset_revision", "dataset revisions"),
    ("dataset_hash", "dataset content hashes"),
    ("mode", "scoring modes"),
    ("prompt_kind", "prompt kinds"),
    ("template_hash", "prompt templates (template hash)"),
    ("extractor_version", "answer extractor versions"),
)

GroupComparison = PairedDifference  # the name this module's record had before it was typed


def run_ref(r: RunRecord) -> RunRef:
    """The side of a comparison a recorded run is."""
    return RunRef(run_id=r.run_id, model=r.model, dataset=r.dataset, setting=r.setting_label, path=r.path,
                  started_at=r.started_at, accuracy=r.accuracy, ci_low=r.ci_low, ci_high=r.ci_high,
                  partial=r.partial_label)


def partial_warnings(runs: Sequence[tuple[str, RunRecord]]) -> list[str]:
    """One warning per run (named by its side) stopped early by --stop-when-decided: it is not the complete run."""
    return [f"{side} ({r.model}, {r.run_id[:12]}) is {r.partial_label}: --stop-when-decided stopped it early; its "
            "accuracy is not the complete run's" for side, r in runs if r.partial is not None]


def same_run_warning(a: RunRecord, b: RunRecord) -> str | None:
    """Two arguments that are one run; or one evaluation (one run id), one complete and one partial."""
    if a.run_id != b.run_id:
        return None
    if a.partial == b.partial:
        return "both arguments are the same run"
    return (f"A and B are one evaluation (run id {a.run_id[:12]}): "
            f"{'A' if a.partial is not None else 'B'} is its partial run, the other its complete one")


def provenance_warnings(runs: Sequence[RunRecord]) -> list[str]:
    """One warning per provenance field on which the runs differ (prompt, dataset revision, extractor…)."""
    out = []
    for attr, what in _PROVENANCE:
        values = {getattr(r, attr) for r in runs}
        if len(values) > 1:
            shown = ", ".join(f"{r.model} ({r.run_id[:12]}): {getattr(r, attr) or 'none'}" for r in runs)
            out.append(f"different {what}: {shown}")
    return out


def difference_warning(a: RunRecord, b: RunRecord) -> str | None:
    """Every way two runs differ (settings, dataset, prompt, extractor) in one warning: one cause, such as
    another prompt kind, changes several of them at once. None when they do not differ."""
    parts = [w.removeprefix("different ") for w in provenance_warnings([a, b])]
    if a.setting_key != b.setting_key:
        parts.insert(0, f"settings: A {a.setting_label}; B {b.setting_label}")
    return "the runs differ in " + "; ".join(parts) if parts else None  # one line: reports and --json show it too


def compare_scores(a: RunScores, b: RunScores, n_boot: int = 2000, seed: int = 0) -> Comparison:
    """Compare two runs' per-item scores on the items they share."""
    shared = sorted(a.items.keys() & b.items.keys())
    if not shared:
        raise ProctorError(
            f"runs {a.run.run_id[:12]} and {b.run.run_id[:12]} share no scored items: nothing to compare"
            + _item_id_hint(a, b)
        )
    sa = np.array([a.items[i].score for i in shared])
    sb = np.array([b.items[i].score for i in shared])
    cats = np.array([a.items[i].category or b.items[i].category or "(none)" for i in shared])
    by_cat = [
        paired_difference(str(c), sa[cats == c], sb[cats == c], n_boot, seed)
        for c in sorted(set(cats.tolist()))
    ]
    warnings = [w for w in [difference_warning(a.run, b.run), same_run_warning(a.run, b.run)] if w]
    warnings += partial_warnings([("A", a.run), ("B", b.run)])
    cmp = Comparison(
        a=run_ref(a.run), b=run_ref(b.run), overall=paired_difference("overall", sa, sb, n_boot, seed),
        by_category=by_cat if len(by_cat) > 1 or by_cat[0].group != "(none)" else [],
        warnings=warnings,
        only_in_a=sorted(a.items.keys() - b.items.keys()),
        only_in_b=sorted(b.items.keys() - a.items.keys()),
    )
    return adjust_comparisons([cmp])[0]  # its categories are one family


class ComparisonFamily(BaseModel):
    """Several runs compared pairwise (or each against a baseline), the family's p-values adjusted."""

    model_config = ConfigDict(frozen=True)

    correction: Correction
    baseline: str | None = None  # the baseline's run id, when each run was compared against it
    comparisons: list[Comparison]

    def to_dict(self) -> dict[str, object]:
        return self.model_dump(mode="json")


def _pairs(runs: Sequence[RunScores], baseline: RunScores | None) -> list[tuple[RunScores, RunScores]]:
    """Every pair in the order given (earlier run as A), or each run (as A) against the baseline (as B)."""
    if baseline is None:
        return list(combinations(runs, 2))
    return [(r, baseline) for r in runs if r.run.key != baseline.run.key]


def compare_family(
    runs: Sequence[RunScores], baseline: RunScores | None = None, correction: Correction = "holm",
    mix_settings: bool = False, n_boot: int = 2000, seed: int = 0,
) -> ComparisonFamily:
    """Compare runs pairwise, or each against `baseline`, with Holm's (or Benjamini–Hochberg's) correction over
    the overall differences and over the per-category ones; runs the comparability rule sets apart are refused."""
    everyone = [*runs, *([baseline] if baseline is not None else [])]
    why = first_reason([r.run for r in everyone], mix_settings)
    if why is not None:
        raise ProctorError(f"not comparable: {why}")
    pairs = _pairs(runs, baseline)
    if not pairs:
        raise ProctorError("nothing to compare: give at least two runs (or one besides --baseline)")
    raw = [compare_scores(a, b, n_boot=n_boot, seed=seed) for a, b in pairs]
    return ComparisonFamily(correction=correction, baseline=baseline.run.run_id if baseline is not None else None,
                            comparisons=adjust_comparisons(raw, correction))


def _item_id_hint(a: RunScores, b: RunScores) -> str:
    """A few item ids of each run, so ids of different forms (`demo.0` and `0`) show at a glance."""
    if not a.items or not b.items:
        return ""

    def few(items: dict[str, object]) -> str:
        ids = sorted(items)
        return ", ".join(ids[:3]) + (", …" if len(ids) > 3 else "")

    return (f"\n  A's item ids: {few(dict(a.items))}\n  B's item ids: {few(dict(b.items))}\n"
            "  (an imported run's item ids come from `proctor import --item-id FIELD`: docs/import.md)")


def compare_runs(
    run_a: str | Path | RunScores,
    run_b: str | Path | RunScores,
    store: Store | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> Comparison:
    """Compare two runs given as run directories, recorded run ids (with `store`), or loaded scores."""
    a = run_a if isinstance(run_a, RunScores) else load_run_scores(run_a, store)
    b = run_b if isinstance(run_b, RunScores) else load_run_scores(run_b, store)
    return compare_scores(a, b, n_boot=n_boot, seed=seed)


__all__ = ["CORRECT_THRESHOLD", "Comparison", "ComparisonFamily", "GroupComparison", "compare_family", "compare_runs",
           "compare_scores", "difference_warning", "partial_warnings", "provenance_warnings", "run_ref",
           "same_run_warning"]
