"""Calibration (Brier, ECE, log-loss, reliability bins) of the probabilities a run's samples carry: a
distribution over options with a known answer (`details.distribution`), or a stated `p_correct`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..log.runlog import Calibration, Outcome, Sample
from ..stats.intervals import binary_calibration, calibration
from .base import RunContext


def _inputs(samples: Sequence[Sample]) -> tuple[list[np.ndarray], list[int], list[float], list[int]]:
    """Split scored samples into distribution cases (probs, expected index) and binary p_correct cases."""
    dists: list[np.ndarray] = []
    expected: list[int] = []
    p_bin: list[float] = []
    y_bin: list[int] = []
    for s in samples:
        if not s.scored:
            continue
        d = s.details
        exp = d.get("expected", s.reference)
        if "distribution" in d and isinstance(exp, int) and not isinstance(exp, bool) and exp >= 0:
            dists.append(np.asarray(d["distribution"], dtype=float))
            expected.append(exp)
        elif "p_correct" in d:
            p_bin.append(float(d["p_correct"]))
            y_bin.append(int(s.outcome is Outcome.CORRECT))
    return dists, expected, p_bin, y_bin


def calibration_of(samples: Sequence[Sample]) -> Calibration | None:
    """The samples' calibration: over their distributions when they carry any, else their `p_correct`."""
    dists, expected, p_bin, y_bin = _inputs(samples)
    if dists:
        return calibration(dists, expected)
    return binary_calibration(p_bin, y_bin) if p_bin else None


class CalibrationMetric:
    name = "calibration"
    label = "calibration"
    needs = frozenset({"details", "reference", "outcome"})

    def compute(self, samples: Sequence[Sample], context: RunContext) -> Calibration | None:
        return calibration_of(samples)
