"""Items 10 and 11 of issue 13: YAML bombs, deep documents, huge integers, endless and special files are
refused with `path:line: message`, never a traceback or a runaway process."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.util.errors import InputError, Problem
from proctor.util.limits import MAX_JSON_DEPTH, json_depth_exceeds, yaml_load
from proctor.util.textio import iter_jsonl, load_json, read_text

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
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 200"),
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


@pytest.mark.parametrize("depth", [201, 5000, 200_000])
@pytest.mark.parametrize("shape", ["[{}]", '{"a": {}}', "[1, {}]"])
def test_json_nesting_past_the_limit_is_refused_before_parsing(depth: int, shape: str) -> None:
    """Issue 22 item 12: the depth is found without recursion, whatever the shape."""
    opened, closed = shape.split("{}")
    text = opened * depth + "0" + closed * depth
    assert json_depth_exceeds(text)
    assert not json_depth_exceeds(opened * MAX_JSON_DEPTH + "0" + closed * MAX_JSON_DEPTH)
    assert not json_depth_exceeds(json.dumps([{"q": "[[[[" * 300, "o": [[1], {"a": [2]}]}] * 500))


@pytest.mark.parametrize("command", [["validate"], ["stats"], ["convert", "--to", "items", "-o", "OUT"],
                                     ["run", "--model", "scripted:first", "-o", "OUT"]])
@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_deep_data_files_through_every_command(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               command: list[str], suffix: str) -> None:
    """A JSON-array (or JSONL) data file nested 200k deep: one clear error, exit 2, nothing written."""
    data = tmp_path / f"deep{suffix}"
    row = '{"question": "q", "choices": ["a", "b"], "answer": "A", "meta": ' + "[" * 200_000 + "]" * 200_000 + "}"
    data.write_text(f"[{row}]" if suffix == ".json" else row + "\n")
    out = tmp_path / "out"
    argv = [command[0], str(data), *(str(out) if a == "OUT" else a for a in command[1:])]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "nested deeper than 200" in err and "Traceback" not in err and str(data) in err
    assert not out.exists()


def test_deep_data_file_for_a_builtin_benchmark(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "test.json"
    data.write_text("[" * 200_000 + "]" * 200_000)
    for argv in (["stats", "mmlu-pro"], ["run", "mmlu-pro", "--model", "scripted:first", "-o", str(tmp_path / "o")]):
        assert main([*argv, "--data-file", str(data)]) == 2
        assert "nested deeper than 200" in capsys.readouterr().err


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


def test_reading_a_small_file_allocates_what_it_holds(tmp_path: Path) -> None:
    """`read(limit + 1)` allocated the whole 4 GiB limit up front: under a 2 GiB address-space limit every
    input file was a MemoryError (found running the hostile suite under `prlimit --as`)."""
    import subprocess
    import sys

    f = tmp_path / "x.jsonl"
    f.write_text('{"a": 1}\n')
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)); "
            f"from proctor.util.textio import read_text; assert read_text({str(f)!r}) == '{{\"a\": 1}}\\n'")
    import os

    import proctor

    env = {**os.environ, "PYTHONPATH": str(Path(proctor.__file__).resolve().parents[1])}
    res = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60,
                         env=env)
    assert res.returncode == 0, res.stderr


def test_yaml_with_a_control_character_is_malformed_not_a_traceback(tmp_path: Path) -> None:
    """PyYAML's reader refuses some characters when the loader is built, before any parsing."""
    with pytest.raises(InputError, match=r"x\.yaml.*malformed YAML: .*special characters"):
        yaml_load("\x01", tmp_path / "x.yaml")



@pytest.mark.parametrize("name", ["spec.yaml", "config.yaml"])
def test_yaml_integer_past_pythons_digit_limit_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           name: str) -> None:
    """PyYAML builds ints with int(), which refuses more than 4,300 digits: refused at its line, never raised."""
    path = tmp_path / name
    path.write_text("name: big\nlimit: " + "9" * 5000 + "\n")
    with pytest.raises(InputError, match=r"spec\.yaml:2: YAML integer of 5,000 characters|config\.yaml:2"):
        yaml_load(path.read_text(), path)
    args = ["validate", str(path)] if name == "spec.yaml" else ["run", "--config", str(path)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"{path}:2: YAML integer of 5,000 characters" in err and "Traceback" not in err
