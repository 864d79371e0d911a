"""The accuracy's bounds over truncated samples (every one wrong … every one right) beside the policy's number: in
results.json under both `--truncated-as` policies, on the console and in the report (issue 39, item 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.cli.summary import reasoning_lines
from proctor.log.runlog import Outcome, Sample
from proctor.metrics.results import summarize
from proctor.run.finalize import finalize_run


def _samples() -> list[Sample]:
    """30 samples: 10 truncated, 12 of the other 20 right."""
    out = []
    for i in range(30):
        outcome = Outcome.TRUNCATED if i < 10 else Outcome.CORRECT if i < 22 else Outcome.WRONG
        out.append(Sample(sample_id=f"q{i}#0", item_id=f"q{i}", dataset="d", category="c",
                          score=1.0 if outcome is Outcome.CORRECT else 0.0, outcome=outcome))
    return out


@pytest.mark.parametrize(("policy", "accuracy"), [("wrong", 12 / 30), ("excluded", 12 / 20)])
def test_ten_of_thirty_truncated(policy: str, accuracy: float) -> None:
    res = summarize(_samples(), truncated_as=policy)
    o = res.overall
    assert o.accuracy == pytest.approx(accuracy) and o.n_truncated == 10
    assert (o.truncated_low, o.truncated_high) == pytest.approx((12 / 30, 22 / 30))  # whatever the policy
    assert o.truncated_low is not None and o.truncated_high is not None
    assert o.truncated_low <= o.accuracy <= o.truncated_high
    (line,) = [x for x in reasoning_lines(res) if x.startswith("truncated:")]
    assert line.endswith("accuracy 0.400 if every one is wrong … 0.733 if every one is right")
    assert res.by_category["c"].truncated_high == pytest.approx(22 / 30)


def test_no_truncation_no_bounds() -> None:
    o = summarize(_samples()[10:]).overall
    assert (o.truncated_low, o.truncated_high) == (None, None)


def test_bounds_in_results_json_and_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text("".join(json.dumps({"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Q{i}?",
                                         "response": "A", "choices": {"A": "y", "B": "n"}}) + "\n"
                             for i in range(6)), encoding="utf-8")
    run = tmp_path / "run"
    assert main(["run", str(items), "--model", "scripted:first", "-o", str(run), "--no-progress", "--no-history",
                 "--no-cache"]) == 0
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    lines[:2] = [json.dumps({**json.loads(x), "outcome": "truncated", "score": 0.0, "extracted": None,
                             "finish_reason": "length"}) for x in lines[:2]]  # two replies cut by the budget
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    finalize_run(run)
    overall = json.loads((run / "results.json").read_text(encoding="utf-8"))["overall"]
    assert (overall["accuracy"], overall["truncated_low"], overall["truncated_high"]) == pytest.approx(
        (4 / 6, 4 / 6, 1.0))
    capsys.readouterr()
    md = tmp_path / "r.md"
    assert main(["report", str(run), "-o", str(md)]) == 0
    assert "accuracy 66.7% if every one is wrong … 100.0% if every one is right" in md.read_text(encoding="utf-8")
    html = tmp_path / "r.html"
    assert main(["report", str(run), "-o", str(html)]) == 0
    assert "66.7% (all wrong) … 100.0% (all right)" in html.read_text(encoding="utf-8")
