"""Prices from a YAML table or the command line, costs exact to the cent, the --max-cost guard."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from proctor.errors import InputError, ProctorError
from proctor.pricing import (
    CostGuard,
    Price,
    default_prices_path,
    estimate_tokens,
    format_money,
    load_prices,
    parse_money,
    resolve_price,
    run_cost,
    sample_cost,
)

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
    assert table.lookup("openai:gpt-4.1") == Price(Decimal("2.00"), Decimal("8.00"), "USD", f"{prices}:3")
    assert table.lookup("openai:gpt-4.1", batch=True).input == Decimal("1.00")  # type: ignore[union-attr]
    assert table.lookup("openai:o4-mini").output == Decimal("4.40")  # type: ignore[union-attr]
    assert table.lookup("openai:o4-mini", batch=True).output == Decimal("4.40")  # type: ignore[union-attr]
    assert table.lookup("anthropic:claude-sonnet-4").output == Decimal(15)  # type: ignore[union-attr]
    assert table.lookup("anthropic:claude-opus-4-1").output == Decimal(75)  # type: ignore[union-attr]
    assert table.lookup("openai:unknown") is None


def test_cost_is_exact_to_the_cent() -> None:
    price = Price(Decimal("1.10"), Decimal("4.40"))
    # 1,000 samples of 1,234 input and 7,777 output tokens: floats would drift; Decimal does not
    usages = [(1234, 7777)] * 1000
    summary = run_cost(price, usages, correct=3)
    assert summary.total == Decimal("35.5762")  # 1000 * (1234*1.10 + 7777*4.40) / 1e6
    assert format_money(summary.total) == "$35.58"
    assert summary.per_correct is not None and format_money(summary.per_correct) == "$11.86"
    assert sample_cost(price, 1, 0) == Decimal("0.0000011")
    assert format_money(Decimal("0.005")) == "$0.01" and format_money(Decimal("0.004999")) == "$0.00"
    assert format_money(Decimal("12.345"), "EUR") == "12.35 EUR" and format_money(None) == "unknown"


def test_unknown_usage_is_never_free() -> None:
    summary = run_cost(Price(Decimal(1), Decimal(1)), [(10, 10), (None, 5), (3, None)], correct=1)
    assert (summary.priced, summary.unpriced) == (1, 2)
    assert summary.per_correct is None  # a per-answer price over a partial total would mislead
    assert summary.as_dict()["unpriced_samples"] == 2
    assert run_cost(Price(Decimal(1), Decimal(1)), [(10, 10)], correct=0).per_correct is None


@pytest.mark.parametrize(("text", "message"), [
    ("models:\n  m:\n    input: 1\n", ":2: m: missing output:"),
    ("models:\n  m:\n    input: 1\n    output: -2\n", ":4: m.output: must be a non-negative number, got '-2'"),
    ("models:\n  m:\n    input: cheap\n    output: 2\n", ":3: m.input: must be a non-negative number"),
    ("models:\n  m:\n    input: 1\n    output: 2\n    cached: 0.5\n", ":5: m: unknown key 'cached'"),
    ("models: [1, 2]\n", ":1: models: 'models' must map"),
    ("prices:\n  m: 1\n", ":1: unknown key 'prices'"),
    ("models:\n  m: {input: 1, output: [2\n", ": not valid YAML"),
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
    assert flags == Price(Decimal("0.15"), Decimal("0.6"))
    assert resolve_price("openai:gpt-4.1", prices_file=prices).input == Decimal("2.00")  # type: ignore[union-attr]
    monkeypatch.setenv("PROCTOR_PRICES", str(prices))
    assert resolve_price("openai:gpt-4.1", batch=True).output == Decimal("4.00")  # type: ignore[union-attr]
    with pytest.raises(ProctorError, match="go together"):
        resolve_price("x:y", price_in=Decimal(1))
    with pytest.raises(InputError, match="cannot read"):
        resolve_price("x:y", prices_file=tmp_path / "missing.yaml")
    with pytest.raises(ProctorError, match="--max-cost must be a number"):
        parse_money("ten", "--max-cost")


def test_cost_guard_counts_in_flight_worst_cases() -> None:
    guard = CostGuard(Decimal("1.00"), Price(Decimal(1), Decimal(10)))  # $/M tokens
    worst = guard.worst_case(input_tokens=1000, max_output_tokens=32_768)  # $0.328680
    assert worst == Decimal("0.32868")
    assert guard.admit(worst) and guard.admit(worst) and guard.admit(worst)  # 0.986 reserved
    assert not guard.admit(worst)  # a fourth could cross $1.00: refused before it is sent
    guard.settle(worst, Decimal("0.05"))  # the first came back cheap: still no room for a worst case
    assert not guard.admit(worst)
    guard.settle(worst, Decimal("0.05"))  # so did the second
    assert guard.admit(worst)  # now one more fits
    guard.settle(worst, None)  # unknown usage is booked at its worst case
    assert guard.spent == Decimal("0.10") + worst and guard.refused == 2
    assert guard.reserved == worst and guard.remaining == Decimal("0.24264")
    assert "stopped before crossing --max-cost $1.00" in guard.message()
    assert estimate_tokens("x" * 10) == 4
    resumed = CostGuard(Decimal("1.00"), Price(Decimal(1), Decimal(10)), spent=Decimal("0.99"))
    assert not resumed.admit(Decimal("0.02"))
