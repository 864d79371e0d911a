"""Counting servers on 127.0.0.1: a killed `proctor score` resumes without re-asking finished requests,
and the same run through another `--base-url` is answered from the cache (0 new calls)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("uvicorn")

from score_out import the_run_dir  # tests/ is on sys.path (tests/conftest.py's directory)

import proctor
from proctor.cli import main
from proctor.data.formats.suites import results_stem
from proctor.testing import serve

SRC = str(Path(proctor.__file__).resolve().parents[1])
N = 40


def _suite_dir(tmp_path: Path) -> Path:
    d = tmp_path / "suites"
    d.mkdir()
    (d / "p.txt").write_text("Decide which word fits.")
    contexts = [{"text": f"Context number {i} about apples", "expected": i % 2} for i in range(N)]
    suite = {"pretext": "Story:", "context": contexts, "posttext": "Answer:", "queries": ["yes", "no"]}
    (d / "p_T.json").write_text(json.dumps(suite))
    return d


def _lines(out: Path) -> int:
    """Samples logged so far by the run inside `score -o out`."""
    return sum(len(p.read_text().splitlines()) for p in out.glob("*/samples.jsonl"))


def _completions(srv: object) -> int:
    return int(srv.stats()["by_path"].get("/v1/completions", 0))  # type: ignore[attr-defined]


@pytest.mark.long
def test_killed_score_resumes_without_reasking(tiny_model_dir: Path, tmp_path: Path) -> None:
    data, out, store = _suite_dir(tmp_path), tmp_path / "out", tmp_path / "store.sqlite"
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test"}
    with serve(model_dir=str(tiny_model_dir), latency=0.05) as srv:
        cmd = [sys.executable, "-m", "proctor", "score", str(data), "--model", "openai:tiny", "--base-url",
               srv.base_url, "--concurrency", "4", "-o", str(out), "--store", str(store), "--no-progress"]
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while _lines(out) < 10 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished = _lines(out)
        assert 10 <= finished < N, "the kill must land mid-run"
        srv.reset()
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False, timeout=300)
        assert done.returncode == 0, done.stderr
        # 4 requests per unfinished context at most (2 queries + 2 unconditional), + 1 capability probe
        assert _completions(srv) <= (N - finished) * 4 + 1
    log = proctor.read_run(the_run_dir(out))
    assert len(log.samples) == N and log.results is not None and log.results.overall.n_scored == N
    stem = results_stem("p", "T", "openai:tiny")  # probsem's naming: prompt, suite, model
    assert (out / f"{stem}.csv").exists() and (out / f"{stem}.jsonl").exists()


@pytest.mark.long
def test_other_base_url_reuses_the_cache(tiny_model_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    data, store = _suite_dir(tmp_path), str(tmp_path / "store.sqlite")
    with serve(model_dir=str(tiny_model_dir)) as first, serve(model_dir=str(tiny_model_dir)) as second:
        def score(urls: list[str], out: str) -> None:
            args = ["score", str(data), "--model", "openai:tiny", "-o", str(tmp_path / out), "--store", store,
                    "--no-progress", *[a for u in urls for a in ("--base-url", u)]]
            assert main(args) == 0

        score([first.base_url], "a")
        assert _completions(first) > 0
        first.reset()
        score([second.base_url, first.base_url], "b")  # another URL set, another run directory
        probes = _completions(first) + _completions(second)
        assert probes <= 1  # only the capability probe: every log-prob came from the cache
    a, b = proctor.read_run(the_run_dir(tmp_path / "a")), proctor.read_run(the_run_dir(tmp_path / "b"))
    assert {s.item_id: s.details["logprobs"] for s in a.samples} == {s.item_id: s.details["logprobs"] for s in b.samples}
    assert "base_url" not in a.manifest.model_identity.model_dump_json()
