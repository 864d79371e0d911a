"""Coverage counts and the under/over-representation rule."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.data.coverage import coverage, difficulty_band, flag_categories
from proctor.data.formats.items import read_items
from proctor.data.records import Item

DEMO = Path(__file__).parents[2] / "examples" / "items" / "demo.jsonl"


def item(i: int, category: str | None, difficulty: float | None = None, sub: str | None = None) -> Item:
    return Item(identifier=f"i{i}", modality="boolean", prompt="p", response="True", category=category,
                difficulty=difficulty, subcategory=sub)


@pytest.mark.parametrize(
    ("d", "band"),
    [(None, "unknown"), (0.0, "0.0-0.2"), (0.19, "0.0-0.2"), (0.2, "0.2-0.4"), (0.6, "0.6-0.8"),
     (0.8, "0.8-1.0"), (1.0, "0.8-1.0")],
)
def test_difficulty_bands(d: float | None, band: str) -> None:
    assert difficulty_band(d) == band


def test_counts_and_flags() -> None:
    items = [item(i, "big", 0.1, "s1" if i % 2 else "s2") for i in range(12)]
    items += [item(100 + i, "mid", 0.5) for i in range(4)] + [item(200, "tiny")] + [item(300, None)]
    cov = coverage(items)
    assert cov.total == 18
    assert cov.categories == {"big": 12, "mid": 4, "(none)": 1, "tiny": 1}
    assert cov.subcategories == {"big": {"s1": 6, "s2": 6}}
    assert cov.modalities == {"boolean": 18}
    assert cov.difficulty == {"0.0-0.2": 12, "0.4-0.6": 4, "unknown": 2}
    # 3 named categories, 17 items: uniform share 1/3; tiny 1/17 < 1/6 → under; big 12/17 > 2/3 → over
    assert cov.under == ["tiny"] and cov.over == ["big"]
    assert cov.to_json()["flags"][0]["kind"] in ("under", "over")


def test_no_flags_for_balanced_or_single_category() -> None:
    assert flag_categories({"a": 5, "b": 6, "c": 4}) == []
    assert flag_categories({"a": 5, "(none)": 1}) == []
    assert coverage([]).total == 0


def test_demo_set_flags_language_as_under_represented() -> None:
    cov = coverage(read_items(DEMO))
    assert len(cov.modalities) == 11
    assert cov.under == ["language"] and cov.over == []
