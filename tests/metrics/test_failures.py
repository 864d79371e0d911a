"""results.json's `failures`: each class counted, the model's share apart from the infrastructure's, the bounds and
the widened interval; and the simulation of docs/statistics.md ("Infrastructure noise"): whatever the infrastructure
fails — at random, only right answers, only wrong ones — the widened interval covers the accuracy the run would have
had at its nominal 95% or more, where the interval over the answers left is far below it."""

from __future__ import annotations

from array import array

import numpy as np
import pytest

from proctor.core.results import INFRA_WARN_RATE
from proctor.log.runlog import ExecutionDetails, Outcome, Sample
from proctor.metrics.failures import failure_line, infrastructure_warning, widened
from proctor.metrics.results import summarize
from proctor.stats.intervals import accuracy_ci
from proctor.util.columns import Labels


def _s(i: int, outcome: Outcome, epoch: int = 0, **kw: object) -> Sample:
    score = {Outcome.CORRECT: 1.0, Outcome.WRONG: 0.0, Outcome.TRUNCATED: 0.0}.get(outcome)
    return Sample(sample_id=f"q{i}#{epoch}", item_id=f"q{i}", epoch=epoch, outcome=outcome, score=score, **kw)


def _run() -> list[Sample]:
    return ([_s(i, Outcome.CORRECT) for i in range(50)] + [_s(50 + i, Outcome.WRONG) for i in range(30)]
            + [_s(80 + i, Outcome.TRUNCATED) for i in range(5)]
            + [_s(85 + i, Outcome.ERROR, error="HTTP 503 from http://h/v1: busy") for i in range(6)]
            + [_s(91 + i, Outcome.ERROR, error="timed out after 120s at http://h/v1") for i in range(2)]
            + [_s(93, Outcome.ERROR, error="could not start bwrap", extracted="x = 1",
                  details=ExecutionDetails(verdict="error", sandbox="bubblewrap"))]
            + [_s(94, Outcome.WRONG, details=ExecutionDetails(verdict="limit", limit="memory", exec_limits="authors",
                                                               beyond_authors=True))]
            + [_s(95, Outcome.UNSCORED)])


def test_the_block_counts_each_class_and_bounds_the_accuracy() -> None:
    results = summarize(_run())
    f = results.failures
    assert f is not None and f.n == 95  # the unscored sample has no reference: left out
    assert f.by_class == {"wrong": 30, "limit": 5, "sandbox": 2, "server": 6, "timeout": 2}
    assert (f.model, f.infrastructure, f.infrastructure_rate) == (35, 10, pytest.approx(10 / 95))
    # counted: 50 right, 30 wrong, 5 truncated (0), the contained memory limit (infrastructure); 9 errors left out
    assert f.low == pytest.approx(50 / 95) and f.high == pytest.approx(60 / 95)
    assert results.overall.accuracy == pytest.approx(50 / 86)
    lo, hi = accuracy_ci([1.0] * 50 + [0.0] * 45), accuracy_ci([1.0] * 60 + [0.0] * 35)
    assert (f.ci_low, f.ci_high) == (pytest.approx(lo.ci_low), pytest.approx(hi.ci_high))
    assert f.ci_method == "wilson at both bounds"
    line = failure_line(f)
    assert line is not None and line.startswith(
        "failures: 10 of 95 (10.5%) by the infrastructure (sandbox 2, server 6, timeout 2), 35 by the model "
        "(wrong 30, limit 5)")
    warning = infrastructure_warning(f)
    assert warning is not None and "above 2%" in warning


def test_below_the_threshold_no_warning_and_none_failed_no_bounds() -> None:
    clean = [_s(i, Outcome.CORRECT) for i in range(60)] + [_s(60 + i, Outcome.WRONG) for i in range(40)]
    f = summarize(clean).failures
    assert f is not None and f.infrastructure == 0 and f.low is None and f.ci_low is None
    assert infrastructure_warning(f) is None
    two = summarize([*clean, _s(100, Outcome.ERROR, error="HTTP 500 from h"),
                     _s(101, Outcome.ERROR, error="HTTP 500 from h")]).failures
    assert two is not None and two.infrastructure_rate == pytest.approx(2 / 102) and 2 / 102 <= INFRA_WARN_RATE
    assert infrastructure_warning(two) is None  # 2% is the threshold: above it warns
    three = summarize([*clean, *(_s(100 + i, Outcome.ERROR, error="HTTP 500 from h") for i in range(3))]).failures
    assert infrastructure_warning(three) is not None


def test_epochs_cluster_the_widened_interval() -> None:
    samples = [_s(i, Outcome.CORRECT if i % 2 else Outcome.WRONG, epoch=e) for i in range(30) for e in range(3)]
    samples[0] = _s(0, Outcome.ERROR, error="HTTP 502 from h")
    f = summarize(samples).failures
    assert f is not None and f.ci_method == "clustered_wilson at both bounds"


def simulate(p: float, n: int, rate: float, falls_on: str, reps: int = 1000, seed: int = 0
             ) -> tuple[float, float, float]:
    """Coverage of the true accuracy `p` by the widened interval, by the interval over the answers the
    infrastructure left, and of the run's own accuracy had nothing failed by the bounds: `n` items answered right with
    probability p; the infrastructure fails `rate` of them — drawn at random (`random`), from the right answers only
    (`right`) or from the wrong ones only (`wrong`)."""
    rng = np.random.default_rng(seed)
    items = Labels()
    for i in range(n):
        items.append(f"q{i}")
    widened_hits = left_hits = bounds_hits = 0
    k = round(rate * n)
    for _ in range(reps):
        right = rng.random(n) < p
        pool = np.arange(n) if falls_on == "random" else np.flatnonzero(right == (falls_on == "right"))
        failed = rng.choice(pool, size=min(k, pool.size), replace=False)
        infra = np.zeros(n)
        infra[failed] = 1.0
        low, high = widened(array("d", right.astype(float)), array("d", infra), items)
        assert low.ci_low is not None and high.ci_high is not None and low.value is not None
        widened_hits += low.ci_low <= p <= high.ci_high
        left = accuracy_ci(right[infra == 0].astype(float))
        left_hits += (left.ci_low or 0.0) <= p <= (left.ci_high or 0.0)
        bounds_hits += (low.value or 0.0) <= right.mean() <= (high.value or 0.0)
    return widened_hits / reps, left_hits / reps, bounds_hits / reps


@pytest.mark.parametrize("falls_on", ["random", "right", "wrong"])
@pytest.mark.parametrize(("p", "rate"), [(0.3, 0.02), (0.6, 0.05), (0.85, 0.10), (0.5, 0.10)])
def test_the_widened_interval_covers_at_its_nominal_rate(p: float, rate: float, falls_on: str) -> None:
    widened_cover, left_cover, bounds_cover = simulate(p, 200, rate, falls_on)
    assert widened_cover >= 0.95, (widened_cover, left_cover)
    assert bounds_cover == 1.0  # the run's own accuracy had nothing failed: always between the bounds
    if falls_on != "random":  # failures that fall on one side bias the interval over the answers left
        assert left_cover < widened_cover and (left_cover < 0.75 or p != 0.5)
