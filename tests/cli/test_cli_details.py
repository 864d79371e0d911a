"""Small things a new user meets on the command line (issue 25, item 6)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.setting import setting_label

ROOT = Path(__file__).resolve().parents[2]


def test_version_and_help_with_examples(capsys: pytest.CaptureFixture[str]) -> None:
    from proctor import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"proctor {__version__}"
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    assert "Examples" in out and "proctor run examples/items/multiple-choice.jsonl --model hf:out/tiny" in out


@pytest.mark.parametrize(("spec", "meant"), [("gpt-4o", "openai:gpt-4o"), ("openai/gpt-4o", "openai:gpt-4o"),
                                             ("claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
                                             ("anthropic/claude-x", "anthropic:claude-x")])
def test_a_model_without_its_scheme_suggests_one(spec: str, meant: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(ROOT / "examples" / "items" / "multiple-choice.jsonl"), "--model", spec]) == 2
    assert f"(did you mean {meant}?)" in capsys.readouterr().err


def test_a_directory_of_item_files_names_them(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(ROOT / "examples" / "items"), "--model", "scripted:first"]) == 2
    err = capsys.readouterr().err
    assert "name the files" in err and "multiple-choice.jsonl" in err and "Traceback" not in err


def test_generating_for_suites_hints_at_score_before_it_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    args = ["run", "examples/suites", "--model", "scripted:first", "-o", str(tmp_path / "g"), "--no-progress",
            "--no-history", "--no-cache"]
    assert main(args) == 0
    err = capsys.readouterr().err
    assert "hint: suites is a probsem suite" in err and "proctor score examples/suites" in err
    assert "--mode logprob" in err


def test_a_judge_with_a_multiline_spec_is_one_line_in_a_setting() -> None:
    label = setting_label({"mode": "generate", "prompt": "zero_shot",
                           "judge": "scripted:fixed=The answer matches the reference.\nGRADE: CORRECT"})
    assert "\n" not in label and "\\n" not in label and "judge scripted:fixed=The answer matches the" in label
    assert label.endswith("…")


def test_score_table_has_the_run_ci_notation_and_is_not_cut_when_piped(tiny_model_dir: Path, tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "COLUMNS": "80", "OMP_NUM_THREADS": "1"}
    res = subprocess.run([sys.executable, "-m", "proctor", "score", str(ROOT / "examples" / "suites"), "--model",
                          f"hf:{tiny_model_dir}", "-o", str(tmp_path / "s"), "--no-history", "--no-cache"],
                         capture_output=True, text=True, env=env, timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert re.search(r"\n test_A +2 +2 +0 ", res.stdout) and "log-loss" in res.stdout and "…" not in res.stdout
    assert "[0." in res.stdout and "–" not in res.stdout


def test_compare_warnings_never_print_python_none() -> None:
    from proctor.analysis.compare import provenance_warnings
    from proctor.run.store import RunRecord

    def record(run_id: str, prompt_kind: str | None, extractor: str | None) -> RunRecord:
        return RunRecord(run_id=run_id, path=f"runs/{run_id}", model=f"m:{run_id}", dataset="d",
                         dataset_revision=None, dataset_hash="h", mode="generate", prompt_kind=prompt_kind,
                         template_hash="t", extractor_version=extractor, started_at="2025-01-01T00:00:00+00:00",
                         finished_at=None)

    warnings = provenance_warnings([record("a" * 12, None, None), record("b" * 12, "zero_shot", "proctor-extract/1")])
    assert len(warnings) == 2 and all("None" not in w for w in warnings)
    assert "m:aaaaaaaaaaaa (aaaaaaaaaaaa): none" in warnings[0]
