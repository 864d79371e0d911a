"""What a request and a run cost at a price (`proctor.core.money.Money`, per million tokens): `sample_cost`,
`run_cost` (results.json's `Cost` block), exact decimals, never through a float; and how an amount is shown
(`format_money`: to the cent). The price table, where a price comes from, and the `--max-cost` guard are
`proctor.run.pricing`'s; the cost metric (`cost.py`) reads a run's samples with these.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from ..core.money import Money
from ..core.results import Cost
from ..util.termsafe import plain

MILLION = Decimal(1_000_000)
CENT = Decimal("0.01")


def sample_cost(price: Money, input_tokens: int | None, output_tokens: int | None) -> Decimal | None:
    """Exact cost of one request from its usage; None when either count is unknown."""
    if input_tokens is None or output_tokens is None:
        return None
    return (price.input * input_tokens + price.output * output_tokens) / MILLION


def cost_line(cost: Cost) -> str:
    """results.json's cost block in one line: `cost: $1.23 ($0.41 per correct answer, 3 priced samples)`,
    the model's and the judge's share when a judge graded; samples that reported no usage are said apart."""

    def money(amount: Decimal | None) -> str:
        return format_amount(amount, cost.currency)

    per = cost.per_correct
    per_text = f"{money(per)} per correct answer" if per is not None else "per correct answer: n/a"
    tail = f"; {cost.unpriced_samples} samples reported no usage and are not counted" if cost.unpriced_samples else ""
    if cost.judge is not None:
        tail = f"; model {money(cost.model)}, judge {money(cost.judge)} ({cost.judge_priced_calls or 0} calls)" + tail
        if cost.judge_unpriced_calls:
            tail += f"; {cost.judge_unpriced_calls} judge calls not priced (no usage, or no price for the judge)"
    return f"cost: {money(cost.total)} ({per_text}, {cost.priced_samples} priced samples){tail}"


def format_money(amount: Decimal | None, currency: str = "USD") -> str:
    """`amount` rounded half-up to the cent, e.g. "$12.35" or "12.35 EUR"; "unknown" for None. An amount
    too large to round exactly (a price table's typo recorded before tables were bounded) is shown as it is."""
    if amount is None:
        return "unknown"
    try:
        cents = amount.quantize(CENT, rounding=ROUND_HALF_UP)
    except InvalidOperation:
        cents = amount
    return f"${cents}" if currency == "USD" else f"{cents} {currency}"


def format_amount(value: object, currency: object = "USD") -> str:
    """A recorded amount (text from results.json) for display: `format_money`, or the text itself, control
    characters escaped, when it is not a finite number; a currency that is not letters is shown escaped."""
    name = str(currency) if str(currency).isalpha() else plain(currency)
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return plain(value)
    return format_money(amount, name) if amount.is_finite() else plain(value)


Usage = tuple[int | None, int | None]


def run_cost(price: Money, usages: Iterable[Usage], correct: int, *, judge_price: Money | None = None,
             judge_usages: Iterable[Usage] | None = None) -> Cost:
    """results.json's cost block: the samples' (input_tokens, output_tokens) at `price` (those without usage counted
    apart, never as free) and, when a judge graded, its calls at `judge_price` (all unpriced when it has none);
    `total` is both, `per_correct` None when nothing was correct or some requests could not be priced."""
    model, priced, unpriced = _sum_costs(price, usages)
    judge, judge_priced, judge_unpriced = _judge_cost(judge_price, judge_usages)
    total = model + (judge or Decimal(0))
    per_correct = None if correct == 0 or unpriced or judge_unpriced else total / correct
    return Cost(total=total, currency=price.currency, priced_samples=priced, unpriced_samples=unpriced,
                correct=correct, per_correct=per_correct, per_sample=total / priced if priced else None, model=model,
                judge=judge, judge_priced_calls=judge_priced, judge_unpriced_calls=judge_unpriced)


def _judge_cost(price: Money | None, usages: Iterable[Usage] | None) -> tuple[Decimal | None, int | None, int | None]:
    """The judge's (cost, priced calls, unpriced calls): all None without a judge, every call unpriced without a price."""
    if usages is None:
        return None, None, None
    if price is None:
        return Decimal(0), 0, len(list(usages))
    return _sum_costs(price, usages)


def _sum_costs(price: Money, usages: Iterable[Usage]) -> tuple[Decimal, int, int]:
    total, priced, unpriced = Decimal(0), 0, 0
    for input_tokens, output_tokens in usages:
        cost = sample_cost(price, input_tokens, output_tokens)
        if cost is None:
            unpriced += 1
        else:
            total += cost
            priced += 1
    return total, priced, unpriced
