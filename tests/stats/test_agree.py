"""`proctor agree`: two runs of the same items held to each other. The hf backend at batch size 1 and 32 (real
model, CPU): log-prob deltas within float noise, no flips; scripted generation runs: flips listed with a Wilson
interval and the identical-output share; the report's agreement table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.results import read_run
from proctor.stats.agree import agreement
from proctor.stats.intervals import wilson_interval

ROOT = Path(__file__).resolve().parents[2]
MMLU_PRO = ROOT / "examples" / "upstream" / "mmlu_pro"


def _run(tmp_path: Path, name: str, *model: str) -> Path:
    out = tmp_path / name
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), *model, "-o", str(out), "--no-progress",
                 "--no-history", "--no-cache"]) == 0
    return out


def test_hf_batch_sizes_agree_on_log_probs(tiny_model_dir: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    one = _run(tmp_path, "b1", "--mode", "logprob", "--model", f"hf:{tiny_model_dir}", "--device", "cpu",
               "--batch-size", "1")
    many = _run(tmp_path, "b32", "--mode", "logprob", "--model", f"hf:{tiny_model_dir}", "--device", "cpu",
                "--batch-size", "32")
    got = agreement(read_run(one), read_run(many))
    assert got.n_paired == 7 and got.logprob is not None and got.logprob.n == 7
    assert got.logprob.max < 1e-4 and got.logprob.p99 <= got.logprob.max  # padding never changes a score
    assert got.n_flips == 0 and got.flip_ci_low == 0.0 and got.identical_share is None
    capsys.readouterr()
    assert main(["agree", str(one), str(many), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["logprob"]["max"] == pytest.approx(got.logprob.max) and record["flips"] == []


def test_generation_flips_are_listed_with_an_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first = _run(tmp_path, "first", "--model", "scripted:first")
    again = _run(tmp_path, "again", "--model", "scripted:first", "--temperature", "0.5")
    rand = _run(tmp_path, "random", "--model", "scripted:random")
    same = agreement(read_run(first), read_run(again))
    assert same.n_flips == 0 and same.identical_share == 1.0 and same.logprob is None
    got = agreement(read_run(first), read_run(rand))
    a = {s.item_id: s.extracted for s in read_run(first).samples}
    b = {s.item_id: s.extracted for s in read_run(rand).samples}
    flipped = sorted(i for i in a if a[i] != b[i])
    assert [f.item_id for f in got.flips] == flipped and got.n_flips == len(flipped) > 0
    assert (got.flip_ci_low, got.flip_ci_high) == pytest.approx(wilson_interval(len(flipped), len(a)))
    capsys.readouterr()
    assert main(["agree", str(first), str(rand)]) == 0
    out = capsys.readouterr().out
    assert f"{len(a)} paired answers: {len(flipped)} flip" in out and f"flip {flipped[0]}#0:" in out
    report = tmp_path / "r.md"
    assert main(["report", str(first), str(rand), "-o", str(report)]) == 0
    text = report.read_text(encoding="utf-8")
    assert "#### Agreement" in text and "Answers that flip" in text
    html = tmp_path / "r.html"
    assert main(["report", str(first), str(rand), "-o", str(html)]) == 0
    assert "Agreement: answers that flip" in html.read_text(encoding="utf-8")


def test_agree_refuses_runs_with_nothing_in_common(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agree", str(tmp_path / "nope"), str(tmp_path)]) == 2
    assert "not a run directory" in capsys.readouterr().err
