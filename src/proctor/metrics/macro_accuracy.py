"""Macro accuracy: the unweighted mean of the categories' accuracies (each category counts once)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

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

    def tally(self, context: RunContext) -> MacroTally:
        return MacroTally()


@dataclass
class MacroTally:
    """Each category's counted scores, gathered one sample at a time."""

    scores: dict[str, array[float]] = field(default_factory=dict)

    def add(self, s: Sample) -> None:
        if s.category is not None:
            column = self.scores.setdefault(s.category, array("d"))
            if s.scored and s.score is not None:
                column.append(s.score)

    def result(self) -> float | None:
        accs = [float(np.mean(self.scores[k])) for k in sorted(self.scores) if len(self.scores[k])]
        return float(np.mean(accs)) if accs else None
