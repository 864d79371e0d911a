"""`vllm:` against the real engine on CPU: proctor starts vLLM itself, runs, and stops it.

Three managed starts in the module (each about a minute or more on CPU): a `proctor run` generation with
vLLM's data parallelism 2 (two engine cores behind one server) compared with `openai:` on the suite's own
server (same weights, data parallel 1, temperature 0), and a `proctor score` and a `proctor run --mode logprob`
compared with `hf:` — both backends with their DEFAULT dtype (proctor's one policy resolves `auto` to float32 on
the CPU for both: log-probs within 1e-4, and neither manifest says `auto`). Plus a start that fails at once and a
ctrl-C during start-up. After each, no process of the engine's group is left."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from proctor import read_run
from proctor.cli import main
from proctor.log.runlog import Outcome
from proctor.models.vllm_engine import group_members

from ..conftest import MMLU_PRO, SRC
from .conftest import VLLM_PYTHON, VLLMServer

pytestmark = [pytest.mark.vllm, pytest.mark.xdist_group("vllm")]  # one worker: the managed engine

SUITES = Path(__file__).resolve().parents[3] / "examples" / "suites"
TOLERANCE = 1e-4
ENGINE = ["--vllm-python", str(VLLM_PYTHON), "--max-model-len", "2048",
          "--gpu-memory-utilization", "0.05", "--engine-arg", "--max-num-seqs 16", "--engine-arg", "--enforce-eager"]
ENGINE_ENV = {"VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING", "HF_HUB_OFFLINE": "1",
              "TRANSFORMERS_OFFLINE": "1"}
GENERATE = ["--prompt", "zero_shot", "--max-tokens", "8", "--limit", "6", "--no-progress"]
LOGPROB = ["--mode", "logprob", "--limit", "6", "--no-progress"]


def _engine_pid(run_dir: Path) -> int:
    """The process group the engine runs in: its guard's (the log's second line), under which every process of
    the engine stays."""
    found = re.search(r"\[proctor\] engine guard pid (\d+)", (run_dir / "engine.log").read_text(errors="replace"))
    assert found, (run_dir / "engine.log").read_text(errors="replace")[-2000:]
    return int(found.group(1))


def _assert_group_gone(pgid: int, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert group_members(pgid) == [], f"engine processes left: {group_members(pgid)}"


@pytest.fixture(scope="module")
def managed(vllm_servers: dict[str, VLLMServer], tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """The two managed runs: generation (`proctor run`) and log-probs (`proctor score`) on tiny-llama."""
    base = tmp_path_factory.mktemp("managed")
    model = f"vllm:{vllm_servers['tiny-llama'].model_dir}"
    with pytest.MonkeyPatch.context() as mp:
        for k, v in ENGINE_ENV.items():
            mp.setenv(k, v)
        gen = main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model, *ENGINE, *GENERATE,
                    "--data-parallel", "2", "-o", str(base / "gen"), "--store", str(base / "s.sqlite")])
        score = main(["score", str(SUITES), "--model", model, *ENGINE, "-o", str(base / "score"),
                      "--store", str(base / "s.sqlite"), "--no-progress"])
        logprob = main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model, *ENGINE, *LOGPROB,
                        "-o", str(base / "logprob"), "--store", str(base / "s.sqlite")])
    yield {"base": base, "gen": gen, "score": score, "score_dir": next((base / "score").glob("test__*")),
           "logprob": logprob}


def test_managed_generation_with_data_parallel_2_equals_openai_on_the_same_weights(
    managed: dict[str, Any], vllm_servers: dict[str, VLLMServer], tmp_path: Path
) -> None:
    assert managed["gen"] in (0, 1)  # 1: a random model cut at its budget on every item (cli/outcome.py)
    server = vllm_servers["tiny-llama"]
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", f"openai:{server.name}", "--base-url",
                 server.base_url, *GENERATE, "-o", str(tmp_path / "openai"), "--no-cache", "--no-history"]) in (0, 1)  # 1: every answer cut
    ours = {s.sample_id: s for s in read_run(managed["base"] / "gen").samples}
    theirs = {s.sample_id: s for s in read_run(tmp_path / "openai").samples}
    assert ours.keys() == theirs.keys() and len(ours) == 6
    for sid, a in ours.items():
        b = theirs[sid]
        assert a.outcome is not Outcome.ERROR and a.raw_output is not None
        assert a.raw_output == b.raw_output and a.output_tokens == b.output_tokens, sid


def _assert_default_dtypes_ran_float32(*run_dirs: Path) -> None:
    """Both backends' manifests name the dtype that ran, the same one, and never `auto`."""
    for run_dir in run_dirs:
        manifest = read_run(run_dir).manifest
        assert manifest.model_identity.dtype == manifest.model.dtype == "float32", run_dir
        assert manifest.provenance.packages.get("vllm" if "vllm:" in manifest.model.spec else "torch"), run_dir
        dtypes = re.findall(r'"dtype": "([^"]*)"', (run_dir / "manifest.json").read_text())
        assert dtypes and set(dtypes) == {"float32"}, (run_dir, dtypes)


def test_managed_score_with_default_dtypes_equals_hf(managed: dict[str, Any], vllm_servers: dict[str, VLLMServer],
                                                     tmp_path: Path) -> None:
    assert managed["score"] == 0
    model_dir = vllm_servers["tiny-llama"].model_dir
    assert main(["score", str(SUITES), "--model", f"hf:{model_dir}", "-o", str(tmp_path),
                 "--no-cache", "--no-history", "--no-progress"]) == 0
    hf_dir = next(tmp_path.glob("test__*"))
    ours = {s.sample_id: s for s in read_run(managed["score_dir"]).samples}
    theirs = {s.sample_id: s for s in read_run(hf_dir).samples}
    assert ours.keys() == theirs.keys() and len(ours) >= 2
    for sid, a in ours.items():
        b = theirs[sid]
        assert a.outcome is not Outcome.ERROR and a.extracted == b.extracted
        for query, lp in b.details["logprobs"].items():
            assert abs(a.details["logprobs"][query] - lp) <= TOLERANCE, (sid, query)
    _assert_default_dtypes_ran_float32(managed["score_dir"], hf_dir)


def test_managed_logprob_run_with_default_dtypes_equals_hf(managed: dict[str, Any],
                                                           vllm_servers: dict[str, VLLMServer], tmp_path: Path) -> None:
    assert managed["logprob"] == 0
    model_dir = vllm_servers["tiny-llama"].model_dir
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", f"hf:{model_dir}", *LOGPROB,
                 "-o", str(tmp_path / "hf"), "--no-cache", "--no-history"]) == 0
    ours = {s.sample_id: s for s in read_run(managed["base"] / "logprob").samples}
    theirs = {s.sample_id: s for s in read_run(tmp_path / "hf").samples}
    assert ours.keys() == theirs.keys() and len(ours) == 6
    for sid, a in ours.items():
        b = theirs[sid]
        assert a.outcome is not Outcome.ERROR and a.extracted == b.extracted, sid
        assert a.details["logprobs"].keys() == b.details["logprobs"].keys()
        for letter, lp in b.details["logprobs"].items():
            assert abs(a.details["logprobs"][letter] - lp) <= TOLERANCE, (sid, letter, a.details["logprobs"][letter], lp)
    _assert_default_dtypes_ran_float32(managed["base"] / "logprob", tmp_path / "hf")


def test_agree_holds_vllm_to_hf(managed: dict[str, Any], vllm_servers: dict[str, VLLMServer], tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    """`proctor agree` of the managed `vllm:` runs and `hf:` runs of the same weights: log-prob deltas within
    1e-3 (the suites), and the generation's flips and identical outputs as the samples say."""
    model_dir = vllm_servers["tiny-llama"].model_dir
    assert main(["score", str(SUITES), "--model", f"hf:{model_dir}", "--dtype", "float32", "-o", str(tmp_path / "s"),
                 "--no-cache", "--no-history", "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["agree", str(managed["score_dir"]), str(next((tmp_path / "s").glob("test__*"))), "--json"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert scored["logprob"]["n"] >= 2 and scored["logprob"]["max"] <= TOLERANCE and scored["n_flips"] == 0
    assert main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", f"hf:{model_dir}", "--dtype", "float32",
                 *GENERATE, "-o", str(tmp_path / "hf-gen"), "--no-cache", "--no-history"]) in (0, 1)  # 1: a random model cut at its budget on every item (cli/outcome.py)
    capsys.readouterr()
    assert main(["agree", str(managed["base"] / "gen"), str(tmp_path / "hf-gen"), "--json"]) == 0
    gen = json.loads(capsys.readouterr().out)
    ours = {s.sample_id: s for s in read_run(managed["base"] / "gen").samples}
    theirs = {s.sample_id: s for s in read_run(tmp_path / "hf-gen").samples}
    assert gen["n_paired"] == len(ours) == 6 and gen["logprob"] is None
    assert gen["n_identical_outputs"] == sum(ours[k].raw_output == theirs[k].raw_output for k in ours)
    assert sorted(f["item_id"] for f in gen["flips"]) == sorted(
        ours[k].item_id for k in ours if ours[k].extracted != theirs[k].extracted)


def test_identity_and_log_and_no_process_left(managed: dict[str, Any]) -> None:
    for run_dir, dp in ((managed["base"] / "gen", 2), (managed["score_dir"], 1), (managed["base"] / "logprob", 1)):
        ident = read_run(run_dir).manifest.model_identity.flat()
        assert ident["engine"].startswith("vllm 0.") and ident["device"] == "cpu"
        assert ident["tensor_parallel"] == 1 and ident["data_parallel"] == dp and ident["dtype"] == "float32"
        _assert_group_gone(_engine_pid(run_dir))
    assert "EngineCore_DP1" in (managed["base"] / "gen" / "engine.log").read_text(errors="replace")


def test_a_failed_start_is_one_message_and_leaves_nothing(vllm_servers: dict[str, VLLMServer], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    model = f"vllm:{vllm_servers['tiny-llama'].model_dir}"
    code = main(["run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model, *ENGINE,
                 "--engine-arg", "--no-such-engine-option", *GENERATE, "-o", str(tmp_path / "r"), "--no-cache",
                 "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "the engine exited with status" in err and "no-such-engine-option" in err, err
    assert "Traceback (most recent call last)" not in err.split("the last lines of")[0]
    _assert_group_gone(_engine_pid(tmp_path / "r"))


def test_ctrl_c_while_the_engine_starts_leaves_nothing(vllm_servers: dict[str, VLLMServer], tmp_path: Path) -> None:
    model = f"vllm:{vllm_servers['tiny-llama'].model_dir}"
    out = tmp_path / "r"
    proc = subprocess.Popen(
        [sys.executable, "-m", "proctor", "run", "mmlu-pro", "--data-file", str(MMLU_PRO), "--model", model,
         *ENGINE, *GENERATE, "-o", str(out), "--no-cache", "--no-history"],
        env={**os.environ, **ENGINE_ENV, "PYTHONPATH": SRC}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        log = out / "engine.log"
        if log.exists() and "engine guard pid" in log.read_text(errors="replace"):
            break
        time.sleep(0.1)
    time.sleep(3.0)  # the engine is importing torch and vllm: well inside its start-up
    pgid = _engine_pid(out)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    _assert_group_gone(pgid)
