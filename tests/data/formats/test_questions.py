"""Question / Dataset JSON (seed 001): round trips, derived categories, located problems."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from formats_strategies import FAST, datasets
from hypothesis import HealthCheck, given, settings

from proctor.data.formats.convert import (
    dataset_to_itemset,
    item_to_question,
    itemset_to_dataset,
    question_to_item,
)
from proctor.data.formats.questions import read_questions, write_questions
from proctor.data.records import Dataset
from proctor.util.errors import InputError

EXAMPLE = Path(__file__).parents[3] / "examples" / "questions" / "demo.json"


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(datasets())
def test_round_trip_and_idempotent(ds: Dataset) -> None:
    with tempfile.TemporaryDirectory() as d:
        first, second = Path(d, "a.json"), Path(d, "b.json")
        write_questions(first, ds)
        back = read_questions(first)
        assert back == ds
        write_questions(second, back)
        assert second.read_bytes() == first.read_bytes()


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(datasets())
def test_question_item_question_is_lossless(ds: Dataset) -> None:
    for i, q in enumerate(ds.questions):
        assert item_to_question(question_to_item(q, ds.name), i) == q
    assert itemset_to_dataset(dataset_to_itemset(ds)) == ds


def test_categories_are_derived_and_written(tmp_path: Path) -> None:
    ds = read_questions(EXAMPLE)
    doc = json.loads(EXAMPLE.read_text())
    assert doc["categories"] == ds.categories == ["astronomy", "chemistry", "algebra", "geometry"]
    assert set(ds.questions_by_category) == set(ds.categories)
    doc["categories"] = ["stale"]
    (tmp_path / "d.json").write_text(json.dumps(doc))
    assert read_questions(tmp_path / "d.json").categories == ds.categories


def test_problems_name_the_question_line(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["questions"][2]["answer"] = "Z"
    del doc["questions"][5]["question"]
    doc["questions"][6]["id"] = doc["questions"][0]["id"]
    path = tmp_path / "bad.json"
    text = json.dumps(doc, indent=2)
    path.write_text(text)
    with pytest.raises(InputError) as info:
        read_questions(path)
    lines = text.splitlines()
    msgs = [str(p) for p in info.value.problems]
    assert len(msgs) == 2
    line2 = int(msgs[0].split(":")[1])
    assert lines[line2 - 1].strip() == "{" and '"original_id": "demo-q2"' in lines[line2 + 1]
    assert msgs[0].endswith("questions[2].answer: answer 'Z' is not one of the choices ABCD")
    assert msgs[1].endswith("questions[5].question: required field is missing")


def test_repeated_ids(tmp_path: Path) -> None:
    doc = json.loads(EXAMPLE.read_text())
    doc["questions"][6]["id"] = 0
    (tmp_path / "d.json").write_text(json.dumps(doc, indent=1))
    with pytest.raises(InputError, match=r"questions\[6\].id: 0 repeats the id of questions\[0\]"):
        read_questions(tmp_path / "d.json")


def test_not_an_object_and_empty(tmp_path: Path) -> None:
    (tmp_path / "l.json").write_text("[1]")
    (tmp_path / "e.json").write_text("  \n")
    with pytest.raises(InputError, match="expected a JSON object"):
        read_questions(tmp_path / "l.json")
    with pytest.raises(InputError, match="empty file"):
        read_questions(tmp_path / "e.json")
