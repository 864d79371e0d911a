"""Small direct checks for bugs the end-to-end tests found."""

from __future__ import annotations

import pytest

from proctor.stats.intervals import wilson_interval


@pytest.mark.parametrize("n", [1, 3, 7, 10, 30, 101])
def test_wilson_interval_contains_the_estimate_at_the_edges(n: int) -> None:
    for k in (0, n):
        lo, hi = wilson_interval(k, n)
        assert 0.0 <= lo <= k / n <= hi <= 1.0
    lo, hi = wilson_interval(0, n)
    assert lo == 0.0
