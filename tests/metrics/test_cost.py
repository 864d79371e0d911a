"""Cost: the run's cost at the manifest's prices, exact decimals; none without a price."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from proctor.core.money import Money
from proctor.core.results import Results
from proctor.log.runlog import Manifest, Outcome, Sample
from proctor.metrics.cost import run_cost_of
from proctor.metrics.results import read_run, summarize

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


def _manifest(price: Money | None) -> Manifest:
    return Manifest(run_id="r", proctor_version="test", dataset={"name": "d"}, model={"spec": "m"}, mode="generate",
                    started_at="2026-01-01T00:00:00+00:00", price=price.model_dump(mode="json") if price else None)


def test_cost_per_sample_and_per_correct_answer() -> None:
    samples = [Sample(sample_id="a#0", item_id="a", outcome=Outcome.CORRECT, score=1.0, input_tokens=1_000_000,
                      output_tokens=0),
               Sample(sample_id="b#0", item_id="b", outcome=Outcome.WRONG, score=0.0, input_tokens=0,
                      output_tokens=1_000_000),
               Sample(sample_id="c#0", item_id="c", outcome=Outcome.ERROR, error="HTTP 500")]  # no usage: not billed
    manifest = _manifest(Money(input=Decimal("1.5"), output=Decimal(3)))
    cost = run_cost_of(samples, manifest)
    assert cost is not None and (cost.total, cost.model, cost.judge) == (Decimal("4.5"), Decimal("4.5"), None)
    assert (cost.priced_samples, cost.unpriced_samples, cost.correct) == (2, 0, 1)
    assert (cost.per_sample, cost.per_correct) == (Decimal("2.25"), Decimal("4.5"))
    results = summarize(samples, manifest=manifest)
    assert results.cost == cost and results.as_dict()["cost"]["total"] == "4.5"
    assert run_cost_of(samples, _manifest(None)) is None and summarize(samples).cost is None


@pytest.mark.parametrize("version", ["runlog_v2", "runlog_v4"])
def test_an_older_runs_price_recomputes_the_cost_it_recorded(version: str) -> None:
    """A manifest written before the one money record (its price as `input_per_million`…) prices the run as it did:
    the cost block recomputed from its samples is, to the last digit, the one its own proctor wrote."""
    run = FIXTURES / version / "generate"
    log = read_run(run)
    recorded = Results.model_validate_json((run / "results.json").read_text()).cost
    assert log.manifest.price == Money(input=Decimal(1), output=Decimal(2), source="command line")
    assert recorded is not None and run_cost_of(log.iter_samples(), log.manifest) == recorded
