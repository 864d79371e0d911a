"""Money: one record of a price per million tokens, whatever holds it (#47 item 1)."""

from __future__ import annotations

import inspect
from decimal import Decimal

import pytest
from pydantic import ValidationError

from proctor.core.money import Money, recorded_money
from proctor.core.spec import Budget, DatasetRef, JudgeSpec, ModelSpec, RunSpec


def _annotated(record: type, name: str) -> bool:
    field = record.model_fields[name].annotation  # type: ignore[attr-defined]
    return field is Money or Money in getattr(field, "__args__", ())


def test_one_money_record_serves_the_spec_the_manifest_the_price_table_and_the_guard() -> None:
    from proctor.log.runlog import RunSettings
    from proctor.run.estimate import Estimate
    from proctor.run.pricing import GuardedModel, PriceTable, resolve_price

    for record, name in ((RunSpec, "price"), (JudgeSpec, "price"), (RunSettings, "price"), (RunSettings, "judge_price"),
                         (Estimate, "price")):
        assert _annotated(record, name), (record, name)
    assert "Money" in str(inspect.signature(PriceTable.lookup).return_annotation)
    assert "Money" in str(inspect.signature(resolve_price).return_annotation)
    assert "Money" in str(inspect.signature(GuardedModel.__init__).parameters["price"].annotation)
    from proctor.log import provenance
    from proctor.metrics import money

    assert not hasattr(money, "Price") and not hasattr(money, "CostSummary") and not hasattr(provenance, "PriceRecord")


def test_money_is_exact_finite_and_frozen() -> None:
    price = Money(input="2.00", output="8.00")
    assert (price.input, price.output, price.currency, price.source) == (Decimal("2.00"), Decimal(8), "USD",
                                                                         "command line")
    assert price.model_dump(mode="json") == {"input": "2.00", "output": "8.00", "currency": "USD",
                                             "source": "command line"}
    with pytest.raises(ValidationError):
        Money(input="NaN", output="1")
    with pytest.raises(ValidationError):
        price.input = Decimal(1)  # type: ignore[misc]


def test_prices_and_the_budget_keep_the_run_id() -> None:
    """`--price-in/--price-out` and `--max-cost` never change what is asked: the id of a priced, budgeted run is the
    plain run's."""
    plain = RunSpec(dataset=DatasetRef(name="d", content_hash="sha256:abc"), model=ModelSpec(spec="scripted:first"))
    priced = plain.model_copy(update={"price": Money(input="1.10", output="4.40"),
                                      "budget": Budget(max_cost=Decimal(20))})
    assert priced.run_id() == plain.run_id()


def test_a_price_in_an_older_manifests_shape_reads_as_money() -> None:
    old = {"input_per_million": "1", "output_per_million": "2", "currency": "USD", "source": None}
    assert Money.model_validate(recorded_money(old)) == Money(input=1, output=2, source="manifest")
