"""CommonEval directories: YAML + items (single file or shards), round trips and bad layouts."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from formats_strategies import FAST, itemsets
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.errors import InputError
from proctor.formats.commoneval import read_commoneval, write_commoneval
from proctor.records import ItemSet

EXAMPLE = Path(__file__).parents[2] / "examples" / "commoneval"


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
        f"{yaml_path}: hasPart: required attribute is missing: add hasPart: "
        "['demo_000.jsonl', 'demo_001.jsonl', 'demo_002.jsonl']"]


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
