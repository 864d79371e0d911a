"""Prediction-powered inference (`proctor.stats.ppi`) held to the authors' package, ppi-python (`ppi_py`), and a
biased judge corrected at its nominal coverage in simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from proctor.stats.intervals import wilson_interval
from proctor.stats.ppi import labels_needed, power_tuned_lambda, ppi_mean, z_of

ppi_py = pytest.importorskip("ppi_py")  # the oracle (dev extra)

TRUTH = 0.6  # the population accuracy
RIGHT, WRONG = 0.9, 0.3  # the judge says "correct" with p 0.9 when the answer is right, 0.3 when it is wrong


def _judged(rng: np.random.Generator, n_items: int) -> tuple[np.ndarray, np.ndarray]:
    """(true verdicts, the biased judge's verdicts) of n_items answers."""
    truth = rng.random(n_items) < TRUTH
    judge = np.where(truth, rng.random(n_items) < RIGHT, rng.random(n_items) < WRONG)
    return truth.astype(float), judge.astype(float)


@pytest.mark.parametrize("fraction", [0.01, 0.05, 0.2, 0.5, 0.9])
@pytest.mark.parametrize("lam", [None, 1.0, 0.0, 0.4])
def test_the_estimate_and_interval_are_ppi_pythons(fraction: float, lam: float | None) -> None:
    truth, judge = _judged(np.random.default_rng(7), 800)
    n = int(800 * fraction)
    y, yhat, unlabelled = truth[:n], judge[:n], judge[n:]
    got = ppi_mean(y, yhat, unlabelled, lam=lam, alpha=0.05)
    point = float(np.squeeze(ppi_py.ppi_mean_pointestimate(y, yhat, unlabelled, lam=lam)))
    low, high = (float(np.squeeze(v)) for v in ppi_py.ppi_mean_ci(y, yhat, unlabelled, alpha=0.05, lam=lam))
    assert got.estimate == pytest.approx(point, abs=1e-9)
    assert (got.ci_low, got.ci_high) == pytest.approx((low, high), abs=1e-9)


def test_graded_predictions_agree_too() -> None:
    """Partial credit (scores in [0, 1]) as predictions: the same formulas."""
    rng = np.random.default_rng(3)
    y, yhat, unlabelled = rng.random(60) < 0.5, rng.random(60), rng.random(400)
    got = ppi_mean(y.astype(float), yhat, unlabelled)
    low, high = ppi_py.ppi_mean_ci(y.astype(float), yhat, unlabelled, alpha=0.05)
    assert (got.ci_low, got.ci_high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)


def test_lambda_is_clipped_and_zero_for_constant_predictions() -> None:
    y = np.array([1.0, 0.0, 1.0, 1.0])
    assert power_tuned_lambda(y, np.ones(4), np.ones(10)) == 0.0  # every verdict "correct": nothing to learn
    assert power_tuned_lambda(y, 1 - y, np.array([0.0, 1.0])) == 0.0  # anti-correlated: clipped at 0
    assert ppi_mean(y, np.ones(4), np.ones(10)).estimate == pytest.approx(0.75)
    with pytest.raises(ValueError):
        ppi_mean([1.0], [1.0], [0.0])


def test_labels_needed_inverts_the_variance() -> None:
    sd_pred, sd_resid, big_n = 0.47, 0.4, 2000
    n = labels_needed(0.05, big_n, sd_pred, sd_resid)
    assert n is not None

    def half(k: int) -> float:
        return z_of(0.05) * math.sqrt(sd_pred ** 2 / big_n + sd_resid ** 2 / k)

    assert half(n) <= 0.05 < half(n - 1)
    assert labels_needed(0.01, 100, 0.5, 0.4) is None  # the predictions' own noise at 100 items is wider


def _coverage(n_sims: int, n_items: int, n_labels: int) -> tuple[float, float]:
    """(the corrected interval's coverage of TRUTH, the judge's plain Wilson interval's) over n_sims runs."""
    rng = np.random.default_rng(2026)
    corrected = plain = 0
    for _ in range(n_sims):
        truth, judge = _judged(rng, n_items)
        labelled = rng.permutation(n_items) < n_labels  # a random subset labelled by humans
        got = ppi_mean(truth[labelled], judge[labelled], judge[~labelled])
        corrected += got.ci_low <= TRUTH <= got.ci_high
        low, high = wilson_interval(float(judge.sum()), n_items)
        plain += low <= TRUTH <= high
    return corrected / n_sims, plain / n_sims


def test_a_biased_judge_is_corrected_at_the_nominal_rate() -> None:
    """500 runs of 1,000 items, 100 labelled: the corrected interval covers the truth within binomial error of
    95% (3 sd = 2.9 points); the judge's own interval (centred on 0.66) almost never does."""
    corrected, plain = _coverage(500, 1000, 100)
    assert abs(corrected - 0.95) <= 3 * math.sqrt(0.95 * 0.05 / 500), corrected
    assert plain < 0.05, plain
