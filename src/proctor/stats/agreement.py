"""Agreement of two raters on nominal labels — numpy only: Krippendorff's α (nominal; Krippendorff 2011,
"Computing Krippendorff's Alpha-Reliability") for two coders who both rated every unit. Cohen's κ is
`proctor.scoring.judge.cohens_kappa`'s."""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np


def krippendorff_alpha_nominal(a: Sequence[Hashable], b: Sequence[Hashable]) -> float | None:
    """Krippendorff's α of two coders' nominal labels on the same units (no value missing), from the coincidence
    matrix: 1 − (n − 1) Σ_{c≠k} o_ck / Σ_{c≠k} n_c n_k. None when undefined (no units, or one value everywhere)."""
    if len(a) != len(b) or not a:
        return None
    values = {v: i for i, v in enumerate(dict.fromkeys([*a, *b]))}
    o = np.zeros((len(values), len(values)))
    for x, y in zip(a, b, strict=True):  # each unit's one pair, counted both ways (m_u − 1 = 1)
        o[values[x], values[y]] += 1
        o[values[y], values[x]] += 1
    n_c = o.sum(axis=1)
    n = n_c.sum()
    expected = n_c.sum() ** 2 - float((n_c ** 2).sum())  # Σ_{c≠k} n_c n_k
    if expected <= 0:
        return None
    observed = n - float(np.trace(o))  # Σ_{c≠k} o_ck
    return float(1.0 - (n - 1) * observed / expected)


__all__ = ["krippendorff_alpha_nominal"]
