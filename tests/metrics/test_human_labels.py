"""`--human-labels FILE`: JSON Lines or CSV, every bad line refused as `path:line: what is wrong`."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.metrics.human_labels import read_human_labels, verdict
from proctor.util.errors import InputError


def test_json_lines_and_csv_read_the_same_labels(tmp_path: Path) -> None:
    jsonl = tmp_path / "l.jsonl"
    jsonl.write_text('{"id": "q1", "correct": true}\n\n{"id": 2, "correct": "Incorrect"}\n{"id": "q3#1", "correct": 1}\n')
    csv = tmp_path / "l.csv"
    csv.write_text("correct,id\ntrue,q1\nwrong,2\n1,q3#1\n")
    one, other = read_human_labels(jsonl), read_human_labels(csv)
    assert one.labels == other.labels == {"q1": True, "2": False, "q3#1": True}
    assert one.path == str(jsonl) and len(one.sha256) == 64 and one.sha256 != other.sha256


@pytest.mark.parametrize(("text", "suffix", "line", "says"), [
    ('{"id": "q1", "correct": true}\nnot json\n', ".jsonl", 2, "not JSON"),
    ('{"id": "q1"}\n', ".jsonl", 1, "correct: missing"),
    ('{"correct": true}\n', ".jsonl", 1, "id: missing"),
    ('[1, 2]\n', ".jsonl", 1, "expected an object"),
    ('{"id": "q1", "correct": "maybe"}\n', ".jsonl", 1, "expected true/false"),
    ('{"id": "q1", "correct": 2}\n', ".jsonl", 1, "expected true/false"),
    ('{"id": true, "correct": 1}\n', ".jsonl", 1, "id: expected an item id"),
    ('{"id": "q1", "correct": 1}\n{"id": "q1", "correct": 0}\n', ".jsonl", 2, "both correct and incorrect"),
    ("item,verdict\nq1,1\n", ".csv", 1, "no 'id' column"),
    ("id,correct\nq1,1,extra\n", ".csv", 2, "3 fields"),
    ("id,correct\n,1\n", ".csv", 2, "id: expected an item id"),
])
def test_a_bad_line_is_named(tmp_path: Path, text: str, suffix: str, line: int, says: str) -> None:
    path = tmp_path / f"labels{suffix}"
    path.write_text(text)
    with pytest.raises(InputError) as refused:
        read_human_labels(path)
    problem = refused.value.problems[0]
    assert (problem.path, problem.line) == (str(path), line) and says in str(problem), str(problem)


def test_an_empty_or_missing_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_text("\n\n")
    with pytest.raises(InputError, match="no labels"):
        read_human_labels(tmp_path / "e.jsonl")
    with pytest.raises(InputError, match="cannot read"):
        read_human_labels(tmp_path / "absent.jsonl")


def test_duplicates_that_agree_are_one_label(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "q1", "correct": true}\n{"id": "q1", "correct": "correct"}\n')
    assert read_human_labels(path).labels == {"q1": True}
    assert (verdict(True), verdict(0), verdict(" Right "), verdict(1.0), verdict(None)) == (True, False, True, True,
                                                                                            None)
