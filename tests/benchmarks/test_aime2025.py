"""AIME 2025's reference prompt, byte for byte: what llm-wc sends (iamsikun/llm-wc@ef7cb496cd62f394fc1ab2ec24e5951b609f3053,
src/llm_wc/aime_2025.py `prompt_aime_2025`: instruction + a blank line + the problem as the dataset holds it),
with llm-wc's default instruction or a config's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.benchmarks import load_task
from proctor.interop.llmwc import read_config
from proctor.interop.llmwc_config import load_config_task

LLMWC_INSTRUCTION = ("Please reason step by step, and put your final answer within \\boxed{}.\n"
                     "The answer is an integer between 0 and 999 inclusive.")
PROBLEM = "Synthetic: find $x$ with {x} = 7.\n"  # braces and a trailing newline, kept as upstream holds them


@pytest.fixture
def data(tmp_path: Path) -> Path:
    path = tmp_path / "train.jsonl"
    path.write_text(json.dumps({"problem_idx": 1, "problem": PROBLEM, "answer": 7, "problem_type": ["Algebra"]})
                    + "\n")
    return path


def test_default_kind_is_llmwc_instruction_then_problem(data: Path) -> None:
    task = load_task("aime-2025", data_file=data)
    assert task.prompts.kinds[0] == "chain_of_thought"
    (message,) = task.prompts.messages(task.items[0], "chain_of_thought")
    assert (message.role, message.content) == ("user", LLMWC_INSTRUCTION + "\n\n" + PROBLEM)


def test_a_config_instruction_is_honoured(data: Path, tmp_path: Path) -> None:
    config = tmp_path / "aime_2025.yaml"
    config.write_text(
        "benchmark:\n  name: aime_2025\n  seed: 12345\n  instruction: \"Solve it. Put the answer in \\\\boxed{}.\"\n"
        "models:\n  - name: m\n    api_base: http://127.0.0.1:9/v1\n    api_key: k\n")
    task = load_config_task(read_config(config), config, data)
    (message,) = task.prompts.messages(task.items[0], task.prompts.kinds[0])
    assert message.content == "Solve it. Put the answer in \\boxed{}.\n\n" + PROBLEM
    default = load_task("aime-2025", data_file=data)
    assert task.prompts.template_hash("chain_of_thought") != default.prompts.template_hash("chain_of_thought")
