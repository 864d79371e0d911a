"""Holm and Benjamini–Hochberg against statsmodels' multipletests; the paired MDE and sample size against
Connor's (1987) power function for McNemar's test, written here independently with scipy's normal."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from proctor.stats.comparison import paired_difference
from proctor.stats.family import adjust, adjust_comparisons
from proctor.stats.power import independent_discordance, items_needed, min_detectable, min_detectable_graded

multitest = pytest.importorskip("statsmodels.stats.multitest")
norm = pytest.importorskip("scipy.stats").norm


@settings(max_examples=60, deadline=None)  # statsmodels takes ~50 ms a call here
@given(st.lists(st.floats(min_value=0.0, max_value=1.0), min_size=1, max_size=30))
def test_holm_and_bh_match_statsmodels(p: list[float]) -> None:
    for ours, theirs in (("holm", "holm"), ("bh", "fdr_bh")):
        expected = multitest.multipletests(p, alpha=0.05, method=theirs)[1]
        assert adjust(p, ours) == pytest.approx(list(expected), abs=1e-12)  # type: ignore[arg-type]


def test_unknown_correction_is_refused() -> None:
    with pytest.raises(ValueError, match="holm, bh"):
        adjust([0.1], "bonferroni")  # type: ignore[arg-type]


def _connor_power(n: int, delta: float, psi: float, alpha: float = 0.05) -> float:
    """Connor (1987): power of McNemar's test on n pairs, discordance psi, difference delta (normal approx.)."""
    za = norm.ppf(1 - alpha / 2)
    return float(norm.cdf((math.sqrt(n) * delta - za * math.sqrt(psi)) / math.sqrt(psi - delta**2)))


@pytest.mark.parametrize(("delta", "psi"), [(0.05, 0.2), (0.02, 0.1), (0.1, 0.3), (0.03, 0.05), (0.2, 0.25)])
def test_items_needed_is_connors_sample_size(delta: float, psi: float) -> None:
    n = items_needed(delta, psi)
    assert _connor_power(n, delta, psi) >= 0.8 > _connor_power(n - 1, delta, psi)


@pytest.mark.parametrize(("n", "psi"), [(100, 0.2), (500, 0.1), (2000, 0.3), (12000, 0.05), (60, 0.5)])
def test_min_detectable_has_80_percent_power(n: int, psi: float) -> None:
    mde = min_detectable(n, psi)
    assert mde is not None and 0 < mde <= psi
    assert _connor_power(n, mde, psi) == pytest.approx(0.8, abs=1e-6)


def test_min_detectable_edges() -> None:
    assert min_detectable(100, 0.0) is None  # the runs never disagree: nothing to detect from
    assert min_detectable(3, 0.02) is None  # no difference within the discordance is detectable on 3 items
    assert min_detectable_graded(400, 0.5) == pytest.approx((norm.ppf(0.975) + norm.ppf(0.8)) * 0.5 / 20)
    assert independent_discordance(0.7, 0.6) == pytest.approx(0.7 * 0.4 + 0.6 * 0.3)
    with pytest.raises(ValueError, match="disagree at least as often"):
        items_needed(0.3, 0.2)


def _pair(n: int, b10: int, b01: int, both: int) -> tuple[np.ndarray, np.ndarray]:
    a = np.array([1] * b10 + [0] * b01 + [1] * both + [0] * (n - b10 - b01 - both), dtype=float)
    b = np.array([0] * b10 + [1] * b01 + [1] * both + [0] * (n - b10 - b01 - both), dtype=float)
    return a, b


def test_an_undetected_difference_below_the_mde_is_underpowered() -> None:
    d = paired_difference("overall", *_pair(60, 7, 4, 20))
    assert d.mde == pytest.approx(min_detectable(60, 11 / 60))
    assert not d.detected and d.underpowered and d.verdict().startswith("underpowered (these items detect")
    small = paired_difference("overall", *_pair(2000, 70, 60, 900))  # 0.5 points on 2,000 items
    assert small.underpowered and "these items detect 1.6 points at 80% power" in small.verdict()
    clear = paired_difference("overall", *_pair(2000, 150, 60, 900))
    assert clear.detected and not clear.underpowered and clear.verdict().startswith("A ahead of B by 4.5 points")
    same = paired_difference("overall", *_pair(50, 0, 0, 20))  # identical answers: no discordance, no MDE
    assert same.mde is None and same.verdict().startswith("no detectable difference")


def test_per_category_differences_are_one_family() -> None:
    from proctor.analysis.compare import compare_scores
    from proctor.run.store import ItemScore, RunRecord, RunScores

    def run(run_id: str, scores: list[float]) -> RunScores:
        rec = RunRecord(run_id=run_id, path="", model=run_id, dataset="d", dataset_revision=None, dataset_hash=None,
                        mode="generate", prompt_kind=None, template_hash=None, extractor_version=None,
                        started_at="2026-01-01T00:00:00Z", finished_at=None)
        return RunScores(rec, {f"i{k}": ItemScore(item_id=f"i{k}", score=s, n_epochs=1, category=f"c{k % 4}",
                                                  modality=None) for k, s in enumerate(scores)})

    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 200).astype(float), rng.integers(0, 2, 200).astype(float)
    cmp = compare_scores(run("a", list(a)), run("b", list(b)), n_boot=200)
    raw = [g.p_value for g in cmp.by_category]
    assert [g.p_adjusted for g in cmp.by_category] == pytest.approx(list(
        multitest.multipletests(raw, method="holm")[1]))
    assert all(g.family_size == 4 and g.correction == "holm" for g in cmp.by_category)
    bh = adjust_comparisons([cmp], "bh")[0]
    assert [g.p_adjusted for g in bh.by_category] == pytest.approx(list(
        multitest.multipletests(raw, method="fdr_bh")[1]))
