"""`--to inspect`: read back with inspect_ai's own reader, the log holds the run's samples, scores and accuracy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.exporters import export
from proctor.exporters._common import overall_accuracy
from proctor.results import read_run

pytest.importorskip("inspect_ai")
from inspect_ai.log import read_eval_log


def _read_back(run: Path, out: Path):  # type: ignore[no-untyped-def]
    (path,) = export([run], "inspect", out)
    assert path.suffix == ".eval" and path.parent == out
    return read_eval_log(str(path))


def test_a_scripted_run_reads_back_with_its_samples_scores_and_accuracy(scripted_run: Path, tmp_path: Path) -> None:
    log = read_run(scripted_run)
    back = _read_back(scripted_run, tmp_path / "inspect")
    assert back.status == "success" and back.eval.model == "scripted/random,seed=3"
    assert back.eval.task == "multiple-choice" and back.eval.dataset.samples == 16
    assert back.samples is not None and len(back.samples) == len(log.samples) == 16
    ours = {s.item_id: s for s in log.samples}
    for sample in back.samples:
        mine = ours[str(sample.id)]
        assert sample.scores is not None and sample.scores["proctor"].value == mine.score
        assert sample.scores["proctor"].answer == mine.extracted
        assert sample.target == mine.reference and sample.output.completion == mine.raw_output
        assert sample.epoch == 1
    assert back.results is not None
    (score,) = back.results.scores
    assert score.metrics["accuracy"].value == pytest.approx(sum(s.score or 0 for s in log.samples) / 16)
    assert score.metrics["accuracy"].value == pytest.approx(overall_accuracy(log).accuracy)
    assert score.metrics["ci_low"].value == pytest.approx(overall_accuracy(log).ci_low)
    assert score.metrics["stderr"].value > 0 and score.scored_samples == 16
    assert back.eval.model_generate_config.max_tokens == 1024
    assert back.eval.metadata is not None and back.eval.metadata["proctor"]["run_id"] == log.manifest.run_id


def test_errors_and_unscored_samples_carry_no_score(mixed_run: Path, tmp_path: Path) -> None:
    """An error is the sample's error and no score; accuracy is over the scored samples only (partial 0.5)."""
    back = _read_back(mixed_run, tmp_path / "inspect")
    assert back.samples is not None and len(back.samples) == 8
    by_id = {str(s.id): s for s in back.samples}
    err, unscored, partial = by_id["mix.4"], by_id["mix.5"], by_id["mix.3"]
    assert err.error is not None and err.error.message == "HTTP 500 after 4 retries" and not err.scores
    assert not unscored.scores and unscored.error is None
    assert partial.scores is not None and partial.scores["proctor"].value == 0.5
    assert [m.role for m in by_id["mix.0"].messages] == ["system", "user", "assistant"]
    assert "Let me think." in str(by_id["mix.0"].output.message.content)
    assert back.eval.model == "openai/Qwen/Qwen3-8B" and back.eval.model_base_url == "http://127.0.0.1:8000/v1"
    assert back.results is not None
    (score,) = back.results.scores
    scored = [s.scores["proctor"].value for s in back.samples if s.scores]
    assert len(scored) == 6 == score.scored_samples and score.unscored_samples == 2
    assert score.metrics["accuracy"].value == pytest.approx(sum(scored) / 6)  # type: ignore[arg-type]


def test_without_inspect_ai_the_command_says_what_to_install(
        mixed_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai", None)  # `import inspect_ai` raises ImportError
    out = tmp_path / "inspect"
    assert main(["export", str(mixed_run), "--to", "inspect", "-o", str(out)]) == 2
    assert "pip install 'proctor-eval[inspect]'" in capsys.readouterr().err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["mixed"]  # nothing half-written


def test_the_exporter_redacts_a_base_url_and_command_again(mixed_run: Path, tmp_path: Path) -> None:
    """Issue 32 #10: a manifest edited to hold a secret in a base URL or the command is redacted again."""
    import json

    manifest = json.loads((mixed_run / "manifest.json").read_text())
    manifest["model"]["base_url"] = "http://127.0.0.1:8000/v1?accessToken=EXPSECRET77"
    manifest["command"] = ["proctor", "run", "--base-url", "http://u:EXPSECRET77@h/v1"]
    (mixed_run / "manifest.json").write_text(json.dumps(manifest))
    (path,) = export([mixed_run], "inspect", tmp_path / "inspect")
    back = read_eval_log(str(path))
    assert back.eval.model_base_url == "http://127.0.0.1:8000/v1?accessToken=***"
    assert "EXPSECRET77" not in back.model_dump_json()


@pytest.mark.parametrize("item_id", ["../../../../tmp/x", "/etc/passwd", "a\\..\\b", ".hidden", "bell\x07"])
def test_member_names_from_item_ids_never_climb(mixed_run: Path, tmp_path: Path, item_id: str) -> None:
    """Issue 32 #24: an (imported) item id became the zip member `samples/../../../../tmp/x_epoch_1.json`."""
    import json
    import zipfile

    samples = mixed_run / "samples.jsonl"
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    rows[0].update(item_id=item_id, sample_id=f"{item_id}#0")
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (path,) = export([mixed_run], "inspect", tmp_path / "inspect")
    names = zipfile.ZipFile(path).namelist()
    assert all(".." not in n and not n.startswith("/") and "\\" not in n and n.isprintable() for n in names), names
    back = read_eval_log(str(path))
    assert back.samples is not None and len(back.samples) == 8
    renamed = [s for s in back.samples if (s.metadata or {}).get("proctor_item_id") == item_id]
    assert len(renamed) == 1 and str(renamed[0].id) != item_id
    assert back.eval.dataset.sample_ids is not None and str(renamed[0].id) in map(str, back.eval.dataset.sample_ids)
    from proctor.importers import ImportOptions, read_all

    (run,) = read_all([path], ImportOptions())  # and `proctor import` reads the original id back
    assert item_id in {s.item_id for s in run.samples}
