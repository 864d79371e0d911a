"""One dtype policy for `hf:` and `vllm:` (proctor.models.dtype): `auto` is resolved by proctor, the same way for
both backends, and what ran is recorded (never `auto`). The real engine's agreement with `hf:` at default
settings is tested in tests/integration/vllm/test_managed.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.metrics.results import read_run
from proctor.models import get_model
from proctor.models.dtype import checkpoint_dtype, resolve_dtype
from proctor.models.vllm_engine import VLLMModel
from proctor.util.errors import ProctorError

MC = Path(__file__).resolve().parents[2] / "examples" / "items" / "multiple-choice.jsonl"


@pytest.mark.parametrize(("device", "checkpoint", "bf16", "want"), [
    ("cpu", "float32", False, "float32"),
    ("cpu", "bfloat16", True, "float32"),  # half precision on a CPU: float32 for both backends
    ("cpu", None, False, "float32"),
    ("cuda", "float32", True, "bfloat16"),
    ("cuda", "float32", False, "float16"),
    ("cuda", None, True, "bfloat16"),
    ("cuda:1", "float16", True, "float16"),  # the checkpoint's own half precision
    ("cuda", "bfloat16", True, "bfloat16"),
    ("cuda", "bfloat16", False, "float16"),  # no bfloat16 on this GPU
])
def test_auto_resolves_by_device_and_checkpoint(device: str, checkpoint: str | None, bf16: bool, want: str) -> None:
    assert resolve_dtype("auto", device=device, checkpoint=checkpoint, bf16_supported=bf16) == want


def test_an_explicit_dtype_is_kept_and_a_bad_one_names_the_choices() -> None:
    assert resolve_dtype("float16", device="cpu", checkpoint="float32", bf16_supported=False) == "float16"
    with pytest.raises(ProctorError, match=r"dtype must be auto, float32, bfloat16, float16; got 'float8'"):
        resolve_dtype("float8", device="cpu", checkpoint=None, bf16_supported=False)


def test_checkpoint_dtype_reads_config_json_old_and_new_spellings(tmp_path: Path) -> None:
    for key, value, want in (("torch_dtype", "bfloat16", "bfloat16"), ("dtype", "float16", "float16")):
        d = tmp_path / key
        d.mkdir()
        (d / "config.json").write_text(json.dumps({key: value}))
        assert checkpoint_dtype(str(d)) == want
    nested = tmp_path / "vlm"
    nested.mkdir()
    (nested / "config.json").write_text(json.dumps({"text_config": {"torch_dtype": "torch.float16"}}))
    assert checkpoint_dtype(str(nested)) == "float16"
    assert checkpoint_dtype(str(tmp_path / "missing")) is None


@pytest.fixture
def fake_python(tmp_path: Path) -> Path:
    exe = tmp_path / "fake-vllm-python"
    exe.write_text("#!/bin/sh\nexit 3\n")
    exe.chmod(0o755)
    return exe


def test_hf_and_vllm_resolve_auto_alike_and_vllm_gets_it_explicitly(tiny_model_dir: Path, fake_python: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")  # no nvidia-smi: the engine would run on the CPU
    hf = get_model(f"hf:{tiny_model_dir}")
    vllm = get_model(f"vllm:{tiny_model_dir}", vllm_python=str(fake_python))
    assert isinstance(vllm, VLLMModel)
    assert hf.identity()["dtype"] == hf.describe()["dtype"] == vllm.settings["dtype"] == "float32"
    assert vllm.args[vllm.args.index("--dtype") + 1] == "float32"
    assert vllm.describe()["dtype"] == "float32"


@pytest.mark.parametrize("given", [[], ["--dtype", "auto"]])
def test_a_run_records_the_dtype_that_ran_and_never_auto(tiny_model_dir: Path, tmp_path: Path,
                                                         given: list[str]) -> None:
    out = tmp_path / "run"
    assert main(["run", str(MC), "--model", f"hf:{tiny_model_dir}", *given, "--mode", "logprob", "--limit", "2",
                 "-o", str(out), "--no-cache", "--no-history", "--no-progress"]) == 0
    text = (out / "manifest.json").read_text()
    assert '"auto"' not in text
    manifest = read_run(out).manifest
    assert manifest.model_identity.dtype == manifest.model.dtype == "float32"
    assert manifest.provenance.packages["torch"] and manifest.provenance.packages["transformers"]
