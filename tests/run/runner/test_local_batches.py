"""A local `hf:` generation run keeps its work per finished batch: ctrl-C after some batches, and the
same command asks the model only for the rest (counted at the model)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import proctor
from proctor.cli import main

from .conftest import make_items

pytest.importorskip("torch")

SRC = str(Path(proctor.__file__).resolve().parents[1])
ITEMS, BATCH = 40, 2


def _argv(data: Path, model_dir: Path, out: Path) -> list[str]:
    return ["run", str(data), "--model", f"hf:{model_dir}", "--batch-size", str(BATCH), "--max-tokens", "24",
            "-o", str(out), "--no-cache", "--no-history", "--no-progress"]


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.long
def test_ctrl_c_keeps_finished_batches_and_a_rerun_asks_only_the_rest(
    tmp_path: Path, tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps(it.to_json()) + "\n" for it in make_items(ITEMS)))
    out = tmp_path / "run"
    env = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "proctor", *_argv(data, tiny_model_dir, out)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while _lines(out / "samples.jsonl") < 2 * BATCH and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    kept = _lines(out / "samples.jsonl")
    assert 2 * BATCH <= kept < ITEMS, "ctrl-C must land mid-run"
    assert kept % BATCH == 0  # whole batches, each appended when it finished
    assert proc.returncode == 130 and "finished samples are saved" in err

    from proctor.models.hf import HFModel

    asked: list[int] = []
    original = HFModel.generate_sync

    def counting(self: Any, requests: Any) -> Any:
        asked.append(len(requests))
        return original(self, requests)

    monkeypatch.setattr(HFModel, "generate_sync", counting)
    assert main(_argv(data, tiny_model_dir, out)) in (0, 1), capsys.readouterr().err  # 1: every answer cut (random model)
    assert sum(asked) == ITEMS - kept and max(asked) <= BATCH
    assert _lines(out / "samples.jsonl") == ITEMS
