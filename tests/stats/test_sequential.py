"""The anytime-valid confidence sequence of `run --stop-when-decided` (proctor.stats.sequential): looked at after
every batch, it decides wrongly at most alpha of the time, where a fixed-sample interval looked at as often does
not; it covers the true mean at every time at once; its fast path and its one-look path agree."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from system_tools import require

from proctor.stats.sequential import TRUNCATION, bets, decided_at, look, max_log_capital

ALPHA, DROP = 0.05, 0.05
N, EVERY, REPS = 400, 10, 2000
LOOKS = np.arange(EVERY, N + 1, EVERY)


def _paired(rng: np.random.Generator, reps: int, n: int, p_up: float, p_down: float) -> np.ndarray:
    """Paired 0/1 differences: +1 (candidate right, baseline wrong) with p_up, −1 with p_down, else 0."""
    u = rng.random((reps, n))
    return np.where(u < p_up, 1.0, np.where(u < p_up + p_down, -1.0, 0.0))


def _naive_first_decision(d: np.ndarray) -> np.ndarray:
    """A fixed-sample 95% interval for the mean difference (mean ± 1.96 sd/√n), checked at every look: whether it
    ever excludes −DROP (what stopping the first time `gate`'s kind of interval decides amounts to)."""
    n = LOOKS.astype(float)
    sums = np.cumsum(d, axis=1)[:, LOOKS - 1]
    squares = np.cumsum(d * d, axis=1)[:, LOOKS - 1]
    mean = sums / n
    sd = np.sqrt(np.maximum(squares / n - mean**2, 0) * n / (n - 1))
    half = 1.959963984540054 * sd / np.sqrt(n)
    return ((mean - half > -DROP) | (mean + half < -DROP)).any(axis=1)


def test_at_the_margin_the_sequence_errs_at_most_alpha_where_peeking_at_a_fixed_interval_does_not() -> None:
    rng = np.random.default_rng(20231)
    d = _paired(rng, REPS, N, 0.10, 0.15)  # candidate − baseline = −5 points exactly: any decision is wrong
    sequential = (decided_at(d, DROP, ALPHA, LOOKS)[:, 0] >= 0).mean()
    naive = _naive_first_decision(d).mean()
    mean, half = d.mean(axis=1), 1.959963984540054 * d.std(axis=1, ddof=1) / math.sqrt(N)
    once = ((mean - half > -DROP) | (mean + half < -DROP)).mean()  # the same interval looked at once, at n = 400
    assert sequential <= ALPHA, sequential  # measured 0.021 of 2,000
    assert naive > 3 * ALPHA, naive  # measured 0.35: 40 looks at a 95% interval
    assert once < 0.08, once  # measured 0.050: one look is fine; the looks break it


def test_a_clearly_worse_candidate_stops_early_with_no_go_and_a_clearly_good_one_with_go() -> None:
    rng = np.random.default_rng(7)
    worse = decided_at(_paired(rng, 200, N, 0.05, 0.35), DROP, ALPHA, LOOKS)  # 30 points worse
    assert (worse[:, 1] == -1).all() and np.median(LOOKS[worse[:, 0]]) <= 100
    same = decided_at(_paired(rng, 200, N, 0.02, 0.02), 0.10, ALPHA, LOOKS)  # equal, 10 points allowed
    assert (same[:, 1] == 1).mean() > 0.95 and np.median(LOOKS[same[same[:, 0] >= 0, 0]]) <= 200


def test_the_sequence_covers_the_true_mean_at_every_time_at_once() -> None:
    """Graded scores (not only 0/1): the truth is rejected at some time, either side, at most alpha of the time."""
    rng = np.random.default_rng(11)
    cand, base = rng.beta(2, 3, (REPS, N)), rng.beta(3, 3, (REPS, N))
    x = (cand - base + 1) / 2
    truth = (2 / 5 - 3 / 6 + 1) / 2
    lam = bets(x, ALPHA)
    threshold = math.log(2 / ALPHA)
    missed = (max_log_capital(x, lam, truth, 1) >= threshold) | (max_log_capital(x, lam, truth, -1) >= threshold)
    assert missed.mean() <= ALPHA


def _capital_by_hand(x: list[float], alpha: float, m: float, side: int) -> float:
    """The paper's recursion item by item (Waudby-Smith & Ramdas 2023, §4.2): the running maximum of log K±."""
    total, best, mu, var, s, ss = 0.0, 0.0, 0.5, 0.25, 0.0, 0.0
    for t, xi in enumerate(x, start=1):
        bet = math.sqrt(2 * math.log(2 / alpha) / (var * t * math.log(1 + t)))
        bet = min(bet, TRUNCATION / (m if side == 1 else 1 - m))
        total += math.log(1 + side * bet * (xi - m))
        best = max(best, total)
        s += xi
        mu = (0.5 + s) / (t + 1)
        ss += (xi - mu) ** 2
        var = (0.25 + ss) / (t + 1)
    return best


@pytest.mark.parametrize("m", [0.2, 0.475, 0.5, 0.8])
def test_the_capital_is_the_papers_recursion(m: float) -> None:
    x = list(np.random.default_rng(3).random(60))
    arr = np.array(x)
    for side in (1, -1):
        assert float(max_log_capital(arr, bets(arr, ALPHA), m, side)) == pytest.approx(  # type: ignore[arg-type]
            _capital_by_hand(x, ALPHA, m, side), rel=1e-12)


def test_one_look_agrees_with_the_fast_path_and_its_bounds_with_its_decision() -> None:
    rng = np.random.default_rng(5)
    d = _paired(rng, 40, N, 0.06, 0.16)  # 10 points worse: decided one way or the other, mostly early
    fast = decided_at(d, DROP, ALPHA, LOOKS)
    for row, (first, side) in zip(d, fast, strict=True):
        at = LOOKS[first] if first >= 0 else N
        got = look(row[:at], DROP, ALPHA)
        assert got.decision == ({1: "GO", -1: "NO-GO"}[int(side)] if first >= 0 else "INCONCLUSIVE")
        if first > 0:
            assert look(row[: LOOKS[first - 1]], DROP, ALPHA).decision == "INCONCLUSIVE"
        assert -1 <= got.ci_low <= got.ci_high <= 1
        if got.decision == "NO-GO":
            assert got.ci_high <= -DROP + 1e-9
        if got.decision == "GO":
            assert got.ci_low >= -DROP - 1e-9


def test_bad_differences_are_refused() -> None:
    with pytest.raises(ValueError, match=r"\[-1, 1\]"):
        look(np.array([0.5, 1.5]), DROP)
    assert look(np.array([]), DROP).decision == "INCONCLUSIVE"


# ---------------------------------------------------------------- against confseq (Howard & Waudby-Smith's package)


@pytest.fixture
def confseq_betting(monkeypatch: pytest.MonkeyPatch) -> object:
    """confseq.betting, the authors' own implementation of the betting confidence sequences. confseq 0.0.11 (the
    latest on PyPI) still names `np.float_` in its annotations, which NumPy 2 removed: the alias is put back while
    it imports. Its wheel is built against a pybind11 that knows Python 3.11 (.ci/confseq.sh)."""
    require("confseq")
    monkeypatch.setattr(np, "float_", np.float64, raising=False)
    return importlib.import_module("confseq.betting")


def _differences(seed: int, n: int, graded: bool) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if graded:  # scores in [0, 1] on both sides: differences anywhere in [-1, 1]
        return np.round(rng.beta(2, 2, n) - rng.beta(2, 3, n), 3)
    return _paired(rng, 1, n, 0.04 + 0.06 * (seed % 3), 0.2)[0]  # −16, −10 or −4 points


@pytest.mark.parametrize(("seed", "graded"), [(s, g) for s in range(4) for g in (False, True)])
def test_the_capital_equals_confseqs_betting_martingale(confseq_betting: object, seed: int, graded: bool) -> None:
    """confseq's hedged process max(½K⁺, ½K⁻) with its default predictable-mixture bets at α/2 and truncation
    ½/m, ½/(1 − m) (theta ½, trunc_scale ½), at every time and many nulls m, is proctor's capital."""
    betting_mart = confseq_betting.betting_mart  # type: ignore[attr-defined]
    x = (_differences(seed, 300, graded) + 1) / 2
    lam = bets(x, ALPHA)
    for m in np.linspace(0.02, 0.98, 25):
        theirs = betting_mart(x, m, alpha=ALPHA, theta=0.5, convex_comb=False, trunc_scale=TRUNCATION, m_trunc=True)
        for side in (1, -1):
            room = m if side == 1 else 1 - m
            mine = np.cumsum(np.log1p(side * np.minimum(lam, TRUNCATION / room) * (x - m)))
            assert max_log_capital(x, lam, m, side) == pytest.approx(max(0.0, mine.max()), abs=1e-12)
        both = np.maximum(*(np.cumsum(np.log1p(s * np.minimum(lam, TRUNCATION / r) * (x - m)))
                            for s, r in ((1, m), (-1, 1 - m))))
        assert np.allclose(np.log(2 * theirs), both, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("seed", "graded"), [(s, g) for s in range(3) for g in (False, True)])
def test_the_bounds_agree_with_confseqs_betting_cs(confseq_betting: object, seed: int, graded: bool) -> None:
    """confseq's betting CS (a grid of 1,000 nulls, widened by one step, intersected over time) holds proctor's
    bounds, each within two grid steps, at several looks; and the two decide the gate alike wherever the margin is
    not within those steps of a bound."""
    betting_cs = confseq_betting.betting_cs  # type: ignore[attr-defined]
    breaks = 1000
    d = _differences(100 + seed, 240, graded)
    low, high = betting_cs((d + 1) / 2, alpha=ALPHA, breaks=breaks, running_intersection=True, theta=0.5,
                           convex_comb=False, trunc_scale=TRUNCATION, m_trunc=True)
    for t in (20, 60, 120, 240):
        got = look(d[:t], DROP, ALPHA)
        lo, hi = (got.ci_low + 1) / 2, (got.ci_high + 1) / 2  # back on confseq's [0, 1] scale
        assert low[t - 1] - 1e-9 <= lo <= low[t - 1] + 2 / breaks + 1e-9, (t, lo, low[t - 1])
        assert high[t - 1] - 2 / breaks - 1e-9 <= hi <= high[t - 1] + 1e-9, (t, hi, high[t - 1])
        m0 = (1 - DROP) / 2
        if min(abs(m0 - low[t - 1]), abs(m0 - high[t - 1])) > 2 / breaks:
            theirs = "GO" if low[t - 1] > m0 else "NO-GO" if high[t - 1] < m0 else "INCONCLUSIVE"
            assert got.decision == theirs, t
