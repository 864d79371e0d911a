"""#41 item 20: `--data-file FILE` reads a spec benchmark's evaluated split from that file (as built-ins take a
file), its other splits from beside it or the spec's own source; and a spec's `id` column may hold strings (ARC's
`Mercury_7175875`), carried whole through items, samples, shards and merge, compare's pairing and the exports."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.benchmarks import load_task
from proctor.cli import main
from proctor.data.formats.convert import item_to_question, question_to_item
from proctor.metrics.results import read_run
from proctor.util.errors import InputError

EXAMPLES = Path(__file__).parents[2] / "examples" / "benchmarks"
QUIET = ["--no-history", "--no-cache", "--no-progress"]


def _capitals(tmp_path: Path) -> Path:
    shutil.copy(EXAMPLES / "capitals.yaml", tmp_path / "capitals.yaml")
    shutil.copytree(EXAMPLES / "capitals", tmp_path / "capitals")
    return tmp_path / "capitals.yaml"


# ---------------------------------------------------------------- --data-file FILE


def test_a_data_file_is_the_evaluated_split_whatever_its_name(tmp_path: Path) -> None:
    spec = _capitals(tmp_path)
    rows = (tmp_path / "capitals" / "test.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "mine.jsonl").write_text("".join(rows[:3]))
    task = load_task(str(spec), data_file=tmp_path / "mine.jsonl")
    assert len(task.items) == 3  # the file's rows, not the spec's own test split
    assert task.source["data_file"] == str(tmp_path / "mine.jsonl")
    assert len(task.prompts.pool) == 5  # type: ignore[attr-defined]  # no dev file beside it: the spec's own


def test_a_data_files_other_splits_come_from_beside_it(tmp_path: Path) -> None:
    spec = _capitals(tmp_path)
    (tmp_path / "copy").mkdir()
    shutil.copy(tmp_path / "capitals" / "test.jsonl", tmp_path / "copy" / "test.jsonl")
    dev = (tmp_path / "capitals" / "dev.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "copy" / "dev.jsonl").write_text("".join(dev[:2]))
    task = load_task(str(spec), data_file=tmp_path / "copy" / "test.jsonl")
    assert len(task.items) == 8 and len(task.prompts.pool) == 2  # type: ignore[attr-defined]


def test_run_takes_a_data_file_for_a_spec(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _capitals(tmp_path)
    shutil.copy(tmp_path / "capitals" / "test.jsonl", tmp_path / "rows.jsonl")
    assert main(["run", str(spec), "--data-file", str(tmp_path / "rows.jsonl"), "--model", "scripted:first",
                 "-o", str(tmp_path / "run"), *QUIET]) == 0
    assert len(read_run(tmp_path / "run").samples) == 8


def test_a_missing_data_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = _capitals(tmp_path)
    assert main(["run", str(spec), "--data-file", str(tmp_path / "nope.jsonl"), "--model", "scripted:first",
                 "-o", str(tmp_path / "run"), *QUIET]) == 2
    err = capsys.readouterr().err
    assert "nope.jsonl" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


# ---------------------------------------------------------------- string ids

ARC_ROWS = [
    {"id": "Mercury_7175875", "question": "Which gas do plants take in?", "choices": ["oxygen", "carbon dioxide"],
     "answerKey": "B"},
    {"id": "NYSEDREGENTS_2015_4_8", "question": "Which is a mammal?", "choices": ["whale", "shark"], "answerKey": "A"},
    {"id": "7", "question": "Which is hot?", "choices": ["ice", "fire"], "answerKey": "B"},
    {"id": "Mercury_SC_400987", "question": "Which is a planet?", "choices": ["Mars", "Sirius"], "answerKey": "A"},
]
ARC_SPEC = """name: tiny-arc
source:
  split: test
  files: {test: rows.jsonl}
fields:
  id: id
  question: "{question}"
  choices: {list: choices}
  answer: {column: answerKey, as: letter}
prompts:
  zero_shot: "[{id}] Question: {question}\\nAnswer:"
scoring:
  mode: loglikelihood
"""


def _arc(tmp_path: Path, rows: list[dict[str, object]] = ARC_ROWS) -> Path:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "arc.yaml").write_text(ARC_SPEC)
    return tmp_path / "arc.yaml"


def test_string_ids_are_the_items_identifiers(tmp_path: Path) -> None:
    task = load_task(str(_arc(tmp_path)))
    assert [it.identifier for it in task.items] == ["tiny-arc.Mercury_7175875", "tiny-arc.NYSEDREGENTS_2015_4_8",
                                                    "tiny-arc.7", "tiny-arc.Mercury_SC_400987"]
    assert task.prompts.messages(task.items[0], "zero_shot")[-1].content.startswith("[Mercury_7175875] ")
    question = item_to_question(task.items[0], 0)  # and back, the id whole
    assert question.id == "Mercury_7175875" and question_to_item(question, "tiny-arc") == task.items[0]
    assert task.items[2].metadata["question.id"] == 7  # an integer id stays an integer (ids and hashes unchanged)


@pytest.mark.parametrize("second,why", [
    ("mercury_7175875", "repeated"),  # identifiers are matched case-insensitively (CommonEval)
    ("Mercury 7175875", "letters, digits"),  # not web-friendly
    ("", "empty"),
])
def test_a_string_id_that_cannot_identify_is_one_line(second: str, why: str, tmp_path: Path) -> None:
    rows = [ARC_ROWS[0], {**ARC_ROWS[1], "id": second}]
    with pytest.raises(InputError, match=rf"rows\.jsonl:2: .*{why}"):
        load_task(str(_arc(tmp_path, rows)))


def test_string_ids_through_samples_shards_merge_compare_and_exports(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    spec = str(_arc(tmp_path))
    run = ["run", spec, "--model", "scripted:random", *QUIET]
    for k in (1, 2):
        assert main([*run, "--shard", f"{k}/2", "-o", str(tmp_path / f"s{k}")]) == 0
    assert main(["merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "--out", str(tmp_path / "merged")]) == 0
    assert main([*run, "-o", str(tmp_path / "whole")]) == 0
    merged, whole = read_run(tmp_path / "merged"), read_run(tmp_path / "whole")
    wanted = {"tiny-arc.Mercury_7175875", "tiny-arc.NYSEDREGENTS_2015_4_8", "tiny-arc.7", "tiny-arc.Mercury_SC_400987"}
    assert {s.item_id for s in merged.samples} == {s.item_id for s in whole.samples} == wanted
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "merged"), str(tmp_path / "whole"), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["overall"]["n"] == 4 and record["only_in_a"] == record["only_in_b"] == []  # paired on all four
    assert main(["agree", str(tmp_path / "merged"), str(tmp_path / "whole"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_paired"] == 4
    for fmt in ("llmwc", "inspect", "eee"):
        assert main(["export", str(tmp_path / "whole"), "--to", fmt, "-o", str(tmp_path / fmt)]) == 0, fmt
        text = "".join(p.read_text(errors="replace") for p in (tmp_path / fmt).rglob("*") if p.is_file())
        assert "Mercury_7175875" in text, fmt
