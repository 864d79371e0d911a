"""lm-eval results + `--log_samples` files, made by lm-eval itself, read into proctor runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from import_sources import N_ITEMS

from proctor.interop.importers import ImportOptions, read_all, run_dir_for, write_run
from proctor.interop.lmeval_import import samples_file
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.util.errors import InputError


def _samples(results: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in samples_file(results, "demo_mc").read_text().splitlines()]


def _copy(results: Path, to: Path) -> Path:
    """The results file and its samples file in a folder of their own (to damage one)."""
    to.mkdir()
    shutil.copy(results, to / results.name)
    samples = samples_file(results, "demo_mc")
    shutil.copy(samples, to / samples.name)
    return to / results.name


def test_each_sample_becomes_a_proctor_sample_scored_by_lm_evals_metric(lmeval_results: Path, tmp_path: Path) -> None:
    (run,) = read_all([lmeval_results], ImportOptions())
    log = write_run(run, run_dir_for(run, tmp_path))
    back = read_run(log.path)
    theirs = {str(s["doc_id"]): s for s in _samples(lmeval_results)}
    assert {s.item_id for s in back.samples} == set(theirs) and len(back.samples) == N_ITEMS  # default: doc_id
    for s in back.samples:
        assert s.score == theirs[s.item_id]["acc"]
        assert s.outcome is (Outcome.CORRECT if s.score == 1.0 else Outcome.WRONG)
        assert s.prompt.startswith("Which number is") and s.mode == "logprob"
        assert s.extracted in theirs[s.item_id]["doc"]["choices"].values()  # type: ignore[union-attr]
    stated = json.loads(lmeval_results.read_text())["results"]["demo_mc"]["acc,none"]
    assert back.results is not None and back.results.overall.accuracy == pytest.approx(stated)
    origin = back.manifest.imported_from
    assert origin is not None and origin.harness == "lm-eval" and origin.metric == "acc" and origin.filter == "none"
    assert set(origin.files) == {str(lmeval_results), str(samples_file(lmeval_results, "demo_mc"))}
    assert back.manifest.model.spec == "dummy" and back.manifest.dataset.name == "demo_mc"


def test_metric_item_ids_and_names_are_chosen(lmeval_results: Path, tmp_path: Path) -> None:
    opts = ImportOptions(metric="acc_norm,none", item_id="identifier", name="hf:tiny", dataset="demo")
    (run,) = read_all([lmeval_results], opts)
    log = write_run(run, run_dir_for(run, tmp_path))
    stated = json.loads(lmeval_results.read_text())["results"]["demo_mc"]["acc_norm,none"]
    assert log.results is not None and log.results.overall.accuracy == pytest.approx(stated)
    assert sorted(s.item_id for s in log.samples) == sorted(f"demo.{i}" for i in range(N_ITEMS))
    assert {s.category for s in log.samples} == {"alpha", "beta"}  # the doc's own category
    assert log.manifest.model.spec == "hf:tiny" and log.manifest.dataset.name == "demo"
    assert log.path.name.startswith("demo__hf-tiny__")


def test_a_template_adds_text_to_a_field(lmeval_results: Path) -> None:
    (run,) = read_all([lmeval_results], ImportOptions(item_id="mc-{doc_id}"))
    assert sorted(s.item_id for s in run.samples) == sorted(f"mc-{i}" for i in range(N_ITEMS))


def test_importing_again_is_the_same_run(lmeval_results: Path) -> None:
    (a,), (b,) = read_all([lmeval_results], ImportOptions()), read_all([lmeval_results], ImportOptions())
    (c,) = read_all([lmeval_results], ImportOptions(metric="acc_norm"))
    assert a.manifest.run_id == b.manifest.run_id != c.manifest.run_id


@pytest.mark.parametrize(("opts", "message"), [
    (ImportOptions(metric="f1"), "no metric 'f1' in this sample (metrics: acc, acc_norm)"),
    (ImportOptions(metric="acc,strict-match"), "no samples with filter 'strict-match' (filters here: none)"),
    (ImportOptions(item_id="question_id"), "this sample has no text or number field 'question_id' (fields: "),
    (ImportOptions(item_id="category"), "gives item id 'alpha' to more than one sample"),
    (ImportOptions(item_id="{doc.__class__}"), "use plain fields"),
])
def test_a_choice_that_does_not_fit_the_file_is_refused(lmeval_results: Path, opts: ImportOptions,
                                                        message: str) -> None:
    with pytest.raises(InputError, match="samples_demo_mc_") as e:
        read_all([lmeval_results], opts)
    assert message in str(e.value)


def test_a_metric_that_is_not_a_score_is_refused_with_its_line(lmeval_results: Path, tmp_path: Path) -> None:
    results = _copy(lmeval_results, tmp_path / "copy")
    samples = samples_file(results, "demo_mc")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    rows[2]["acc"] = 2.5
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError) as e:
        read_all([results], ImportOptions())
    assert f"{samples}:3: metric 'acc' is 2.5, not a score in [0, 1]" in str(e.value)


def test_a_results_file_without_its_samples_is_refused(lmeval_results: Path, tmp_path: Path) -> None:
    results = _copy(lmeval_results, tmp_path / "copy")
    samples_file(results, "demo_mc").unlink()
    with pytest.raises(InputError) as e:
        read_all([results], ImportOptions())
    assert str(e.value).startswith(f"{results}: no samples file for task 'demo_mc'")
    assert "re-run lm-eval with --log_samples" in str(e.value)


def test_a_generation_task_is_scored_under_the_filter_asked_for(lmeval_gen_results: Path) -> None:
    stated = json.loads(lmeval_gen_results.read_text())["results"]["demo_gen"]
    default, first = (read_all([lmeval_gen_results], ImportOptions(metric=m))[0] for m in (None, "exact_match,first"))
    for run, key in ((default, "exact_match,strict"), (first, "exact_match,first")):  # default: the first filter
        assert len(run.samples) == N_ITEMS and run.manifest.mode == "generate"
        accuracy = sum(s.score or 0.0 for s in run.samples) / N_ITEMS
        assert accuracy == pytest.approx(stated[key])
        assert run.manifest.imported_from.filter == key.split(",")[1]
    assert stated["exact_match,first"] == 0.5 and stated["exact_match,strict"] == 0.0  # the filters differ
    assert {s.raw_output for s in default.samples} == {s.raw_output for s in first.samples} == {"lol"}
    assert {s.extracted for s in first.samples} == {"lol"}
    assert {s.extracted for s in default.samples} == {"[invalid]"}  # what the strict filter read
    assert default.samples[0].extraction_rule == "lm-eval filter strict"
    assert default.manifest.run_id != first.manifest.run_id


def test_provenance_of_the_wrong_type_is_left_out_never_a_traceback(lmeval_results: Path, tmp_path: Path) -> None:
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data.update({"versions": [], "n-shot": 3, "task_hashes": "x", "config": [], "model_name": {"a": 1},
                 "date": "soon", "lm_eval_version": ["0.4"], "results": {"demo_mc": 5}})
    results.write_text(json.dumps(data))
    (run,) = read_all([results], ImportOptions())
    assert run.manifest.model.spec == "lm-eval" and run.manifest.dataset.content_hash is None
    assert len(run.samples) == N_ITEMS  # the scores come from the samples file, which is intact


def test_a_task_name_that_would_climb_out_is_refused(lmeval_results: Path, tmp_path: Path) -> None:
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data["configs"] = {"../../etc/passwd": {}}
    results.write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"task name '../../etc/passwd' cannot name a samples file"):
        read_all([results], ImportOptions())


def test_text_with_a_lone_surrogate_is_refused_with_its_line(lmeval_results: Path, tmp_path: Path) -> None:
    """JSON may escape a lone surrogate (\\ud800) that no UTF-8 file can hold: it was read, then writing the run
    raised a serialization traceback."""
    results = _copy(lmeval_results, tmp_path / "copy")
    samples = samples_file(results, "demo_mc")
    rows = [json.loads(line) for line in samples.read_text().splitlines()]
    rows[1]["doc"]["identifier"] = "demo\udc00"
    samples.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=rf"{samples}:2: .*lone surrogate"):
        read_all([results], ImportOptions(item_id="identifier"))


def test_a_results_file_with_a_lone_surrogate_is_refused(lmeval_results: Path, tmp_path: Path) -> None:
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data["model_name"] = "m\udc00"
    results.write_text(json.dumps(data))
    with pytest.raises(InputError, match=rf"{results}: .*lone surrogate .* at model_name:"):
        read_all([results], ImportOptions())


@pytest.mark.parametrize("date", [1e300, -1e300, 1e18])
def test_a_date_out_of_range_is_left_out_never_a_traceback(lmeval_results: Path, tmp_path: Path, date: float) -> None:
    """Issue 32 #15: `date: 1e300` overflowed datetime.fromtimestamp; like any provenance of the wrong type it
    is left out (the run is dated when it is imported)."""
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data["date"] = date
    results.write_text(json.dumps(data))
    (run,) = read_all([results], ImportOptions())
    assert run.manifest.started_at.startswith("20") and len(run.samples) == N_ITEMS


@pytest.mark.parametrize("config", [{"output_type": ["loglikelihood"]}, {"output_type": {"a": 1}}, {"output_type": 5}])
def test_a_task_config_of_the_wrong_type_is_refused_with_its_line(lmeval_results: Path, tmp_path: Path,
                                                                  config: object) -> None:
    """Issue 32 #15: a list `output_type` (unhashable) was a TypeError traceback."""
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data["configs"]["demo_mc"] = config
    results.write_text(json.dumps(data, indent=1))
    with pytest.raises(InputError, match=rf"{results.name}:\d+: configs.demo_mc") as caught:
        read_all([results], ImportOptions())
    assert "\n" not in str(caught.value)


def test_a_local_model_path_is_recorded_as_proctor_records_one(lmeval_results: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.31: lm-eval writes the absolute path of a local model; the import records it as `hf:PATH` with the
    path relative to the working directory, as `proctor run --model hf:models/tiny` does (a hub id or a path
    outside the working directory is kept as it is)."""
    data = json.loads(lmeval_results.read_text())
    data["config"]["model"] = "hf"
    data["model_name"] = str(tmp_path / "models" / "tiny")
    copy = tmp_path / "lm" / "demo_mc" / lmeval_results.parent.name
    shutil.copytree(lmeval_results.parent, copy)
    (copy / lmeval_results.name).write_text(json.dumps(data))
    monkeypatch.chdir(tmp_path)
    (run,) = read_all([copy / lmeval_results.name], ImportOptions())
    assert run.manifest.model.spec == "hf:models/tiny"
    assert run.manifest.model.settings["model_name"] == str(tmp_path / "models" / "tiny")  # what lm-eval wrote, kept
    data["model_name"] = "EleutherAI/pythia-70m"
    (copy / lmeval_results.name).write_text(json.dumps(data))
    (run,) = read_all([copy / lmeval_results.name], ImportOptions())
    assert run.manifest.model.spec == "hf:EleutherAI/pythia-70m"


def test_a_token_in_model_args_is_never_written(lmeval_results: Path, tmp_path: Path) -> None:
    """#32 attack: `--model_args pretrained=x,token=hf_…` (or `api_key=`, or a base URL whose query is a bare
    token) was copied in clear into manifest.json; the arguments are kept, their secrets masked."""
    results = _copy(lmeval_results, tmp_path / "copy")
    data = json.loads(results.read_text())
    data["config"]["model_args"] = ("pretrained=x,token=hf_SECRET1,api_key=SECRET2,"
                                    "base_url=http://h/v1?SECRET3,tokenizer=t,max_tokens=5")
    results.write_text(json.dumps(data))
    (run,) = read_all([results], ImportOptions())
    write_run(run, tmp_path / "run")
    manifest = (tmp_path / "run" / "manifest.json").read_text()
    assert "SECRET" not in repr(run.manifest) and "SECRET" not in manifest
    assert "pretrained=x,token=***,api_key=***,base_url=http://h/v1?" in manifest
