"""MMLU-Pro's tiger-local kind end to end: a base model's completion stops at "Question:", as
evaluate_from_local.py's SamplingParams(stop=["Question:"]) makes it, against the local server's stop handling."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from proctor import read_run
from proctor.testing import LocalServer

from .conftest import MMLU_PRO

RAMBLING = "Let's think step by step. The answer is (A).\n\nQuestion:\nA question of its own? The answer is (B)."


def test_tiger_local_completion_stops_at_question(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    server.configure(responder=f"fixed={RAMBLING}")
    r = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--model", "openai:base", "--base-url", server.base_url,
            "--no-chat", "--prompt", "tiger-local", "--limit", "2", "-o", tmp_path / "run", "--store",
            tmp_path / "s.sqlite", "--no-progress")
    assert r.code == 0, r.err
    log = read_run(tmp_path / "run")
    assert log.manifest.generation.stop == ("Question:",) and log.manifest.generation.max_tokens == 2048
    assert server.stats()["by_path"].get("/v1/completions") == 2  # a completion prompt, no chat template
    for s in log.samples:
        assert s.raw_output == "Let's think step by step. The answer is (A).\n\n"
