"""Runs to export: a real scripted run of the bundled multiple-choice items, and a synthetic run in every
outcome (errors, no answer, partial credit, unscored) with its results computed by proctor.stats.intervals."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.runlog import SAMPLES, Manifest, Outcome, Sample, write_manifest, write_results
from proctor.metrics.results import summarize

ROOT = Path(__file__).resolve().parents[3]
MC = ROOT / "examples" / "items" / "multiple-choice.jsonl"


@pytest.fixture
def scripted_run(tmp_path: Path) -> Path:
    """`proctor run` of the bundled multiple-choice items with a scripted model (16 samples, in-process)."""
    out = tmp_path / "run"
    assert main(["run", str(MC), "--model", "scripted:random,seed=3", "-o", str(out), "--no-progress",
                 "--store", str(tmp_path / "store.sqlite"), "--no-history"]) == 0
    return out


_OUTCOMES = [  # (outcome, score, extracted, error)
    (Outcome.CORRECT, 1.0, "B", None), (Outcome.WRONG, 0.0, "C", None), (Outcome.NO_ANSWER, 0.0, None, None),
    (Outcome.PARTIAL, 0.5, "B", None), (Outcome.ERROR, None, None, "HTTP 500 after 4 retries"),
    (Outcome.UNSCORED, None, "A", None), (Outcome.CORRECT, 1.0, "B", None), (Outcome.WRONG, 0.0, "D", None),
]


def mixed_samples() -> list[Sample]:
    """Eight samples, one or two of each outcome; chat prompts, tokens, a reasoning trace on the first."""
    out = []
    for i, (outcome, score, extracted, error) in enumerate(_OUTCOMES):
        out.append(Sample(
            sample_id=f"mix.{i}#0", item_id=f"mix.{i}", dataset="mixed", category="math" if i % 2 else "law",
            prompt=[{"role": "system", "content": "Answer with a letter."}, {"role": "user", "content": f"Q{i}?"}],
            reference="B", raw_output=None if error else f"The answer is ({extracted})", extracted=extracted,
            extraction_rule="answer_is" if extracted else "none", score=score, outcome=outcome, error=error,
            input_tokens=None if error else 20 + i, output_tokens=None if error else 5, latency_s=0.25,
            reasoning="Let me think." if i == 0 else None, finish_reason="stop"))
    return out


@pytest.fixture
def mixed_run(tmp_path: Path) -> Path:
    """A finished run of `openai:Qwen/Qwen3-8B` on a local server, in every outcome, with its results.json."""
    return write_run(tmp_path / "mixed", mixed_samples(), "mixed-run", "0.3.0", max_tokens=256)


def write_run(d: Path, samples: list[Sample], run_id: str, version: str, max_tokens: int) -> Path:
    """A finished run directory of `openai:Qwen/Qwen3-8B` on a local server: its manifest, `samples` and their
    results.json (the dataset named after the directory)."""
    d.mkdir()
    write_manifest(d, Manifest(run_id=run_id, proctor_version=version, dataset={"name": d.name, "n_items": len(samples)},
                               model={"spec": "openai:Qwen/Qwen3-8B", "base_url": "http://127.0.0.1:8000/v1"},
                               mode="generate", prompt_kind="zero_shot", started_at="2026-01-02T03:04:05+00:00",
                               finished_at="2026-01-02T03:05:00+00:00",
                               generation={"temperature": 0.0, "max_tokens": max_tokens, "stop": [], "seed": 1}))
    (d / SAMPLES).write_text("".join(s.model_dump_json() + "\n" for s in samples))
    write_results(d, summarize(samples))
    return d
