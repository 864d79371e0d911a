"""Issue 15 pieces the runner uses, one by one: the truncated outcome and --truncated-as in the metrics,
the per-item spread of repeated epochs, the --max-cost guard around a model, the progress bar's in-flight
limit, the batch variant chosen through the backend registry."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from decimal import Decimal

import pytest

from proctor.core.model import GenerateRequest, Generation, GenerationSettings, Message, ModelBase
from proctor.core.money import Money
from proctor.log.runlog import Outcome, Sample
from proctor.metrics.results import summarize
from proctor.models.registry import get_model
from proctor.run.pricing import CostGuard, GuardedModel
from proctor.util.errors import CostLimitReached, ProctorError
from proctor.util.progress import Progress


def _sample(i: int, outcome: Outcome, score: float | None, epoch: int = 0, category: str = "c") -> Sample:
    return Sample(sample_id=f"q{i}#{epoch}", item_id=f"q{i}", epoch=epoch, outcome=outcome, score=score,
                  category=category)


def test_truncated_counted_wrong_or_excluded() -> None:
    samples = [_sample(1, Outcome.CORRECT, 1.0), _sample(2, Outcome.WRONG, 0.0),
               _sample(3, Outcome.TRUNCATED, 0.0), _sample(4, Outcome.TRUNCATED, 0.0, category="d"),
               _sample(5, Outcome.ERROR, None)]
    wrong = summarize(samples)
    assert wrong.truncated_as == "wrong"
    assert (wrong.overall.accuracy, wrong.overall.n_scored) == (0.25, 4)
    assert (wrong.overall.n_truncated, wrong.overall.truncated_rate) == (2, 0.5)  # of 4 answered
    excluded = summarize(samples, truncated_as="excluded")
    assert excluded.truncated_as == "excluded"
    assert (excluded.overall.accuracy, excluded.overall.n_scored) == (0.5, 2)
    assert excluded.overall.n_truncated == 2  # still reported
    assert excluded.by_category["d"].truncated_rate == 1.0 and excluded.by_category["d"].n_scored == 0
    with pytest.raises(ValueError):
        summarize(samples, truncated_as="maybe")


def test_epochs_report_the_per_item_spread() -> None:
    scores = {"q1": [1, 1, 1, 1], "q2": [1, 0, 0, 0], "q3": [0, 0, 0, 0]}
    samples = [_sample(int(q[1]), Outcome.CORRECT if x else Outcome.WRONG, float(x), epoch=e)
               for q, xs in scores.items() for e, x in enumerate(xs)]
    ep = summarize(samples).epochs
    assert ep.k == 4 and ep.mean_at_k == pytest.approx((1 + 0.25 + 0) / 3)
    assert ep.pass_at_k == pytest.approx(2 / 3)
    assert ep.items_by_correct == {"0": 1, "1": 1, "2": 0, "3": 0, "4": 1}
    assert ep.item_sd_mean == pytest.approx((0 + 0.5 + 0) / 3)


class _Counting(ModelBase):
    """Answers 4 output tokens and 0 input tokens; counts what it was sent."""

    name = "openai:counting"
    preferred_chunk_size = 1

    def __init__(self) -> None:
        self.sent = 0

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.sent += len(requests)
        return [Generation(text="a b c d", input_tokens=0, output_tokens=4) for _ in requests]


def _request(max_tokens: int | None = 10) -> GenerateRequest:
    return GenerateRequest((Message("user", ""),), GenerationSettings(max_tokens=max_tokens))


def test_guarded_model_never_sends_a_request_that_could_cross_the_limit() -> None:
    inner = _Counting()
    guard = CostGuard(Decimal(25))
    model = GuardedModel(inner, guard, 1, Money(input=Decimal(0), output=Decimal(1_000_000)))  # $1 per output token

    async def go() -> int:
        done = 0
        for _ in range(6):
            try:
                await model.generate([_request()])
                done += 1
            except CostLimitReached as e:
                assert "stopped before crossing --max-cost $25.00" in str(e)
        return done

    assert asyncio.run(go()) == 4  # worst case $10 each, real $4: the fifth could reach $26
    assert inner.sent == 4 and guard.spent == 16 and guard.reserved == 0
    with pytest.raises(ProctorError, match="needs --max-tokens"):
        asyncio.run(model.generate([_request(None)]))


def test_progress_shows_the_in_flight_limit_through_wrappers() -> None:
    http = get_model("openai:m", base_url="http://127.0.0.1:9/v1", concurrency=7)
    guarded = GuardedModel(http, CostGuard(Decimal(1)), 7, Money(input=Decimal(1), output=Decimal(1)))
    assert guarded.in_flight_limit == 7 and _Counting().in_flight_limit is None
    bar = Progress(3, enabled=False, in_flight=7)
    assert bar._limit_text() == "≤7 in flight"
    assert Progress(3, enabled=False)._limit_text() == ""


def test_batch_variant_is_chosen_through_the_registry(tmp_path: object) -> None:
    from proctor.models.batch_anthropic import AnthropicBatchModel
    from proctor.models.batch_openai import OpenAIBatchModel

    assert isinstance(get_model("openai:m", batch=True, batch_poll_interval=0.5, api_key="k"), OpenAIBatchModel)
    assert isinstance(get_model("anthropic:m", batch=True, api_key="k"), AnthropicBatchModel)
    assert not isinstance(get_model("openai:m", api_key="k"), OpenAIBatchModel)
    with pytest.raises(ProctorError, match="no option 'batch'"):
        get_model("scripted:first", batch=True)
    model = get_model("openai:m", batch=True, api_key="k")
    with pytest.raises(ProctorError, match="needs a state directory"):
        asyncio.run(model.generate([_request()]))
