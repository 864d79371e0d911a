"""How an llm-wc config's prompt settings reach proctor: prompt_type names, GPQA's cot_examples_path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from proctor.interop.llmwc import BenchmarkBlock, read_config
from proctor.interop.llmwc_config import load_config_task, prompt_kind
from proctor.scoring.extract import llmwc_rule
from proctor.util.errors import InputError

GPQA_CSV = Path(__file__).parents[1] / "fixtures" / "upstream" / "gpqa" / "gpqa_main.csv"
EXAMPLES = {"questions": [{"question": "Synthetic?", "choices": {"A": "x", "B": "y", "C": "z", "D": "w"},
                           "explanation": "Made up.", "correct_answer": "C"}]}


@pytest.mark.parametrize(("given", "kind"), [("5_shot", "five_shot"), ("zero_shot", "zero_shot"),
                                             ("chain_of_thought", "chain_of_thought"), ("cot", None),
                                             ("default", None), (None, None)])
def test_llmwc_prompt_types_map_to_kinds(given: str | None, kind: str | None) -> None:
    assert prompt_kind(BenchmarkBlock(name="gpqa", prompt_type=given)) == kind


def config(tmp_path: Path, prompt_type: str, examples: str) -> Path:
    path = tmp_path / "gpqa.yaml"
    path.write_text(f"benchmark:\n  name: gpqa\n  subset: main\n  prompt_type: {prompt_type}\n"
                    f"  cot_examples_path: {examples}\nmodels:\n  - name: m\n    api_base: http://127.0.0.1:9/v1\n")
    return path


def test_cot_examples_path_relative_to_the_config_reaches_the_prompt(tmp_path: Path) -> None:
    (tmp_path / "resources").mkdir()
    (tmp_path / "resources" / "ex.json").write_text(json.dumps(EXAMPLES))
    path = config(tmp_path, "5_shot", "resources/ex.json")
    task = load_config_task(read_config(path), path, GPQA_CSV)
    (message,) = task.prompts.messages(task.items[0], "five_shot")
    assert "Question: Synthetic?\nChoices:\n(A) x\n(B) y\n(C) z\n(D) w\nThe correct answer is (C)\n" in message.content


def test_a_missing_examples_file_is_an_error_only_where_the_prompt_shows_examples(tmp_path: Path) -> None:
    path = config(tmp_path, "chain_of_thought", "resources/missing.json")
    with pytest.raises(InputError, match="cot_examples_path 'resources/missing.json': no such file"):
        load_config_task(read_config(path), path, GPQA_CSV)
    zero = config(tmp_path, "zero_shot", "resources/missing.json")  # llm-wc never reads it for zero_shot
    assert load_config_task(read_config(zero), zero, GPQA_CSV).prompts.kinds[0] == "zero_shot"


def test_every_kind_of_a_config_run_is_read_by_llmwcs_own_rule(tmp_path: Path) -> None:
    """llm-wc parses GPQA with its mcqa rule over A-D whatever the prompt; AIME with MathArena's rule."""
    (tmp_path / "ex.json").write_text(json.dumps(EXAMPLES))
    path = config(tmp_path, "5_shot", "ex.json")
    task = load_config_task(read_config(path), path, GPQA_CSV)
    rules = {kind: task.answer_rule(kind) for kind in task.prompts.kinds}
    assert set(rules) == {"zero_shot", "chain_of_thought", "five_shot", "zero_shot_cot", "five_shot_pool", "simple-evals"}
    assert {r.name if r else None for r in rules.values()} == {"llm-wc-mcqa"}
    rule = rules["five_shot"]
    assert rule is not None and rule.read("The answer is (E), so B").answer == "B"  # E is no GPQA choice
    aime = tmp_path / "aime.yaml"
    aime.write_text("benchmark:\n  name: aime_2025\nmodels:\n  - name: m\n    api_base: http://127.0.0.1:9/v1\n")
    aime_task = load_config_task(read_config(aime), aime, GPQA_CSV.parents[1] / "aime_2025" / "train.jsonl")
    chosen = aime_task.answer_rule("chain_of_thought")
    assert chosen is not None and chosen.name == "matharena-aime"
    assert {r.name for r in aime_task.answer_rules.values()} == {"matharena-aime"}


def test_llmwc_accepts_a_to_j_for_mmlu_pro_whatever_the_options() -> None:
    assert llmwc_rule("mmlu-pro").read("The answer is (J)").answer == "J"
    assert llmwc_rule("gpqa-diamond").read("The answer is (J)").answer is None
