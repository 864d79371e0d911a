"""`--to eee`: the aggregate and samples files pass Every Eval Ever's own validator, with no warning."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.interop.export_common import overall_accuracy
from proctor.interop.exporters import export
from proctor.metrics.results import read_run

pytest.importorskip("every_eval_ever")
from every_eval_ever.validator.validate import main as eee_validate


def _validate(out: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    """EEE's `validate` over the exported datastore layout (its full checks: schema, paths, companions)."""
    capsys.readouterr()
    code = eee_validate(["--format", "json", f"{out}/data/*/*/*/*.json*"])
    reports: list[dict[str, object]] = json.loads(capsys.readouterr().out)
    assert code == 0, reports
    assert reports and all(r["valid"] and not r["warnings"] for r in reports), reports
    return reports


def test_a_scripted_run_validates_and_keeps_accuracy_and_samples(scripted_run: Path, tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "eee"
    written = export([scripted_run], "eee", out)
    assert len(_validate(out, capsys)) == 2 == len(written)
    aggregate, samples = sorted(written, key=lambda p: p.suffix)
    assert aggregate.parent.relative_to(out).parts == ("data", "multiple-choice", "scripted", "random,seed=3")
    log = read_run(scripted_run)
    record = json.loads(aggregate.read_text())
    (result,) = record["evaluation_results"]
    overall = overall_accuracy(log)  # results.json's, read through the exporters' one helper
    assert result["score_details"]["score"] == pytest.approx(sum(s.score or 0 for s in log.samples) / 16)
    ci = result["score_details"]["uncertainty"]["confidence_interval"]
    assert (ci["lower"], ci["upper"]) == pytest.approx((overall.ci_low, overall.ci_high))
    assert ci["lower"] < result["score_details"]["score"] < ci["upper"]
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert record["detailed_evaluation_results"]["total_rows"] == len(rows) == 16
    assert {r["sample_id"]: r["evaluation"]["score"] for r in rows} == {s.sample_id: s.score for s in log.samples}


def test_only_scored_samples_become_instance_rows(mixed_run: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """An error or an unscored sample has no score: it is counted in the aggregate, never a row scored 0."""
    out = tmp_path / "eee"
    written = export([mixed_run], "eee", out)
    _validate(out, capsys)
    aggregate, samples = sorted(written, key=lambda p: p.suffix)
    assert aggregate.parent.relative_to(out).parts == ("data", "mixed", "Qwen", "Qwen3-8B")
    record = json.loads(aggregate.read_text())
    assert record["model_info"]["id"] == "Qwen/Qwen3-8B"
    assert record["model_info"]["additional_details"]["deployment_type"] == "self_deployed"
    details = record["evaluation_results"][0]["score_details"]["details"]
    assert details == {"n_samples": "8", "n_scored": "6", "n_errors": "1", "n_unscored": "1"}
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    assert sorted(r["sample_id"] for r in rows) == [f"mix.{i}#0" for i in (0, 1, 2, 3, 6, 7)]
    assert record["evaluation_results"][0]["score_details"]["score"] == pytest.approx(
        sum(r["evaluation"]["score"] for r in rows) / 6)
    first = next(r for r in rows if r["sample_id"] == "mix.0#0")
    assert first["input"] == {"raw": "Q0?", "formatted": "system: Answer with a letter.\n\nuser: Q0?", "reference": ["B"]}
    assert first["output"]["reasoning_trace"] == ["Let me think."]


def test_the_same_run_exports_to_the_same_file_names(mixed_run: Path, tmp_path: Path) -> None:
    first = export([mixed_run], "eee", tmp_path / "a")
    again = export([mixed_run], "eee", tmp_path / "b")
    assert [p.relative_to(tmp_path / "a") for p in first] == [p.relative_to(tmp_path / "b") for p in again]


def test_the_exporter_redacts_a_hand_edited_command_again(mixed_run: Path, tmp_path: Path) -> None:
    """Issue 32 #10: a secret put into manifest.json's command by hand never reaches the export."""
    manifest = json.loads((mixed_run / "manifest.json").read_text())
    manifest["command"] = ["proctor", "run", "--base-url", "http://h/v1?apiToken=EEESECRET77"]
    (mixed_run / "manifest.json").write_text(json.dumps(manifest))
    written = export([mixed_run], "eee", tmp_path / "eee")
    assert written and all(b"EEESECRET77" not in p.read_bytes() for p in (tmp_path / "eee").rglob("*") if p.is_file())
