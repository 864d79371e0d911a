"""Every prompt setting is sent or refused (#36 item 5): a prompt kind, shots or format asked of a log-likelihood
run is either in the contexts the model scores, or refused before the run with one line (exit 2) — never recorded
in the manifest and the run id while another prompt is sent."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.runlog import iter_samples

ROOT = Path(__file__).parents[2]
CAPITALS = ROOT / "examples" / "benchmarks" / "capitals.yaml"  # three_shot (its default), zero_shot
QUIZ = ROOT / "tests" / "fixtures" / "benchmarks" / "quiz.yaml"  # five_shot (its default), zero_shot
ITEMS = ROOT / "examples" / "items" / "multiple-choice.jsonl"
MMLU_PRO = ROOT / "tests" / "fixtures" / "upstream" / "mmlu_pro"
COMMON = ("--model", "scripted:first", "--no-history", "--no-cache", "--no-progress")


def _contexts(out: Path) -> list[str]:
    return [s.prompt for s in iter_samples(out / "samples.jsonl")]  # whole (a shared head is stored once)


def _run(tmp_path: Path, target: Path | str, *args: str) -> tuple[int, Path]:
    out = tmp_path / "-".join(a.strip("-") for a in args) if args else tmp_path / "default"
    return main(["run", str(target), *args, *COMMON, "-o", str(out)]), out


@pytest.mark.parametrize(("target", "kind", "shots"), [
    (CAPITALS, None, 3), (CAPITALS, "zero_shot", 0), (CAPITALS, "three_shot", 3),
    (QUIZ, None, 5), (QUIZ, "zero_shot", 0), (QUIZ, "five_shot", 5),
])
def test_a_spec_benchmarks_prompt_kind_is_what_log_likelihood_sends(target: Path, kind: str | None, shots: int,
                                                                    tmp_path: Path) -> None:
    code, out = _run(tmp_path, target, *(["--prompt", kind] if kind else []))
    assert code in (0, 1)
    marker = "\nAnswer: " if target == CAPITALS else "\nA: "
    assert {c.count(marker) for c in _contexts(out)} == {shots}
    spec = json.loads((out / "manifest.json").read_text())["spec"]
    default = "three_shot" if target == CAPITALS else "five_shot"  # the kind sent is recorded, named or not (#47)
    assert spec["scorer"]["mode"] == "logprob" and spec["scorer"]["prompt_kind"] == (kind or default)


def test_zero_and_three_shot_capitals_are_different_runs(tmp_path: Path) -> None:
    _, zero = _run(tmp_path, CAPITALS, "--prompt", "zero_shot")
    _, three = _run(tmp_path, CAPITALS, "--prompt", "three_shot")
    ids = {json.loads((p / "manifest.json").read_text())["run_id"] for p in (zero, three)}
    assert len(ids) == 2 and _contexts(zero) != _contexts(three)


@pytest.mark.parametrize("mode", ["logprob", "generate"])
def test_a_kind_the_spec_lacks_is_refused_in_both_modes(mode: str, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, CAPITALS, "--prompt", "five_shot", "--mode", mode)
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert len(err.splitlines()) == 1 and "five_shot" in err and "three_shot, zero_shot" in err


def test_a_fixed_log_likelihood_context_refuses_a_prompt_kind(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, "mmlu-pro", "--data-file", str(MMLU_PRO), "--limit", "2", "--mode", "logprob",
                     "--prompt", "five_shot")
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert err.startswith("error: --prompt:") and "--mode generate" in err and len(err.splitlines()) == 1


def test_item_data_sends_five_shots_by_log_likelihood_and_refuses_chain_of_thought(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, ITEMS, "--mode", "logprob", "--prompt", "five_shot")
    assert code in (0, 1)
    assert {c.count("\nAnswer: ") for c in _contexts(out)} == {5}
    code, out = _run(tmp_path, ITEMS, "--mode", "logprob", "--prompt", "chain_of_thought")
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists() and "chain_of_thought" in err and len(err.splitlines()) == 1


@pytest.mark.parametrize("target", [CAPITALS, ITEMS])
def test_chat_format_is_refused_by_log_likelihood(target: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, target, "--mode", "logprob", "--format", "chat")
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert err.startswith("error: --format:") and "plain text" in err and len(err.splitlines()) == 1


def test_a_judge_is_refused_by_log_likelihood(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, CAPITALS, "--judge", "scripted:first")
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists() and err.startswith("error: --judge:") and len(err.splitlines()) == 1


@pytest.mark.parametrize(("flag", "value"), [("--temperature", "0.7"), ("--max-tokens", "64"), ("--gen-seed", "3")])
def test_generation_settings_are_refused_by_log_likelihood(flag: str, value: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """They were dropped silently (not in the run id, not sent): a log-likelihood run samples nothing."""
    code, out = _run(tmp_path, CAPITALS, flag, value)
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists() and err.startswith(f"error: {flag}:") and len(err.splitlines()) == 1
