"""bench/rescore_published.py on synthetic files in the exact schema of TIGER-Lab's published outputs:
every era's row shape, stray entries, replay keyed by question_id, and bad inputs as one line, exit 2."""

from __future__ import annotations

import importlib.util
import json
import sys
import zipfile
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).parents[2] / "bench" / "rescore_published.py"


@pytest.fixture(scope="module")
def rescore() -> ModuleType:
    spec = importlib.util.spec_from_file_location("rescore_published", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["rescore_published"] = module
    spec.loader.exec_module(module)
    return module


def _row(qid: int, reply: str, pred: str | None, answer_index: int = 1, text_key: str = "model_outputs",
         options: Any = None) -> dict[str, Any]:
    """One row as the scripts save it (the test row plus `pred` and the reply)."""
    opts = options if options is not None else ["w", "x", "y", "z"]
    return {"question_id": qid, "question": "Same text?", "options": opts, "answer": "ABCD"[answer_index],
            "answer_index": answer_index, "cot_content": "", "category": "math", "src": "synthetic",
            "pred": pred, text_key: reply}


def _zip(path: Path, entries: list[Any]) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(path.stem + ".json", json.dumps(entries))
    return path


def test_every_era_is_replayed_by_question_id(rescore: ModuleType, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    entries = [
        _row(1, "so the answer is (B).", "B"),  # level 1, right
        _row(2, "Answer: C", None, text_key="generated_text"),  # level 2; an older script recorded None
        _row(3, "nothing to read", "B"),  # unread; a lucky random letter was written into `pred`
        _row(4, "no idea", None, options=repr(["w", "x", "y", "z"])),  # unread (1/4), options as Python repr
        _row(5, "I think it is x", "I"),  # level 3 reads the pronoun I
        _row(4, "the answer is (B)", "B"),  # the same question_id again: counted, the first kept
        "stray status line",  # a non-row entry: skipped and counted
    ]
    path = _zip(tmp_path / "model_outputs_Synthetic-7B_5shots.zip", entries)
    out = tmp_path / "figures.json"
    assert rescore.entry([str(path), "--json", str(out)]) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert (row["n"], row["stray"], row["duplicates"]) == (5, 1, 1)
    assert row["eq_levels"] == 1.0 and row["eq_pred"] == 3 / 5  # rows 2 and 3 were recorded otherwise
    assert (row["random_pred"], row["unread_pred"]) == (1, 1)
    assert row["by_level"] == {"1": 1, "2": 1, "3": 1, "none": 2}
    expected = 100 * (1 + 0 + 1 / 4 + 1 / 4 + 0) / 5  # row 2 reads C, row 5 reads I: the answer is B
    assert abs(row["accuracy_authors"] - expected) < 1e-9 and abs(row["accuracy_proctor"] - expected) < 1e-9
    assert abs(row["accuracy_recorded"] - 100 * (1 + 1 / 4 + 1 + 1 / 4 + 0) / 5) < 1e-9  # a recorded None: 1/k
    table = capsys.readouterr().out
    assert "| Synthetic-7B | 5 (1 stray entries skipped) |" in table and "1 random letters recorded" in table


def test_upstream_chain_in_the_script_reads_as_proctor(rescore: ModuleType) -> None:
    for text, levels in (("the answer is (J)", ("J", None, None)), ("x\nfoo Answer: E bar answer: F", (None, "F", None)),
                         ("A then B", (None, None, "B")), ("none", (None, None, None))):
        assert rescore.upstream_levels(text) == levels


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("cut.zip", None, "not a readable zip archive"),
        ("strings.json", json.dumps(["a", "b"]).encode(), "no row with question_id and text among 2 entries"),
        ("object.json", b'{"rows": []}', "expected a JSON list of rows"),
        ("broken.json", b'[{"question_id": 1,\n', "broken.json:2: not JSON"),
    ],
)
def test_bad_inputs_are_one_line_exit_2(rescore: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        name: str, content: bytes | None, message: str) -> None:
    path = tmp_path / name
    if content is None:  # a zip cut short
        whole = _zip(tmp_path / "whole.zip", [_row(1, "the answer is (B)", "B")]).read_bytes()
        path.write_bytes(whole[: len(whole) // 2])
    else:
        path.write_bytes(content)
    assert rescore.entry([str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err and "Traceback" not in err
