"""`proctor run` by generation on the two backends not covered elsewhere from the CLI:
a local HF model (chat template, batched generation) and Anthropic's Messages API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from proctor import read_run
from proctor.log.runlog import Outcome
from proctor.testing import LocalServer

from .conftest import MMLU_PRO

ITEMS = Path(__file__).resolve().parents[2] / "examples" / "items" / "demo.jsonl"


def test_hf_generation_run(cli: Any, tmp_path: Path, tiny_model_dir: Path) -> None:
    r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", f"hf:{tiny_model_dir}", "--prompt", "zero_shot",
            "--max-tokens", "8", "--batch-size", "4", "-o", tmp_path / "run", "--store", tmp_path / "s.sqlite",
            "--no-progress")
    assert r.code == 0 or "was cut at the token limit" in r.err, r.err  # a random model may run to 8 tokens on all
    log = read_run(tmp_path / "run")
    assert log.results is not None and len(log.samples) == log.results.overall.n > 0
    assert all(s.outcome is not Outcome.ERROR for s in log.samples)
    first = log.samples[0]
    assert first.raw_output is not None and first.extraction_rule  # "none" is a rule too: audited, not an error
    assert first.output_tokens is not None and 0 < first.output_tokens <= 8
    assert log.manifest.model.spec == f"hf:{tiny_model_dir}"


def test_anthropic_run(cli: Any, tmp_path: Path, server: LocalServer, monkeypatch: Any) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-not-a-secret")
    r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", "anthropic:claude-test", "--base-url",
            server.url, "--prompt", "zero_shot", "-o", tmp_path / "run", "--store", tmp_path / "s.sqlite",
            "--no-progress")
    assert r.code == 0, r.err
    log = read_run(tmp_path / "run")
    assert server.stats()["by_path"].get("/v1/messages") == len(log.samples)
    assert all(s.outcome in (Outcome.CORRECT, Outcome.WRONG) for s in log.samples)  # "The answer is (X)"
    assert "sk-ant-test-not-a-secret" not in json.dumps(log.manifest.model_dump(mode="json"))
