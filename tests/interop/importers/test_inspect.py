"""Inspect eval logs, made by `inspect_ai.eval` itself, read into proctor runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from import_sources import N_ITEMS, inspect_log

from proctor.interop.importers import ImportOptions, read_all, run_dir_for, write_run
from proctor.interop.inspect_import import score_value
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.util.errors import InputError, ProctorError

inspect_log_api = pytest.importorskip("inspect_ai.log")


def test_every_sample_of_every_epoch_is_scored_as_inspect_scored_it(inspect_eval: Path, tmp_path: Path) -> None:
    (run,) = read_all([inspect_eval], ImportOptions())
    log = read_run(write_run(run, run_dir_for(run, tmp_path)).path)
    theirs = inspect_log_api.read_eval_log(str(inspect_eval))
    assert theirs.samples is not None and len(log.samples) == len(theirs.samples) == 2 * N_ITEMS
    by_key = {(str(s.id), s.epoch - 1): s for s in theirs.samples}
    for s in log.samples:
        value = by_key[(s.item_id, s.epoch)].scores["includes"].value  # type: ignore[index]
        assert s.outcome is (Outcome.CORRECT if value == "C" else Outcome.WRONG)
        assert s.input_tokens == 7 and s.output_tokens == 1 and s.raw_output in "ABCD"
    wrong = {s.item_id for s in log.samples if s.outcome is Outcome.WRONG}
    assert wrong == {"demo.1", "demo.6"}
    stated = theirs.results.scores[0].metrics["accuracy"].value  # type: ignore[union-attr]
    assert log.results is not None and log.results.overall.accuracy == pytest.approx(stated)
    assert log.manifest.epochs == 2 and log.manifest.model.spec == "mockllm:model"  # Inspect: provider/model
    assert log.manifest.imported_from.metric == "includes"
    assert {s.category for s in log.samples} == {"alpha", "beta"}


def test_a_sample_inspect_could_not_finish_is_an_error_never_a_wrong_answer(items_file: Path, tmp_path: Path) -> None:
    path = inspect_log(items_file, tmp_path / "logs", wrong=set(), fail={"demo.3"}, epochs=1)
    (run,) = read_all([path], ImportOptions(item_id="{id}-e{epoch}"))
    failed = [s for s in run.samples if s.item_id == "demo.3-e0"]
    assert len(failed) == 1 and failed[0].outcome is Outcome.ERROR and failed[0].score is None
    assert "scripted failure on demo.3" in (failed[0].error or "")
    log = write_run(run, run_dir_for(run, tmp_path / "runs"))
    assert log.results is not None and log.results.overall.n_scored == N_ITEMS - 1
    assert log.results.overall.accuracy == 1.0


@pytest.mark.parametrize(("value", "expected"), [
    ("C", (1.0, False)), ("I", (0.0, False)), ("P", (0.5, False)), ("N", (0.0, True)), (True, (1.0, False)),
    (0.25, (0.25, False)), ("0.75", (0.75, False)), ("yes", (1.0, False)), (3, (None, False)),
    ("maybe", (None, False)), ({"a": 1}, (None, False)), (float("nan"), (None, False)),
])
def test_score_values_read_as_inspect_defines_them(value: object, expected: tuple[float | None, bool]) -> None:
    assert score_value(value) == expected


def test_a_scorer_the_log_does_not_have_is_refused(inspect_eval: Path) -> None:
    with pytest.raises(InputError) as e:
        read_all([inspect_eval], ImportOptions(metric="model_graded_qa"))
    assert str(e.value) == (f"{inspect_eval}: no sample was scored by 'model_graded_qa' (scorers here: includes); "
                            "choose one with --metric")


def test_without_inspect_ai_the_message_says_what_to_install(inspect_eval: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "inspect_ai.log", None)
    with pytest.raises(ProctorError, match=r"needs inspect-ai: pip install 'proctor-eval\[inspect\]'"):
        read_all([inspect_eval], ImportOptions())


def test_a_truncated_log_is_one_line(inspect_eval: Path, tmp_path: Path) -> None:
    bad = tmp_path / "cut.eval"
    bad.write_bytes(inspect_eval.read_bytes()[:500])
    with pytest.raises(InputError) as e:
        read_all([bad], ImportOptions())
    assert str(e.value).startswith(f"{bad}: not a readable Inspect log: ") and "\n" not in str(e.value)


def test_a_log_without_samples_is_refused(inspect_eval: Path, tmp_path: Path) -> None:
    log = inspect_log_api.read_eval_log(str(inspect_eval))
    log.samples = None  # as `inspect eval --no-log-samples` writes it
    path = tmp_path / "no-samples.eval"
    inspect_log_api.write_eval_log(log, str(path))
    with pytest.raises(InputError) as e:
        read_all([path], ImportOptions())
    assert str(e.value) == f"{path}: the Inspect log holds no samples (written with --no-log-samples?): nothing to pair"


def test_a_secret_in_the_logs_model_base_url_is_never_written(inspect_eval: Path, tmp_path: Path) -> None:
    """Issue 32 #10: an imported log's `model_base_url` is redacted like a base URL proctor was given."""
    theirs = inspect_log_api.read_eval_log(str(inspect_eval))
    theirs.eval.model_base_url = "https://h/v1?api-version=2024-06-01&authToken=IMPSECRET77"
    edited = tmp_path / "edited.eval"
    inspect_log_api.write_eval_log(theirs, str(edited))
    (run,) = read_all([edited], ImportOptions())
    log = write_run(run, run_dir_for(run, tmp_path / "runs"))
    assert read_run(log.path).manifest.model.base_url == "https://h/v1?api-version=2024-06-01&authToken=***"
    assert all(b"IMPSECRET77" not in p.read_bytes() for p in (tmp_path / "runs").rglob("*") if p.is_file())


def test_a_member_that_inflates_past_the_limit_is_refused_before_inspect_reads_it(
        inspect_eval: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.21: a small `.eval` whose member inflates far beyond its size (a zip bomb) is one line, exit 2,
    checked member by member in a stream before inspect_ai reads the file whole."""
    import zipfile

    bomb = tmp_path / "bomb.eval"
    with zipfile.ZipFile(inspect_eval) as src, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
        dst.writestr("samples/huge_epoch_1.json", b" " * (8 << 20))  # 8 MiB of blanks: 8 KiB compressed
    assert bomb.stat().st_size < inspect_eval.stat().st_size + (64 << 10)
    read: list[object] = []
    with monkeypatch.context() as m:
        m.setenv("PROCTOR_MAX_MEMBER_BYTES", str(4 << 20))
        m.setattr(inspect_log_api, "read_eval_log", lambda *a, **k: read.append(a))
        with pytest.raises(InputError) as e:
            read_all([bomb], ImportOptions())
    assert str(e.value) == (f"{bomb}: member 'samples/huge_epoch_1.json' inflates to 8,388,608 bytes, over the "
                            "4,194,304-byte limit (raise PROCTOR_MAX_MEMBER_BYTES to read it)")
    assert read == []
    assert read_all([inspect_eval], ImportOptions())  # a real log is within the default limit


def test_a_member_whose_header_understates_its_size_is_refused(inspect_eval: Path, tmp_path: Path) -> None:
    """#32.21: the size a member's header declares is not trusted: the member is inflated (no further than the
    declared size) and a member that does not match it is an unreadable log."""
    import zipfile

    liar = tmp_path / "liar.eval"
    with zipfile.ZipFile(inspect_eval) as src, zipfile.ZipFile(liar, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            dst.writestr(info.filename, src.read(info))
        dst.writestr("samples/big_epoch_1.json", b" " * (1 << 20))
    raw = bytearray(liar.read_bytes())
    size = (1 << 20).to_bytes(4, "little")
    small = (1000).to_bytes(4, "little")
    assert raw.count(size) >= 2
    liar.write_bytes(bytes(raw.replace(size, small)))  # the local and central headers both say 1000 bytes
    with pytest.raises(InputError) as e:
        read_all([liar], ImportOptions())
    assert str(e.value).startswith(f"{liar}: not a readable Inspect log: ") and "\n" not in str(e.value)
