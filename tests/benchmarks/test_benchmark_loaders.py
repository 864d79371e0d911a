"""Every built-in loads from its synthetic upstream-schema fixture; hub failures are clear errors."""

from __future__ import annotations

import csv
import json
import shutil
import types
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from proctor.benchmarks import BUILTINS, load_dataset, load_task, select
from proctor.benchmarks import gpqa as gpqa_mod
from proctor.benchmarks import registry as benchmark_registry
from proctor.benchmarks.hub import HubSource, load_hub
from proctor.data.prompts import FIVE_SHOT, ItemPromptBuilder, UnknownPromptKind
from proctor.data.records import Item, ItemSet, Modality
from proctor.util.errors import DatasetAccessError, InputError, ProctorError

UP = Path(__file__).parents[1] / "fixtures" / "upstream"
MMLU_TEST = UP / "mmlu_pro" / "test-00000-of-00001.parquet"
MMLU_VAL = UP / "mmlu_pro" / "validation-00000-of-00001.parquet"
AIME = UP / "aime_2025" / "train.jsonl"
GPQA_COUNTS = {"gpqa-main": 7, "gpqa-diamond": 4, "gpqa-extended": 9, "gpqa-experts": 3}


def gpqa_file(name: str) -> Path:
    return UP / "gpqa" / f"{gpqa_mod.CONFIGS[name]}.csv"


def parquet_rows(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = pq.read_table(path).to_pylist()
    return rows


# --------------------------------------------------------------------------- MMLU-Pro


def test_mmlu_pro_from_parquet_counts_categories_and_provenance() -> None:
    task = load_task("mmlu-pro", data_file=MMLU_TEST)
    assert len(task.items) == 7
    assert sorted({it.category for it in task.items}) == ["computer science", "law", "math"]
    assert [it.identifier for it in task.items][:2] == ["mmlu-pro.100", "mmlu-pro.101"]
    assert task.source["source"] == "TIGER-Lab/MMLU-Pro" and task.source["split"] == "test"
    assert task.source["data_file"] == str(MMLU_TEST.resolve())
    assert task.source["data_file_sha256"].startswith("sha256:")
    assert task.source["fewshot"]["split"] == "validation"  # sibling validation file found
    assert task.prompts.kinds[0] == FIVE_SHOT
    for it in task.items:
        assert it.modality.is_choice and it.choices is not None
        assert "N/A" not in it.choices.values()
        assert it.response in it.choices


def test_mmlu_pro_drops_na_and_reletters_the_answer() -> None:
    ds = load_dataset("mmlu-pro", data_file=MMLU_TEST)
    by_id = {q.id: q for q in ds.questions}
    padded = next(q for q in ds.questions if q.category == "law")  # six options + four N/A upstream
    assert len(padded.choices) == 6
    upstream = {r["question_id"]: r for r in parquet_rows(MMLU_TEST)}
    assert (
        padded.choices[padded.answer] == upstream[padded.id]["options"][upstream[padded.id]["answer_index"]]
    )
    shifted = by_id[106]  # N/A at B, upstream answer D -> C after dropping it
    assert upstream[106]["answer"] == "D"
    assert shifted.answer == "C"
    assert shifted.choices["C"] == upstream[106]["options"][3]
    assert ds.prompts.keys() == {"five_shot", "tiger-api", "tiger-local", "lm-eval", "chain_of_thought", "zero_shot"}
    assert ds.categories == ["math", "law", "computer science"]


def test_mmlu_pro_directory_and_missing_validation(tmp_path: Path) -> None:
    assert len(load_task("mmlu-pro", data_file=UP / "mmlu_pro").items) == 7
    alone = tmp_path / "test.parquet"
    shutil.copy(MMLU_TEST, alone)
    task = load_task("mmlu-pro", data_file=alone)
    assert FIVE_SHOT not in task.prompts.kinds
    assert "fewshot" not in task.source
    with pytest.raises(UnknownPromptKind, match="five_shot"):
        task.prompts.messages(task.items[0], FIVE_SHOT)


def test_mmlu_pro_from_csv_with_list_cells(tmp_path: Path) -> None:
    rows = parquet_rows(MMLU_TEST)
    path = tmp_path / "test.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows:
            w.writerow({**r, "options": json.dumps(r["options"])})
    from_csv = load_task("mmlu-pro", data_file=path)
    from_parquet = load_task("mmlu-pro", data_file=MMLU_TEST)
    assert from_csv.content_hash == from_parquet.content_hash


def test_mmlu_pro_unscorable_rows_are_named_and_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    rows = parquet_rows(MMLU_TEST)
    rows[1]["answer"] = "J"  # disagrees with answer_index
    rows[3]["answer_index"], rows[3]["answer"] = 9, "J"
    rows[3]["options"][9] = "N/A"  # the correct option is N/A
    rows[4]["options"] = []  # nothing to choose from
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    task = load_task("mmlu-pro", data_file=path)
    assert len(task.items) == len(rows) - 3
    skipped = task.source["skipped_rows"]
    assert [m.split(": row: ")[0] for m in skipped] == [f"{path}:2", f"{path}:4", f"{path}:5"]
    assert "answer 'J' disagrees with answer_index" in skipped[0]
    assert "the correct option J is 'N/A'" in skipped[1] and "no options" in skipped[2]
    assert [r.getMessage() for r in caplog.records] == [f"skipped {m}" for m in skipped]


def test_mmlu_pro_with_no_usable_row_is_refused_with_every_problem(tmp_path: Path) -> None:
    rows = parquet_rows(MMLU_TEST)[:2]
    for r in rows:
        r["answer_index"] = 12
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(InputError) as e:
        load_task("mmlu-pro", data_file=path)
    assert [str(p).split(": row: ")[0] for p in e.value.problems] == [f"{path}:1", f"{path}:2"]


def test_mmlu_pro_one_and_two_option_rows_are_items(tmp_path: Path) -> None:
    """The real test split has five one-option and two two-option rows (N/A-padded or not): all are items."""
    rows = parquet_rows(MMLU_TEST)[:3]
    rows[0].update(options=["Only this"], answer="A", answer_index=0)
    rows[1].update(options=["N/A", "first", "N/A", "second"], answer="D", answer_index=3)
    rows[2].update(options=["lone", "N/A"], answer="A", answer_index=0)
    path = tmp_path / "test.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    task = load_task("mmlu-pro", data_file=path)
    assert [(it.modality, it.choices, it.response) for it in task.items] == [
        (Modality.CHOICE1, {"A": "Only this"}, "A"),
        (Modality.CHOICE2, {"A": "first", "B": "second"}, "B"),
        (Modality.CHOICE1, {"A": "lone"}, "A"),
    ]
    assert "skipped_rows" not in task.source


def test_missing_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "test.jsonl"
    path.write_text(json.dumps({"question_id": 1, "question": "q"}) + "\n")
    with pytest.raises(InputError, match="missing upstream column.*'options'"):
        load_task("mmlu-pro", data_file=path)


# --------------------------------------------------------------------------- AIME 2025


def test_aime_from_jsonl() -> None:
    task = load_task("aime-2025", data_file=AIME)
    assert len(task.items) == 30
    assert all(it.modality is Modality.SINGLE_VALUE and it.choices is None for it in task.items)
    assert {it.category for it in task.items} == {"Algebra", "Combinatorics", "Geometry", "Number Theory"}
    first = task.items[0]
    assert first.identifier == "aime-2025.1" and first.response == str((1 * 8**2) % 1000)
    two_types = next(it for it in task.items if len(it.tags) == 2)
    assert two_types.category == two_types.tags[0]
    assert task.source["source"] == "MathArena/aime_2025" and task.source["revision"] is None


def test_aime_parquet_equals_jsonl(tmp_path: Path) -> None:
    rows = [json.loads(line) for line in AIME.read_text().splitlines()]
    path = tmp_path / "train.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    assert (
        load_task("aime-2025", data_file=path).content_hash
        == load_task("aime-2025", data_file=AIME).content_hash
    )


def test_aime_answer_out_of_range(tmp_path: Path) -> None:
    path = tmp_path / "train.jsonl"
    path.write_text(
        json.dumps({"problem_idx": 1, "problem": "p", "answer": 1000, "problem_type": ["Algebra"]}) + "\n"
    )
    with pytest.raises(InputError, match=r":1: row: answer: 1000 is outside 0-999"):
        load_task("aime-2025", data_file=path)


# --------------------------------------------------------------------------- GPQA


@pytest.mark.parametrize("name", sorted(GPQA_COUNTS))
def test_gpqa_configs_from_csv(name: str) -> None:
    task = load_task(name, data_file=gpqa_file(name), seed=7)
    assert len(task.items) == GPQA_COUNTS[name]
    assert task.choice_order_seed == 7
    assert task.source["source"] == "Idavidrein/gpqa" and task.source["config"] == gpqa_mod.CONFIGS[name]
    expected_domains = ["Physics", "Chemistry", "Biology"][: GPQA_COUNTS[name]]
    assert list(dict.fromkeys(it.category for it in task.items)) == expected_domains
    with open(gpqa_file(name), newline="", encoding="utf-8") as f:
        upstream = list(csv.DictReader(f))
    for it, row in zip(task.items, upstream, strict=True):
        assert it.modality is Modality.CHOICE4 and it.choices is not None
        assert it.choices[it.best_answer] == row["Correct Answer"]  # the letter follows the shuffle
        order = it.metadata["choice_order"]
        assert sorted(order) == sorted(
            ["Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3"]
        )
        assert [it.choices[letter] for letter in "ABCD"] == [row[c] for c in order]
        assert it.metadata["choice_order_seed"] == 7
        assert it.subcategory == row["Subdomain"]
    assert "\n" in task.items[1].prompt  # multi-line CSV cell kept


def test_gpqa_shuffle_is_stable_seeded_and_order_independent(tmp_path: Path) -> None:
    name = "gpqa-extended"
    a = load_task(name, data_file=gpqa_file(name), seed=1)
    b = load_task(name, data_file=gpqa_file(name), seed=1)
    assert [it.choices for it in a.items] == [it.choices for it in b.items]
    letters = {load_task(name, data_file=gpqa_file(name), seed=s).items[0].best_answer for s in range(12)}
    assert len(letters) > 1  # the seed matters
    assert {it.best_answer for it in a.items} != {"A"}  # the correct answer is not always first
    # reversed rows: each question keeps its own order (per-question RNG from seed + Record ID)
    with open(gpqa_file(name), newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows, fields = list(reader), reader.fieldnames
    rev = tmp_path / "gpqa_extended.csv"
    with open(rev, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(fields or []))
        w.writeheader()
        w.writerows(reversed(rows))
    c = load_task(name, data_file=rev, seed=1)
    by_record = {it.metadata["question.original_id"]: it.choices for it in a.items}
    assert all(by_record[it.metadata["question.original_id"]] == it.choices for it in c.items)


def test_gpqa_choice_order_is_a_pure_function() -> None:
    assert gpqa_mod.choice_order(3, "recX") == gpqa_mod.choice_order(3, "recX")
    assert gpqa_mod.choice_order(3, "recX")[0] in {
        "Correct Answer",
        "Incorrect Answer 1",
        "Incorrect Answer 2",
        "Incorrect Answer 3",
    }


def test_gpqa_empty_answer_cell(tmp_path: Path) -> None:
    with open(gpqa_file("gpqa-diamond"), newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        rows, fields = list(reader), list(reader.fieldnames or [])
    rows[2]["Incorrect Answer 2"] = "  "
    path = tmp_path / "gpqa_diamond.csv"
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(InputError, match=r"gpqa_diamond.csv:\d+: Incorrect Answer 2: empty"):
        load_task("gpqa-diamond", data_file=path)


# --------------------------------------------------------------------------- hub access (never the network)


def test_offline_gpqa_says_how_to_get_access(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DatasetAccessError) as e:
        load_task("gpqa-diamond")
    msg = str(e.value)
    assert "offline" in msg and "accept its terms" in msg and "HF_TOKEN" in msg and "--data-file" in msg
    assert "Idavidrein/gpqa" in msg


def test_offline_mmlu_pro_suggests_data_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    with pytest.raises(DatasetAccessError, match="--data-file"):
        load_task("mmlu-pro")


class GatedRepoError(Exception):
    """Stands in for huggingface_hub's error of the same name (no HTTP response needed)."""


def _no_env_offline(monkeypatch: pytest.MonkeyPatch) -> None:
    for k in ("PROCTOR_OFFLINE", "HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_TOKEN"):
        monkeypatch.delenv(k, raising=False)


def test_refused_token_is_a_clear_message(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    _no_env_offline(monkeypatch)

    def refuse(self: Any, repo: str, **kw: Any) -> Any:
        raise GatedRepoError(f"Access to dataset {repo} is restricted. You must be authenticated.")

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", refuse)
    with pytest.raises(DatasetAccessError) as e:
        load_task("gpqa-main")
    msg = str(e.value)
    assert "access refused" in msg and "HF_TOKEN" in msg and "accept its terms" in msg
    assert e.value.__cause__ is None or e.value.__suppress_context__


def test_connection_failure_suggests_data_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub

    _no_env_offline(monkeypatch)

    def down(self: Any, repo: str, **kw: Any) -> Any:
        raise ConnectionError("Name or service not known")

    monkeypatch.setattr(huggingface_hub.HfApi, "dataset_info", down)
    with pytest.raises(DatasetAccessError, match=r"ConnectionError: Name or service not known.*--data-file"):
        load_hub(HubSource("MathArena/aime_2025", split="train"))


def test_hub_load_pins_and_records_the_revision(monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets
    import huggingface_hub

    _no_env_offline(monkeypatch)
    sha = "0123456789abcdef0123456789abcdef01234567"
    calls: list[dict[str, Any]] = []
    monkeypatch.setattr(
        huggingface_hub.HfApi, "dataset_info", lambda self, repo, **kw: types.SimpleNamespace(sha=sha)
    )
    rows = [json.loads(line) for line in AIME.read_text().splitlines()]

    def fake_load(repo: str, config: str | None = None, **kw: Any) -> datasets.Dataset:
        calls.append({"repo": repo, "config": config, **kw})
        return datasets.Dataset.from_list(rows)

    monkeypatch.setattr(datasets, "load_dataset", fake_load)
    task = load_task("aime-2025")
    assert task.source["revision"] == sha and "data_file" not in task.source
    assert calls == [
        {"repo": "MathArena/aime_2025", "config": None, "split": "train", "revision": sha, "token": None}
    ]
    assert len(task.items) == 30


# --------------------------------------------------------------------------- registry


def test_builtins_table() -> None:
    assert list(BUILTINS) == [
        "mmlu-pro",
        "aime-2025",
        "aime-2026",
        "hmmt-feb-2025",
        "hmmt-feb-2026",
        "math-500",
        "gpqa-main",
        "gpqa-diamond",
        "gpqa-extended",
        "gpqa-experts",
        "humaneval",
        "mbpp",
        "livecodebench",
        "ifeval",
        "bbh",
        "simpleqa-verified",
        "hle",
        *(f"bfcl-{c}" for c in ("simple", "multiple", "parallel", "parallel-multiple", "simple-java",
                                "simple-javascript", "live-simple", "live-multiple", "live-parallel",
                                "live-parallel-multiple", "irrelevance", "live-irrelevance", "live-relevance")),
    ]
    assert BUILTINS["hle"].source.gated and not BUILTINS["simpleqa-verified"].source.gated
    assert BUILTINS["humaneval"].size == 164 and BUILTINS["mbpp"].source.config == "sanitized"
    assert BUILTINS["mmlu-pro"].size == 12_032 and BUILTINS["aime-2025"].size == 30
    assert BUILTINS["gpqa-diamond"].source.config == "gpqa_diamond" and BUILTINS["gpqa-diamond"].source.gated


def test_limits_keep_the_first_per_category() -> None:
    task = load_task("mmlu-pro", data_file=MMLU_TEST, limit_per_category=1)
    assert [it.identifier for it in task.items] == ["mmlu-pro.100", "mmlu-pro.103", "mmlu-pro.105"]
    task = load_task("mmlu-pro", data_file=MMLU_TEST, limit_per_category=2, limit=3)
    assert [it.category for it in task.items] == ["math", "math", "law"]
    with pytest.raises(ProctorError, match="--limit must be at least 1"):
        select([], limit=0)


def test_five_shot_pool_ignores_limit() -> None:
    full = load_task("gpqa-extended", data_file=gpqa_file("gpqa-extended"))
    one = load_task("gpqa-extended", data_file=gpqa_file("gpqa-extended"), limit=1)
    pool = "five_shot_pool"
    assert one.prompts.messages(one.items[0], pool) == full.prompts.messages(full.items[0], pool)


def test_unknown_spec_and_data_file_misuse(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not a built-in benchmark"):
        load_task(str(tmp_path / "nope.jsonl"))
    with pytest.raises(ProctorError, match="--data-file applies to the built-in"):
        load_task(str(tmp_path), data_file=AIME)


def test_path_spec_uses_load_itemset_and_the_generic_builder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("{}\n")
    itemset = ItemSet(
        identifier="demo",
        taskPrompt="Answer carefully.",
        items=[
            Item(
                identifier=f"demo.{i}",
                modality="boolean",
                prompt=f"Is {i} even?",
                response=str(i % 2 == 0),
                category="parity" if i < 3 else "other",
            )
            for i in range(5)
        ],
    )
    monkeypatch.setattr(benchmark_registry, "load_itemset", lambda p: itemset)
    task = load_task(str(path), limit_per_category=2)
    assert [it.identifier for it in task.items] == ["demo.0", "demo.1", "demo.3", "demo.4"]
    assert isinstance(task.prompts, ItemPromptBuilder) and task.task_prompt == "Answer carefully."
    assert task.source["sha256"].startswith("sha256:")
    assert task.prompts.messages(task.items[0], "zero_shot")[0].content == "Answer carefully."


def test_datasets_command_json(capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.cli import main

    assert main(["datasets", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows] == [*BUILTINS, "arc-challenge", "gsm8k", "hellaswag", "mmlu",
                                               "winogrande"]  # + shipped specs
    assert rows[0] | {"description": ""} == {
        "origin": "built-in",
        "name": "mmlu-pro",
        "source": "TIGER-Lab/MMLU-Pro",
        "config": None,
        "split": "test",
        "size": 12032,
        "gated": False,
        "url": "https://huggingface.co/datasets/TIGER-Lab/MMLU-Pro",
        "description": "",
        "max_tokens": 4000,
        "answer_rules": {"five_shot": "tiger-lab-mmlu-pro", "tiger-api": "tiger-lab-mmlu-pro",
                         "tiger-local": "tiger-lab-mmlu-pro-local", "chain_of_thought": None, "zero_shot": None,
                         "lm-eval": "lm-eval-mmlu-pro"},
    }


def test_datasets_command_table(capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.cli import main

    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for name in BUILTINS:
        assert name in out
    assert "12,032" in out and "Idavidrein/gpqa" in out and "gated" in out
