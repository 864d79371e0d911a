"""Local data files in their authors' own layouts: JSON arrays, MathArena's competition directory."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from proctor.benchmarks.hub import read_rows
from proctor.benchmarks.registry import load_task
from proctor.util.errors import InputError

UPSTREAM = Path(__file__).parents[1] / "fixtures" / "upstream"


def _rows(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_mmlu_pro_json_array_dump_is_read_like_the_parquet(tmp_path: Path) -> None:
    """TIGER-Lab's JSON-array dump of the validation split was refused line by line."""
    for split in ("test", "validation"):
        rows = pq.read_table(UPSTREAM / "mmlu_pro" / f"{split}-00000-of-00001.parquet").to_pylist()
        (tmp_path / f"{split}.json").write_text(json.dumps(rows, indent=4))
    from_json = load_task("mmlu-pro", data_file=tmp_path / "test.json")
    from_parquet = load_task("mmlu-pro", data_file=UPSTREAM / "mmlu_pro" / "test-00000-of-00001.parquet")
    assert from_json.items == from_parquet.items and len(from_json.items) > 0


def test_json_array_rows_carry_their_lines_and_errors_name_them(tmp_path: Path) -> None:
    path = tmp_path / "rows.json"
    path.write_text('[\n  {"a": 1},\n  {"a": 2},\n  3\n]\n')
    with pytest.raises(InputError) as info:
        read_rows(path)
    assert str(info.value) == f"{path}:4: expected a JSON object per row"
    path.write_text('[\n  {"a": 1},\n  {"a": 2}\n')
    with pytest.raises(InputError, match=r"rows.json:4: malformed JSON array: missing the closing"):
        read_rows(path)
    path.write_text('[{"a": 1}, {"a": 2}]')
    assert read_rows(path) == ([{"a": 1}, {"a": 2}], [1, 1])


def _matharena_dir(root: Path) -> Path:
    rows = _rows(UPSTREAM / "aime_2025" / "train.jsonl")
    (root / "problems").mkdir(parents=True)
    lines = ["id,answer"]
    types = ["id,type"]
    for row in reversed(rows):  # order on disk does not matter: rows come sorted by id
        lines.append(f"{row['problem_idx']},{row['answer']}")
        cell = json.dumps(row["problem_type"]).replace('"', '""')  # MathArena's cell: a quoted JSON list
        types.append(f'{row["problem_idx"]},"{cell}"')
        (root / "problems" / f"{row['problem_idx']}.tex").write_text(str(row["problem"]))
    (root / "answers.csv").write_text("\n".join(lines) + "\n")
    (root / "problem_types.csv").write_text("\n".join(types) + "\n")
    return root


def test_matharena_directory_is_an_aime_data_file(tmp_path: Path) -> None:
    d = _matharena_dir(tmp_path / "aime_2025")
    from_dir = load_task("aime-2025", data_file=d)
    from_jsonl = load_task("aime-2025", data_file=UPSTREAM / "aime_2025" / "train.jsonl")
    assert from_dir.items == from_jsonl.items and len(from_dir.items) == 30
    assert from_dir.source["data_file_sha256"].startswith("sha256:")


def test_matharena_directory_missing_problem_names_the_answers_line(tmp_path: Path) -> None:
    d = _matharena_dir(tmp_path / "aime_2025")
    (d / "problems" / "7.tex").unlink()
    with pytest.raises(InputError) as info:
        load_task("aime-2025", data_file=d)
    line = (d / "answers.csv").read_text().splitlines().index("7," + str(_rows(
        UPSTREAM / "aime_2025" / "train.jsonl")[6]["answer"])) + 1
    assert str(info.value) == f"{d}/answers.csv:{line}: problems/7.tex: no such file (image-only problems are not supported)"
