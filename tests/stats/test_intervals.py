"""Every bootstrap interval in proctor.stats is floored (#49 item 6): never zero-width unless a bound forces it,
covering at its nominal rate at 2, 5 and 20 units."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proctor.stats.comparison import graded_interval
from proctor.stats.intervals import accuracy_ci, bootstrap_ci, floored, small_sample_floor


def test_the_floor_is_the_continuity_corrected_wilson_bound_and_fades_as_one_over_n() -> None:
    assert [round(small_sample_floor(n), 3) for n in (2, 5, 20, 100)] == [0.802, 0.537, 0.2, 0.046]
    assert floored(0.4, 0.6, 0.5, 10_000) == (0.4, 0.6)  # a wide bootstrap interval is left as it is
    assert floored(0.0, 0.0, 0.0, 2) == (0.0, pytest.approx(0.802, abs=1e-3))  # the bound keeps its end


@pytest.mark.parametrize("scores", [[0.5, 0.5], [0.25, 0.25, 0.25], [0.0, 0.0]])
def test_no_bootstrap_interval_is_zero_width(scores: list[float]) -> None:
    graded = accuracy_ci(scores + [0.5])  # graded: the percentile bootstrap
    assert graded.method == "bootstrap" and graded.ci_high - graded.ci_low > 0.5
    clustered = accuracy_ci([0.5] * 6, clusters=["a", "a", "a", "b", "b", "b"])
    assert clustered.method == "cluster_bootstrap" and clustered.ci_low < 0.5 < clustered.ci_high
    lo, hi = graded_interval(np.zeros(3), 500, 0)
    assert lo < 0 < hi


@pytest.mark.parametrize("n", [2, 5, 20])
@pytest.mark.parametrize(("a", "b"), [(0.3, 3.0), (2.0, 2.0), (0.5, 0.5)])
def test_the_graded_bootstrap_covers_at_its_nominal_rate(n: int, a: float, b: float) -> None:
    rng = np.random.default_rng(n)
    truth, reps = a / (a + b), 300
    hits = 0
    for r in range(reps):
        lo, hi = bootstrap_ci(rng.beta(a, b, n), n_boot=300, seed=r)
        hits += lo <= truth <= hi
    assert hits / reps >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / reps), (n, a, b, hits / reps)
