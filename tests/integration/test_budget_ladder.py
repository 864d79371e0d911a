"""`run --budgets 40,100,300` (#50 item 3): a ladder of retries on a scripted server whose echoes are cut at the
budget — exactly the samples still truncated are asked at each step (the server counts them), each step a run of
its own that verifies, and the last step's results.json holds accuracy at every budget with its interval, the
truncation bounds and the budget past which it settles; the report draws the curve."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor import read_run
from proctor.log.runlog import Outcome, read_manifest
from proctor.testing import LocalServer

from .conftest import chat_requests

BUDGETS = (40, 100, 300)


@pytest.fixture
def srv(echo_cut_server: LocalServer) -> LocalServer:
    return echo_cut_server


@pytest.fixture
def items(tmp_path: Path) -> Path:
    """30 true/false items whose echo reads True: t00-t09 fit 40 words, t10-t19 need 100, t20-t29 need 300."""
    path = tmp_path / "items.jsonl"
    extra = {0: 0, 1: 60, 2: 150}
    rows = [{"identifier": f"t{i:02d}", "modality": "boolean", "response": "True",
             "prompt": f"Answer: True. Claim {i} " + " ".join(["word"] * extra[i // 10]) + "."} for i in range(30)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(cli: Any, srv: LocalServer, tmp_path: Path, *argv: str | Path) -> Any:
    return cli("run", *argv, "--base-url", srv.base_url, "--store", tmp_path / "s.sqlite", "--no-progress")


def test_a_ladder_asks_only_the_still_truncated_and_records_the_curve(cli: Any, srv: LocalServer, items: Path,
                                                                      tmp_path: Path) -> None:
    srv.reset()
    r = _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--budgets", ",".join(map(str, BUDGETS)),
             "-o", tmp_path / "ladder")
    assert r.code == 0, r.err
    assert chat_requests(srv) == 30 + 20 + 10  # every item, then the 20 cut at 40, then the 10 still cut at 100
    steps = [tmp_path / "ladder" / f"max-tokens-{b}" for b in BUDGETS]
    for step in steps:
        assert cli("verify", step).code == 0
    last = read_run(steps[-1])
    spec = read_manifest(steps[-1]).spec
    assert spec is not None and spec.retry_of is not None
    assert (spec.retry_of.max_tokens, spec.retry_of.budgets, spec.generation.max_tokens) == (100, (40,), 300)
    by_id = {s.sample_id: s for s in last.samples}
    long = by_id["t25#0"]  # asked three times: cut at 40, cut at 100, whole at 300
    assert long.outcome is Outcome.CORRECT and long.asked_at == 300 and long.first_attempt is not None
    assert (long.first_attempt.outcome, long.first_attempt.max_tokens) == (Outcome.TRUNCATED, 40)
    assert [(a.outcome, a.max_tokens) for a in long.earlier_attempts] == [(Outcome.TRUNCATED, 100)]
    medium = by_id["t15#0"]  # whole at 100: copied from the step before, not asked again
    assert medium.asked_at == 100 and medium.earlier_attempts == [] and medium.first_attempt is not None
    assert by_id["t05#0"].first_attempt is None and by_id["t05#0"].asked_at is None

    assert last.results is not None
    curve = last.results.budget_curve
    assert curve is not None
    assert [(s.max_tokens, s.asked) for s in curve.steps] == [(40, 30), (100, 20), (300, 10)]
    accuracies = [s.block.accuracy for s in curve.steps]
    assert accuracies == [pytest.approx(10 / 30), pytest.approx(20 / 30), 1.0]
    assert [s.block.n_truncated for s in curve.steps] == [20, 10, 0]
    first = curve.steps[0].block  # the first step as the first run's own results counted it
    written = read_run(steps[0]).results
    assert written is not None
    assert (first.ci_low, first.ci_high) == (written.overall.ci_low, written.overall.ci_high)
    assert (first.truncated_low, first.truncated_high) == (written.overall.truncated_low, written.overall.truncated_high)
    assert curve.settled_at == 300 and curve.still_truncated == 0
    assert last.results.metrics["first_attempt_accuracy"].value == pytest.approx(10 / 30)

    srv.reset()  # the same command again: every step is done, nothing asked
    r = _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--budgets", ",".join(map(str, BUDGETS)),
             "-o", tmp_path / "ladder")
    assert r.code == 0 and chat_requests(srv) == 0, r.err

    report = tmp_path / "report.html"
    assert cli("report", steps[-1], "-o", report).code == 0
    html = report.read_text()
    assert 'class="budget-curve"' in html and "<svg" in html and "settles at 300 tokens" in html


def test_a_ladder_stops_where_nothing_is_cut_and_refuses_what_it_cannot_do(cli: Any, srv: LocalServer, items: Path,
                                                                          tmp_path: Path) -> None:
    srv.reset()
    r = _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--budgets", "40,300,900", "-o",
             tmp_path / "short")
    assert r.code == 0, r.err
    assert chat_requests(srv) == 30 + 20 and "nothing truncated at --max-tokens 300" in r.err
    assert not (tmp_path / "short" / "max-tokens-900").exists()
    refusals = {
        ("--budgets", "100,40"): "increasing",
        ("--budgets", "100"): "two or more",
        ("--budgets", "a,b"): "increasing token budgets",
        ("--budgets", "40,100", "--max-tokens", "40"): "not with --max-tokens",
        ("--budgets", "40,100", "--dry-run"): "not with --dry-run",
        ("--budgets", "40,100", "--shards", "2"): "not with --shards",
    }
    for argv, said in refusals.items():
        r = _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", *argv, "-o", tmp_path / "refused")
        assert r.code == 2 and said in r.err and len(r.err.strip().splitlines()) == 1, (argv, r.err)
        assert not (tmp_path / "refused").exists(), argv
