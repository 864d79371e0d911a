"""Format detection and loading any item-bearing path."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.data.formats.detect import Format, detect_format, load_itemset, validate_path
from proctor.util.errors import InputError

EXAMPLES = Path(__file__).parents[3] / "examples"


@pytest.mark.parametrize(
    ("path", "fmt", "n"),
    [
        ("items/demo.jsonl", Format.ITEMS, 24),
        ("commoneval", Format.COMMONEVAL, 12),
        ("commoneval/demo.yaml", Format.COMMONEVAL, 12),
        ("questions/demo.json", Format.QUESTIONS, 8),
    ],
)
def test_examples_detect_and_load(path: str, fmt: Format, n: int) -> None:
    assert detect_format(EXAMPLES / path) is fmt
    assert len(load_itemset(EXAMPLES / path).items) == n


def test_question_dataset_becomes_items_with_prompts_kept() -> None:
    itemset = load_itemset(EXAMPLES / "questions" / "demo.json")
    assert itemset.metadata["prompts"].keys() == {"zero_shot", "chain_of_thought"}
    assert [it.modality.value for it in itemset.items][:6] == ["choiceof4"] * 2 + ["choiceof4", "choiceof5"] + [
        "single-value"] * 2
    assert itemset.items[6].modality.value == "choiceof8"


def test_unrecognised_inputs(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text('{"hello": 1}')
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(InputError, match="unrecognised JSON"):
        detect_format(tmp_path / "x.json")
    with pytest.raises(InputError, match="unknown format"):
        detect_format(tmp_path / "x.csv")
    with pytest.raises(InputError, match="no such file"):
        detect_format(tmp_path / "missing.jsonl")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="not a CommonEval dataset"):
        detect_format(empty)


def test_dir_without_its_yaml(tmp_path: Path) -> None:
    (tmp_path / "demo_000.jsonl").write_text((EXAMPLES / "commoneval" / "demo_000.jsonl").read_text())
    with pytest.raises(InputError) as info:
        validate_path(tmp_path)
    assert str(info.value).startswith(f"{tmp_path}: a directory of .jsonl files but no <id>.yaml: to run CommonEval item "
                                      f"files, name the files ({tmp_path}/")


def test_question_without_item_form_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "q.json"
    bad.write_text('{"name": "n", "prompts": {}, "questions": [{"id": 1, "original_id": "1", "question": "q",'
                   ' "choices": {"X": "x", "Y": "y"}, "answer": "X"}]}')
    with pytest.raises(InputError, match=r"questions\[0\].choices: choice keys XY do not match choiceof2"):
        validate_path(bad)
