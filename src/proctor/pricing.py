"""What a run costs: a price table the user keeps, money per sample exact to the cent, a `--max-cost` guard.

Prices are per million tokens, in a YAML file (`--prices FILE`, else `$PROCTOR_PRICES`, else
`~/.config/proctor/prices.yaml`) or given directly (`--price-in` / `--price-out`):

    currency: USD
    models:
      openai:gpt-4.1:           # a model spec, a bare model name, or a glob ("anthropic:claude-*")
        input: 2.00             # per million input (prompt) tokens
        output: 8.00            # per million output tokens (reasoning tokens are billed as output)
        batch_input: 1.00       # optional: prices through the provider's batch API
        batch_output: 4.00

Amounts are `Decimal` from the YAML text itself (never through a float), kept exact; `format_money`
rounds to the cent for display. A sample whose usage is unknown is never counted as free: it is counted
apart (`CostSummary.unpriced`), and the guard assumes the worst for it.
"""

from __future__ import annotations

import asyncio
import fnmatch
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from .errors import InputError, ProctorError
from .models.base import Capability, GenerateRequest, Generation, Loglikelihood, LoglikelihoodRequest, Model

MILLION = Decimal(1_000_000)
CENT = Decimal("0.01")
CHARS_PER_TOKEN_LOWER_BOUND = 3  # for estimating a prompt's tokens before it is sent: errs on the high side


@dataclass(frozen=True)
class Price:
    """Money per million tokens, in `currency`; `source` says where it came from (for the manifest)."""

    input: Decimal
    output: Decimal
    currency: str = "USD"
    source: str = "command line"

    def as_dict(self) -> dict[str, str]:
        return {"input_per_million": str(self.input), "output_per_million": str(self.output),
                "currency": self.currency, "source": self.source}

    @classmethod
    def from_dict(cls, d: dict[str, str]) -> Price:
        """The price recorded in a manifest (`as_dict`)."""
        return cls(Decimal(d["input_per_million"]), Decimal(d["output_per_million"]),
                   d.get("currency", "USD"), d.get("source", "manifest"))


def sample_cost(price: Price, input_tokens: int | None, output_tokens: int | None) -> Decimal | None:
    """Exact cost of one request from its usage; None when either count is unknown."""
    if input_tokens is None or output_tokens is None:
        return None
    return (price.input * input_tokens + price.output * output_tokens) / MILLION


def cost_line(cost: dict[str, Any]) -> str:
    """results.json's cost block in one line: `cost: $1.23 ($0.41 per correct answer, 3 priced samples)`;
    samples that reported no usage are said apart."""
    currency = str(cost.get("currency", "USD"))
    per = cost.get("per_correct")
    per_text = (f"{format_money(Decimal(str(per)), currency)} per correct answer" if per is not None
                else "per correct answer: n/a")
    unpriced = cost.get("unpriced_samples") or 0
    tail = f"; {unpriced} samples reported no usage and are not counted" if unpriced else ""
    return (f"cost: {format_money(Decimal(str(cost['total'])), currency)} ({per_text}, "
            f"{cost.get('priced_samples', 0)} priced samples){tail}")


def format_money(amount: Decimal | None, currency: str = "USD") -> str:
    """`amount` rounded half-up to the cent, e.g. "$12.35" or "12.35 EUR"; "unknown" for None."""
    if amount is None:
        return "unknown"
    cents = amount.quantize(CENT, rounding=ROUND_HALF_UP)
    return f"${cents}" if currency == "USD" else f"{cents} {currency}"


@dataclass(frozen=True)
class CostSummary:
    """Cost of a run: `total` over the priced samples; `unpriced` samples had no usage to price."""

    total: Decimal
    priced: int
    unpriced: int
    correct: int
    currency: str = "USD"

    @property
    def per_correct(self) -> Decimal | None:
        """Money per correct answer (None when nothing was correct or some samples could not be priced)."""
        if self.correct == 0 or self.unpriced:
            return None
        return self.total / self.correct

    def as_dict(self) -> dict[str, object]:
        per = self.per_correct
        return {"total": str(self.total), "currency": self.currency, "priced_samples": self.priced,
                "unpriced_samples": self.unpriced, "correct": self.correct,
                "per_correct": None if per is None else str(per)}


def run_cost(price: Price, usages: Iterable[tuple[int | None, int | None]], correct: int) -> CostSummary:
    """Total cost of the samples' (input_tokens, output_tokens), and per correct answer."""
    total, priced, unpriced = Decimal(0), 0, 0
    for input_tokens, output_tokens in usages:
        cost = sample_cost(price, input_tokens, output_tokens)
        if cost is None:
            unpriced += 1
        else:
            total += cost
            priced += 1
    return CostSummary(total, priced, unpriced, correct, price.currency)


# -- the price table -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PriceEntry:
    pattern: str
    price: Price
    batch: Price | None


@dataclass(frozen=True)
class PriceTable:
    entries: tuple[PriceEntry, ...]

    def lookup(self, spec: str, *, batch: bool = False) -> Price | None:
        """The price for a model spec: exact spec, then the bare model name, then the longest matching glob."""
        bare = spec.partition(":")[2] or spec
        by_pattern = {e.pattern: e for e in self.entries}
        entry = by_pattern.get(spec) or by_pattern.get(bare)
        if entry is None:
            globs = [e for e in self.entries if fnmatch.fnmatchcase(spec, e.pattern) or fnmatch.fnmatchcase(bare, e.pattern)]
            entry = max(globs, key=lambda e: len(e.pattern), default=None)
        if entry is None:
            return None
        return entry.batch if batch and entry.batch is not None else entry.price


def default_prices_path() -> Path:
    """$PROCTOR_PRICES, else $XDG_CONFIG_HOME/proctor/prices.yaml (~/.config when unset)."""
    explicit = os.environ.get("PROCTOR_PRICES")
    if explicit:
        return Path(explicit)
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "proctor" / "prices.yaml"


def load_prices(path: Path) -> PriceTable:
    """Read a price table; every problem is reported as `path:line: what is wrong` (InputError)."""
    import yaml

    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise InputError.at(path, f"cannot read the price table: {e}") from None
    try:
        root = yaml.compose(text)
    except yaml.YAMLError as e:
        line = e.problem_mark.line + 1 if isinstance(e, yaml.MarkedYAMLError) and e.problem_mark else None
        raise InputError.at(path, f"not valid YAML: {getattr(e, 'problem', None) or e}", line) from None
    return _table(path, root)


def _table(path: Path, root: object) -> PriceTable:
    import yaml

    if not isinstance(root, yaml.MappingNode):
        raise InputError.at(path, "expected a mapping with a 'models' key", 1)
    top = {k.value: v for k, v in root.value}
    unknown = sorted(set(top) - {"currency", "models"})
    if unknown:
        raise InputError.at(path, f"unknown key {unknown[0]!r} (expected currency, models)", _line(root))
    currency = "USD"
    if "currency" in top:
        node = top["currency"]
        if not isinstance(node, yaml.ScalarNode) or not node.value.strip():
            raise InputError.at(path, "currency must be a name such as USD", _line(node), "currency")
        currency = node.value.strip()
    models = top.get("models")
    if not isinstance(models, yaml.MappingNode) or not models.value:
        raise InputError.at(path, "'models' must map model specs to prices", _line(models or root), "models")
    entries = [_entry(path, k.value, v, currency, _line(k)) for k, v in models.value]
    return PriceTable(tuple(entries))


_ENTRY_KEYS = ("input", "output", "batch_input", "batch_output")


def _entry(path: Path, pattern: str, node: object, currency: str, line: int | None) -> PriceEntry:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise InputError.at(path, "expected input: and output: prices per million tokens", line, pattern)
    fields = {k.value: v for k, v in node.value}
    for key_node, _ in node.value:
        if key_node.value not in _ENTRY_KEYS:
            raise InputError.at(path, f"unknown key {key_node.value!r} (expected {', '.join(_ENTRY_KEYS)})",
                                _line(key_node), pattern)
    for key in ("input", "output"):
        if key not in fields:
            raise InputError.at(path, f"missing {key}: (price per million tokens)", line, pattern)
    amounts = {k: _amount(path, pattern, k, v) for k, v in fields.items()}
    source = f"{path}:{line}"
    price = Price(amounts["input"], amounts["output"], currency, source)
    batch = None
    if "batch_input" in amounts or "batch_output" in amounts:
        batch = Price(amounts.get("batch_input", price.input), amounts.get("batch_output", price.output),
                      currency, source + " (batch)")
    return PriceEntry(pattern, price, batch)


def _amount(path: Path, pattern: str, key: str, node: object) -> Decimal:
    import yaml

    text = node.value.strip() if isinstance(node, yaml.ScalarNode) else ""
    try:
        value = Decimal(text.replace("_", ""))
    except InvalidOperation:
        value = Decimal("NaN")
    if not value.is_finite() or value < 0:
        raise InputError.at(path, f"must be a non-negative number, got {text or 'a non-scalar'!r}", _line(node),
                            f"{pattern}.{key}")
    return value


def _line(node: object) -> int | None:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def parse_money(text: str, what: str) -> Decimal:
    """A non-negative amount from the command line (`--price-in 2.5`, `--max-cost 20`)."""
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        raise ProctorError(f"{what} must be a number, got {text!r}") from None
    if not value.is_finite() or value < 0:
        raise ProctorError(f"{what} must be a non-negative number, got {text!r}")
    return value


def resolve_price(spec: str, *, prices_file: Path | None = None, price_in: Decimal | None = None,
                  price_out: Decimal | None = None, batch: bool = False) -> Price | None:
    """The price for `spec`: `--price-in/--price-out` when given (both needed), else the price table
    (`--prices FILE`, which must exist, else the default path when it exists). None when unknown."""
    if (price_in is None) != (price_out is None):
        raise ProctorError("--price-in and --price-out go together (prices per million input / output tokens)")
    if price_in is not None and price_out is not None:
        return Price(price_in, price_out)
    path = prices_file or default_prices_path()
    if prices_file is None and not path.is_file():
        return None
    return load_prices(path).lookup(spec, batch=batch)


# -- the --max-cost guard --------------------------------------------------------------------------------


def estimate_tokens(text: str) -> int:
    """An upper-side estimate of a prompt's tokens before it is sent (no tokenizer needed)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN_LOWER_BOUND)


class CostGuard:
    """Says whether the next request fits under `--max-cost`, counting requests still in flight at their
    worst case (every output token used). The runner calls `admit` before sending a request and `settle`
    when its answer (or its failure) comes back; once `admit` says no, it stops sending and keeps what it has.
    """

    def __init__(self, limit: Decimal, price: Price, spent: Decimal = Decimal(0)) -> None:
        if limit < 0:
            raise ProctorError(f"--max-cost must be non-negative, got {limit}")
        self.limit = limit
        self.price = price
        self.spent = spent  # settled cost (a resumed run starts from what it already spent)
        self.reserved = Decimal(0)  # worst case of the requests in flight
        self.refused = 0

    def worst_case(self, input_tokens: int, max_output_tokens: int) -> Decimal:
        cost = sample_cost(self.price, input_tokens, max_output_tokens)
        assert cost is not None
        return cost

    def admit(self, worst_case: Decimal) -> bool:
        """Reserve `worst_case` and say yes, or say no when it could cross the limit."""
        if self.spent + self.reserved + worst_case > self.limit:
            self.refused += 1
            return False
        self.reserved += worst_case
        return True

    def settle(self, worst_case: Decimal, actual: Decimal | None) -> None:
        """Release a reservation and book what the request really cost (its worst case when unknown)."""
        self.reserved -= worst_case
        self.spent += worst_case if actual is None else actual

    @property
    def remaining(self) -> Decimal:
        return self.limit - self.spent - self.reserved

    def message(self) -> str:
        """Why the run stopped, for the user."""
        return (f"stopped before crossing --max-cost {format_money(self.limit, self.price.currency)}: "
                f"spent {format_money(self.spent, self.price.currency)}, {self.refused} request(s) not sent; "
                "run the same command again with a higher --max-cost to continue")


class CostLimitReached(ProctorError):
    """`--max-cost` would be crossed by the next request: the run stops, what finished is kept."""


class GuardedModel:
    """Wraps a Model so that no request is sent that could cross `guard.limit`.

    At most `concurrency` requests are in flight; each one's worst case is reserved (`CostGuard.admit`)
    just before it is sent and settled with its real cost when it comes back. A request refused raises
    `CostLimitReached`; requests already sent finish and are kept. Put it under the cache: cached
    answers cost nothing."""

    def __init__(self, inner: Model, guard: CostGuard, concurrency: int) -> None:
        self.inner = inner
        self.guard = guard
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.preferred_chunk_size = inner.preferred_chunk_size
        self._slots = asyncio.Semaphore(max(1, concurrency))

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def probe(self, needed: Iterable[Capability]) -> None:
        await self.inner.probe(needed)

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def in_flight_limit(self) -> int | None:
        return getattr(self.inner, "in_flight_limit", None)

    def _worst_case(self, request: GenerateRequest) -> Decimal:
        prompt = "".join(m.content for m in request.messages) + (request.settings.system or "")
        max_out = request.settings.max_tokens
        if max_out is None:
            raise ProctorError("--max-cost needs --max-tokens: a request without a token limit has no worst case")
        return self.guard.worst_case(estimate_tokens(prompt), max_out)  # thinking/reasoning tokens count in it

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        async with self._slots:
            worst = sum((self._worst_case(r) for r in requests), Decimal(0))
            if not self.guard.admit(worst):
                raise CostLimitReached(self.guard.message())
            try:
                gens = await self.inner.generate(requests)
            except BaseException:
                self.guard.settle(worst, None)  # it may have been billed: assume the worst
                raise
            costs = [sample_cost(self.guard.price, g.input_tokens, g.output_tokens) for g in gens]
            known = None if any(c is None and g.error is None for c, g in zip(costs, gens, strict=True)) else \
                sum((c for c in costs if c is not None), Decimal(0))
            self.guard.settle(worst, known)
            return gens

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        raise ProctorError("--max-cost applies to generation runs (log-likelihood requests report no price)")
