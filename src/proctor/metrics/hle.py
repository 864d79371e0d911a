"""Humanity's Last Exam's calibration error, as the authors compute it (centerforaisafety/hle
hle_eval/run_judge_results.py `calib_err(confidence, correct, p='2', beta=100)` and `dump_metrics`).

The stated confidences (the judge's reading, `details.p_correct` = confidence / 100) sorted ascending, cut into
bins of `beta` answers (the last bin takes the remainder), and the root of the size-weighted mean squared gap
between a bin's mean confidence and its accuracy, summed over every bin but the last (the authors' loop runs to
`len(bins) - 1`). With fewer than `beta` answers the authors' function fails (no bin): the metric then says so.
The authors print `100 * round(calib_err, 2)`; results.json keeps the unrounded fraction.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..core.results import MetricValue
from ..log.runlog import Outcome, Sample
from ..scoring.hle import JUDGE_NAME
from .base import RunContext, Tallied

BETA = 100


def calib_err(confidence: Sequence[float], correct: Sequence[bool] | Sequence[float], beta: int = BETA) -> float | None:
    """The authors' RMS calibration error (p='2') in bins of `beta`; None where theirs fails (fewer than `beta`)."""
    import numpy as np

    n = len(confidence)
    if n < beta:
        return None
    order = np.argsort(np.asarray(confidence, dtype=float))  # the authors' sort (numpy's default kind)
    conf, hits = np.asarray(confidence, dtype=float)[order], np.asarray(correct, dtype=float)[order]
    bins = [[i * beta, (i + 1) * beta] for i in range(n // beta)]
    bins[-1][1] = n
    total = 0.0
    for lo, hi in bins[:-1]:
        total += (hi - lo) / n * float(np.square(np.abs(np.nanmean(conf[lo:hi]) - np.nanmean(hits[lo:hi]))))
    return float(np.sqrt(total))


class HLECalibrationError(Tallied):
    name = "hle_calibration_error"
    label = "HLE calibration error (RMS, bins of 100)"
    needs = frozenset({"details", "outcome"})

    def tally(self, context: RunContext) -> CalibrationErrorTally:
        return CalibrationErrorTally()


def _calibration_error(confidence: Sequence[float], correct: Sequence[bool] | Sequence[float]) -> MetricValue:
    """The metric's value (or why the authors' function has none) from the judged answers."""
    value = calib_err(confidence, correct)
    if value is None:
        return MetricValue(n=len(confidence), method="hle calib_err",
                           error=f"the authors' calib_err needs at least {BETA} judged answers "
                                 f"(bins of {BETA}); this run has {len(confidence)}")
    return MetricValue(value=value, n=len(confidence), method="hle calib_err")


class HLEAccuracyAuthors(Tallied):
    """The authors' accuracy (`dump_metrics`): correct answers over every question asked, so a question without a
    verdict (a judge or model error) counts as wrong, with their interval, ±1.96·sqrt(p(1−p)/n). proctor's own
    accuracy, beside it, leaves errors out (nothing unscored is counted)."""

    name = "hle_accuracy_authors"
    label = "HLE accuracy as the authors compute it (errors as wrong; their normal interval)"
    needs = frozenset({"details", "outcome"})

    def tally(self, context: RunContext) -> AuthorsTally:
        return AuthorsTally()


def _authors_accuracy(correct: int, n: int) -> MetricValue:
    p = correct / n
    half = 1.96 * math.sqrt(p * (1 - p) / n)
    return MetricValue(value=p, n=n, ci_low=p - half, ci_high=p + half, method="hle dump_metrics (normal)")


METRICS = (HLECalibrationError(), HLEAccuracyAuthors())


def _judged(s: Sample) -> bool:
    return s.scored and s.details.get("judge_version") == JUDGE_NAME and s.details.get("p_correct") is not None


@dataclass
class CalibrationErrorTally:
    """`HLECalibrationError` gathered one sample at a time: the judged answers' confidences and verdicts."""

    confidence: array[float] = field(default_factory=lambda: array("d"))
    correct: array[float] = field(default_factory=lambda: array("d"))

    def add(self, s: Sample) -> None:
        if _judged(s):
            self.confidence.append(float(s.details["p_correct"]))
            self.correct.append(float(s.outcome is Outcome.CORRECT))

    def result(self) -> MetricValue | None:
        return _calibration_error(self.confidence, self.correct) if len(self.confidence) else None


@dataclass
class AuthorsTally:
    """`HLEAccuracyAuthors` gathered one sample at a time: the samples, the correct ones, and whether a judge
    of HLE's graded any."""

    n: int = 0
    correct: int = 0
    judged: bool = False

    def add(self, s: Sample) -> None:
        self.n += 1
        self.correct += s.outcome is Outcome.CORRECT
        self.judged = self.judged or s.details.get("judge_version") == JUDGE_NAME

    def result(self) -> MetricValue | None:
        return _authors_accuracy(self.correct, self.n) if self.n and self.judged else None
