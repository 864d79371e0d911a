"""Judged prose items, epochs, and bad input refused before anything runs (exit 2, one line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.testing import LocalServer, serve

from .conftest import AIME, MMLU_PRO, chat_requests, latest

JUDGE_TEXT = "The answer restates the prompt as the reference asks.\nGRADE: CORRECT"  # no commas: options split on them


def _prose_items(path: Path) -> Path:
    rows = [
        {"identifier": "p.1", "modality": "shortprose", "prompt": "Say hi.", "response": "hi"},
        {"identifier": "p.2", "modality": "longprose", "prompt": "Describe rain.", "response": "Water falls."},
        {"identifier": "p.3", "modality": "boolean", "prompt": "Water is wet.", "response": "True"},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_prose_items_judged(cli: Any, tmp_path: Path) -> None:
    items = _prose_items(tmp_path / "items.jsonl")
    out = tmp_path / "run"
    res = cli("run", items, "--model", "scripted:echo", "--judge", f"scripted:fixed={JUDGE_TEXT}",
              "-o", out, "--store", tmp_path / "s.sqlite", "--no-progress")
    assert res.code == 0, res.err
    got = latest(out)
    for sid in ("p.1#0", "p.2#0"):
        s = got[sid]
        assert s["outcome"] == "correct" and s["score"] == 1.0
        assert s["details"]["judge_grade"] == "CORRECT"
        assert s["details"]["judge_reasoning"] == JUDGE_TEXT.splitlines()[0]
    assert got["p.3#0"]["details"].get("judge_grade") is None  # closed-set items are not judged
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["judge"] is not None


def test_prose_without_judge_refused_before_any_request(cli: Any, tmp_path: Path, server: LocalServer) -> None:
    items = _prose_items(tmp_path / "items.jsonl")
    out = tmp_path / "run"
    res = cli("run", items, "--model", "openai:m", "--base-url", server.base_url, "-o", out,
              "--store", tmp_path / "s.sqlite", "--no-progress")
    assert res.code == 2
    assert "--judge" in res.err and len(res.err.strip().splitlines()) == 1 and "Traceback" not in res.err
    assert chat_requests(server) == 0
    assert not out.exists()


def test_epochs_with_sampling(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    res = cli("run", "aime-2025", "--data-file", AIME, "--limit", "6", "--model", "scripted:random",
              "--epochs", "3", "--temperature", "0.7", "-o", out, "--store", tmp_path / "s.sqlite", "--no-progress")
    assert res.code == 0, res.err
    got = latest(out)
    assert len(got) == 18 and {s["epoch"] for s in got.values()} == {0, 1, 2}
    results = json.loads((out / "results.json").read_text())
    epochs = results["epochs"]
    assert epochs["k"] == 3
    for key in ("mean_at_k", "pass_at_k"):
        assert key in epochs
    assert json.loads((out / "manifest.json").read_text())["spec"]["epochs"] == 3


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["no-such-benchmark", "--model", "scripted:first"], "no-such-benchmark"),
        (["mmlu-pro", "--data-file", "{tmp}/missing.parquet", "--model", "scripted:first"], "missing.parquet"),
        (["mmlu-pro", "--data-file", str(MMLU_PRO), "--model", "nosuchbackend:x"], "nosuchbackend"),
        (["mmlu-pro", "--data-file", str(MMLU_PRO), "--model", "scripted:first", "--mode", "sideways"], "--mode"),
    ],
    ids=["unknown-dataset", "missing-data-file", "bad-model-spec", "bad-mode"],
)
def test_bad_input_exit_2(cli: Any, tmp_path: Path, argv: list[str], needle: str) -> None:
    out = tmp_path / "run"
    res = cli("run", *(a.format(tmp=tmp_path) for a in argv), "-o", out, "--store", tmp_path / "s.sqlite",
              "--no-progress")
    assert res.code == 2, res.err
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and needle in lines[0], res.err
    assert "Traceback" not in res.err + res.out
    assert not out.exists()


def test_chat_only_server_refuses_logprob(cli: Any, tmp_path: Path) -> None:
    out = tmp_path / "run"
    with serve(chat_only=True) as srv:
        res = cli("run", "mmlu-pro", "--data-file", MMLU_PRO, "--mode", "logprob", "--model", "openai:m",
                  "--base-url", srv.base_url, "-o", out, "--store", tmp_path / "s.sqlite", "--no-progress")
    assert res.code == 2
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and "log-likelihood" in lines[0] and "Traceback" not in res.err
    assert not out.exists()
