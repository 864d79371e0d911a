"""Text overlap: the mean of each overlap measure the samples carry, with its interval, in `results.metrics`."""

from __future__ import annotations

import pytest

from proctor.log.runlog import GenerationDetails, Outcome, Sample
from proctor.metrics import RunContext
from proctor.metrics.results import summarize
from proctor.metrics.text_overlap import MEASURES, TextOverlap
from proctor.scoring.text_metrics import overlap_metrics


def _sample(i: int, answer: str, reference: str, outcome: Outcome = Outcome.WRONG) -> Sample:
    details = GenerationDetails.model_validate({"accepted": [reference], **overlap_metrics(answer, [reference])})
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=outcome, score=0.0, details=details)


def test_means_over_the_samples_that_carry_them() -> None:
    samples = [_sample(0, "the cat sat", "the cat sat"), _sample(1, "a dog ran", "the cat sat"),
               _sample(2, "the cat", "the cat sat")]
    got = summarize(samples).metrics
    assert set(got) == set(MEASURES)
    f1 = [s.details["token_f1"] for s in samples]
    assert got["token_f1"].value == pytest.approx(sum(f1) / 3) and got["token_f1"].n == 3
    assert got["token_f1"].method == "bootstrap"
    assert got["token_f1"].ci_low is not None and got["token_f1"].ci_high is not None
    assert got["token_f1"].ci_low <= got["token_f1"].value <= got["token_f1"].ci_high


def test_errors_and_samples_without_overlap_leave_it_out() -> None:
    error = _sample(0, "x", "y").model_copy(update={"outcome": Outcome.ERROR, "score": None})
    assert TextOverlap("rougeL").compute([error], RunContext()) is None
    plain = Sample(sample_id="p#0", item_id="p", outcome=Outcome.CORRECT, score=1.0)
    assert summarize([plain]).metrics == {}
    with pytest.raises(ValueError, match="no text overlap measure"):
        TextOverlap("meteor")
