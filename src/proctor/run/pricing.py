"""What a run may cost: a price table the user keeps and a `--max-cost` guard (prices and costs themselves, exact to
the cent, are `proctor.metrics.money`'s).

Prices are per million tokens, in a YAML file (`--prices FILE`, else `$PROCTOR_PRICES`, else
`~/.config/proctor/prices.yaml`) or given directly (`--price-in` / `--price-out`):

    currency: USD
    models:
      openai:gpt-4.1:           # a model spec, a bare model name, or a glob ("anthropic:claude-*")
        input: 2.00             # per million input (prompt) tokens
        output: 8.00            # per million output tokens (reasoning tokens are billed as output)
        batch_input: 1.00       # optional: prices through the provider's batch API
        batch_output: 4.00

Amounts are `Decimal` from the YAML text itself (never through a float), kept exact and bounded
(`check_amount`: finite, non-negative, at most MAX_PRICE, at most MAX_DECIMALS places); the file is read
with the limits of every input file. `format_money` rounds to the cent for display. A sample whose usage
is unknown is never counted as free: it is counted apart (`Cost.unpriced_samples`), and the guard assumes
the worst for it. A judge's calls are on the same bill (`Cost.judge`) and under the same guard.
"""

from __future__ import annotations

import asyncio
import fnmatch
import math
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from ..core.model import (
    GenerateRequest,
    Generation,
    Loglikelihood,
    LoglikelihoodRequest,
    Model,
    ModelWrapper,
)
from ..core.money import Money
from ..metrics.money import format_money, sample_cost
from ..util.errors import CostLimitReached, InputError, ProctorError
from ..util.limits import yaml_compose
from ..util.textio import read_text

# -- the price table -----------------------------------------------------------------------------------

MAX_PRICE = Decimal(1_000_000_000)  # per million tokens ($1,000 a token): anything above is a typo
MAX_MONEY = Decimal(10) ** 12  # a --max-cost or a total above this is not money anyone spends on a benchmark
MAX_DECIMALS = 12  # the finest price step kept: cost sums stay exact within Decimal's 28 digits
MAX_AMOUNT_CHARS = 40
MAX_PATTERN_CHARS = 500
_CURRENCY_RE = re.compile(r"[A-Za-z]{1,10}")


def check_amount(text: str, maximum: Decimal = MAX_PRICE) -> Decimal | str:
    """`text` as a bounded, exact amount, or why it is not one: finite, non-negative, at most `maximum`,
    at most MAX_DECIMALS decimal places (a Decimal's exponent is checked before anything is computed with it)."""
    text = text.strip().replace("_", "")
    if len(text) > MAX_AMOUNT_CHARS:
        return f"must be a number of at most {MAX_AMOUNT_CHARS} characters"
    try:
        value = Decimal(text)
    except InvalidOperation:
        return f"must be a non-negative number, got {text!r}"
    if not value.is_finite() or value < 0:
        return f"must be a non-negative number, got {text!r}"
    if value.adjusted() > maximum.adjusted() or value > maximum:
        return f"must be at most {maximum:,}, got {text!r}"
    _, digits, exponent = value.as_tuple()
    trailing_zeros = len(digits) - len("".join(map(str, digits)).rstrip("0"))
    if value and isinstance(exponent, int) and -(exponent + trailing_zeros) > MAX_DECIMALS:
        return f"has more than {MAX_DECIMALS} decimal places, got {text!r}"
    return value if value else Decimal(0)


@dataclass(frozen=True)
class PriceEntry:
    """One row of a price table: the model spec, name or glob it prices, its price and its batch API price."""

    pattern: str
    price: Money
    batch: Money | None


@dataclass(frozen=True)
class PriceTable:
    """A price file's rows, in its order."""

    entries: tuple[PriceEntry, ...]

    def lookup(self, spec: str, *, batch: bool = False) -> Money | None:
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
    """Read a price table with the limits of every input file (a regular file, size, YAML depth and
    expansion); every problem is reported as `path:line: key: what is wrong` (InputError)."""
    return _table(path, yaml_compose(read_text(path), path))


def _mapping(path: Path, node: object, where: str, what: str) -> list[tuple[str, Any, Any]]:
    """A mapping node's (key, key node, value node) triples; keys must be plain strings."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise InputError.at(path, f"expected {what}", _line(node), where or None)
    out = []
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode) or not key.value.strip():
            raise InputError.at(path, "a key must be a name (a string), not a list, mapping or empty value",
                                _line(key), where or None)
        out.append((str(key.value), key, value))
    return out


def _table(path: Path, root: object) -> PriceTable:
    import yaml

    if root is None:
        raise InputError.at(path, "empty file: expected a mapping with a 'models' key", 1)
    top = {k: v for k, _, v in _mapping(path, root, "", "a mapping with a 'models' key")}
    unknown = sorted(set(top) - {"currency", "models"})
    if unknown:
        raise InputError.at(path, f"unknown key {unknown[0]!r} (expected currency, models)", _line(root))
    currency = "USD"
    if "currency" in top:
        node = top["currency"]
        if not isinstance(node, yaml.ScalarNode) or not _CURRENCY_RE.fullmatch(node.value.strip()):
            raise InputError.at(path, "currency must be a name of letters such as USD or EUR", _line(node), "currency")
        currency = node.value.strip()
    models = top.get("models")
    if not isinstance(models, yaml.MappingNode) or not models.value:
        raise InputError.at(path, "'models' must map model specs to prices", _line(models or root), "models")
    entries = []
    for pattern, key, value in _mapping(path, models, "models", "model specs mapped to prices"):
        if len(pattern) > MAX_PATTERN_CHARS:
            raise InputError.at(path, f"a model spec of at most {MAX_PATTERN_CHARS} characters", _line(key), "models")
        entries.append(_entry(path, pattern, value, currency, _line(key)))
    return PriceTable(tuple(entries))


_ENTRY_KEYS = ("input", "output", "batch_input", "batch_output")


def _entry(path: Path, pattern: str, node: object, currency: str, line: int | None) -> PriceEntry:
    import yaml

    if not isinstance(node, yaml.MappingNode):
        raise InputError.at(path, "expected input: and output: prices per million tokens", line, pattern)
    fields = {k: v for k, _, v in _mapping(path, node, pattern, "input: and output: prices per million tokens")}
    for key, key_node, _ in _mapping(path, node, pattern, ""):
        if key not in _ENTRY_KEYS:
            raise InputError.at(path, f"unknown key {key!r} (expected {', '.join(_ENTRY_KEYS)})", _line(key_node),
                                pattern)
    for key in ("input", "output"):
        if key not in fields:
            raise InputError.at(path, f"missing {key}: (price per million tokens)", line, pattern)
    amounts = {k: _amount(path, pattern, k, v) for k, v in fields.items()}
    source = f"{path}:{line}"
    price = Money(input=amounts["input"], output=amounts["output"], currency=currency, source=source)
    batch = None
    if "batch_input" in amounts or "batch_output" in amounts:
        batch = Money(input=amounts.get("batch_input", price.input), output=amounts.get("batch_output", price.output),
                      currency=currency, source=source + " (batch)")
    return PriceEntry(pattern, price, batch)


def _amount(path: Path, pattern: str, key: str, node: object) -> Decimal:
    import yaml

    if not isinstance(node, yaml.ScalarNode):
        raise InputError.at(path, "must be a non-negative number, got a list or mapping", _line(node),
                            f"{pattern}.{key}")
    checked = check_amount(node.value)
    if isinstance(checked, str):
        raise InputError.at(path, checked, _line(node), f"{pattern}.{key}")
    return checked


def _line(node: object) -> int | None:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def parse_money(text: str, what: str) -> Decimal:
    """A bounded non-negative amount from the command line (`--price-in 2.5`, `--max-cost 20`)."""
    try:
        Decimal(text.strip())
    except InvalidOperation:
        raise ProctorError(f"{what} must be a number, got {text!r}") from None
    checked = check_amount(text, MAX_MONEY if what in ("--max-cost", "max_cost") else MAX_PRICE)
    if isinstance(checked, str):
        raise ProctorError(f"{what} {checked}")
    return checked


def resolve_price(spec: str, *, prices_file: Path | None = None, price_in: Decimal | None = None,
                  price_out: Decimal | None = None, batch: bool = False) -> Money | None:
    """The price for `spec`: `--price-in/--price-out` when given (both needed), else the price table
    (`--prices FILE`, which must exist, else the default path when it exists). None when unknown."""
    if (price_in is None) != (price_out is None):
        raise ProctorError("--price-in and --price-out go together (prices per million input / output tokens)")
    if price_in is not None and price_out is not None:
        return Money(input=price_in, output=price_out)
    path = prices_file or default_prices_path()
    if prices_file is None and not path.is_file():
        return None
    return load_prices(path).lookup(spec, batch=batch)


# -- the --max-cost guard --------------------------------------------------------------------------------

CHAT_TOKENS_PER_MESSAGE = 16  # role markers and separators a chat template puts around each message
CHAT_TOKENS_PER_REQUEST = 64  # what a template adds once (generation prompt, a default system prompt)

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str, count: TokenCounter | None = None) -> int:
    """An upper bound on the tokens of `text`: the model's own tokenizer when proctor has it, else its UTF-8
    bytes (no byte-level or byte-fallback tokenizer makes more tokens than bytes)."""
    return count(text) if count is not None else len(text.encode("utf-8", "surrogatepass"))


def prompt_tokens_bound(request: GenerateRequest, count: TokenCounter | None = None) -> int:
    """An upper bound on a chat request's prompt tokens as a server counts them: each message's text
    (`estimate_tokens`) plus the chat template's overhead."""
    texts = [m.content for m in request.messages] + ([request.settings.system] if request.settings.system else [])
    return CHAT_TOKENS_PER_REQUEST + sum(estimate_tokens(t, count) + CHAT_TOKENS_PER_MESSAGE for t in texts)


def token_counter(model: Model) -> TokenCounter | None:
    """The model's tokenizer as a counter (`count_prompt_tokens`, offered by the `hf:` backend and by
    `openai:` with `tokenizer=DIR`); None when proctor has no tokenizer for it."""
    return model.count_prompt_tokens if model.has_tokenizer else None


class CostGuard:
    """The `--max-cost` budget, shared by the model and its judge.

    A request is sent only after its worst case is reserved (`admit`); one that does not fit waits while
    others are in flight (`settled`) and is refused only when nothing is. When a request comes back, the
    reservation is released and what the server billed is booked (`settle`). So the spend can pass the limit only by
    what the requests already in flight cost beyond their worst cases (which `GuardedModel` raises as soon
    as a server reports more than it estimated)."""

    def __init__(self, limit: Decimal, currency: str = "USD", spent_before: Decimal = Decimal(0)) -> None:
        if limit < 0:
            raise ProctorError(f"--max-cost must be non-negative, got {limit}")
        self.limit = limit
        self.currency = currency
        self.spent_before = spent_before  # what the run's finished samples cost in earlier sessions
        self.billed: dict[str, Decimal] = {}  # this session, by role ("model", "judge"): usage the server reported
        self.unreported = Decimal(0)  # worst cases booked for answers that came back without usage
        self.reserved = Decimal(0)  # worst case of the requests in flight
        self.refused = 0
        self._settled: asyncio.Event | None = None

    @property
    def spent(self) -> Decimal:
        return self.spent_before + sum(self.billed.values(), Decimal(0)) + self.unreported

    def fits(self, worst_case: Decimal, headroom: Decimal = Decimal(0)) -> bool:
        return self.spent + self.reserved + worst_case + headroom <= self.limit

    def admit(self, worst_case: Decimal, headroom: Decimal = Decimal(0)) -> bool:
        """Reserve `worst_case` and say yes, or say no when it could cross the limit (leaving `headroom` free:
        a model's answer is sent only when its judge call would fit as well)."""
        if not self.fits(worst_case, headroom):
            self.refused += 1
            return False
        self.reserved += worst_case
        return True

    async def settled(self) -> None:
        """Wait until a request in flight settles (its unused worst case may make room)."""
        if self._settled is None:
            self._settled = asyncio.Event()
        await self._settled.wait()

    def settle(self, worst_case: Decimal, billed: Decimal, unreported: Decimal = Decimal(0), role: str = "model") -> None:
        """Release a reservation; book what the server billed and the worst case of answers it reported no usage for."""
        self.reserved -= worst_case
        if self._settled is not None:
            self._settled.set()
            self._settled = None
        self.billed[role] = self.billed.get(role, Decimal(0)) + billed
        self.unreported += unreported

    @property
    def remaining(self) -> Decimal:
        return self.limit - self.spent - self.reserved

    def message(self) -> str:
        """Why the run stopped and what it cost, as the server billed it (read once nothing is in flight)."""

        def money(amount: Decimal) -> str:
            return format_money(amount, self.currency)

        over = self.spent - self.limit
        head = (f"stopped before crossing --max-cost {money(self.limit)}" if over <= 0 else
                f"stopped at --max-cost {money(self.limit)}, passed by {money(over)} that requests already in "
                "flight cost beyond their estimates")
        parts = [f"{role} {money(amount)}" for role, amount in sorted(self.billed.items())]
        if self.spent_before:
            parts.append(f"earlier sessions {money(self.spent_before)}")
        if self.unreported:
            parts.append(f"{money(self.unreported)} assumed for answers that reported no usage")
        return (f"{head}: spent {money(self.spent)} as the server billed it ({', '.join(parts) or 'nothing'}), "
                f"{self.refused} request(s) not sent; run the same command again with a higher --max-cost to continue")


@dataclass
class _Estimate:
    """One request's token bounds, before and after raising them by what the server reported so far."""

    prompt_bound: int  # prompt_tokens_bound, as estimated
    max_output: int  # --max-tokens
    worst: Decimal  # the worst case reserved


class GuardedModel(ModelWrapper):
    """Wraps a Model so that no request is sent that could cross `guard.limit`.

    At most `concurrency` requests are in flight; each one's worst case (`prompt_tokens_bound` input tokens,
    every output token used, both raised by the largest ratio billed/estimated the server has reported so
    far) is reserved just before it is sent and settled with its billed cost when it comes back. A request
    refused raises `CostLimitReached`; requests already sent finish and are kept. Put it under the cache:
    cached answers cost nothing. `role` names it on the bill ("model" or "judge")."""

    def __init__(self, inner: Model, guard: CostGuard, concurrency: int, price: Money, role: str = "model",
                 then: GuardedModel | None = None) -> None:
        super().__init__(inner)
        self.then = then  # the judge that grades these answers: room for one of its calls is left free
        self.largest_worst = Decimal(0)  # the largest worst case of one request so far
        self.guard = guard
        self.price = price
        self.role = role
        self._slots = asyncio.Semaphore(max(1, concurrency))
        self._count = token_counter(inner)
        self.input_ratio = Decimal(1)  # the most a server billed per estimated prompt token (never below 1)
        self.output_ratio = Decimal(1)  # the most it billed per allowed output token

    def _estimate(self, request: GenerateRequest) -> _Estimate:
        max_out = request.settings.max_tokens
        if max_out is None:
            raise ProctorError("--max-cost needs --max-tokens: a request without a token limit has no worst case")
        bound = prompt_tokens_bound(request, self._count)
        worst = sample_cost(self.price, math.ceil(bound * self.input_ratio), math.ceil(max_out * self.output_ratio))
        assert worst is not None
        self.largest_worst = max(self.largest_worst, worst)
        return _Estimate(bound, max_out, worst)  # thinking/reasoning tokens are output tokens: in max_out

    def _headroom(self) -> Decimal:
        return self.then.headroom() if self.then is not None else Decimal(0)

    def headroom(self) -> Decimal:
        """Room one more of this model's requests needs: its largest worst case so far, else a request of
        `CHAT_TOKENS_PER_REQUEST` + 4 KiB of prompt and `max_tokens` (the judge's) of output, before any."""
        if self.largest_worst:
            return self.largest_worst
        cost = sample_cost(self.price, CHAT_TOKENS_PER_REQUEST + 4096, self.default_max_tokens)
        return cost if cost is not None else Decimal(0)

    default_max_tokens = 1024  # the judge's (proctor.scoring.judge.JUDGE_SETTINGS)

    def _learn(self, estimate: _Estimate, gen: Generation) -> None:
        """Raise the ratios when the server billed more than estimated (a tokenizer unlike the bound's)."""
        if gen.input_tokens is not None and estimate.prompt_bound > 0:
            self.input_ratio = max(self.input_ratio, Decimal(gen.input_tokens) / estimate.prompt_bound)
        if gen.output_tokens is not None and estimate.max_output > 0:
            self.output_ratio = max(self.output_ratio, Decimal(gen.output_tokens) / estimate.max_output)

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        async with self._slots:
            estimates = [self._estimate(r) for r in requests]
            worst = sum((e.worst for e in estimates), Decimal(0))
            while not self.guard.fits(worst, self._headroom()) and self.guard.reserved > 0:
                await self.guard.settled()  # what is in flight may cost less than its worst case: wait for it
            if not self.guard.admit(worst, self._headroom()):
                raise CostLimitReached(self.guard)
            try:
                gens = await self.inner.generate(requests)
            except BaseException:
                self.guard.settle(worst, Decimal(0), worst, self.role)  # it may have been billed: assume the worst
                raise
            billed, unreported = Decimal(0), Decimal(0)
            for estimate, gen in zip(estimates, gens, strict=True):
                cost = sample_cost(self.price, gen.input_tokens, gen.output_tokens)
                if cost is not None:
                    billed += cost
                    self._learn(estimate, gen)
                elif gen.error is None:  # an answer without usage: it was billed, for how much nobody said
                    unreported += estimate.worst
            self.guard.settle(worst, billed, unreported, self.role)
            return gens

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        raise ProctorError("--max-cost applies to generation runs (log-likelihood requests report no price)")
