"""Items 10 and 11 of issue 13: YAML bombs, deep documents, huge integers, endless and special files are
refused with `path:line: message`, never a traceback or a runaway process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.errors import InputError, Problem
from proctor.limits import yaml_load
from proctor.textio import iter_jsonl, load_json, read_text

BILLION_LAUGHS = "\n".join(
    ["a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    + [f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
)


def test_billion_laughs_is_refused_quickly() -> None:
    t0 = time.monotonic()
    with pytest.raises(InputError, match="expands to more than"):
        yaml_load(BILLION_LAUGHS, "bomb.yaml")
    assert time.monotonic() - t0 < 5


def test_self_alias_and_deep_yaml_are_refused() -> None:
    with pytest.raises(InputError, match="refers to itself"):
        yaml_load("a: &a\n  b: *a\n", "self.yaml")
    with pytest.raises(InputError, match="nested"):
        yaml_load("[" * 20000 + "]" * 20000, "deep.yaml")


def test_ordinary_yaml_with_aliases_loads() -> None:
    assert yaml_load("base: &b {x: 1}\nother: *b\n", "ok.yaml") == {"base": {"x": 1}, "other": {"x": 1}}


def test_commoneval_yaml_bomb_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = tmp_path / "ds"
    d.mkdir()
    (d / "ds.yaml").write_text("identifier: ds\n" + BILLION_LAUGHS.replace("a: &a", "x: &a", 1) + "\n")
    (d / "ds.jsonl").write_text('{"identifier": "t.1", "modality": "boolean", "prompt": "p", "response": "True"}\n')
    assert main(["validate", str(d)]) == 2
    err = capsys.readouterr().err
    assert "ds.yaml:" in err and "Traceback" not in err


@pytest.mark.parametrize(("text", "message"), [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ("1" * 5000, "4300 digits"),
])
def test_json_depth_and_huge_integers(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "x.json"
    f.write_text(text)
    with pytest.raises(InputError, match=message):
        load_json(f)
    jl = tmp_path / "x.jsonl"
    jl.write_text('{"a": 1}\n' + text + "\n")
    problems: list[Problem] = []
    assert len(list(iter_jsonl(jl, problems))) == 1
    assert problems and problems[0].line == 2 and message.split()[0] in problems[0].message


def test_special_files_are_refused() -> None:
    with pytest.raises(InputError, match="not a regular file"):
        read_text("/dev/zero")


def test_file_size_and_line_length_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    f = tmp_path / "x.jsonl"
    f.write_text(json.dumps({"a": "y" * 500}) + "\n")
    monkeypatch.setenv("PROCTOR_MAX_LINE_BYTES", "100")
    problems: list[Problem] = []
    assert list(iter_jsonl(f, problems)) == [] and "longer than 100" in problems[0].message
    monkeypatch.setenv("PROCTOR_MAX_FILE_BYTES", "100")
    with pytest.raises(InputError, match="over the 100-byte limit"):
        read_text(f)


@pytest.mark.parametrize("args", [["run", "/dev/zero", "-m", "scripted:first"], ["validate", "/dev/zero"],
                                  ["run", "mmlu-pro", "--data-file", "/dev/zero", "-m", "scripted:first"]])
def test_dev_zero_through_the_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "/dev/zero" in err and "Traceback" not in err
