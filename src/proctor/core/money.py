"""Money: a price per million tokens, proctor's one record of it — a RunSpec's (`spec.price`, `spec.judge.price`),
a price table's (`proctor.run.pricing`), a manifest's (`Manifest.price`), the cost metric's and the `--max-cost`
guard's. Amounts are exact decimals, never through a float; what a request and a run cost is
`proctor.metrics.money`'s, and results.json's cost block is `proctor.core.results.Cost`."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from pydantic import BaseModel, ConfigDict


class Money(BaseModel):
    """Money per million tokens, in `currency`; `source` says where it came from (the command line, a price table's
    `path:line`, a manifest)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    input: Decimal
    output: Decimal
    currency: str = "USD"
    source: str = "command line"


#: the keys manifests before the one money record wrote a price with (`PriceRecord`, main d354608 and earlier)
_RECORDED_KEYS = {"input_per_million": "input", "output_per_million": "output", "currency": "currency",
                  "source": "source"}


def recorded_money(value: Any) -> Any:
    """A price as an older manifest recorded it (`{"input_per_million": "2.00", "output_per_million": "8.00",
    "currency", "source"}`, amounts as text, `source` perhaps null) in `Money`'s shape; anything else as it is."""
    if not isinstance(value, dict) or "input_per_million" not in value:
        return value
    money = {_RECORDED_KEYS.get(k, k): v for k, v in value.items()}
    return {**money, "source": money.get("source") or "manifest"}


__all__ = ["Money", "recorded_money"]
