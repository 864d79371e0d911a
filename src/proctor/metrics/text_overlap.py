"""Text overlap: the mean token F1, ROUGE-1/2/L and BLEU of free-text answers against their references
(`proctor.scoring.text_metrics`, per sample in `details`), with a bootstrap 95% interval."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from ..core.results import MetricValue
from ..log.runlog import Sample
from ..stats.intervals import accuracy_ci
from ..util.columns import Labels
from .base import RunContext, Tallied

MEASURES = ("token_f1", "rouge1", "rouge2", "rougeL", "bleu")


class TextOverlap(Tallied):
    """One overlap measure's mean over the scored samples that carry it (None when none do)."""

    needs = frozenset({"details", "outcome", "item_id", "dataset"})

    def __init__(self, measure: str) -> None:
        if measure not in MEASURES:
            raise ValueError(f"no text overlap measure {measure!r}; one of {', '.join(MEASURES)}")
        self.measure = measure
        self.name = measure
        self.label = measure

    def tally(self, context: RunContext) -> OverlapTally:
        return OverlapTally(self.measure, context.seed)


@dataclass
class OverlapTally:
    """`TextOverlap` gathered one sample at a time: the measure's values and their items, as columns."""

    measure: str
    seed: int = 0
    values: array[float] = field(default_factory=lambda: array("d"))
    items: Labels = field(default_factory=Labels)

    def add(self, s: Sample) -> None:
        if s.scored and isinstance(s.details.get(self.measure), int | float):
            self.values.append(float(s.details[self.measure]))
            self.items.append(f"{s.dataset}\x1f{s.item_id}")

    def result(self) -> MetricValue | None:
        return accuracy_ci(self.values, self.items, seed=self.seed) if len(self.values) else None
