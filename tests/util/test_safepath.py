"""Item 8 of issue 13: names from data never become paths unsafely; hasPart stays inside the dataset."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.data.formats.commoneval import read_commoneval
from proctor.util.errors import InputError
from proctor.util.safepath import is_inside, safe_component

DEMO = Path(__file__).parents[2] / "examples" / "questions" / "demo.json"


@pytest.mark.parametrize("name", ["../../x", "/abs/path", "..", ".", "", "a/../../b", "\x1b[2Jx", "C:\\win\\x"])
def test_safe_component_is_one_harmless_name(name: str) -> None:
    safe = safe_component(name)
    assert safe and "/" not in safe and "\\" not in safe and not safe.startswith(".") and ".." not in safe


def test_is_inside() -> None:
    assert is_inside("/data/ds", "part_000.jsonl")
    assert not is_inside("/data/ds", "../other.jsonl")
    assert not is_inside("/data/ds", "/etc/passwd")


@pytest.mark.parametrize("evil", ["../../x", "/abs/path"])
def test_questions_name_cannot_move_the_run_dir_out_of_out(tmp_path: Path, evil: str) -> None:
    data = json.loads(DEMO.read_text())
    data["name"] = evil
    a, b = tmp_path / "in" / "a.json", tmp_path / "in" / "b.json"
    a.parent.mkdir()
    a.write_text(json.dumps(data))
    b.write_text(json.dumps({**data, "name": "other"}))
    out = tmp_path / "deep" / "out"
    assert main(["run", str(a), str(b), "-m", "scripted:first", "-o", str(out), "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress", "--limit", "2"]) == 0
    runs_root = tmp_path / "runs"
    assert main(["run", str(a), "-m", "scripted:first", "--runs-root", str(runs_root), "--store",
                 str(tmp_path / "s.sqlite"), "--no-progress", "--limit", "2"]) == 0
    manifests = sorted(p.parent for p in tmp_path.rglob("manifest.json"))
    assert manifests and all(out in m.parents or runs_root in m.parents for m in manifests), manifests


@pytest.mark.parametrize("part", ["/etc/passwd", "../outside.jsonl"])
def test_has_part_must_stay_inside_the_dataset(tmp_path: Path, part: str) -> None:
    (tmp_path / "outside.jsonl").write_text('{"identifier": "t.1", "modality": "boolean", "prompt": "p", '
                                            '"response": "True"}\n')
    d = tmp_path / "ds"
    d.mkdir()
    (d / "ds.yaml").write_text(f"identifier: ds\nhasPart:\n  - {part}\n")
    with pytest.raises(InputError, match="must be a file inside the dataset directory"):
        read_commoneval(d)


def test_distinct_components_never_collide_nor_climb() -> None:
    """Issue 22 item 4: distinct names map to distinct, harmless components; equal names to equal ones."""
    from proctor.util.safepath import distinct_components

    names = ["a b", "a_b", "A_B", "..", ".", "", ".hidden", "x/../../y", "same", "same"]
    out = distinct_components(names)
    assert all(n and not n.startswith(".") and "/" not in n and ".." not in n for n in out)
    assert len({o.casefold() for o in out[:-1]}) == len(names) - 1 and out[-1] == out[-2]
    assert out[1] == "a_b" and distinct_components(["gpt-oss_latest"]) == ["gpt-oss_latest"]
