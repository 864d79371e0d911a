"""Prediction-powered inference for a mean (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, *Science*
382:669; power tuning: Angelopoulos, Duchi & Zrnic 2023, "PPI++", arXiv:2311.01453) — numpy only.

An automatic grader (an LLM judge, an answer reader) gives a prediction `Yhat` of every item's verdict; humans give
the true verdict `Y` on a random subset. The PPI estimate of the mean verdict is

    θ̂(λ) = λ · mean(Yhat_unlabelled) + mean(Y − λ · Yhat)          (over the N unlabelled and the n labelled items)

with variance  λ² · var(Yhat_unlabelled) / N + var(Y − λ · Yhat) / n, and a normal interval. λ = 1 is PPI, λ = 0
the humans' labels alone; PPI++ takes the λ that minimises the variance, cov(Y, Yhat) / ((1 + n/N) · var(Yhat)),
clipped to [0, 1] (never worse than the labels alone, asymptotically). The formulas are ppi-python's
(`ppi_mean_pointestimate`, `ppi_mean_ci`, `_calc_lam_glm`: variances with ddof 0, the λ's var(Yhat) over both sets
with ddof 1), so the two agree to float noise (tests/stats/test_ppi.py).

`labels_needed` inverts the variance: the labels n that give a target half-width h at N predictions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist
from typing import NamedTuple

import numpy as np
from pydantic import BaseModel

ALPHA = 0.05


class PPIEstimate(NamedTuple):
    """A prediction-powered mean with its interval: the λ used and the standard error behind it."""

    estimate: float
    ci_low: float
    ci_high: float
    lam: float
    se: float


def z_of(alpha: float) -> float:
    """The two-sided normal quantile z_{1 − alpha/2}."""
    return NormalDist().inv_cdf(1 - alpha / 2)


def power_tuned_lambda(y: np.ndarray, yhat: np.ndarray, yhat_unlabelled: np.ndarray) -> float:
    """PPI++'s λ for a mean: cov(Y, Yhat) / ((1 + n/N) var(Yhat)), clipped to [0, 1]; 0 when every prediction
    is the same (any λ gives the same estimate then)."""
    n, big_n = len(y), len(yhat_unlabelled)
    var_hat = float(np.var(np.concatenate([yhat, yhat_unlabelled]), ddof=1))
    if not var_hat > 0:
        return 0.0
    cov = float(np.mean((y - y.mean()) * (yhat - yhat.mean())))
    return float(np.clip(cov / ((1 + n / big_n) * var_hat), 0.0, 1.0))


def ppi_mean(y: Sequence[float] | np.ndarray, yhat: Sequence[float] | np.ndarray,
             yhat_unlabelled: Sequence[float] | np.ndarray, lam: float | None = None,
             alpha: float = ALPHA) -> PPIEstimate:
    """The PPI estimate of the mean with its two-sided 1 − alpha interval. `y` and `yhat`: the labelled items'
    true and predicted verdicts (paired, n ≥ 2); `yhat_unlabelled`: the predictions on the other items (N ≥ 1).
    `lam`: None for PPI++'s power-tuned λ, 1 for plain PPI, 0 for the labels alone."""
    y_, h_, u_ = (np.asarray(v, dtype=float) for v in (y, yhat, yhat_unlabelled))
    if len(y_) != len(h_) or len(y_) < 2 or len(u_) < 1:
        raise ValueError("ppi_mean needs n ≥ 2 paired labels and predictions, and N ≥ 1 unlabelled predictions")
    if lam is None:
        lam = power_tuned_lambda(y_, h_, u_)
    estimate = float(lam * u_.mean() + (y_ - lam * h_).mean())
    se = math.sqrt(float(np.var(lam * u_)) / len(u_) + float(np.var(y_ - lam * h_)) / len(y_))
    half = z_of(alpha) * se
    return PPIEstimate(estimate, estimate - half, estimate + half, float(lam), se)


def ppi_over(pred: np.ndarray, truth: np.ndarray, labelled: np.ndarray, alpha: float = ALPHA) -> PPIEstimate | None:
    """`ppi_mean` over one set of items: `pred` every item's prediction, `truth` the true value where `labelled`
    (a boolean mask; elsewhere ignored). PPI++ when some items are unlabelled; the labels alone (λ = 0, a normal
    interval) when every one is; None under 2 labels."""
    n = int(labelled.sum())
    if n < 2:
        return None
    y = truth[labelled]
    if n == len(pred):
        se = float(np.std(y)) / math.sqrt(n)
        est = float(y.mean())
        return PPIEstimate(est, est - z_of(alpha) * se, est + z_of(alpha) * se, 0.0, se)
    return ppi_mean(y, pred[labelled], pred[~labelled], alpha=alpha)


def labels_needed(half_width: float, n_items: int, sd_pred: float, sd_resid: float,
                  alpha: float = ALPHA) -> int | None:
    """The human labels n that give a PPI (λ = 1) interval of ± `half_width` over `n_items` predictions, from
    z² (sd_pred² / N + sd_resid² / n) = h²: n = sd_resid² / ((h / z)² − sd_pred² / N). `sd_pred`: the predictions'
    sd; `sd_resid`: the sd of human − prediction (for 0/1 verdicts √(d − b²), d the share where they disagree and b
    the mean of human − prediction). None when even infinitely many labels cannot reach it at N items (the
    predictions' own noise is wider); at least 2."""
    z = z_of(alpha)
    room = (half_width / z) ** 2 - sd_pred ** 2 / n_items
    if room <= 0:
        return None
    return max(2, math.ceil(sd_resid ** 2 / room))


class LabelPlan(BaseModel):
    """How many human labels a judge-corrected interval of ± `half_width` needs (`proctor plan --label-width`)."""

    half_width: float
    n_items: int
    sd_pred: float
    sd_resid: float
    alpha: float
    spreads_from: str  # "run DIR", or "given …"
    labels_needed: int | None  # None: out of reach at n_items (the verdicts' own noise is wider)
    floor: float  # the half-width with every item's verdict and infinitely many labels: z · sd_pred / √N
    sd_truth: float | None = None  # the true verdicts' sd (√(p(1 − p))), for the labels alone
    labels_alone: int | None = None  # the labels a plain interval (no judge) needs for the same width

    def text(self) -> str:
        head = (f"a judge-corrected {100 * (1 - self.alpha):.0f}% interval of ±{100 * self.half_width:.1f} points "
                f"over {self.n_items:,} items (verdicts' sd {self.sd_pred:.3f}, human − verdict sd "
                f"{self.sd_resid:.3f}; {self.spreads_from}): ")
        if self.labels_needed is None:
            return head + (f"out of reach: at {self.n_items:,} items even the true verdicts give about "
                           f"±{100 * self.floor:.1f} points (more items)")
        share = min(1.0, self.labels_needed / self.n_items)
        alone = f"; the labels alone, without the judge: {self.labels_alone:,}" if self.labels_alone else ""
        big = ("; past half the items the formula (predictions on all N) is rough: label them all"
               if share > 0.5 else "")
        return head + (f"{self.labels_needed:,} human labels ({share:.0%} of the items; PPI, λ = 1: PPI++ needs "
                       f"no more, asymptotically{alone}{big})")


def label_plan(half_width: float, n_items: int, spreads: tuple[float, float, float | None], alpha: float = ALPHA,
               spreads_from: str = "given") -> LabelPlan:
    """`labels_needed` as a record that says itself; `spreads`: the sds of the verdicts, of human − verdict and
    of the true verdicts (None: unknown), the last for the labels a plain interval needs: ⌈(z · sd / h)²⌉."""
    sd_pred, sd_resid, sd_truth = spreads
    alone = math.ceil((z_of(alpha) * sd_truth / half_width) ** 2) if sd_truth else None
    return LabelPlan(half_width=half_width, n_items=n_items, sd_pred=sd_pred, sd_resid=sd_resid, alpha=alpha,
                     spreads_from=spreads_from, labels_needed=labels_needed(half_width, n_items, sd_pred, sd_resid,
                                                                             alpha),
                     floor=z_of(alpha) * sd_pred / math.sqrt(n_items), sd_truth=sd_truth, labels_alone=alone)


__all__ = ["ALPHA", "LabelPlan", "PPIEstimate", "label_plan", "labels_needed", "power_tuned_lambda", "ppi_mean", "ppi_over", "z_of"]
