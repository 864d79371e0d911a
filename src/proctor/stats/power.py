"""How many items a paired comparison needs, and the smallest difference a set of items can detect.

Two models answer the same items; only the items where they disagree (discordant pairs) carry information
about which is better. With ψ the share of discordant items and δ = p(A right, B wrong) − p(A wrong, B right)
the true difference of accuracies, McNemar's test at two-sided level α has power 1 − β on n items when
(Connor 1987, the normal approximation for McNemar's test):

    n = (z_{1−α/2} √ψ + z_{1−β} √(ψ − δ²))² / δ²

`items_needed` is that n; `min_detectable` solves it for δ given n (the minimum detectable difference, MDE).
Graded scores use the paired t-style approximation n = ((z_{1−α/2} + z_{1−β}) σ_d / δ)².
"""

from __future__ import annotations

import math

from pydantic import BaseModel

from .intervals import normal_quantile

ALPHA = 0.05
POWER = 0.80
_STEPS = 100


def _z(alpha: float, power: float) -> tuple[float, float]:
    return normal_quantile(1 - alpha / 2), normal_quantile(power)


def items_needed(delta: float, discordance: float, alpha: float = ALPHA, power: float = POWER) -> int:
    """Items a paired comparison needs to detect a difference of accuracies `delta` (a proportion) with
    McNemar's test, when a share `discordance` of items is answered right by one model and wrong by the other."""
    d, psi = abs(delta), discordance
    if not 0 < d <= psi <= 1:
        raise ValueError(f"need 0 < |delta| <= discordance <= 1 (delta {delta}, discordance {discordance}): the "
                         "models must disagree at least as often as their accuracies differ")
    za, zb = _z(alpha, power)
    return math.ceil((za * math.sqrt(psi) + zb * math.sqrt(max(psi - d * d, 0.0))) ** 2 / (d * d))


def min_detectable(n: int, discordance: float, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest difference of accuracies n paired items detect with the given power (None: none can be, the
    models never disagree). Solves Connor's equation √n δ = z_{1−α/2} √ψ + z_{1−β} √(ψ − δ²) for δ ∈ (0, ψ]."""
    psi = discordance
    if n <= 0 or psi <= 0:
        return None
    za, zb = _z(alpha, power)

    def gap(d: float) -> float:  # increasing in d: positive once d is detectable
        return math.sqrt(n) * d - za * math.sqrt(psi) - zb * math.sqrt(max(psi - d * d, 0.0))

    if gap(psi) < 0:
        return None  # even a difference as large as the discordance is not detectable on n items
    lo, hi = 0.0, psi
    for _ in range(_STEPS):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    return hi


def min_detectable_graded(n: int, sd_diff: float, alpha: float = ALPHA, power: float = POWER) -> float | None:
    """The smallest mean paired difference n items detect when per-item differences have sd `sd_diff`."""
    if n <= 1 or sd_diff <= 0:
        return None
    za, zb = _z(alpha, power)
    return (za + zb) * sd_diff / math.sqrt(n)


def independent_discordance(acc_a: float, acc_b: float) -> float:
    """The discordance of two models whose errors are independent: p_A(1 − p_B) + p_B(1 − p_A). Models sharing
    items usually agree more than that, so this is an upper bound in practice (it asks for more items)."""
    return acc_a * (1 - acc_b) + acc_b * (1 - acc_a)


class Plan(BaseModel):
    """How many items a paired comparison of two models needs, and whether a dataset has them (`proctor plan`)."""

    delta: float  # the difference of accuracies to detect (a proportion)
    accuracy: float  # the accuracy the two models are near
    discordance: float  # the share of items one model gets right and the other wrong
    discordance_from: str  # "given", "runs <A> and <B>", or "independent errors (an upper bound in practice)"
    alpha: float
    power: float
    items_needed: int
    dataset: str | None = None
    dataset_items: int | None = None
    enough: bool | None = None  # the dataset has items_needed items (None: no dataset named)
    dataset_mde: float | None = None  # the smallest difference the dataset's items detect

    def lines(self) -> list[str]:
        """The plan in plain sentences."""
        pts = f"{100 * self.delta:.1f}"
        out = [(f"to detect {pts} points between two models near {100 * self.accuracy:.0f}% accuracy "
               f"(paired, McNemar's test at α = {self.alpha:g}, {100 * self.power:.0f}% power), "
               f"with {100 * self.discordance:.1f}% of items answered differently ({self.discordance_from}): "
               f"{self.items_needed:,} items")]
        if self.dataset_items is not None:
            mde = "no difference" if self.dataset_mde is None else f"{100 * self.dataset_mde:.1f} points"
            verdict = "enough" if self.enough else "not enough"
            held = f"{self.dataset} has {self.dataset_items:,} items" if self.dataset else f"{self.dataset_items:,} items"
            out.append(f"{held}: {verdict} (they detect {mde} at this power)")
        return out


def plan(delta: float, accuracy: float, discordance: float | None = None, discordance_from: str = "given",
         n_available: int | None = None, dataset: str | None = None, alpha: float = ALPHA,
         power: float = POWER) -> Plan:
    """The items needed to detect `delta` between two models near `accuracy` (`discordance` given, else that of
    independent errors), and whether `n_available` items suffice."""
    if not 0 < accuracy < 1:
        raise ValueError(f"accuracy must be between 0 and 1, got {accuracy}")
    if discordance is None:
        hi, lo = min(accuracy + delta / 2, 1.0), max(accuracy - delta / 2, 0.0)
        discordance = independent_discordance(hi, lo)
        discordance_from = "independent errors: an upper bound in practice; give --discordance or two runs"
    need = items_needed(delta, discordance, alpha, power)
    return Plan(delta=delta, accuracy=accuracy, discordance=discordance, discordance_from=discordance_from,
                alpha=alpha, power=power, items_needed=need, dataset=dataset,
                dataset_items=n_available, enough=n_available >= need if n_available is not None else None,
                dataset_mde=min_detectable(n_available, discordance, alpha, power) if n_available is not None
                else None)


__all__ = ["ALPHA", "POWER", "Plan", "independent_discordance", "items_needed", "min_detectable",
           "min_detectable_graded", "plan"]
