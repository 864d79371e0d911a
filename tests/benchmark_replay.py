"""Run a built-in benchmark end to end on a local file with replayed replies (`scripted:file=`), in process."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from proctor.benchmarks import load_task
from proctor.cli import main


@dataclass
class Ran:
    code: int
    out: str
    err: str
    run_dir: Path

    @property
    def samples(self) -> dict[str, dict[str, Any]]:
        """The last record per item."""
        lines = (self.run_dir / "samples.jsonl").read_text().splitlines()
        return {s["item_id"]: s for s in map(json.loads, filter(str.strip, lines))}

    @property
    def manifest(self) -> dict[str, Any]:
        return dict(json.loads((self.run_dir / "manifest.json").read_text()))


def script(path: Path, benchmark: str, data: Path, kind: str, replies: dict[str, str]) -> Path:
    """A scripted:file answering each item (by identifier) with its reply to the prompt proctor sends."""
    task = load_task(benchmark, data_file=data)
    lines = [json.dumps({"prompt": task.prompts.messages(it, kind)[-1].content, "answer": replies[it.identifier]})
             for it in task.items]
    path.write_text("\n".join(lines) + "\n")
    return path


def run(capsys: pytest.CaptureFixture[str], tmp: Path, benchmark: str, data: Path, model: str, name: str,
        *extra: str) -> Ran:
    out = tmp / name
    capsys.readouterr()
    code = main(["run", benchmark, "--data-file", str(data), "--model", model, "-o", str(out), "--no-progress",
                 "--no-history", *extra])
    got = capsys.readouterr()
    return Ran(code, got.out, got.err, out)
