"""Coverage of the clustered accuracy interval with few clusters (issue 39): CR2 + Bell–McCaffrey df against the
naive (items) interval, by number of clusters, intra-class correlation and true accuracy; 8 items per cluster.

    PYTHONPATH=src python bench/cluster_coverage.py [SIMS]

`cr2` forces the clustered interval even below proctor.stats.smallsample.MIN_CLUSTERS (to show why 3 clusters are set
apart); `naive-drawn` is the items' interval against the accuracy on the clusters drawn (what it speaks for).
"""

from __future__ import annotations

import sys

import numpy as np

from proctor.stats import smallsample
from proctor.stats.intervals import clustered_accuracy


def main(sims: int = 1000) -> None:
    smallsample.MIN_CLUSTERS = 2  # measure CR2 itself at every size
    print("clusters  icc   truth  cr2    naive  naive-drawn  cr2-width")
    for n_clusters in (3, 5, 10, 60):
        for icc, truth in ((0.2, 0.6), (0.05, 0.6), (0.2, 0.85)):
            rng = np.random.default_rng(1)
            a, b = truth * (1 - icc) / icc, (1 - truth) * (1 - icc) / icc
            cr2 = naive = drawn = 0
            width = 0.0
            for _ in range(sims):
                rates = rng.beta(a, b, size=n_clusters)
                s = (rng.random((n_clusters, 8)) < rates[:, None]).astype(float).ravel()
                got = clustered_accuracy(s, [str(i) for i in range(s.size)], [str(i // 8) for i in range(s.size)])
                lo, hi = got.clustered.ci_low or 0.0, got.clustered.ci_high or 0.0
                cr2 += lo <= truth <= hi
                naive += (got.naive.ci_low or 0.0) <= truth <= (got.naive.ci_high or 0.0)
                drawn += (got.naive.ci_low or 0.0) <= rates.mean() <= (got.naive.ci_high or 0.0)
                width += hi - lo
            print(f"{n_clusters:>8}  {icc:<5} {truth:<6} {cr2 / sims:.3f}  {naive / sims:.3f}  {drawn / sims:.3f}"
                  f"        {width / sims:.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
