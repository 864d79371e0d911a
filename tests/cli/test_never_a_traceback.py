"""Whatever bytes a user hands proctor, the answer is `path:line: message` and exit 2 — never a traceback."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from proctor.cli import main

JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20))
JSON_VALUES = st.recursive(JSON_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
    st.sampled_from(["identifier", "modality", "prompt", "response", "choices", "difficulty", "taskPrompt",
                     "id", "question", "answer", "context", "queries", "expected", "text", "x"]), inner, max_size=6),
    max_leaves=12)


@contextmanager
def _fresh_dir(root: Path) -> Iterator[Path]:
    """A directory of its own per hypothesis example: files left by one example never change what the next reads."""
    with tempfile.TemporaryDirectory(dir=root) as d:
        yield Path(d)


def _validate(path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate", str(path)])
    captured = capsys.readouterr()
    return code, captured.err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300), suffix=st.sampled_from([".jsonl", ".json", ".yaml", ".txt"]))
def test_random_bytes(tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, suffix: str) -> None:
    with _fresh_dir(tmp_path) as d:
        path = d / f"input{suffix}"
        path.write_bytes(data)
        code, err = _validate(path, capsys)
    assert code in (0, 2)
    assert "Traceback" not in err
    if code == 2:
        assert str(path) in err


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(JSON_VALUES, min_size=1, max_size=4))
def test_random_json_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str], rows: list[object]) -> None:
    with _fresh_dir(tmp_path) as d:
        path = d / "items.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        code, err = _validate(path, capsys)
    assert code in (0, 2)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    if code == 2:  # every problem located in the file, then one summary line
        assert lines[-1].endswith("found in 1 file(s)"), lines[-1]
        assert lines[:-1] and all(line.startswith(f"error: {path}:") for line in lines[:-1]), lines


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=JSON_VALUES)
def test_random_json_documents(tmp_path: Path, capsys: pytest.CaptureFixture[str], doc: object) -> None:
    for name in ("questions.json", "demo_suite.json"):
        with _fresh_dir(tmp_path) as d:
            path = d / name
            path.write_text(json.dumps(doc))
            code, err = _validate(path, capsys)
        assert code in (0, 2)
        assert "Traceback" not in err


@pytest.mark.parametrize("flag", ["--base-url", "--judge-base-url"])
@pytest.mark.parametrize("url", ["http://[::1/v1", "http://localhost:99999/v1"])
def test_a_malformed_base_url_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, flag: str, url: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    demo = Path(__file__).parents[2] / "examples" / "items" / "demo.jsonl"  # open answers: a judge grades them
    args = ["run", str(demo), "--model", "openai:m", "--judge", "openai:j", flag, url, "-o", str(tmp_path / "run")]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "is not a valid URL" in err, err
    assert not (tmp_path / "run").exists()
