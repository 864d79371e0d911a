"""proctor.benchmarks.bfcl: BFCL's files (built here in their exact schema, never copied), the prompt bfcl-eval
sends a prompting model, the refusals, and `proctor run` end to end with replayed replies."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest
from benchmarks.bfcl_rows import AREA, WEATHER, fn, write

from proctor.benchmarks import bfcl, load_task
from proctor.cli import main
from proctor.models.scripted import prompt_hash

HAS_ORACLE = all(importlib.util.find_spec(m) for m in ("bfcl_eval", "tree_sitter", "tree_sitter_java",
                                                        "tree_sitter_javascript"))
needs_oracle = pytest.mark.skipif(not HAS_ORACLE, reason="bfcl-eval (the oracle) is not installed: make setup-dev "
                                  "installs it --no-deps with tree-sitter")
HAS_TREE_SITTER = all(importlib.util.find_spec(m) for m in ("tree_sitter", "tree_sitter_java"))


def simple_rows() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    questions = [{"id": f"simple_python_{i}", "question": [[{"role": "user", "content": f"Area for base {i}?"}]],
                  "function": [AREA]} for i in range(3)]
    questions.append({"id": "simple_python_3", "question": [[{"role": "system", "content": "Be brief."},
                                                             {"role": "user", "content": "Weather in Oslo?"}]],
                      "function": [WEATHER]})
    answers = [{"id": f"simple_python_{i}", "ground_truth": [{"geo.area": {"base": [i], "unit": ["m", ""]}}]}
               for i in range(3)]
    answers.append({"id": "simple_python_3", "ground_truth": [{"weather": {"city": ["Oslo"]}}]})
    return questions, answers


def test_items_keep_functions_and_possible_answers(tmp_path: Path) -> None:
    path = write(tmp_path, "simple_python", *simple_rows())
    task = load_task("bfcl-simple", data_file=path)
    assert [it.identifier for it in task.items][:2] == ["bfcl-simple.simple_python_0", "bfcl-simple.simple_python_1"]
    item = task.items[3]
    assert item.category == "simple_python" and item.prompt == "Weather in Oslo?"
    assert item.metadata["ground_truth"] == [{"weather": {"city": ["Oslo"]}}]
    assert task.source["possible_answer_sha256"].startswith("sha256:")


def test_the_prompt_is_bfcl_evals_system_prompt_then_the_turn(tmp_path: Path) -> None:
    task = load_task("bfcl-simple", data_file=write(tmp_path, "simple_python", *simple_rows()))
    first = task.prompts.messages(task.items[0], bfcl.PROMPTING)
    assert [m.role for m in first] == ["system", "user"] and first[1].content == "Area for base 0?"
    hinted = copy.deepcopy(AREA)
    hinted["description"] += " Note that the provided function is in Python 3 syntax."
    assert first[0].content.endswith(f"in json format that you can invoke.\n{json.dumps([hinted], indent=4)}\n")
    assert first[0].content.startswith("You are an expert in composing functions.You are given a question")
    merged = task.prompts.messages(task.items[3], bfcl.PROMPTING)  # the item's own system message comes after
    assert [m.role for m in merged] == ["system", "user"] and merged[0].content.endswith("\n\nBe brief.")
    assert "\\u00e9" in merged[0].content  # json.dumps escapes non-ASCII, as bfcl-eval's does
    assert AREA["description"] == "Does geo.area."  # the item's own docs are left as they are (the checker's)


def test_java_docs_are_given_as_strings(tmp_path: Path) -> None:
    doc = fn("Util.sum", {"xs": {"type": "ArrayList", "items": {"type": "integer"}, "description": "Numbers."},
                          "ctx": {"type": "any", "description": "Context."}}, ["xs"])
    hinted = bfcl.hinted_functions([doc], "simple_java")[0]
    xs = hinted["parameters"]["properties"]["xs"]
    assert xs == {"type": "string", "description": "Numbers. This is Java ArrayList type parameter in string "
                  "representation. The list elements are of type integer; they are not in string representation."}
    assert hinted["parameters"]["properties"]["ctx"]["description"].endswith(
        "any type of Java object in string representation.")
    assert doc["parameters"]["properties"]["xs"]["type"] == "ArrayList"


@needs_oracle
def test_messages_equal_bfcl_evals_own(tmp_path: Path) -> None:
    from bfcl_eval.model_handler.utils import system_prompt_pre_processing_chat_model
    from bfcl_eval.utils import add_language_specific_hint_to_function_doc

    js = fn("track", {"meta": {"type": "dict", "description": "Meta.", "properties": {"a": {"type": "integer"}}},
                      "xs": {"type": "array", "items": {"type": "String"}, "description": "Names."}}, ["meta"])
    cases = {"simple_python": simple_rows(), "simple_javascript": (
        [{"id": "simple_javascript_0", "question": [[{"role": "user", "content": "Track it."}]], "function": [js]}],
        [{"id": "simple_javascript_0", "ground_truth": [{"track": {"meta": [{"a": [1]}], "xs": [["x"], ""]}}]}])}
    names = {"simple_python": "bfcl-simple", "simple_javascript": "bfcl-simple-javascript"}
    for category, (questions, answers) in cases.items():
        task = load_task(names[category], data_file=write(tmp_path / category, category, questions, answers))
        for row, item in zip(questions, task.items, strict=True):
            entry = add_language_specific_hint_to_function_doc([copy.deepcopy(row)])[0]
            theirs = system_prompt_pre_processing_chat_model(entry["question"][0], entry["function"], entry["id"])
            ours = [{"role": m.role, "content": m.content} for m in task.prompts.messages(item, bfcl.PROMPTING)]
            assert ours == theirs


@needs_oracle
def test_the_installed_bfcl_evals_data_is_read_without_a_data_file() -> None:
    for name in ("bfcl-simple", "bfcl-live-relevance"):
        task = load_task(name)
        assert len(task.items) == bfcl.CATEGORIES[name][1]
        assert task.source["data_file"].endswith(f"BFCL_v4_{bfcl.CATEGORIES[name][0]}.json")


@pytest.mark.parametrize(("case", "message"), [
    ("no answers", "no possible answers beside it"),
    ("fewer answers", "3 possible answers for 4 questions"),
    ("other id", "BFCL_v4_simple_python.json:2: row: expected the possible answer of 'simple_python_1'"),
    ("other category", "BFCL_v4_simple_python.json:1: row: id: 'multiple_0' is not a simple_python entry"),
    ("no functions", "BFCL_v4_simple_python.json:1: row: function: expected function docs"),
])
def test_bad_files_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                       message: str) -> None:
    questions, answers = simple_rows()
    if case == "fewer answers":
        answers = answers[:3]
    if case == "other id":
        answers[1]["id"] = "simple_python_9"
    if case == "other category":
        questions[0]["id"] = answers[0]["id"] = "multiple_0"
    if case == "no functions":
        questions[0]["function"] = [{"name": "x"}]
    path = write(tmp_path, "simple_python", questions, None if case == "no answers" else answers)
    assert main(["run", "bfcl-simple", "--data-file", str(path), "--model", "scripted:first", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_without_data_or_bfcl_eval_it_says_what_to_do(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(bfcl, "installed_data", lambda: None)
    assert main(["run", "bfcl-multiple", "--model", "scripted:first", "--no-history"]) == 2
    err = capsys.readouterr().err
    assert "--data-file PATH/BFCL_v4_multiple.json" in err and bfcl.INSTALL_DATA in err


def test_java_without_tree_sitter_is_refused_in_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from proctor.scoring import bfcl_ast

    bfcl_ast._language.cache_clear()
    monkeypatch.setitem(sys.modules, "tree_sitter", types.ModuleType("tree_sitter"))  # no Language in it
    path = write(tmp_path, "simple_java", [], None)
    try:
        assert main(["run", "bfcl-simple-java", "--data-file", str(path), "--model", "scripted:first",
                     "--no-history"]) == 2
    finally:
        bfcl_ast._language.cache_clear()
    assert "pip install 'proctor-eval[bfcl]'" in capsys.readouterr().err


def replay(tmp_path: Path, name: str, path: Path, replies: list[str]) -> dict[str, Any]:
    """`proctor run` with each item answered by its reply (scripted:file, keyed by the messages' hash)."""
    task = load_task(name, data_file=path)
    script = tmp_path / f"{name}.replies.jsonl"
    script.write_text("".join(json.dumps({"prompt_hash": prompt_hash(task.prompts.messages(it, bfcl.PROMPTING)),
                                          "answer": r}) + "\n" for it, r in zip(task.items, replies, strict=True)))
    out = tmp_path / f"{name}.run"
    assert main(["run", name, "--data-file", str(path), "--model", f"scripted:file={script}", "-o", str(out),
                 "--no-progress", "--no-history"]) == 0
    return dict(json.loads((out / "results.json").read_text()))


def test_a_run_scores_replies_as_bfcl_eval_does(tmp_path: Path) -> None:
    path = write(tmp_path / "ast", "simple_python", *simple_rows())
    results = replay(tmp_path, "bfcl-simple", path, ["[geo.area(base=0, unit='M')]", "geo.area(base=2)",
                                                     "I don't know.", "[weather(city='oslo')]"])
    assert results["overall"]["accuracy"] == pytest.approx(0.5)
    samples = [json.loads(line) for line in (tmp_path / "bfcl-simple.run" / "samples.jsonl").read_text().splitlines()]
    assert sorted(s["outcome"] for s in samples) == ["correct", "correct", "no_answer", "wrong"]
    manifest = json.loads((tmp_path / "bfcl-simple.run" / "manifest.json").read_text())
    assert manifest["spec"]["generation"]["max_tokens"] is None  # bfcl-eval's _query_prompting sends no token limit


def test_a_run_of_irrelevance_counts_the_replies_that_call_nothing(tmp_path: Path) -> None:
    rows = [{"id": f"irrelevance_{i}", "question": [[{"role": "user", "content": f"Tell me a joke {i}."}]],
             "function": [WEATHER]} for i in range(4)]
    path = write(tmp_path / "irr", "irrelevance", rows, None)
    results = replay(tmp_path, "bfcl-irrelevance", path, ["No function fits.", "[]", "[weather(city='x')]", ""])
    assert results["overall"]["accuracy"] == pytest.approx(0.75)


@pytest.mark.skipif(not HAS_TREE_SITTER, reason="tree-sitter and its Java grammar are not installed")
def test_a_java_run(tmp_path: Path) -> None:
    doc = fn("Cache.get", {"key": {"type": "String", "description": "Key."},
                           "ttl": {"type": "long", "description": "Seconds."}}, ["key"])
    rows = [{"id": f"simple_java_{i}", "question": [[{"role": "user", "content": f"Get k{i}."}]], "function": [doc]}
            for i in range(2)]
    answers = [{"id": f"simple_java_{i}", "ground_truth": [{"Cache.get": {"key": [f"k{i}"], "ttl": [60, ""]}}]}
               for i in range(2)]
    path = write(tmp_path / "java", "simple_java", rows, answers)
    results = replay(tmp_path, "bfcl-simple-java", path, ['[Cache.get(key="k0", ttl=60L)]', '[Cache.get(key="k1", ttl=60)]'])
    assert results["overall"]["accuracy"] == pytest.approx(0.5)
