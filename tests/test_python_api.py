"""docs/python.md's examples run as a notebook runs them: inside a running event loop, top-level await."""

from __future__ import annotations

import ast
import os
import re
import types
from pathlib import Path

import pytest

import proctor
from proctor.log.runlog import read_manifest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "python.md"


def _blocks() -> list[str]:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.DOTALL)
    return [b for b in blocks if not b.startswith("# not run")]


async def test_the_examples_of_docs_python_run_inside_a_running_loop(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)  # the examples name files under examples/
    namespace: dict[str, object] = {"RUNS": str(tmp_path / "runs")}
    blocks = _blocks()
    assert len(blocks) >= 4
    for block in blocks:
        code = compile(block, str(DOC), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        result = eval(code, namespace)  # our own documentation, run as a notebook cell runs it
        if isinstance(result, types.CoroutineType):
            await result
    # the default run (resumed three times), the no-answer run and the suites' run (proctor.score)
    assert len(os.listdir(tmp_path / "runs")) == 3


def test_evaluate_takes_strings_and_run_options_take_str_paths(tmp_path: Path) -> None:
    """`evaluate("file.jsonl", "spec")` raised AttributeError; `RunOptions(runs_root="/tmp/x")` TypeError."""
    config = proctor.RunOptions(runs_root=str(tmp_path), store=str(tmp_path / "s.sqlite"), progress=False)
    log = proctor.evaluate(str(ROOT / "examples" / "items" / "multiple-choice.jsonl"), "scripted:first", config)
    assert log.path.parent == tmp_path
    manifest = read_manifest(log.path)
    assert manifest.spec is not None and manifest.run_id == manifest.spec.run_id()


def test_errors_name_the_option_as_python_spells_it(tmp_path: Path) -> None:
    """The library names fields (`truncated_as`); the command line shows the same error with its flag."""
    mc = ROOT / "examples" / "items" / "multiple-choice.jsonl"
    with pytest.raises(proctor.ProctorError, match="^truncated_as must be wrong or excluded, not 'nope'"):
        proctor.eval(mc, "scripted:first", truncated_as="nope", runs_root=tmp_path)
    with pytest.raises(proctor.ProctorError, match="^max_tokens: Input should be greater than or equal to 1"):
        proctor.eval(mc, "scripted:first", max_tokens=0, runs_root=tmp_path)
    with pytest.raises(proctor.ProctorError, match="no_such_option: no such option"):
        proctor.eval(mc, "scripted:first", no_such_option=1, runs_root=tmp_path)
    assert not tmp_path.joinpath("runs").exists() and not any(tmp_path.iterdir())


def test_eval_spec_gives_the_id_the_run_gets(tmp_path: Path) -> None:
    """#41.22: `eval_spec(...).run_id()` hashed the spec before the benchmark's defaults (prompt kind, answer rule,
    content hash), so it was never the id of the run the same call makes."""
    mc = ROOT / "examples" / "items" / "multiple-choice.jsonl"
    spec = proctor.eval_spec(mc, "scripted:first", no_answer="guess")
    assert spec.resolved and spec.dataset.content_hash is not None
    log = proctor.eval(mc, "scripted:first", runs_root=tmp_path, store=tmp_path / "s.sqlite", no_answer="guess")
    assert log.manifest.run_id == spec.run_id() and log.path.name.endswith(spec.run_id())
    assert not proctor.eval_spec(mc, "scripted:first", resolved=False).resolved  # as given, nothing loaded
