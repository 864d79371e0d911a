"""Metrics as plugins (#24 item 2): a metric written in one module and registered shows in results.json, the
console summary and the report; the registry refuses what is not a metric."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from median_output_tokens import MedianOutputTokens

import proctor
from proctor.cli import main
from proctor.core.results import MetricValue
from proctor.log.runlog import Outcome, Sample
from proctor.metrics import Metric, register, registered, unregister
from proctor.metrics.results import read_run, summarize

DEMO = Path(__file__).parents[2] / "examples" / "questions" / "demo.json"


@pytest.fixture
def median_tokens() -> Iterator[Metric]:
    metric = register(MedianOutputTokens())
    yield metric
    unregister(metric.name)


def _sample(i: int, tokens: int | None, outcome: Outcome = Outcome.CORRECT) -> Sample:
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=outcome, score=None if outcome is Outcome.ERROR else 1.0,
                  output_tokens=tokens)


def test_a_registered_metric_is_summarized(median_tokens: Metric) -> None:
    samples = [_sample(0, 3), _sample(1, 9), _sample(2, 5), _sample(3, None, Outcome.ERROR)]
    got = summarize(samples).metrics["median_output_tokens"]
    assert got == MetricValue(value=5.0, n=3, method="median")
    assert "median_output_tokens" not in summarize([_sample(0, None, Outcome.ERROR)]).metrics  # nothing: left out


def test_a_new_metric_shows_in_results_console_and_report(
    median_tokens: Metric, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = tmp_path / "run"
    code = main(["run", str(DEMO), "--model", "scripted:first", "-o", str(run_dir), "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress"])
    console = capsys.readouterr().out
    assert code == 0, console
    log = read_run(run_dir)
    tokens = sorted(s.output_tokens for s in log.samples if s.output_tokens is not None)
    written = json.loads((run_dir / "results.json").read_text())["metrics"]["median_output_tokens"]
    assert written["value"] == pytest.approx(float(tokens[len(tokens) // 2] if len(tokens) % 2 else
                                                   (tokens[len(tokens) // 2 - 1] + tokens[len(tokens) // 2]) / 2))
    assert written["n"] == len(tokens) and written["method"] == "median"
    row = next(line for line in console.splitlines() if "median_output_tokens" in line)
    assert f"{written['value']:.3f}" in row and str(len(tokens)) in row
    html, md = tmp_path / "report.html", tmp_path / "report.md"
    assert main(["report", str(run_dir), "-o", str(html)]) == 0
    assert main(["report", str(run_dir), "-o", str(md)]) == 0
    page = html.read_text()
    assert 'id="more-metrics"' in page and "<code>median_output_tokens</code>" in page
    assert f"{written['value']:.3f}" in page
    assert "## More metrics" in md.read_text() and f"{written['value']:.3f}" in md.read_text()


def test_a_run_written_before_the_metric_gets_it_in_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Results are a pure function of the samples: a metric registered later is worked out for an older run."""
    run_dir = tmp_path / "run"
    assert main(["run", str(DEMO), "--model", "scripted:first", "-o", str(run_dir), "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert "median_output_tokens" not in json.loads((run_dir / "results.json").read_text())["metrics"]
    register(MedianOutputTokens())
    try:
        from proctor.report.data import load

        (run,) = load([run_dir], history=[]).runs
        assert "median_output_tokens" in run.results.metrics and "median_output_tokens" in run.notes
    finally:
        unregister("median_output_tokens")


def test_the_registry_refuses_duplicates_settings_and_non_metrics() -> None:
    assert [m.name for m in registered()][:2] == ["overall", "by_category"]
    register(MedianOutputTokens())
    try:
        with pytest.raises(ValueError, match="already registered"):
            register(MedianOutputTokens())
        with pytest.raises(ValueError, match="already registered"):
            register(MedianOutputTokens.__new__(type("Overall", (MedianOutputTokens,), {"name": "overall"})))
    finally:
        unregister("median_output_tokens")
    with pytest.raises(TypeError, match="not a Metric"):
        register(object())  # type: ignore[type-var]

    class Bad(MedianOutputTokens):
        name = "errors"

    with pytest.raises(ValueError, match="setting"):
        register(Bad())

    class NeedsNothingThere(MedianOutputTokens):
        name = "colour"
        needs = frozenset({"colour"})

    with pytest.raises(ValueError, match="colour: not Sample fields"):
        register(NeedsNothingThere())
    assert "Metric" in dir(proctor) and proctor.Metric is Metric  # importable; __all__ lists the entry points
    assert isinstance(MedianOutputTokens(), proctor.Metric)


def test_register_decorates_a_class() -> None:
    @register
    class SampleCount:
        name, label, needs = "sample_count", "samples", frozenset({"sample_id"})

        def compute(self, samples: object, context: object) -> MetricValue:
            return MetricValue(value=float(len(samples)), n=len(samples), method="count")  # type: ignore[arg-type]

    try:
        assert isinstance(SampleCount, type) and summarize([_sample(0, 1), _sample(1, 2)]).metrics["sample_count"].value == 2
    finally:
        unregister("sample_count")


def test_a_metric_beyond_the_builtins_must_return_a_metric_value() -> None:
    class Wrong(MedianOutputTokens):
        name = "not_a_value"

        def compute(self, samples: object, context: object) -> float:  # type: ignore[override]
            return 1.0

    register(Wrong())
    try:
        failed = summarize([_sample(0, 1)]).metrics["not_a_value"]  # recorded as failed, not raised (#32.18)
        assert failed.value is None and failed.error is not None and "returns a MetricValue" in failed.error
    finally:
        unregister("not_a_value")


class _Broken:
    """A plugin metric that fails in one of the ways a plugin can: it raises, returns the wrong type, or NaN."""

    label = "broken"
    needs = frozenset({"outcome"})

    def __init__(self, name: str, result: object) -> None:
        self.name, self.result = name, result

    def compute(self, samples: object, context: object) -> object:
        if isinstance(self.result, Exception):
            raise self.result
        if self.result == "nan":
            return MetricValue.model_construct(value=float("nan"), n=1, ci_low=None, ci_high=None, method="x")
        return self.result


@pytest.mark.parametrize("result", [ZeroDivisionError("division by zero"), "a string", 7, "nan"],
                         ids=["raises", "a string", "an int", "NaN"])
def test_a_failing_metric_is_recorded_as_failed_and_the_run_still_has_results(
        tmp_path: Path, result: object, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 32 #18: a plugin that raises or returns the wrong type left the run without results.json; a NaN was
    written as the non-JSON `NaN`. Now the metric is recorded as failed (with why), with a warning."""
    register(_Broken("broken_metric", result))  # type: ignore[arg-type]
    try:
        run_dir = tmp_path / "run"
        assert main(["run", str(DEMO), "--model", "scripted:first", "-o", str(run_dir), "--no-history",
                     "--no-progress"]) == 0
        text = (run_dir / "results.json").read_text()
        json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON {c} in results.json"))
        written = json.loads(text)
        assert written["overall"]["n"] == 8
        failed = written["metrics"]["broken_metric"]
        assert failed["value"] is None and failed["error"], failed
        assert "broken_metric" in caplog.text and "failed" in caplog.text
    finally:
        unregister("broken_metric")


_SLOW_METRIC = """
import sys, time
from pathlib import Path
from proctor.cli import main
from proctor.metrics import register

class Slow:
    name, label, needs = "slow_metric", "slow", frozenset({"outcome"})

    def compute(self, samples, context):
        Path(sys.argv[1]).write_text("computing")
        time.sleep(60)

register(Slow())
sys.exit(main(sys.argv[2:]))
"""


def test_ctrl_c_does_not_wait_for_a_slow_metric(tmp_path: Path) -> None:
    """Issue 32 #18: ctrl-C while the results are computed stops at once (the samples are on disk already)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    marker = tmp_path / "computing"
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    child = subprocess.Popen([sys.executable, "-c", _SLOW_METRIC, str(marker), "run", str(DEMO), "--model",
                              "scripted:first", "-o", str(tmp_path / "run"), "--no-history", "--no-progress"],
                             env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "the metric never started"
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    try:
        code = child.wait(timeout=15)
    finally:
        child.kill()
    assert time.monotonic() - sent < 5 and code == 130, child.stderr.read() if child.stderr else ""
    assert len((tmp_path / "run" / "samples.jsonl").read_text().splitlines()) == 8


class _RewritesScores:
    """A careless plugin: it 'normalises' every sample's score in place."""

    name = "rewrites_scores"
    label = "rewrites scores"
    needs = frozenset({"score"})

    def compute(self, samples: list[Sample], context: object) -> MetricValue:
        for s in samples:
            s.score, s.outcome = 1.0, Outcome.CORRECT
        return MetricValue(value=1.0, n=len(samples), method="rewrite")


def test_a_plugin_that_rewrites_the_samples_cannot_change_the_accuracy(tmp_path: Path) -> None:
    """#32 attack: read_run holds the samples it summarized, so a plugin assigning `s.score = 1` made every later
    reader (report, export, compare in the same process) see accuracy 1.0; a plugin gets its own copies."""
    run_dir = tmp_path / "run"
    assert main(["run", str(DEMO), "--model", "scripted:first", "-o", str(run_dir), "--no-history",
                 "--no-progress"]) == 0
    truth = read_run(run_dir).results
    register(_RewritesScores())
    try:
        log = read_run(run_dir)
        again = summarize(log.samples)
    finally:
        unregister("rewrites_scores")
    assert truth is not None and log.results is not None
    assert log.results.overall.accuracy == again.overall.accuracy == truth.overall.accuracy < 1.0
    assert again.metrics["rewrites_scores"].value == 1.0
