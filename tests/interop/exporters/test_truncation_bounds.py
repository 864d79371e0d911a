"""The accuracy's truncation bounds (every truncated sample wrong … every one right) in the exporters' formats
(#39 item 3): Inspect as two metrics of the score, Every Eval Ever in the result's details (it has no field for
bounds), read back with each tool's own reader; llm-wc's summary has no place for them and gets none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.interop.exporters import export
from proctor.log.runlog import SAMPLES, Outcome, Sample, write_results
from proctor.metrics.results import read_run, summarize

from .conftest import write_run

# 10 samples: 4 right, 3 wrong, 3 cut by the token limit (counted wrong): 0.4, between 0.4 and 0.7
_OUTCOMES = [Outcome.CORRECT] * 4 + [Outcome.WRONG] * 3 + [Outcome.TRUNCATED] * 3


@pytest.fixture
def truncated_run(tmp_path: Path) -> Path:
    samples = [Sample(sample_id=f"c.{i}#0", item_id=f"c.{i}", dataset="cut", prompt=[{"role": "user", "content": f"Q{i}?"}],
                      reference="B", raw_output="The answer is (B)" if o is Outcome.CORRECT else "Let me think about",
                      extracted="B" if o is Outcome.CORRECT else ("C" if o is Outcome.WRONG else None),
                      extraction_rule="truncated" if o is Outcome.TRUNCATED else "answer_is",
                      score=1.0 if o is Outcome.CORRECT else 0.0, outcome=o, input_tokens=10, output_tokens=64,
                      finish_reason="length" if o is Outcome.TRUNCATED else "stop")
               for i, o in enumerate(_OUTCOMES)]
    d = write_run(tmp_path / "cut", samples, "cut-run", "0.4.0", max_tokens=64)
    overall = read_run(d).results.overall  # type: ignore[union-attr]
    assert (overall.accuracy, overall.truncated_low, overall.truncated_high) == (0.4, 0.4, 0.7)
    return d


def test_inspect_holds_the_bounds_as_metrics_of_the_score(truncated_run: Path, tmp_path: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    (path,) = export([truncated_run], "inspect", tmp_path / "inspect")
    back = read_eval_log(str(path))
    assert back.results is not None
    (score,) = back.results.scores
    assert score.metrics["accuracy"].value == pytest.approx(0.4)
    low, high = score.metrics["accuracy_if_truncated_wrong"], score.metrics["accuracy_if_truncated_right"]
    assert (low.value, high.value) == pytest.approx((0.4, 0.7))
    assert low.metadata == {"n_truncated": 3, "truncated_as": "wrong"}


def test_eee_holds_the_bounds_in_the_results_details_and_validates(truncated_run: Path, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("every_eval_ever")
    from every_eval_ever.validator.validate import main as eee_validate

    out = tmp_path / "eee"
    aggregate = next(p for p in export([truncated_run], "eee", out) if p.suffix == ".json")
    capsys.readouterr()
    assert eee_validate(["--format", "json", f"{out}/data/*/*/*/*.json*"]) == 0
    reports = json.loads(capsys.readouterr().out)
    assert all(r["valid"] and not r["warnings"] for r in reports), reports
    details = json.loads(aggregate.read_text())["evaluation_results"][0]["score_details"]["details"]
    assert {k: details[k] for k in ("n_truncated", "truncated_as", "accuracy_if_truncated_wrong",
                                    "accuracy_if_truncated_right")} == {
        "n_truncated": "3", "truncated_as": "wrong", "accuracy_if_truncated_wrong": "0.4",
        "accuracy_if_truncated_right": "0.7"}


def test_a_run_with_nothing_truncated_exports_no_bounds(tmp_path: Path, truncated_run: Path) -> None:
    pytest.importorskip("inspect_ai")
    from inspect_ai.log import read_eval_log

    lines = (truncated_run / SAMPLES).read_text().splitlines()[:7]  # the 7 answered in full
    (truncated_run / SAMPLES).write_text("".join(line + "\n" for line in lines))
    write_results(truncated_run, summarize(read_run(truncated_run).samples))
    (path,) = export([truncated_run], "inspect", tmp_path / "inspect")
    back = read_eval_log(str(path))
    assert back.results is not None and "accuracy_if_truncated_wrong" not in back.results.scores[0].metrics


def test_llmwc_summary_keeps_its_own_shape(truncated_run: Path, tmp_path: Path) -> None:
    """llm-wc's summary.json has no field for an interval or bounds: it keeps its own keys (docs/exporters.md)."""
    export([truncated_run], "llmwc", tmp_path / "wc")
    (summary,) = (tmp_path / "wc" / "models").glob("*/summary.json")
    data = json.loads(summary.read_text())
    assert data["accuracy"] == pytest.approx(0.4) and not any("truncat" in k for k in data)
