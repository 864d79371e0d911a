"""An anytime-valid paired comparison: a confidence sequence for candidate − baseline that may be looked at after
every batch of items and stopped whenever it decides, its error still at most alpha (`run --stop-when-decided`).

The paired differences d_i = candidate_i − baseline_i ∈ [−1, 1], in the order the items were asked (a seeded
random order, so the items seen so far are a random subset), are mapped to x_i = (d_i + 1) / 2 ∈ [0, 1]. For a
candidate mean m, the hedged capital process of Waudby-Smith & Ramdas (2023, "Estimating means of bounded random
variables by betting", JRSS-B 86(1), Theorem 3 and §4.2) bets on x_i − m from above and from below:

    K⁺_t(m) = Π_{i≤t} (1 + λ⁺_i(m) (x_i − m)),   K⁻_t(m) = Π_{i≤t} (1 − λ⁻_i(m) (x_i − m)),

with the predictable plug-in bets λ̇_i = sqrt(2 log(1/(α/2)) / (σ̂²_{i−1} i log(1 + i))) (σ̂² a running variance
started at 1/4), truncated at c/m and c/(1 − m) (c = 1/2) so every factor stays above 1 − c. Under a true mean m
each process is a nonnegative martingale, so by Ville's inequality P(∃t: K⁺_t(m) ≥ 2/α) ≤ α/2, and the same for
K⁻: the set {m : K⁺_t(m) < 2/α and K⁻_t(m) < 2/α}, intersected over every t so far, covers the mean at every t at
once with probability ≥ 1 − α — whenever one stops looking. K⁺ is nonincreasing in m and K⁻ nondecreasing, so the
set is an interval: its ends are found by bisection, and checking the margin needs the capital at one point.

With the allowed drop D (the gate's margin), GO is the lower end above −D (some K⁺_t(m₀) ≥ 2/α at m₀ = (1 − D)/2),
NO-GO the upper end below −D. Each side's error is at most α/2 — at α = 0.05 the one-sided 2.5% of `proctor gate`'s
95% interval — however many looks are taken. The fixed-sample interval `gate` uses does not hold under such looks:
stopping the first time it decides makes a wrong call far more often (tests/stats/test_sequential.py simulates
both). What is estimated is the mean paired difference of an item drawn as the benchmark's items were (i.i.d.),
as for `gate`; the random order is what makes the items asked first such a draw.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import numpy as np

TRUNCATION = 0.5  # c: the largest fraction of the capital bet on one item
METHOD = "hedged betting confidence sequence (Waudby-Smith & Ramdas 2023, Theorem 3)"
_BISECTIONS = 60

SequenceDecision = Literal["GO", "NO-GO", "INCONCLUSIVE"]


class Look(NamedTuple):
    """What the sequence says after the differences seen so far: the decision, how many, and its bounds."""

    decision: SequenceDecision
    n: int
    ci_low: float  # candidate − baseline, in [−1, 1]
    ci_high: float


def _as_unit(diffs: np.ndarray) -> np.ndarray:
    d = np.asarray(diffs, dtype=float)
    if d.size and (not np.isfinite(d).all() or d.min() < -1 - 1e-12 or d.max() > 1 + 1e-12):
        raise ValueError("paired differences must lie in [-1, 1] (scores in [0, 1])")
    return np.clip((d + 1) / 2, 0.0, 1.0)


def bets(x: np.ndarray, alpha: float) -> np.ndarray:
    """The predictable plug-in empirical-Bernstein bets λ̇_t (along the last axis), one side at level alpha/2."""
    t = np.arange(1, x.shape[-1] + 1)
    mu = (0.5 + np.cumsum(x, axis=-1)) / (t + 1)
    var = (0.25 + np.cumsum((x - mu) ** 2, axis=-1)) / (t + 1)
    var_before = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), var[..., :-1]], axis=-1)
    return np.sqrt(2 * math.log(2 / alpha) / (var_before * t * np.log1p(t)))


def max_log_capital(x: np.ndarray, lam: np.ndarray, m: float, side: Literal[1, -1]) -> np.ndarray:
    """max over t of log K⁺_t(m) (side 1) or log K⁻_t(m) (side −1), over the last axis (0 with no data)."""
    room = m if side == 1 else 1 - m
    capped = np.minimum(lam, TRUNCATION / room) if room > 0 else lam
    logs = np.cumsum(np.log1p(side * capped * (x - m)), axis=-1)
    return np.asarray(logs.max(axis=-1, initial=0.0))  # t = 0: log 1


def _end(x: np.ndarray, lam: np.ndarray, side: Literal[1, -1], threshold: float) -> float:
    """The CS's lower end (side 1: inf of the m that K⁺ no longer rejects) or upper end (side −1), by bisection."""
    rejected, kept = (0.0, 1.0) if side == 1 else (1.0, 0.0)
    if max_log_capital(x, lam, rejected, side) < threshold:
        return rejected
    for _ in range(_BISECTIONS):
        mid = (rejected + kept) / 2
        if max_log_capital(x, lam, mid, side) >= threshold:
            rejected = mid
        else:
            kept = mid
    return rejected  # the last value still rejected: the interval's end, outward (conservative)


def look(diffs: np.ndarray, max_drop: float, alpha: float = 0.05) -> Look:
    """The decision and bounds after `diffs` (candidate − baseline per item, in the order asked)."""
    x = _as_unit(diffs)
    lam = bets(x, alpha)
    threshold = math.log(2 / alpha)
    m0 = (1 - max_drop) / 2  # d = −max_drop
    above = float(max_log_capital(x, lam, m0, 1)) >= threshold  # every mean ≤ −D rejected
    below = float(max_log_capital(x, lam, m0, -1)) >= threshold  # every mean ≥ −D rejected
    lo, hi = 2 * _end(x, lam, 1, threshold) - 1, 2 * _end(x, lam, -1, threshold) - 1
    decision: SequenceDecision = "GO" if above and not below else "NO-GO" if below and not above else "INCONCLUSIVE"
    return Look(decision, int(x.size), lo, hi)


def decided_at(diffs: np.ndarray, max_drop: float, alpha: float, looks: np.ndarray) -> np.ndarray:
    """For many sequences at once (rows of `diffs`): the first look (an index into `looks`, the numbers of items
    at which it looks) where the sequence decides, and which way: an array of (look index, +1 GO / −1 NO-GO),
    look index −1 when it never decides. The simulation's fast path: the same capital as `look`."""
    x = _as_unit(diffs)
    lam = bets(x, alpha)
    threshold = math.log(2 / alpha)
    m0 = (1 - max_drop) / 2
    out = np.full((x.shape[0], 2), -1, dtype=int)
    out[:, 1] = 0
    for side in (1, -1):
        room = m0 if side == 1 else 1 - m0
        logs = np.cumsum(np.log1p(side * np.minimum(lam, TRUNCATION / room) * (x - m0)), axis=-1)
        crossed = np.maximum.accumulate(logs, axis=-1)[:, looks - 1] >= threshold
        first = np.where(crossed.any(axis=1), crossed.argmax(axis=1), -1)
        earlier = (first >= 0) & ((out[:, 0] < 0) | (first < out[:, 0]))
        out[earlier, 0], out[earlier, 1] = first[earlier], side
    return out


__all__ = ["METHOD", "Look", "SequenceDecision", "bets", "decided_at", "look", "max_log_capital"]
