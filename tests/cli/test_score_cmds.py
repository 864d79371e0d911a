"""`proctor score` end to end on the seed's Wikipedia example with a tiny local model."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from score_out import the_run_dir  # tests/ is on sys.path (tests/conftest.py's directory)

import proctor
from proctor.cli import main
from proctor.data.formats.suites import results_stem
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.run.store import Store

FIXTURES = Path(__file__).parent.parent / "fixtures" / "suites"


def test_seed_example_subprocess_writes_both_outputs(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": str(Path(proctor.__file__).parent.parent), "COLUMNS": "200", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "proctor", "score", str(FIXTURES / "test.txt"), str(FIXTURES / "test_A.json"),
         str(FIXTURES / "test_B.json"), "--model", f"hf:{tiny_model_dir}", "-o", str(out),
         "--store", str(tmp_path / "store.sqlite")],
        check=False, capture_output=True, text=True, env=env, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "test_A" in proc.stdout and "accuracy" in proc.stdout
    for suite, n_rows in (("A", 4), ("B", 4)):
        stem = results_stem("test", suite, f"hf:{tiny_model_dir}")  # probsem's naming: prompt, suite, model
        rows = list(csv.DictReader((out / f"{stem}.csv").open()))
        assert len(rows) == n_rows and set(rows[0]) == {"text", "query", "logp", "score"}
        lines = [json.loads(x) for x in (out / f"{stem}.jsonl").read_text().splitlines()]
        assert all(set(q["norms"]) == {"sum", "token", "char", "byte", "pmi"} for r in lines for q in r["queries"])
    run_dir = the_run_dir(out)  # the run log: a run directory of its own inside -o
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["suites"]["test_A"]["n_scored"] == 2
    assert summary["suites"]["test_B"]["n_unscored"] == 1 and summary["suites"]["test_B"]["accuracy"] is None
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["model"]["spec"] == f"hf:{tiny_model_dir}" and manifest["scorer"]["norm"] == "sum"
    inputs = manifest["dataset"]["sha256"]
    assert len(inputs) == 3 and all(h.startswith("sha256:") and len(h) == 71 for h in inputs.values())
    # the proctor run log: readable without a model, with calibration, the -1 context unscored
    log = read_run(run_dir)
    assert log.manifest.mode == "logprob" and log.manifest.dataset.name == "test"
    assert log.manifest.dataset.n_items == 3 and log.manifest.dataset.content_hash.startswith("sha256:")
    assert log.manifest.finished_at is not None and log.manifest.scorer.join == "newline"
    by_id = {s.item_id: s for s in log.samples}
    assert sorted(by_id) == ["test.A.0", "test.A.1", "test.B.0"]
    a0, a1, b0 = by_id["test.A.0"], by_id["test.A.1"], by_id["test.B.0"]
    assert b0.outcome is Outcome.UNSCORED and b0.score is None
    assert b0.modality == "choiceof4" and a0.modality == "choiceof2"
    assert {a0.outcome, a1.outcome} <= {Outcome.CORRECT, Outcome.WRONG}
    assert a0.extracted in ("True", "False") and a0.prompt.endswith("The correct answer is:\n")
    res = log.results
    assert res is not None and res.calibration is not None
    assert res.overall.n_scored == 2 and res.overall.n_unscored == 1
    assert res.overall.accuracy == summary["suites"]["test_A"]["accuracy"]
    assert res.calibration.n == 2 and res.calibration.brier == pytest.approx(summary["overall"]["brier"])
    assert res.calibration.ece == pytest.approx(summary["overall"]["ece"])
    with Store(tmp_path / "store.sqlite") as st:
        (rec,) = st.list_runs()
    assert rec.run_id == log.manifest.run_id and rec.mode == "logprob" and rec.dataset == "test"
    assert rec.accuracy == res.overall.accuracy and set(rec.by_category) == {"test"}
    assert set(res.by_subcategory) == {"A", "B"}  # one row per suite
    # the report shows the reliability diagram and the distribution per context
    html = tmp_path / "x.html"
    assert main(["report", str(out), "-o", str(html), "--store", str(tmp_path / "store.sqlite")]) == 0
    page = html.read_text()
    assert '<section id="calibration">' in page and 'aria-label="reliability diagram"' in page
    assert 'aria-label="distribution over queries per context"' in page
    assert "The author is discussing the role" in page and 'class="seg s0' in page


def test_directory_form_in_process(tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default_store = tmp_path / "default.sqlite"
    monkeypatch.setenv("PROCTOR_STORE", str(default_store))
    out = tmp_path / "o"
    args = ["score", str(FIXTURES), "--model", f"hf:{tiny_model_dir}", "-o", str(out),
            "--norm", "char", "--softmax-temperature", "0.5", "--join", "space", "--batch-size", "4"]
    assert main([*args, "--no-history", "--no-cache"]) == 0
    assert not default_store.exists()  # --no-history --no-cache: no store
    row = json.loads((out / f"{results_stem('test', 'A', f'hf:{tiny_model_dir}')}.jsonl").read_text().splitlines()[0])
    assert row["norm"] == "char" and row["join"] == "space" and row["temperature"] == 0.5
    q = row["queries"][0]
    assert q["score"] == pytest.approx(q["norms"]["char"] / 0.5)
    log = read_run(the_run_dir(out))
    assert log.samples[0].extraction_rule == "argmax-char" and not log.samples[0].prompt.endswith("\n")
    assert log.samples[0].details["distribution"] == pytest.approx(row["distribution"])
    assert main(args) == 0  # the same inputs and options: the same run_id, recorded in the default store
    with Store(default_store) as st:
        (rec,) = st.list_runs()
    assert rec.run_id == read_run(the_run_dir(out)).manifest.run_id == log.manifest.run_id


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--norm", "words"], "--norm must be one of"),
        (["--softmax-temperature", "0"], "error: --softmax-temperature must be a positive number"),
        (["--temp", "0"], "warning: --temp is deprecated and will be removed after 0.2; use --softmax-temperature"),
        (["--join", "tab"], "--join must be newline or space"),
    ],
)
def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str) -> None:
    code = main(["score", str(FIXTURES), "--model", "hf:unused", "--no-history", *args])
    assert code == 2 and needle in capsys.readouterr().err


def test_bad_suite_file_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "p.txt").write_text("Prompt\n")
    bad = tmp_path / "p_T.json"
    bad.write_text('{\n  "context": [{"text": "a", "expected": 3}],\n  "queries": ["x", "y"]\n}\n')
    code = main(["score", str(tmp_path / "p.txt"), str(bad), "--model", "hf:unused"])
    err = capsys.readouterr().err
    assert code == 2 and f"{bad}:2: context[0].expected: 3 is out of range" in err and "Traceback" not in err
    assert main(["score", str(tmp_path / "p.txt"), "--model", "hf:unused"]) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["score", str(empty), "--model", "hf:unused"]) == 2
    assert "no prompt files" in capsys.readouterr().err


def test_cli_and_python_write_the_same_probsem_files(tiny_model_dir: Path, tmp_path: Path) -> None:
    """`proctor score … -o A` and `proctor.score(…, out=B)` build one spec (one run id) and the pipeline writes
    the same probsem files: every CSV, JSONL and summary.json byte for byte."""
    model, store = f"hf:{tiny_model_dir}", str(tmp_path / "s.sqlite")
    assert main(["score", str(FIXTURES), "--model", model, "-o", str(tmp_path / "cli"), "--norm", "token",
                 "--join", "space", "--store", store, "--no-progress"]) == 0
    log = proctor.score(FIXTURES, model, out=tmp_path / "py", norm="token", join="space", store=store)
    cli_run = the_run_dir(tmp_path / "cli")
    assert log.manifest.run_id == read_run(cli_run).manifest.run_id and log.path.parent == tmp_path / "py"
    cli_files = sorted(p.name for p in (tmp_path / "cli").iterdir() if p.is_file())
    assert cli_files == sorted(p.name for p in (tmp_path / "py").iterdir() if p.is_file()) and len(cli_files) == 4  # A, B: CSV + JSONL
    for name in cli_files:
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name
    assert (cli_run / "summary.json").read_bytes() == (log.path / "summary.json").read_bytes()
    with pytest.raises(proctor.ProctorError, match="temperature: no such option here"):
        proctor.score(FIXTURES, model, temperature=0.5)
    with pytest.raises(proctor.ProctorError, match="norm must be one of"):
        proctor.score(FIXTURES, model, norm="words")
