"""Suite ⇄ items conversion (pure records) and, when proctor.data.formats.suites exists, suite files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formats_strategies import FAST, suites
from hypothesis import HealthCheck, given, settings

from proctor.data.formats.convert import items_to_suite, items_to_suites, suite_to_items
from proctor.data.records import UNSCORED, ContextCase, Modality, Prompt, TestSuite
from proctor.util.errors import InputError

SUITES = Path(__file__).parents[3] / "examples" / "suites"


def seed_suite_b() -> tuple[Prompt, TestSuite]:
    doc = json.loads((SUITES / "test_B.json").read_text())
    return Prompt(name="test", text=(SUITES / "test.txt").read_text()), TestSuite(name="B", **doc)


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(suites())
def test_suite_items_suite_is_exact(pair: tuple[Prompt, TestSuite]) -> None:
    prompt, suite = pair
    items = suite_to_items(prompt, suite)
    assert len(items) == len(suite.context)
    assert items_to_suite(list(reversed(items))) == (prompt, suite)


def test_mapping_of_the_seed_example() -> None:
    prompt, suite = seed_suite_b()
    [item] = suite_to_items(prompt, suite)
    assert item.identifier == "test.B.0"
    assert item.modality is Modality.CHOICE4
    assert item.choices == {"A": "A", "B": "B", "C": "C", "D": "D"}
    assert item.response == UNSCORED and not item.is_scored and item.accepted == []
    assert item.metadata["suite.expected"] == -1
    assert item.task_prompt == prompt.text
    scored = suite.model_copy(update={"context": [ContextCase(text="t", expected=2)]})
    assert suite_to_items(prompt, scored)[0].response == "C"


def test_items_of_two_suites_regroup() -> None:
    prompt, b = seed_suite_b()
    a = TestSuite(name="A", context=[ContextCase(text="x", expected=1)], queries=["True", "False"])
    items = suite_to_items(prompt, a) + suite_to_items(prompt, b)
    assert items_to_suites(items) == [(prompt, a), (prompt, b)]


def test_single_query_suite_cannot_be_items() -> None:
    suite = TestSuite(name="one", context=[ContextCase(text="x", expected=0)], queries=["only"])
    with pytest.raises(InputError, match="queries: 1 queries"):
        suite_to_items(Prompt(name="p", text=""), suite)


def test_suite_files_load_as_items() -> None:
    pytest.importorskip("proctor.data.formats.suites")
    from proctor.data.formats.detect import Format, detect_format, load_itemset

    assert detect_format(SUITES) is Format.SUITES
    assert detect_format(SUITES / "test_A.json") is Format.SUITE
    items = load_itemset(SUITES).items
    assert [it.response for it in items] == ["A", "B", UNSCORED]
    assert load_itemset(SUITES / "test_A.json").items == items[:2]
