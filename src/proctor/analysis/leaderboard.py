"""Rank models on one dataset — and say how much the winner's lead is luck.

Runs are ranked only against runs `proctor.analysis.comparable` finds comparable (the rule `compare` and the report
follow): the same dataset content, setting (mode, prompt, epochs, generation settings: `proctor.log.setting`) and
prompt template; one board per setting, unless mixing settings is asked for. A partial run (stopped early by
`run --stop-when-decided`) is never ranked: a warning names it. On a board, each
model's latest run of that setting is scored on the items every one of those runs answered, so all
models face the same questions. The top model's observed score is biased upward
(it was picked *because* it scored highest); we report a selection-adjusted estimate and the chance
that the ranking's winner stays on top (`proctor.stats.intervals.selection_adjusted`); every pair of ranked runs is
compared with Holm's correction over the board (`proctor.stats.family`). See docs/history.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
from pydantic import BaseModel

from ..run.store import ItemScore, RunRecord, RunScores, Store
from ..stats import intervals as stats
from ..stats.comparison import Comparison
from ..stats.family import MAX_PAIRWISE, adjust_comparisons
from ..util.errors import ProctorError
from .comparable import group_key
from .compare import compare_scores, provenance_warnings


class Entry(BaseModel):
    """One ranked model."""

    rank: int
    model: str
    run_id: str
    started_at: str
    score: float  # mean over the shared items
    ci_low: float  # the run's results.json interval when the board holds all its items, else `_mean_ci`
    ci_high: float
    setting: str = ""  # the run's setting label (they differ only on a board that mixes settings)


class Leaderboard(BaseModel):
    """One setting's ranking on the items every ranked run scored."""

    dataset: str
    n_items: int  # items shared by every model's run
    entries: list[Entry]
    top: str
    observed: float  # the winner's score as measured
    adjusted: float  # … corrected for having been selected as the best
    bias: float  # observed - adjusted: >= 0, and 0 when nothing was selected (one model, or all tied)
    p_top_stays_top: float
    warnings: list[str]
    setting: str = ""  # the setting every ranked run shares, or "mixed settings"
    top_vs_next: Comparison | None = None  # the winner against the runner-up on the board's items
    # every pair of ranked runs (the winner against each of the rest beyond MAX_PAIRWISE), Holm-adjusted
    comparisons: list[Comparison] = []

    @property
    def selected(self) -> bool:
        """Whether a winner was picked from several different scores (else there is nothing to correct)."""
        return len({e.score for e in self.entries}) > 1

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")


def _on_items(r: RunScores, items: Sequence[str]) -> RunScores:
    """A run's scores restricted to the board's shared items."""
    kept: dict[str, ItemScore] = {i: r.items[i] for i in items}
    return RunScores(r.run, kept)


def _mean_ci(x: np.ndarray, epochs: list[int], n_boot: int, seed: int) -> tuple[float, float]:
    """95% CI of the mean score over items: results.json's interval (clustered over epochs, Wilson for 0/1)."""
    r = stats.item_means_ci(x, epochs, n_boot=n_boot, seed=seed)
    assert r.ci_low is not None and r.ci_high is not None  # items were scored: an interval exists
    return r.ci_low, r.ci_high


def _entry_ci(run: RunRecord, score: float, every_item: bool, x: np.ndarray, epochs: list[int], n_boot: int,
              seed: int) -> tuple[float, float]:
    """A ranked run's interval: its own (results.json's, clustered when the run was) when the board holds every
    item it scored and ranks it at its recorded accuracy; else the items' interval over the board's items."""
    if every_item and run.ci_low is not None and run.ci_high is not None and run.accuracy is not None \
            and abs(run.accuracy - score) < 1e-9:
        return run.ci_low, run.ci_high
    return _mean_ci(x, epochs, n_boot, seed)


def leaderboard_from_scores(
    dataset: str, runs: Sequence[RunScores], n_boot: int = 2000, seed: int = 0, setting: str = ""
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
    by_run = {r.run.model: r for r in runs}
    epochs_by_model = {r.run.model: [r.items[i].n_epochs for i in items] for r in runs}
    sel = stats.selection_adjusted(by_model, n_boot=n_boot, seed=seed)
    entries = []
    for rank, row in enumerate(sel["ranking"], start=1):
        model = row["model"]
        run = runs_by_model[model]
        lo, hi = _entry_ci(run, float(row["accuracy"]), len(items) == len(by_run[model].items),
                           by_model[model], epochs_by_model[model], n_boot, seed)
        entries.append(Entry(rank=rank, model=model, run_id=run.run_id, started_at=run.started_at,
                             score=float(row["accuracy"]), ci_low=lo, ci_high=hi, setting=run.setting_label))
    warnings = provenance_warnings([r.run for r in runs])
    left_out = {r.run.model: len(r.items) - len(items) for r in runs if len(r.items) > len(items)}
    if left_out:
        warnings.append(
            "ranked on the items every model answered; left out: "
            + ", ".join(f"{m}: {k} item(s)" for m, k in sorted(left_out.items()))
        )
    observed, bias = float(sel["observed"]), float(sel["selection_bias"])
    by_name = {r.run.model: r for r in runs}
    ranked = [_on_items(by_name[e.model], items) for e in entries]
    comparisons = board_comparisons(ranked, n_boot, seed)
    return Leaderboard(
        dataset=dataset, n_items=len(items), entries=entries, top=str(sel["top"]), observed=observed,
        adjusted=observed - bias, bias=bias, p_top_stays_top=float(sel["p_top_stays_top"]),
        warnings=warnings, setting=setting, top_vs_next=comparisons[0] if comparisons else None,
        comparisons=comparisons,
    )


def board_comparisons(ranked: Sequence[RunScores], n_boot: int, seed: int) -> list[Comparison]:
    """Every pair of a board's runs (best ranked first, so #1 vs #2 comes first), or the winner against each of the
    rest beyond `MAX_PAIRWISE` runs, as the report compares them; Holm-adjusted as one family."""
    if len(ranked) > MAX_PAIRWISE:
        pairs = [(ranked[0], r) for r in ranked[1:]]
    else:
        pairs = list(combinations(ranked, 2))
    return adjust_comparisons([compare_scores(a, b, n_boot=n_boot, seed=seed) for a, b in pairs])


MIXED = "mixed settings"


def _candidates(store: Store, dataset: str, mode: str | None, prompt: str | None) -> list[RunRecord]:
    """The recorded runs on `dataset` (newest first), of the mode and prompt asked for."""
    records = store.list_runs(dataset=dataset)
    if not records:
        known = sorted({r.dataset for r in store.list_runs()})
        hint = f" (recorded datasets: {', '.join(known)})" if known else " (the store has no recorded runs)"
        raise ProctorError(f"no recorded runs on dataset {dataset!r}{hint}")
    chosen = [r for r in records if (mode is None or r.mode == mode) and (prompt is None or r.prompt_kind == prompt)]
    if not chosen:
        have = sorted({r.setting_label for r in records})
        raise ProctorError(f"no run on {dataset!r} matches --mode/--prompt; recorded settings: {'; '.join(have)}")
    return chosen


def _latest_per_model(records: Sequence[RunRecord]) -> list[RunRecord]:
    """Each model's newest run among `records` (given newest first), in first-recorded order."""
    latest: dict[str, RunRecord] = {}
    for rec in records:
        latest.setdefault(rec.model, rec)
    return sorted(latest.values(), key=lambda r: r.started_at)


def leaderboards(store: Store, dataset: str, n_boot: int = 2000, seed: int = 0, *, mix_settings: bool = False,
                 mode: str | None = None, prompt: str | None = None) -> list[Leaderboard]:
    """One board per setting (newest first) of each model's latest run on `dataset`; one board of
    each model's latest run whatever its setting with `mix_settings` (a warning names the settings)."""
    records, left_out = _complete(_candidates(store, dataset, mode, prompt), dataset)
    groups: dict[tuple[str | None, ...], list[RunRecord]] = {}
    for rec in records:
        groups.setdefault(group_key(rec, mix_settings), []).append(rec)
    boards = []
    for group in groups.values():
        chosen = _latest_per_model(group)
        labels = sorted({r.setting_label for r in chosen})
        board = leaderboard_from_scores(dataset, [store.run_scores(r.key) for r in chosen], n_boot=n_boot,
                                        seed=seed, setting=labels[0] if len(labels) == 1 else MIXED)
        if len(labels) > 1:
            board.warnings.insert(0, f"ranks runs of {len(labels)} different settings together (--mix-settings): "
                                  + "; ".join(labels))
        board.warnings.extend(left_out)
        boards.append(board)
    return boards


def _complete(records: Sequence[RunRecord], dataset: str) -> tuple[list[RunRecord], list[str]]:
    """The complete runs among `records`, and a warning naming the partial ones left out: a run stopped early
    (--stop-when-decided) is never ranked, nor taken for its model's latest run."""
    complete = [r for r in records if r.partial is None]
    partial = [f"{r.model} ({r.run_id[:12]}, {r.partial_label})" for r in records if r.partial is not None]
    note = f"left out, never ranked: {len(partial)} partial run(s) stopped early by --stop-when-decided: "
    if not complete:
        raise ProctorError(f"no complete run on {dataset!r} to rank: {note.removeprefix('left out, never ranked: ')}"
                           + ", ".join(partial))
    return complete, [note + ", ".join(partial)] if partial else []


def leaderboard(store: Store, dataset: str, n_boot: int = 2000, seed: int = 0, *, mix_settings: bool = False,
                mode: str | None = None, prompt: str | None = None) -> Leaderboard:
    """The one board on `dataset`; an error when its runs have several settings and none was chosen."""
    boards = leaderboards(store, dataset, n_boot, seed, mix_settings=mix_settings, mode=mode, prompt=prompt)
    if len(boards) > 1:
        raise ProctorError(
            f"runs on {dataset!r} have {len(boards)} settings ({'; '.join(b.setting for b in boards)}): "
            "choose one with --mode/--prompt, or rank them together with --mix-settings"
        )
    return boards[0]


__all__ = ["Entry", "Leaderboard", "leaderboard", "leaderboard_from_scores", "leaderboards"]
