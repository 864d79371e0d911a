"""Macro accuracy: the unweighted mean of the categories' accuracies (each category counts once)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..log.runlog import Sample
from .accuracy import groups, mean_score
from .base import RunContext


class MacroAccuracy:
    name = "macro_accuracy"
    label = "macro (categories)"
    needs = frozenset({"score", "outcome", "category"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> float | None:
        accs = [a for a in (mean_score(g) for g in groups(samples, "category").values()) if a is not None]
        return float(np.mean(accs)) if accs else None
