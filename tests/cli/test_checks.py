"""Item 14 of issue 13: arguments are checked before any heavy import and before a model loads."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import proctor
from proctor.cli.checks import hf_location, model_spec
from proctor.util.errors import ProctorError

SRC = str(Path(proctor.__file__).resolve().parents[1])
GOOD = str(Path(__file__).parents[1] / "fixtures" / "items" / "good.jsonl")
PROBE = ("import sys; from proctor.cli import main; rc = main(sys.argv[1:]); "
         "print('TORCH' if 'torch' in sys.modules else 'NO-TORCH', rc)")


@pytest.mark.parametrize(("args", "message"), [
    # the ranges are the spec's (proctor.core.spec, build.EvalOptions): their errors shown with the flag (cli/fields.py)
    (["--limit", "-1"], "--limit: Input should be greater than or equal to 1"),
    (["--prompt", "fiveshot"], "did you mean five_shot?"),
    (["--timeout", "-1"], "--timeout must be a number greater than 0"),
    (["--max-tokens", "-5"], "--max-tokens: Input should be greater than or equal to 1"),
    (["--temperature", "nan"], "--temperature: Input should be a finite number"),
    (["--top-p", "1.5"], "--top-p: Input should be less than or equal to 1"),
    (["--epochs", "0"], "--epochs: Input should be greater than or equal to 1"),
    (["--mode", "logprobs"], "did you mean logprob?"),
])
def test_bad_arguments_fail_before_torch_or_the_model(args: list[str], message: str, tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()  # an hf model directory that would take seconds to load, if it were ever loaded
    done = subprocess.run([sys.executable, "-c", PROBE, "run", GOOD, "-m", f"hf:{model}", *args],
                          capture_output=True, text=True, env={**os.environ, "PYTHONPATH": SRC}, timeout=120, check=False)
    assert message in done.stderr, done.stderr
    assert done.stdout.split() == ["NO-TORCH", "2"]


@pytest.mark.parametrize(("args", "message"), [
    # issue 36 #3: no range is declared on the command line (typer's min/max) or by hand: each is the spec's own
    (["--min-p", "1.5"], "--min-p: Input should be less than or equal to 1"),
    (["--top-k", "0"], "--top-k: Input should be greater than or equal to 1"),
    (["--thinking-budget", "0"], "--thinking-budget: Input should be greater than or equal to 1"),
    (["--shots", "-1"], "--shots: Input should be greater than or equal to 0"),
    (["--judge", "scripted:first", "--judge-temperature", "-1"],
     "--judge-temperature: Input should be greater than or equal to 0"),
    (["--judge", "scripted:first", "--judge-max-tokens", "0"],
     "--judge-max-tokens: Input should be greater than or equal to 1"),
])
def test_every_range_is_the_specs_named_by_its_flag(args: list[str], message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.cli import main

    assert main(["run", GOOD, "-m", "scripted:first", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_unknown_dataset_suggests_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.cli import main

    assert main(["run", "mmlu_pro", "-m", "scripted:first"]) == 2
    assert "did you mean mmlu-pro?" in capsys.readouterr().err


def test_missing_hf_directory_says_so() -> None:
    with pytest.raises(ProctorError, match="hf:/nonexistent: no such directory"):
        model_spec("hf:/nonexistent")
    with pytest.raises(ProctorError, match="no such directory"):
        hf_location("./not-here")


def test_offline_hub_id_fails_fast(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    t0 = time.monotonic()
    with pytest.raises(ProctorError, match="no directory 'tiny' here, and the Hugging Face Hub cannot be reached"):
        hf_location("tiny")
    assert time.monotonic() - t0 < 1
    (tmp_path / "tiny").mkdir()
    hf_location("tiny")  # a local directory wins over a Hub id


@pytest.mark.parametrize("spec", ["gpt2", "hf:", "vllm:", "sglang:x"])
def test_malformed_model_specs(spec: str) -> None:
    with pytest.raises(ProctorError):
        model_spec(spec)


def test_cached_hub_id_is_allowed_offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    snap = cache / "models--org--tiny" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text("{}")
    (cache / "models--org--tiny" / "refs").mkdir()
    (cache / "models--org--tiny" / "refs" / "main").write_text("abc123")
    monkeypatch.setattr("huggingface_hub.constants.HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    hf_location("org/tiny")  # in the local cache: transformers can load it offline
    with pytest.raises(ProctorError, match="cannot be reached"):
        hf_location("org/other")


def test_data_file_may_be_a_directory_of_split_files(tmp_path: Path) -> None:
    """`--data-file DIR` (test + validation parquet, as examples/upstream/mmlu_pro) passes; a device does not."""
    from proctor.cli.checks import readable_file

    readable_file(tmp_path, "--data-file", allow_dir=True)
    with pytest.raises(ProctorError, match="not a regular file"):
        readable_file(tmp_path, "--data-file")
    with pytest.raises(ProctorError, match="not a regular file"):
        readable_file(Path("/dev/null"), "--data-file", allow_dir=True)


def test_schemes_are_the_backend_registrys(monkeypatch: pytest.MonkeyPatch) -> None:
    """One list: a backend registered in `proctor.models.registry` passes the CLI's early check, with no second list."""
    from proctor.models import registry

    assert registry.SCHEMES == tuple(registry.BACKENDS)
    with pytest.raises(ProctorError, match="unknown scheme 'mybackend'"):
        model_spec("mybackend:m")
    monkeypatch.setattr(registry, "SCHEMES", (*registry.SCHEMES, "mybackend"))
    model_spec("mybackend:m")
    with pytest.raises(ProctorError, match="SCHEME one of hf, openai, anthropic, vllm, scripted, mybackend"):
        model_spec("mybackend")


@pytest.mark.parametrize(("limits", "message"), [
    ((0, None, None), "--concurrency"), ((None, 0.0, None), "--timeout"), ((None, None, -1), "--max-retries"),
])
def test_the_request_limits_are_checked_by_flag(limits: tuple[int | None, float | None, int | None],
                                                message: str) -> None:
    from proctor.cli.checks import check_request_limits

    check_request_limits(4, 30.0, 0)  # in range: nothing to say
    with pytest.raises(ProctorError, match=message):
        check_request_limits(*limits)
