"""Prices from a YAML table or the command line, costs exact to the cent, the --max-cost guard."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from decimal import Decimal
from pathlib import Path

import pytest

from proctor.core.model import GenerateRequest, Generation, GenerationSettings, Message, ModelBase
from proctor.core.money import Money
from proctor.metrics.money import sample_cost
from proctor.run.pricing import (
    CHAT_TOKENS_PER_MESSAGE,
    CHAT_TOKENS_PER_REQUEST,
    CostGuard,
    GuardedModel,
    default_prices_path,
    estimate_tokens,
    load_prices,
    parse_money,
    prompt_tokens_bound,
    resolve_price,
    token_counter,
)
from proctor.util.errors import CostLimitReached, InputError, ProctorError

TABLE = """\
currency: USD
models:
  openai:gpt-4.1:
    input: 2.00
    output: 8.00
    batch_input: 1.00
    batch_output: 4.00
  o4-mini:
    input: 1.10
    output: 4.40
  "anthropic:claude-*":
    input: 3
    output: 15
  "anthropic:claude-opus-*":
    input: 15
    output: 75
"""


@pytest.fixture
def prices(tmp_path: Path) -> Path:
    p = tmp_path / "prices.yaml"
    p.write_text(TABLE)
    return p


def test_lookup_exact_bare_and_longest_glob(prices: Path) -> None:
    table = load_prices(prices)
    assert table.lookup("openai:gpt-4.1") == Money(input=Decimal("2.00"), output=Decimal("8.00"), currency="USD", source=f"{prices}:3")
    assert table.lookup("openai:gpt-4.1", batch=True).input == Decimal("1.00")  # type: ignore[union-attr]
    assert table.lookup("openai:o4-mini").output == Decimal("4.40")  # type: ignore[union-attr]
    assert table.lookup("openai:o4-mini", batch=True).output == Decimal("4.40")  # type: ignore[union-attr]
    assert table.lookup("anthropic:claude-sonnet-4").output == Decimal(15)  # type: ignore[union-attr]
    assert table.lookup("anthropic:claude-opus-4-1").output == Decimal(75)  # type: ignore[union-attr]
    assert table.lookup("openai:unknown") is None


@pytest.mark.parametrize(("text", "message"), [
    ("models:\n  m:\n    input: 1\n", ":2: m: missing output:"),
    ("models:\n  m:\n    input: 1\n    output: -2\n", ":4: m.output: must be a non-negative number, got '-2'"),
    ("models:\n  m:\n    input: cheap\n    output: 2\n", ":3: m.input: must be a non-negative number"),
    ("models:\n  m:\n    input: 1\n    output: 2\n    cached: 0.5\n", ":5: m: unknown key 'cached'"),
    ("models: [1, 2]\n", ":1: models: 'models' must map"),
    ("prices:\n  m: 1\n", ":1: unknown key 'prices'"),
    ("models:\n  m: {input: 1, output: [2\n", ": malformed YAML"),
    ("models:\n  m: 3\n", ":2: m: expected input: and output:"),
])
def test_bad_tables_say_where(tmp_path: Path, text: str, message: str) -> None:
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_prices(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value)


def test_resolve_price_from_flags_file_and_default(tmp_path: Path, prices: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.delenv("PROCTOR_PRICES", raising=False)
    assert default_prices_path() == tmp_path / "cfg" / "proctor" / "prices.yaml"
    assert resolve_price("openai:gpt-4.1") is None  # no default table: cost unknown, not zero
    flags = resolve_price("x:y", price_in=parse_money("0.15", "--price-in"), price_out=parse_money("0.6", "--price-out"))
    assert flags == Money(input=Decimal("0.15"), output=Decimal("0.6"))
    assert resolve_price("openai:gpt-4.1", prices_file=prices).input == Decimal("2.00")  # type: ignore[union-attr]
    monkeypatch.setenv("PROCTOR_PRICES", str(prices))
    assert resolve_price("openai:gpt-4.1", batch=True).output == Decimal("4.00")  # type: ignore[union-attr]
    with pytest.raises(ProctorError, match="go together"):
        resolve_price("x:y", price_in=Decimal(1))
    with pytest.raises(InputError, match="no such file"):
        resolve_price("x:y", prices_file=tmp_path / "missing.yaml")
    with pytest.raises(ProctorError, match="--max-cost must be a number"):
        parse_money("ten", "--max-cost")


def test_cost_guard_counts_in_flight_worst_cases() -> None:
    guard = CostGuard(Decimal("1.00"))
    worst = sample_cost(Money(input=Decimal(1), output=Decimal(10)), 1000, 32_768)  # $/M tokens: $0.328680
    assert worst == Decimal("0.32868")
    assert guard.admit(worst) and guard.admit(worst) and guard.admit(worst)  # 0.986 reserved
    assert not guard.admit(worst)  # a fourth could cross $1.00: refused before it is sent
    guard.settle(worst, Decimal("0.05"))  # the first came back cheap: still no room for a worst case
    assert not guard.admit(worst)
    guard.settle(worst, Decimal("0.05"), role="judge")  # so did the second, a judge call
    assert guard.admit(worst)  # now one more fits
    guard.settle(worst, Decimal(0), unreported=worst)  # an answer without usage is booked at its worst case
    assert guard.spent == Decimal("0.10") + worst and guard.refused == 2
    assert guard.reserved == worst and guard.remaining == Decimal("0.24264")
    message = guard.message()
    assert message.startswith("stopped before crossing --max-cost $1.00: spent $0.43 as the server billed it")
    assert "judge $0.05" in message and "model $0.05" in message and "assumed for answers that reported no usage" in message
    resumed = CostGuard(Decimal("1.00"), spent_before=Decimal("0.99"))
    assert not resumed.admit(Decimal("0.02")) and "earlier sessions $0.99" in resumed.message()
    resumed.settle(Decimal(0), Decimal("0.05"))
    assert resumed.message().startswith("stopped at --max-cost $1.00, passed by $0.04")
    assert CostLimitReached(resumed).exit_code == 3 and str(CostLimitReached(resumed)) == resumed.message()


def test_token_bound_is_bytes_plus_chat_overhead_or_the_tokenizer() -> None:
    cjk = "東京" * 100  # a server may count one token per character; bytes (3 per character) still bound it
    assert estimate_tokens(cjk) == 600 and estimate_tokens("x" * 10) == 10
    assert estimate_tokens("abcd", count=lambda t: 1) == 1
    request = GenerateRequest((Message("system", "s"), Message("user", cjk)),
                              GenerationSettings(max_tokens=5, system="be brief"))
    assert prompt_tokens_bound(request) == CHAT_TOKENS_PER_REQUEST + 3 * CHAT_TOKENS_PER_MESSAGE + 1 + 600 + 8
    assert prompt_tokens_bound(request, count=len) == CHAT_TOKENS_PER_REQUEST + 3 * CHAT_TOKENS_PER_MESSAGE + 1 + 200 + 8


# -- hostile price tables (issue 22 item 11): one line, exit 2, before anything is recorded ----------------

HOSTILE = {
    "1e30": ("models:\n  m:\n    input: 1e30\n    output: 1\n", ":3: m.input: must be at most 1,000,000,000"),
    "39 digits": ("models:\n  m:\n    input: 1\n    output: " + "9" * 39 + "\n", ":4: m.output: must be at most"),
    "huge exponent": ("models:\n  m:\n    input: 1e999999999\n    output: 1\n", ":3: m.input: must be at most"),
    "tiny exponent": ("models:\n  m:\n    input: 1e-999999999\n    output: 1\n", ":3: m.input: has more than 12"),
    "inf": ("models:\n  m:\n    input: .inf\n    output: 1\n", ":3: m.input: must be a non-negative number"),
    "nan": ("models:\n  m:\n    input: NaN\n    output: 1\n", ":3: m.input: must be a non-negative number"),
    "long": ("models:\n  m:\n    input: 0." + "0" * 50 + "1\n    output: 1\n", ":3: m.input: must be a number of at most"),
    "list price": ("models:\n  m:\n    input: [1]\n    output: 1\n", ":3: m.input: must be a non-negative number"),
    "list key": ("models:\n  ? [a, b]\n  : {input: 1, output: 2}\n", ":2: models: a key must be a name"),
    "mapping key": ("{a: 1}: 2\n", ":1: a key must be a name"),
    "top list": ("- 1\n", ":1: expected a mapping with a 'models' key"),
    "empty": ("", ":1: empty file"),
    "escape currency": ("currency: \"\\e[31mX\"\nmodels:\n  m: {input: 1, output: 1}\n", ":1: currency: currency must"),
    "deep": ("models:\n  m: " + "[" * 100_000 + "]" * 100_000 + "\n", "nested"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_price_tables_are_one_located_line(tmp_path: Path, case: str) -> None:
    text, message = HOSTILE[case]
    p = tmp_path / "prices.yaml"
    p.write_text(text)
    with pytest.raises(InputError) as e:
        load_prices(p)
    assert str(e.value).startswith(str(p)) and message in str(e.value), str(e.value)


def test_devices_and_fifos_are_refused_before_a_byte_is_read(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # nobody writes to it: reading it would hang
    for path in (Path("/dev/zero"), fifo):
        with pytest.raises(InputError, match="not a regular file"):
            load_prices(path)


def test_bounded_amounts_on_the_command_line() -> None:
    assert parse_money("2.50", "--price-in") == Decimal("2.5") and parse_money("1e9", "--price-out") == Decimal("1e9")
    for text, message in [("1e999999999", "must be at most"), ("1e30", "must be at most"), ("nan", "non-negative"),
                          ("-1", "non-negative"), ("1e-20", "decimal places")]:
        with pytest.raises(ProctorError, match=message):
            parse_money(text, "--price-in")
    assert parse_money("5000000", "--max-cost") == Decimal(5_000_000)
    with pytest.raises(ProctorError, match="--max-cost must be at most"):
        parse_money("1e13", "--max-cost")


# -- GuardedModel: the tokenizer when there is one, and what the server reported ---------------------------


class _Billing(ModelBase):
    """Answers every request billing `factor` x the prompt's characters and `output` tokens; has a tokenizer
    (one token per character) when `tokenizer` is set."""

    name = "openai:billing"
    preferred_chunk_size = 1

    def __init__(self, factor: int = 1, output: int = 4, tokenizer: bool = False) -> None:
        self.factor, self.output, self._tokenizer = factor, output, tokenizer

    @property
    def has_tokenizer(self) -> bool:
        return self._tokenizer

    def count_prompt_tokens(self, text: str) -> int:
        return len(text)

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        self.in_flight = getattr(self, "in_flight", 0) + 1
        self.most_in_flight = max(getattr(self, "most_in_flight", 0), self.in_flight)
        await asyncio.sleep(0.01)  # requests overlap, as over HTTP
        self.in_flight -= 1
        return [Generation(text="x", input_tokens=self.factor * sum(len(m.content) for m in r.messages),
                           output_tokens=self.output) for r in requests]


def _ask(text: str, max_tokens: int = 10) -> GenerateRequest:
    return GenerateRequest((Message("user", text),), GenerationSettings(max_tokens=max_tokens))


def test_the_tokenizer_bounds_the_prompt_when_proctor_has_it() -> None:
    assert token_counter(_Billing()) is None  # offers a counter, but no tokenizer behind it
    count = token_counter(_Billing(tokenizer=True))
    assert count is not None and count("東京") == 2
    price = Money(input=Decimal(1_000_000), output=Decimal(0))  # $1 per input token
    with_tokenizer = GuardedModel(_Billing(tokenizer=True), CostGuard(Decimal(10_000)), 1, price)
    without = GuardedModel(_Billing(), CostGuard(Decimal(10_000)), 1, price)
    overhead = CHAT_TOKENS_PER_REQUEST + CHAT_TOKENS_PER_MESSAGE
    assert with_tokenizer._estimate(_ask("東京")).worst == overhead + 2
    assert without._estimate(_ask("東京")).worst == overhead + 6  # UTF-8 bytes


def test_worst_case_is_raised_by_what_the_server_billed() -> None:
    price = Money(input=Decimal(1_000_000), output=Decimal(1_000_000))  # $1 per token
    model = GuardedModel(_Billing(factor=50, output=30), CostGuard(Decimal(100_000)), 1, price)
    first = model._estimate(_ask("abcd")).worst
    assert first == CHAT_TOKENS_PER_REQUEST + CHAT_TOKENS_PER_MESSAGE + 4 + 10
    asyncio.run(model.generate([_ask("abcd")]))  # billed 200 input tokens (estimate 84), 30 output (limit 10)
    assert model.input_ratio == Decimal(200) / 84 and model.output_ratio == 3
    assert model._estimate(_ask("abcd")).worst == 200 + 30  # the next worst case covers what was billed
    assert model.guard.spent == 230 and model.guard.reserved == 0


def test_a_request_that_does_not_fit_waits_for_those_in_flight() -> None:
    price = Money(input=Decimal(0), output=Decimal(1_000_000))  # $1 per output token: worst case $10, billed $4
    guard = CostGuard(Decimal(25))
    inner = _Billing(output=4)
    model = GuardedModel(inner, guard, 4, price)

    async def go() -> list[bool]:
        async def one() -> bool:
            try:
                await model.generate([_ask("")])
                return True
            except CostLimitReached:
                return False
        return list(await asyncio.gather(*(one() for _ in range(8))))

    sent = asyncio.run(go())
    # two fit at once ($20 reserved); the others wait for them instead of being refused, and are sent while
    # a worst case still fits: 4 sent ($16), as one at a time would; refused only with nothing in flight
    assert sum(sent) == 4 and guard.spent == 16 and guard.refused == 4 and guard.reserved == 0
    assert inner.most_in_flight == 2
