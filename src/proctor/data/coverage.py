"""Coverage of a dataset: what its items are about, how they must be answered, and how hard they are.

The spec's third purpose is to "identify under- or over-represented subject areas". The rule here:
with k ≥ 2 categories, a uniform dataset gives each a share of 1/k; a category is **under-represented**
when its share is below half of that (< 0.5/k) and **over-represented** when above double (> 2/k).
Items without a category are counted as `(none)` but take no part in the rule.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from .records import Item, Modality

NO_CATEGORY = "(none)"
UNKNOWN_BAND = "unknown"
BANDS: tuple[str, ...] = ("0.0-0.2", "0.2-0.4", "0.4-0.6", "0.6-0.8", "0.8-1.0", UNKNOWN_BAND)
UNDER_FACTOR = 0.5
OVER_FACTOR = 2.0


def difficulty_band(difficulty: float | None) -> str:
    """`0.0-0.2` for [0, 0.2), …, `0.8-1.0` for [0.8, 1.0]; `unknown` when unset or out of range."""
    if difficulty is None or not 0.0 <= difficulty <= 1.0:
        return UNKNOWN_BAND
    return BANDS[min(int(difficulty * 5 + 1e-9), 4)]


@dataclass(frozen=True)
class Flag:
    """A category whose share is far from the uniform share."""

    category: str
    kind: Literal["under", "over"]
    count: int
    share: float
    uniform_share: float


@dataclass(frozen=True)
class Coverage:
    """Counts per category, subcategory (within its category), modality and difficulty band."""

    total: int
    categories: dict[str, int]
    subcategories: dict[str, dict[str, int]]
    modalities: dict[str, int]
    difficulty: dict[str, int]
    flags: list[Flag] = field(default_factory=list)
    few_options: int = 0  # choice items with only one or two options (valid items, scored like any other)

    @property
    def under(self) -> list[str]:
        return [f.category for f in self.flags if f.kind == "under"]

    @property
    def over(self) -> list[str]:
        return [f.category for f in self.flags if f.kind == "over"]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _ranked(counter: Counter[str]) -> dict[str, int]:
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def flag_categories(counts: dict[str, int]) -> list[Flag]:
    """Apply the half/double-of-uniform rule to named categories (see the module docstring)."""
    named = {c: n for c, n in counts.items() if c != NO_CATEGORY}
    k, n = len(named), sum(named.values())
    if k < 2 or n == 0:
        return []
    uniform = 1.0 / k
    flags = []
    for cat, count in named.items():
        share = count / n
        if share < UNDER_FACTOR * uniform:
            flags.append(Flag(cat, "under", count, share, uniform))
        elif share > OVER_FACTOR * uniform:
            flags.append(Flag(cat, "over", count, share, uniform))
    return flags


def coverage(items: Sequence[Item]) -> Coverage:
    """Pure summary of `items`: no I/O, deterministic ordering (largest first, then by name)."""
    cats: Counter[str] = Counter(it.category if it.category is not None else NO_CATEGORY for it in items)
    subs: dict[str, Counter[str]] = {}
    for it in items:
        if it.subcategory is not None:
            subs.setdefault(it.category or NO_CATEGORY, Counter())[it.subcategory] += 1
    mods = Counter(it.modality.value for it in items)
    bands = Counter(difficulty_band(it.difficulty) for it in items)
    categories = _ranked(cats)
    return Coverage(
        total=len(items),
        categories=categories,
        subcategories={c: _ranked(subs[c]) for c in categories if c in subs},
        modalities={m.value: mods[m.value] for m in Modality if mods[m.value]},
        difficulty={b: bands[b] for b in BANDS if bands[b]},
        flags=flag_categories(categories),
        few_options=sum(1 for it in items if (it.modality.n_choices or 3) <= 2),
    )
