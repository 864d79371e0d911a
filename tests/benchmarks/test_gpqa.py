"""GPQA's reference prompts, byte for byte, on synthetic rows and a synthetic examples file.

Expected strings are written out from the authors' baselines/utils.py (`zero_shot_prompt`,
`chain_of_thought_prompt`, `five_shot_prompt`, `generate_prompt_from_examples`) as llm-wc reproduces them
(iamsikun/llm-wc@ef7cb496cd62f394fc1ab2ec24e5951b609f3053 src/llm_wc/gpqa.py), never by calling proctor.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from proctor.benchmarks import load_task
from proctor.data.tasks import Task
from proctor.util.errors import InputError

COLUMNS = ["Question", "Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3",
           "Explanation", "Record ID", "High-level domain", "Subdomain"]
EXAMPLES = {"questions": [
    {"question": f"Synthetic example {i}?", "choices": {"A": f"a{i}", "B": f"b{i}", "C": f"c{i}", "D": f"d{i}"},
     "explanation": f"Because of made-up rule {i}.", "correct_answer": "ABCD"[i % 4]} for i in range(2)]}


def write_data(folder: Path, examples: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "gpqa_main.csv"
    with data.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerow({"Question": "Which synthetic constant is largest? ", "Correct Answer": "omega",
                    "Incorrect Answer 1": "alpha", "Incorrect Answer 2": "beta", "Incorrect Answer 3": " gamma",
                    "Explanation": "By definition.", "Record ID": "recSYN1", "High-level domain": "Physics",
                    "Subdomain": "Synthetic"})
    if examples:
        (folder / "chain_of_thought_examples.json").write_text(json.dumps(EXAMPLES))
    return data


@pytest.fixture
def task(tmp_path: Path) -> Task:
    return load_task("gpqa-main", data_file=write_data(tmp_path), seed=3)


def text(task: Task, kind: str) -> str:
    (message,) = task.prompts.messages(task.items[0], kind)
    assert message.role == "user"
    return message.content


def choices(task: Task) -> str:
    """The question's choices as the CSV holds them (a leading space kept), in the seeded order."""
    item = task.items[0]
    raw = {"Correct Answer": "omega", "Incorrect Answer 1": "alpha", "Incorrect Answer 2": "beta",
           "Incorrect Answer 3": " gamma"}
    order = item.metadata["choice_order"]
    return "\n".join(f"({'ABCD'[k]}) {raw[col]}" for k, col in enumerate(order))


QUESTION = "Which synthetic constant is largest? "


def test_zero_shot(task: Task) -> None:
    assert text(task, "zero_shot") == (
        f"What is the correct answer to this question: {QUESTION}\n\nChoices:\n{choices(task)}\n\n"
        'Format your response as follows: "The correct answer is (insert answer here)"')


def test_chain_of_thought_shows_the_examples_with_their_explanations(task: Task) -> None:
    shots = "".join(
        f"Question: Synthetic example {i}?\nChoices:\n(A) a{i}\n(B) b{i}\n(C) c{i}\n(D) d{i}\n"
        f"Let's think step by step: \nBecause of made-up rule {i}.\nThe correct answer is ({'AB'[i]})\n"
        for i in range(2))
    assert text(task, "chain_of_thought") == (
        "Here are some example questions from experts. An explanation is given before the final answer. Answer "
        "the final question yourself, giving your reasoning beforehand.\n" + shots
        + f"Question: {QUESTION}\nChoices:\n{choices(task)}\nGive step by step reasoning before you answer, and "
        "when you're ready to answer, please use the format \"The correct answer is (insert answer here)\":\n")


def test_five_shot_shows_the_examples_answers_only(task: Task) -> None:
    shots = "".join(f"Question: Synthetic example {i}?\nChoices:\n(A) a{i}\n(B) b{i}\n(C) c{i}\n(D) d{i}\n"
                    f"The correct answer is ({'AB'[i]})\n" for i in range(2))
    assert text(task, "five_shot") == (
        "Here are some example questions from experts. Answer the final question yourself, following the format "
        "of the previous questions exactly.\n" + shots + f"Question: {QUESTION}\nChoices:\n{choices(task)}\n"
        "When you're ready to answer, please use the format \"The correct answer is (insert answer here).")


def test_without_the_examples_file_only_example_free_kinds(tmp_path: Path) -> None:
    task = load_task("gpqa-main", data_file=write_data(tmp_path, examples=False))
    assert task.prompts.kinds == ("zero_shot", "simple-evals", "zero_shot_cot", "five_shot_pool")
    assert "cot_examples" not in task.source


def test_examples_file_is_recorded_and_a_bad_one_is_named(tmp_path: Path) -> None:
    task = load_task("gpqa-main", data_file=write_data(tmp_path))
    assert task.prompts.kinds[:3] == ("zero_shot", "chain_of_thought", "five_shot")
    assert task.source["cot_examples"]["sha256"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"questions": [{"question": "q", "choices": {"A": "x"}}]}))
    with pytest.raises(InputError, match="bad.json.*explanation"):
        load_task("gpqa-main", data_file=tmp_path / "gpqa_main.csv", prompt_options={"cot_examples": bad})


def test_the_early_prompt_check_knows_every_builtin_kind(tmp_path: Path) -> None:
    from proctor.cli.checks import PROMPT_KINDS

    up = Path(__file__).parents[1] / "fixtures" / "upstream"
    tasks = [load_task("gpqa-main", data_file=write_data(tmp_path)),
             load_task("mmlu-pro", data_file=up / "mmlu_pro"),
             load_task("aime-2025", data_file=up / "aime_2025" / "train.jsonl"),
             load_task("humaneval", data_file=up / "humaneval" / "test.jsonl"),
             load_task("livecodebench", data_file=up / "livecodebench" / "test.jsonl")]
    assert {k for t in tasks for k in t.prompts.kinds} == set(PROMPT_KINDS)
