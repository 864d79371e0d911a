"""Calibration (Brier, ECE, log-loss, reliability bins) of the probabilities a run's samples carry: a
distribution over options with a known answer (`details.distribution`), or a stated `p_correct`."""

from __future__ import annotations

from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..core.results import Calibration
from ..log.runlog import Outcome, Sample
from ..stats.intervals import binary_calibration, calibration_of_points, calibration_point
from .base import RunContext, Tallied


def calibration_of(samples: Iterable[Sample]) -> Calibration | None:
    """The samples' calibration: over their distributions when they carry any, else their `p_correct`."""
    acc = CalibrationTally()
    for s in samples:
        acc.add(s)
    return acc.result()


class CalibrationMetric(Tallied):
    name = "calibration"
    label = "calibration"
    needs = frozenset({"details", "reference", "outcome"})

    def tally(self, context: RunContext) -> CalibrationTally:
        return CalibrationTally()


def _column() -> array[float]:
    return array("d")


@dataclass
class CalibrationTally:
    """`calibration_of` one sample at a time: each distribution's point (Brier, log-loss, confidence, correct)
    and each stated p_correct with its outcome, as columns of floats."""

    points: tuple[array[float], array[float], array[float], array[float]] = field(
        default_factory=lambda: (_column(), _column(), _column(), _column()))
    p_bin: array[float] = field(default_factory=_column)
    y_bin: array[float] = field(default_factory=_column)

    def add(self, s: Sample) -> None:
        if not s.scored:
            return
        d = s.details
        exp = d.get("expected", s.reference)
        if "distribution" in d and isinstance(exp, int) and not isinstance(exp, bool) and exp >= 0:
            for column, value in zip(self.points, calibration_point(d["distribution"], exp), strict=True):
                column.append(value)
        elif "p_correct" in d:
            self.p_bin.append(float(d["p_correct"]))
            self.y_bin.append(float(s.outcome is Outcome.CORRECT))

    def result(self) -> Calibration | None:
        if len(self.points[0]):
            return calibration_of_points(*self.points)
        return binary_calibration(self.p_bin, self.y_bin) if len(self.p_bin) else None
