"""The numbers a report shows: fallbacks from samples, calibration, coverage flags, history."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_runs import gen_samples, prob_samples, write_run

from proctor.core.results import EpochSpread
from proctor.data.coverage import difficulty_band
from proctor.log.runlog import Outcome
from proctor.metrics.accuracy import group_block
from proctor.metrics.results import open_run
from proctor.report import data
from proctor.scoring.logprob import softmax as stats_softmax
from proctor.stats import intervals as stats


def test_wilson_matches_known_values() -> None:
    lo, hi = stats.wilson_interval(50, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    assert stats.wilson_interval(0, 10)[0] == 0.0
    assert stats.accuracy_ci([]).ci_low is None  # nothing scored: no interval, not a number


def test_metrics_keep_errors_out_of_accuracy() -> None:
    """The report's fallback metrics are proctor.metrics', the same functions results.json uses."""
    ss = gen_samples(200, seed=5, skill=0.7)
    m = group_block(ss)
    errors = sum(s.outcome == Outcome.ERROR for s in ss)
    no_ans = sum(s.outcome == Outcome.NO_ANSWER for s in ss)
    assert m.n == 200 and m.n_errors == errors > 0 and m.n_scored == 200 - errors
    assert m.accuracy == pytest.approx(sum(s.score or 0 for s in ss) / (200 - errors))
    assert m.no_answer_rate == pytest.approx(no_ans / (200 - errors))
    assert m.ci_low is not None and m.ci_high is not None and m.ci_low < m.accuracy < m.ci_high


@pytest.mark.parametrize(("d", "band"), [(0.0, "0.0-0.2"), (0.2, "0.2-0.4"), (0.99, "0.8-1.0"), (1.0, "0.8-1.0"), (None, "unknown")])
def test_difficulty_bands(d: float | None, band: str) -> None:
    assert difficulty_band(d) == band


def test_summary_uses_results_json_and_falls_back_per_block(runs: list[Path]) -> None:
    rep = data.load(runs, history=[])
    a, b, p = rep.runs
    # run-a's results.json has overall, by_category and by_difficulty: the rest come from the samples
    assert a.notes == ["by_modality", "macro_accuracy", "failures"]
    assert set(b.notes) >= {"overall", "by_category", "by_difficulty"}
    assert a.duration_s == 200 and b.duration_s == 2 * 3600 + 14 * 60 + 5
    assert p.results.overall.n_unscored == 5 and p.calibration is not None and p.calibration.n == 45


def test_calibration_is_perfect_for_a_confident_correct_model() -> None:
    ds = [data.ContextDist("i", "t", ["A", "B"], [1.0, 0.0], 0, 0)] * 10
    cal = data.calibration_view(ds)
    assert cal is not None and cal.brier == 0 and cal.ece == 0 and cal.log_loss == pytest.approx(0, abs=1e-9)
    assert data.calibration_view([data.ContextDist("i", "t", ["A", "B"], [0.5, 0.5], None, 0)]) is None


def test_distribution_reads_queries_choices_and_letter_references() -> None:
    s = prob_samples(3, seed=1)[1]
    d = data.distribution(s)
    assert d is not None and d.queries == ["True", "False"] and abs(sum(d.probs) - 1) < 1e-9
    g = gen_samples(2, seed=1, skill=1)[1].model_copy(update={"details": {"distribution": [0.1, 0.7, 0.2, 0.0], "choices": {"A": "x", "B": "y", "C": "z", "D": "w"}}})
    gd = data.distribution(g)
    assert gd is not None and gd.predicted == 1 and gd.expected == "ABCD".index(g.reference)


def test_coverage_counts_items_once_and_flags() -> None:
    ss = gen_samples(240, seed=1, skill=0.5)
    cov = data.coverage_view("d", ss + ss)  # a second epoch must not double the counts
    assert cov.n_items == 240 and cov.source in ("local", "proctor.data.coverage")
    assert {r.name: r.flag for r in cov.modalities}["boolean"] == "under"
    counts = {"a": 100, "b": 10, "c": 100, "d": 400}
    flags = {r.name: r.flag for r in data._flag_rows(counts)}
    assert flags == {"a": "", "b": "under", "c": "", "d": "over"}


def test_history_points_accept_dicts_and_objects_and_add_the_run(runs: list[Path]) -> None:
    class P:
        started_at, accuracy, ci_low, ci_high = "2025-03-01T00:00:00+00:00", 0.4, 0.3, 0.5

    pts = [{"started_at": "2025-04-01T00:00:00Z", "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6}, P(), {"accuracy": 1}]
    rep = data.load(runs[:1], history=pts)
    line = rep.history[("openai:model-a", "synthetic-mc")]
    assert [round(p.accuracy, 2) for p in line][:2] == [0.4, 0.5] and len(line) == 3  # bad point skipped, run added


def test_no_store_means_no_history(runs: list[Path], tmp_path: Path) -> None:
    assert data.store_history("m", "d", tmp_path / "absent.sqlite") is None
    assert data.load(runs[:1], store=tmp_path / "absent.sqlite").history == {}


def test_store_history_is_used_when_present(runs: list[Path], tmp_path: Path) -> None:
    import json
    import shutil

    from proctor.run.store import Store

    earlier = tmp_path / "earlier-run"
    shutil.copytree(runs[0], earlier)
    manifest = json.loads((earlier / "manifest.json").read_text())
    manifest.update(run_id="earlier", started_at="2024-01-01T00:00:00+00:00")
    (earlier / "manifest.json").write_text(json.dumps(manifest))
    db = tmp_path / "h.sqlite"
    with Store(db) as st:
        st.record_run(earlier)
    assert [r.run_id for r in data.store_history("openai:model-a", "synthetic-mc", db) or []] == ["earlier"]
    rep = data.load(runs[:1], store=db)
    line = rep.history[("openai:model-a", "synthetic-mc")]
    assert [p.started_at.year for p in line] == [2024, 2025]


def test_a_run_without_results_or_samples_still_loads(tmp_path: Path) -> None:
    d = write_run(tmp_path, "empty", model="m", samples=[])
    rep = data.load([d], history=[])
    assert rep.runs[0].results.overall.n == 0 and rep.runs[0].results.overall.accuracy is None


def test_a_finish_before_the_start_is_no_duration(tmp_path: Path) -> None:
    d = write_run(tmp_path, "skew", model="m", samples=gen_samples(5, seed=1, skill=0.5),
                  started_at="2025-05-02T09:00:00+00:00", finished_at="2025-05-01T09:00:00+00:00")
    assert data.load([d], history=[]).runs[0].duration_s is None


def test_epochs_and_judge_agreement_come_from_results_or_samples(tmp_path: Path) -> None:
    from report_runs import judged_samples

    ss = judged_samples(30, epochs=3, seed=5)
    checked = [s for s in ss if "judge_check" in s.details]
    agree = sum(s.details["judge_check"].outcome == s.outcome for s in checked)
    written = {"k": 3, "mean_at_k": 0.25, "pass_at_k": 0.5}
    with_res = write_run(tmp_path, "a", model="m", samples=ss, results={"overall": group_block(ss), "epochs": written})
    bare = write_run(tmp_path, "b", model="m", samples=ss)
    ra, rb = data.load([with_res, bare], history=[]).runs
    assert ra.results.epochs == rb.results.epochs != EpochSpread(**written) and "epochs" not in ra.notes  # recomputed (#32.1)
    ep = rb.results.epochs
    assert ep is not None and ep.k == 3 and ep.mean_at_k is not None and ep.pass_at_k is not None
    assert 0 < ep.mean_at_k <= ep.pass_at_k <= 1
    for r in (ra, rb):  # neither results.json has judge_agreement: recomputed from the judge checks, and noted
        ja = r.results.judge_agreement
        assert ja is not None and ja.n == len(checked) and ja.agreement == pytest.approx(agree / len(checked))
        assert sum(ja.confusion.values()) == len(checked) and "judge_agreement" in r.notes
    single = write_run(tmp_path, "c", model="m", samples=gen_samples(20, seed=1, skill=0.5))
    r = data.load([single], history=[]).runs[0]
    assert r.results.epochs is None and r.results.judge_agreement is None


def test_confusion_matrix_orders_verdicts_and_fills_gaps() -> None:
    labels, rows = data.confusion_matrix({"wrong/correct": 2, "correct/correct": 5, "partial/wrong": 1, "odd": 9})
    assert labels == ["correct", "partial", "wrong"]
    assert rows == [[5, 0, 0], [0, 0, 1], [2, 0, 0]]  # rows: judge; columns: exact match
    assert data.confusion_matrix({}) == ([], [])


def test_a_run_the_store_holds_under_another_start_time_is_one_point(runs: list[Path]) -> None:
    """#32.32: a merged run (or one finished again) is in the store under the start time of its record; the
    report's own copy of it is the same run (its id), not a second point ("5 runs" for 4)."""
    log = data.load(runs[:1], history=[]).runs[0].log
    stored = {"started_at": "2020-01-01T00:00:00+00:00", "accuracy": 0.5, "ci_low": 0.4, "ci_high": 0.6,
              "run_id": log.manifest.run_id}
    other = {"started_at": "2019-01-01T00:00:00+00:00", "accuracy": 0.4, "run_id": "another-run"}
    rep = data.load(runs[:1], history=[other, stored])
    line = rep.history[("openai:model-a", "synthetic-mc")]
    assert [p.label for p in line] == ["another-run", log.manifest.run_id]  # the label is the run id


@pytest.mark.parametrize("fmt", ["html", "md"])
def test_a_report_among_the_runs_is_passed_over_quietly(runs: list[Path], tmp_path: Path, fmt: str) -> None:
    """#32.32: `report runs/*` after `report runs/* -o runs/report.html`: the report it wrote is not a run
    (no warning, in the terminal or the report); anything else that is not a run is still named."""
    from proctor.report import write_report

    folder = runs[0].parent
    report = write_report(runs, folder / f"report.{fmt}", fmt=fmt)  # type: ignore[arg-type]
    rep = data.load([*runs, report], history=[])
    assert rep.warnings == [] and len(rep.runs) == len(runs)
    stray = folder / "notes.html"
    stray.write_text("<p>mine</p>")
    assert data.load([*runs, stray], history=[]).warnings[0].startswith(f"{stray}: skipped")


def test_a_log_likelihood_sample_gives_each_option_its_logprob_and_probability(logprob_run: Path) -> None:
    """The run's own log-probabilities and softmax (over the options, as it scored them), the chosen and the
    expected option marked; a sample without log-probabilities has none."""
    s = next(open_run(logprob_run).iter_samples())
    opts = data.option_scores(s)
    assert [o.label for o in opts] == ["A", "B", "C", "D"]
    assert [o.logprob for o in opts] == [s.details["logprobs"][k] for k in "ABCD"]
    assert [o.prob for o in opts] == pytest.approx(list(stats_softmax([o.logprob for o in opts])))
    assert sum(o.prob for o in opts) == pytest.approx(1)
    assert [o.label for o in opts if o.chosen] == [s.extracted]
    assert [o.label for o in opts if o.expected] == [s.reference]
    assert data.option_scores(gen_samples(1, seed=1, skill=1)[0]) == []
    assert data.option_scores(prob_samples(2, seed=1)[1]) == []  # a suite's distribution has no log-probabilities
