"""A run's setting and its label: what tells two runs of one model on one dataset apart.

The manifests are given in the shape proctor wrote before v4 (`identity`, open dicts): `run_setting` reads them
through the migration, as it reads an old history's rows; a v4 manifest gives the same setting."""

from __future__ import annotations

import json
from typing import Any

from proctor.log.runlog import Manifest
from proctor.log.setting import run_setting as _run_setting
from proctor.log.setting import setting_key, setting_label

_REQUIRED = {"run_id": "r", "proctor_version": "0.1.0", "dataset": {"name": "d"}, "model": {"spec": "scripted:first"},
             "started_at": "2025-01-01T00:00:00+00:00", "runlog_version": 2}


def run_setting(old: dict[str, Any]) -> dict[str, Any]:
    """The setting of a manifest in the old shape, which must equal that of the same manifest migrated to v4."""
    manifest = Manifest.model_validate({**_REQUIRED, **old})
    again = Manifest.model_validate_json(manifest.model_dump_json())
    assert again.runlog_version == 5 and _run_setting(again) == _run_setting(manifest)
    return _run_setting(manifest)


def test_generation_setting_and_label() -> None:
    manifest = {"mode": "generate", "prompt_kind": "chain_of_thought", "epochs": 4,
                "generation": {"temperature": 0.7, "top_p": 0.95, "max_tokens": 2048, "stop": ["\n\n"], "seed": 3},
                "identity": {"scorer": "generation", "prompt_kind": "chain_of_thought", "extractor": "v3",
                             "generation": {}, "epochs": 4}}
    setting = run_setting(manifest)
    assert setting["mode"] == "generate" and setting["epochs"] == 4 and "extractor" not in setting
    assert setting_label(setting) == (
        "generate · chain_of_thought · temp 0.7 · top-p 0.95 · max-tokens 2048 · seed 3 · stop \\n\\n · 4 epochs")


def test_logprob_suite_and_judge_labels() -> None:
    assert setting_label(run_setting({"mode": "logprob", "identity": {"scorer": "choice"}})) == "logprob · choices"
    suite = {"mode": "logprob", "prompt_kind": "probsem-suite",
             "identity": {"scorer": "suite", "norm": "token", "temperature": 2.0, "join": "newline"}}
    assert setting_label(run_setting(suite)) == "logprob · probsem-suite · norm token · softmax temp 2"
    judged = {"mode": "generate", "prompt_kind": "zero_shot", "generation": {"temperature": 0.0},
              "identity": {"scorer": "judge", "judge": "openai:grader", "judge_version": "2"}}
    assert setting_label(run_setting(judged)) == "generate · zero_shot · temp 0 · judge openai:grader"


def test_key_separates_what_changes_scores_only() -> None:
    base = {"mode": "generate", "prompt_kind": "zero_shot", "generation": {"temperature": 0.0},
            "identity": {"scorer": "generation", "extractor": "v1"}}
    newer_extractor = {**base, "identity": {"scorer": "generation", "extractor": "v2"}}
    hotter = {**base, "generation": {"temperature": 0.5}}
    assert setting_key(run_setting(base)) == setting_key(run_setting(newer_extractor))
    assert setting_key(run_setting(base)) != setting_key(run_setting(hotter))
    assert setting_key(run_setting(base)) != setting_key(run_setting({**base, "mode": "logprob"}))


def test_reasoning_and_extra_sampling_settings_are_labelled() -> None:
    manifest = {"mode": "generate", "prompt_kind": "zero_shot",
                "generation": {"temperature": 0.0, "max_tokens": 4096, "reasoning_effort": "high", "top_k": 20}}
    assert setting_label(run_setting(manifest)) == (
        "generate · zero_shot · temp 0 · max-tokens 4096 · reasoning-effort high · top-k 20")


def test_extract_shows_only_when_not_the_default() -> None:
    base = {"mode": "generate", "prompt_kind": "five_shot",
            "identity": {"scorer": "generation", "extractor": "proctor-extract/2", "extract": "reference"}}
    robust = {**base, "identity": {**base["identity"], "extract": "robust"}}
    assert "extract" not in run_setting(base) and "extract" not in setting_label(run_setting(base))
    assert run_setting(robust)["extract"] == "robust" and "extract robust" in setting_label(run_setting(robust))
    assert setting_key(run_setting(base)) != setting_key(run_setting(robust))


# ---------------------------------------------------------------- settings read from the spec (#36 item 5)

ITEMS = __import__("pathlib").Path(__file__).parents[2] / "examples" / "items" / "multiple-choice.jsonl"


def _recorded(tmp_path: Any, name: str, *args: str) -> None:
    from proctor.cli import main

    store, runs = tmp_path / "store.db", tmp_path / "runs"
    assert main(["run", str(ITEMS), "--model", f"scripted:{name}", *args, "--no-cache", "--no-progress",
                 "--store", str(store), "-o", str(runs / f"{name}{'-'.join(args)}")]) in (0, 1)


def test_a_five_shot_run_is_labelled_ranked_and_compared_apart(tmp_path: Any,
                                                               capsys: Any) -> None:
    """`--shots 5` was listed as `generate · zero_shot · …`, ranked on the zero-shot board and paired by compare."""
    from proctor.cli import main
    from proctor.run.store import Store

    _recorded(tmp_path, "first")
    _recorded(tmp_path, "random")
    _recorded(tmp_path, "first", "--shots", "5")
    store = tmp_path / "store.db"
    runs = Store(store).list_runs()
    by_shots = {("5 shots" in r.setting_label): r for r in runs}
    assert len(runs) == 3 and len({r.setting_key for r in runs}) == 2
    five, zero = by_shots[True], by_shots[False]
    assert five.setting_label.startswith("generate · zero_shot · 5 shots · ")
    capsys.readouterr()
    assert main(["runs", "--store", str(store)]) == 0
    assert "5 shots" in capsys.readouterr().out
    assert main(["leaderboard", five.dataset, "--store", str(store), "--json", "--n-boot", "200"]) == 0
    boards = json.loads(capsys.readouterr().out)  # one board per setting
    assert sorted(len(b["entries"]) for b in boards) == [1, 2]
    zero_board = next(b for b in boards if len(b["entries"]) == 2)
    assert five.run_id not in {e["run_id"] for e in zero_board["entries"]} and "shots" not in zero_board["setting"]
    assert main(["compare", five.run_id, zero.run_id, "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert "not comparable" in err and "5 shots" in err and len(err.strip().splitlines()) == 1
    assert main(["compare", five.run_id, zero.run_id, "--store", str(store), "--mix-settings", "--n-boot",
                 "200"]) == 0


def test_a_spec_run_reads_its_setting_from_the_spec_as_the_recorded_scorer_says(tmp_path: Any) -> None:
    """The spec is the one copy: for settings both record, the spec's setting equals the recorded scorer's."""
    from proctor.log.runlog import read_manifest
    from proctor.log.setting import _recorded_setting

    _recorded(tmp_path, "first")
    _recorded(tmp_path, "first", "--mode", "logprob")
    for run in (tmp_path / "runs").iterdir():
        manifest = read_manifest(run)
        assert manifest.spec is not None and _run_setting(manifest) == _recorded_setting(manifest)
