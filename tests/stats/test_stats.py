"""Statistics against hand-computed values, and results.json on synthetic samples."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from proctor.data.coverage import difficulty_band
from proctor.log.runlog import Outcome, Sample
from proctor.metrics.epochs import epoch_spread
from proctor.metrics.results import summarize
from proctor.stats.intervals import (
    accuracy_ci,
    binary_calibration,
    binom_cdf,
    bootstrap_ci,
    calibration,
    pass_at_k,
    selection_adjusted,
    wilson_interval,
)


def test_wilson_hand_computed() -> None:
    # 8/10, z = 1.96: centre = (0.8 + 0.19207)/1.38415, half = 1.96·sqrt(0.016 + 0.00960)/1.38415
    lo, hi = wilson_interval(8, 10)
    assert lo == pytest.approx(0.4902, abs=1e-4)
    assert hi == pytest.approx(0.9433, abs=1e-4)
    assert wilson_interval(0, 5)[0] == 0.0 and wilson_interval(5, 5)[1] == 1.0
    with pytest.raises(ValueError):
        wilson_interval(0, 0)


def test_accuracy_ci_methods() -> None:
    assert accuracy_ci([1, 0, 1, 1]).method == "wilson"
    graded = accuracy_ci([1, 0.5, 0, 1, 0.5])
    assert graded.method == "bootstrap" and graded.ci_low <= graded.value <= graded.ci_high
    clustered = accuracy_ci([1, 0, 1, 1], clusters=["a", "a", "b", "b"])
    assert clustered.method == "clustered_wilson"
    graded_clustered = accuracy_ci([1, 0.5, 1, 1], clusters=["a", "a", "b", "b"])
    assert graded_clustered.method == "cluster_bootstrap"
    assert accuracy_ci([]).value is None


SEVEN = [f"item{i}" for i in range(7)]


@pytest.mark.parametrize("epochs", [1, 2, 3, 5, 10])
def test_zero_of_seven_items_keeps_its_interval_over_epochs(epochs: int) -> None:
    """Issue 11: 0 of 7 items over several epochs reported [0.000, 0.000]; one epoch reports [0.0, 35.4]."""
    r = accuracy_ci([0.0] * 7 * epochs, SEVEN * epochs)
    assert (r.value, r.ci_low) == (0.0, 0.0)
    assert r.ci_high == pytest.approx(0.3543, abs=1e-4)
    assert r.ci_high == pytest.approx(wilson_interval(0, 7)[1])
    every = accuracy_ci([1.0] * 7 * epochs, SEVEN * epochs)  # all correct: the mirror image
    assert every.ci_low == pytest.approx(1 - 0.3543, abs=1e-4) and every.ci_high == 1.0


def test_identical_epochs_add_no_information() -> None:
    """Answers repeated verbatim in every epoch: the interval of one epoch, not one K times narrower."""
    once = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0]
    items = [f"q{i}" for i in range(10)]
    one = accuracy_ci(once)
    for k in (2, 4, 8):
        r = accuracy_ci(once * k, items * k)
        assert r.method == "clustered_wilson"
        assert (r.ci_low, r.ci_high) == pytest.approx((one.ci_low, one.ci_high))


def test_independent_epochs_narrow_the_interval_but_never_below_iid() -> None:
    """Epochs that disagree within items carry information: narrower than per-item, no narrower than iid."""
    rng = np.random.default_rng(3)
    p_item = rng.uniform(0, 1, 40)
    k = 6
    scores = (rng.uniform(0, 1, (k, 40)) < p_item).astype(float).ravel()
    items = [f"q{i}" for i in range(40)] * k
    r = accuracy_ci(list(scores), items)
    iid_lo, iid_hi = wilson_interval(float(scores.sum()), scores.size)
    one_lo, one_hi = wilson_interval(float(scores.mean()) * 40, 40)
    width = r.ci_high - r.ci_low
    assert iid_hi - iid_lo - 1e-12 <= width <= one_hi - one_lo + 1e-12
    assert r.ci_low < r.value < r.ci_high


def test_one_item_many_epochs_says_little_about_items() -> None:
    r = accuracy_ci([1.0, 0.0, 1.0, 1.0], ["only"] * 4)
    assert (r.ci_low, r.ci_high) == pytest.approx(wilson_interval(0.75, 1))


def test_clustered_standard_error_hand_computed() -> None:
    # items a: [1, 1], b: [0, 0], c: [1, 0]; mean 0.5; cluster sums of deviations 1, -1, 0
    # SE² = C/(C−1) · Σ(sums²) / n² = 3/2 · 2 / 36 = 1/12
    from proctor.stats.intervals import clustered_standard_error

    se = clustered_standard_error([1, 1, 0, 0, 1, 0], ["a", "a", "b", "b", "c", "c"])
    assert se == pytest.approx(math.sqrt(1 / 12))
    assert clustered_standard_error([1, 0], ["a", "a"]) == 0.0  # one cluster: no between-item spread
    with pytest.raises(ValueError):
        clustered_standard_error([1.0], ["a", "b"])


def test_item_means_give_the_interval_of_the_samples() -> None:
    """The leaderboard's interval (from the store's per-item means) equals results.json's."""
    from proctor.stats.intervals import item_means_ci

    scores = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    items = ["a", "b", "c"] * 3
    want = accuracy_ci(scores, items)
    means = [np.mean(scores[i::3]) for i in range(3)]
    got = item_means_ci(means, [3, 3, 3])
    assert (got.ci_low, got.ci_high, got.method) == (want.ci_low, want.ci_high, want.method)
    assert item_means_ci([0.0] * 7, [4] * 7).ci_high == pytest.approx(0.3543, abs=1e-4)
    graded = item_means_ci([0.25, 0.5, 1.0], [1, 1, 1])
    assert graded.method == "bootstrap"


def test_bootstrap_ci_is_deterministic_and_covers_mean() -> None:
    v = np.random.default_rng(1).random(300)
    assert bootstrap_ci(v, seed=3) == bootstrap_ci(v, seed=3)
    lo, hi = bootstrap_ci(v)
    assert lo < v.mean() < hi and hi - lo < 0.1


def test_pass_at_k_formula() -> None:
    assert pass_at_k(5, 2, 1) == pytest.approx(0.4)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))  # 0.7
    assert pass_at_k(5, 0, 3) == 0.0
    assert pass_at_k(4, 2, 3) == 1.0  # fewer wrong samples than k
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_binom_cdf_known_values() -> None:
    assert binom_cdf(2, 4) == pytest.approx(11 / 16)
    assert binom_cdf(500, 1000) == pytest.approx(0.5126125, abs=1e-6)


def test_calibration_tiny_example() -> None:
    dists = [[0.8, 0.2], [0.6, 0.4], [0.3, 0.7]]
    r = calibration(dists, [0, 1, 1])
    assert r.brier == pytest.approx((0.08 + 0.72 + 0.18) / 3)
    # confidence .8 (right), .6 (wrong), .7 (right), each alone in its bin
    assert r.ece == pytest.approx((0.2 + 0.6 + 0.3) / 3)
    assert r.log_loss == pytest.approx(-(math.log(0.8) + math.log(0.4) + math.log(0.7)) / 3)
    assert len(r.bins) == 10 and sum(b.n for b in r.bins) == 3
    assert r.bins[6].model_dump() == {"lo": 0.6, "hi": 0.7, "n": 1, "confidence": 0.6, "accuracy": 0.0}


def test_calibration_tie_at_max_is_not_correct() -> None:
    assert calibration([[0.5, 0.5]], [0]).bins[5].accuracy == 0.0


def test_binary_calibration() -> None:
    r = binary_calibration([0.9, 0.9, 0.2], [1, 0, 0])
    assert r.brier == pytest.approx((0.01 + 0.81 + 0.04) / 3)
    # bin .9: conf .9 acc .5; bin .2: conf .2 acc 0 → (2·.4 + .2)/3
    assert r.ece == pytest.approx((2 * 0.4 + 0.2) / 3)


def test_difficulty_bands() -> None:
    assert [difficulty_band(d) for d in (None, 0.0, 0.19, 0.2, 0.99, 1.0)] == [
        "unknown",
        "0.0-0.2",
        "0.0-0.2",
        "0.2-0.4",
        "0.8-1.0",
        "0.8-1.0",
    ]


def sample(item: str, outcome: Outcome, score: float | None, epoch: int = 0, **kw: Any) -> Sample:
    return Sample(sample_id=f"{item}#{epoch}", item_id=item, epoch=epoch, outcome=outcome, score=score, **kw)


C, W, P, N, E = Outcome.CORRECT, Outcome.WRONG, Outcome.PARTIAL, Outcome.NO_ANSWER, Outcome.ERROR
METRIC_KEYS = {
    "n_ambiguous",
    "ambiguous_rate",
    "n_truncated",
    "truncated_rate",
    "n",
    "n_scored",
    "n_items",
    "n_errors",
    "n_unscored",
    "n_no_answer",
    "accuracy",
    "ci_low",
    "ci_high",
    "ci_method",
    "no_answer_rate",
    "input_tokens",
    "output_tokens",
    "latency_s_mean",
    "n_clusters",  # the four below: null unless results are clustered by an item attribute (--cluster)
    "design_effect",
    "naive_ci_low",
    "naive_ci_high",
    "cluster_df",
    "cluster_note",
    "truncated_low",
    "truncated_high",
}


def test_summarize_schema_and_values() -> None:
    samples = [
        sample(
            "q1",
            C,
            1.0,
            category="math",
            subcategory="alg",
            modality="choiceof4",
            difficulty=0.1,
            input_tokens=10,
            output_tokens=5,
            latency_s=1.0,
        ),
        sample(
            "q2",
            W,
            0.0,
            category="math",
            modality="choiceof4",
            difficulty=0.5,
            input_tokens=10,
            output_tokens=5,
            latency_s=3.0,
        ),
        sample("q3", N, 0.0, category="bio", modality="single-value", extraction_rule="none"),
        sample("q4", E, None, category="bio", modality="single-value", error="HTTP 500"),
        sample("q5", C, 1.0, category="bio", modality="single-value", difficulty=1.0),
        sample("q6", Outcome.UNSCORED, None, category="bio", modality="single-value"),
    ]
    r = summarize(samples)
    written = r.as_dict()  # the JSON shape of results.json
    assert set(written) == {
        "schema_version",
        "overall",
        "by_category",
        "by_subcategory",
        "by_modality",
        "by_difficulty",
        "macro_accuracy",
        "metrics",
        "truncated_as",
        "no_answer",
        "errors",
        "failures",  # q4's HTTP 500: the infrastructure's share (metrics.failures)
    }
    assert written["errors"] == {"HTTP 500": 1} and written["metrics"] == {}
    assert (written["failures"]["infrastructure"], written["failures"]["by_class"].get("server")) == (1, 1)
    o = r.overall
    assert set(o.model_dump()) == METRIC_KEYS
    assert (o.n, o.n_scored, o.n_errors, o.n_unscored, o.n_no_answer) == (6, 4, 1, 1, 1)
    assert o.accuracy == 0.5 and o.ci_method == "wilson"  # the error is not a wrong answer
    assert o.no_answer_rate == 0.25
    assert (o.input_tokens, o.output_tokens, o.latency_s_mean) == (20, 10, 2.0)
    assert r.by_category["math"].accuracy == 0.5
    assert r.by_category["bio"].accuracy == 0.5
    assert r.macro_accuracy == 0.5
    assert list(r.by_subcategory) == ["alg"]
    assert set(r.by_modality) == {"choiceof4", "single-value"}
    assert set(r.by_difficulty) == {"0.0-0.2", "0.4-0.6", "0.8-1.0", "unknown"}
    assert all(set(m.model_dump()) == METRIC_KEYS for m in r.by_category.values())
    json.dumps(written, allow_nan=False)  # results.json must be strict JSON


def test_no_answer_guess_credits_one_over_k_deterministically() -> None:
    samples = [
        sample("a", N, 0.0, modality="choiceof4"),
        sample("b", N, 0.0, modality="choiceof10"),
        sample("c", N, 0.0, modality="single-value"),  # an open answer has no finite options: no credit
        sample("d", C, 1.0, modality="choiceof4"),
        sample("e", N, 0.0, modality="boolean"),  # True/False: 1/2
        sample("f", N, 0.0, modality="ternary"),  # True/False/Unknown: 1/3
    ]
    assert summarize(samples).overall.accuracy == pytest.approx(1 / 6)  # default: unanswered is wrong
    guessed = summarize(samples, no_answer="guess")
    assert guessed.no_answer == "guess"
    assert guessed.overall.accuracy == pytest.approx((0.25 + 0.1 + 0 + 1 + 1 / 2 + 1 / 3) / 6)
    assert guessed.overall.n_no_answer == 5 and guessed.overall.ci_method == "bootstrap"
    assert summarize(samples, no_answer="guess") == guessed  # no random draw
    with pytest.raises(ValueError, match="wrong or guess"):
        summarize(samples, no_answer="random")


def test_ambiguous_rate_counts_only_samples_both_readers_read() -> None:
    samples = [
        sample("a", C, 1.0, ambiguous=True, category="x"),
        sample("b", W, 0.0, ambiguous=False, category="x"),
        sample("c", W, 0.0, ambiguous=False, category="y"),
        sample("d", E, None, error="HTTP 500", category="y"),  # never read: not in the denominator
    ]
    r = summarize(samples, extract="robust")
    assert (r.overall.n_ambiguous, r.overall.ambiguous_rate) == (1, pytest.approx(1 / 3))
    assert r.by_category["y"].ambiguous_rate == 0.0 and r.extract == "robust"
    assert summarize([sample("e", C, 1.0)]).overall.ambiguous_rate is None


def test_summarize_macro_differs_from_micro() -> None:
    samples = [sample(f"a{i}", C, 1.0, category="a") for i in range(3)] + [sample("b0", W, 0.0, category="b")]
    r = summarize(samples)
    assert r.overall.accuracy == 0.75 and r.macro_accuracy == 0.5


def test_summarize_graded_uses_bootstrap() -> None:
    r = summarize([sample("a", P, 0.5), sample("b", C, 1.0), sample("c", W, 0.0)])
    assert r.overall.ci_method == "bootstrap" and r.overall.accuracy == 0.5


def test_summarize_epochs() -> None:
    # item x: 2/3 correct; item y: 0/3 correct
    samples = [sample("x", C if e < 2 else W, 1.0 if e < 2 else 0.0, epoch=e) for e in range(3)]
    samples += [sample("y", W, 0.0, epoch=e) for e in range(3)]
    r = summarize(samples)
    assert r.epochs is not None
    dumped = r.epochs.model_dump()
    pass_at = dumped.pop("pass_at")
    assert dumped == {"k": 3, "mean_at_k": pytest.approx(1 / 3), "pass_at_k": 0.5,
                      "item_sd_mean": pytest.approx(0.5 * 0.5773502691896258),
                      "items_by_correct": {"0": 1, "1": 0, "2": 1, "3": 0}}
    # Chen et al.'s unbiased pass@k per item (x: 2 of 3 right, y: none), averaged: pass@1 = mean@k, pass@3 = pass_at_k
    assert {k: v["value"] for k, v in pass_at.items()} == {"1": pytest.approx(1 / 3), "2": pytest.approx(0.5),
                                                           "3": pytest.approx(0.5)}
    assert r.overall.ci_method == "clustered_wilson"
    assert epoch_spread(samples[:3] + samples[3:4]) is not None
    assert epoch_spread([sample("x", C, 1.0)]) is None


def test_summarize_calibration_and_acc_norm() -> None:
    """Calibration from suite contexts' distributions (a known expected index); acc_norm from choice samples."""
    dists = [([0.8, 0.2], 0, C), ([0.6, 0.4], 1, W), ([0.3, 0.7], 1, C)]
    samples = [sample(f"s{i}", o, 1.0 if o is C else 0.0, mode="logprob",
                      details={"kind": "suite", "distribution": d, "expected": e})
               for i, (d, e, o) in enumerate(dists)]
    samples += [sample(f"c{i}", o, 1.0 if o is C else 0.0, mode="logprob",
                       details={"kind": "choice", "acc_norm_correct": ok})
                for i, (o, ok) in enumerate(((C, True), (W, True), (C, False)))]
    samples.append(sample("s4", E, None, mode="logprob"))
    r = summarize(samples)
    assert r.calibration.brier == pytest.approx((0.08 + 0.72 + 0.18) / 3)
    assert r.calibration is not None and len(r.calibration.bins) == 10
    assert r.acc_norm.accuracy == pytest.approx(2 / 3) and r.acc_norm.n_errors == 1
    assert r.acc_norm is not None and set(r.acc_norm.model_dump()) == METRIC_KEYS


def test_summarize_binary_calibration_from_p_correct() -> None:
    r = summarize(
        [sample("a", C, 1.0, details={"p_correct": 0.9}), sample("b", W, 0.0, details={"p_correct": 0.9})]
    )
    assert r.calibration.brier == pytest.approx((0.01 + 0.81) / 2)


def test_winner_curse_null_simulation() -> None:
    """Twenty equally good models (true accuracy 0.6): the winner's observed score is inflated; the
    adjusted estimates are below it and, averaged over simulated datasets, closer to the truth."""
    truth, obs, adj, split, stays = 0.6, [], [], [], []
    for rep in range(8):
        rng = np.random.default_rng(100 + rep)
        scores = {f"m{i:02d}": (rng.random(200) < truth).astype(float) for i in range(20)}
        r = selection_adjusted(scores, n_boot=400, seed=rep, n_splits=100)
        assert r["observed"] == max(v.mean() for v in scores.values())
        assert r["adjusted"] <= r["observed"] and r["split_sample"] <= r["observed"]
        assert sum(m["p_best"] for m in r["ranking"]) == pytest.approx(1.0)
        accs = [m["accuracy"] for m in r["ranking"]]
        assert accs == sorted(accs, reverse=True)
        obs.append(r["observed"])
        adj.append(r["adjusted"])
        split.append(r["split_sample"])
        stays.append(r["p_top_stays_top"])
    assert np.mean(obs) - truth > 0.05  # the winner's curse is real
    assert abs(np.mean(adj) - truth) < 0.6 * (np.mean(obs) - truth)
    assert abs(np.mean(split) - truth) < 0.4 * (np.mean(obs) - truth)
    assert np.mean(stays) < 0.6  # under the null the ranking rarely holds


def test_winner_curse_clear_winner_is_stable() -> None:
    rng = np.random.default_rng(3)
    scores = {"strong": (rng.random(300) < 0.9).astype(float), "weak": (rng.random(300) < 0.4).astype(float)}
    r = selection_adjusted(scores, n_boot=500, seed=0)
    assert r["top"] == "strong" and r["p_top_stays_top"] > 0.99
    assert r["adjusted"] == pytest.approx(r["observed"], abs=0.005)


def test_winner_curse_needs_paired_items() -> None:
    with pytest.raises(ValueError):
        selection_adjusted({"a": np.ones(3), "b": np.ones(4)})


@pytest.mark.parametrize("n", [1, 7, 1001, 5003, 70001])
def test_bootstrap_replicates_do_not_depend_on_the_block_they_are_drawn_in(n: int) -> None:
    """A large n is drawn a few rows at a time (memory flat in the items, #40): the replicates equal those of
    the 256-row draws the intervals were first computed with, to the last bit, 1-D and 2-D."""
    from proctor.stats.intervals import bootstrap_means

    values = np.random.default_rng(1).random((n, 2))
    rng, reference = np.random.default_rng(3), []
    for start in range(0, 600, 256):
        idx = rng.integers(0, n, size=(min(256, 600 - start), n))
        reference.append(np.stack([values[:, 0][idx].mean(axis=1), values[:, 1][idx].mean(axis=1)], axis=1))
    expected = np.concatenate(reference)
    assert np.array_equal(bootstrap_means(values, 600, seed=3), expected)
    assert np.array_equal(bootstrap_means(values[:, 0], 600, seed=3), expected[:, 0])
