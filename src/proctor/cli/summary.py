"""Print a run's results as rich tables (overall + breakdowns)."""

from __future__ import annotations

import sys
from typing import Any

from ..runlog import RunLog


def _fmt(m: dict[str, Any]) -> tuple[str, str, str, str, str]:
    acc = m.get("accuracy")
    if acc is None:
        return ("n/a", "", str(m.get("n_scored", 0)), str(m.get("n_errors", 0)), "")
    return (
        f"{acc:.3f}",
        f"[{m.get('ci_low', 0):.3f}, {m.get('ci_high', 0):.3f}]",
        str(m.get("n_scored", 0)),
        str(m.get("n_errors", 0)),
        f"{m.get('no_answer_rate', 0):.1%}",
    )


def print_results(log: RunLog) -> None:
    from rich.console import Console
    from rich.table import Table

    results = log.results.as_dict() if log.results else {}
    console = Console(width=None if sys.stdout.isatty() else 110)
    title = f"{log.manifest.dataset.get('name')} · {log.manifest.model.get('spec')} · {log.manifest.mode}"
    table = Table(title=title, title_justify="left")
    for col in ("group", "accuracy", "95% CI", "scored", "errors", "no answer"):
        table.add_column(col, justify="left" if col == "group" else "right")
    table.add_row("overall", *_fmt(results.get("overall", {})), style="bold")
    if "acc_norm" in results:
        table.add_row("acc_norm (per char)", *_fmt(results["acc_norm"]))
    for block in ("by_category", "by_modality", "by_difficulty"):
        groups = results.get(block) or {}
        if len(groups) > 1:
            for name, m in groups.items():
                table.add_row(f"{block[3:]}: {name}", *_fmt(m))
    if results.get("macro_accuracy") is not None:
        table.add_row("macro (categories)", f"{results['macro_accuracy']:.3f}", "", "", "", "")
    console.print(table)
    agreement = results.get("judge_agreement")
    if agreement and agreement.get("agreement") is not None:
        kappa = agreement.get("kappa")
        console.print(
            f"judge agrees with exact match on {agreement['agreement']:.0%} of {agreement['n']} checked items"
            + (f" (Cohen's κ {kappa:.2f})" if kappa is not None else "")
        )
