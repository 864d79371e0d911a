"""pass@k's interval (#49 item 6): honest at small n. 2 items × 3 epochs all failing printed [0.000, 0.000] (a
percentile bootstrap over 2 items has one value to resample); the interval now covers the population's pass@k at
its nominal rate in simulation at 2, 5 and 20 items, and is never zero-width."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from proctor.metrics import epochs
from proctor.metrics.epochs import pass_at_every_k
from proctor.stats.intervals import bootstrap_ci, pass_at_k

EPOCHS = 3
# the population of per-item pass probabilities: hard (mostly failing), uniform, U-shaped (items solved or not)
POPULATIONS = {"hard": (0.2, 5.0), "uniform": (1.0, 1.0), "u-shaped": (0.5, 0.5), "easy": (5.0, 1.0)}


def test_two_items_all_failing_is_no_longer_a_zero_width_interval() -> None:
    at = pass_at_every_k([[0.0] * EPOCHS, [0.0] * EPOCHS], EPOCHS)
    assert at["1"].value == 0.0 and at["1"].ci_low == 0.0 and at["1"].ci_high == pytest.approx(0.802, abs=1e-3)
    solved = pass_at_every_k([[1.0] * EPOCHS] * 2, EPOCHS)["3"]
    assert solved.ci_high == 1.0 and solved.ci_low == pytest.approx(1 - 0.802, abs=1e-3)  # 1.0 bounds one end only
    assert pass_at_every_k([[0.0, 1.0]], 2)["1"].ci_high is not None  # one item: an interval too


@pytest.mark.parametrize("n", [2, 5, 20])
@pytest.mark.parametrize("population", sorted(POPULATIONS))
def test_pass_at_k_interval_covers_at_its_nominal_rate(n: int, population: str,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(epochs, "bootstrap_ci", functools.partial(bootstrap_ci, n_boot=300))  # the same, faster
    a, b = POPULATIONS[population]
    rng = np.random.default_rng(n * 100 + len(population))
    p = rng.beta(a, b, 400_000)
    truth = {k: float(np.mean(1 - (1 - p) ** k)) for k in (1, EPOCHS)}  # the population's pass@k
    covered = {k: 0 for k in truth}
    reps = 300
    for r in range(reps):
        solved = rng.binomial(EPOCHS, rng.beta(a, b, n))
        per_item = [[1.0] * int(c) + [0.0] * (EPOCHS - int(c)) for c in solved]
        at = pass_at_every_k(per_item, EPOCHS, seed=r)
        for k, value in truth.items():
            m = at[str(k)]
            assert m.ci_low is not None and m.ci_high is not None and m.ci_high > m.ci_low
            covered[k] += m.ci_low <= value <= m.ci_high
    for k, hits in covered.items():
        rate = hits / reps
        assert rate >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / reps), (n, population, k, rate)  # nominal, within 2 SE


def test_the_estimator_is_unchanged() -> None:
    per_item = [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    assert pass_at_every_k(per_item, 3)["2"].value == pytest.approx((pass_at_k(3, 1, 2) + pass_at_k(3, 2, 2)) / 2)
