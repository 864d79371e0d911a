"""Run directories written by proctor 0.1: samples still load (details typed by their keys); a results.json
without schema_version is refused with one clear message (exit 2), never a traceback."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import proctor
from proctor.cli import main
from proctor.log.runlog import ChoiceDetails, GenerationDetails, Sample, SuiteDetails
from proctor.util.errors import InputError


def test_old_sample_details_are_recognised() -> None:
    suite = Sample.model_validate({"sample_id": "a#0", "item_id": "a", "outcome": "correct",
                                   "details": {"queries": ["x", "y"], "expected": 0, "distribution": [0.6, 0.4]}})
    choice = Sample.model_validate({"sample_id": "b#0", "item_id": "b", "outcome": "wrong",
                                    "details": {"gold": "A", "logprobs": {"A": -1.0}, "acc_norm_correct": True}})
    gen = Sample.model_validate({"sample_id": "c#0", "item_id": "c", "outcome": "wrong", "details": {"accepted": ["B"]}})
    assert isinstance(suite.details, SuiteDetails) and suite.details["distribution"] == [0.6, 0.4]
    assert isinstance(choice.details, ChoiceDetails) and "acc_norm_correct" in choice.details
    assert isinstance(gen.details, GenerationDetails) and "judge_check" not in gen.details
    assert json.loads(suite.model_dump_json())["details"]["kind"] == "suite"


def test_results_from_proctor_0_1_ask_for_a_rerun(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "old"
    run.mkdir()
    (run / "manifest.json").write_text(json.dumps({
        "run_id": "abc", "proctor_version": "0.1.0", "dataset": {"name": "d"}, "model": {"spec": "scripted:first"},
        "mode": "generate", "started_at": "2025-01-01T00:00:00+00:00"}))
    (run / "samples.jsonl").write_text(json.dumps({"sample_id": "a#0", "item_id": "a", "outcome": "correct",
                                                   "score": 1.0, "details": {}}) + "\n")
    (run / "results.json").write_text(json.dumps({"overall": {"n": 1, "accuracy": 1.0}}))
    with pytest.raises(InputError, match="written by proctor 0.1; re-run"):
        proctor.read_run(run)
    assert main(["report", str(run), "-o", str(tmp_path / "r.html")]) == 2
    assert "written by proctor 0.1; re-run" in capsys.readouterr().err
