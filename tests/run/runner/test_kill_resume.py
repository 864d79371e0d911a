"""A real run killed with SIGKILL mid-way, then resumed by the same command: no finished sample is
requested again, and the results equal an uninterrupted run. Counts what a local server received."""

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

import proctor
from proctor.core.results import MetricBlock
from proctor.testing import serve

from .conftest import make_items

SRC = str(Path(proctor.__file__).resolve().parents[1])


def _command(data: Path, base_url: str, out: Path, store: Path) -> list[str]:
    return [sys.executable, "-m", "proctor", "run", str(data), "--model", "openai:scripted", "--base-url", base_url,
            "--concurrency", "4", "-o", str(out), "--store", str(store), "--no-progress"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.long
def test_sigkill_then_resume(tmp_path: Path) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(it.to_json()) + "\n" for it in make_items(60)))
    env = {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test-not-a-secret"}
    with serve(responder="random", latency=0.05) as srv:
        out, store = tmp_path / "run", tmp_path / "store.sqlite"
        proc = subprocess.Popen(_command(data, srv.base_url, out, store), env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while _lines(out / "samples.jsonl") < 20 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        finished_before = _lines(out / "samples.jsonl")
        assert 20 <= finished_before < 60, "the kill must land mid-run"
        first = srv.stats()["by_path"].get("/v1/chat/completions", 0)
        # each answer is durable the moment it arrives: only the requests in flight (concurrency 4) are lost
        assert first - finished_before <= 4

        srv.reset()
        done = subprocess.run(_command(data, srv.base_url, out, store), env=env, capture_output=True, text=True, check=False)
        assert done.returncode == 0, done.stderr
        second = srv.stats()["by_path"].get("/v1/chat/completions", 0)
        # every sample finished before the kill is answered from the log, never requested again
        assert second <= 60 - finished_before
        assert first + second >= 60

        resumed = proctor.read_run(out)
        assert len(resumed.samples) == 60 and resumed.results is not None
        # a clean, uninterrupted run of the same command (scripted answers are deterministic)
        srv.reset()
        clean = subprocess.run(_command(data, srv.base_url, tmp_path / "clean", tmp_path / "other.sqlite"),
                               env=env, capture_output=True, text=True, check=False)
        assert clean.returncode == 0, clean.stderr
        def scores(o: MetricBlock) -> dict[str, object]:
            return o.model_dump(exclude={"latency_s_mean"})

        clean_results = proctor.read_run(tmp_path / "clean").results
        assert clean_results is not None
        assert scores(clean_results.overall) == scores(resumed.results.overall)
        assert clean_results.by_category.keys() == resumed.results.by_category.keys()
        assert "sk-test-not-a-secret" not in (out / "manifest.json").read_text()
