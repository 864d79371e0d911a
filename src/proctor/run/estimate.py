"""A run's size before it runs (`run --dry-run`): requests, prompt tokens, the most output tokens, the cost range.

The requests are the very ones the run would send (the scorer's, deduplicated as the runner does; a judge's calls
are not counted). Prompt tokens are exact when proctor has the model's tokenizer and renders its prompts (the
`hf:` backend: the chat template applied, as its `input_tokens` count them); with a tokenizer but no template
(`openai:` with `tokenizer=`) each message is counted by it plus the template overhead; otherwise the count is
an upper bound (UTF-8 bytes plus that overhead: `proctor.run.pricing.prompt_tokens_bound`). The cost runs from the
prompts alone (no output) to every request using its whole output budget. Nothing is sent, nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel

from ..core.money import Money
from ..core.spec import RunSpec
from ..metrics.money import format_money, sample_cost
from ..models import GenerateRequest, LoglikelihoodRequest
from .pricing import CHAT_TOKENS_PER_REQUEST, estimate_tokens, prompt_tokens_bound, token_counter
from .runner import _items_of, build_scorer

if TYPE_CHECKING:
    from ..data.records import Item
    from ..data.tasks import Task
    from ..models import Model
    from ..scoring.base import Request

Counting = Literal["exact", "tokenizer", "bound"]
COUNTED_BY = {
    "exact": "the model's tokenizer and chat template (exact)",
    "tokenizer": "the model's tokenizer, plus the chat template's overhead (an upper bound)",
    "bound": "UTF-8 bytes plus the chat template's overhead (an upper bound: proctor has no tokenizer for it)",
}


class Estimate(BaseModel):
    """What a run would ask, before it runs."""

    dataset: str
    model: str
    mode: str
    items: int
    epochs: int
    requests: int
    prompt_tokens: int
    counted: Counting
    max_output_tokens: int | None  # None: a request without a token limit (the most is unknown)
    price: Money | None = None
    cost_low: str | None = None  # prompts only, no output
    cost_high: str | None = None  # every request using its whole output budget (None when unbounded or unpriced)
    currency: str = "USD"

    def lines(self) -> list[str]:
        """The estimate in plain sentences."""
        out = [(f"{self.dataset} · {self.model} · {self.mode}: {self.items:,} item(s) × {self.epochs} epoch(s) → "
               f"{self.requests:,} request(s)"),
               f"prompt tokens: {self.prompt_tokens:,}, counted by {COUNTED_BY[self.counted]}",
               "output tokens: at most " + (f"{self.max_output_tokens:,}" if self.max_output_tokens is not None
                                            else "unbounded (no --max-tokens)")]
        if self.price is None:
            out.append("cost: no price known (--prices, or --price-in/--price-out)")
        else:
            low = format_money(Decimal(self.cost_low or 0), self.currency)
            high = format_money(Decimal(self.cost_high), self.currency) if self.cost_high is not None else "unbounded"
            out.append(f"cost: {low} to {high} at {self.price.input} in / {self.price.output} out per million tokens")
        out.append("nothing was sent or written (--dry-run)")
        return out


def _requests(task: Task, items: Sequence[Item], spec: RunSpec) -> list[Request]:
    """The distinct requests the run's scorer would send for the items and epochs."""
    scorer = build_scorer(task, spec)
    every = [r for epoch in range(spec.epochs) for it in items for r in scorer.requests(task, it, epoch)]
    return list(dict.fromkeys(every))


def _prompt_tokens(model: Model, requests: Sequence[Request]) -> tuple[int, Counting]:
    """Prompt tokens of the requests: the model's own count where it has one (`Model.prompt_tokens`), else the
    tokenizer's or the byte bound (`prompt_tokens_bound`); `counted` says which held for them all."""
    count = token_counter(model)
    total, exact = 0, True
    for r in requests:
        if isinstance(r, GenerateRequest):
            own = model.prompt_tokens(r)
            exact = exact and own is not None
            total += own if own is not None else prompt_tokens_bound(r, count)
        elif isinstance(r, LoglikelihoodRequest):
            text = r.context + r.continuation
            exact = exact and count is not None
            total += count(text) if count is not None else estimate_tokens(text) + CHAT_TOKENS_PER_REQUEST
    counted: Counting = "exact" if exact else "tokenizer" if count is not None else "bound"
    return total, counted


def estimate_run(task: Task, model: Model, spec: RunSpec) -> Estimate:
    """The size and cost range of running `task` with `model` as the resolved `spec` says (nothing is sent)."""
    items = _items_of(task, spec)
    requests = _requests(task, items, spec)
    prompt, counted = _prompt_tokens(model, requests)
    gen = [r for r in requests if isinstance(r, GenerateRequest)]
    limits = [r.settings.max_tokens for r in gen]
    max_out = None if any(m is None for m in limits) else sum(m or 0 for m in limits)
    price = spec.price
    low = sample_cost(price, prompt, 0) if price is not None else None
    high = sample_cost(price, prompt, max_out) if price is not None and max_out is not None else None
    return Estimate(
        dataset=task.name, model=spec.model.spec, mode=spec.scorer.mode or "generate", items=len(items),
        epochs=spec.epochs, requests=len(requests), prompt_tokens=prompt, counted=counted,
        max_output_tokens=max_out, price=price,
        cost_low=str(low) if low is not None else None, cost_high=str(high) if high is not None else None,
        currency=price.currency if price is not None else "USD",
    )


__all__ = ["COUNTED_BY", "Estimate", "estimate_run"]
