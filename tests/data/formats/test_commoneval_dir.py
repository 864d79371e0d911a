"""CommonEval directories: YAML + items (single file or shards), round trips and bad layouts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from formats_strategies import FAST, itemsets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.cli import main
from proctor.data.formats.commoneval import dataset_warnings, read_commoneval, write_commoneval
from proctor.data.records import ItemSet
from proctor.util.errors import InputError

EXAMPLE = Path(__file__).parents[3] / "examples" / "commoneval"


@settings(**FAST, suppress_health_check=[HealthCheck.too_slow])
@given(itemsets(), st.none() | st.integers(1, 4))
def test_round_trip_and_idempotent(itemset: ItemSet, shard_size: int | None) -> None:
    with tempfile.TemporaryDirectory() as d:
        first, second = Path(d, "one"), Path(d, "two")
        write_commoneval(first, itemset, shard_size)
        back = read_commoneval(first)
        assert back == itemset
        write_commoneval(second, back, shard_size)
        assert {p.name: p.read_bytes() for p in first.iterdir()} == {p.name: p.read_bytes() for p in second.iterdir()}


def test_bundled_example_has_two_shards_and_dataset_task_prompt() -> None:
    ds = read_commoneval(EXAMPLE)
    assert sorted(p.name for p in EXAMPLE.glob("*.jsonl")) == ["demo_000.jsonl", "demo_001.jsonl"]
    assert len(ds.items) == 12
    assert ds.task_prompt and ds.metadata["license"] == "CC-BY-4.0"
    assert read_commoneval(EXAMPLE / "demo.yaml") == ds
    first = ds.items[0]
    assert ds.task_prompt_for(first) == ds.task_prompt


def test_missing_has_part_is_an_error_naming_the_files_found(tmp_path: Path) -> None:
    ds = read_commoneval(EXAMPLE)
    write_commoneval(tmp_path / "d", ds, shard_size=5)
    yaml_path = tmp_path / "d" / "demo.yaml"
    yaml_path.write_text("\n".join(l for l in yaml_path.read_text().splitlines()
                                   if l != "hasPart:" and not l.startswith("- demo_")) + "\n")
    with pytest.raises(InputError) as info:
        read_commoneval(tmp_path / "d")
    assert [str(p) for p in info.value.problems] == [
        (f"{yaml_path}: hasPart: required attribute is missing: add hasPart: "
         "['demo_000.jsonl', 'demo_001.jsonl', 'demo_002.jsonl']")]


def test_rewrite_removes_stale_shards(tmp_path: Path) -> None:
    ds = read_commoneval(EXAMPLE)
    write_commoneval(tmp_path, ds, shard_size=3)
    assert len(list(tmp_path.glob("demo_*.jsonl"))) == 4
    write_commoneval(tmp_path, ds, shard_size=100)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.jsonl", "demo.yaml"]
    assert read_commoneval(tmp_path) == ds


def test_dir_without_yaml(tmp_path: Path) -> None:
    (tmp_path / "demo.jsonl").write_text((EXAMPLE / "demo_000.jsonl").read_text())
    with pytest.raises(InputError, match="no <id>.yaml"):
        read_commoneval(tmp_path)


def test_problems_across_shards_are_all_reported(tmp_path: Path) -> None:
    ds = read_commoneval(EXAMPLE)
    write_commoneval(tmp_path, ds, shard_size=6)
    shard0, shard1 = tmp_path / "demo_000.jsonl", tmp_path / "demo_001.jsonl"
    lines = shard1.read_text().splitlines()
    row = json.loads(lines[1])
    lines[1] = json.dumps({**row, "identifier": "GEO.1"})
    lines[2] = "{oops"
    shard1.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as info:
        read_commoneval(tmp_path)
    msgs = [str(p) for p in info.value.problems]
    assert msgs[0].startswith(f"{shard1}:3: malformed JSON")
    assert msgs[1] == (f"{shard1}:2: identifier: 'GEO.1' repeats 'geo.1' from {shard0}:1"
                       " (identifiers are matched case-insensitively)")


def test_missing_part_and_identifier_mismatch(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("identifier: y\nhasPart: [x_000.jsonl]\n")
    with pytest.raises(InputError) as info:
        read_commoneval(tmp_path)
    assert [p.field for p in info.value.problems] == [
        "identifier", "created", "creator", "description", "source", "subject", "hasPart", "hasPart"]
    assert info.value.problems[-2].message.startswith("['x_000.jsonl'] should be ['x.jsonl']")


def test_malformed_yaml_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "x.yaml").write_text("identifier: x\ntitle: [unclosed\n")
    with pytest.raises(InputError, match=r"x.yaml:\d+: malformed YAML"):
        read_commoneval(tmp_path)


def test_failed_write_leaves_no_directory(tmp_path: Path) -> None:
    ds = read_commoneval(EXAMPLE)
    bad = ds.model_copy(update={"metadata": {"hasPart": "clash"}})
    with pytest.raises(InputError, match="clash"):
        write_commoneval(tmp_path / "out", bad)
    assert not (tmp_path / "out").exists()


GOOD_YAML = ("identifier: ds\ncreated: 2025-01-02\ncreator: Biblica\ndescription: d\nsource: s\nsubject: {subject}\n"
             "language: eng\nlicense: CC-BY-4.0\nhasPart: [ds.jsonl]\n")
ITEM = '{"identifier": "q1", "modality": "boolean", "prompt": "Yes?", "response": true}\n'


def _dataset(d: Path, yaml_text: str, ident: str = "ds") -> Path:
    d.mkdir(parents=True, exist_ok=True)
    (d / f"{ident}.yaml").write_text(yaml_text)
    (d / f"{ident}.jsonl").write_text(ITEM)
    return d


def test_identifier_only_yaml_lists_every_missing_required_attribute(tmp_path: Path) -> None:
    _dataset(tmp_path, "identifier: ds\n")
    with pytest.raises(InputError) as info:
        read_commoneval(tmp_path)
    assert [p.field for p in info.value.problems] == ["created", "creator", "description", "source", "subject",
                                                      "hasPart"]
    assert "add hasPart: ['ds.jsonl']" in str(info.value)


@pytest.mark.parametrize(("extra", "field", "needle"), [
    ("datePublished: 2024-12-31\n", "datePublished", "is before created (2025-01-02)"),
    ("datePublished: 2099-01-01\n", "datePublished", "2099-01-01 is in the future"),
    ("datePublished: soon\n", "datePublished", "'soon' is not a date"),
])
def test_dates_are_checked(tmp_path: Path, extra: str, field: str, needle: str) -> None:
    _dataset(tmp_path, GOOD_YAML.format(subject="x") + extra)
    with pytest.raises(InputError) as info:
        read_commoneval(tmp_path)
    [problem] = info.value.problems
    assert problem.field == field and needle in problem.message


def test_created_in_the_future_is_refused(tmp_path: Path) -> None:
    _dataset(tmp_path, GOOD_YAML.format(subject="x").replace("2025-01-02", "2099-01-01"))
    with pytest.raises(InputError, match="created: 2099-01-01 is in the future"):
        read_commoneval(tmp_path)


def test_attribute_names_match_case_insensitively_and_unknown_ones_are_kept(tmp_path: Path) -> None:
    text = GOOD_YAML.format(subject="x") + "TaskPrompt: Answer True or False.\nTITLE: Big\nTitle: Bigger\nflavour: 3\n"
    _dataset(tmp_path, text)
    ds = read_commoneval(tmp_path)
    assert ds.task_prompt == "Answer True or False." and ds.name == "Bigger" and ds.metadata["flavour"] == 3
    [warning] = dataset_warnings(ds)
    assert warning.field == "title" and "'Title' and 'TITLE' are one attribute" in warning.message
    out = tmp_path / "copy"
    write_commoneval(out, ds)
    assert (out / "ds.yaml").read_text() == text  # unchanged: written back as read


def test_missing_language_and_license_are_warnings(tmp_path: Path) -> None:
    _dataset(tmp_path, GOOD_YAML.format(subject="x").replace("language: eng\nlicense: CC-BY-4.0\n", ""))
    assert [w.field for w in dataset_warnings(read_commoneval(tmp_path))] == ["language", "license"]


def test_stats_over_a_folder_of_datasets_groups_by_subject(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    for name, subject, n in (("a1", "theology", 1), ("a2", "theology", 4), ("b1", "geography", 1),
                             ("c1", "history", 1)):
        d = tmp_path / name
        _dataset(d, GOOD_YAML.format(subject=subject).replace("ds", name), ident=name)
        (d / f"{name}.jsonl").write_text("".join(ITEM.replace("q1", f"q{i}") for i in range(n)))
    assert main(["stats", str(tmp_path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["datasets"] == 4 and data["total"] == 7
    assert data["subjects"]["by_subject"] == {
        "theology": {"datasets": ["a1", "a2"], "items": 5},
        "geography": {"datasets": ["b1"], "items": 1},
        "history": {"datasets": ["c1"], "items": 1},
    }
    assert [(f["subject"], f["kind"]) for f in data["subjects"]["flags"]] == [
        ("theology", "over"), ("geography", "under"), ("history", "under")]
    assert main(["stats", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("4 datasets, 7 items\nsubjects:\n") and "over-represented subject: theology" in text


def test_written_files_and_directories_get_the_usual_permissions(tmp_path: Path) -> None:
    import os

    old = os.umask(0o022)
    try:
        write_commoneval(tmp_path / "new", read_commoneval(EXAMPLE))
        write_commoneval(tmp_path / "new", read_commoneval(EXAMPLE), shard_size=100)  # into an existing dir
    finally:
        os.umask(old)
    assert (tmp_path / "new").stat().st_mode & 0o777 == 0o755
    assert {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "new").iterdir()} == {
        "demo.yaml": 0o644, "demo.jsonl": 0o644}


def test_validate_a_folder_of_datasets_checks_each(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _dataset(tmp_path / "a1", GOOD_YAML.format(subject="x").replace("ds", "a1"), ident="a1")
    _dataset(tmp_path / "b1", "identifier: b1\n", ident="b1")
    assert main(["validate", str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == f"OK {tmp_path / 'a1' / 'a1.yaml'}: commoneval, 1 items\n"
    assert f"{tmp_path / 'b1' / 'b1.yaml'}: created: required attribute is missing" in err
