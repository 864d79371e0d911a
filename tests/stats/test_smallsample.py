"""CR2 (Bell–McCaffrey) variance and degrees of freedom, and the exact t quantile, against independent
implementations: statsmodels' OLS (CR1, HC2), the textbook matrix formulas written with scipy, scipy's t and beta."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.stats.smallsample import (
    MIN_CLUSTERS,
    betainc,
    bm_degrees_of_freedom,
    cluster_plan,
    cluster_sums,
    cr2_variance,
    t_cdf,
    t_quantile,
)

sm = pytest.importorskip("statsmodels.api")
scipy_stats = pytest.importorskip("scipy.stats")
scipy_special = pytest.importorskip("scipy.special")
scipy_linalg = pytest.importorskip("scipy.linalg")


@pytest.mark.parametrize("df", [1, 1.5, 2, 2.7, 3, 4.25, 5, 9, 29, 200, 5000])
@pytest.mark.parametrize("level", [0.95, 0.99, 0.5])
def test_t_quantile_is_scipys(df: float, level: float) -> None:
    assert t_quantile(df, level) == pytest.approx(float(scipy_stats.t.ppf(0.5 + level / 2, df)), rel=1e-10)


@pytest.mark.parametrize(("a", "b", "x"), [(0.5, 0.5, 0.3), (1.5, 0.5, 0.9), (40, 0.5, 0.99), (2, 3, 0.001),
                                           (100.0, 0.5, 0.5), (0.1, 7, 0.7)])
def test_betainc_is_scipys(a: float, b: float, x: float) -> None:
    assert betainc(a, b, x) == pytest.approx(float(scipy_special.betainc(a, b, x)), rel=1e-11, abs=1e-300)


def test_t_cdf_is_scipys() -> None:
    for df in (1.0, 2.5, 30.0):
        for t in (-4.0, -0.3, 0.0, 0.7, 12.0):
            assert t_cdf(t, df) == pytest.approx(float(scipy_stats.t.cdf(t, df)), rel=1e-11)


def _unbalanced(seed: int) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 15, size=9)
    rates = rng.beta(2, 2, size=sizes.size)
    scores = np.concatenate([(rng.random(k) < r).astype(float) for k, r in zip(sizes, rates)])
    return scores, [f"g{g}" for g, k in enumerate(sizes) for _ in range(k)]


def _matrix_cr2_and_df(scores: np.ndarray, clusters: list[str]) -> tuple[float, float]:
    """CR2 and Bell–McCaffrey's df for the OLS of the score on a constant, written as in Imbens & Kolesár (2016):
    A_g = (I − H_gg)^(−1/2); V = Σ_g (X_g' A_g e_g)² / (X'X)²; G_g = (I − H)_{·g} A_g X_g (X'X)^(−1); df =
    (tr G'G)² / tr((G'G)²)."""
    n = scores.size
    x = np.ones((n, 1))
    fit = sm.OLS(scores, x).fit()
    e, xtx_inv = fit.resid, np.linalg.inv(x.T @ x)
    h = x @ xtx_inv @ x.T
    m = np.eye(n) - h
    labels = np.array(clusters)
    v, cols = 0.0, []
    for g in dict.fromkeys(clusters):
        idx = np.flatnonzero(labels == g)
        a_g = np.real(scipy_linalg.inv(scipy_linalg.sqrtm(np.eye(idx.size) - h[np.ix_(idx, idx)])))
        v += float(((x[idx].T @ a_g @ e[idx]) @ xtx_inv).item()) ** 2
        cols.append(m[:, idx] @ a_g @ x[idx] @ xtx_inv[:, 0])
    g_mat = np.stack(cols, axis=1)
    gg = g_mat.T @ g_mat
    return v, float(np.trace(gg) ** 2 / np.trace(gg @ gg))


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_cr2_and_df_match_the_matrix_formulas(seed: int) -> None:
    scores, clusters = _unbalanced(seed)
    v, df = _matrix_cr2_and_df(scores, clusters)
    sums = cluster_sums(scores, clusters)
    assert cr2_variance(sums) == pytest.approx(v, rel=1e-9)
    assert bm_degrees_of_freedom(sums.sizes) == pytest.approx(df, rel=1e-9)
    assert bm_degrees_of_freedom(sums.sizes) < len(set(clusters)) - 1  # unequal clusters carry fewer df


def test_equal_clusters_cr2_is_cr1_and_df_is_c_minus_1() -> None:
    rng = np.random.default_rng(4)
    scores = (rng.random(8 * 12) < 0.4).astype(float)
    clusters = [f"c{i // 8}" for i in range(scores.size)]
    codes = np.unique(np.array(clusters), return_inverse=True)[1]
    fit = sm.OLS(scores, np.ones_like(scores)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    sums = cluster_sums(scores, clusters)
    assert cr2_variance(sums) == pytest.approx(float(fit.bse[0]) ** 2, rel=1e-9)
    assert bm_degrees_of_freedom(sums.sizes) == pytest.approx(11)


def test_one_item_per_cluster_cr2_is_hc2() -> None:
    rng = np.random.default_rng(5)
    scores = rng.random(40).round(2)
    fit = sm.OLS(scores, np.ones_like(scores)).fit(cov_type="HC2")
    assert cr2_variance(cluster_sums(scores, [str(i) for i in range(40)])) == pytest.approx(float(fit.bse[0]) ** 2)


def test_the_rule_for_each_case() -> None:
    zeros = np.zeros(60)
    items = [str(i) for i in range(60)]
    var = 0.0
    assert cluster_plan(zeros, items, ["a"] * 60, var).kind == "one_cluster"
    assert cluster_plan(zeros, items, items, var).kind == "singletons"
    few = cluster_plan(zeros, items, [str(i % (MIN_CLUSTERS - 1)) for i in range(60)], var)
    assert few.kind == "few" and few.note is not None and "too few" in few.note and few.design_effect is None
    assert cluster_plan(zeros, items, [str(i % 6) for i in range(60)], var).kind == "no_variance"
    mixed = np.array([float(i % 2) for i in range(60)])
    ok = cluster_plan(mixed, items, [str(i % 6) for i in range(60)], 0.25 / 60)
    assert ok.kind == "clustered" and ok.df == pytest.approx(5) and ok.t == pytest.approx(
        float(scipy_stats.t.ppf(0.975, 5)))
    assert ok.note is not None and "few" in ok.note  # 6 clusters: clustered, and said to be few
    epochs = cluster_plan(np.repeat(mixed, 2), list(np.repeat(items, 2)), list(np.repeat(items, 2)), 0.25 / 120)
    assert epochs.kind == "singletons"  # the epochs of an item in its own cluster: nothing beyond the items
    many = cluster_plan(mixed, items, [str(i % 12) for i in range(60)], 0.25 / 60)
    assert many.kind == "clustered" and many.note is None
