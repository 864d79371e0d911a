"""`--max-cost` against a server that bills more tokens than any word count (one per character, CJK prompts):
the spend never passes the limit by more than the requests in flight when it was reached, at concurrency 1
and 8, judge calls included; the stop message says what the server billed; the cost block breaks out the judge."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from proctor import read_run
from proctor.testing import LocalServer, serve

PRICE_IN, PRICE_OUT = Decimal("0.01"), Decimal(1)  # money per token ($10,000 / $1,000,000 per million)
VERDICT = "The candidate says what the reference says.\nGRADE: CORRECT"  # model and judge answer alike


@pytest.fixture(scope="module")
def inflating() -> Iterator[LocalServer]:
    with serve(responder=f"fixed={VERDICT}", usage="chars", latency=0.05) as srv:
        yield srv


def _items(path: Path, n: int = 24, modality: str = "shortprose") -> Path:
    rows = [{"identifier": f"q{i}", "modality": modality, "prompt": f"東京の天気について説明してください。{i}",
             "response": "晴れです。"} for i in range(n)]
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def _prices(path: Path) -> Path:
    path.write_text("currency: USD\nmodels:\n"
                    f"  openai:proctor-test: {{input: {PRICE_IN * 1_000_000}, output: {PRICE_OUT * 1_000_000}}}\n"
                    f"  openai:proctor-judge: {{input: {PRICE_IN * 1_000_000}, output: {PRICE_OUT * 1_000_000}}}\n")
    return path


def _run(cli: Any, srv: LocalServer, tmp_path: Path, concurrency: int, max_cost: str, judge: bool = True) -> Any:
    items = _items(tmp_path / "items.jsonl", modality="shortprose" if judge else "single-value")
    judge_args = ["--judge", "openai:proctor-judge", "--judge-base-url", srv.base_url] if judge else []  # its own
    return cli("run", items, "--model", "openai:proctor-test", *judge_args,
               "--base-url", srv.base_url, "--prices", _prices(tmp_path / "prices.yaml"),
               "--max-tokens", "10", "--concurrency", str(concurrency), "--max-cost", max_cost,
               "--store", tmp_path / "s.sqlite", "--no-progress", "-o", tmp_path / "run")


def _billed(stats: dict[str, Any]) -> Decimal:
    return PRICE_IN * stats["billed_input"] + PRICE_OUT * stats["billed_output"]


@pytest.mark.parametrize("judge", [True, False], ids=["judged", "exact"])
@pytest.mark.parametrize("concurrency", [1, 8])
def test_spend_stays_within_the_limit_plus_what_was_in_flight(cli: Any, inflating: LocalServer, tmp_path: Path,
                                                              concurrency: int, judge: bool) -> None:
    inflating.configure(responder=f"fixed={VERDICT}", usage="chars", latency=0.05)
    # judged: a judge call may cost $1,041 (1,024 output tokens at $1), and room for one is kept before an answer
    limit = Decimal(2000) if judge else Decimal(200)
    r = _run(cli, inflating, tmp_path, concurrency, str(limit), judge)
    stats = inflating.stats()
    billed = _billed(stats)
    assert r.code == 3, r.err  # stopped by the budget, and the exit status says so
    assert "Traceback" not in r.err and len(r.err.strip().splitlines()) == 1
    requests = stats["by_path"]["/v1/chat/completions"]
    assert 2 <= requests < (48 if judge else 24)  # requests went out, and the budget stopped them
    # what one request can cost at most, as the server billed it, times the requests that can be in flight
    worst_request = PRICE_IN * stats["billed_max_input"] + PRICE_OUT * stats["billed_max_output"]
    assert billed <= limit + concurrency * worst_request
    if concurrency == 1:  # the first answer teaches the guard the server's count; nothing can pass the limit
        assert billed <= limit
    shares = r"judge \$[0-9.]+, model \$[0-9.]+" if judge else r"model \$[0-9.]+"
    spent = re.search(rf"spent \$([0-9.]+) as the server billed it \({shares}\)", r.err)
    assert spent is not None, r.err
    assert Decimal(spent.group(1)) == billed.quantize(Decimal("0.01"))  # what was billed, not an estimate


def test_cost_block_breaks_out_the_judge(cli: Any, inflating: LocalServer, tmp_path: Path) -> None:
    inflating.configure(responder=f"fixed={VERDICT}", usage="chars", latency=0.0)
    r = _run(cli, inflating, tmp_path, 4, "100000")
    assert r.code == 0, r.err
    log = read_run(tmp_path / "run")
    cost = log.results.cost if log.results else None
    assert cost is not None and log.manifest.judge_price is not None
    billed = _billed(inflating.stats())
    assert cost.total == billed == cost.model + cost.judge
    assert cost.judge_priced_calls == 24 and cost.judge > cost.model
    assert sum(Decimal(s.judge_cost or 0) for s in log.samples) == cost.judge
    assert f"model ${cost.model:.2f}, judge ${cost.judge:.2f} (24 calls)" in r.out
    report = cli("report", tmp_path / "run", "-o", tmp_path / "report.html")
    assert report.code == 0, report.err
    html = (tmp_path / "report.html").read_text()
    assert f"model ${cost.model:.2f} · judge ${cost.judge:.2f}" in html


def test_max_cost_with_a_judge_of_unknown_price_is_refused(cli: Any, inflating: LocalServer, tmp_path: Path) -> None:
    r = cli("run", _items(tmp_path / "items.jsonl"), "--model", "openai:proctor-test", "--judge", "openai:other",
            "--base-url", inflating.base_url, "--prices", _prices(tmp_path / "prices.yaml"), "--max-tokens", "10",
            "--max-cost", "5", "--store", tmp_path / "s.sqlite", "--no-progress", "-o", tmp_path / "run")
    assert r.code == 2 and "--max-cost needs the price of the judge openai:other" in r.err
    assert not (tmp_path / "run").exists()
