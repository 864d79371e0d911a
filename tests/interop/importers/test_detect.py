"""`proctor.interop.importers`: which harness wrote a file, and what a folder holds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from import_sources import inspect_log

from proctor.interop.importers import ImportOptions, detect, expand, is_llmwc_results, read_all
from proctor.util.errors import InputError


def test_each_harness_is_recognised(lmeval_results: Path, inspect_eval: Path) -> None:
    assert detect(lmeval_results) == "lm-eval"
    assert detect(inspect_eval) == "inspect"


def test_an_inspect_log_written_as_json_is_recognised(items_file: Path, tmp_path: Path) -> None:
    path = inspect_log(items_file, tmp_path / "logs", wrong={"demo.2"}, epochs=1, log_format="json")
    assert path.suffix == ".json" and detect(path) == "inspect"
    (run,) = read_all([path], ImportOptions())
    assert [s.item_id for s in run.samples if s.score == 0.0] == ["demo.2"]


def test_a_folder_is_the_results_and_logs_under_it(lmeval_root: Path, inspect_eval: Path, tmp_path: Path) -> None:
    found = expand([lmeval_root, inspect_eval.parent])
    assert [p.name.startswith("results_") for p in found].count(True) == 2 and inspect_eval in found
    runs = read_all([lmeval_root, inspect_eval], ImportOptions())
    assert sorted(r.manifest.imported_from.task for r in runs) == ["demo_gen", "demo_mc", "demo_mc"]


def test_a_file_given_twice_is_one_run(lmeval_results: Path) -> None:
    assert len(read_all([lmeval_results, lmeval_results.parent], ImportOptions())) == 1


def test_an_llmwc_results_directory_is_told_apart(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "run.json").write_text("{}")
    assert is_llmwc_results(tmp_path / "results") and not is_llmwc_results(tmp_path)


def test_a_json_file_of_neither_harness_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "results_x.json"
    path.write_text(json.dumps({"results": {}, "configs": "no"}))
    with pytest.raises(InputError, match="neither an lm-eval results file"):
        detect(path)
