"""Item 2 of issue 13: samples.jsonl holds only whole, newline-framed records.

A torn tail (a kill mid-append) is cut off before anything is appended and reported; a failed write (a
full disk) is undone and reported as one line with the path."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mounts import tmpfs

from proctor.cli import main
from proctor.log.runlog import Outcome, Sample, append_samples, iter_samples, repair_torn_tail
from proctor.util.errors import InputError, ProctorError

GOOD = Path(__file__).parents[1] / "fixtures" / "items" / "good.jsonl"


def _sample(i: int) -> Sample:
    return Sample(sample_id=f"q{i}#0", item_id=f"q{i}", outcome=Outcome.CORRECT, score=1.0, raw_output="é" * 50)


def test_torn_tail_is_cut_before_the_next_append(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0), _sample(1)])
    whole = path.read_bytes()
    torn = _sample(2).model_dump_json().encode()[:37]  # cut inside a multi-byte character's neighbourhood
    path.write_bytes(whole + torn)
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0", "q1#0"]  # the torn record is not read
    assert repair_torn_tail(path) == len(torn)
    assert "torn last record" in caplog.text
    assert path.read_bytes() == whole
    append_samples(path, [_sample(2)])
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0", "q1#0", "q2#0"]


def test_torn_tail_with_broken_utf8_is_still_readable(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0)])
    path.write_bytes(path.read_bytes() + _sample(1).model_dump_json().encode()[:-60][:60] + b"\xc3")
    assert [s.sample_id for s in iter_samples(path)] == ["q0#0"]


def test_resume_after_a_torn_tail_then_report_works(tmp_path: Path) -> None:
    out, store = tmp_path / "run", tmp_path / "s.sqlite"
    args = ["run", str(GOOD), "-m", "scripted:first", "-o", str(out), "--store", str(store), "--no-progress"]
    assert main(args) == 0
    samples = out / "samples.jsonl"
    lines = samples.read_bytes().splitlines(keepends=True)
    samples.write_bytes(b"".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])  # killed mid-append
    assert main(args) == 0
    back = [json.loads(x) for x in samples.read_text().splitlines()]  # every line whole again
    assert len({s["sample_id"] for s in back}) == len(lines)
    assert main(["report", str(out), "-o", str(tmp_path / "r.md")]) == 0


def test_a_failed_append_is_undone_and_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "samples.jsonl"
    append_samples(path, [_sample(0)])
    before = path.read_bytes()

    def full_disk(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full_disk)
    with pytest.raises(ProctorError, match=r"samples.jsonl: cannot write: No space left on device"):
        append_samples(path, [_sample(1), _sample(2)])
    assert path.read_bytes() == before


@pytest.fixture
def tiny_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A 300 KB tmpfs (needs root and mount); skipped where it cannot be mounted."""
    with tmpfs(tmp_path / "disk", "size=300k") as mnt:
        yield mnt


def test_full_disk_run_is_one_line_and_exit_2(tiny_disk: Path, tmp_path: Path) -> None:
    items = tmp_path / "items.jsonl"
    big = "x" * 1500
    items.write_text("".join(json.dumps({"identifier": f"t.{i}", "modality": "choiceof3", "prompt": f"{i} {big}",
                                         "response": "B", "choices": {"A": "a", "B": "b", "C": "c"}}) + "\n"
                             for i in range(200)))
    out = tiny_disk / "run"
    cmd = [sys.executable, "-m", "proctor", "run", str(items), "-m", "scripted:first", "-o", str(out),
           "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2] / "src")}
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip().splitlines()
    assert len(err) == 1 and "No space left on device" in err[0] and str(tiny_disk) in err[0], done.stderr
    samples = out / "samples.jsonl"
    for line in (samples.read_text().splitlines() if samples.exists() else []):  # only whole records on disk
        json.loads(line)


def test_expand_run_dirs_opens_folders_of_runs(tmp_path: Path) -> None:
    from proctor.log.runlog import MANIFEST, expand_run_dirs

    for name in ("b", "a"):
        (tmp_path / "many" / name).mkdir(parents=True)
        (tmp_path / "many" / name / MANIFEST).write_text("{}")
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / MANIFEST).write_text("{}")
    (tmp_path / "one" / "inner").mkdir()
    (tmp_path / "one" / "inner" / MANIFEST).write_text("{}")
    got = expand_run_dirs([tmp_path / "one", tmp_path / "many", tmp_path / "missing"])
    assert got == [tmp_path / "one", tmp_path / "many" / "a", tmp_path / "many" / "b", tmp_path / "missing"]


SCHEMA_2 = {  # results.json as proctor wrote it before `metrics` (schema 2), an empty epochs block included
    "schema_version": 2,
    "overall": {"n": 3, "n_scored": 2, "n_errors": 1, "n_unscored": 0, "n_no_answer": 0, "accuracy": 0.5,
                "ci_low": 0.09, "ci_high": 0.91, "ci_method": "wilson", "no_answer_rate": 0.0,
                "input_tokens": 30, "output_tokens": 12, "latency_s_mean": None},
    "by_category": {"math": {"n": 3, "n_scored": 2, "accuracy": 0.5, "ci_low": 0.09, "ci_high": 0.91}},
    "macro_accuracy": 0.5, "epochs": {}, "truncated_as": "wrong",
    "cost": {"total": "0.25", "per_sample": "0.125", "per_correct": None, "correct": 1, "priced_samples": 2,
             "unpriced_samples": 0, "currency": "USD", "model": "0.25"},
    "errors": {"HTTP 500": 1},
}


def test_schema_2_results_read_as_typed_blocks(tmp_path: Path) -> None:
    """Old run directories still load: a schema 2 results.json is migrated on read, its numbers kept."""
    from decimal import Decimal

    from proctor.core.results import RESULTS_SCHEMA_VERSION
    from proctor.log.runlog import RESULTS, read_results, write_results

    (tmp_path / RESULTS).write_text(json.dumps(SCHEMA_2))
    res = read_results(tmp_path)
    assert res is not None and res.schema_version == RESULTS_SCHEMA_VERSION == 3
    assert (res.overall.accuracy, res.overall.ci_method, res.overall.n_truncated) == (0.5, "wilson", 0)
    assert res.by_category["math"].n_scored == 2 and res.epochs is None and res.metrics == {}
    assert res.cost is not None and res.cost.total == Decimal("0.25") and res.cost.per_correct is None
    write_results(tmp_path, res)  # rewritten in schema 3: the same numbers, as exact decimal text
    again = json.loads((tmp_path / RESULTS).read_text())
    assert again["schema_version"] == 3 and again["cost"]["total"] == "0.25" and again["overall"]["ci_high"] == 0.91
    assert again["errors"] == {"HTTP 500": 1} and "epochs" not in again


def test_a_results_block_of_the_wrong_type_is_one_line(tmp_path: Path) -> None:
    from proctor.log.runlog import RESULTS, read_results
    from proctor.util.errors import InputError

    (tmp_path / RESULTS).write_text(json.dumps({**SCHEMA_2, "overall": {"n": "many"}}))
    with pytest.raises(InputError, match="bad results") as caught:
        read_results(tmp_path)
    assert "\n" not in str(caught.value) and "overall.n:" in str(caught.value), caught.value


def test_a_damaged_manifest_or_sample_is_one_line_naming_the_field(tmp_path: Path) -> None:
    from proctor.log.runlog import MANIFEST, SAMPLES, iter_samples, read_manifest
    from proctor.util.errors import InputError

    (tmp_path / MANIFEST).write_text("{}")
    with pytest.raises(InputError) as caught:
        read_manifest(tmp_path)
    assert str(caught.value) == f"{tmp_path / MANIFEST}: bad manifest: run_id: Field required (+4 more)"
    (tmp_path / SAMPLES).write_text("garbage\n")
    with pytest.raises(InputError) as caught:
        list(iter_samples(tmp_path / SAMPLES))
    assert str(caught.value).startswith(f"{tmp_path / SAMPLES}:1: bad sample: Invalid JSON") and "\n" not in str(caught.value)


def _good_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    assert main(["run", str(GOOD), "-m", "scripted:first", "-o", str(out), "--no-history", "--no-progress"]) == 0
    return out


@pytest.mark.parametrize("accuracy", [7.5, -3, float("nan"), 0.99])
def test_a_hand_edited_results_json_is_recomputed_from_the_samples(
        tmp_path: Path, accuracy: float, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 32 #1: results.json is never trusted: the numbers read back are the samples' (a pure function)."""
    from proctor.log.runlog import RESULTS
    from proctor.metrics.results import read_run

    out = _good_run(tmp_path)
    truth = json.loads((out / RESULTS).read_text())
    edited = {**truth, "overall": {**truth["overall"], "accuracy": accuracy, "ci_high": float("inf"), "n_scored": 16}}
    (out / RESULTS).write_text(json.dumps(edited))
    log = read_run(out)
    assert log.results is not None and log.results.as_dict() == truth
    assert "disagrees with its samples" in caplog.text
    assert main(["export", str(out), "--to", "llmwc", "-o", str(tmp_path / "x")]) == 0
    summary = next((tmp_path / "x").glob("models/*/summary.json")).read_text()
    assert "NaN" not in summary and "Infinity" not in summary
    assert json.loads(summary)["accuracy"] == truth["overall"]["accuracy"]  # the samples' figure, not the edit


def test_results_over_an_emptied_samples_file_count_nothing(tmp_path: Path) -> None:
    """Issue 32 #1: 16 scored over an empty samples.jsonl is read as nothing scored."""
    from proctor.log.runlog import SAMPLES
    from proctor.metrics.results import read_run

    out = _good_run(tmp_path)
    (out / SAMPLES).write_text("")
    log = read_run(out)
    assert log.results is not None and log.results.overall.n_scored == 0 and log.results.overall.accuracy is None


@pytest.mark.parametrize(("field", "value"), [("latency_s", "NaN"), ("latency_s", "1e999"), ("difficulty", "NaN"),
                                              ("difficulty", "-Infinity")])
def test_every_float_of_a_sample_is_finite(tmp_path: Path, field: str, value: str) -> None:
    """Issue 32 #2: not only `score`: a NaN or infinite float anywhere in a sample is refused at its line."""
    from proctor.log.runlog import SAMPLES
    from proctor.metrics.results import read_run
    from proctor.util.errors import InputError

    out = _good_run(tmp_path)
    lines = (out / SAMPLES).read_text().splitlines()
    record = json.loads(lines[1])
    record[field] = 0.5
    lines[1] = json.dumps(record).replace(f'"{field}": 0.5', f'"{field}": {value}')
    (out / SAMPLES).write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=f"{SAMPLES}:2: bad sample: {field}") as caught:
        read_run(out)
    assert "\n" not in str(caught.value)
    assert main(["export", str(out), "--to", "eee", "-o", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize(("outcome", "score"), [("wrong", 1.0), ("correct", 0.0), ("correct", 0.5), ("partial", 1.0)])
def test_a_score_that_contradicts_its_outcome_is_refused(tmp_path: Path, outcome: str, score: float) -> None:
    """#32 attack: a hand-edited `score: 1` on a `wrong` sample made llm-wc's summary read accuracy 0.25 with
    `correct: 3` of 16 (outcomes counted, scores averaged); such a line is refused where it stands."""
    from proctor.log.runlog import SAMPLES

    out = _good_run(tmp_path)
    lines = (out / SAMPLES).read_text().splitlines()
    lines[1] = json.dumps({**json.loads(lines[1]), "outcome": outcome, "score": score})
    (out / SAMPLES).write_text("\n".join(lines) + "\n")
    assert main(["export", str(out), "--to", "llmwc", "-o", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    with pytest.raises(InputError, match=f"{SAMPLES}:2: bad sample: .*contradicts outcome"):
        list(iter_samples(out / SAMPLES))


@pytest.mark.parametrize("edit", ["expected", "outcome"])
def test_a_suite_context_whose_outcome_contradicts_its_scores_is_refused(tmp_path: Path, edit: str) -> None:
    """#32 attack: a hand-edited `expected` (or outcome) of a suite context was exported by probsem with the
    accuracy of the old verdict and the Brier score of the new one; the contradiction is refused at its line."""
    from proctor.log.runlog import SAMPLES

    suites = Path(__file__).parents[2] / "examples" / "suites"
    assert main(["score", str(suites), "--model", "scripted:random", "-o", str(tmp_path / "s"), "--no-history"]) == 0
    (run,) = (p.parent for p in (tmp_path / "s").glob("*/manifest.json"))
    lines = (run / SAMPLES).read_text().splitlines()
    record = json.loads(lines[0])
    scores, expected = record["details"]["scores"], record["details"]["expected"]
    top = scores.index(max(scores))
    if edit == "expected":  # the expected query made the top one (or another), the outcome left as it was
        record["details"]["expected"] = top if top != expected else (top + 1) % len(scores)
    else:
        record["outcome"], record["score"] = ("wrong", 0.0) if top == expected else ("correct", 1.0)
    (run / SAMPLES).write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    assert main(["export", str(run), "--to", "probsem", "-o", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    with pytest.raises(InputError, match=f"{SAMPLES}:1: bad sample: .*contradicts the scores"):
        list(iter_samples(run / SAMPLES))


def test_every_float_of_a_manifest_is_finite(tmp_path: Path) -> None:
    from proctor.log.runlog import MANIFEST, read_manifest
    from proctor.util.errors import InputError

    out = _good_run(tmp_path)
    text = (out / MANIFEST).read_text()
    data = json.loads(text)
    data["elapsed_s"] = 0.5
    (out / MANIFEST).write_text(json.dumps(data).replace('"elapsed_s": 0.5', '"elapsed_s": Infinity'))
    with pytest.raises(InputError, match="bad manifest: elapsed_s"):
        read_manifest(out)


def test_a_hidden_staging_folder_is_never_taken_for_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 32 #3: an import killed mid-write leaves `RUNS_ROOT/.NAME.xxxx.tmp` (a manifest, no samples): it
    sorts first, but `report RUNS_ROOT` and `export RUNS_ROOT` read only the real runs."""
    from proctor.log.runlog import MANIFEST, expand_run_dirs

    root = tmp_path / "runs"
    out = _good_run(root)
    stale = root / ".run.k3j2h1.tmp"
    stale.mkdir()
    shutil.copy(out / MANIFEST, stale / MANIFEST)
    assert expand_run_dirs([root]) == [out]
    capsys.readouterr()
    assert main(["report", str(root), "-o", str(tmp_path / "r.md")]) == 0
    assert "0/0" not in (tmp_path / "r.md").read_text()
    assert main(["export", str(root), "--to", "llmwc", "-o", str(tmp_path / "x")]) == 0


DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(("name", "text"), [
    ("results.json", '{"schema_version": [1]}'),  # issue 32 #11
    ("results.json", '{"schema_version": 1e400}'),
    ("results.json", '{"schema_version": "x"}'),
    ("results.json", '{"schema_version": ' + DEEP + "}"),  # issue 32 #12
    ("manifest.json", '{"run_id": ' + DEEP + "}"),
])
def test_a_damaged_results_or_manifest_is_one_line(tmp_path: Path, name: str, text: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = _good_run(tmp_path)
    (out / name).write_text(text)
    capsys.readouterr()
    assert main(["export", str(out), "--to", "llmwc", "-o", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(out / name) in err, err
    assert "Traceback" not in err and not (tmp_path / "x").exists()


def test_a_run_streamed_from_disk_is_the_run_read_whole(tmp_path: Path) -> None:
    """#32.20: `iter_run_samples` gives what `read_run` gives — each sample_id's last record (a retried error
    replaced), in the order ids first appear, a torn tail skipped — holding an index, not the samples; by item
    it is in (item id, epoch) order; a bad line is reported at its own line number."""
    from proctor.log.runlog import SAMPLES, iter_run_samples
    from proctor.metrics.results import read_run

    (tmp_path / "manifest.json").write_text(json.dumps({
        "run_id": "r", "proctor_version": "0.1.0", "dataset": {"name": "d"}, "model": {"spec": "scripted:first"},
        "mode": "generate", "started_at": "2026-01-01T00:00:00+00:00"}))
    failed = Sample(sample_id="q1#0", item_id="q1", outcome=Outcome.ERROR, error="HTTP 500")
    epoch1 = Sample(sample_id="q0#1", item_id="q0", epoch=1, outcome=Outcome.WRONG, score=0.0)
    append_samples(tmp_path / SAMPLES, [_sample(2), failed, _sample(0), epoch1, _sample(1)])
    path = tmp_path / SAMPLES
    path.write_bytes(path.read_bytes() + b'{"sample_id": "q3#0", "item_')  # a torn tail
    whole = read_run(tmp_path)
    streamed = list(iter_run_samples(tmp_path))
    assert [s.model_dump() for s in streamed] == [s.model_dump() for s in whole.samples]
    assert [s.sample_id for s in streamed] == ["q2#0", "q1#0", "q0#0", "q0#1"] and streamed[1].score == 1.0
    assert [s.sample_id for s in iter_run_samples(tmp_path, by_item=True)] == ["q0#0", "q0#1", "q1#0", "q2#0"]
    lazy = read_run(tmp_path, samples=False)
    assert [s.sample_id for s in lazy.iter_samples()] == [s.sample_id for s in streamed]
    # never an empty run by mistake: the list reads them from disk when used (#40: a run just made is so too)
    assert len(lazy.samples) == 4 and [s.sample_id for s in lazy.samples] == [s.sample_id for s in streamed]
    assert lazy.samples[1].score == 1.0 and lazy.samples[-1].sample_id == "q0#1" and lazy.samples == whole.samples
    path.write_bytes(path.read_bytes().replace(b'"outcome":"wrong"', b'"outcome":"lost"'))
    with pytest.raises(InputError, match=r"samples.jsonl:4: bad sample"):
        list(iter_run_samples(tmp_path))


def test_float_noise_is_not_a_results_json_that_disagrees() -> None:
    from proctor.metrics.results import _first_difference

    assert _first_difference({"a": {"b": 1.885000000000001}}, {"a": {"b": 1.8850000000000005}}) is None
    assert _first_difference({"bins": [0.1, 0.30000000000000004]}, {"bins": [0.1, 0.3]}) is None
    assert _first_difference({"a": {"b": 1.885}}, {"a": {"b": 1.886}}) == "a.b: 1.885, not 1.886"
    assert _first_difference({"n": True}, {"n": 1}) is None  # bools compare as Python compares them
