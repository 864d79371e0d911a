"""Items JSONL: round trips, the spec's spelling, and one test per bad input."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from formats_strategies import FAST, item_lists
from hypothesis import HealthCheck, given, settings

from proctor.data.formats.dialects import Dialect
from proctor.data.formats.items import read_items, write_items
from proctor.data.records import Item
from proctor.util.errors import InputError

FIXTURES = Path(__file__).parents[2] / "fixtures" / "items"


def problems_of(path: Path) -> list[str]:
    with pytest.raises(InputError) as info:
        read_items(path)
    return [str(p) for p in info.value.problems]


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(item_lists)
def test_write_read_round_trip_and_idempotent(items: list[Item]) -> None:
    with tempfile.TemporaryDirectory() as d:
        first, second = Path(d, "a.jsonl"), Path(d, "b.jsonl")
        write_items(first, items)
        if not items:
            assert first.read_text() == ""
            return
        back = read_items(first)
        assert back == items
        write_items(second, back)
        assert second.read_bytes() == first.read_bytes()


def test_good_file_reads() -> None:
    items = read_items(FIXTURES / "good.jsonl")
    assert [it.identifier for it in items] == ["t.1", "t.2"]


def test_bom_and_crlf_are_accepted() -> None:
    assert read_items(FIXTURES / "bom_crlf.jsonl") == read_items(FIXTURES / "good.jsonl")


def test_code_spellings_are_read_and_spec_spelling_written(tmp_path: Path) -> None:
    items = read_items(FIXTURES / "code_spellings.jsonl")
    assert [it.modality.value for it in items] == [
        "single-value", "ternary", "boolean", "short-prose", "long-prose", "choiceof2"
    ]
    assert [it.response for it in items] == ["4", "I don't know", "True", "hi", "more", "A"]
    assert items[4].metadata == {"source": "x"}
    assert items[5].choices == {"A": "left", "B": "right"}
    out = tmp_path / "out.jsonl"
    write_items(out, items)  # as read: byte for byte
    assert out.read_bytes() == (FIXTURES / "code_spellings.jsonl").read_bytes()
    write_items(out, items, Dialect.SPEC)  # seed 000's spelling on request
    text = out.read_text()
    assert '"single-value"' in text and '"I don\'t know"' in text and '"response": "True"' in text
    assert "singlevalue" not in text and "Unknown" not in text and "otherargs" not in text


def test_malformed_json_line() -> None:
    [msg] = problems_of(FIXTURES / "malformed.jsonl")
    assert msg.startswith(f"{FIXTURES / 'malformed.jsonl'}:2: malformed JSON")


def test_missing_required_field() -> None:
    assert problems_of(FIXTURES / "missing_field.jsonl") == [
        f"{FIXTURES / 'missing_field.jsonl'}:2: prompt: required field is missing"
    ]


def test_unknown_modality() -> None:
    [msg] = problems_of(FIXTURES / "unknown_modality.jsonl")
    assert msg.startswith(f"{FIXTURES / 'unknown_modality.jsonl'}:2: modality: unknown modality 'multiple-guess'")


def test_identifiers_equal_but_for_case_name_both_lines() -> None:
    [msg] = problems_of(FIXTURES / "duplicate_case.jsonl")
    assert msg.startswith(f"{FIXTURES / 'duplicate_case.jsonl'}:3: identifier: 'geo.1' repeats 'Geo.1' from line 1")


def test_difficulty_out_of_range() -> None:
    assert problems_of(FIXTURES / "difficulty.jsonl") == [
        f"{FIXTURES / 'difficulty.jsonl'}:1: difficulty: Input should be less than or equal to 1"
    ]


def test_cloze_without_blank() -> None:
    assert problems_of(FIXTURES / "cloze_no_blank.jsonl") == [
        f"{FIXTURES / 'cloze_no_blank.jsonl'}:1: prompt: a cloze prompt must contain the blank '___'"
    ]


def test_answer_letter_outside_choices() -> None:
    [msg] = problems_of(FIXTURES / "letter_out_of_range.jsonl")
    assert msg == f"{FIXTURES / 'letter_out_of_range.jsonl'}:1: response: answer 'E' is not a choice letter of choiceof4 (A-D)"


def test_binary_file() -> None:
    assert problems_of(FIXTURES / "binary.jsonl") == [
        f"{FIXTURES / 'binary.jsonl'}: looks like a binary file, expected UTF-8 text"
    ]


def test_empty_file() -> None:
    assert problems_of(FIXTURES / "empty.jsonl") == [f"{FIXTURES / 'empty.jsonl'}: empty file"]


def test_every_problem_in_a_file_is_listed(tmp_path: Path) -> None:
    bad = tmp_path / "many.jsonl"
    bad.write_text(
        "".join((FIXTURES / name).read_text() for name in ("malformed.jsonl", "difficulty.jsonl", "cloze_no_blank.jsonl"))
        + "[1, 2]\n"
    )
    msgs = problems_of(bad)
    assert [m.split(": ")[0] for m in msgs] == [f"{bad}:2", f"{bad}:3", f"{bad}:4", f"{bad}:5"]
    assert "expected a JSON object" in msgs[-1]


def test_union_errors_point_inside_graded_response(tmp_path: Path) -> None:
    bad = tmp_path / "graded.jsonl"
    bad.write_text('{"identifier": "g", "modality": "short-prose", "prompt": "p",'
                   ' "response": [{"answer": "x", "credit": 1.5}]}\n')
    assert problems_of(bad) == [f"{bad}:1: response[0].credit: Input should be less than or equal to 1"]


def test_writer_refuses_duplicates_and_leaves_nothing(tmp_path: Path) -> None:
    it = read_items(FIXTURES / "good.jsonl")[0]
    out = tmp_path / "dup.jsonl"
    with pytest.raises(InputError, match="repeats"):
        write_items(out, [it, it.model_copy(update={"identifier": "T.1"})])
    assert list(tmp_path.iterdir()) == []


def test_a_json_array_of_items_is_read_like_json_lines(tmp_path: Path) -> None:
    from proctor.data.formats.detect import Format, detect_format, load_itemset

    rows = [json.loads(line) for line in (FIXTURES / "good.jsonl").read_text().splitlines()]
    path = tmp_path / "items.json"
    path.write_text(json.dumps(rows, indent=2))
    assert detect_format(path) is Format.ITEMS
    assert load_itemset(path).items == read_items(FIXTURES / "good.jsonl")
    out = tmp_path / "out.jsonl"
    write_items(out, read_items(path))  # written back as JSON Lines, one item per line
    assert [json.loads(x) for x in out.read_text().splitlines()] == rows


def test_written_items_get_the_usual_permissions(tmp_path: Path) -> None:
    import os

    old = os.umask(0o027)
    try:
        write_items(tmp_path / "a.jsonl", read_items(FIXTURES / "good.jsonl"))
    finally:
        os.umask(old)
    assert (tmp_path / "a.jsonl").stat().st_mode & 0o777 == 0o640
