"""Cluster-robust inference that stays honest with few clusters — numpy only.

* `cr2_variance` — the variance of a mean under clustering with Bell & McCaffrey's (2002) bias-reduced
  linearization (CR2): each cluster's residual sum is scaled by (1 − n_g/n)^(−1/2), the inverse square root of
  its block of I − H for a regression on a constant. Unbiased when errors are independent and homoskedastic,
  where CR1's C/(C − 1) is not with unequal clusters; with one item per cluster it is HC2.
* `bm_degrees_of_freedom` — Bell & McCaffrey's Satterthwaite degrees of freedom for that variance (Imbens &
  Kolesár 2016, eq. 8, under the working model of independent homoskedastic errors): C − 1 for equal clusters,
  fewer when a few large clusters carry the estimate.
* `t_quantile` — Student's t quantile for any real df > 0, exact to float precision: the regularized incomplete
  beta function by its continued fraction (Lentz's method), inverted by bisection on the CDF.
* `cluster_plan` — the rule for each case (`ClusterPlan`): too few clusters, no variance at all, one cluster,
  every item its own cluster; what interval each gets and the note that says why.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

import numpy as np

#: Below this many clusters a clustered interval is not trusted: the clusters are taken as the strata they are
#: (the interval speaks for these clusters, items as the unit), with a note. Cameron & Miller (2015, sec. VI)
#: call fewer than about 10 clusters "few"; the coverage simulation in tests/stats/test_stats_cluster.py shows CR2
#: with Bell–McCaffrey's df covers from 5 clusters on, but at 3 its interval spans most of [0, 1].
MIN_CLUSTERS = 5

Z95 = 1.959963984540054


# ---------------------------------------------------------------- the t distribution


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz's method)."""
    tiny, eps = 1e-300, 1e-16
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 10_000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < eps:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) (Numerical Recipes 6.4's continued fraction)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError("betainc needs 0 <= x <= 1")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """P(T ≤ t) for Student's t with `df` degrees of freedom (any real df > 0)."""
    if df <= 0:
        raise ValueError("t_cdf needs df > 0")
    tail = 0.5 * betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


@lru_cache(maxsize=1024)
def t_quantile(df: float, level: float = 0.95) -> float:
    """Student's t quantile for a two-sided `level` interval with `df` degrees of freedom (any real df > 0), exact
    to about 1e-12: the CDF inverted by bisection."""
    if df <= 0:
        raise ValueError("t_quantile needs df > 0")
    if not 0 < level < 1:
        raise ValueError("t_quantile needs 0 < level < 1")
    p = 0.5 + level / 2
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return (lo + hi) / 2


# ---------------------------------------------------------------- CR2 and its degrees of freedom


class ClusterSums(NamedTuple):
    """What CR2 needs of 0/1 or graded scores grouped into clusters: each cluster's size and residual sum."""

    sizes: np.ndarray  # n_g
    residual_sums: np.ndarray  # Σ_{i∈g} (s_i − s̄)
    n: int
    mean: float


def cluster_sums(scores: Sequence[float] | np.ndarray, clusters: Sequence[str]) -> ClusterSums:
    """Each cluster's size and residual sum (clusters in first-seen order)."""
    s = np.asarray(scores, dtype=float)
    if s.size != len(clusters) or s.size == 0:
        raise ValueError("cluster_sums needs one cluster label per score (and at least one score)")
    codes: dict[str, int] = {}
    idx = np.fromiter((codes.setdefault(c, len(codes)) for c in clusters), dtype=np.int64, count=s.size)
    mean = float(s.mean())
    sizes = np.bincount(idx, minlength=len(codes)).astype(float)
    sums = np.bincount(idx, weights=s - mean, minlength=len(codes))
    return ClusterSums(sizes, sums, int(s.size), mean)


def cr2_variance(sums: ClusterSums) -> float:
    """Bell–McCaffrey's CR2 variance of the mean: Σ_g (Σ_{i∈g} e_i)² / (1 − n_g/n) / n² (0 with one cluster)."""
    if sums.sizes.size < 2:
        return 0.0
    lever = 1.0 - sums.sizes / sums.n
    return float(np.sum(sums.residual_sums**2 / lever)) / sums.n**2


def bm_degrees_of_freedom(sizes: np.ndarray) -> float:
    """Bell–McCaffrey's degrees of freedom for the CR2 variance of a mean: (tr G'G)² / tr((G'G)²), with
    G'G = D − u u'/n, D = diag(n_g / (n² (1 − n_g/n))), u_g = n_g / (n √(1 − n_g/n)) (Imbens & Kolesár 2016,
    with Ω = I). Equal clusters give exactly C − 1."""
    n_g = np.asarray(sizes, dtype=float)
    n = float(n_g.sum())
    if n_g.size < 2:
        raise ValueError("bm_degrees_of_freedom needs at least two clusters")
    lever = 1.0 - n_g / n
    d = n_g / (n * n * lever)
    u = n_g / (n * np.sqrt(lever))
    gg = np.diag(d) - np.outer(u, u) / n
    tr = float(np.trace(gg))
    tr2 = float(np.sum(gg * gg))  # tr(A²) = Σ a_ij² for a symmetric A
    return tr * tr / tr2


# ---------------------------------------------------------------- the rule for each case


class ClusterPlan(NamedTuple):
    """How one group's accuracy is clustered: `kind` names the case, `note` says it in words (None: nothing to say).

    kind: `clustered` (CR2, Wilson at n/deff with t on `df`), `one_cluster`, `singletons` (every item its own
    cluster), `few` (fewer than MIN_CLUSTERS: the clusters are strata), `no_variance` (every score the same).
    The last four keep the items' interval.
    """

    kind: str
    n_clusters: int
    design_effect: float | None = None  # V_CR2 / V_iid, the factor the interval used (None: not estimable)
    df: float | None = None
    t: float | None = None
    note: str | None = None


def cluster_plan(scores: Sequence[float] | np.ndarray, items: Sequence[str], clusters: Sequence[str],
                 naive_variance: float) -> ClusterPlan:
    """The case a group of scores falls in, and for `clustered` the design effect (CR2 variance over
    `naive_variance`, the variance the items' interval assumes), the df and the t quantile."""
    n_clusters, n_items = len(set(clusters)), len(set(items))
    if n_clusters < 2:
        return ClusterPlan("one_cluster", n_clusters, note="one cluster: nothing to cluster; items are the unit")
    if n_clusters >= n_items and len({(c, i) for c, i in zip(clusters, items)}) == n_items:
        return ClusterPlan("singletons", n_clusters,
                           note="every item is its own cluster: clustering changes nothing; items are the unit")
    if n_clusters < MIN_CLUSTERS:
        return ClusterPlan("few", n_clusters, note=(
            f"only {n_clusters} clusters, too few to estimate how they vary (a clustered interval needs at least "
            f"{MIN_CLUSTERS}): the interval takes them as fixed strata, items as the unit, and speaks for these "
            f"{n_clusters} clusters, not for others like them"))
    sums = cluster_sums(scores, clusters)
    if naive_variance <= 0.0 or not np.any(sums.residual_sums):
        return ClusterPlan("no_variance", n_clusters, note=(
            "every score is the same: there is no variance to estimate a design effect from; items are the unit"))
    deff = cr2_variance(sums) / naive_variance
    df = bm_degrees_of_freedom(sums.sizes)
    return ClusterPlan("clustered", n_clusters, design_effect=deff, df=df, t=t_quantile(df),
                       note=None if n_clusters >= 2 * MIN_CLUSTERS else (
                           f"{n_clusters} clusters are few: the interval is wide because each cluster is one "
                           f"draw (t on {df:.1f} df)"))
