"""The paired comparison record against real statistics oracles (scipy, statsmodels) on small and large n."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.stats.comparison import (
    Comparison,
    RunRef,
    mcnemar_exact,
    paired_difference,
    points,
    tango_interval,
    wilson_floor,
)

scipy_stats = pytest.importorskip("scipy.stats")
scipy_optimize = pytest.importorskip("scipy.optimize")
contingency = pytest.importorskip("statsmodels.stats.contingency_tables")

Z = scipy_stats.norm.ppf(0.975)


def _tango_statistic(delta: float, b: int, c: int, n: int) -> float:
    """Tango (1998), eq. 3–4, written out from the paper: b = n12 (A right, B wrong), c = n21."""
    w = -b - c + (2 * n - b + c) * delta
    q21 = (math.sqrt(w * w + 8 * n * c * delta * (1 - delta)) - w) / (4 * n)
    return (b - c - n * delta) / math.sqrt(n * (2 * q21 + delta * (1 - delta)))


def _tango_oracle(b: int, c: int, n: int) -> tuple[float, float]:
    """The interval's ends as scipy's brentq finds them (the score statistic at ±z)."""
    eps, est = 1e-9, (b - c) / n  # the statistic is 0/0 at ±1 and, with no discordant pair, at the estimate
    lo = -1.0 if est == -1 else scipy_optimize.brentq(lambda d: _tango_statistic(d, b, c, n) - Z, -1 + eps,
                                                      est - eps)
    hi = 1.0 if est == 1 else scipy_optimize.brentq(lambda d: _tango_statistic(d, b, c, n) + Z, est + eps,
                                                    1 - eps)
    return lo, hi


def _pairs(b10: int, b01: int, both: int, neither: int) -> tuple[list[int], list[int]]:
    a = [1] * b10 + [0] * b01 + [1] * both + [0] * neither
    b = [0] * b10 + [1] * b01 + [1] * both + [0] * neither
    return a, b


TABLES = [  # (A right B wrong, A wrong B right, both right, both wrong): small and large n
    (1, 7, 1, 12), (0, 0, 3, 2), (3, 0, 0, 0), (2, 1, 0, 1), (6, 16, 59, 80), (40, 20, 60, 40),
    (50, 10, 110, 30), (310, 260, 500, 134), (12, 0, 7, 1), (0, 5, 0, 0),
]


@pytest.mark.parametrize("table", TABLES)
def test_tango_interval_matches_scipy_root_finding(table: tuple[int, int, int, int]) -> None:
    b10, b01, _, _ = table
    n = sum(table)
    lo, hi = tango_interval(b10, b01, n)
    want_lo, want_hi = _tango_oracle(b10, b01, n)
    assert lo == pytest.approx(want_lo, abs=1e-6) and hi == pytest.approx(want_hi, abs=1e-6)
    assert lo <= (b10 - b01) / n <= hi


@pytest.mark.parametrize("table", TABLES)
def test_mcnemar_exact_matches_statsmodels_and_scipy(table: tuple[int, int, int, int]) -> None:
    b10, b01, both, neither = table
    want = contingency.mcnemar([[both, b10], [b01, neither]], exact=True).pvalue
    assert mcnemar_exact(b10, b01) == pytest.approx(want, rel=1e-9)
    if b10 + b01:
        assert mcnemar_exact(b10, b01) == pytest.approx(scipy_stats.binomtest(b10, b10 + b01).pvalue, rel=1e-9)


@pytest.mark.parametrize("table", TABLES)
def test_record_of_binary_scores(table: tuple[int, int, int, int]) -> None:
    b10, b01, both, neither = table
    a, b = _pairs(*table)
    g = paired_difference("overall", a, b)
    assert (g.n, g.b10, g.b01, g.binary, g.interval_method) == (len(a), b10, b01, True, "tango_score")
    assert g.diff == pytest.approx((b10 - b01) / len(a))
    assert (g.ci_low, g.ci_high) == pytest.approx(_tango_oracle(b10, b01, len(a)), abs=1e-6)
    assert g.p_value == pytest.approx(contingency.mcnemar([[both, b10], [b01, neither]], exact=True).pvalue)


def test_tango_covers_the_truth_about_95_percent() -> None:
    """Coverage on simulated paired data, n = 25: a score interval stays near its nominal level."""
    rng = np.random.default_rng(3)
    probs, n, hits, trials = [0.15, 0.05, 0.5, 0.3], 25, 0, 600
    truth = probs[0] - probs[1]
    for _ in range(trials):
        b10, b01, _, _ = rng.multinomial(n, probs)
        lo, hi = tango_interval(int(b10), int(b01), n)
        hits += lo <= truth <= hi
    assert 0.92 <= hits / trials <= 0.99


def test_graded_scores_use_the_floored_bootstrap() -> None:
    a = [0.5, 1.0, 0.25, 0.75]
    g = paired_difference("overall", a, a, n_boot=500)
    assert not g.binary and g.interval_method == "paired_bootstrap_wilson_floor"
    assert (g.ci_low, g.diff, g.ci_high) == pytest.approx((-wilson_floor(4), 0.0, wilson_floor(4)))
    rng = np.random.default_rng(0)
    x = rng.random(2000)
    y = np.clip(x - 0.1 + 0.05 * rng.standard_normal(2000), 0, 1)
    big = paired_difference("overall", x, y, n_boot=1000)
    se = np.std(x - y, ddof=1) / math.sqrt(2000)
    assert big.ci_low == pytest.approx(big.diff - Z * se, abs=0.002)  # the bootstrap, not the floor, at large n
    assert big.ci_high == pytest.approx(big.diff + Z * se, abs=0.002)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.5, 1.0]), st.sampled_from([0.0, 0.5, 1.0])), min_size=1,
                max_size=29), st.booleans())
def test_no_interval_is_zero_width_below_30_items(pairs: list[tuple[float, float]], binary: bool) -> None:
    """Not even when every pair is identical: n items never pin the difference down to a point."""
    a = [x if not binary else float(x >= 0.5) for x, _ in pairs]
    b = [y if not binary else float(y >= 0.5) for _, y in pairs]
    g = paired_difference("g", a, b, n_boot=200)
    assert g.ci_high - g.ci_low > 0.05
    assert g.ci_low <= g.diff <= g.ci_high
    assert -1.0 <= g.ci_low and g.ci_high <= 1.0


def test_points_never_prints_minus_zero() -> None:
    assert [points(x) for x in (-0.0, -0.0004, 0.0004, 0.041, -0.041)] == ["0.0", "0.0", "0.0", "+4.1", "-4.1"]
    assert points(-0.0004, signed=False) == "0.0"


def _ref(model: str) -> RunRef:
    return RunRef(run_id=f"run-{model}", model=model, dataset="d")


def test_verdicts_are_plain_sentences() -> None:
    a, b = _pairs(59, 10, 1100, 35)
    cmp = Comparison(a=_ref("m1"), b=_ref("m2"), overall=paired_difference("overall", a, b), by_category=[],
                     warnings=[], only_in_a=[], only_in_b=[])
    assert cmp.verdict == "m1 ahead of m2 by 4.1 points [2.8, 5.5], p < 0.001, 1,204 shared items"
    flipped = paired_difference("overall", b, a)
    assert flipped.verdict("m2", "m1").startswith("m1 ahead of m2 by 4.1 points")
    few = paired_difference("overall", *_pairs(2, 1, 3, 3))  # 3 discordant of 9: no difference detectable
    assert few.verdict("m1", "m2").startswith("underpowered (too few items to detect any difference at 80% power): "
                                              "m1 − m2 +11.1 points [")
    same = paired_difference("overall", *_pairs(0, 0, 3, 3))  # identical answers: nothing to power
    assert same.verdict("m1", "m2").startswith("no detectable difference: m1 − m2 0.0 points [")
    assert cmp.to_dict()["verdict"] == cmp.verdict


def test_a_difference_is_claimed_only_when_interval_and_exact_test_agree() -> None:
    """5 discordant pairs, all one way, on 39 items: the score interval excludes 0, McNemar's exact p = 0.0625:
    borderline, not a claim."""
    g = paired_difference("overall", *_pairs(5, 0, 20, 14))
    assert g.excludes_zero and g.p_value == pytest.approx(0.0625)
    assert not g.detected and g.borderline
    assert g.verdict("m1", "m2").startswith("borderline, the interval and the exact test disagree: m1 − m2 +12.8")


def test_runtime_code_never_imports_the_oracles() -> None:
    import subprocess
    import sys

    code = ("import sys, proctor.stats.comparison, proctor.analysis.compare, proctor.analysis.leaderboard, proctor.report.comparisons; "
            "print(sorted(m for m in ('scipy', 'statsmodels') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
