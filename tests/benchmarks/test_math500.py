"""MATH-500: rows in HuggingFaceH4/MATH-500's schema run end to end, graded as math-verify grades (its own
`parse` and `verify`, called here as the oracle), with lighteval's prompts byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmark_replay import run, script

from proctor.benchmarks import load_task
from proctor.benchmarks.registry import BUILTINS

math_verify = pytest.importorskip("math_verify")

ROWS = [  # (problem, answer, subject, level)
    ("Compute $\\frac{1}{2}+\\frac{1}{4}$.", "\\frac{3}{4}", "Prealgebra", 1),
    ("Find $x$ if $x^2 = 2$ and $x>0$.", "\\sqrt{2}", "Algebra", 2),
    ("Convert $(0,3)$ to polar coordinates.", "\\left( 3, \\frac{\\pi}{2} \\right)", "Precalculus", 2),
    ("Solve $|x-1|<2$.", "(-1,3)", "Intermediate Algebra", 4),
    ("How many primes are below 10?", "4", "Number Theory", 1),
    ("What is the cost?", "\\$18.90", "Prealgebra", 3),
]
REPLIES = {  # item → reply: equivalent forms, wrong ones, none
    "math-500.0": "So the sum is $0.75$.\nTherefore, the final answer is: $\\boxed{0.75}$. I hope it is correct",
    "math-500.1": "Therefore, the final answer is: $\\boxed{2^{1/2}}$. I hope it is correct",
    "math-500.2": "The point is $\\boxed{(3, \\pi/2)}$.",
    "math-500.3": "Therefore, the final answer is: $\\boxed{[-1,3]}$.",
    "math-500.4": "I cannot tell.",
    "math-500.5": "ANSWER: 18.90",
}


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "test.jsonl"
    path.write_text("".join(json.dumps({"problem": p, "solution": f"... $\\boxed{{{a}}}$", "answer": a, "subject": s,
                                        "level": lv, "unique_id": f"test/{s.lower()}/{i}.json"}) + "\n"
                            for i, (p, a, s, lv) in enumerate(ROWS)))
    return path


def oracle(reply: str, gold: str) -> bool:
    """math-verify itself: parse the gold (boxed) and the reply, then verify."""
    return bool(math_verify.verify(math_verify.parse(f"\\boxed{{{gold}}}"), math_verify.parse(reply)))


def test_rows_map_subject_level_and_lightevals_prompt(data: Path) -> None:
    task = load_task("math-500", data_file=data)
    assert [it.category for it in task.items] == [r[2] for r in ROWS]
    assert task.items[3].tags == ["level 4"] and "test/prealgebra/0.json" in task.items[0].metadata.values()
    assert task.prompts.kinds == ("lighteval", "lighteval-0.13")
    (message,) = task.prompts.messages(task.items[0], "lighteval")
    assert message.content == (  # lighteval 0.10.0 default_prompts.math_500, formatted
        "Solve the following math problem efficiently and clearly.  The last line of your response should be of "
        "the following format: 'Therefore, the final answer is: $\\boxed{ANSWER}$. I hope it is correct' (without "
        "quotes) where ANSWER is just the final number or expression that solves the problem. Think step by step "
        "before answering.\n\n" + ROWS[0][0])
    (message,) = task.prompts.messages(task.items[0], "lighteval-0.13")
    assert message.content == (  # lighteval 0.13.0 tasks/tasks/math_500.py MATH_QUERY_TEMPLATE, formatted
        "Solve the following problem. The final line of your response MUST be of the following format:\n"
        '"ANSWER: $ANSWER" (without quotes) where $ANSWER is the final answer. Think step by step before answering.'
        "\n\n" + ROWS[0][0])
    assert BUILTINS["math-500"].answer_rules == {"lighteval": "math-verify", "lighteval-0.13": "math-verify"}


def test_end_to_end_verdicts_are_math_verifys(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             data: Path) -> None:
    model = f"scripted:file={script(tmp_path / 'replies.jsonl', 'math-500', data, 'lighteval', REPLIES)}"
    ran = run(capsys, tmp_path, "math-500", data, model, "run")
    assert ran.code == 0, ran.err
    samples = ran.samples
    expected = {f"math-500.{i}": oracle(REPLIES[f"math-500.{i}"], row[1]) for i, row in enumerate(ROWS)}
    assert {k: s["outcome"] == "correct" for k, s in samples.items()} == expected
    assert sum(expected.values()) >= 3  # equivalent forms are credited (0.75 = 3/4, 2^{1/2} = sqrt 2, …)
    assert samples["math-500.4"]["outcome"] == "no_answer"
    assert samples["math-500.0"]["details"]["readings"]["reference"]["reader"] == "math-verify"
    assert (ran.manifest["spec"]["scorer"]["prompt_kind"], ran.manifest["spec"]["scorer"]["answer_rule"]) == ("lighteval", "math-verify")

    replies = script(tmp_path / "other.jsonl", "math-500", data, "lighteval-0.13", REPLIES)
    other = run(capsys, tmp_path, "math-500", data, f"scripted:file={replies}", "other", "--prompt", "lighteval-0.13")
    assert other.code == 0, other.err
    assert other.manifest["run_id"] != ran.manifest["run_id"]
    assert other.manifest["prompt_template_hash"] != ran.manifest["prompt_template_hash"]


def test_run_id_covers_the_prompt_kind(data: Path) -> None:
    task = load_task("math-500", data_file=data)
    assert task.prompts.template_hash("lighteval") != task.prompts.template_hash("lighteval-0.13")
    assert task.answer_rule("lighteval") is not None and task.answer_rule("lighteval").name == "math-verify"


@pytest.mark.parametrize("drop", ["answer", "level"])
def test_a_missing_column_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path,
                                            drop: str) -> None:
    rows = [{k: v for k, v in json.loads(line).items() if k != drop} for line in data.read_text().splitlines()]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in rows))
    ran = run(capsys, tmp_path, "math-500", bad, "scripted:first", "bad")
    assert ran.code == 2 and f"missing upstream column(s) '{drop}'" in ran.err
    assert len(ran.err.strip().splitlines()) == 1 and "Traceback" not in ran.err


def test_a_bad_level_names_its_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, data: Path) -> None:
    lines = data.read_text().splitlines()
    lines[2] = lines[2].replace('"level": 2', '"level": "hard"')
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(lines) + "\n")
    ran = run(capsys, tmp_path, "math-500", bad, "scripted:first", "bad")
    assert ran.code == 2 and f"{bad}:3: row: level: expected an integer 1-5" in ran.err


def test_offline_without_a_file_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PROCTOR_OFFLINE", "1")
    capsys.readouterr()
    from proctor.cli import main

    code = main(["run", "math-500", "--model", "scripted:first", "-o", str(tmp_path / "o"), "--no-progress",
                 "--no-history"])
    err = capsys.readouterr().err
    assert code == 2 and "HuggingFaceH4/MATH-500" in err and "--data-file" in err and "Traceback" not in err


def test_without_math_verify_a_run_is_one_line_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                      data: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "math_verify", None)  # as if the math extra were not installed
    ran = run(capsys, tmp_path, "math-500", data, "scripted:first", "none")
    assert ran.code == 2 and "pip install 'proctor-eval[math]'" in ran.err and "Traceback" not in ran.err
    assert not (ran.run_dir / "samples.jsonl").exists()
