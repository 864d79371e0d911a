"""The Scorer seam's records: what was asked and answered for one item, and the one verdict type."""

from __future__ import annotations

from proctor.core.model import Generation, Loglikelihood, LoglikelihoodRequest
from proctor.data.records import Item
from proctor.log.runlog import GenerationDetails, Outcome
from proctor.scoring.base import JUDGE_PENDING, Answered, Scored, Usage, usage_of


def _item() -> Item:
    return Item(identifier="q1", modality="choiceof4", prompt="?", choices={"A": "a", "B": "b", "C": "c", "D": "d"}, response="B")


def test_an_answered_item_is_an_error_when_any_answer_failed() -> None:
    reqs = [LoglikelihoodRequest("c", " a"), LoglikelihoodRequest("c", " b")]
    ok = Answered(_item(), 0, reqs, [Loglikelihood(-1.0), Loglikelihood(-2.0)])
    failed = Answered(_item(), 0, reqs, [Loglikelihood(-1.0), Loglikelihood(error="timeout")])
    assert ok.error is None and failed.error == "timeout"


def test_usage_of_one_generation_and_of_log_likelihoods() -> None:
    gen = Generation(text="B", finish_reason="stop", input_tokens=12, output_tokens=3, latency_s=0.5)
    assert usage_of([gen]) == Usage(input_tokens=12, output_tokens=3, latency_s=0.5, finish_reason="stop")
    # every token each request read (its context too), not the continuation's tokens alone; unknown stays unknown
    read = [Loglikelihood(n_tokens=4, input_tokens=40), Loglikelihood(n_tokens=5, input_tokens=41)]
    assert usage_of(read) == Usage(input_tokens=81)
    assert usage_of([Loglikelihood(n_tokens=4), *read]) == Usage(input_tokens=None)
    assert usage_of([Loglikelihood(error="x")]) == Usage()


def test_the_verdict_says_correct_and_whether_a_judge_must_grade_it() -> None:
    right = Scored(Outcome.CORRECT, GenerationDetails(), score=1.0, extracted="B", extraction_rule="answer_is")
    pending = Scored(Outcome.UNSCORED, GenerationDetails(), extracted="some prose", extraction_rule=JUDGE_PENDING)
    assert right.correct and not right.needs_judge
    assert pending.needs_judge and not pending.correct and pending.score is None
