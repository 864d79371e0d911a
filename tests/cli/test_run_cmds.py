"""`proctor run` / `score` as a new user meets them: the resume says so, nothing left to ask loads no model,
the data's own problems and a missing API key are said before any model loads or any request is sent."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from proctor.cli import main

ROOT = Path(__file__).resolve().parents[2]
MC = ROOT / "examples" / "items" / "multiple-choice.jsonl"
DEMO = ROOT / "examples" / "items" / "demo.jsonl"


@pytest.fixture
def loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every model spec `get_model` is asked to load (the real backend still loads)."""
    from proctor import models
    from proctor.models import registry

    seen: list[str] = []
    real = registry.get_model

    def counting(spec: str, **kw: Any) -> Any:
        seen.append(spec)
        return real(spec, **kw)

    monkeypatch.setattr(models, "get_model", counting)
    monkeypatch.setattr(registry, "get_model", counting)
    return seen


def _run(tmp_path: Path, *extra: str) -> list[str]:
    return ["run", str(MC), "--model", "scripted:first", "-o", str(tmp_path / "run"), "--no-progress",
            "--store", str(tmp_path / "store.sqlite"), *extra]


def test_resume_says_how_much_is_done_and_a_finished_run_loads_no_model(
        tmp_path: Path, loads: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path)) == 0
    first = capsys.readouterr()
    assert "resuming" not in first.err and loads == ["scripted:first"]
    samples = tmp_path / "run" / "samples.jsonl"
    lines = samples.read_text().splitlines()
    samples.write_text("\n".join(lines[:10]) + "\n")  # a run killed after 10 of its 16 answers
    assert main(_run(tmp_path)) == 0
    assert f"resuming {tmp_path / 'run'}: 10/16 done, 6 to ask" in capsys.readouterr().err
    assert main(_run(tmp_path)) == 0
    again = capsys.readouterr()
    assert f"resuming {tmp_path / 'run'}: 16/16 done, 0 to ask" in again.err
    assert loads == ["scripted:first"] * 2  # the third command loaded nothing
    assert "accuracy" in again.out and json.loads((tmp_path / "run" / "results.json").read_text())["overall"]["n"] == 16


def test_errored_samples_are_asked_again_and_counted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path)) == 0
    samples = tmp_path / "run" / "samples.jsonl"
    rows = [json.loads(x) for x in samples.read_text().splitlines()]
    rows[0].update(outcome="error", error="boom", score=None)
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "run" / "checksums.json").unlink()  # as a run stopped before its end left it (an edit is refused)
    capsys.readouterr()
    assert main(_run(tmp_path)) == 0
    assert "15/16 done, 1 to ask (1 errored before, asked again)" in capsys.readouterr().err


def test_a_local_model_is_not_loaded_for_a_finished_run(tmp_path: Path, tiny_model_dir: Path,
                                                        loads: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", str(MC), "--model", f"hf:{tiny_model_dir}", "--mode", "logprob", "-o", str(tmp_path / "lp"),
            "--no-progress", "--store", str(tmp_path / "s.sqlite")]
    assert main(args) == 0
    assert main(args) == 0
    assert loads == [f"hf:{tiny_model_dir}"]
    assert "16/16 done, 0 to ask" in capsys.readouterr().err


def test_score_resumes_without_loading_the_model(tmp_path: Path, tiny_model_dir: Path, loads: list[str],
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    args = ["score", str(ROOT / "examples" / "suites"), "--model", f"hf:{tiny_model_dir}", "-o", str(tmp_path / "s"),
            "--no-progress", "--store", str(tmp_path / "s.sqlite")]
    assert main(args) == 0
    assert main(args) == 0
    assert loads == [f"hf:{tiny_model_dir}"]
    assert "3/3 done, 0 to ask" in capsys.readouterr().err


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor import models
    from proctor.models import registry

    def refuse(spec: str, **kw: Any) -> Any:
        raise AssertionError(f"{spec} was loaded before the input was checked")

    monkeypatch.setattr(models, "get_model", refuse)
    monkeypatch.setattr(registry, "get_model", refuse)


def test_items_without_choices_are_refused_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _no_model(monkeypatch)
    assert main(["run", str(DEMO), "--model", "hf:.", "--mode", "logprob", "-o", str(tmp_path / "x")]) == 2
    assert "--mode logprob needs closed-set items" in capsys.readouterr().err
    assert main(["run", str(DEMO), "--model", "hf:.", "-o", str(tmp_path / "y")]) == 2
    assert "pass --judge MODEL" in capsys.readouterr().err
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_the_hub_error_comes_before_the_model_loads(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    _no_model(monkeypatch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    assert main(["run", "mmlu-pro", "--model", "hf:."]) == 2
    err = capsys.readouterr().err
    assert "--data-file" in err and "Traceback" not in err


def test_a_different_run_in_the_directory_is_refused_before_the_model_loads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(_run(tmp_path)) == 0
    _no_model(monkeypatch)
    assert main(_run(tmp_path, "--temperature", "0.5")) == 2
    assert "holds a different run" in capsys.readouterr().err


@pytest.mark.parametrize(("spec", "env"), [("anthropic:claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
                                           ("openai:gpt-4o", "OPENAI_API_KEY")])
def test_a_missing_api_key_is_said_before_any_request(spec: str, env: str, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    for var in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    shutil.copy(MC, tmp_path / "mc.jsonl")
    assert main(["run", str(tmp_path / "mc.jsonl"), "--model", spec, "-o", str(tmp_path / "r")]) == 2
    assert f"no API key: set {env}" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_keyless_local_server_needs_no_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proctor.testing import serve

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with serve(responder="first") as srv:
        args = ["run", str(MC), "--model", "openai:m", "--base-url", srv.base_url, "-o", str(tmp_path / "r"),
                "--no-progress", "--no-history", "--no-cache"]
        assert main(args) == 0


def _in_terminal(args: list[str], cwd: Path) -> str:
    """What `proctor ARGS` shows in a 100-column terminal (a pseudo-terminal: progress bar and all)."""
    import fcntl
    import os
    import struct
    import subprocess
    import sys
    import termios

    main_fd, term_fd = os.openpty()
    fcntl.ioctl(term_fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR", "CI")}
    env.update({"PYTHONPATH": str(ROOT / "src"), "OMP_NUM_THREADS": "1", "TERM": "xterm-256color"})
    proc = subprocess.Popen([sys.executable, "-m", "proctor", *args], cwd=cwd, env=env, stdin=term_fd,
                            stdout=term_fd, stderr=term_fd, close_fds=True)
    os.close(term_fd)
    chunks = []
    while True:
        try:
            data = os.read(main_fd, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=120)
    os.close(main_fd)
    return b"".join(chunks).decode("utf-8", "replace")


def test_in_a_terminal_a_local_run_is_quiet_and_its_resume_says_so(tmp_path: Path, tiny_model_dir: Path) -> None:
    args = ["run", str(MC), "--model", f"hf:{tiny_model_dir}", "--mode", "logprob", "-o", "lp",
            "--store", str(tmp_path / "s.sqlite")]
    first = _in_terminal(args, tmp_path)
    assert "multiple-choice: accuracy" in first and "resuming" not in first
    assert "past_key_values" not in first and "deprecated" not in first and "Warning" not in first, first
    again = _in_terminal(args, tmp_path)
    assert "note: resuming lp: 16/16 done, 0 to ask" in again and "multiple-choice: accuracy" in again
    assert "Traceback" not in first + again


def test_a_judge_without_a_key_is_named_as_the_judge_with_its_own_flags(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", str(DEMO), "--model", "scripted:first", "--judge", "openai:gpt-4o",
                 "-o", str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "error: --judge-api-key-env: the judge openai:gpt-4o has no API key: set OPENAI_API_KEY" in err
    assert "--judge-base-url" in err and " --base-url" not in err
    assert not (tmp_path / "run").exists()


def test_a_dry_run_needs_no_api_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """It sends nothing, so it asks for no key; the real run still refuses without one."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert main(["run", str(MC), "--model", "openai:gpt-4o", "--dry-run"]) == 0
    assert "nothing was sent or written" in capsys.readouterr().out
    assert main(["run", str(MC), "--model", "openai:gpt-4o", "-o", str(tmp_path / "run")]) == 2
    assert "no API key" in capsys.readouterr().err


def test_an_unknown_prompt_kind_lists_only_the_chosen_benchmarks_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    capitals = ROOT / "examples" / "benchmarks" / "capitals.yaml"
    assert main(["run", str(capitals), "--model", "scripted:first", "--prompt", "nonesuch", "--dry-run"]) == 2
    assert "choose from three_shot, zero_shot\n" in capsys.readouterr().err
    assert main(["run", str(MC), "--model", "scripted:first", "--prompt", "nonesuch", "--dry-run"]) == 2
    assert "choose from zero_shot, chain_of_thought, five_shot\n" in capsys.readouterr().err


def test_the_summary_line_says_how_many_answers_came_from_the_cache(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """#41.21: the cache key holds no URL (by design), so a run whose judge was pointed at another server got the
    previous judge's grades with no word said. The summary line now counts the cache's answers, the judge's too;
    a run that asked everything anew says nothing of the cache."""
    args = ["run", str(DEMO), "--model", "scripted:random", "--judge", "scripted:first", "--store",
            str(tmp_path / "s.sqlite"), "--max-error-rate", "1"]
    assert main([*args, "-o", str(tmp_path / "first")]) == 0
    first = [line for line in capsys.readouterr().out.splitlines() if "→" in line]
    assert len(first) == 1 and "cache" not in first[0], first
    assert main([*args, "-o", str(tmp_path / "again")]) == 0
    again = [line for line in capsys.readouterr().out.splitlines() if "→" in line]
    assert len(again) == 1 and again[0].startswith("demo: accuracy "), again
    assert " · 24 of 24 requests from the cache, judge 4 of 4  → " in again[0], again
    assert main([*args, "-o", str(tmp_path / "fresh"), "--no-cache"]) == 0
    assert "cache" not in next(line for line in capsys.readouterr().out.splitlines() if "→" in line)
