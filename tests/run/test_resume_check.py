"""#41 item 7: resume never trusts a hand-edited manifest. A manifest.json that disagrees with the run the same
command resolves (its spec, its no-answer or truncation policy, its data's content hash or size, a runlog
version from the future) is refused with one line naming the field, exit 2, and nothing is rewritten."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.cli import main

ITEMS = Path(__file__).parents[2] / "examples" / "items" / "multiple-choice.jsonl"


def _run(out: Path) -> int:
    return main(["run", str(ITEMS), "--model", "scripted:fixed=pass", "-o", str(out), "--no-history", "--no-cache",
                 "--no-progress"])


def _set(data: dict[str, Any], path: str, value: Any) -> None:
    *head, last = path.split(".")
    for key in head:
        data = data[key]
    data[last] = value


@pytest.mark.parametrize(("path", "value", "named"), [
    ("spec.scorer.no_answer", "guess", "scorer.no_answer"),
    ("spec.scorer.truncated_as", "excluded", "scorer.truncated_as"),  # manifest v5 keeps the policies in the spec only
    ("spec.generation.temperature", 0.5, "generation.temperature"),
    ("dataset.content_hash", "sha256:0", "dataset.content_hash"),
    ("spec.dataset.content_hash", "sha256:0", "dataset.content_hash"),
    ("dataset.n_items", 3, "dataset.n_items"),
    ("runlog_version", 99, "runlog_version"),
])
def test_a_hand_edited_manifest_is_refused_naming_the_field(path: str, value: Any, named: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    assert _run(out) in (0, 1)
    manifest = json.loads((out / "manifest.json").read_text())
    _set(manifest, path, value)
    (out / "manifest.json").write_text(json.dumps(manifest))
    results = (out / "results.json").read_bytes()
    capsys.readouterr()
    assert _run(out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err and "manifest.json" in err, err
    assert (out / "results.json").read_bytes() == results and json.loads((out / "manifest.json").read_text()) == manifest


def test_an_untouched_run_resumes(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(out) in (0, 1)
    assert _run(out) in (0, 1)
