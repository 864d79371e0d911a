"""`--mode logprob` on the MMLU-Pro fixture with a tiny local model, and the same model behind an
OpenAI-compatible completions server (echo + logprobs): acc and acc_norm with CIs, same log-probs."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest

from proctor.testing import serve

from .conftest import MMLU_PRO, latest


def _logprob_run(cli: Any, out: Path, store: Path, *model: str) -> dict[str, dict[str, Any]]:
    res = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--mode", "logprob", *model, "-o", out,
              "--store", store, "--no-progress")
    assert res.code == 0, res.err
    assert "mmlu-pro: accuracy" in res.out
    return latest(out)


@pytest.mark.long
def test_logprob_local_and_served_agree(cli: Any, tmp_path: Path, tiny_model_dir: Path) -> None:
    store = tmp_path / "store.sqlite"
    with ExitStack() as stack, ThreadPoolExecutor(1) as pool:
        # the server loads its own copy of the model while the local run goes
        starting = pool.submit(stack.enter_context, serve(model_dir=str(tiny_model_dir)))
        local, served, completions = _both(cli, tmp_path, store, tiny_model_dir, starting)
    assert completions > 0
    _check_local(tmp_path / "hf", local)
    _check_same(local, served)


def _both(cli: Any, tmp_path: Path, store: Path, model_dir: Path, starting: Any) -> tuple[Any, Any, int]:
    local = _logprob_run(cli, tmp_path / "hf", store, "--model", f"hf:{model_dir}", "--device", "cpu")
    srv = starting.result()
    served = _logprob_run(cli, tmp_path / "api", store, "--model", "openai:tiny", "--base-url", srv.base_url)
    return local, served, int(srv.stats()["by_path"].get("/v1/completions", 0))


def _check_local(run_dir: Path, local: dict[str, dict[str, Any]]) -> None:
    results = json.loads((run_dir / "results.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["spec"]["scorer"]["mode"] == "logprob" and manifest["prompt_template_hash"].startswith("sha256:")
    for key in ("overall", "acc_norm"):
        r = results[key]
        assert r["n_scored"] == len(local)
        assert r["ci_low"] <= r["accuracy"] <= r["ci_high"]
    for s in local.values():
        d = s["details"]
        assert s["extraction_rule"] == "argmax-logprob" and s["extracted"] in d["logprobs"]
        assert s["extracted"] == max(d["logprobs"], key=d["logprobs"].get)
        assert set(d["logprobs"]) == set(d["logprobs_norm"]) == set(d["letters"])


def _check_same(local: dict[str, dict[str, Any]], served: dict[str, dict[str, Any]]) -> None:
    assert served.keys() == local.keys()
    for sid, s in local.items():
        a, b = s["details"]["logprobs"], served[sid]["details"]["logprobs"]
        assert a.keys() == b.keys()
        for letter in a:
            assert abs(a[letter] - b[letter]) < 1e-4, (sid, letter, a[letter], b[letter])
        assert s["extracted"] == served[sid]["extracted"]
        assert s["details"]["n_tokens"] == served[sid]["details"]["n_tokens"]
