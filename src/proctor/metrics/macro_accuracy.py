"""Macro accuracy: the unweighted mean of the categories' accuracies (each category counts once)."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

import numpy as np

from ..log.runlog import Sample
from .base import RunContext, Tallied


class MacroAccuracy(Tallied):
    name = "macro_accuracy"
    label = "macro (categories)"
    needs = frozenset({"score", "outcome", "category"})

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
