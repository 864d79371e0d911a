"""Rank models on one dataset — and say how much the winner's lead is luck.

Each model's latest recorded run on the dataset is scored on the items every one of those runs
answered, so all models face the same questions. The top model's observed score is biased upward
(it was picked *because* it scored highest); we report a selection-adjusted estimate and the chance
that the ranking's winner stays on top (`proctor.stats.selection_adjusted`). See docs/history.md.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import stats
from .compare import provenance_warnings
from .errors import ProctorError
from .store import RunScores, Store


@dataclasses.dataclass(frozen=True)
class Entry:
    rank: int
    model: str
    run_id: str
    started_at: str
    score: float  # mean over the shared items
    ci_low: float  # 95% CI over items, as results.json computes it (proctor.stats.item_means_ci)
    ci_high: float


@dataclasses.dataclass(frozen=True)
class Leaderboard:
    dataset: str
    n_items: int  # items shared by every model's run
    entries: list[Entry]
    top: str
    observed: float  # the winner's score as measured
    adjusted: float  # … corrected for having been selected as the best
    bias: float  # observed - adjusted
    p_top_stays_top: float
    warnings: list[str]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _mean_ci(x: np.ndarray, epochs: list[int], n_boot: int, seed: int) -> tuple[float, float]:
    """95% CI of the mean score over items: results.json's interval (clustered over epochs, Wilson for 0/1)."""
    r = stats.item_means_ci(x, epochs, n_boot=n_boot, seed=seed)
    return float(r["ci_low"]), float(r["ci_high"])


def leaderboard_from_scores(
    dataset: str, runs: Sequence[RunScores], n_boot: int = 2000, seed: int = 0
) -> Leaderboard:
    """Rank runs (one per model) on the items they all scored."""
    if not runs:
        raise ProctorError(f"no recorded runs on dataset {dataset!r} (`proctor runs` lists them)")
    shared = set(runs[0].items)
    for r in runs[1:]:
        shared &= r.items.keys()
    items = sorted(shared)
    if not items:
        raise ProctorError(f"the latest runs on {dataset!r} share no scored item: nothing to rank")
    by_model = {r.run.model: np.array([r.items[i].score for i in items]) for r in runs}
    runs_by_model = {r.run.model: r.run for r in runs}
    epochs_by_model = {r.run.model: [r.items[i].n_epochs for i in items] for r in runs}
    sel = stats.selection_adjusted(by_model, n_boot=n_boot, seed=seed)
    entries = []
    for rank, row in enumerate(sel["ranking"], start=1):
        model = row["model"]
        lo, hi = _mean_ci(by_model[model], epochs_by_model[model], n_boot, seed)
        run = runs_by_model[model]
        entries.append(Entry(rank, model, run.run_id, run.started_at, float(row["accuracy"]), lo, hi))
    warnings = provenance_warnings([r.run for r in runs])
    left_out = {r.run.model: len(r.items) - len(items) for r in runs if len(r.items) > len(items)}
    if left_out:
        warnings.append(
            "ranked on the items every model answered; left out: "
            + ", ".join(f"{m}: {k} item(s)" for m, k in sorted(left_out.items()))
        )
    observed, adjusted = float(sel["observed"]), float(sel["adjusted"])
    return Leaderboard(
        dataset=dataset, n_items=len(items), entries=entries, top=str(sel["top"]), observed=observed,
        adjusted=adjusted, bias=observed - adjusted, p_top_stays_top=float(sel["p_top_stays_top"]),
        warnings=warnings,
    )


def leaderboard(store: Store, dataset: str, n_boot: int = 2000, seed: int = 0) -> Leaderboard:
    """The latest recorded run of each model on `dataset`, ranked, with a selection-adjusted winner."""
    runs = [store.run_scores(rec.run_id) for rec in store.latest_runs(dataset)]
    if not runs:
        known = sorted({r.dataset for r in store.list_runs()})
        hint = f" (recorded datasets: {', '.join(known)})" if known else " (the store has no recorded runs)"
        raise ProctorError(f"no recorded runs on dataset {dataset!r}{hint}")
    return leaderboard_from_scores(dataset, runs, n_boot=n_boot, seed=seed)


__all__ = ["Entry", "Leaderboard", "leaderboard", "leaderboard_from_scores"]
