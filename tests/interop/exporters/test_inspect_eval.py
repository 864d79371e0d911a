"""`--to inspect`: read back with inspect_ai's own reader, the log holds the run's samples, scores and accuracy."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.interop.export_common import overall_accuracy
from proctor.interop.exporters import export
from proctor.metrics.results import read_run

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
    # #32 attack: Inspect's `completed_samples` is "samples completed without error" (was 8 with one error)
    errored = sum(1 for s in back.samples if s.error is not None)
    assert errored == 1 and back.results.total_samples == 8 and back.results.completed_samples == 8 - errored


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
    from proctor.interop.importers import ImportOptions, read_all

    (run,) = read_all([path], ImportOptions())  # and `proctor import` reads the original id back
    assert item_id in {s.item_id for s in run.samples}


def _without_random_ids(value: object) -> object:
    """A dumped log without the ids inspect_ai draws at random for each message and sample (`id`, `uuid`)."""
    if isinstance(value, dict):
        return {k: _without_random_ids(v) for k, v in value.items() if k not in ("id", "uuid")}
    if isinstance(value, list):
        return [_without_random_ids(v) for v in value]
    return value


def test_the_streamed_file_reads_back_as_inspects_own_writer_writes_it(mixed_run: Path, tmp_path: Path) -> None:
    """#32.19: the `.eval` written one sample at a time reads back, through inspect_ai's reader (whole log,
    summaries, one sample by id), equal to the same log written by inspect_ai's `write_eval_log`."""
    from inspect_ai.log import read_eval_log_sample, read_eval_log_sample_summaries, write_eval_log

    from proctor.interop.inspect_export import _sample, eval_log

    log = read_run(mixed_run)
    theirs = tmp_path / "theirs.eval"
    whole = eval_log(log).model_copy(update={"samples": [_sample(log, s) for s in log.iter_samples(by_item=True)]})
    write_eval_log(whole, str(theirs), format="eval")
    ours = _read_back(mixed_run, tmp_path / "inspect")
    back = read_eval_log(str(theirs))
    skip = {"location", "etag"}
    assert _without_random_ids(ours.model_dump(exclude=skip)) == _without_random_ids(back.model_dump(exclude=skip))
    assert [(s.id, s.epoch) for s in ours.samples or []] == [(s.id, s.epoch) for s in back.samples or []]
    (path,) = (tmp_path / "inspect").iterdir()
    assert [(s.id, s.epoch) for s in read_eval_log_sample_summaries(str(path))] == \
        [(s.id, s.epoch) for s in read_eval_log_sample_summaries(str(theirs))]
    assert read_eval_log_sample(str(path), "mix.3", 1).scores["proctor"].value == 0.5  # type: ignore[index]


def test_export_streams_each_sample_once_and_never_builds_the_whole_log(
        scripted_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.19/#32.20: each sample is converted once (no re-serialising of earlier samples; inspect_ai's
    `write_eval_log`, quadratic in the samples, is not used) and the run is read without holding its samples."""
    import inspect_ai.log

    import proctor.interop.inspect_export as ie
    from proctor.log.runlog import RunLog

    converted: list[str] = []
    real = ie._sample

    def counting(log: RunLog, s):  # type: ignore[no-untyped-def]
        assert log.streamed  # read with samples=False: streamed from disk
        converted.append(s.sample_id)
        return real(log, s)

    monkeypatch.setattr(ie, "_sample", counting)
    monkeypatch.setattr(inspect_ai.log, "write_eval_log", lambda *a, **k: pytest.fail("write_eval_log is quadratic"))
    back = _read_back(scripted_run, tmp_path / "inspect")
    assert len(converted) == len(set(converted)) == 16 and back.samples is not None and len(back.samples) == 16


def test_an_inspect_round_trip_keeps_the_models_name(mixed_run: Path, tmp_path: Path) -> None:
    """#32.31: proctor's `openai:Qwen/Qwen3-8B` is Inspect's `openai/Qwen/Qwen3-8B`; imported back it is
    `openai:Qwen/Qwen3-8B` again (it was the other spelling: two models in the history for one)."""
    from proctor.interop.importers import ImportOptions, read_all

    (path,) = export([mixed_run], "inspect", tmp_path / "inspect")
    (run,) = read_all([path], ImportOptions())
    assert run.manifest.model.spec == read_run(mixed_run).manifest.model.spec == "openai:Qwen/Qwen3-8B"
    assert run.manifest.model.settings["inspect_model"] == "openai/Qwen/Qwen3-8B"
