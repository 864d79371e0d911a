"""Judge-corrected accuracy (`--human-labels`): the run's verdicts on every scored sample are predictions, the
human labels the truth on the labelled ones; prediction-powered inference (`proctor.stats.ppi`, PPI++) gives the
corrected accuracy with its 95% interval, and the verdicts are held to the labels (κ, α, confusion counts).

A label's id is a sample id (`ITEM#EPOCH`), or an item id where that item has one scored sample (a run of one
epoch). The samples are the interval's unit (independent draws; under epochs label one epoch, or read it with
care). Errors and unscored samples have no verdict: a label on one is counted unmatched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ..core.results import HumanAgreement, JudgeCorrected
from ..core.spec import HumanLabels
from ..log.runlog import Sample
from ..scoring.judge import cohens_kappa
from ..stats.agreement import krippendorff_alpha_nominal
from ..stats.ppi import ppi_over
from .base import RunContext, Tallied

FEW_LABELS = 50  # fewer labels: PPI++'s normal interval covered 88% (20 labels) to 93% (50) in simulation


class JudgeCorrectedMetric(Tallied):
    name = "judge_corrected"
    label = "judge-corrected accuracy"
    needs = frozenset({"score", "item_id", "sample_id"})

    def tally(self, context: RunContext) -> CorrectedTally:
        spec = context.manifest.spec if context.manifest is not None else None
        return CorrectedTally(spec.human_labels if spec is not None else None)


def corrected_of(samples: Iterable[Sample], labels: HumanLabels) -> JudgeCorrected:
    """The judge-corrected block of `samples` under `labels` (a finished run read with `--human-labels`)."""
    tally = CorrectedTally(labels)
    for s in samples:
        tally.add(s)
    block = tally.result()
    assert block is not None  # labels given: always a block
    return block


@dataclass
class CorrectedTally:
    """The scored samples' ids and scores, gathered one sample at a time (a float and two ids each)."""

    labels: HumanLabels | None
    ids: list[tuple[str, str]] = field(default_factory=list)  # (sample_id, item_id) of each scored sample
    scores: list[float] = field(default_factory=list)

    def add(self, s: Sample) -> None:
        if self.labels is not None and s.scored and s.score is not None:
            self.ids.append((s.sample_id, s.item_id))
            self.scores.append(float(s.score))

    def result(self) -> JudgeCorrected | None:
        if self.labels is None:
            return None
        human, used = _matched(self.ids, self.labels.labels)
        return corrected(np.asarray(self.scores, dtype=float), human, self.labels,
                         len(self.labels.labels) - len(used))


def _matched(ids: list[tuple[str, str]], labels: Mapping[str, bool]) -> tuple[list[bool | None], set[str]]:
    """Each scored sample's human label (None: unlabelled) and the label ids that matched one."""
    per_item = Counter(item for _, item in ids)
    human: list[bool | None] = []
    used: set[str] = set()
    for sample_id, item_id in ids:
        key = sample_id if sample_id in labels else item_id if per_item[item_id] == 1 and item_id in labels else None
        human.append(labels[key] if key is not None else None)
        if key is not None:
            used.add(key)
    return human, used


def corrected(pred: np.ndarray, human: list[bool | None], labels: HumanLabels, unmatched: int) -> JudgeCorrected:
    """The block from every scored sample's verdict `pred` and its human label (None: none)."""
    mask = np.array([h is not None for h in human], dtype=bool)
    truth = np.array([bool(h) for h in human], dtype=float)
    n_labelled = int(mask.sum())
    base = JudgeCorrected(source=labels.path, sha256=labels.sha256, n=len(pred), n_labelled=n_labelled,
                          n_unmatched=unmatched, judge_accuracy=float(pred.mean()) if len(pred) else None,
                          human_accuracy=float(truth[mask].mean()) if n_labelled else None,
                          agreement=agreement(pred[mask] == 1.0, truth[mask] == 1.0))
    got = ppi_over(pred, truth, mask)
    if got is None:
        return base.model_copy(update={"note": f"{n_labelled} labelled sample(s): an estimate needs 2 or more"})
    few = f"{n_labelled} labels: a normal interval this small covers less than 95% (docs/statistics.md)" if (
        n_labelled < FEW_LABELS) else None
    return base.model_copy(update={
        "method": "labels" if n_labelled == len(pred) else "ppi++", "note": few,
        "accuracy": min(1.0, max(0.0, got.estimate)), "ci_low": max(0.0, got.ci_low), "ci_high": min(1.0, got.ci_high),
        "lam": got.lam, "se": got.se, "sd_pred": float(np.std(pred)), "sd_resid": float(np.std(truth[mask] - pred[mask]))})


def agreement(judge: np.ndarray, human: np.ndarray) -> HumanAgreement:
    """The verdicts (correct: True) held to the humans' on the same samples."""
    name = {True: "correct", False: "wrong"}
    a = [name[bool(v)] for v in judge]
    b = [name[bool(v)] for v in human]
    if not a:
        return HumanAgreement()
    confusion = Counter(f"{x}/{y}" for x, y in zip(a, b, strict=True))
    return HumanAgreement(n=len(a), agreement=sum(x == y for x, y in zip(a, b, strict=True)) / len(a),
                          kappa=cohens_kappa(a, b), alpha=krippendorff_alpha_nominal(a, b),
                          confusion=dict(sorted(confusion.items())))


def corrected_lines(block: JudgeCorrected) -> list[str]:
    """The block in plain sentences: the corrected accuracy beside the judge's, the agreement, what was left out."""
    n = f"{block.n_labelled:,} of {block.n:,} scored samples labelled by humans"
    judge = f"the judge's own {block.judge_accuracy:.3f}" if block.judge_accuracy is not None else "no verdicts"
    if block.accuracy is None or block.ci_low is None or block.ci_high is None:
        lines = [f"judge-corrected accuracy: n/a ({n}; {block.note or 'no estimate'})"]
    else:
        how = f"PPI++, λ {block.lam or 0.0:.2f}" if block.method == "ppi++" else "every sample labelled"
        lines = [(f"judge-corrected accuracy {block.accuracy:.3f} [{block.ci_low:.3f}, {block.ci_high:.3f}] ({how}; "
                 f"{n}; {judge})")]
    a = block.agreement
    if a.n:
        stat = ", ".join(f"{name} {v:.2f}" for name, v in (("Cohen's κ", a.kappa), ("Krippendorff's α", a.alpha))
                         if v is not None)
        counts = ", ".join(f"{k} {v}" for k, v in a.confusion.items())
        lines.append(f"judge vs humans on {a.n:,} samples: agree {a.agreement or 0:.0%}"
                     + (f", {stat}" if stat else "") + f" (judge/human: {counts})")
    if block.n_unmatched:
        lines.append(f"human labels: {block.n_unmatched:,} id(s) match no scored sample (another run's, an error, "
                     "or a typo; under epochs label ITEM#EPOCH)")
    if block.note and block.accuracy is not None:
        lines.append(f"human labels: {block.note}")
    return lines


__all__ = ["JudgeCorrectedMetric", "agreement", "corrected", "corrected_lines", "corrected_of"]
