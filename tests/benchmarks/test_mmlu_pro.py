"""MMLU-Pro's reference prompts, byte for byte, on synthetic rows in TIGER-Lab's schema.

The expected strings are written out here from TIGER-AI-Lab/MMLU-Pro@f418b116db00b065c2aea046518d8fcf74d39872
as read (evaluate_from_api.py `single_request` + `format_example`; evaluate_from_local.py
`generate_cot_prompt` + `format_cot_example` + cot_prompt_lib/initial_prompt.txt), never by calling proctor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from proctor.benchmarks import load_task
from proctor.benchmarks.mmlu_pro import MmluProPrompts
from proctor.data.prompts import kind_defaults
from proctor.data.tasks import Task

API_INSTRUCTION = (
    "The following are multiple choice questions (with answers) about physics. Think step by step and then output "
    'the answer in the format of "The answer is (X)" at the end.\n\n'
)
LOCAL_INITIAL = (
    "The following are multiple choice questions (with answers) about physics. Think step by step and then finish "
    'your answer with "the answer is (X)" where X is the correct letter choice.\n\n\n'
)


def row(qid: int, question: str, options: list[str], answer: int, cot: str = "", category: str = "physics",
        ) -> dict[str, Any]:
    return {"question_id": qid, "question": question, "options": options, "answer": "ABCDEFGHIJ"[answer],
            "answer_index": answer, "cot_content": cot, "category": category, "src": "synthetic"}


def validation_rows() -> list[dict[str, Any]]:
    out = [row(i, f"Synthetic example {i}: which is even?", [f"{2 * i + 1}", f"{2 * i}", "N/A"], 1,
               f"A: Let's think step by step. Only {2 * i} is even. The answer is (B).") for i in range(5)]
    out.append(row(5, "Chemistry example?", ["x", "y"], 0, "A: Let's think step by step. x. The answer is (A).",
                   category="chemistry"))
    return out


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture
def task(tmp_path: Path) -> Task:
    # the question keeps its surrounding whitespace and an option its leading space, as upstream rows can
    write_jsonl(tmp_path / "test.jsonl", [row(70, "  What is 1+1? \n", ["2", " 3", "N/A", "4"], 0)])
    write_jsonl(tmp_path / "validation.jsonl", validation_rows())
    return load_task("mmlu-pro", data_file=tmp_path)


def text(task: Task, kind: str) -> str:
    (message,) = task.prompts.messages(task.items[0], kind)
    assert message.role == "user"
    return message.content


def api_examples() -> str:
    return "".join(
        f"Question: Synthetic example {i}: which is even?\nOptions: A. {2 * i + 1}\nB. {2 * i}\n"
        f"Answer: Let's think step by step. Only {2 * i} is even. The answer is (B).\n\n" for i in range(5))


def local_examples(k: int) -> str:
    return "".join(
        f"Question:\nSynthetic example {i}: which is even?\nOptions:\nA. {2 * i + 1}\nB. {2 * i}\n"
        f"Answer: Let's think step by step. Only {2 * i} is even. The answer is (B).\n\n" for i in range(k))


API_QUESTION = "Question:   What is 1+1? \n\nOptions: A. 2\nB.  3\nC. 4\nAnswer: Let's think step by step.\n\n"
LOCAL_QUESTION = "Question:\n  What is 1+1? \n\nOptions:\nA. 2\nB.  3\nC. 4\nAnswer: Let's think step by step."


def test_api_prompt_is_evaluate_from_api_byte_for_byte(task: Task) -> None:
    expected = API_INSTRUCTION + api_examples() + API_QUESTION
    assert text(task, "tiger-api") == expected
    assert text(task, "five_shot") == expected  # proctor's (and llm-wc's) name for it
    assert task.prompts.kinds[0] == "five_shot"


def test_local_prompt_is_evaluate_from_local_byte_for_byte(task: Task) -> None:
    assert text(task, "tiger-local") == LOCAL_INITIAL + "\n" + local_examples(5) + LOCAL_QUESTION
    defaults = kind_defaults(task.prompts, "tiger-local")
    assert defaults.stop == ("Question:",) and defaults.max_tokens == 2048
    assert kind_defaults(task.prompts, "tiger-api").stop == ()


def test_local_prompt_drops_shots_until_it_fits_the_tokenizer_budget(task: Task) -> None:
    prompts = task.prompts
    assert isinstance(prompts, MmluProPrompts)
    full = len(LOCAL_INITIAL + "\n" + local_examples(5) + LOCAL_QUESTION)
    budget = 2048  # the script's max_model_length 4096 - max_new_tokens 2048: a prompt must count fewer
    one_shot = len(LOCAL_INITIAL + "\n" + local_examples(1) + LOCAL_QUESTION)
    two_shots = len(LOCAL_INITIAL + "\n" + local_examples(2) + LOCAL_QUESTION)
    scale = budget / two_shots  # a "tokenizer" under which two shots are exactly at the budget: too long
    prompts.count_tokens = lambda s: int(len(s) * scale)
    try:
        assert text(task, "tiger-local") == LOCAL_INITIAL + "\n" + local_examples(1) + LOCAL_QUESTION
        assert int(one_shot * scale) < budget < int(full * scale)
        prompts.count_tokens = lambda s: 10_000  # nothing fits: the question alone is sent
        assert text(task, "tiger-local") == LOCAL_INITIAL + "\n" + LOCAL_QUESTION
    finally:
        prompts.count_tokens = None


def test_chain_of_thought_and_zero_shot_use_the_api_format(task: Task) -> None:
    assert text(task, "chain_of_thought") == API_INSTRUCTION + API_QUESTION
    assert text(task, "zero_shot") == (
        "The following are multiple choice questions (with answers) about physics. Output the answer in the "
        'format of "The answer is (X)" at the end.\n\n' + "Question:   What is 1+1? \n\nOptions: A. 2\nB.  3\n"
        "C. 4\nAnswer: ")


def test_without_validation_examples_only_the_example_free_kinds(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "only-test.jsonl", [row(1, "Q?", ["a", "b"], 0)])
    task = load_task("mmlu-pro", data_file=tmp_path / "only-test.jsonl")
    assert task.prompts.kinds == ("chain_of_thought", "zero_shot")


def test_template_hash_follows_the_examples_and_the_tokenizer(task: Task) -> None:
    prompts = task.prompts
    assert isinstance(prompts, MmluProPrompts)
    before = prompts.template_hash("tiger-local")
    prompts.count_tokens = len
    try:
        assert prompts.template_hash("tiger-local") != before
    finally:
        prompts.count_tokens = None
    assert prompts.template_hash("tiger-api") != prompts.template_hash("tiger-local")
