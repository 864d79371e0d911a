"""Issue 15 wired into `proctor run`, against a local test server of its own (its settings change here):
the answer extracted from the final answer only, truncation as its own outcome, benchmark budgets and the
context-window check, cost to the cent, --max-cost with resume, --batch through the run directory."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from proctor import read_run
from proctor.log.runlog import Outcome
from proctor.testing import LocalServer, serve

from .conftest import AIME, chat_requests

THOUGHT_THEN_NOTHING = r"<think>the answer must be \boxed{64}</think> I am not sure."


@pytest.fixture(scope="module")
def own_server() -> Iterator[LocalServer]:
    with serve(responder="first") as srv:
        yield srv


@pytest.fixture
def srv(own_server: LocalServer) -> LocalServer:
    own_server.configure(responder="first", truncate=False, reasoning=None, max_model_len=None, fault_rate=0.0)
    return own_server


def _run(cli: Any, srv: LocalServer, tmp_path: Path, *extra: str | Path, out: str = "run", limit: str = "4") -> Any:
    return cli("run", "aime-2025", "--data-file", AIME, "--model", "openai:proctor-test", "--base-url",
               srv.base_url, "--limit", limit, "--store", tmp_path / "s.sqlite", "--no-progress",
               "-o", tmp_path / out, *extra)


def test_answer_is_extracted_from_the_final_answer_only(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=f"fixed={THOUGHT_THEN_NOTHING}")
    r = _run(cli, srv, tmp_path, limit="1")
    assert r.code == 0, r.err
    (s,) = read_run(tmp_path / "run").samples
    assert s.outcome is Outcome.NO_ANSWER  # 64 (right) sits in the thought only: not taken as the answer
    assert s.reasoning == r"the answer must be \boxed{64}" and s.raw_output == THOUGHT_THEN_NOTHING


def test_reasoning_content_is_stored_apart(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=The answer is \boxed{64}", reasoning="I multiplied 1 by 64.")
    r = _run(cli, srv, tmp_path, limit="1")
    assert r.code == 0, r.err
    (s,) = read_run(tmp_path / "run").samples
    assert (s.outcome, s.reasoning) == (Outcome.CORRECT, "I multiplied 1 by 64.")


def test_truncation_is_its_own_outcome_counted_wrong_by_default(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=<think>" + "step " * 50 + r"</think> \boxed{64}", truncate=True)
    r = _run(cli, srv, tmp_path, "--max-tokens", "10")
    assert r.code == 1, r.err  # every answer cut: the score measures the budget, the run does not pass as fine
    assert "every answer (4 samples) was cut at the token limit" in r.err and "raise --max-tokens" in r.err
    log = read_run(tmp_path / "run")
    assert {s.outcome for s in log.samples} == {Outcome.TRUNCATED}
    assert {s.finish_reason for s in log.samples} == {"length"}
    assert all(s.extracted is None and s.score == 0.0 for s in log.samples)
    res = log.results
    assert res is not None and res.truncated_as == "wrong"
    assert (res.overall.n_truncated, res.overall.truncated_rate, res.overall.n_scored) == (4, 1.0, 4)
    assert res.overall.accuracy == 0.0
    assert all(m.n_truncated == 1 and m.truncated_rate == 1.0 for m in res.by_category.values())
    assert "truncated: 4 answers (100.0%)" in r.out and "counted as wrong" in r.out
    assert (res.overall.truncated_low, res.overall.truncated_high) == (0.0, 1.0)  # anywhere from none to all right
    assert "accuracy 0.000 if every one is wrong … 1.000 if every one is right" in r.out


def test_truncated_as_excluded_leaves_accuracy(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=<think>still thinking")  # an unclosed thought, no length stop
    r = _run(cli, srv, tmp_path, "--truncated-as", "excluded", out="ex")
    assert r.code == 1  # nothing scored: every answer is truncated and excluded
    res = read_run(tmp_path / "ex").results
    assert res is not None and res.truncated_as == "excluded"
    assert (res.overall.n_truncated, res.overall.n_scored, res.overall.accuracy) == (4, 0, None)
    assert "counted as excluded" in r.out
    r = _run(cli, srv, tmp_path, "--truncated-as", "nonsense", out="bad")
    assert r.code == 2 and "--truncated-as must be wrong or excluded" in r.err


def test_benchmark_budget_is_sent_and_the_context_window_refuses(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    r = _run(cli, srv, tmp_path, limit="1", out="budget")
    assert r.code == 0, r.err
    assert srv.stats()["last_body"]["max_tokens"] == 32768  # AIME 2025's budget when --max-tokens is not given
    assert read_run(tmp_path / "budget").manifest.generation.max_tokens == 32768
    srv.configure(max_model_len=4096)
    r = _run(cli, srv, tmp_path, limit="1", out="too-long")
    assert r.code == 2 and "exceeds openai:proctor-test's context window of 4096 tokens" in r.err
    assert chat_requests(srv) == 0 and not (tmp_path / "too-long" / "samples.jsonl").exists()
    r = _run(cli, srv, tmp_path, "--max-tokens", "2048", limit="1", out="fits")
    assert r.code == 0, r.err


def test_cost_to_the_cent_in_results_console_history_and_report(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=The answer is \boxed{64}")
    r = _run(cli, srv, tmp_path, "--price-in", "1.10", "--price-out", "4.40", "--max-tokens", "100")
    assert r.code == 0, r.err
    log = read_run(tmp_path / "run")
    n_in = sum(s.input_tokens or 0 for s in log.samples)
    n_out = sum(s.output_tokens or 0 for s in log.samples)
    expected = (Decimal("1.10") * n_in + Decimal("4.40") * n_out) / 1_000_000
    cost = log.results.cost if log.results else None
    assert cost is not None and cost.total == expected and cost.correct == 1
    assert cost.per_correct == expected  # one correct answer (item 1: 64)
    assert sum(Decimal(s.cost or "0") for s in log.samples) == expected
    assert log.manifest.price is not None and log.manifest.price.model_dump(mode="json") == {
        "input": "1.10", "output": "4.40", "currency": "USD", "source": "command line"}
    assert "cost: $0.00" in r.out
    runs = cli("runs", "--store", tmp_path / "s.sqlite", "--json")
    (rec,) = json.loads(runs.out)
    assert Decimal(rec["cost"]) == expected and rec["currency"] == "USD"
    report = cli("report", tmp_path / "run", "--format", "md", "-o", tmp_path / "report.md")
    assert report.code == 0, report.err
    text = (tmp_path / "report.md").read_text()
    assert "## Truncation and cost" in text and "per correct answer" in text
    assert "truncated answers count as wrong" in text
    report = cli("report", tmp_path / "run", "-o", tmp_path / "report.html")
    assert report.code == 0, report.err
    html = (tmp_path / "report.html").read_text()
    assert "per correct" in html and "4.40" in html
    assert re.search(r"counted wrong <span[^>]*>\(--truncated-as\)</span>", html)  # the flag kept on one line


def test_price_table_file_and_unknown_model(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: USD\nmodels:\n  openai:proctor-*:\n    input: 1000000\n    output: 1000000\n")
    srv.configure(responder=r"fixed=The answer is \boxed{64}")
    r = _run(cli, srv, tmp_path, "--prices", prices, "--max-tokens", "100", limit="2")
    assert r.code == 0, r.err
    log = read_run(tmp_path / "run")
    tokens = sum((s.input_tokens or 0) + (s.output_tokens or 0) for s in log.samples)
    assert log.results is not None and log.results.cost is not None
    assert log.results.cost.total == tokens  # a dollar a token
    prices.write_text("models:\n  anthropic:x:\n    input: 1\n    output: 2\n")
    r = _run(cli, srv, tmp_path, "--prices", prices, out="unknown")
    assert r.code == 2 and "no price for openai:proctor-test" in r.err


def test_max_cost_stops_cleanly_and_a_resume_continues(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    # a dollar per output token, input free: each request's worst case is $10, its real cost $4 (4 words)
    srv.configure(responder=r"fixed=The answer is \boxed{64}")
    flags = ("--price-in", "0", "--price-out", "1000000", "--max-tokens", "10", "--concurrency", "1")
    r = _run(cli, srv, tmp_path, *flags, "--max-cost", "25", limit="5")
    assert r.code == 3 and "stopped before crossing --max-cost $25.00: spent $16.00 as the server billed it" in r.err
    kept = read_run(tmp_path / "run").samples
    assert len(kept) == 4 and sum(Decimal(s.cost or "0") for s in kept) == 16  # 16 + 10 would cross 25
    sent = chat_requests(srv)
    r = _run(cli, srv, tmp_path, *flags, "--max-cost", "100", limit="5")
    assert r.code == 0, r.err
    assert chat_requests(srv) == sent + 1  # only the item not yet answered
    log = read_run(tmp_path / "run")
    assert log.results is not None and log.results.cost is not None and log.results.cost.total == 20
    r = _run(cli, srv, tmp_path, "--max-cost", "5", out="no-price")
    assert r.code == 2 and "--max-cost needs the price" in r.err


def test_batch_run_keeps_its_batches_in_the_run_directory(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=The answer is \boxed{64}", batch_polls=1)
    r = _run(cli, srv, tmp_path, "--batch", "--batch-poll-interval", "0.05", "--max-tokens", "50")
    assert r.code == 0, r.err
    state = json.loads((tmp_path / "run" / "batches.json").read_text())
    assert len(state["jobs"]) == 1 and srv.stats()["by_path"].get("/v1/batches", 0) >= 1
    assert chat_requests(srv) == 0  # nothing went one by one
    log = read_run(tmp_path / "run")
    assert [s.outcome for s in log.samples].count(Outcome.CORRECT) == 1 and len(log.samples) == 4
    r = cli("run", "aime-2025", "--data-file", AIME, "--model", "scripted:first", "--batch", "--limit", "1",
            "--no-progress", "-o", tmp_path / "scripted")
    assert r.code == 2 and "--batch does not apply to scripted:first" in r.err


def test_batch_run_killed_while_polling_is_picked_up_not_paid_twice(cli: Any, srv: LocalServer,
                                                                     tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import time

    from .conftest import proctor_argv, subprocess_env

    srv.configure(responder=r"fixed=The answer is \boxed{64}", batch_polls=100_000)  # stays in progress
    args = ("run", "aime-2025", "--data-file", AIME, "--model", "openai:proctor-test", "--base-url", srv.base_url,
            "--limit", "3", "--store", tmp_path / "s.sqlite", "--no-progress", "-o", tmp_path / "run", "--batch",
            "--batch-poll-interval", "0.05", "--max-tokens", "50")
    proc = subprocess.Popen(proctor_argv(*args), env=subprocess_env())
    state_file = tmp_path / "run" / "batches.json"
    try:
        deadline = time.monotonic() + 60
        while not _batch_recorded(state_file):
            assert proc.poll() is None and time.monotonic() < deadline, "the run never recorded its batch"
            time.sleep(0.05)
        time.sleep(0.3)  # polling now
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    [job] = json.loads(state_file.read_text())["jobs"]
    before = httpx.get(f"{srv.url}/stats/batches", timeout=10).json()["created"]["openai"]
    srv.configure(batch_polls=1)  # the provider finishes the batch (batches survive a reconfigure)
    r = cli(*args)
    assert r.code == 0, r.err
    created = httpx.get(f"{srv.url}/stats/batches", timeout=10).json()["created"]["openai"]
    assert created == before  # the same batch was polled, not submitted (and paid for) again
    assert [j["batch_id"] for j in json.loads(state_file.read_text())["jobs"]] == [job["batch_id"]]
    assert len(read_run(tmp_path / "run").samples) == 3


def _batch_recorded(state_file: Path) -> bool:
    try:
        return any(j["batch_id"] for j in json.loads(state_file.read_text())["jobs"])
    except (OSError, ValueError, KeyError):
        return False


def test_epochs_give_mean_pass_and_the_per_item_spread(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    srv.configure(responder=r"fixed=The answer is \boxed{64}")
    r = _run(cli, srv, tmp_path, "--epochs", "3", "--temperature", "0.6", "--max-tokens", "50", limit="2")
    assert r.code == 0, r.err
    res = read_run(tmp_path / "run").results
    assert res is not None and res.epochs is not None
    assert res.epochs.items_by_correct == {"0": 1, "1": 0, "2": 0, "3": 1} and res.epochs.item_sd_mean == 0.0
    assert (res.epochs.mean_at_k, res.epochs.pass_at_k) == (0.5, 0.5)
    assert "3 epochs: mean@3 0.500, pass@3 0.500, per-item spread (sd) 0.000" in r.out
    assert cli("report", tmp_path / "run", "--format", "md", "-o", tmp_path / "r.md").code == 0
    assert "items right in 0…3 epochs: 1 / 0 / 0 / 1" in (tmp_path / "r.md").read_text()


def test_an_unlabelled_suite_context_is_not_in_the_truncated_rate(cli: Any, srv: LocalServer, tmp_path: Path) -> None:
    """A probsem context with expected -1 (not scored) counts in neither the overall row's truncated rate nor the
    every-answer-truncated check: 2 of 2 scorable answers cut is 100%, not 66.7% (#51 item 6)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "demo.txt").write_text("A short made-up passage about a red kite.\n")
    (suite / "demo_A.json").write_text(json.dumps({
        "pretext": "Answer True or False.", "posttext": "The answer is:", "queries": ["True", "False"],
        "context": [{"text": "The kite is red.", "expected": 0}, {"text": "The kite is blue.", "expected": 1},
                    {"text": "The kite is pretty.", "expected": -1}]}))
    srv.configure(responder="fixed=one two three four five", truncate=True)
    r = cli("run", suite, "--model", "openai:proctor-test", "--base-url", srv.base_url, "--max-tokens", "2",
            "--store", tmp_path / "s.sqlite", "--no-progress", "-o", tmp_path / "run")
    overall = next(line for line in r.out.splitlines() if "overall" in line)
    assert "100.0%" in overall and "66.7%" not in overall, r.out
    assert "truncated: 2 answers (100.0%)" in " ".join(r.out.split())
    assert r.code == 1 and "every answer (2 samples) was cut at the token limit" in r.err
    samples = read_run(tmp_path / "run").samples
    assert sorted(s.outcome.value for s in samples) == sorted(["truncated", "truncated", "unscored"])
