"""Accuracy intervals clustered by an item attribute, against statsmodels' cluster-robust estimate and scipy's t,
and a seeded coverage simulation: on clustered data the naive 95% interval under-covers and the clustered one
covers 93–97%."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.core.spec import check_cluster
from proctor.data.tasks import cluster_value
from proctor.log.runlog import Manifest, Outcome, Sample
from proctor.metrics.accuracy import group_block, sample_cluster
from proctor.metrics.results import summarize
from proctor.stats.intervals import clustered_accuracy, clustered_standard_error, wilson_interval
from proctor.stats.smallsample import t_quantile

sm = pytest.importorskip("statsmodels.api")
scipy_stats = pytest.importorskip("scipy.stats")


def _clustered_scores(rng: np.random.Generator, n_clusters: int, per: int, icc: float, p: float = 0.6) -> tuple[
        np.ndarray, list[str]]:
    """0/1 scores whose cluster shares a success rate drawn from Beta with the given intra-class correlation."""
    a = p * (1 - icc) / icc
    b = (1 - p) * (1 - icc) / icc
    rates = rng.beta(a, b, size=n_clusters)
    scores = (rng.random((n_clusters, per)) < rates[:, None]).astype(float).ravel()
    return scores, [f"c{c}" for c in range(n_clusters) for _ in range(per)]


def _statsmodels_cluster_se(scores: np.ndarray, clusters: list[str]) -> float:
    """OLS of the score on a constant with cluster-robust (CR1) errors: the standard error of the mean."""
    codes = np.unique(np.array(clusters), return_inverse=True)[1]
    fit = sm.OLS(scores, np.ones_like(scores)).fit(cov_type="cluster", cov_kwds={"groups": codes})
    return float(fit.bse[0])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_clustered_standard_error_matches_statsmodels(seed: int) -> None:
    rng = np.random.default_rng(seed)
    scores, clusters = _clustered_scores(rng, n_clusters=25, per=int(rng.integers(3, 12)), icc=0.3)
    # statsmodels' CR1 scales by C/(C-1) · (n-1)/(n-k), and k = 1 regressor makes the second factor 1
    assert clustered_standard_error(scores, clusters) == pytest.approx(_statsmodels_cluster_se(scores, clusters),
                                                                       rel=1e-9)


def test_unequal_clusters_match_statsmodels_too() -> None:
    rng = np.random.default_rng(7)
    sizes = rng.integers(1, 30, size=40)
    clusters = [f"g{i}" for i, k in enumerate(sizes) for _ in range(k)]
    scores = rng.random(len(clusters)).round(2)  # graded scores: the same estimator
    assert clustered_standard_error(scores, clusters) == pytest.approx(_statsmodels_cluster_se(scores, clusters))


@pytest.mark.parametrize("df", [1, 2, 3, 5, 9, 29, 200])
def test_t_quantile_matches_scipy(df: int) -> None:
    assert t_quantile(df) == pytest.approx(float(scipy_stats.t.ppf(0.975, df)), rel=1e-10)  # exact, not approximate


def _statsmodels_hc0_se(scores: np.ndarray) -> float:
    """The standard error of the mean treating scores as independent: √(p(1 − p)/n) for 0/1 scores."""
    return float(sm.OLS(scores, np.ones_like(scores)).fit(cov_type="HC0").bse[0])


def test_design_effect_is_the_ratio_of_variances() -> None:
    """deff = V_CR2 / V_iid with V_iid = p(1 − p)/n, the variance the items' Wilson interval assumes (issue 41,
    item 10: it was p(1 − p)/(n − 1)); equal clusters make CR2 statsmodels' CR1."""
    rng = np.random.default_rng(3)
    scores, clusters = _clustered_scores(rng, n_clusters=30, per=10, icc=0.25)
    items = [str(i) for i in range(scores.size)]
    got = clustered_accuracy(scores, items, clusters)
    expected = (_statsmodels_cluster_se(scores, clusters) / _statsmodels_hc0_se(scores)) ** 2
    assert got.design_effect == pytest.approx(expected)
    assert got.design_effect > 2  # strongly clustered: the naive interval is far too narrow
    assert got.clustered.method == "cluster_wilson" and got.naive.method == "wilson"
    assert got.naive.ci_low == pytest.approx(wilson_interval(scores.sum(), scores.size)[0])
    assert (got.clustered.ci_high - got.clustered.ci_low) > 1.4 * (got.naive.ci_high - got.naive.ci_low)
    assert got.n_clusters == 30
    # the interval is Wilson at n / deff with t on Bell–McCaffrey's df (29 for equal clusters)
    n_eff = scores.size / expected
    assert (got.clustered.ci_low, got.clustered.ci_high) == pytest.approx(
        wilson_interval(scores.mean() * n_eff, n_eff, float(scipy_stats.t.ppf(0.975, 29))))


def _coverage(n_clusters: int, sims: int, seed: int, icc: float = 0.2, truth: float = 0.6) -> tuple[
        float, float, float]:
    """Shares of seeded simulated benchmarks (`n_clusters` × 8 items) whose interval covers the truth: the naive
    and the clustered interval against the population's accuracy, the clustered one against the accuracy of the
    clusters drawn (the mean of their rates: what an interval over fixed strata speaks for)."""
    rng = np.random.default_rng(seed)
    a, b = truth * (1 - icc) / icc, (1 - truth) * (1 - icc) / icc
    naive = clustered = drawn = 0
    for _ in range(sims):
        rates = rng.beta(a, b, size=n_clusters)
        scores = (rng.random((n_clusters, 8)) < rates[:, None]).astype(float).ravel()
        got = clustered_accuracy(scores, [str(i) for i in range(scores.size)], [str(i // 8) for i in range(scores.size)])
        naive += got.naive.ci_low <= truth <= got.naive.ci_high
        clustered += got.clustered.ci_low <= truth <= got.clustered.ci_high
        drawn += got.clustered.ci_low <= rates.mean() <= got.clustered.ci_high
    return naive / sims, clustered / sims, drawn / sims


def test_coverage_naive_under_covers_clustered_covers() -> None:
    """1,000 seeded benchmarks of 60 clusters × 8 items (ICC 0.2, true accuracy 0.6)."""
    naive, clustered, _ = _coverage(60, 1000, 2024)
    assert naive < 0.85
    assert 0.93 <= clustered <= 0.97


@pytest.mark.parametrize(("n_clusters", "seed"), [(5, 5), (10, 10)])
def test_coverage_with_few_clusters(n_clusters: int, seed: int) -> None:
    """CR2 with Bell–McCaffrey's df keeps 95% coverage of the population's accuracy at 5 and 10 clusters, where
    the naive interval covers about 80% of the time."""
    naive, clustered, _ = _coverage(n_clusters, 600, seed)
    assert naive < 0.87
    assert 0.93 <= clustered <= 0.985


def test_coverage_with_three_clusters_speaks_for_the_clusters_drawn() -> None:
    """Three clusters are fixed strata: the interval is the items' one and covers the accuracy on the clusters
    drawn (the mean of their rates) 95% of the time; it does not claim the population of clusters (a clustered
    interval on 2 df spans most of [0, 1] and still misses it at high accuracy)."""
    naive, clustered, drawn = _coverage(3, 600, 3)
    assert naive == clustered  # the items' interval
    assert 0.93 <= drawn <= 0.99
    got = clustered_accuracy(np.zeros(24), [str(i) for i in range(24)], [str(i // 8) for i in range(24)])
    assert got.plan is not None and got.plan.kind == "few" and got.design_effect is None


@pytest.mark.parametrize("n_clusters", [3, 5, 10])
def test_zero_of_n_is_no_wider_than_its_widest_cluster(n_clusters: int) -> None:
    """0 of 10 per cluster: the overall interval is never wider than one cluster's own [0, 0.278] (issue 39: 0/30
    over three categories was [0, 0.861])."""
    n = 10 * n_clusters
    got = clustered_accuracy(np.zeros(n), [str(i) for i in range(n)], [str(i % n_clusters) for i in range(n)])
    widest = wilson_interval(0, 10)[1]
    assert got.clustered.ci_low == 0.0 and got.clustered.ci_high <= widest
    assert (got.clustered.ci_low, got.clustered.ci_high) == pytest.approx(wilson_interval(0, n))
    assert got.plan is not None and got.plan.note is not None  # and says why items stayed the unit


def test_epochs_are_nested_in_clusters() -> None:
    """Repeating every answer K times changes neither the clustered interval nor the design effect's meaning."""
    rng = np.random.default_rng(5)
    scores, clusters = _clustered_scores(rng, n_clusters=20, per=5, icc=0.3)
    items = [str(i) for i in range(scores.size)]
    once = clustered_accuracy(scores, items, clusters)
    thrice = clustered_accuracy(np.repeat(scores, 3), list(np.repeat(items, 3)), list(np.repeat(clusters, 3)))
    assert thrice.clustered.ci_low == pytest.approx(once.clustered.ci_low)
    assert thrice.naive.ci_low == pytest.approx(once.naive.ci_low)  # epochs of an item were already one unit


def _sample(i: int, score: float, category: str, src: str | None) -> Sample:
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", dataset="d", category=category, cluster=src,
                  score=score, outcome=Outcome.CORRECT if score else Outcome.WRONG)


def _samples() -> list[Sample]:
    rng = np.random.default_rng(11)
    scores, clusters = _clustered_scores(rng, n_clusters=12, per=6, icc=0.4)
    return [_sample(i, s, "ab"[i % 2], c) for i, (s, c) in enumerate(zip(scores, clusters))]


def _manifest(cluster: str | None) -> Manifest:
    return Manifest(run_id="r", proctor_version="0", dataset={"name": "d"}, model={"spec": "m"}, mode="generate",
                    started_at="2026-01-01T00:00:00Z", cluster=cluster)


def test_results_record_method_design_effect_and_naive_interval() -> None:
    samples = _samples()
    res = summarize(samples, manifest=_manifest("metadata.src"))
    o = res.overall
    assert res.cluster == "metadata.src" and o.ci_method == "cluster_wilson" and o.n_clusters == 12
    assert o.design_effect is not None and o.design_effect > 1 and o.cluster_differs
    assert (o.naive_ci_low, o.naive_ci_high) == pytest.approx(
        wilson_interval(sum(s.score or 0 for s in samples), len(samples)))
    plain = summarize(samples)
    assert plain.cluster is None and plain.overall.ci_method == "wilson" and plain.overall.design_effect is None
    assert (plain.overall.ci_low, plain.overall.ci_high) == (o.naive_ci_low, o.naive_ci_high)
    # every category holds several clusters: each is clustered too
    assert all(b.ci_method == "cluster_wilson" for b in res.by_category.values())


def test_a_group_of_one_cluster_keeps_the_items_interval() -> None:
    samples = _samples()
    res = summarize(samples, manifest=_manifest("category"))
    assert res.overall.n_clusters == 2
    for block in res.by_category.values():  # one category is one cluster: nothing to cluster within it
        assert block.ci_method == "wilson" and block.n_clusters is None
    both = group_block(samples, cluster="category")  # two categories: too few clusters to cluster by
    assert both.ci_method == "wilson" and both.n_clusters == 2 and "too few" in (both.cluster_note or "")
    assert group_block(samples, cluster="metadata.src").ci_method == "cluster_wilson"  # 12 sources


def test_items_without_a_value_are_clusters_of_their_own() -> None:
    a, b = _sample(1, 1.0, "x", None), _sample(2, 0.0, "x", "s")
    assert sample_cluster(a, "metadata.src") != sample_cluster(b, "metadata.src")
    assert sample_cluster(a, "metadata.src") != sample_cluster(_sample(3, 1.0, "x", None), "metadata.src")


def test_cluster_attributes() -> None:
    from proctor.data.records import Item

    item = Item.model_validate({"identifier": "q", "modality": "single-value", "prompt": "p", "response": "r",
                                "category": "c", "metadata": {"src": "ori_mmlu-law", "n": 3}})
    assert cluster_value(item, "category") == "c" and cluster_value(item, "subcategory") is None
    assert cluster_value(item, "metadata.src") == "ori_mmlu-law" and cluster_value(item, "metadata.n") == "3"
    assert cluster_value(item, None) is None
    for bad in ("cat", "metadata.", "tags"):
        with pytest.raises(ValueError, match="category, subcategory, metadata.KEY"):
            check_cluster(bad)
