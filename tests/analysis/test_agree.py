"""`proctor agree`: two runs of the same items held to each other. The hf backend at batch size 1 and 32 (real
model, CPU): log-prob deltas within float noise, no flips; scripted generation runs: flips listed with a Wilson
interval and the identical-output share; the report's agreement table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.analysis.agree import agreement
from proctor.cli import main
from proctor.metrics.results import read_run
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


def _cached_run(tmp_path: Path, name: str, store: Path, *model: str) -> Path:
    out = tmp_path / name
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), *model, "-o", str(out), "--no-progress",
                 "--no-history", "--store", str(store)]) == 0
    return out


def test_agree_says_when_a_side_was_served_from_the_cache(tiny_model_dir: Path, tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """#41 item 9: hf at batch sizes 1 and 32 through one store: the second run's answers are the first's, from
    the request cache (batch size is not in the backend's identity); agree says so, with the count, instead of
    reporting a max difference of 0.00 as if the batch sizes had been held to each other."""
    store = tmp_path / "s.sqlite"
    hf = ["--mode", "logprob", "--model", f"hf:{tiny_model_dir}", "--device", "cpu"]
    one = _cached_run(tmp_path, "b1", store, *hf, "--batch-size", "1")
    many = _cached_run(tmp_path, "b32", store, *hf, "--batch-size", "32")
    assert {s.cached_requests for s in read_run(one).samples} == {0}
    assert all(s.cached_requests for s in read_run(many).samples)  # every request answered by the cache
    got = agreement(read_run(one), read_run(many))
    assert (got.cached_a, got.cached_b) == (0, 7) and got.logprob is not None and got.logprob.max == 0.0
    assert any("run 2" in w and "7 of 7" in w and "--no-cache" in w for w in got.warnings)
    capsys.readouterr()
    assert main(["agree", str(one), str(many)]) == 0
    captured = capsys.readouterr()
    assert "7 of 7" in captured.err and "--no-cache" in captured.err
    # the recipe the docs give: the second side asked again without the cache measures the batch size
    fresh = _run(tmp_path, "b32-fresh", *hf, "--batch-size", "32")
    honest = agreement(read_run(one), read_run(fresh))
    assert (honest.cached_a, honest.cached_b, honest.warnings) == (0, 0, [])
    assert {s.cached_requests for s in read_run(fresh).samples} == {None}  # --no-cache: not asked


def test_agree_labels_runs_apart_from_answer_letters(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """#41 item 22: `flip x#0: A B → B A` read as runs or answers; the runs are `run 1` and `run 2`."""
    first = _run(tmp_path, "first", "--model", "scripted:first")
    rand = _run(tmp_path, "random", "--model", "scripted:random")
    capsys.readouterr()
    assert main(["agree", str(first), str(rand)]) == 0
    out = capsys.readouterr().out
    flip = next(line for line in out.splitlines() if line.strip().startswith("flip "))
    got = agreement(read_run(first), read_run(rand))
    f = got.flips[0]
    assert flip.strip() == f"flip {f.item_id}#{f.epoch}: run 1 answered {f.answer_a}, run 2 answered {f.answer_b}"
    assert out.splitlines()[0].startswith("run 1: scripted:first (") and "run 2: scripted:random (" in out


def test_the_reports_agreement_table_notes_a_side_from_the_cache(tmp_path: Path) -> None:
    """Two runs that differ only in how answers are read (another run id, the same requests): the second side's
    answers are the first's, from the cache; the report's agreement table says so."""
    store = tmp_path / "s.sqlite"
    first = _cached_run(tmp_path, "first", store, "--model", "scripted:first")
    robust = _cached_run(tmp_path, "robust", store, "--model", "scripted:first", "--extract", "robust")
    assert main(["report", str(first), str(robust), "--mix-settings", "-o", str(tmp_path / "r.md")]) == 0
    text = (tmp_path / "r.md").read_text(encoding="utf-8")
    assert "#### Agreement" in text and "run 2: 7 of 7 paired answers came from the request cache" in text
