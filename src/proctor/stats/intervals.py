"""Metrics with honest error bars — numpy only.

* `accuracy_ci` — Wilson interval for 0/1 scores, bootstrap percentile for graded scores (every bootstrap interval
  `floored`: never narrower than a small-sample bound at its number of units); when items were
  answered several times (epochs) the item is the unit: Wilson at the clustered effective sample size
  (Miller 2024) for 0/1 scores, cluster (item) bootstrap for graded ones; `ci_method` says which.
* `guess_credit` — the expected credit of a uniform guess among an item's options (`--no-answer guess`).
* calibration — Brier, ECE (equal-width bins, bins returned for plotting), mean log-loss.
* paired comparisons — `binom_cdf` for McNemar's exact test; the comparison itself is `proctor.stats.comparison`'s.
* winner's curse — `selection_adjusted`: the top model's observed score and a selection-adjusted one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from ..core.results import Calibration, CalibrationBin, MetricValue
from .smallsample import ClusterPlan, cluster_plan

Z95 = 1.959963984540054
DEFAULT_BOOT = 2000
_CHUNK = 256  # bootstrap replicates drawn at once (bounds memory at CHUNK × n)
_BLOCK_VALUES = 1 << 18  # indices a bootstrap block draws at most (2 MB, and 2 MB gathered)


# ---------------------------------------------------------------- intervals


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (Wilson 1927); n may be an effective (fractional) size."""
    if n <= 0:
        raise ValueError("wilson_interval needs n > 0")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))  # float noise never excludes p


def _boot_counts(rng: np.random.Generator, n: int, reps: int) -> np.ndarray:
    """How many times each of n units is drawn in `reps` bootstrap resamples: float (reps, n)."""
    idx = rng.integers(0, n, size=(reps, n), dtype=np.int64) + (np.arange(reps) * n)[:, None]
    counts: np.ndarray = np.bincount(idx.ravel(), minlength=reps * n).reshape(reps, n).astype(float)
    return counts


def bootstrap_means(values: np.ndarray, n_boot: int = DEFAULT_BOOT, seed: int = 0) -> np.ndarray:
    """Bootstrap replicates of the mean of `values` (1-D), or of each column of a (n, k) array.

    The replicates are drawn a block of rows at a time, at most `_BLOCK_VALUES` indices each: the generator
    gives the same indices however the draws are split, so the replicates do not depend on the block size, and
    memory stays flat in n (256 rows of a 15,000-item run were 61 MB at once)."""
    v = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    n = v.shape[0]
    rows = max(1, min(_CHUNK, _BLOCK_VALUES // max(n, 1)))
    out = []
    for start in range(0, n_boot, rows):
        idx = rng.integers(0, n, size=(min(rows, n_boot - start), n))
        if v.ndim == 1:
            out.append(v[idx].mean(axis=1))
        else:  # one contiguous gather per column is much faster than v[idx] on (n, k)
            out.append(np.stack([v[:, j][idx].mean(axis=1) for j in range(v.shape[1])], axis=1))
    return np.concatenate(out, axis=0)


def small_sample_floor(n: float, z: float = Z95) -> float:
    """The least distance of a bootstrap interval's end from its estimate over n units, for data in [0, 1]: the
    continuity-corrected Wilson interval's upper end for 0 of n (Newcombe 1998, method 4): 0.802 at n = 2, 0.537
    at 5, 0.200 at 20, 0.046 at 100, so it binds only where the bootstrap has too few units to see the spread
    (2 items all failing resample to one value) and fades as 1/n, under the bootstrap's own width (1/√n)."""
    if n <= 0:
        raise ValueError("small_sample_floor needs n > 0")
    z2 = z * z
    return (z2 + 1 + z * math.sqrt(max(0.0, z2 + 2 - 1 / n))) / (2 * (n + z2))


def floored(lo: float, hi: float, estimate: float, n: float, bounds: tuple[float, float] = (0.0, 1.0),
            z: float = Z95) -> tuple[float, float]:
    """A bootstrap interval widened so each end lies at least `small_sample_floor(n)` (scaled to the width of
    `bounds`, the values' range) from the estimate, then clipped to `bounds`: every bootstrap interval in
    proctor.stats goes through it, so none is zero-width unless the bounds force it (an estimate at a bound keeps
    that end), and its coverage holds at small n (tests/stats: simulated at 2, 5 and 20 items)."""
    low, high = bounds
    gap = small_sample_floor(n, z) * (high - low)
    return max(low, min(lo, estimate - gap)), min(high, max(hi, estimate + gap))


def value_bounds(values: np.ndarray) -> tuple[float, float]:
    """The range scores live in: [0, 1], stretched to any value outside it."""
    return (min(0.0, float(values.min())), max(1.0, float(values.max()))) if values.size else (0.0, 1.0)


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, n_boot: int = DEFAULT_BOOT, seed: int = 0, level: float = 0.95
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, `floored` at the number of values."""
    v = np.asarray(values, dtype=float)
    reps = bootstrap_means(v, n_boot, seed)
    a = (1 - level) / 2
    lo, hi = np.quantile(reps, [a, 1 - a])
    z = Z95 if level == 0.95 else normal_quantile(1 - a)
    return floored(float(lo), float(hi), float(v.mean()), v.size, value_bounds(v), z)


def clustered_standard_error(scores: Sequence[float] | np.ndarray, clusters: Sequence[str]) -> float:
    """Cluster-robust standard error of the mean (Miller 2024, "Adding Error Bars to Evals", eq. 4).

    SE² = C/(C−1) · Σ_c (Σ_{i∈c} (s_i − s̄))² / n², over C clusters (items) holding n scores in all:
    repeated answers to one item (epochs) count as one draw from the item population, not as many.
    """
    s = np.asarray(scores, dtype=float)
    if s.size != len(clusters) or s.size == 0:
        raise ValueError("clustered_standard_error needs one cluster label per score (and at least one score)")
    dev = s - s.mean()
    sums: dict[str, float] = defaultdict(float)
    for c, d in zip(clusters, dev):
        sums[c] += float(d)
    n_clusters = len(sums)
    if n_clusters < 2:
        return 0.0
    total = sum(v * v for v in sums.values())
    return math.sqrt(n_clusters / (n_clusters - 1) * total) / s.size


def _clustered_wilson(s: np.ndarray, clusters: Sequence[str], z: float = Z95) -> tuple[float, float]:
    """Wilson interval at the effective sample size n / deff of 0/1 scores clustered by item.

    The design effect deff = SE²_clustered / SE²_iid (Kish) is bounded to [1, n / C]: never more precise
    than independent samples, never less than one draw per item. A result with no variance (all 0 or all
    1), or a single item, has no estimable deff and takes the conservative n_eff = C, the interval of one
    answer per item.
    """
    n, n_clusters = int(s.size), len(set(clusters))
    p = float(s.mean())
    iid_var = p * (1 - p) / n
    if iid_var <= 0.0 or n_clusters < 2:  # no variance, or no spread between items to estimate it from
        n_eff = float(n_clusters)
    else:
        deff = clustered_standard_error(s, clusters) ** 2 / iid_var
        n_eff = n / min(max(deff, 1.0), n / n_clusters)
    return wilson_interval(p * n_eff, n_eff, z)


def accuracy_ci(
    scores: Sequence[float] | np.ndarray, clusters: Sequence[str] | None = None, n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
) -> MetricValue:
    """Mean score with a 95% interval; `method` says which.

    * 0/1 scores, one per item → `wilson`.
    * 0/1 scores, several per item (`clusters` repeats, e.g. epochs) → `clustered_wilson`: Wilson at the
      effective sample size from the clustered standard error (`_clustered_wilson`), so K epochs of the
      same answers never narrow the interval, and 0 of 7 items over any number of epochs is [0, 0.354]
      like one epoch.
    * graded scores, one per item → percentile `bootstrap`; several per item → `cluster_bootstrap`
      (items resampled with all their epochs, ratio of sums).
    """
    s = np.asarray(scores, dtype=float)
    if s.size == 0:
        return MetricValue()
    acc = float(s.mean())
    binary = bool(np.isin(s, (0.0, 1.0)).all())
    repeated = clusters is not None and len(set(clusters)) < len(clusters)
    if repeated and binary:
        assert clusters is not None
        lo, hi = _clustered_wilson(s, clusters)
        method = "clustered_wilson"
    elif repeated:
        assert clusters is not None
        lo, hi = _cluster_bootstrap(s, clusters, n_boot, seed)
        method = "cluster_bootstrap"
    elif binary:
        lo, hi = wilson_interval(float(s.sum()), int(s.size))
        method = "wilson"
    else:
        lo, hi = bootstrap_ci(s, n_boot, seed)
        method = "bootstrap"
    return MetricValue(value=acc, n=int(s.size), ci_low=float(lo), ci_high=float(hi), method=method)


def _cluster_bootstrap(s: np.ndarray, clusters: Sequence[str], n_boot: int, seed: int) -> tuple[float, float]:
    """Percentile interval of the mean when whole clusters (items with all their epochs) are resampled, `floored`
    at the number of clusters."""
    groups: dict[str, list[float]] = defaultdict(list)
    for c, v in zip(clusters, s):
        groups[c].append(float(v))
    sums = np.array([sum(g) for g in groups.values()])
    sizes = np.array([len(g) for g in groups.values()], dtype=float)
    reps = bootstrap_means(np.stack([sums, sizes], axis=1), n_boot, seed)
    lo, hi = np.quantile(reps[:, 0] / reps[:, 1], [0.025, 0.975])
    return floored(float(lo), float(hi), float(s.mean()), len(groups), value_bounds(s))


def normal_quantile(p: float) -> float:
    """The standard normal quantile by bisection on erf (enough for the levels proctor uses)."""
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2
        if 0.5 * (1 + math.erf(mid / math.sqrt(2))) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class ClusteredAccuracy(NamedTuple):
    """Accuracy clustered by an item attribute, beside the interval that treats items as independent."""

    clustered: MetricValue  # the naive interval itself when the plan keeps items as the unit
    naive: MetricValue  # items (with their epochs) as the unit: `accuracy_ci`
    n_clusters: int
    design_effect: float | None  # V_CR2 / V_iid, the factor the interval used (None: not estimable)
    plan: ClusterPlan | None = None  # the case and its note (`proctor.stats.smallsample.cluster_plan`)


def clustered_accuracy(
    scores: Sequence[float], items: Sequence[str], clusters: Sequence[str], n_boot: int = DEFAULT_BOOT, seed: int = 0
) -> ClusteredAccuracy:
    """Mean score with a 95% interval whose unit is a cluster of items (Miller 2024, "Adding Error Bars to
    Evals", sec. 2.2): questions written about one passage, one source or one subject share errors, so the
    interval must count clusters, not questions. Items are nested in clusters, so the epochs of an item
    are clustered too.

    * 0/1 scores → `cluster_wilson`: Wilson at the effective sample size n / deff, deff = V_CR2 / V_iid
      (Bell–McCaffrey's bias-reduced variance over p(1 − p)/n, bounded to [1, n / C]), with Student's t on
      Bell–McCaffrey's degrees of freedom for z (few clusters make the variance itself uncertain).
    * graded scores → `cluster_bootstrap` over clusters.
    * one cluster, every item its own cluster, fewer than `MIN_CLUSTERS` clusters, or no variance at all: the
      items' interval, with the plan's note saying why (`proctor.stats.smallsample.cluster_plan`).
    """
    s = np.asarray(scores, dtype=float)
    naive = accuracy_ci(s, items, n_boot, seed)
    if s.size == 0:
        return ClusteredAccuracy(naive, naive, len(set(clusters)), None)
    plan = cluster_plan(s, items, clusters, float(s.var()) / s.size)
    if plan.kind != "clustered":
        return ClusteredAccuracy(naive, naive, plan.n_clusters, None, plan)
    assert plan.design_effect is not None and plan.t is not None
    if bool(np.isin(s, (0.0, 1.0)).all()):
        deff = min(max(plan.design_effect, 1.0), s.size / plan.n_clusters)
        lo, hi = wilson_interval(float(s.sum()) / deff, s.size / deff, plan.t)
        method = "cluster_wilson"
    else:
        lo, hi = _cluster_bootstrap(s, clusters, n_boot, seed)
        method = "cluster_bootstrap"
    clustered = MetricValue(value=float(s.mean()), n=int(s.size), ci_low=lo, ci_high=hi, method=method)
    return ClusteredAccuracy(clustered, naive, plan.n_clusters, plan.design_effect, plan)


def item_means_ci(
    means: Sequence[float] | np.ndarray, epochs: Sequence[int], n_boot: int = DEFAULT_BOOT, seed: int = 0
) -> MetricValue:
    """`accuracy_ci` from per-item mean scores and their epoch counts (what the history store keeps).

    Each item's scores are rebuilt from its mean: round(mean × k) ones and the rest zeros when that is an
    integer (0/1 scores), else k copies of the mean. Every interval `accuracy_ci` computes depends on an
    item's scores only through their sum and count (or, for 0/1 scores, their number of ones), so this
    gives the interval results.json has for the same items.
    """
    scores: list[float] = []
    clusters: list[str] = []
    for i, (m, k) in enumerate(zip(means, epochs, strict=True)):
        if k < 1:
            raise ValueError(f"item {i} has {k} epochs; each item needs at least one")
        ones = float(m) * k
        if abs(ones - round(ones)) < 1e-9 and 0.0 <= float(m) <= 1.0:
            scores += [1.0] * round(ones) + [0.0] * (k - round(ones))
        else:
            scores += [float(m)] * k
        clusters += [str(i)] * k
    return accuracy_ci(scores, clusters, n_boot, seed)


# ---------------------------------------------------------------- results.json


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): 1 - C(n-c, k) / C(n, k) for n samples with c correct."""
    if not 0 < k <= n or not 0 <= c <= n:
        raise ValueError(f"pass_at_k needs 0 < k <= n and 0 <= c <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


FIXED_OPTIONS = {"boolean": 2, "ternary": 3}  # True/False; True/False/Unknown


def guess_credit(modality: str | None) -> float:
    """The expected credit of a uniform guess among an item's k options (1/k: choiceofN, boolean's two,
    ternary's three); 0 for open answers."""
    n = int(modality[len("choiceof"):]) if modality and modality.startswith("choiceof") else 0
    n = FIXED_OPTIONS.get(modality or "", n)
    return 1.0 / n if n else 0.0


# ---------------------------------------------------------------- calibration


def reliability_bins(confidence: np.ndarray, correct: np.ndarray, n_bins: int = 10) -> list[CalibrationBin]:
    """Equal-width bins over [0, 1] (the last bin includes 1.0): count, mean confidence, accuracy."""
    conf = np.asarray(confidence, dtype=float)
    corr = np.asarray(correct, dtype=float)
    idx = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    bins = []
    for b in range(n_bins):
        mask = idx == b
        n = int(mask.sum())
        bins.append(CalibrationBin(lo=b / n_bins, hi=(b + 1) / n_bins, n=n,
                                   confidence=float(conf[mask].mean()) if n else None,
                                   accuracy=float(corr[mask].mean()) if n else None))
    return bins


def expected_calibration_error(bins: Sequence[CalibrationBin]) -> float:
    """ECE = Σ_b (n_b / N) · |accuracy_b − confidence_b| over non-empty bins."""
    total = sum(b.n for b in bins)
    if total == 0:
        return 0.0
    return float(sum(b.n / total * abs((b.accuracy or 0.0) - (b.confidence or 0.0)) for b in bins if b.n))


_EPS = 1e-15


def calibration(
    distributions: Sequence[Sequence[float] | np.ndarray], expected: Sequence[int], n_bins: int = 10
) -> Calibration:
    """Calibration of distributions over options with a known correct index.

    brier: multi-class Brier score Σ_j (p_j − y_j)², averaged; ece: confidence = max p_j against
    argmax correct; log_loss: mean −ln p_expected (clipped at 1e-15). Ties at the maximum count as wrong.
    """
    if len(distributions) != len(expected) or not distributions:
        raise ValueError("calibration needs one expected index per distribution (and at least one)")
    points = [calibration_point(p_raw, e) for p_raw, e in zip(distributions, expected)]
    briers, losses, conf, corr = ([p[i] for p in points] for i in range(4))
    return calibration_of_points(briers, losses, conf, corr, n_bins)


def calibration_point(p_raw: Sequence[float] | np.ndarray, e: int) -> tuple[float, float, float, float]:
    """One distribution's part of `calibration`: its Brier score, log-loss, confidence (max p) and whether its
    single top option is the expected one (1.0 or 0.0)."""
    p = np.asarray(p_raw, dtype=float)
    y = np.zeros_like(p)
    y[e] = 1.0
    top = p.max()
    return (float(((p - y) ** 2).sum()), -math.log(max(float(p[e]), _EPS)), float(top),
            float(p[e] == top and int((p == top).sum()) == 1))


def calibration_of_points(briers: Sequence[float], losses: Sequence[float], conf: Sequence[float],
                          corr: Sequence[float], n_bins: int = 10) -> Calibration:
    """`calibration` from its distributions' points (`calibration_point`), in their order."""
    bins = reliability_bins(np.asarray(conf, dtype=float), np.asarray(corr, dtype=float), n_bins)
    return Calibration(brier=float(np.mean(briers)), ece=expected_calibration_error(bins),
                       log_loss=float(np.mean(losses)), n=len(briers), bins=bins)


def binary_calibration(
    p_correct: Sequence[float], correct: Sequence[int | bool] | Sequence[float], n_bins: int = 10
) -> Calibration:
    """Calibration of stated probabilities that an answer is correct (binary events)."""
    p = np.clip(np.asarray(p_correct, dtype=float), 0.0, 1.0)
    y = np.asarray(correct, dtype=float)
    if p.size == 0 or p.size != y.size:
        raise ValueError("binary_calibration needs equal, non-empty p_correct and correct")
    pc = np.clip(p, _EPS, 1 - _EPS)
    bins = reliability_bins(p, y, n_bins)
    return Calibration(brier=float(((p - y) ** 2).mean()), ece=expected_calibration_error(bins),
                       log_loss=float(-(y * np.log(pc) + (1 - y) * np.log(1 - pc)).mean()), n=int(p.size), bins=bins)


# ---------------------------------------------------------------- paired comparisons


def binom_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed exactly in log space."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    lp, lq = math.log(p), math.log1p(-p)
    terms = [
        math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq
        for i in range(k + 1)
    ]
    m = max(terms)
    return min(1.0, math.exp(m) * sum(math.exp(t - m) for t in terms))


# ---------------------------------------------------------------- winner's curse


def _shares_of_best(acc: np.ndarray) -> np.ndarray:
    """Per row of (reps, m) accuracies: 1/t for each of the t models tied at the maximum, else 0."""
    best = acc >= acc.max(axis=1, keepdims=True) - 1e-12
    shares: np.ndarray = best / best.sum(axis=1, keepdims=True)
    return shares


def selection_adjusted(
    scores_by_model: Mapping[str, Sequence[float] | np.ndarray],
    n_boot: int = DEFAULT_BOOT,
    seed: int = 0,
    n_splits: int | None = None,
) -> dict[str, Any]:
    """Rank models scored on the same items and correct the top score for selection (winner's curse).

    * observed — the top model's accuracy (the maximum over models: biased upward).
    * adjusted — bootstrap bias correction of the maximum: resample items, re-select the best model
      on the resample, and measure how much its resampled score exceeds its score on the full data;
      adjusted = observed − mean excess, never above observed; equal to it when nothing was selected
      (one model, or every model tied).
    * split_sample — select on a random half of the items, score the selected model on the other
      half; averaged over `n_splits` random splits (selection and estimate use disjoint items).
    * p_top_stays_top — share of bootstrap resamples where the observed top model is still best
      (ties shared); `ranking` gives every model's share as `p_best`.
    """
    names = list(scores_by_model)
    if len(names) < 1:
        raise ValueError("selection_adjusted needs at least one model")
    mat = np.stack([np.asarray(scores_by_model[k], dtype=float) for k in names], axis=1)  # (items, models)
    n = mat.shape[0]
    if n < 2:
        raise ValueError("selection_adjusted needs at least two shared items")
    rng = np.random.default_rng(seed)
    observed = mat.mean(axis=0)
    order = sorted(range(len(names)), key=lambda j: (-observed[j], names[j]))
    top = order[0]

    p_best = np.zeros(len(names))
    excess = []
    for start in range(0, n_boot, _CHUNK):
        counts = _boot_counts(rng, n, min(_CHUNK, n_boot - start))
        acc = counts @ mat / n  # (reps, models)
        share = _shares_of_best(acc)
        p_best += share.sum(axis=0)
        # expected excess of the re-selected model(s) over their full-data accuracy
        excess.append((share * (acc - observed)).sum(axis=1))
    p_best /= n_boot
    # nothing was selected with one model or a board of ties; a selection never raises the winner's score
    selected = len(names) > 1 and not np.allclose(observed, observed[top], rtol=0, atol=1e-12)
    bias = max(0.0, float(np.concatenate(excess).mean())) + 0.0 if selected else 0.0

    splits = n_splits if n_splits is not None else max(200, n_boot // 10)
    half = n // 2
    split_est = np.empty(splits)
    for i in range(splits):
        perm = rng.permutation(n)
        sel, est = perm[:half], perm[half:]
        share = _shares_of_best(mat[sel].mean(axis=0, keepdims=True))[0]
        split_est[i] = float(share @ mat[est].mean(axis=0))

    return {
        "n_items": n,
        "n_models": len(names),
        "n_boot": n_boot,
        "n_splits": splits,
        "ranking": [
            {"model": names[j], "accuracy": float(observed[j]), "p_best": float(p_best[j])} for j in order
        ],
        "top": names[top],
        "observed": float(observed[top]),
        "adjusted": float(observed[top] - bias),
        "selection_bias": bias,
        "split_sample": float(split_est.mean()),
        "p_top_stays_top": float(p_best[top]),
        "method": "bootstrap re-selection bias correction; split-sample (select on half, estimate on half)",
    }
