"""Krippendorff's α (nominal, two coders) held to the `krippendorff` package."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.stats.agreement import krippendorff_alpha_nominal

krippendorff = pytest.importorskip("krippendorff")  # the oracle (dev extra)


@pytest.mark.parametrize("seed", range(6))
def test_alpha_is_krippendorffs(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    a = rng.integers(0, 2 + seed % 2, size=n)  # two values, or three
    b = np.where(rng.random(n) < 0.7, a, rng.integers(0, 3, size=n))
    want = krippendorff.alpha(reliability_data=np.array([a, b], dtype=float), level_of_measurement="nominal")
    assert krippendorff_alpha_nominal(list(a), list(b)) == pytest.approx(want, abs=1e-12)


def test_alpha_is_undefined_without_variation() -> None:
    assert krippendorff_alpha_nominal([], []) is None
    assert krippendorff_alpha_nominal(["c", "c"], ["c", "c"]) is None
    assert krippendorff_alpha_nominal(["c", "w"], ["c", "w"]) == pytest.approx(1.0)
