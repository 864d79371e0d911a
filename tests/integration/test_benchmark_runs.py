"""MMLU-Pro, GPQA-diamond and AIME from fixture files, end to end from the CLI: an OpenAI-compatible
server on 127.0.0.1 and the in-process scripted model give the same answers and complete run logs."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from proctor.testing import LocalServer

from .conftest import BENCHMARKS, chat_requests, latest

RUN_KEYS = ("n", "n_scored", "accuracy", "ci_low", "ci_high", "ci_method")


def _run(cli: Any, tmp: Path, dataset: str, model: list[str], name: str) -> tuple[Path, str]:
    out = tmp / name
    res = cli("run", dataset, "--data-file", BENCHMARKS[dataset], *model, "--seed", "7", "-o", out,
              "--store", tmp / "store.sqlite", "--no-progress")
    assert res.code == 0, res.err
    return out, res.out


@pytest.mark.parametrize("dataset", sorted(BENCHMARKS))
def test_benchmark_end_to_end(cli: Any, tmp_path: Path, server: LocalServer, dataset: str) -> None:
    api_dir, api_out = _run(cli, tmp_path, dataset, ["--model", "openai:m", "--base-url", server.base_url], "api")
    n_requests = chat_requests(server)
    local_dir, local_out = _run(cli, tmp_path, dataset, ["--model", "scripted:random"], "local")

    for run_dir, printed in ((api_dir, api_out), (local_dir, local_out)):
        assert re.search(rf"^{dataset}: accuracy \d\.\d{{3}} \[\d\.\d{{3}}, \d\.\d{{3}}\] n=\d+", printed, re.MULTILINE), printed
        manifest = json.loads((run_dir / "manifest.json").read_text())
        ds = manifest["dataset"]
        assert ds["content_hash"].startswith("sha256:") and "revision" in ds
        assert ds["data_file"] == str(BENCHMARKS[dataset])
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", ds["data_file_sha256"])
        assert manifest["prompt_template_hash"].startswith("sha256:")
        assert manifest["scorer"]["extractor"]
        assert manifest["choice_order_seed"] == (7 if dataset.startswith("gpqa") else None)
        assert manifest["finished_at"]

        got = latest(run_dir)
        assert len(got) == ds["n_items"] == n_requests
        for s in got.values():
            assert s["outcome"] in ("correct", "wrong", "no_answer")
            assert s["extraction_rule"] and s["raw_output"]

        results = json.loads((run_dir / "results.json").read_text())
        overall = results["overall"]
        assert all(k in overall for k in RUN_KEYS)
        assert overall["ci_low"] <= overall["accuracy"] <= overall["ci_high"]
        assert overall["n_scored"] == sum(s["outcome"] in ("correct", "wrong") for s in got.values())
        assert results["by_category"] and sum(c["n"] for c in results["by_category"].values()) == overall["n"]

        assert not (run_dir / "run.json").exists() and not (run_dir / "models").exists()  # proctor's log only
        exported = run_dir.parent / f"{run_dir.name}-llmwc"
        assert cli("export", run_dir, "--to", "llmwc", "-o", exported).code == 0
        run_json = json.loads((exported / "run.json").read_text())
        assert run_json["benchmark"]["name"] == dataset
        (model_dir,) = (exported / "models").iterdir()
        summary = json.loads((model_dir / "summary.json").read_text())
        assert summary["total"] == overall["n"]
        assert summary["correct"] == sum(s["outcome"] == "correct" for s in got.values())

    # the server answers with the same scripted rule: identical prompts, identical answers
    api, local = latest(api_dir), latest(local_dir)
    assert api.keys() == local.keys()
    assert {k: s["prompt"] for k, s in api.items()} == {k: s["prompt"] for k, s in local.items()}
    assert {k: s["extracted"] for k, s in api.items()} == {k: s["extracted"] for k, s in local.items()}
