"""`run --dry-run` (proctor.run.estimate): the prompt-token count equals the real run's where proctor has the
model's tokenizer (hf:), bounds it from above otherwise, and nothing is sent or written."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import main
from proctor.metrics.results import read_run

ROOT = Path(__file__).resolve().parents[2]
MMLU_PRO = ROOT / "examples" / "upstream" / "mmlu_pro"


def _argv(tmp_path: Path, model: str, *extra: str) -> list[str]:
    return ["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model, "--prompt", "zero_shot",
            "--max-tokens", "4", "--limit", "4", "-o", str(tmp_path / "run"), "--store", str(tmp_path / "s.sqlite"),
            "--no-progress", *extra]


def _tokens(out: str) -> int:
    line = next(x for x in out.splitlines() if x.startswith("prompt tokens: "))
    return int(line.removeprefix("prompt tokens: ").split(", counted")[0].replace(",", ""))


def test_dry_run_counts_the_real_runs_prompt_tokens_with_hf(tiny_model_dir: Path, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    hf = f"hf:{tiny_model_dir}"
    assert main(_argv(tmp_path, hf, "--device", "cpu", "--dry-run", "--price-in", "1", "--price-out", "2")) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "run").exists() and not (tmp_path / "s.sqlite").exists()  # nothing written
    assert "4 item(s) × 1 epoch(s) → 4 request(s)" in out and "(exact)" in out and "at most 16" in out
    dry = _tokens(out)
    assert main(_argv(tmp_path, hf, "--device", "cpu", "--no-cache")) in (0, 1)  # 1: a random model cut at its budget on every item (cli/outcome.py)
    real = sum(s.input_tokens or 0 for s in read_run(tmp_path / "run").samples)
    assert dry == real > 0
    assert "cost: $0.00 to $0.00 at 1 in / 2 out per million tokens" in out  # a tiny run at $1 / $2 per million
    # without the model's tokenizer the count is a bound from above on the same prompts
    capsys.readouterr()
    assert main(_argv(tmp_path / "other", "scripted:first", "--dry-run")) == 0
    out = capsys.readouterr().out
    assert "an upper bound" in out and _tokens(out) >= real and "no price known" in out
    assert not (tmp_path / "other").exists()


def test_a_loglikelihood_run_records_every_token_dry_run_counts(tiny_model_dir: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 36 #6: a log-likelihood run records every token of every request, the few-shot context included
    (it recorded the options' tokens alone: 96 for 24 five-shot items where --dry-run said 7,396)."""
    hf = f"hf:{tiny_model_dir}"
    argv = ["run", str(ROOT / "examples" / "items" / "multiple-choice.jsonl"), "--model", hf, "--mode", "logprob",
            "--shots", "3", "-o", str(tmp_path / "run"), "--store", str(tmp_path / "s.sqlite"), "--no-progress",
            "--device", "cpu"]
    assert main([*argv, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "(exact)" in out
    dry = _tokens(out)
    assert main([*argv, "--no-cache"]) == 0
    samples = read_run(tmp_path / "run").samples
    scored = sum(n for s in samples for n in (s.details.get("n_tokens") or {}).values())
    assert sum(s.input_tokens or 0 for s in samples) == dry > 10 * scored  # the shots' tokens, not the options'
