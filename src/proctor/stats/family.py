"""Many comparisons at once with the family controlled: Holm's step-down (family-wise error, Holm 1979) by
default, Benjamini–Hochberg's step-up (false discovery rate, Benjamini & Hochberg 1995) on request.

Two families: the overall differences of every pair compared, and every per-category difference of every pair.
`adjust_comparisons` sets `p_adjusted` on each `PairedDifference`, and its verdict reads that p: compare, the
report and the leaderboard all state the adjusted verdicts of the same records.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from .comparison import Comparison, PairedDifference

Correction = Literal["holm", "bh"]
CORRECTIONS: tuple[Correction, ...] = ("holm", "bh")
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini–Hochberg"}
MAX_PAIRWISE = 8  # runs up to which the report and the leaderboard compare every pair; beyond, the best with the rest


def holm(p: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values: the i-th smallest times (m − i), made monotone, capped at 1."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    out = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p[i]))
        out[i] = running
    return out


def benjamini_hochberg(p: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values: the i-th smallest times m / i, made monotone from the top, capped."""
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i], reverse=True)
    out = [0.0] * m
    running = 1.0
    for k, i in enumerate(order):
        running = min(running, p[i] * m / (m - k))
        out[i] = min(1.0, running)
    return out


def adjust(p: Sequence[float], correction: Correction = "holm") -> list[float]:
    """Adjusted p-values of one family."""
    if correction not in CORRECTIONS:
        raise ValueError(f"correction must be one of {', '.join(CORRECTIONS)}, not {correction!r}")
    return holm(p) if correction == "holm" else benjamini_hochberg(p)


def _with_p(d: PairedDifference, p: float, correction: Correction, size: int) -> PairedDifference:
    return d.model_copy(update={"p_adjusted": p, "correction": correction, "family_size": size})


def adjust_comparisons(comparisons: Sequence[Comparison], correction: Correction = "holm") -> list[Comparison]:
    """The comparisons with adjusted p-values: the overall differences form one family, every per-category
    difference of every comparison another."""
    overall = adjust([c.overall.p_value for c in comparisons], correction)
    cats = adjust([g.p_value for c in comparisons for g in c.by_category], correction)
    n_cats = len(cats)
    out, k = [], 0
    for c, p in zip(comparisons, overall, strict=True):
        by_cat = [_with_p(g, cats[k + j], correction, n_cats) for j, g in enumerate(c.by_category)]
        k += len(c.by_category)
        out.append(c.model_copy(update={"overall": _with_p(c.overall, p, correction, len(comparisons)),
                                        "by_category": by_cat}))
    return out


__all__ = ["CORRECTIONS", "CORRECTION_NAMES", "MAX_PAIRWISE", "Correction", "adjust", "adjust_comparisons", "benjamini_hochberg",
           "holm"]
