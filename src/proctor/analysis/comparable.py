"""The one rule that decides which runs are compared: `compare`, the report and the leaderboard all ask it.

Two runs are *comparable* when they evaluated their shared items the same way: the same setting (mode, prompt
kind, epochs, generation settings: `proctor.log.setting`). Runs of the same items under different settings (a
log-probability run and a generation run, zero-shot and chain-of-thought) are compared only when `mix_settings`
asks for it (`--mix-settings` on `compare`, `report` and `leaderboard`), and then everywhere alike. What else
differs (dataset name, revision or content hash, prompt template text, extractor version: an imported run from
another harness differs in most) is a warning beside the verdict (`proctor.analysis.compare.provenance_warnings`), not a
bar: the comparison is paired on the item ids both runs scored. The report and the leaderboard look for
comparable runs within one dataset (`group_key`); `compare` pairs the runs it is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..run.store import RunRecord

MIX_HINT = "--mix-settings compares runs of different settings anyway"


def group_key(r: RunRecord, mix_settings: bool = False) -> tuple[str | None, ...]:
    """Runs with equal keys are comparable (see the module's rule)."""
    return (r.dataset,) if mix_settings else (r.dataset, r.setting_key)


def not_comparable(a: RunRecord, b: RunRecord, mix_settings: bool = False) -> str | None:
    """Why runs `a` and `b` are not compared (one sentence), or None when they are."""
    if not mix_settings and a.setting_key != b.setting_key:
        return f"different settings: {a.setting_label} vs {b.setting_label} ({MIX_HINT})"
    return None


def first_reason(runs: Sequence[RunRecord], mix_settings: bool = False) -> str | None:
    """Why some pair of `runs` is not comparable (the first found), or None when every pair is."""
    for i, a in enumerate(runs):
        for b in runs[i + 1:]:
            why = not_comparable(a, b, mix_settings)
            if why is not None:
                return f"{a.model} ({a.run_id[:12]}) and {b.model} ({b.run_id[:12]}): {why}"
    return None


__all__ = ["MIX_HINT", "first_reason", "group_key", "not_comparable"]
