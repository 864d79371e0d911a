"""`--to llmwc`: llm-wc's results directory from proctor runs, the upstream rows read again from the data file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.interop.exporters import export
from proctor.util.errors import InputError

UPSTREAM = Path(__file__).resolve().parents[2] / "fixtures" / "upstream"
MMLU_PRO = UPSTREAM / "mmlu_pro" / "test-00000-of-00001.parquet"


def _mmlu_run(tmp_path: Path, name: str, model: str) -> Path:
    out = tmp_path / name
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model, "--limit", "4", "-o", str(out),
                 "--no-progress", "--no-history", "--store", str(tmp_path / "s.sqlite")]) == 0
    return out


def test_a_plain_run_writes_only_proctors_log_and_export_writes_llmwc(tmp_path: Path) -> None:
    run = _mmlu_run(tmp_path, "run", "scripted:first")
    assert {p.name for p in run.iterdir()} <= {"manifest.json", "samples.jsonl", "prompts.jsonl", "results.json",
                                               "checksums.json", ".lock"}
    out = tmp_path / "llmwc"
    export([run], "llmwc", out)
    run_json = json.loads((out / "run.json").read_text())
    assert run_json["benchmark"]["name"] == "mmlu-pro" and run_json["models"][0]["api_key"] is None
    (model_dir,) = (out / "models").iterdir()
    summary = json.loads((model_dir / "summary.json").read_text())
    rows = json.loads((model_dir / "results.json").read_text())
    results = json.loads((run / "results.json").read_text())
    assert summary["accuracy"] == results["overall"]["accuracy"] and summary["dataset_path"] == str(MMLU_PRO.resolve())
    assert summary["correct"] + summary["incorrect"] + summary["errors"] + summary["unscored"] == summary["total"] == 4
    assert len(rows) == 4 and all("pred" in r and "model_outputs" in r for r in rows)
    assert all(r["question_id"] is not None and isinstance(r["options"], list) for r in rows)  # the upstream rows


def test_models_get_distinct_directories_that_never_climb(tmp_path: Path) -> None:
    """`..` and two names with one llm-wc form (`a b`, `a_b`) each get their own directory inside models/."""
    runs = [_mmlu_run(tmp_path, n, "scripted:first") for n in ("r1", "r2", "r3")]
    for run, name in zip(runs, ("..", "a b", "a_b"), strict=True):
        manifest = json.loads((run / "manifest.json").read_text())
        manifest["model"]["model"] = name
        manifest["run_id"] += f"-{run.name}"  # three runs (one run given three times is refused)
        (run / "manifest.json").write_text(json.dumps(manifest))
    out = tmp_path / "llmwc"
    export(runs, "llmwc", out)
    dirs = sorted(p.name for p in (out / "models").iterdir())
    assert len(dirs) == 3 and "a_b" in dirs and not any(d.startswith(".") for d in dirs)
    assert {json.loads((out / "models" / d / "summary.json").read_text())["model"] for d in dirs} == {"..", "a b", "a_b"}
    assert sorted(p.name for p in out.iterdir()) == ["models", "run.json"]


def test_runs_of_two_benchmarks_are_refused(tmp_path: Path, mixed_run: Path) -> None:
    run = _mmlu_run(tmp_path, "run", "scripted:first")
    with pytest.raises(InputError, match="holds one benchmark"):
        export([run, mixed_run], "llmwc", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_proctors_llmwc_reader_reads_the_export_back_item_by_item(tmp_path: Path) -> None:
    """`proctor import` (llm-wc's files validated by pydantic models of them) gives back each item's outcome."""
    from proctor.metrics.results import read_run

    run = _mmlu_run(tmp_path, "run", "scripted:random")
    export([run], "llmwc", tmp_path / "llmwc")
    assert main(["import", str(tmp_path / "llmwc"), "--store", str(tmp_path / "s.sqlite"),
                 "--runs-root", str(tmp_path / "imported")]) == 0
    (back_dir,) = (tmp_path / "imported" / "imported").iterdir()
    ours, back = read_run(run), read_run(back_dir)
    assert {s.item_id: s.outcome for s in back.samples} == {s.item_id: s.outcome for s in ours.samples}
    assert {s.item_id: s.extracted for s in back.samples} == {s.item_id: s.extracted for s in ours.samples}


def test_two_runs_of_one_model_name_are_refused_not_overwritten(tmp_path: Path) -> None:
    """Issue 32 #6: llm-wc keys a model by its name: two runs of `first` would share models/first/ (the last one
    kept); refused, naming both runs."""
    a = _mmlu_run(tmp_path, "a", "scripted:first")
    b = tmp_path / "b"
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", "scripted:first", "--limit", "4",
                 "--temperature", "0.5", "-o", str(b), "--no-progress", "--no-history"]) == 0
    with pytest.raises(InputError, match="same model name") as caught:
        export([a, b], "llmwc", tmp_path / "out")
    assert str(a) in str(caught.value) and str(b) in str(caught.value)
    assert not (tmp_path / "out").exists()
