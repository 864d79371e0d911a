"""Money exact to the cent: a run's cost from its usages (the judge's apart), unknown usage never free, amounts
shown safely."""

from __future__ import annotations

from decimal import Decimal

from proctor.core.money import Money
from proctor.core.results import Cost
from proctor.metrics.money import cost_line, format_amount, format_money, run_cost, sample_cost


def test_cost_is_exact_to_the_cent() -> None:
    price = Money(input=Decimal("1.10"), output=Decimal("4.40"))
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
    summary = run_cost(Money(input=Decimal(1), output=Decimal(1)), [(10, 10), (None, 5), (3, None)], correct=1)
    assert (summary.priced_samples, summary.unpriced_samples) == (1, 2)
    assert summary.per_correct is None  # a per-answer price over a partial total would mislead
    assert summary.judge is None and summary.judge_priced_calls is None  # no judge: no judge keys
    assert run_cost(Money(input=Decimal(1), output=Decimal(1)), [(10, 10)], correct=0).per_correct is None


def test_money_too_large_to_round_is_shown_not_raised() -> None:
    assert format_money(Decimal("1e30")) == "$1E+30"
    big = Cost(total=Decimal("1e40"), model=Decimal("1e40"), priced_samples=1)
    assert cost_line(big).startswith("cost: $1E+40")


def test_recorded_amounts_and_currencies_are_shown_safely() -> None:
    assert format_amount("12.345", "EUR") == "12.35 EUR" and format_amount("NaN") == "NaN"
    assert format_amount("\x1b[31mboom") == "\\x1b[31mboom" and format_amount("1", "\x1b]8;;x") == "1.00 \\x1b]8;;x"
    hostile = Cost(total=Decimal(1), model=Decimal(1), currency="\x1b[2J", priced_samples=1)
    assert cost_line(hostile).startswith("cost: 1.00 \\x1b[2J")


def test_cost_line_breaks_out_the_judge() -> None:
    summary = run_cost(Money(input=Decimal(1), output=Decimal(2)), [(1_000_000, 0)], correct=1,
                       judge_price=Money(input=Decimal(3), output=Decimal(0)), judge_usages=[(1_000_000, 5), (None, None)])
    assert (summary.model, summary.judge, summary.total) == (Decimal(1), Decimal(3), Decimal(4))
    assert summary.per_correct is None  # one judge call reported no usage
    line = cost_line(summary)
    assert "cost: $4.00" in line and "model $1.00, judge $3.00 (1 calls)" in line and "1 judge calls not priced" in line
    unpriced_judge = run_cost(Money(input=Decimal(1), output=Decimal(2)), [], correct=0, judge_usages=[(1, 1)])
    assert (unpriced_judge.judge, unpriced_judge.judge_priced_calls, unpriced_judge.judge_unpriced_calls) == (0, 0, 1)

