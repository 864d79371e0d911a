"""Registered claims (`proctor.run.claim`): ten scripted runs answer PASS, FAIL or INCONCLUSIVE as their intervals
say, and every way of changing a run or its claim after the fact answers TAMPERED with its reason: the data edited,
the spec changed, a sample edited, results.json edited, the claim written after the run began (or another claim
run under), the claim file edited or signed by another key, the baseline changed."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.run.claim import Answer, Check, ClaimBody, decide, read_claim, verify_claim

FIRST = "scripted:first"  # answers (A) to every item: accuracy is the share of items whose answer is A
SAY_A, SAY_B = "scripted:fixed=The answer is (A)", "scripted:fixed=The answer is (B)"
QUIET = ["--no-progress", "--no-history", "--no-cache"]


def _items(tmp_path: Path, n: int, right: int) -> Path:
    """n two-choice items, the first `right` of them answered A (scripted:first's answer), the rest B."""
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "A" if i < right
             else "B", "choices": {"A": "yes", "B": "no"}} for i in range(n)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _claim(items: Path, model: str, out: Path, *terms: str) -> Path:
    assert main(["claim", str(items), "--model", model, "-o", str(out), *terms]) == 0
    return out


def _run(items: Path, model: str, out: Path, *extra: str) -> Path:
    assert main(["run", str(items), "--model", model, "-o", str(out), *QUIET, *extra]) in (0, 1)
    return out


def _claimed_run(tmp_path: Path, n: int, right: int, *terms: str) -> tuple[Path, Path]:
    items = _items(tmp_path, n, right)
    claim = _claim(items, FIRST, tmp_path / "CLAIM.json", *terms)
    return _run(items, FIRST, tmp_path / "run", "--claim", str(claim)), claim


CASES = [  # (items, right, the claim, the answer): Wilson 95% intervals of right / items
    (20, 16, ["--at-least", "50"], Answer.PASS),  # 80% [58.4, 91.9]
    (20, 16, ["--at-least", "95"], Answer.FAIL),
    (20, 16, ["--at-least", "70"], Answer.INCONCLUSIVE),
    (40, 8, ["--at-least", "50"], Answer.FAIL),  # 20% [10.5, 35.0]
    (40, 20, ["--at-least", "50"], Answer.INCONCLUSIVE),  # 50% [35.2, 64.8]
    (10, 10, ["--at-least", "60"], Answer.PASS),  # 100% [72.2, 100]
    (30, 0, ["--at-least", "20"], Answer.FAIL),  # 0% [0, 11.4]
    (40, 36, ["--at-least", "75"], Answer.PASS),  # 90% [76.9, 96.0]
]


@pytest.mark.parametrize(("n", "right", "terms", "answer"), CASES)
def test_a_threshold_claim_answers_by_the_interval(tmp_path: Path, capsys: pytest.CaptureFixture[str], n: int,
                                                   right: int, terms: list[str], answer: Answer) -> None:
    run, claim = _claimed_run(tmp_path, n, right, *terms)
    got = verify_claim(run, claim)
    assert got.answer is answer, got.reason
    assert got.estimate == pytest.approx(right / n)
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))["overall"]
    assert (got.ci_low, got.ci_high) == (results["ci_low"], results["ci_high"])
    assert got.answer is decide(results["ci_low"], results["ci_high"], float(terms[1]) / 100)


@pytest.mark.parametrize(("candidate", "drop", "answer"), [
    (SAY_A, "12", Answer.PASS),  # the same answers: run − baseline 0, Tango's interval about ±9 points on 40
    (SAY_A, "2", Answer.INCONCLUSIVE),
    (SAY_B, "5", Answer.FAIL),  # 36 of 40 right turned wrong: −80 points
])
def test_a_claim_against_a_baseline_answers_by_the_paired_interval(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], candidate: str, drop: str, answer: Answer) -> None:
    items = _items(tmp_path, 40, 36)
    base = _run(items, FIRST, tmp_path / "base")
    claim = _claim(items, candidate, tmp_path / "CLAIM.json", "--no-worse-than", str(base), "--allowed-drop", drop)
    run = _run(items, candidate, tmp_path / "run", "--claim", str(claim))
    got = verify_claim(run, claim)
    assert got.answer is answer, got.reason
    assert got.bound == pytest.approx(-float(drop) / 100)
    assert got.ci_low is not None and got.ci_high is not None and got.ci_low <= got.estimate <= got.ci_high


# ---------------------------------------------------------------- TAMPERED


def _tampered(run: Path, claim: Path, check: Check | None = None) -> str:
    got = verify_claim(run, claim, check or Check())
    assert got.answer is Answer.TAMPERED
    return got.reason


def test_the_data_edited_after_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, claim = _claimed_run(tmp_path, 12, 9, "--at-least", "30")
    assert verify_claim(run, claim).answer is Answer.PASS
    items = tmp_path / "items.jsonl"
    items.write_text(items.read_text(encoding="utf-8").replace("Question 3?", "Question three?"), encoding="utf-8")
    assert _tampered(run, claim).startswith(f"data: {items} now has content hash")


def test_the_spec_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path, 12, 9)
    claim = _claim(items, FIRST, tmp_path / "CLAIM.json", "--at-least", "30")
    run = _run(items, FIRST, tmp_path / "run", "--epochs", "2")  # not under the claim: it would be refused
    assert _tampered(run, claim).startswith("spec: the run's id is ")


def test_a_sample_edited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, claim = _claimed_run(tmp_path, 12, 5, "--at-least", "60")
    path = run / "samples.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    record = json.loads(lines[-1])
    record.update(score=1.0, outcome="correct", extracted=record["reference"])
    lines[-1] = json.dumps(record) + "\n"
    path.write_text("".join(lines), encoding="utf-8")
    assert _tampered(run, claim) == f"samples.jsonl:{len(lines)}: differs from the line checksums.json recorded"


def test_results_edited(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, claim = _claimed_run(tmp_path, 20, 13, "--at-least", "60")
    assert verify_claim(run, claim).answer is Answer.INCONCLUSIVE
    path = run / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    results["overall"]["ci_low"] = 0.61
    path.write_text(json.dumps(results, indent=2), encoding="utf-8")
    assert _tampered(run, claim).startswith("results.json")


def test_a_claim_written_after_the_run_began(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path, 12, 9)
    run = _run(items, FIRST, tmp_path / "run")  # the result seen first
    claim = _claim(items, FIRST, tmp_path / "CLAIM.json", "--at-least", "30")
    assert "after the run began" in _tampered(run, claim)


def test_a_second_claim_after_a_run_under_the_first(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run, _ = _claimed_run(tmp_path, 12, 9, "--at-least", "90")
    later = _claim(tmp_path / "items.jsonl", FIRST, tmp_path / "LATER.json", "--at-least", "30")
    assert _tampered(run, later).startswith("claim: the run began under another claim")


def test_a_claim_before_a_run_not_started_under_it_rests_on_its_time(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path, 12, 9)
    claim = _claim(items, FIRST, tmp_path / "CLAIM.json", "--at-least", "30")
    time.sleep(1 - datetime.now(UTC).microsecond / 1e6)  # the manifest's start is to the second: the next one
    got = verify_claim(_run(items, FIRST, tmp_path / "run"), claim)
    assert got.answer is Answer.PASS and any("rests on its own time" in n for n in got.notes)


def test_the_claim_file_edited_or_signed_by_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("cryptography")
    key, other = tmp_path / "me.pem", tmp_path / "them.pem"
    assert main(["keygen", str(key)]) == 0 and main(["keygen", str(other)]) == 0
    run, claim = _claimed_run(tmp_path, 12, 9, "--at-least", "30", "--key", str(key))
    mine, theirs = Path(f"{key}.pub"), Path(f"{other}.pub")
    assert verify_claim(run, claim, Check(claim_key=mine)).signer == read_claim(claim).signer
    assert "not by the key given" in _tampered(run, claim, Check(claim_key=theirs))
    record = json.loads(claim.read_text(encoding="utf-8"))
    record["claim"]["threshold"] = 0.1  # a lower bar, after the fact
    claim.write_text(json.dumps(record), encoding="utf-8")
    assert "edited after it was written" in _tampered(run, claim)
    record["sha256"] = ClaimBody.model_validate(record["claim"]).sha256()  # the hash made to agree: the signature
    claim.write_text(json.dumps(record), encoding="utf-8")
    assert "signature does not match" in _tampered(run, claim)


def test_the_baseline_changed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = _items(tmp_path, 12, 9)
    base = _run(items, FIRST, tmp_path / "base")
    claim = _claim(items, SAY_A, tmp_path / "CLAIM.json", "--no-worse-than", str(base), "--allowed-drop", "30")
    run = _run(items, SAY_A, tmp_path / "run", "--claim", str(claim))
    assert verify_claim(run, claim).answer is Answer.PASS
    other = _run(items, SAY_B, tmp_path / "other")
    assert _tampered(run, claim, Check(baseline=other)).startswith(f"baseline: {other} holds run ")
    (base / "results.json").write_text("{}", encoding="utf-8")
    assert _tampered(run, claim).startswith("baseline: ")


def test_the_runner_resumes_a_run_under_the_claim_it_began_under(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.log.provenance import ClaimRecord
    from proctor.run import pipeline
    from proctor.run.runner import RunOptions
    from proctor.util.errors import ProctorError

    items = _items(tmp_path, 6, 3)
    run = _run(items, FIRST, tmp_path / "run")  # begun without a claim
    samples = run / "samples.jsonl"
    samples.write_text("".join(samples.read_text(encoding="utf-8").splitlines(keepends=True)[:-1]), encoding="utf-8")
    spec = pipeline.spec_for(items, FIRST)
    record = ClaimRecord(sha256="0" * 64, written_at="2026-01-01T00:00:00+00:00")
    quiet = {"out": run, "use_cache": False, "record_history": False, "progress": False}
    with pytest.raises(ProctorError, match="this run began without a claim"):
        pipeline.run([spec], RunOptions(**quiet, claim=record))
    log = pipeline.run([spec], RunOptions(**quiet))[0]  # resumed without one: none recorded
    assert log.manifest.claim is None
