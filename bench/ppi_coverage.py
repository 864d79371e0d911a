"""Coverage of the judge-corrected interval (`--human-labels`, `proctor.stats.ppi`): a biased judge (says "correct"
with p 0.9 when the answer is right, 0.3 when it is wrong) on 1,000 items of true accuracy 0.6, n of them labelled
by humans at random; PPI++ and plain PPI (λ = 1) against the judge's own Wilson interval and the labels' alone; then
the paired difference of two such runs (true accuracies 0.7 and 0.6, the same n items labelled in both).

    PYTHONPATH=src python bench/ppi_coverage.py [SIMS]
"""

from __future__ import annotations

import sys

import numpy as np

from proctor.stats.intervals import wilson_interval
from proctor.stats.ppi import ppi_mean

N, TRUTH = 1000, 0.6


def judged(rng: np.random.Generator, truth: float) -> tuple[np.ndarray, np.ndarray]:
    right = rng.random(N) < truth
    return right.astype(float), np.where(right, rng.random(N) < 0.9, rng.random(N) < 0.3).astype(float)


def one_run(sims: int) -> None:
    print("labels  ppi++ cover  width  | ppi cover  width | judge cover | labels-alone (wilson) cover  width")
    for n in (20, 50, 100, 200):
        rng = np.random.default_rng(2026)
        hits = np.zeros(4)
        widths = np.zeros(3)
        for _ in range(sims):
            y, f = judged(rng, TRUTH)
            m = rng.permutation(N) < n
            for k, lam in enumerate((None, 1.0)):
                got = ppi_mean(y[m], f[m], f[~m], lam=lam)
                hits[k] += got.ci_low <= TRUTH <= got.ci_high
                widths[k] += got.ci_high - got.ci_low
            lo, hi = wilson_interval(float(f.sum()), N)
            hits[2] += lo <= TRUTH <= hi
            lo, hi = wilson_interval(float(y[m].sum()), n)
            hits[3] += lo <= TRUTH <= hi
            widths[2] += hi - lo
        c, w = hits / sims, widths / sims
        print(f"{n:6d}  {c[0]:.3f}        {w[0]:.3f}  | {c[1]:.3f}      {w[1]:.3f} | {c[2]:.3f}       | "
              f"{c[3]:.3f}                        {w[2]:.3f}")


def paired(sims: int) -> None:
    print("labels  paired ppi++ cover  width | the verdicts' own difference (normal) cover")
    for n in (50, 100, 200):
        rng = np.random.default_rng(7)
        hit = plain = 0
        width = 0.0
        for _ in range(sims):
            (ya, fa), (yb, fb) = judged(rng, 0.7), judged(rng, 0.6)
            d, y = fa - fb, ya - yb
            m = rng.permutation(N) < n
            got = ppi_mean(y[m], d[m], d[~m])
            hit += got.ci_low <= 0.1 <= got.ci_high
            width += got.ci_high - got.ci_low
            half = 1.959964 * d.std() / np.sqrt(N)
            plain += d.mean() - half <= 0.1 <= d.mean() + half
        print(f"{n:6d}  {hit / sims:.3f}               {width / sims:.3f} | {plain / sims:.3f}")


if __name__ == "__main__":
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    one_run(count)
    paired(count)
