"""#41 item 2: the few-shot examples a run shows are in its run id (`dataset.fewshot_hash`), so a changed example
(MMLU-Pro's validation rows, GPQA's chain_of_thought_examples.json, a spec pool's texts) is a new run, never a
resume that prints the old numbers. Zero-shot ids do not change, and run directories written before (by main
dc99ff5's own code: tests/fixtures/fewshot_legacy) are still found and resumed under their own ids."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from proctor.cli import main
from proctor.core.spec import DatasetRef, ModelSpec, RunSpec, ScorerSpec
from proctor.metrics.results import read_run
from proctor.run.resolve import resolve

FIXTURE = Path(__file__).parents[1] / "fixtures" / "fewshot_legacy"
ITEMS = Path(__file__).parents[2] / "examples" / "items" / "multiple-choice.jsonl"
QUIZ = Path(__file__).parents[1] / "fixtures" / "benchmarks"
QUIET = ["--no-history", "--no-cache", "--no-progress"]


def _commands(data: Path) -> dict[str, list[str]]:
    """The commands that wrote the fixture's runs (its README), reading the data at `data`."""
    return {
        "capitals": ["run", str(data / "capitals.yaml"), "--model", "scripted:random"],
        "mmlu-pro": ["run", "mmlu-pro", "--data-file", str(data / "mmlu_pro"), "--model", "scripted:first"],
        "gpqa-diamond": ["run", "gpqa-diamond", "--data-file", str(data / "gpqa" / "gpqa_diamond.csv"), "--prompt",
                         "chain_of_thought", "--limit", "4", "--model", "scripted:first"],
    }


LEGACY_IDS = {"capitals": "03770aae0db8", "mmlu-pro": "ebb5381bf361", "gpqa-diamond": "13ecd1b28da8"}
ZERO_SHOT_ID = "e3991bd3bfad"  # capitals --prompt zero_shot at dc99ff5


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    shutil.copytree(FIXTURE / "data", tmp_path / "data")
    shutil.copytree(FIXTURE / "runs", tmp_path / "runs")
    return tmp_path / "data", tmp_path / "runs"


def _legacy_dir(runs: Path, name: str) -> Path:
    (found,) = runs.glob(f"{name}__*__{LEGACY_IDS[name]}")
    return found


def _id(name: str, data_file: Path | None = None, kind: str | None = None, model: str = "scripted:first") -> RunSpec:
    spec = RunSpec(dataset=DatasetRef(name=name, data_file=str(data_file) if data_file else None),
                   model=ModelSpec(spec=model), scorer=ScorerSpec(prompt_kind=kind))
    return resolve(spec)


# ---------------------------------------------------------------- a changed example is another run


def _edit_mmlu_pro(data: Path) -> None:
    path = data / "mmlu_pro" / "validation-00000-of-00001.parquet"
    table = pq.read_table(path)
    cot = table.column("cot_content").to_pylist()
    cot[0] = cot[0] + " (edited)"
    pq.write_table(table.set_column(table.schema.get_field_index("cot_content"), "cot_content", pa.array(cot)), path)


def _edit_gpqa(data: Path) -> None:
    path = data / "gpqa" / "chain_of_thought_examples.json"
    examples = json.loads(path.read_text())
    examples["questions"][1]["explanation"] = "A different made-up rule."
    path.write_text(json.dumps(examples))


def _edit_quiz(data: Path) -> None:
    """An option's text in the pool (the five-shot template shows the options; the pool digest did not)."""
    path = data / "quiz" / "shots.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["A"] = "an edited option"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _edit_pool(data: Path) -> None:
    """An option's text in a `--fewshot-from` pool of items."""
    path = data / "pool.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    rows[0]["choices"]["A"] = "an edited option"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _items_with_pool(data: Path) -> RunSpec:
    spec = RunSpec(dataset=DatasetRef(name=str(data / "items.jsonl"), fewshot_from=str(data / "pool.jsonl")),
                   model=ModelSpec(spec="scripted:first"), scorer=ScorerSpec(shots=2))
    return resolve(spec)


@pytest.mark.parametrize("case", ["mmlu-pro", "gpqa-diamond", "house-quiz", "items"])
def test_a_changed_fewshot_example_changes_the_run_id(case: str, tmp_path: Path) -> None:
    data, _ = _copy(tmp_path)
    shutil.copytree(QUIZ, data / "quiz-spec")
    shutil.copy(ITEMS, data / "items.jsonl")
    shutil.copy(ITEMS, data / "pool.jsonl")
    specs = {"mmlu-pro": (lambda: _id("mmlu-pro", data / "mmlu_pro"), _edit_mmlu_pro),
             "gpqa-diamond": (lambda: _id("gpqa-diamond", data / "gpqa" / "gpqa_diamond.csv", "chain_of_thought"),
                              _edit_gpqa),
             "house-quiz": (lambda: _id(str(data / "quiz-spec" / "quiz.yaml")),
                            lambda d: _edit_quiz(d / "quiz-spec")),
             "items": (lambda: _items_with_pool(data), _edit_pool)}
    make, edit = specs[case]
    before = make()
    edit(data)
    after = make()
    assert before.dataset.content_hash == after.dataset.content_hash  # the items asked are the same
    assert before.run_id() != after.run_id()  # main dc99ff5: the same id, so the same command resumed the old run
    assert before.dataset.fewshot_hash is not None and before.dataset.fewshot_hash != after.dataset.fewshot_hash


def test_zero_shot_run_ids_do_not_change(tmp_path: Path) -> None:
    data, _ = _copy(tmp_path)
    zero = _id(str(data / "capitals.yaml"), kind="zero_shot", model="scripted:random")
    assert zero.dataset.fewshot_hash is None and zero.run_id() == ZERO_SHOT_ID
    for name, file, kind in (("mmlu-pro", data / "mmlu_pro", "chain_of_thought"),
                             ("mmlu-pro", data / "mmlu_pro", "zero_shot"),
                             ("gpqa-diamond", data / "gpqa" / "gpqa_diamond.csv", "zero_shot")):
        spec = _id(name, file, kind)
        assert spec.dataset.fewshot_hash is None and spec.legacy_run_id() is None, (name, kind)


def test_the_hash_follows_the_examples_shown_not_the_examples_file(tmp_path: Path) -> None:
    """GPQA's five_shot shows the examples without their explanations: an explanation edited is the same run."""
    data, _ = _copy(tmp_path)
    file = data / "gpqa" / "gpqa_diamond.csv"
    cot, five = _id("gpqa-diamond", file, "chain_of_thought"), _id("gpqa-diamond", file, "five_shot")
    _edit_gpqa(data)
    assert _id("gpqa-diamond", file, "chain_of_thought").run_id() != cot.run_id()
    assert _id("gpqa-diamond", file, "five_shot").run_id() == five.run_id()


# ---------------------------------------------------------------- run directories written before: their own ids


@pytest.mark.parametrize("name", list(LEGACY_IDS))
def test_a_legacy_fewshot_run_resumes_under_its_own_id(name: str, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    data, runs = _copy(tmp_path)
    run = _legacy_dir(runs, name)
    lines = (run / "samples.jsonl").read_text().splitlines(keepends=True)
    (run / "samples.jsonl").write_text("".join(lines[: len(lines) // 2]))
    (run / "results.json").unlink()
    capsys.readouterr()
    assert main([*_commands(data)[name], "--runs-root", str(runs), *QUIET]) == 0
    assert f"resuming {run}: {len(lines) // 2}/{len(lines)} done" in capsys.readouterr().err
    log = read_run(run)
    assert log.manifest.run_id == LEGACY_IDS[name] and len(log.samples) == len(lines)
    assert sorted(p.name for p in runs.iterdir()) == sorted(p.name for p in (FIXTURE / "runs").iterdir())
    # and again: the manifest now holds the spec with its few-shot hash, under the old id
    assert main([*_commands(data)[name], "--runs-root", str(runs), *QUIET]) == 0
    assert f"resuming {run}: {len(lines)}/{len(lines)} done, 0 to ask" in capsys.readouterr().err
    assert read_run(run).manifest.run_id == LEGACY_IDS[name]


def test_a_legacy_run_directory_given_with_o_resumes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data, runs = _copy(tmp_path)
    run = _legacy_dir(runs, "capitals")
    capsys.readouterr()
    assert main([*_commands(data)["capitals"], "-o", str(run), *QUIET]) == 0
    assert f"resuming {run}: 8/8 done, 0 to ask" in capsys.readouterr().err
    assert read_run(run).manifest.run_id == LEGACY_IDS["capitals"]


@pytest.mark.parametrize("name,edit", [("mmlu-pro", _edit_mmlu_pro), ("gpqa-diamond", _edit_gpqa)])
def test_a_legacy_run_whose_examples_changed_is_not_resumed(name: str, edit: object, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's case: after the examples change, the same command asks again in a new directory."""
    data, runs = _copy(tmp_path)
    old = _legacy_dir(runs, name)
    edit(data)  # type: ignore[operator]
    capsys.readouterr()
    assert main([*_commands(data)[name], "--runs-root", str(runs), *QUIET]) == 0
    err = capsys.readouterr().err
    assert "resuming" not in err and "0 to ask" not in err
    (new,) = [p for p in runs.glob(f"{name}__*") if p != old]
    assert read_run(new).manifest.run_id != LEGACY_IDS[name]
    assert (old / "manifest.json").read_bytes() == (FIXTURE / "runs" / old.name / "manifest.json").read_bytes()
