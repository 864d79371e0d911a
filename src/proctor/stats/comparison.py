"""The paired comparison of two runs on their shared items: one typed record for compare, leaderboard and the report.

* 0/1 scores: the difference of accuracies with Tango's score interval for paired proportions (Tango 1998;
  never degenerate: all pairs identical still gives ±z²/(n+z²)), and McNemar's exact test (two-sided binomial on
  the discordant pairs).
* graded scores (partial credit, epochs averaged): a paired percentile bootstrap over items, widened where
  needed to a Wilson-style floor (each side at least z²/(n+z²) from the estimate, the Wilson bound of 0 of n), and
  McNemar's exact test on correctness (an item is correct when its score reaches `CORRECT_THRESHOLD`).

Every output (console, --json, Markdown, HTML) formats these records with `points` and `verdict`, so the
figures agree everywhere. See docs/history.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, computed_field

from . import intervals as stats
from . import power

#: An item counts as "correct" for McNemar's test when its (epoch-averaged) score reaches this.
CORRECT_THRESHOLD = 0.5
LEVEL = 0.95
Z = stats.Z95
_BISECT_STEPS = 80  # halvings of [-1, 1]: far below float resolution of a percentage point

IntervalMethod = Literal["tango_score", "paired_bootstrap_wilson_floor"]
CORRECTION_LABELS = {"holm": "Holm", "bh": "BH"}


def points(x: float, signed: bool = True) -> str:
    """A difference of proportions in percentage points, one decimal; never "-0.0" (a rounded zero is "0.0")."""
    value = round(100 * x, 1) + 0.0  # + 0.0 turns -0.0 into 0.0
    if value == 0:
        return "0.0"
    return f"{value:+.1f}" if signed else f"{value:.1f}"


def p_text(p: float) -> str:
    """A p-value as people read it: "p = 0.006", "p < 0.001" below that."""
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def p_cell(p: float) -> str:
    """A p-value in a table cell: "0.006", "< 0.001"."""
    return p_text(p).removeprefix("p = ").removeprefix("p ")


# ---------------------------------------------------------------- the statistics


def _tango_z(delta: float, b10: float, b01: float, n: float) -> float:
    """Tango's score statistic for H0: p(A right, B wrong) − p(A wrong, B right) = delta (decreasing in delta)."""
    w = -b10 - b01 + (2 * n - b10 + b01) * delta
    c = -b01 * delta * (1 - delta)
    q01 = (math.sqrt(max(w * w - 8 * n * c, 0.0)) - w) / (4 * n)  # constrained MLE of p(A wrong, B right)
    num = b10 - b01 - n * delta
    var = n * (2 * q01 + delta * (1 - delta))
    if var <= 0:
        return 0.0 if num == 0 else math.copysign(math.inf, num)
    return num / math.sqrt(var)


def _solve(f: Callable[[float], float], lo: float, hi: float) -> float:
    """The root of a decreasing `f` on [lo, hi] by bisection (an end when f does not change sign)."""
    if f(lo) <= 0:
        return lo
    if f(hi) >= 0:
        return hi
    for _ in range(_BISECT_STEPS):
        mid = (lo + hi) / 2
        if f(mid) > 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def tango_interval(b10: float, b01: float, n: float, z: float = Z) -> tuple[float, float]:
    """Tango's score interval for a paired difference of proportions, (b10 − b01) / n.

    b10: pairs where A is right and B wrong; b01: A wrong, B right; n: all pairs. Counts may be fractional."""
    if n <= 0:
        raise ValueError("tango_interval needs n > 0")
    est = (b10 - b01) / n
    low = _solve(lambda d: _tango_z(d, b10, b01, n) - z, -1.0, est)
    high = _solve(lambda d: _tango_z(d, b10, b01, n) + z, est, 1.0)
    return min(low, est), max(high, est)


def wilson_floor(n: int, z: float = Z) -> float:
    """The least distance of an interval end from its estimate on n items: the continuity-corrected Wilson bound
    for 0 of n, the floor of every bootstrap interval in proctor.stats (`intervals.small_sample_floor`)."""
    return stats.small_sample_floor(n, z)


def graded_interval(d: np.ndarray, n_boot: int, seed: int, level: float = LEVEL) -> tuple[float, float]:
    """Paired percentile bootstrap of mean(d), each side widened to at least `wilson_floor` (clipped to [-1, 1])."""
    est = float(d.mean())
    reps = stats.bootstrap_means(d, n_boot, seed)
    alpha = (1 - level) / 2
    lo, hi = (float(v) for v in np.quantile(reps, [alpha, 1 - alpha]))
    floor = wilson_floor(d.size, Z if level == LEVEL else stats.normal_quantile(1 - alpha))
    return max(-1.0, min(lo, est - floor)), min(1.0, max(hi, est + floor))


def mcnemar_exact(b10: int, b01: int) -> float:
    """McNemar's exact test: two-sided binomial p of the discordant pairs under H0 (each way equally likely)."""
    k, m = min(b10, b01), b10 + b01
    return 1.0 if m == 0 else min(1.0, 2 * stats.binom_cdf(k, m))


# ---------------------------------------------------------------- the records


class RunRef(BaseModel):
    """Which run a side of a comparison is."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    model: str
    dataset: str
    setting: str = ""  # the run's setting label (mode, prompt, generation settings)
    path: str = ""
    started_at: str = ""
    accuracy: float | None = None  # the run's own accuracy over all its scored items
    ci_low: float | None = None  # … and its 95% interval, as results.json has it (clustered when the run was)
    ci_high: float | None = None
    partial: str | None = None  # `partial 150/400`: a run --stop-when-decided stopped early (None: complete)

    @property
    def shown_setting(self) -> str:
        """The setting label, with the partial mark of a run stopped early."""
        return " · ".join(part for part in (self.setting, self.partial) if part)

    def accuracy_text(self) -> str:
        """The run's own accuracy and interval in percent ("41.2% [35.0, 47.6]"), as results.json has them."""
        if self.accuracy is None:
            return "accuracy n/a"
        lo, hi = self.ci_low, self.ci_high
        ci = f" [{100 * lo:.1f}, {100 * hi:.1f}]" if lo is not None and hi is not None else ""
        return f"{100 * self.accuracy:.1f}%{ci}"


class PairedDifference(BaseModel):
    """A − B on one group of shared items: the difference, its paired 95% interval, McNemar's exact test."""

    model_config = ConfigDict(frozen=True)

    group: str
    n: int  # shared items
    acc_a: float
    acc_b: float
    diff: float  # acc_a − acc_b
    ci_low: float
    ci_high: float
    b10: int  # A right, B wrong
    b01: int  # A wrong, B right
    p_value: float  # McNemar's exact test
    binary: bool  # every score 0 or 1 (else graded: McNemar on score >= CORRECT_THRESHOLD)
    interval_method: IntervalMethod
    level: float = LEVEL
    # the smallest difference these items detect at 80% power (proctor.stats.power; None: the runs never disagree)
    mde: float | None = None
    # when compared in a family (proctor.stats.family): McNemar's p adjusted for it, the correction and the family's size
    p_adjusted: float | None = None
    correction: str | None = None
    family_size: int = 1

    @property
    def p_decisive(self) -> float:
        """The p-value the verdict reads: adjusted for the family when there is one."""
        return self.p_adjusted if self.p_adjusted is not None else self.p_value

    @property
    def excludes_zero(self) -> bool:
        return self.ci_low > 0 or self.ci_high < 0

    @property
    def detected(self) -> bool:
        """A difference is claimed only when the interval excludes zero and McNemar's exact p (adjusted for the
        family of comparisons, when there is one) < 1 − level."""
        return self.excludes_zero and self.p_decisive < 1 - self.level

    @property
    def borderline(self) -> bool:
        """The interval and the exact test disagree (one sees a difference, the other does not)."""
        return self.excludes_zero != (self.p_decisive < 1 - self.level)

    @property
    def underpowered(self) -> bool:
        """No difference was detected, and the observed one is below what these items could detect (or, when the
        runs disagree on so few items that no difference is detectable, at all)."""
        if self.detected:
            return False
        return abs(self.diff) < self.mde if self.mde is not None else self.b10 + self.b01 > 0

    def interval_text(self) -> str:
        return f"[{points(self.ci_low)}, {points(self.ci_high)}]"

    def p_texts(self) -> str:
        """McNemar's p, and the adjusted p when compared in a family of several."""
        if self.p_adjusted is None or self.family_size < 2:
            return p_text(self.p_value)
        name = CORRECTION_LABELS.get(self.correction or "", self.correction or "")
        return f"{p_text(self.p_value)}, {name}-adjusted {p_text(self.p_adjusted)} over {self.family_size}"

    def mde_text(self) -> str:
        return "–" if self.mde is None else points(self.mde, signed=False)

    def _undecided(self) -> str:
        if self.borderline:
            return "borderline, the interval and the exact test disagree" if self.family_size < 2 \
                else "borderline, the interval and the adjusted test disagree"
        if self.underpowered:
            return (f"underpowered (these items detect {self.mde_text()} points at 80% power)" if self.mde is not None
                    else "underpowered (too few items to detect any difference at 80% power)")
        return "no detectable difference"

    def verdict(self, a: str = "A", b: str = "B") -> str:
        """One plain sentence: who is ahead by how much, the interval, p and the shared items."""
        tail = f"{self.p_texts()}, {self.n:,} shared item{'s' if self.n != 1 else ''}"
        if not self.detected:
            return f"{self._undecided()}: {a} − {b} {points(self.diff)} points {self.interval_text()}, {tail}"
        ahead, behind = (a, b) if self.diff > 0 else (b, a)
        lo, hi = sorted((abs(self.ci_low), abs(self.ci_high)))
        return (f"{ahead} ahead of {behind} by {points(abs(self.diff), signed=False)} points "
                f"[{points(lo, signed=False)}, {points(hi, signed=False)}], {tail}")


class Comparison(BaseModel):
    """Two runs on the items they share: overall and per category, with what differs between them."""

    model_config = ConfigDict(frozen=True)

    a: RunRef
    b: RunRef
    overall: PairedDifference
    by_category: list[PairedDifference]
    warnings: list[str]
    only_in_a: list[str]
    only_in_b: list[str]
    mcnemar_correct_threshold: float = CORRECT_THRESHOLD

    @computed_field  # type: ignore[prop-decorator]
    @property
    def verdict(self) -> str:
        return self.overall.verdict(self.a.model, self.b.model) if self.a.model != self.b.model \
            else self.overall.verdict("A", "B")

    def to_dict(self) -> dict[str, object]:
        return self.model_dump(mode="json")


def paired_difference(group: str, a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                      n_boot: int = stats.DEFAULT_BOOT, seed: int = 0) -> PairedDifference:
    """A − B on paired per-item scores (same order, same items; epochs already averaged)."""
    sa, sb = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if sa.shape != sb.shape or sa.ndim != 1 or sa.size == 0:
        raise ValueError(f"paired_difference needs two equal-length, non-empty score lists, got {sa.shape}, {sb.shape}")
    right_a, right_b = sa >= CORRECT_THRESHOLD, sb >= CORRECT_THRESHOLD
    b10, b01 = int(np.sum(right_a & ~right_b)), int(np.sum(~right_a & right_b))
    binary = bool(np.isin(sa, (0.0, 1.0)).all() and np.isin(sb, (0.0, 1.0)).all())
    n = int(sa.size)
    if binary:
        lo, hi = tango_interval(b10, b01, n)
        method: IntervalMethod = "tango_score"
        mde = power.min_detectable(n, (b10 + b01) / n)
    else:
        lo, hi = graded_interval(sa - sb, n_boot, seed)
        method = "paired_bootstrap_wilson_floor"
        mde = power.min_detectable_graded(n, float(np.std(sa - sb, ddof=1)) if n > 1 else 0.0)
    return PairedDifference(
        group=group, n=n, acc_a=float(sa.mean()), acc_b=float(sb.mean()), diff=float(sa.mean() - sb.mean()) + 0.0,
        ci_low=lo + 0.0, ci_high=hi + 0.0, b10=b10, b01=b01, p_value=mcnemar_exact(b10, b01), binary=binary,
        interval_method=method, mde=mde,
    )


__all__ = ["CORRECT_THRESHOLD", "Comparison", "PairedDifference", "RunRef", "graded_interval", "mcnemar_exact",
           "p_cell", "p_text", "paired_difference", "points", "tango_interval", "wilson_floor"]
