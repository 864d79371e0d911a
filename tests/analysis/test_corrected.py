"""compare and gate with human labels: the paired judge-corrected difference equals ppi-python's PPI++ on the
per-item differences, and the gate decides on it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from history_runs import write_run  # tests/ is on sys.path (tests/conftest.py's directory)

from proctor.analysis.corrected import corrected_difference, item_labels, labels_by_run, with_corrected
from proctor.analysis.gate import Decision, gate
from proctor.core.spec import HumanLabels
from proctor.run.store import RunScores, load_run_scores
from proctor.util.errors import InputError

N = 300


def _labels(labels: dict[str, bool]) -> HumanLabels:
    return HumanLabels(path="l.jsonl", sha256="0" * 64, labels=labels)


def _pair(tmp_path: Path, seed: int = 0) -> tuple[RunScores, RunScores, np.ndarray, np.ndarray]:
    """Two runs of N items whose verdicts are a biased judge's; (A, B, A's truth, B's truth)."""
    rng = np.random.default_rng(seed)
    truth_a, truth_b = rng.random(N) < 0.7, rng.random(N) < 0.6

    def judged(truth: np.ndarray) -> np.ndarray:
        return np.where(truth, rng.random(N) < 0.9, rng.random(N) < 0.3)

    a = write_run(tmp_path, "run-a", "hf:a", {f"item-{i}": float(v) for i, v in enumerate(judged(truth_a))})
    b = write_run(tmp_path, "run-b", "hf:b", {f"item-{i}": float(v) for i, v in enumerate(judged(truth_b))})
    return load_run_scores(a), load_run_scores(b), truth_a, truth_b


def test_the_corrected_difference_is_ppi_pythons_on_the_differences(tmp_path: Path) -> None:
    ppi_py = pytest.importorskip("ppi_py")
    a, b, ta, tb = _pair(tmp_path)
    la = _labels({f"item-{i}": bool(ta[i]) for i in range(80)})
    lb = _labels({f"item-{i}#0": bool(tb[i]) for i in range(40, 120)})  # sample ids label too
    got = corrected_difference(a, b, la, lb)
    ids = sorted(a.items)
    pred = np.array([a.items[i].score - b.items[i].score for i in ids])
    both = np.array([40 <= int(i.split("-")[1]) < 80 for i in ids])
    y = np.array([float(ta[int(i.split("-")[1])]) - float(tb[int(i.split("-")[1])]) for i in ids])
    low, high = ppi_py.ppi_mean_ci(y[both], pred[both], pred[~both], alpha=0.05)
    point = ppi_py.ppi_mean_pointestimate(y[both], pred[both], pred[~both])
    assert (got.n, got.n_labelled) == (N, 40)
    assert got.diff == pytest.approx(float(np.squeeze(point)), abs=1e-9)
    assert (got.ci_low, got.ci_high) == pytest.approx((float(np.squeeze(low)), float(np.squeeze(high))), abs=1e-9)
    assert got.judge_diff == pytest.approx(pred.mean()) and "judge-corrected A − B" in got.text()


def test_too_few_shared_labels_say_so(tmp_path: Path) -> None:
    a, b, _, _ = _pair(tmp_path, 1)
    got = corrected_difference(a, b, _labels({"item-0": True}), _labels({"item-1": False}))
    assert got.diff is None and "n/a" in got.text()
    assert item_labels(a, _labels({"item-0": True, "nowhere": False})) == {"item-0": True}


def test_the_gate_decides_on_the_corrected_difference(tmp_path: Path) -> None:
    a, b, ta, tb = _pair(tmp_path, 2)
    labels = [_labels({f"item-{i}": bool(t[i]) for i in range(N)}) for t in (ta, tb)]  # every item labelled
    corrected = corrected_difference(a, b, *labels)
    assert corrected.method == "labels" and corrected.diff == pytest.approx(float(ta.mean() - tb.mean()))
    plain = gate(a, b, 0.5)
    assert plain.decision is Decision.GO
    result = with_corrected(gate(a, b, 0.5), corrected)
    assert result.checks[0].group.startswith("overall, judge-corrected") and result.note is not None
    assert (result.checks[0].ci_low, result.checks[0].ci_high) == (corrected.ci_low, corrected.ci_high)
    assert result.decision is Decision.GO  # A − B ≈ +0.1: far above −0.5
    worse = with_corrected(gate(b, a, 0.0), corrected_difference(b, a, labels[1], labels[0]))
    assert worse.checks[0].ci_high is not None and worse.checks[0].ci_high < 0
    assert worse.decision is Decision.NO_GO and worse.deciding is worse.checks[0]
    unlabelled = with_corrected(plain, corrected_difference(a, b, _labels({"x": True}), _labels({"y": True})))
    assert unlabelled.decision is plain.decision and "gated on the verdicts" in (unlabelled.note or "")


def test_labels_by_run_names_the_run() -> None:
    assert labels_by_run(["a=x.jsonl", "b=y.csv"], ["a", "b"]) == {"a": Path("x.jsonl"), "b": Path("y.csv")}
    assert labels_by_run(["x.jsonl"], ["a"]) == {"a": Path("x.jsonl")}
    with pytest.raises(InputError, match="RUN=FILE"):
        labels_by_run(["x.jsonl"], ["a", "b"])
    with pytest.raises(InputError, match="none of the runs"):
        labels_by_run(["c=x.jsonl"], ["a", "b"])
