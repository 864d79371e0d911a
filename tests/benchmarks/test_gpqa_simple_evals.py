"""GPQA-Diamond with openai/simple-evals' template (`simple-evals`): the prompt byte for byte and its answer
regex, checked against the strings of simple-evals@ee3b0318 (common.py QUERY_TEMPLATE_MULTICHOICE,
ANSWER_PATTERN_MULTICHOICE; gpqa_eval.py: `re.search`, then `extracted_answer == correct_answer`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from benchmark_replay import run, script

from proctor.benchmarks import load_task

DIAMOND = Path(__file__).parents[1] / "fixtures" / "upstream" / "gpqa" / "gpqa_diamond.csv"
QUERY_TEMPLATE_MULTICHOICE = """
Answer the following multiple choice question. The last line of your response should be of the following format: 'Answer: $LETTER' (without quotes) where LETTER is one of ABCD. Think step by step before answering.

{Question}

A) {A}
B) {B}
C) {C}
D) {D}
""".strip()
ANSWER_PATTERN_MULTICHOICE = r"(?i)Answer[ \t]*:[ \t]*\$?([A-D])\$?"


def simple_evals_score(reply: str, correct: str) -> bool:
    match = re.search(ANSWER_PATTERN_MULTICHOICE, reply)
    return (match.group(1) if match else None) == correct


def test_prompt_is_simple_evals_template() -> None:
    task = load_task("gpqa-diamond", data_file=DIAMOND, limit=3)
    for item in task.items:
        (message,) = task.prompts.messages(item, "simple-evals")
        assert message.content == QUERY_TEMPLATE_MULTICHOICE.format(Question=item.prompt, **(item.choices or {}))


def test_replies_are_scored_as_simple_evals_scores(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    task = load_task("gpqa-diamond", data_file=DIAMOND)
    forms = ["Reasoning...\nAnswer: {x}", "answer: {lx}", "Answer:$${x}$", "Answer: {x}\nAnswer: {y}",
             "The answer is ({x})", "ANSWER :\t{x}"]
    replies, expected = {}, {}
    for i, item in enumerate(task.items):
        x = item.best_answer
        y = "ABCD"[("ABCD".index(x) + 1) % 4]
        replies[item.identifier] = forms[i % len(forms)].format(x=x, lx=x.lower(), y=y)
        expected[item.identifier] = simple_evals_score(replies[item.identifier], x)
    model = f"scripted:file={script(tmp_path / 'r.jsonl', 'gpqa-diamond', DIAMOND, 'simple-evals', replies)}"
    ran = run(capsys, tmp_path, "gpqa-diamond", DIAMOND, model, "run", "--prompt", "simple-evals")
    assert ran.code == 0, ran.err
    assert {k: s["outcome"] == "correct" for k, s in ran.samples.items()} == expected
    assert 0 < sum(expected.values()) < len(expected)  # lower-case and "answer is (X)" are wrong there
    scorer = ran.manifest["spec"]["scorer"]  # manifest v5: each setting once, in the spec
    assert (scorer["prompt_kind"], scorer["answer_rule"]) == ("simple-evals", "simple-evals-mcq")
