"""Accuracy is computed in one place: `group_block` gives results.json, the report's fallback and probsem's
summary.json the same numbers."""

from __future__ import annotations

import pytest

from proctor.log.runlog import Outcome, Sample
from proctor.metrics import RunContext
from proctor.metrics.accuracy import Breakdown, breakdown, group_block, mean_score
from proctor.metrics.macro_accuracy import MacroAccuracy
from proctor.metrics.results import summarize
from proctor.metrics.suites import suite_summary
from proctor.scoring.suites import ContextResult
from proctor.stats.intervals import wilson_interval


def _s(i: int, outcome: Outcome, score: float | None, category: str | None = None) -> Sample:
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=outcome, score=score, category=category)


SAMPLES = [_s(0, Outcome.CORRECT, 1.0, "a"), _s(1, Outcome.WRONG, 0.0, "a"), _s(2, Outcome.CORRECT, 1.0, "a"),
           _s(3, Outcome.WRONG, 0.0, "b"), _s(4, Outcome.ERROR, None, "b"), _s(5, Outcome.UNSCORED, None)]


def test_group_block_counts_errors_apart() -> None:
    m = group_block(SAMPLES)
    assert (m.n, m.n_scored, m.n_errors, m.n_unscored) == (6, 4, 1, 1)
    assert m.accuracy == mean_score(SAMPLES) == 0.5 and m.ci_method == "wilson"
    assert (m.ci_low, m.ci_high) == pytest.approx(wilson_interval(2, 4))
    assert m.estimate.value == m.accuracy and m.estimate.n == 4
    assert group_block([]).accuracy is None and mean_score([]) is None


def test_the_truncated_rate_leaves_unscored_samples_out() -> None:
    """Unscored samples (a probsem context with expected -1) are no answers that could be cut (#51 item 6)."""
    m = group_block([_s(0, Outcome.TRUNCATED, 0.0), _s(1, Outcome.TRUNCATED, 0.0), _s(2, Outcome.UNSCORED, None),
                     _s(3, Outcome.ERROR, None)])
    assert (m.n_truncated, m.truncated_rate) == (2, 1.0)
    assert group_block([_s(0, Outcome.UNSCORED, None)]).truncated_rate is None


def test_breakdowns_and_macro() -> None:
    by_cat = breakdown(SAMPLES, "category")
    assert list(by_cat) == ["a", "b"] and by_cat["a"].accuracy == pytest.approx(2 / 3) and by_cat["b"].accuracy == 0.0
    assert Breakdown("category").compute(SAMPLES, RunContext()) == by_cat
    assert MacroAccuracy().compute(SAMPLES, RunContext()) == pytest.approx((2 / 3 + 0.0) / 2)
    results = summarize(SAMPLES)
    assert results.overall == group_block(SAMPLES) and results.by_category == by_cat
    with pytest.raises(ValueError, match="no breakdown by"):
        Breakdown("colour")


def test_probsem_summary_uses_the_same_accuracy() -> None:
    contexts = [ContextResult(i, f"t{i}", expected, [{"probability": 0.6}, {"probability": 0.4}],
                              correct=None if expected < 0 else ok)
                for i, (expected, ok) in enumerate([(0, True), (1, False), (0, True), (-1, None)])]
    s = suite_summary(contexts)
    assert (s.block.n, s.block.n_scored, s.block.n_unscored, s.n_correct) == (4, 3, 1, 2)
    assert s.block.accuracy == pytest.approx(2 / 3)
    assert (s.block.ci_low, s.block.ci_high) == pytest.approx(wilson_interval(2, 3))
    assert s.calibration is not None and s.calibration.n == 3


def test_a_design_effect_below_one_is_shown_with_the_factor_the_interval_used() -> None:
    """#41.19: cards read "design effect 0.00" beside an interval wider than the items' (t on few df, and the
    factor held at 1): the text names the estimate and the factor used."""
    from proctor.core.results import MetricBlock
    from proctor.metrics.accuracy import clustering_text

    low = MetricBlock(accuracy=0.5, n_scored=60, n_clusters=6, design_effect=0.003, cluster_df=4.2)
    text = clustering_text(low)
    assert "design effect estimated 0.00, used 1.00 (never below 1" in text and "t on 4.2 df" in text
    high = MetricBlock(accuracy=0.5, n_scored=60, n_clusters=6, design_effect=14.0, cluster_df=4.2)
    assert "estimated 14.00, used 10.00 (at most items per cluster)" in clustering_text(high)
    plain = MetricBlock(accuracy=0.5, n_scored=60, n_clusters=6, design_effect=2.5, cluster_df=4.2)
    assert ", design effect 2.50, t on 4.2 df" in clustering_text(plain)


def test_trajectories_ends_are_counted_beside_truncation_and_absent_without_any() -> None:
    from proctor.core.trajectory import Trajectory

    samples = [_s(0, Outcome.CORRECT, 1.0, "a"), _s(1, Outcome.TRUNCATED, 0.0, "a"), _s(2, Outcome.WRONG, 0.0, "b")]
    stops = ["called", "max_turns", "called"]
    agents = [s.model_copy(update={"trajectory": Trajectory(stop=stop)}) for s, stop in zip(samples, stops, strict=True)]
    block = group_block(agents)
    assert block.agent_stops == {"called": 2, "max_turns": 1} and block.n_truncated == 1
    assert block.agent_stop_rates == pytest.approx({"called": 2 / 3, "max_turns": 1 / 3})
    assert summarize(agents).by_category["b"].agent_stops == {"called": 1}
    plain = group_block(samples)
    assert plain.agent_stops == {} and "agent_stops" not in plain.model_dump_json()
