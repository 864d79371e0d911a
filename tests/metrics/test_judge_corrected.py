"""The judge-corrected block (`--human-labels`): PPI over a run's samples, their labels matched by item or sample
id, and the judge's agreement with the humans held to statsmodels' κ and `krippendorff`'s α."""

from __future__ import annotations

import numpy as np
import pytest

from proctor.core.spec import HumanLabels
from proctor.log.runlog import Outcome, Sample
from proctor.metrics.judge_corrected import agreement, corrected_of
from proctor.metrics.results import summarize
from proctor.stats.ppi import ppi_mean


def _s(item: str, score: float | None, epoch: int = 0) -> Sample:
    outcome = Outcome.ERROR if score is None else Outcome.CORRECT if score == 1 else Outcome.WRONG
    return Sample(sample_id=f"{item}#{epoch}", item_id=item, epoch=epoch, outcome=outcome, score=score,
                  error="boom" if score is None else None)


def _labels(labels: dict[str, bool]) -> HumanLabels:
    return HumanLabels(path="l.jsonl", sha256="0" * 64, labels=labels)


def _run(seed: int = 0, n: int = 200, n_labels: int = 40) -> tuple[list[Sample], dict[str, bool]]:
    rng = np.random.default_rng(seed)
    truth = rng.random(n) < 0.6
    judge = np.where(truth, rng.random(n) < 0.9, rng.random(n) < 0.3)
    samples = [_s(f"q{i}", float(j)) for i, j in enumerate(judge)]
    return samples, {f"q{i}": bool(truth[i]) for i in range(n_labels)}


def test_the_block_is_ppi_over_the_scored_samples() -> None:
    samples, labels = _run()
    block = corrected_of([*samples, _s("err", None)], _labels({**labels, "err": True, "nowhere": False}))
    pred = np.array([s.score for s in samples])
    y = np.array([labels[f"q{i}"] for i in range(40)], dtype=float)
    want = ppi_mean(y, pred[:40], pred[40:])
    assert (block.n, block.n_labelled, block.n_unmatched) == (200, 40, 2)  # the errored sample has no verdict
    assert (block.accuracy, block.ci_low, block.ci_high, block.lam) == pytest.approx(
        (want.estimate, want.ci_low, want.ci_high, want.lam), abs=1e-12)
    assert block.judge_accuracy == pytest.approx(pred.mean()) and block.human_accuracy == pytest.approx(y.mean())
    assert block.method == "ppi++" and block.source == "l.jsonl"


def test_summarize_writes_the_block_from_the_manifests_labels() -> None:
    from types import SimpleNamespace

    samples, labels = _run(1)
    manifest = SimpleNamespace(spec=SimpleNamespace(human_labels=_labels(labels)), cluster=None)
    results = summarize(samples, manifest=manifest)  # type: ignore[arg-type]
    assert results.judge_corrected == corrected_of(samples, _labels(labels))
    assert "judge_corrected" in results.as_dict()
    assert summarize(samples).judge_corrected is None  # no labels: no block


def test_labels_by_sample_id_under_epochs() -> None:
    """With two epochs an item id is ambiguous (it matches nothing); a sample id `ITEM#EPOCH` labels one answer."""
    samples = [_s("a", 1.0, 0), _s("a", 0.0, 1), _s("b", 1.0, 0), _s("b", 1.0, 1), _s("c", 0.0, 0)]
    block = corrected_of(samples, _labels({"a": True, "a#1": True, "b#0": False, "c": False}))
    assert (block.n_labelled, block.n_unmatched) == (3, 1)
    assert block.agreement.confusion == {"correct/wrong": 1, "wrong/correct": 1, "wrong/wrong": 1}


def test_too_few_labels_and_every_sample_labelled() -> None:
    samples, _ = _run(2, n=10, n_labels=0)
    one = corrected_of(samples, _labels({"q0": True}))
    assert one.accuracy is None and one.note is not None and "2 or more" in one.note
    every = corrected_of(samples, _labels({f"q{i}": i % 2 == 0 for i in range(10)}))
    assert (every.method, every.accuracy, every.lam) == ("labels", 0.5, 0.0)
    assert every.ci_low == pytest.approx(0.5 - 1.959963984540054 * 0.5 / np.sqrt(10))


@pytest.mark.parametrize("seed", range(4))
def test_agreement_is_statsmodels_kappa_and_krippendorffs_alpha(seed: int) -> None:
    krippendorff = pytest.importorskip("krippendorff")
    inter_rater = pytest.importorskip("statsmodels.stats.inter_rater")
    rng = np.random.default_rng(seed)
    human = rng.random(60) < 0.5
    judge = np.where(rng.random(60) < 0.75, human, ~human)
    got = agreement(judge, human)
    table = [[int(np.sum(judge & human)), int(np.sum(judge & ~human))],
             [int(np.sum(~judge & human)), int(np.sum(~judge & ~human))]]
    assert got.kappa == pytest.approx(inter_rater.cohens_kappa(np.array(table)).kappa, abs=1e-12)
    assert got.alpha == pytest.approx(krippendorff.alpha(reliability_data=np.array([judge, human], dtype=float),
                                                         level_of_measurement="nominal"), abs=1e-12)
    assert got.confusion == {"correct/correct": table[0][0], "correct/wrong": table[0][1],
                             "wrong/correct": table[1][0], "wrong/wrong": table[1][1]}
    assert got.agreement == pytest.approx((table[0][0] + table[1][1]) / 60)
