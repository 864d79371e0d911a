"""`--to probsem`: from the run log alone, exactly the files `proctor score` wrote (CSV, JSONL, summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.interop.exporters import export
from proctor.util.errors import InputError

SUMMARY_KEYS = ("n_contexts", "n_scored", "n_unscored", "n_errors", "n_correct", "n_ties", "accuracy", "ci_low",
                "ci_high", "ci_method", "brier", "ece", "log_loss")
SUITES = Path(__file__).resolve().parents[2] / "fixtures" / "suites"


def test_export_rebuilds_what_score_wrote(tmp_path: Path) -> None:
    scored = tmp_path / "scored"
    assert main(["score", str(SUITES), "--model", "scripted:random,seed=2", "-o", str(scored), "--no-progress",
                 "--no-history", "--store", str(tmp_path / "s.sqlite")]) == 0
    (run_dir,) = (p for p in scored.iterdir() if p.is_dir())
    written = export([run_dir], "probsem", tmp_path / "out")
    results = sorted(p.name for p in written if p.name.endswith(("_results.csv", "_results.jsonl")))
    assert results == sorted(p.name for p in scored.iterdir() if p.is_file()) and len(results) == 4
    for name in results:
        assert (tmp_path / "out" / name).read_bytes() == (scored / name).read_bytes()
    summary = json.loads((tmp_path / "out" / "random,seed=2_summary.json").read_text())
    assert summary == json.loads((run_dir / "summary.json").read_text())
    # the summary's entries keep their flat keys, though the numbers come from results.json's own blocks
    assert list(summary["overall"]) == list(SUMMARY_KEYS) and all(list(v) == list(SUMMARY_KEYS)
                                                                 for v in summary["suites"].values())
    assert summary["overall"]["n_contexts"] == sum(v["n_contexts"] for v in summary["suites"].values())


def test_a_run_that_scored_no_suites_is_refused(mixed_run: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a suite run"):
        export([mixed_run], "probsem", tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("key", "value"), [("norm", "bogus"), ("expected", 99), ("expected", -2), ("index", -5),
                                            ("ties", -1), ("temperature", -1.0), ("tie_indexes", [99])])
def test_a_hand_edited_suite_sample_is_refused_at_its_line(tmp_path: Path, key: str, value: object) -> None:
    """Issue 32 #14: `norm: "bogus"` (ValueError) and `expected: 99` (IndexError) were tracebacks."""
    scored = tmp_path / "scored"
    assert main(["score", str(SUITES), "--model", "scripted:random,seed=2", "-o", str(scored), "--no-progress",
                 "--no-history"]) == 0
    (run_dir,) = (p for p in scored.iterdir() if p.is_dir())
    samples = run_dir / "samples.jsonl"
    lines = samples.read_text().splitlines()
    record = json.loads(lines[0])
    record["details"][key] = value
    lines[0] = json.dumps(record)
    samples.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=rf"samples.jsonl:1: bad sample: details.suite.{key}") as caught:
        export([run_dir], "probsem", tmp_path / "out")
    assert "\n" not in str(caught.value) and not (tmp_path / "out").exists()
