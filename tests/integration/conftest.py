"""Helpers for end-to-end CLI tests: fixture paths, an in-process CLI runner, a shared local server."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import proctor
from proctor.cli import main
from proctor.log.runlog import iter_samples

pytest.importorskip("uvicorn")

from proctor.testing import LocalServer, serve
from proctor.testing.server import FAULT_KINDS

UPSTREAM = Path(__file__).resolve().parents[1] / "fixtures" / "upstream"
MMLU_PRO = UPSTREAM / "mmlu_pro" / "test-00000-of-00001.parquet"
GPQA_DIAMOND = UPSTREAM / "gpqa" / "gpqa_diamond.csv"
AIME = UPSTREAM / "aime_2025" / "train.jsonl"
BENCHMARKS = {"mmlu-pro": MMLU_PRO, "gpqa-diamond": GPQA_DIAMOND, "aime-2025": AIME}
SRC = str(Path(proctor.__file__).resolve().parents[1])


@dataclass
class CliResult:
    code: int
    out: str
    err: str


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
    monkeypatch.setenv("COLUMNS", "200")


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Any:
    """Run `proctor ARGV` in-process; return its exit code and what it printed."""

    def run(*argv: str | Path) -> CliResult:
        capsys.readouterr()
        code = main([str(a) for a in argv])
        got = capsys.readouterr()
        return CliResult(code, got.out, got.err)

    return run


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, "OPENAI_API_KEY": "sk-test-not-a-secret"}


def proctor_argv(*argv: str | Path) -> list[str]:
    return [sys.executable, "-m", "proctor", *(str(a) for a in argv)]


@pytest.fixture(scope="module")
def echo_cut_server() -> Iterator[LocalServer]:
    """A server that echoes the question, cut at max_tokens words (the retry and budget-ladder tests)."""
    with serve(responder="echo", truncate=True) as server:
        yield server


@pytest.fixture(scope="package")
def random_server() -> Iterator[LocalServer]:
    """One OpenAI-compatible server answering with the `random` scripted rule, shared by the package."""
    with serve(responder="random") as srv:
        yield srv


@pytest.fixture
def server(random_server: LocalServer) -> LocalServer:
    """The shared server with default settings and zeroed counters."""
    random_server.configure(fault_rate=0.0, faults=FAULT_KINDS, latency=0.0, responder="random")
    return random_server


def chat_requests(srv: LocalServer) -> int:
    return int(srv.stats()["by_path"].get("/v1/chat/completions", 0))


def samples(run_dir: Path) -> list[dict[str, Any]]:
    """Every record of samples.jsonl as JSON, its prompt whole (a head the prompts share is stored once)."""
    return [s.model_dump(mode="json") for s in iter_samples(run_dir / "samples.jsonl")]


def latest(run_dir: Path) -> dict[str, dict[str, Any]]:
    """The last record per sample id (a resumed run appends retried samples)."""
    return {s["sample_id"]: s for s in samples(run_dir)}
