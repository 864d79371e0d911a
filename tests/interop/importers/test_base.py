"""What every importer shares: item-id templates, scores and outcomes, times, and writing a run whole."""

from __future__ import annotations

import pytest

from proctor.interop.imported import (
    check_item_template,
    iso_time,
    item_id_from,
    item_template,
    outcome_of,
    unit_score,
)
from proctor.log.runlog import Outcome
from proctor.util.errors import InputError


@pytest.mark.parametrize(("given", "expected"), [
    (None, "{doc_id}"), ("", "{doc_id}"), ("question_id", "{question_id}"),
    ("mmlu-pro.{question_id}", "mmlu-pro.{question_id}"), ("{task}.{doc_id}", "{task}.{doc_id}"),
])
def test_a_bare_field_name_is_that_field(given: str | None, expected: str) -> None:
    assert item_template(given, "{doc_id}") == expected


def test_an_item_id_is_the_template_filled_from_the_fields() -> None:
    fields = {"doc_id": 3, "question_id": "q7", "task": "mmlu_pro_law", "choices": ["a", "b"], "flag": True}
    assert item_id_from("mmlu-pro.{question_id}", fields, "f.jsonl") == "mmlu-pro.q7"
    assert item_id_from("{task}.{doc_id}", fields, "f.jsonl") == "mmlu_pro_law.3"


@pytest.mark.parametrize(("template", "message"), [
    ("{choices}", "this sample has no text or number field 'choices' (fields: doc_id, question_id, task)"),
    ("{flag}", "no text or number field 'flag'"),
    ("{missing}", "no text or number field 'missing'"),
])
def test_a_field_the_sample_lacks_names_the_fields_it_has(template: str, message: str) -> None:
    fields = {"doc_id": 3, "question_id": "q7", "task": "t", "choices": ["a", "b"], "flag": True}
    with pytest.raises(InputError) as e:
        item_id_from(template, fields, "f.jsonl", 4)
    assert str(e.value).startswith(f"f.jsonl:4: --item-id {template!r}: ") and message in str(e.value)


@pytest.mark.parametrize(("template", "message"), [
    ("{doc.__class__}", "use plain fields"), ("{doc[0]}", "use plain fields"), ("{doc_id!r}", "use plain fields"),
    ("{doc_id:>5}", "use plain fields"), ("{}", "use plain fields"), ("plain-text", "names no field"),
    ("{unclosed", "expected '}'"),
])
def test_only_plain_fields_are_accepted(template: str, message: str) -> None:
    with pytest.raises(InputError, match="--item-id") as e:
        check_item_template(template, "f.jsonl")
    assert message in str(e.value)


@pytest.mark.parametrize(("value", "expected"), [
    (1, 1.0), (0, 0.0), (0.5, 0.5), (True, 1.0), (False, 0.0), (1.5, None), (-0.1, None), (float("nan"), None),
    (float("inf"), None), ("1", None), (None, None), ([1], None),
])
def test_a_unit_score_lies_in_zero_one(value: object, expected: float | None) -> None:
    assert unit_score(value) == expected


def test_outcomes_follow_the_score() -> None:
    assert [outcome_of(x) for x in (1.0, 0.0, 0.5)] == [Outcome.CORRECT, Outcome.WRONG, Outcome.PARTIAL]


@pytest.mark.parametrize(("value", "expected"), [
    (1795544050.45, "2026-11-24T18:14:10+00:00"), ("2026-11-24T18:15:20+00:00", "2026-11-24T18:15:20+00:00"),
    ("2026-11-24T19:15:20+01:00", "2026-11-24T18:15:20+00:00"), ("yesterday", None), (None, None), (True, None),
    (float("nan"), None),
])
def test_times_become_iso_utc(value: object, expected: str | None) -> None:
    assert iso_time(value) == expected
