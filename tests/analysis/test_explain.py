"""`proctor explain A B`: each differing setting named and grouped (model, prompt kind, answer rule, dtype), the first
differing prompt shown, and the flipped samples counted by cause with their share of the paired difference."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.analysis.explain import explain_runs
from proctor.cli import main


def _items(tmp_path: Path) -> Path:
    rows = [{"identifier": f"q{i}", "modality": "choiceof2", "prompt": f"Question {i}?", "response": "AB"[i % 2],
             "choices": {"A": "yes", "B": "no"}, "category": f"c{i % 3}"} for i in range(20)]
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(tmp_path: Path, name: str, *extra: str) -> Path:
    out = tmp_path / name
    assert main(["run", str(_items(tmp_path)), "-o", str(out), "--no-progress", "--no-history", "--no-cache",
                 *extra]) == 0
    return out


def _edit(run: Path, manifest: dict[str, dict[str, str]], samples: dict[int, dict[str, object]]) -> None:
    """Set manifest fields ({"provenance.backend": {"dtype": "bf16"}}) and sample fields by line (0-based)."""
    m = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    for path, fields in manifest.items():
        node = m
        for key in path.split("."):
            node = node[key]
        node.update(fields)
    (run / "manifest.json").write_text(json.dumps(m), encoding="utf-8")
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    for i, fields in samples.items():
        lines[i] = json.dumps({**json.loads(lines[i]), **fields})
    (run / "samples.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_different_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _run(tmp_path, "first", "--model", "scripted:first"), _run(tmp_path, "random", "--model",
                                                                       "scripted:random,seed=2")
    got = explain_runs(a, b, n_boot=200)
    fields = {d.field: d for d in got.differences}
    assert fields["spec.model.spec"].group == "model" and fields["spec.model.spec"].b == "scripted:random,seed=2"
    assert got.prompts_differ == 0 and got.first_prompt is None
    (cause,) = got.causes
    assert cause.cause == "same prompt, different output" and "spec.model.spec" in cause.settings
    assert got.difference is not None
    assert cause.points == pytest.approx(100 * got.difference.diff)  # the only cause explains all of it
    assert cause.a_ahead - cause.b_ahead == round(got.difference.diff * 20)
    capsys.readouterr()
    assert main(["explain", str(a), str(b), "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    assert "1. same prompt, different output:" in out and "paired 95% interval" in out and got.difference is not None
    assert f"[{100 * got.difference.ci_low:+.1f}, {100 * got.difference.ci_high:+.1f}]" in out


def test_a_different_prompt_kind(tmp_path: Path) -> None:
    a = _run(tmp_path, "zero", "--model", "scripted:first")
    b = _run(tmp_path, "cot", "--model", "scripted:first", "--prompt", "chain_of_thought")
    got = explain_runs(a, b, n_boot=200)
    kinds = [d for d in got.differences if d.field == "spec.scorer.prompt_kind"]
    assert kinds and kinds[0].group == "prompt" and (kinds[0].a, kinds[0].b) == ("zero_shot", "chain_of_thought")
    assert got.prompts_differ == 20 and got.first_prompt is not None and got.first_prompt.sample_id == "q0#0"
    assert got.first_prompt.a[:got.first_prompt.offset] == got.first_prompt.b[:got.first_prompt.offset]
    assert "Think step by step" in got.first_prompt.b and not got.causes  # scripted:first answers A either way


def test_answer_rule_dtype_and_truncation_flips_by_cause(tmp_path: Path) -> None:
    a = _run(tmp_path, "a", "--model", "scripted:first")
    b = tmp_path / "b"
    shutil.copytree(a, b)
    # B: read by another rule (two answers read differently), another dtype (three different outputs), one truncated
    _edit(b, {"spec.scorer": {"extract": "robust"}, "provenance.backend": {"dtype": "bfloat16"}},
          {0: {"score": 0.0, "outcome": "wrong", "extracted": "B"},  # q0 (answer A): same output, read wrong
           2: {"score": 0.0, "outcome": "wrong", "extracted": "B"},
           1: {"raw_output": "The answer is (B)", "extracted": "B", "score": 1.0, "outcome": "correct"},
           3: {"raw_output": "The answer is (B)", "extracted": "B", "score": 1.0, "outcome": "correct"},
           5: {"raw_output": "The answer is (B)", "extracted": "B", "score": 1.0, "outcome": "correct"},
           4: {"raw_output": "The ans", "extracted": None, "score": 0.0, "outcome": "truncated",
               "finish_reason": "length"}})
    got = explain_runs(a, b, n_boot=200)
    causes = {c.cause: c for c in got.causes}
    assert [c.cause for c in got.causes] == ["same prompt, different output", "same output, read differently",
                                             "error or truncation on one side"]
    assert (causes["same prompt, different output"].n, causes["same prompt, different output"].b_ahead) == (3, 3)
    assert causes["same prompt, different output"].points == pytest.approx(-15.0)
    assert causes["same output, read differently"].sample_ids == ["q0#0", "q2#0"]
    assert causes["same output, read differently"].settings == ["spec.scorer.extract"]
    assert causes["error or truncation on one side"].a_ahead == 1
    assert "provenance.backend.dtype" in causes["same prompt, different output"].settings
    groups = {d.field: d.group for d in got.differences}
    assert groups["provenance.backend.dtype"] == "backend" and groups["spec.scorer.extract"] == "answer rule"
    assert got.difference is not None
    assert sum(c.points for c in got.causes) == pytest.approx(100 * got.difference.diff)
