"""`proctor validate`, `proctor stats`, `proctor convert`: exit codes, messages, atomic output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import proctor
from proctor.cli import main
from proctor.data.formats.commoneval import read_commoneval
from proctor.data.formats.items import read_items
from proctor.data.formats.questions import read_questions

ROOT = Path(__file__).parents[2]
EXAMPLES = ROOT / "examples"
FIXTURES = ROOT / "tests" / "fixtures" / "items"


def run(capsys: pytest.CaptureFixture[str], *argv: str | Path) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_validate_clean_files_print_ok(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", EXAMPLES / "items" / "demo.jsonl", EXAMPLES / "commoneval",
                         EXAMPLES / "questions" / "demo.json")
    assert code == 0 and err == ""
    assert out.splitlines() == [
        f"OK {EXAMPLES / 'items' / 'demo.jsonl'}: items, 24 items",
        f"OK {EXAMPLES / 'commoneval'}: commoneval, 12 items",
        f"OK {EXAMPLES / 'questions' / 'demo.json'}: questions, 8 questions, 4 categories",
    ]


def test_validate_lists_every_problem_of_every_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "validate", FIXTURES / "good.jsonl", FIXTURES / "difficulty.jsonl",
                         FIXTURES / "duplicate_case.jsonl", FIXTURES / "binary.jsonl")
    assert code == 2
    assert out == f"OK {FIXTURES / 'good.jsonl'}: items, 2 items\n"
    lines = err.splitlines()
    assert lines[0] == f"error: {FIXTURES / 'difficulty.jsonl'}:1: difficulty: Input should be less than or equal to 1"
    assert lines[1].startswith(
        f"error: {FIXTURES / 'duplicate_case.jsonl'}:3: identifier: 'geo.1' repeats 'Geo.1' from line 1")
    assert lines[2] == f"error: {FIXTURES / 'binary.jsonl'}: looks like a binary file, expected UTF-8 text"
    assert lines[3] == "error: 3 problem(s) found in 3 file(s)"


def test_validate_bom_crlf_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", FIXTURES / "bom_crlf.jsonl")[0] == 0


def test_stats_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "stats", EXAMPLES / "items" / "demo.jsonl")
    assert code == 0
    assert out.startswith("demo: 24 items\ncategories:\n")
    assert "under-represented: language (2 items, 8.3% vs 25.0% uniform)" in out
    code, out, _ = run(capsys, "stats", EXAMPLES / "commoneval", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["dataset"] == "proctor demo items" and doc["total"] == 12
    assert set(doc) == {"dataset", "total", "categories", "subcategories", "modalities", "difficulty", "flags",
                        "few_options"}


def test_stats_unknown_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "stats", tmp_path / "nope.jsonl")
    assert code == 2 and out == "" and "nope.jsonl" in err and "Traceback" not in err


@pytest.mark.parametrize("target", ["items", "questions", "commoneval"])
def test_convert_round_trips_through_every_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str
) -> None:
    src = EXAMPLES / "questions" / "demo.json"
    out = tmp_path / {"items": "out.jsonl", "questions": "out.json", "commoneval": "out"}[target]
    assert run(capsys, "convert", src, "--to", target, "-o", out)[0] == 0
    back = tmp_path / "back.json"
    assert run(capsys, "convert", out, "--to", "questions", "-o", back)[0] == 0
    if target == "items":  # plain JSONL has no dataset-level name, description or prompts
        assert read_questions(back).questions == read_questions(src).questions
    elif target == "commoneval":  # the Dataset spec's required attributes were filled in on the way
        before, after = read_questions(src), read_questions(back)
        assert after.model_dump(exclude={"metadata"}) == before.model_dump(exclude={"metadata"})
        assert after.metadata.items() >= before.metadata.items()
        assert {"created", "creator", "source", "subject"} <= set(after.metadata)
    else:
        assert read_questions(back) == read_questions(src)


def test_convert_commoneval_shards_and_task_prompt_flattening(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert run(capsys, "convert", EXAMPLES / "items" / "demo.jsonl", "--to", "commoneval", "-o", tmp_path / "ce",
               "--shard-size", "10")[0] == 0
    assert sorted(p.name for p in (tmp_path / "ce").iterdir()) == [
        "demo.yaml", "demo_000.jsonl", "demo_001.jsonl", "demo_002.jsonl"]
    assert read_commoneval(tmp_path / "ce").items == read_items(EXAMPLES / "items" / "demo.jsonl")
    assert run(capsys, "convert", EXAMPLES / "commoneval", "--to", "items", "-o", tmp_path / "i.jsonl")[0] == 0
    ce = read_commoneval(EXAMPLES / "commoneval")
    assert all(it.task_prompt == ce.task_prompt for it in read_items(tmp_path / "i.jsonl"))


@pytest.mark.parametrize("target", ["items", "questions", "commoneval"])
def test_failed_convert_leaves_no_output(capsys: pytest.CaptureFixture[str], tmp_path: Path, target: str) -> None:
    out = tmp_path / "out"
    code, _, err = run(capsys, "convert", FIXTURES / "letter_out_of_range.jsonl", "--to", target, "-o", out)
    assert code == 2 and "response: answer 'E'" in err
    assert list(tmp_path.iterdir()) == []


def test_convert_unscored_to_questions_refused_without_output(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    items = tmp_path / "u.jsonl"
    items.write_text('{"identifier": "u", "modality": "choiceof2", "prompt": "p", "response": "<unscored>"}\n')
    code, _, err = run(capsys, "convert", items, "--to", "questions", "-o", tmp_path / "q.json")
    assert code == 2 and "unscored items have no answer" in err
    assert not (tmp_path / "q.json").exists()


def test_subprocess_bad_input_exits_2_without_traceback() -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(proctor.__file__).parents[1])}
    proc = subprocess.run([sys.executable, "-m", "proctor", "validate", str(FIXTURES / "malformed.jsonl")],
                          capture_output=True, text=True, env=env, check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: {FIXTURES / 'malformed.jsonl'}:2: malformed JSON")
    assert "Traceback" not in proc.stderr


def test_convert_and_stats_read_a_builtin_from_its_data_file(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    """--data-file and --seed (one record, `BenchmarkData`) reach the benchmark's loader in both commands."""
    data = EXAMPLES / "upstream" / "mmlu_pro"
    code, out, _ = run(capsys, "convert", "mmlu-pro", "--data-file", data, "--seed", "3", "--to", "items",
                       "-o", tmp_path / "mmlu.jsonl")
    assert code == 0 and out.startswith(f"wrote {tmp_path / 'mmlu.jsonl'}: ")
    n = len(read_items(tmp_path / "mmlu.jsonl"))
    assert n > 0 and out.split(": ")[1].startswith(f"{n} items as items")
    code, out, _ = run(capsys, "stats", "mmlu-pro", "--data-file", data, "--json")
    assert code == 0 and json.loads(out)["total"] == n
