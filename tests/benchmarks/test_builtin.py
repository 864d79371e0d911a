"""Each built-in declares the answer rule of every prompt kind it offers: the authors' rule for the kinds their
code reads with it, proctor's reader alone (None) for proctor's own kinds."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchmarks.bfcl_rows import category_file
from nltk_punkt import punkt_dir

from proctor.benchmarks import load_task
from proctor.benchmarks.bfcl import CATEGORIES, FUNCTION_CALLING, PROMPTING
from proctor.benchmarks.registry import BUILTINS
from proctor.scoring.bfcl_ast import BFCL_FC_RULE, BFCL_RULE
from proctor.scoring.extract import ANSWER_RULES

UPSTREAM = Path(__file__).parents[1] / "fixtures" / "upstream"
TIGER, GPQA, MATHARENA = "tiger-lab-mmlu-pro", "gpqa-baselines", "matharena-aime"
EXPECTED: dict[str, dict[str, str | None]] = {
    "mmlu-pro": {"five_shot": TIGER, "tiger-api": TIGER, "tiger-local": TIGER + "-local", "lm-eval": "lm-eval-mmlu-pro", "chain_of_thought": None,
                 "zero_shot": None},
    "gpqa": {"zero_shot": GPQA, "chain_of_thought": GPQA, "five_shot": GPQA, "simple-evals": "simple-evals-mcq",
             "zero_shot_cot": None, "five_shot_pool": None},
    "aime-2025": {"chain_of_thought": MATHARENA, "zero_shot": None, "five_shot": None},
    "aime-2026": {"matharena": "matharena"},
    "hmmt-feb-2025": {"matharena": "matharena"},
    "hmmt-feb-2026": {"matharena": "matharena"},
    "math-500": {"lighteval": "math-verify", "lighteval-0.13": "math-verify"},
    "humaneval": {"completion": None, "chat": None},  # executed, not read by a rule
    "mbpp": {"completion": None, "chat": None},
    "livecodebench": {"lcb-generic": None},
    "ifeval": {"zero_shot": "lm-eval-ifeval"},
    "bbh": {"cot_fewshot": "lm-eval-bbh-cot-fewshot", "cot_zeroshot": "lm-eval-bbh-cot-zeroshot"},
    "simpleqa-verified": {"zero_shot": "simple-evals-simpleqa"},  # graded by the benchmark's own judge
    "hle": {"zero_shot": "hle-judge"},
    # every BFCL category: bfcl-eval's AST checker, on a prompting reply or on tool calls (its FC mode)
    "bfcl": {PROMPTING: BFCL_RULE.name, FUNCTION_CALLING: BFCL_FC_RULE.name},
}
EXAMPLES = {"questions": [{"question": "Synthetic?", "choices": {"A": "w", "B": "x", "C": "y", "D": "z"},
                           "explanation": "Made up.", "correct_answer": "B"}]}


def _family(name: str) -> str:
    return "gpqa" if name.startswith("gpqa-") else "bfcl" if name.startswith("bfcl-") else name


@pytest.mark.parametrize("name", list(BUILTINS))
def test_every_kind_of_every_builtin_has_its_declared_rule(name: str, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    aime = UPSTREAM / "aime_2025" / "train.jsonl"  # MathArena's hub schema, for every MathArena competition
    data = {"mmlu-pro": UPSTREAM / "mmlu_pro", "aime-2025": aime, "aime-2026": aime, "hmmt-feb-2025": aime,
            "hmmt-feb-2026": aime, "math-500": UPSTREAM / "math_500" / "test.jsonl",
            "humaneval": UPSTREAM / "humaneval" / "test.jsonl", "mbpp": UPSTREAM / "mbpp" / "test.jsonl",
            "livecodebench": UPSTREAM / "livecodebench" / "test.jsonl",
            "ifeval": UPSTREAM / "ifeval" / "train.jsonl", "bbh": UPSTREAM / "bbh",
            "simpleqa-verified": UPSTREAM / "simpleqa_verified" / "eval.jsonl", "hle": UPSTREAM / "hle" / "test.jsonl"}.get(
        name, UPSTREAM / "gpqa" / f"{name.replace('-', '_')}.csv")
    if _family(name) == "bfcl":  # BFCL's layout, built here for the category
        data = category_file(tmp_path / "bfcl", CATEGORIES[name][0])
    if name == "ifeval":  # lm-eval's checkers need nltk's punkt_tab: the offline stand-in
        import nltk

        monkeypatch.setattr(nltk.data, "path", [str(punkt_dir(tmp_path / "nltk")), *nltk.data.path])
    options = {}
    if _family(name) == "gpqa":  # the authors' examples file opens their chain_of_thought and five_shot kinds
        (examples := tmp_path / "chain_of_thought_examples.json").write_text(json.dumps(EXAMPLES))
        options["cot_examples"] = examples
    task = load_task(name, data_file=data, limit=2, prompt_options=options)
    expected = EXPECTED[_family(name)]
    assert BUILTINS[name].as_dict()["answer_rules"] == expected
    assert set(task.prompts.kinds) == set(expected)  # every kind offered is declared, none extra
    for kind in task.prompts.kinds:
        rule = task.answer_rule(kind)
        assert (rule.name if rule else None) == expected[kind]
        # a grader: its own (of a reply, or of a trajectory)
        assert rule is None or rule.score_whole is not None or rule.score_trajectory is not None \
            or rule is ANSWER_RULES[rule.name]


def test_datasets_json_lists_the_rule_of_each_kind() -> None:
    assert BUILTINS["aime-2025"].as_dict()["answer_rules"] == EXPECTED["aime-2025"]
