"""Manifest v4 (typed provenance) and the run logs written before it.

tests/fixtures/runlog_v2/ holds run directories and a history store written by proctor's own code at main
6639c56 (runlog_version 2: open-dict manifests, the generation settings three times); see its README. They
are read, reported, exported and recorded by today's code; a v4 manifest refuses a key it does not declare."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.core.money import Money, recorded_money
from proctor.core.spec import GenerationSpec
from proctor.log.provenance import SCORER_SETTINGS, BackendIdentity, BackendInfo, DatasetInfo, ImportOrigin
from proctor.log.runlog import (
    RUNLOG_VERSION,
    GenerationDetails,
    JudgeCheck,
    JudgeUsage,
    Manifest,
    RunSettings,
    SuiteDetails,
    SuiteRow,
    write_manifest,
)
from proctor.log.setting import run_setting, setting_label
from proctor.metrics.results import read_run
from proctor.run.store import Store
from proctor.util.errors import InputError

OLD = Path(__file__).parents[1] / "fixtures" / "runlog_v2"
RUNS = ("generate", "logprob", "score")


@pytest.fixture
def old_runs(tmp_path: Path) -> Path:
    """A writable copy of the old run directories and history."""
    shutil.copytree(OLD, tmp_path / "old")
    return tmp_path / "old"


@pytest.mark.parametrize("name", RUNS)
def test_an_old_manifest_reads_as_v4_with_its_provenance_moved_and_nothing_lost(name: str) -> None:
    raw = json.loads((OLD / name / "manifest.json").read_text())
    assert raw["runlog_version"] == 2 and "identity" in raw  # the old shape, as main wrote it
    m = read_run(OLD / name).manifest
    assert m.runlog_version == RUNLOG_VERSION == 5
    assert m.provenance.proctor_version == raw["proctor_version"] and m.git_sha == raw["git_sha"]
    assert m.provenance.host.model_dump() == raw["host"]
    assert m.model_identity.flat() == raw["model_identity"]
    assert m.model.flat() == raw["model"] and m.dataset.flat() == raw["dataset"]
    assert m.scorer.as_dict() == {k: v for k, v in raw["scorer"].items() if k != "generation" and k not in SCORER_SETTINGS}
    assert (m.prompt_kind, m.answer_rule, m.no_answer) == (raw["prompt_kind"], raw.get("answer_rule"), raw["no_answer"])
    if raw["generation"]:  # kept once, as it was
        assert m.generation is not None and m.generation.as_dict() == raw["generation"] == raw["scorer"]["generation"]
    else:
        assert m.generation is None
    dumped = m.model_dump(mode="json")
    assert "identity" not in dumped and "host" not in dumped and "generation" not in dumped["scorer"]


@pytest.mark.parametrize("name", RUNS)
def test_a_migrated_manifest_written_again_reads_back_equal(name: str, tmp_path: Path) -> None:
    m = read_run(OLD / name).manifest
    write_manifest(tmp_path, m)
    again = read_run(tmp_path).manifest if (tmp_path / "samples.jsonl").exists() else None
    back = Manifest.model_validate_json((tmp_path / "manifest.json").read_text())
    assert again is None and back == m and back.runlog_version == 5


def test_old_settings_equal_those_of_the_same_run_migrated(old_runs: Path) -> None:
    generate = read_run(old_runs / "generate").manifest
    assert setting_label(run_setting(generate)).startswith(
        "generate · zero_shot · temp 0 · max-tokens 1024 · 2 epochs · judge scripted:fixed=Fine. GRADE:")
    assert setting_label(run_setting(read_run(old_runs / "score").manifest)) == "logprob · probsem-suite · norm sum"


def test_an_old_history_store_lists_its_runs_with_their_settings(old_runs: Path) -> None:
    store = Store(old_runs / "history.sqlite")
    runs = {r.run_id: r for r in store.list_runs()}  # the three, and two earlier tries of `generate`
    assert len(runs) == 5
    for name in RUNS:
        log = read_run(old_runs / name)
        assert runs[log.manifest.run_id].setting == run_setting(log.manifest)
    # recording an old run directory again writes the v4 manifest into the history
    store.record_run(old_runs / "logprob")
    assert {r.run_id for r in store.list_runs()} == set(runs)


def test_old_runs_are_reported_summarised_and_exported(old_runs: Path, tmp_path: Path) -> None:
    dirs = [str(old_runs / n) for n in RUNS]
    assert main(["report", *dirs, "-o", str(tmp_path / "r.html")]) == 0
    html = (tmp_path / "r.html").read_text()
    assert "scripted:<wbr>random" in html and "proctor-<wbr>extract/<wbr>2" in html
    assert main(["export", str(old_runs / "generate"), "--to", "inspect", "-o", str(tmp_path / "inspect")]) == 0
    assert main(["export", str(old_runs / "logprob"), "--to", "eee", "-o", str(tmp_path / "eee")]) == 0


def test_a_v4_manifest_refuses_an_undeclared_key_naming_it(tmp_path: Path) -> None:
    write_manifest(tmp_path, read_run(OLD / "logprob").manifest)
    data = json.loads((tmp_path / "manifest.json").read_text())
    for where, typo in ((data, "modle"), (data["provenance"], "git_shaa"), (data["dataset"], "revison")):
        where[typo] = "x"
        (tmp_path / "manifest.json").write_text(json.dumps(data))
        with pytest.raises(InputError, match=rf"manifest.json: bad manifest: (\w+\.)*{typo}: Extra inputs"):
            read_run(tmp_path)
        del where[typo]


def test_a_v4_manifest_names_the_field_that_is_wrong(tmp_path: Path) -> None:
    write_manifest(tmp_path, read_run(OLD / "generate").manifest)
    data = json.loads((tmp_path / "manifest.json").read_text())
    data["settings"]["generation"]["max_tokens"] = "many"
    (tmp_path / "manifest.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"bad manifest: settings.generation.max_tokens: Input should be a valid integer"):
        read_run(tmp_path)


def test_backend_records_keep_a_backends_own_settings_apart_and_flatten_back() -> None:
    described = {"spec": "vllm:m", "capabilities": ["generate"], "model": "m", "dtype": "bfloat16",
                 "tensor_parallel": 2, "engine_command": ["vllm", "serve"]}
    info = BackendInfo.of(described)
    assert info.dtype == "bfloat16" and info.settings == {"tensor_parallel": 2, "engine_command": ["vllm", "serve"]}
    assert info.flat() == described
    ident = BackendIdentity.of({"spec": "hf:x", "weights": "files-sha256:ab", "dtype": "float32", "chat": True})
    assert ident.settings == {"chat": True} and ident.flat()["weights"] == "files-sha256:ab"
    gen = GenerationSpec.recorded({"temperature": 0.2, "max_tokens": 8, "n": 1})  # another harness's parameter
    assert gen.extra_body == {"n": 1} and gen.as_dict()["stop"] == []


def test_old_samples_read_with_typed_details(old_runs: Path) -> None:
    checked = [s for s in read_run(old_runs / "generate").samples if s.details.get("judge_check") is not None]
    assert checked and all(isinstance(s.details, GenerationDetails) for s in checked)
    check = checked[0].details.get("judge_check")
    assert isinstance(check, JudgeCheck) and isinstance(check.details.judge_usage, JudgeUsage)
    assert check.details.judge_usage.input_tokens and check.details.rouge1 is not None
    suite = read_run(old_runs / "score").samples[0].details
    assert isinstance(suite, SuiteDetails) and all(isinstance(r, SuiteRow) for r in suite.rows) and suite.rows


def test_a_sample_refuses_an_undeclared_key_naming_it(tmp_path: Path) -> None:
    line = json.loads((OLD / "logprob" / "samples.jsonl").read_text().splitlines()[0])
    for bad, field in (({**line, "input_token": 3}, "input_token"),
                       ({**line, "details": {**line["details"], "logprob": {}}}, r"details\.choice\.logprob")):
        shutil.rmtree(tmp_path / "r", ignore_errors=True)
        shutil.copytree(OLD / "logprob", tmp_path / "r")
        (tmp_path / "r" / "samples.jsonl").write_text(json.dumps(bad) + "\n")
        with pytest.raises(InputError, match=rf"samples.jsonl:1: bad sample: {field}: Extra inputs are not permitted"):
            read_run(tmp_path / "r")


def test_a_results_block_refuses_an_undeclared_key_naming_it(tmp_path: Path) -> None:
    shutil.copytree(OLD / "logprob", tmp_path / "r")
    data = json.loads((tmp_path / "r" / "results.json").read_text())
    data["overall"]["acuracy"] = 1.0
    (tmp_path / "r" / "results.json").write_text(json.dumps(data))
    with pytest.raises(InputError, match=r"results.json: bad results: overall.acuracy: Extra inputs are not permitted"):
        read_run(tmp_path / "r")


def test_the_generation_record_takes_one_stop_as_text_and_refuses_wrong_types() -> None:
    """The one generation record (the spec's GenerationSpec, as the provenance stores it) carries harden's checks (issue 32 #13): an OpenAI-style
    `stop: "###"` is a list of one; a wrong type, a range error or a NaN is refused naming the field."""
    from pydantic import ValidationError

    record = GenerationSpec.recorded({"stop": "###", "temperature": 0.5, "logit_bias": {}})
    assert record.stop == ("###",) and record.extra_body == {"logit_bias": {}}
    for bad, field in [({"stop": 5}, "stop"), ({"temperature": "hot"}, "temperature"),
                       ({"max_tokens": -5}, "max_tokens"), ({"top_p": 1.5}, "top_p"),
                       ({"temperature": float("nan")}, "temperature")]:
        with pytest.raises(ValidationError, match=field):
            GenerationSpec.recorded(bad)


def test_an_imported_runs_unrecorded_temperature_stays_unknown(tmp_path: Path) -> None:
    """An import that recorded no temperature keeps None (the server's default) through the manifest, never 0."""
    from proctor.interop.imported import new_manifest
    from proctor.report.labels import settings_text

    settings = RunSettings(mode="generate", generation=GenerationSpec.recorded({"top_p": 0.9, "max_tokens": 8}))
    man = new_manifest(run_id="r", dataset=DatasetInfo(name="d"), model=BackendInfo(spec="openai:m"),
                       settings=settings, started_at=None, imported_from=ImportOrigin(harness="inspect"))
    write_manifest(tmp_path, man)
    data = json.loads((tmp_path / "manifest.json").read_text())
    back = Manifest.model_validate(data)
    assert back.generation == man.generation and back.generation is not None and back.generation.temperature is None
    assert settings_text(back.generation, 1) == "top_p=0.9 · 8 tok"
    del data["settings"]["generation"]["temperature"]  # a record written without the key reads the same
    assert Manifest.model_validate(data).generation == man.generation


# ---------------------------------------------------------------- manifest v5: v4 run directories (main 81a90f9)

V4 = Path(__file__).parents[1] / "fixtures" / "runlog_v4"
V4_RUNS = {  # the commands that wrote them (tests/fixtures/runlog_v4/README.md), without -o and --store
    "generate": ["run", "examples/items/demo.jsonl", "--model", "scripted:random", "--judge",
                 "scripted:fixed=Fine.\nGRADE: PARTIALLY_CORRECT", "--epochs", "2", "--price-in", "1", "--price-out", "2",
                 "--judge-agreement", "2"],
    "logprob": ["run", "examples/items/multiple-choice.jsonl", "--model", "scripted:random", "--mode", "logprob"],
    "spec": ["run", "examples/benchmarks/capitals.yaml", "--model", "scripted:random"],
}
SETTING_KEYS = ("answer_rule", "no_answer", "prompt_kind", "extract")


def _key_count(text: str, key: str) -> int:
    return text.count(f'"{key}":')


@pytest.mark.parametrize("name", [*V4_RUNS, "score"])
def test_a_v4_manifest_reads_as_v5_every_setting_as_it_was_and_once(name: str, tmp_path: Path) -> None:
    raw = json.loads((V4 / name / "manifest.json").read_text())
    assert raw["runlog_version"] == 4 and raw["spec"] and "answer_rule" in raw["scorer"] or name != "generate"
    m = read_run(V4 / name).manifest
    assert m.runlog_version == 5 and m.spec is not None and m.settings is None and m.run_id == raw["run_id"]
    for key in ("mode", "prompt_kind", "extractor_version", "epochs", "truncated_as", "extract", "answer_rule",
                "no_answer", "max_cost"):
        assert getattr(m, key) == raw[key], key  # each old shadow is derived from the spec, as v4 wrote it
    assert (m.generation.model_dump(mode="json") if m.generation is not None else None) == raw["generation"]
    for key in ("price", "judge_price"):  # v4's `PriceRecord` shape, read as the one money record
        value = getattr(m, key)
        assert value == (Money.model_validate(recorded_money(raw[key])) if raw[key] is not None else None), key
    write_manifest(tmp_path, m)
    text = (tmp_path / "manifest.json").read_text()
    assert {k: _key_count(text, k) for k in SETTING_KEYS} == dict.fromkeys(SETTING_KEYS, 1)


@pytest.mark.parametrize("name", list(V4_RUNS))
def test_a_v4_run_directory_resumes_under_its_own_id(name: str, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Half a v4 run's samples kept: the same command asks the rest in the same directory, same run id."""
    run = tmp_path / name
    shutil.copytree(V4 / name, run)
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (run / "results.json").unlink()
    old_id = json.loads((run / "manifest.json").read_text())["run_id"]
    capsys.readouterr()
    assert main([*V4_RUNS[name], "-o", str(run), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]) == 0
    assert f"resuming {run}: {len(lines) // 2}/{len(lines)} done" in capsys.readouterr().err
    log = read_run(run)
    assert log.manifest.run_id == old_id and len(log.samples) == len(lines)
    assert json.loads((run / "manifest.json").read_text())["runlog_version"] == 5


def test_a_fresh_manifest_holds_each_scoring_setting_once(tmp_path: Path) -> None:
    """Issue 36: `answer_rule`, `no_answer`, `prompt_kind` and `extract` were written three times each."""
    argv = [*V4_RUNS["spec"], "-o", str(tmp_path / "r"), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    assert main(argv) == 0
    text = (tmp_path / "r" / "manifest.json").read_text()
    assert {k: _key_count(text, k) for k in SETTING_KEYS} == dict.fromkeys(SETTING_KEYS, 1)
    m = read_run(tmp_path / "r").manifest
    assert m.spec is not None and (m.prompt_kind, m.no_answer) == (m.spec.scorer.prompt_kind, m.spec.scorer.no_answer)


def test_the_v4_history_store_lists_its_runs_with_their_settings(tmp_path: Path) -> None:
    shutil.copy(V4 / "history.sqlite", tmp_path / "h.sqlite")
    runs = {r.run_id: r for r in Store(tmp_path / "h.sqlite").list_runs()}
    for name in [*V4_RUNS, "score"]:
        assert runs[read_run(V4 / name).manifest.run_id].setting == run_setting(read_run(V4 / name).manifest)
