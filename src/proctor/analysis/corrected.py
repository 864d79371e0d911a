"""compare and gate with human labels: the judge-corrected difference of two runs (docs/statistics.md).

Each run's verdicts are predictions; a human label says whether that run's answer to an item was right. The
estimand is the mean of A's true verdict − B's over the items they share, so the paired difference is estimated
by prediction-powered inference on the per-item differences (`proctor.stats.ppi.ppi_over`): the predictions are
A's score − B's on every shared item, the truth A's label − B's on the items labelled in both runs. Labels on
items one run alone has labelled do not enter (the pair needs both sides). An item answered in several epochs is
never labelled here (its score is a mean of answers no label describes).

The labels come from `--human-labels` on the command line, else from the run's own manifest (`proctor run
--human-labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict

from ..core.spec import HumanLabels
from ..log.runlog import MANIFEST, read_manifest
from ..metrics.human_labels import read_human_labels
from ..run.store import RunScores
from ..stats.ppi import ppi_over
from ..util.errors import InputError
from .gate import Decision, GateCheck, GateResult, decide


class CorrectedDifference(BaseModel):
    """A − B corrected by human labels on their shared items (None values: fewer than 2 items labelled in both)."""

    model_config = ConfigDict(frozen=True)

    n: int  # shared items (the predictions)
    n_labelled: int  # of them, labelled in both runs
    judge_diff: float  # the plain difference of the runs' verdicts
    diff: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    lam: float | None = None
    method: str = "ppi++"

    def text(self) -> str:
        """`judge-corrected A − B +3.1 points [-1.0, +7.2] (PPI++, 80 of 500 items labelled in both; the
        verdicts' own +5.0)`."""
        if self.diff is None or self.ci_low is None or self.ci_high is None:
            return (f"judge-corrected A − B: n/a ({self.n_labelled} of {self.n:,} shared items labelled in both "
                    "runs; it needs 2 or more)")
        return (f"judge-corrected A − B {100 * self.diff:+.1f} points [{100 * self.ci_low:+.1f}, "
                f"{100 * self.ci_high:+.1f}] ({self.method.upper()}, {self.n_labelled:,} of {self.n:,} shared items "
                f"labelled in both; the verdicts' own {100 * self.judge_diff:+.1f})")


def item_labels(scores: RunScores, labels: HumanLabels) -> dict[str, bool]:
    """The run's items a label describes: by item id or `ITEM#0`, for items answered once."""
    out = {}
    for item, s in scores.items.items():
        key = item if item in labels.labels else f"{item}#0"
        if s.n_epochs == 1 and key in labels.labels:
            out[item] = labels.labels[key]
    return out


def corrected_difference(a: RunScores, b: RunScores, labels_a: HumanLabels, labels_b: HumanLabels) -> CorrectedDifference:
    """A − B on their shared items, corrected by the items both runs have labelled (module docstring)."""
    shared = sorted(a.items.keys() & b.items.keys())
    la, lb = item_labels(a, labels_a), item_labels(b, labels_b)
    pred = np.array([a.items[i].score - b.items[i].score for i in shared], dtype=float)
    mask = np.array([i in la and i in lb for i in shared], dtype=bool)
    truth = np.array([float(la.get(i, False)) - float(lb.get(i, False)) for i in shared], dtype=float)
    base = CorrectedDifference(n=len(shared), n_labelled=int(mask.sum()),
                               judge_diff=float(pred.mean()) if len(pred) else 0.0)
    got = ppi_over(pred, truth, mask) if len(shared) else None
    if got is None:
        return base
    return base.model_copy(update={"diff": got.estimate, "ci_low": got.ci_low, "ci_high": got.ci_high,
                                   "lam": got.lam, "method": "labels" if base.n_labelled == base.n else "ppi++"})


def run_labels(scores: RunScores, given: Path | None) -> HumanLabels | None:
    """The labels of a run: the file given, else its manifest's (`run --human-labels`); None when neither."""
    if given is not None:
        return read_human_labels(given)
    path = Path(scores.run.path)
    if not (path / MANIFEST).is_file():
        return None
    spec = read_manifest(path).spec
    return spec.human_labels if spec is not None else None


def labels_by_run(given: Sequence[str], runs: Sequence[str]) -> dict[str, Path]:
    """`--human-labels` values for commands over several runs: `RUN=FILE` (RUN as given on the command line), or
    FILE alone when there is one run."""
    out: dict[str, Path] = {}
    for text in given:
        run, sep, file = text.rpartition("=")
        if not sep:
            if len(runs) != 1:
                raise InputError.at("--human-labels", f"{text!r}: with several runs give RUN=FILE (RUN as given)")
            run, file = runs[0], text
        if run not in runs:
            raise InputError.at("--human-labels", f"{run!r} is none of the runs given ({', '.join(runs)})")
        out[run] = Path(file)
    return out


def with_corrected(result: GateResult, corrected: CorrectedDifference) -> GateResult:
    """The gate decided overall on the judge-corrected difference (categories stay on the verdicts: a label set
    is too small to gate each)."""
    if corrected.diff is None or corrected.ci_low is None or corrected.ci_high is None:
        return result.model_copy(update={"note": corrected.text() + ": gated on the verdicts"})
    check = GateCheck(group=f"overall, judge-corrected ({corrected.method.upper()}, {corrected.n_labelled:,} "
                            "items labelled in both)", n=corrected.n, diff=corrected.diff,
                      ci_low=corrected.ci_low, ci_high=corrected.ci_high, level=0.95,
                      decision=decide(corrected.ci_low, corrected.ci_high, result.max_drop))
    checks = [check, *result.checks[1:]]
    decision = next((d for d in (Decision.NO_GO, Decision.INCONCLUSIVE) if any(c.decision is d for c in checks)),
                    Decision.GO)
    deciding = next(c for c in checks if c.decision is decision) if decision is not Decision.GO else check
    note = (f"decided on the judge-corrected difference (human labels); the verdicts alone: "
            f"{result.checks[0].text(result.max_drop)}")
    return result.model_copy(update={"decision": decision, "deciding": deciding, "checks": checks, "note": note})


__all__ = ["CorrectedDifference", "corrected_difference", "item_labels", "labels_by_run",
           "run_labels", "with_corrected"]
