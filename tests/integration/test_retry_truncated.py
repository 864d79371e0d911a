"""`run --retry-truncated RUN --max-tokens N` (#39 item 3): 10 of 30 answers truncated → exactly those 10 asked again
at the larger budget (the local server counts the requests), the first attempts kept in the log, both accuracies
in results.json and on the console, RUN left as it was."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor import read_run
from proctor.log.checksums import CHECKSUMS
from proctor.log.runlog import RESULTS, SAMPLES, Outcome, iter_samples, read_manifest
from proctor.testing import LocalServer

from .conftest import chat_requests

LONG = " ".join(["word"] * 60)


@pytest.fixture
def srv(echo_cut_server: LocalServer) -> LocalServer:
    return echo_cut_server


@pytest.fixture
def items(tmp_path: Path) -> Path:
    """30 true/false items whose echo reads True, the 10 with ids t00…t09 long enough that it is cut at 40 tokens."""
    path = tmp_path / "items.jsonl"
    rows = [{"identifier": f"t{i:02d}", "modality": "boolean", "response": "True",
             "prompt": f"Answer: True. Claim {i}{' ' + LONG if i < 10 else ''}."} for i in range(30)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(cli: Any, srv: LocalServer, tmp_path: Path, *argv: str | Path) -> Any:
    return cli("run", *argv, "--base-url", srv.base_url, "--store", tmp_path / "s.sqlite", "--no-progress")


def test_only_the_truncated_samples_are_asked_again_and_both_numbers_are_kept(
        cli: Any, srv: LocalServer, items: Path, tmp_path: Path) -> None:
    srv.reset()
    first = _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--max-tokens", "40", "-o",
                 tmp_path / "first")
    assert first.code == 0, first.err
    log = read_run(tmp_path / "first")
    truncated = sorted(s.sample_id for s in log.samples if s.outcome is Outcome.TRUNCATED)
    assert truncated == [f"t{i:02d}#0" for i in range(10)] and chat_requests(srv) == 30
    untouched = {p.name: p.read_bytes() for p in (tmp_path / "first").iterdir() if p.is_file()}

    srv.reset()
    r = _run(cli, srv, tmp_path, "--retry-truncated", tmp_path / "first", "--max-tokens", "200", "-o",
             tmp_path / "again")
    assert r.code == 0, r.err
    assert chat_requests(srv) == 10  # exactly the 10 truncated ones
    assert srv.stats()["last_body"]["max_tokens"] == 200
    assert "asking again the 10 truncated sample(s)" in r.err

    records = list(iter_samples(tmp_path / "again" / SAMPLES))
    assert len(records) == 40  # the 30 first attempts, then the 10 second attempts after them
    assert sorted(s.sample_id for s in records[30:]) == truncated
    again = read_run(tmp_path / "again")
    by_id = {s.sample_id: s for s in again.samples}
    for sid in truncated:  # the second attempt is the one scored, and says what the first was
        s = by_id[sid]
        assert s.outcome is not Outcome.TRUNCATED and s.first_attempt is not None
        assert (s.first_attempt.outcome, s.first_attempt.max_tokens) == (Outcome.TRUNCATED, 40)
    assert all(by_id[f"t{i:02d}#0"].first_attempt is None for i in range(10, 30))
    res, before = again.results, log.results
    assert res is not None and before is not None
    first_acc = res.metrics["first_attempt_accuracy"]
    assert first_acc.value == before.overall.accuracy and first_acc.n == before.overall.n_scored
    assert (first_acc.ci_low, first_acc.ci_high) == (before.overall.ci_low, before.overall.ci_high)
    assert res.overall.n_truncated == 0 and before.overall.n_truncated == 10
    # RUN's results.json holds the bounds the retry settles: every truncated one wrong (20/30) … right (30/30)
    written = json.loads((tmp_path / "first" / "results.json").read_text())["overall"]
    assert (written["truncated_low"], written["truncated_high"]) == (pytest.approx(20 / 30), 1.0)
    assert (first_acc.value, res.overall.accuracy) == (20 / 30, 1.0)  # the echoes cut short were the only misses
    assert "first attempt (--max-tokens 40) accuracy" in r.out and "10 truncated asked again at --max-tokens 200" in r.out

    spec = read_manifest(tmp_path / "again").spec
    assert spec is not None and spec.retry_of is not None and spec.generation.max_tokens == 200
    assert spec.retry_of.run_id == log.manifest.run_id and spec.retry_of.max_tokens == 40
    assert {p.name: p.read_bytes() for p in (tmp_path / "first").iterdir() if p.is_file()} == untouched
    assert (tmp_path / "first" / CHECKSUMS).exists() and cli("verify", tmp_path / "first").code == 0
    assert cli("verify", tmp_path / "again").code == 0

    srv.reset()  # the same command again, RUN named by its recorded run id: nothing left to ask
    r = _run(cli, srv, tmp_path, "--retry-truncated", log.manifest.run_id, "--max-tokens", "200", "-o",
             tmp_path / "again")
    assert r.code == 0 and chat_requests(srv) == 0 and "30/30 done, 0 to ask" in r.err

    # a retry killed after 4 of its 10 second attempts (no results, no checksums yet) asks only the 6 left
    lines = (tmp_path / "again" / SAMPLES).read_text().splitlines(keepends=True)
    (tmp_path / "again" / SAMPLES).write_text("".join(lines[:34]))
    for name in (RESULTS, CHECKSUMS):
        (tmp_path / "again" / name).unlink()
    srv.reset()  # --no-cache: the request cache holds the 10 answers already
    r = _run(cli, srv, tmp_path, "--retry-truncated", log.manifest.run_id, "--max-tokens", "200", "-o",
             tmp_path / "again", "--no-cache")
    assert r.code == 0 and chat_requests(srv) == 6, r.err
    assert "asking again the 6 truncated sample(s) still left at --max-tokens 200" in r.err
    resumed = read_run(tmp_path / "again")
    assert resumed.results is not None and resumed.results.overall.accuracy == 1.0
    assert sum(s.first_attempt is not None for s in resumed.samples) == 10


def test_a_retry_is_refused_where_it_cannot_help(cli: Any, srv: LocalServer, items: Path, tmp_path: Path) -> None:
    """Each refusal is one line, exit 2, and writes nothing (no run directory)."""
    assert _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--max-tokens", "40", "-o",
                tmp_path / "first").code == 0
    assert _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--max-tokens", "500", "-o",
                tmp_path / "whole").code == 0
    unfinished = tmp_path / "unfinished"
    shutil.copytree(tmp_path / "first", unfinished)
    (unfinished / RESULTS).unlink()
    first = tmp_path / "first"
    refusals = {
        ("--retry-truncated", first, "--max-tokens", "40"): "give --max-tokens N above",
        ("--retry-truncated", first): "a larger budget",
        ("--retry-truncated", first, "--max-tokens", "200", "--epochs", "2"): "--epochs cannot be given",
        ("--retry-truncated", first, "--max-tokens", "200", "--temperature", "0.7"): "--temperature cannot be given",
        (items, "--retry-truncated", first, "--max-tokens", "200"): "DATASET cannot be given",
        ("--retry-truncated", tmp_path / "nowhere", "--max-tokens", "200"): "not a run directory nor a run id",
        ("--retry-truncated", tmp_path / "whole", "--max-tokens", "900"): "no sample was truncated",
        ("--retry-truncated", unfinished, "--max-tokens", "200"): "has not finished",
        ("--retry-truncated", first, "--max-tokens", "200", "--shards", "2"): "not with --shards",
        ("--retry-truncated", first, "--max-tokens", "200", "--dry-run"): "not with --dry-run",
        ("--retry-truncated", first, "--max-tokens", "200", "--stop-when-decided", "--baseline", first,
         "--max-drop", "5"): "--stop-when-decided cannot be given",
    }
    srv.reset()
    for argv, said in refusals.items():
        r = _run(cli, srv, tmp_path, *argv, "-o", tmp_path / "refused")
        lines = r.err.strip().splitlines()
        assert r.code == 2 and said in r.err and len(lines) == 1 and "Traceback" not in r.err, (argv, r.err)
        assert not (tmp_path / "refused").exists(), argv
    assert chat_requests(srv) == 0


def test_a_second_attempt_that_errors_and_is_resumed_keeps_its_first_attempt(
        cli: Any, srv: LocalServer, items: Path, tmp_path: Path) -> None:
    """#51 item 2(d): the 10 second attempts fail (500 on every request at the larger budget), then the same command
    asks them again: each keeps its first attempt (first-attempt accuracy read 0.750 where the first run had
    0.500… here 20/30, and fewer "asked again" than were)."""
    srv.reset()
    assert _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--max-tokens", "40", "-o",
                tmp_path / "first").code == 0
    argv = ("--retry-truncated", tmp_path / "first", "--max-tokens", "200", "-o", tmp_path / "again",
            "--max-error-rate", "1")
    srv.configure(poison='"max_tokens": 200')
    try:
        r = _run(cli, srv, tmp_path, *argv)
    finally:
        srv.configure(poison=None)
    errored = [s for s in read_run(tmp_path / "again").samples if s.outcome is Outcome.ERROR]
    assert errored and all(s.first_attempt is not None for s in errored), r.err  # the fail-fast stop: 8 of 10
    r = _run(cli, srv, tmp_path, *argv)
    assert r.code == 0, r.err
    again = read_run(tmp_path / "again")
    assert again.results is not None and again.results.overall.accuracy == 1.0
    assert sum(s.first_attempt is not None for s in again.samples) == 10
    assert all(s.first_attempt.outcome is Outcome.TRUNCATED for s in again.samples if s.first_attempt is not None)
    assert again.results.metrics["first_attempt_accuracy"].value == pytest.approx(20 / 30)
    assert "10 truncated asked again at --max-tokens 200" in r.out


def test_a_retry_of_an_edited_first_run_is_refused(cli: Any, srv: LocalServer, items: Path, tmp_path: Path) -> None:
    """#51 item 2(d): the first run must verify: an edited one was copied into the retry (and the retry verified)."""
    srv.reset()
    assert _run(cli, srv, tmp_path, items, "--model", "openai:proctor-test", "--max-tokens", "40", "-o",
                tmp_path / "first").code == 0
    path = tmp_path / "first" / SAMPLES
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0] = {**rows[0], "outcome": "correct", "score": 1.0}  # one truncated first attempt edited to right
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _run(cli, srv, tmp_path, "--retry-truncated", tmp_path / "first", "--max-tokens", "200", "-o",
             tmp_path / "again")
    assert r.code == 2 and "does not verify" in r.err and r.err.count("\n") == 1, r.err
    assert not (tmp_path / "again").exists()
