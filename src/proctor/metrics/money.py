"""Money: prices per million tokens (`Price`), what a request and a run cost (`sample_cost`, `run_cost`: exact
decimals, never through a float), and how an amount is shown (`format_money`: to the cent). The price table, where a
price comes from, and the `--max-cost` guard are `proctor.run.pricing`'s; the cost metric (`cost.py`) reads a run's
samples with these.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

from ..core.results import Cost
from ..core.spec import Money
from ..log.provenance import PriceRecord
from ..util.termsafe import plain

MILLION = Decimal(1_000_000)
CENT = Decimal("0.01")


@dataclass(frozen=True)
class Price:
    """Money per million tokens, in `currency`; `source` says where it came from (for the manifest)."""

    input: Decimal
    output: Decimal
    currency: str = "USD"
    source: str = "command line"

    def as_dict(self) -> dict[str, str]:
        return self.record().model_dump(mode="json")

    def record(self) -> PriceRecord:
        """The price as the manifest records it."""
        return PriceRecord(input_per_million=str(self.input), output_per_million=str(self.output),
                           currency=self.currency, source=self.source)

    @classmethod
    def of(cls, record: PriceRecord) -> Price:
        """The price recorded in a manifest."""
        return cls(Decimal(record.input_per_million), Decimal(record.output_per_million), record.currency,
                   record.source or "manifest")

    @classmethod
    def of_money(cls, money: Money | None) -> Price | None:
        """The price a RunSpec gives (`spec.price`, `spec.judge.price`): the one conversion from the spec's money."""
        return None if money is None else cls(money.input, money.output, money.currency, money.source)

    def money(self) -> Money:
        """The price as a RunSpec records it."""
        return Money(input=self.input, output=self.output, currency=self.currency, source=self.source)


def sample_cost(price: Price, input_tokens: int | None, output_tokens: int | None) -> Decimal | None:
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


@dataclass(frozen=True)
class CostSummary:
    """Cost of a run: `model` over the priced samples (`unpriced` samples had no usage to price) and, when a
    judge graded, `judge` over its priced calls; `total` is both."""

    model: Decimal
    priced: int
    unpriced: int
    correct: int
    currency: str = "USD"
    judge: Decimal | None = None  # None: no judge
    judge_priced: int = 0
    judge_unpriced: int = 0  # judge calls with no usage, or no price for the judge

    @property
    def total(self) -> Decimal:
        return self.model + (self.judge or Decimal(0))

    @property
    def per_correct(self) -> Decimal | None:
        """Money per correct answer (None when nothing was correct or some requests could not be priced)."""
        if self.correct == 0 or self.unpriced or self.judge_unpriced:
            return None
        return self.total / self.correct

    def as_cost(self) -> Cost:
        """results.json's `cost` block."""
        judged = self.judge is not None
        return Cost(total=self.total, currency=self.currency, priced_samples=self.priced,
                    unpriced_samples=self.unpriced, correct=self.correct, per_correct=self.per_correct,
                    per_sample=self.total / self.priced if self.priced else None, model=self.model,
                    judge=self.judge, judge_priced_calls=self.judge_priced if judged else None,
                    judge_unpriced_calls=self.judge_unpriced if judged else None)


Usage = tuple[int | None, int | None]


def run_cost(price: Price, usages: Iterable[Usage], correct: int, *, judge_price: Price | None = None,
             judge_usages: Iterable[Usage] | None = None) -> CostSummary:
    """Total cost of the samples' (input_tokens, output_tokens) and of the judge's calls, and per correct answer.
    Judge calls are unpriced when the judge has no price."""
    model, priced, unpriced = _sum_costs(price, usages)
    if judge_usages is None:
        return CostSummary(model, priced, unpriced, correct, price.currency)
    calls = list(judge_usages)
    if judge_price is None:
        judge, judge_priced, judge_unpriced = Decimal(0), 0, len(calls)
    else:
        judge, judge_priced, judge_unpriced = _sum_costs(judge_price, calls)
    return CostSummary(model, priced, unpriced, correct, price.currency, judge, judge_priced, judge_unpriced)


def _sum_costs(price: Price, usages: Iterable[Usage]) -> tuple[Decimal, int, int]:
    total, priced, unpriced = Decimal(0), 0, 0
    for input_tokens, output_tokens in usages:
        cost = sample_cost(price, input_tokens, output_tokens)
        if cost is None:
            unpriced += 1
        else:
            total += cost
            priced += 1
    return total, priced, unpriced
