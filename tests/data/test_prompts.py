"""Prompt formats per kind, against the benchmark authors' formats."""

from __future__ import annotations

from pathlib import Path

import pytest

from proctor.benchmarks import load_task
from proctor.core.model import Message
from proctor.data.prompts import (
    CHAIN_OF_THOUGHT,
    FIVE_SHOT,
    ZERO_SHOT,
    ItemPromptBuilder,
    UnknownPromptKind,
    pick_shots,
)
from proctor.data.records import Item
from proctor.data.tasks import Task

UP = Path(__file__).parents[1] / "fixtures" / "upstream"
MMLU_HEADER = (
    "The following are multiple choice questions (with answers) about {}. Think step by step and then output the "
    'answer in the format of "The answer is (X)" at the end.\n\n'
)


@pytest.fixture(scope="module")
def mmlu() -> Task:
    return load_task("mmlu-pro", data_file=UP / "mmlu_pro" / "test-00000-of-00001.parquet")


@pytest.fixture(scope="module")
def gpqa() -> Task:
    return load_task("gpqa-extended", data_file=UP / "gpqa" / "gpqa_extended.csv", seed=5)


@pytest.fixture(scope="module")
def aime() -> Task:
    return load_task("aime-2025", data_file=UP / "aime_2025" / "train.jsonl")


def user_text(task: Task, item: Item, kind: str) -> str:
    msgs = task.prompts.messages(item, kind)
    assert len(msgs) == 1 and msgs[0].role == "user"
    return msgs[0].content


# --------------------------------------------------------------------------- generic CommonEval items


def choice_item(**kw: object) -> Item:
    return Item.model_validate(
        {
            "identifier": "x.1",
            "modality": "choiceof3",
            "prompt": "Pick one.",
            "response": "B",
            "choices": {"A": "red", "B": "green", "C": "blue"},
            **kw,
        }
    )


def test_generic_task_prompt_precedence() -> None:
    builder = ItemPromptBuilder(task_prompt="Dataset says hi.")
    own = choice_item(taskPrompt="Item says hi.")
    assert builder.messages(own, ZERO_SHOT)[0] == Message("system", "Item says hi.")
    assert builder.messages(choice_item(), ZERO_SHOT)[0] == Message("system", "Dataset says hi.")
    no_system = ItemPromptBuilder().messages(choice_item(), ZERO_SHOT)
    assert [m.role for m in no_system] == ["user"]


def test_generic_choice_listing_and_letter_instruction() -> None:
    user = ItemPromptBuilder().messages(choice_item(), ZERO_SHOT)[-1].content
    assert (
        user
        == "Pick one.\n\nA) red\nB) green\nC) blue\n\nAnswer with the letter of the correct choice only: A, B or C."
    )
    cot = ItemPromptBuilder().messages(choice_item(), CHAIN_OF_THOUGHT)[-1].content
    assert cot.endswith(
        "Think step by step, then give your final answer on the last line in the form 'Answer: <answer>'."
    )


@pytest.mark.parametrize(
    ("modality", "prompt", "response", "instruction"),
    [
        ("boolean", "The sky is green.", "False", "Answer True or False only."),
        ("ternary", "It will rain on 1 May 2090.", "Unknown", "Answer True, False, or I don't know only."),
        (
            "cloze",
            "Faith, ___, and love.",
            "hope",
            "Fill in the blank (___). Answer with only the words that fill it.",
        ),
        ("single-value", "Capital of France?", "Paris", "Answer with a single word or value only."),
    ],
)
def test_generic_modality_instructions(modality: str, prompt: str, response: str, instruction: str) -> None:
    item = Item(identifier="x.2", modality=modality, prompt=prompt, response=response)
    assert ItemPromptBuilder().messages(item, ZERO_SHOT)[-1].content == f"{prompt}\n\n{instruction}"


def test_generic_logprob_context() -> None:
    builder = ItemPromptBuilder(task_prompt="Be brief.")
    assert (
        builder.logprob_context(choice_item())
        == "Be brief.\n\nPick one.\n\nA) red\nB) green\nC) blue\nAnswer:"
    )


# --------------------------------------------------------------------------- MMLU-Pro


def test_mmlu_pro_chain_of_thought_is_tiger_lab_format(mmlu: Task) -> None:
    item = mmlu.items[0]
    text = user_text(mmlu, item, CHAIN_OF_THOUGHT)
    options = "".join(f"{k}. {v}\n" for k, v in (item.choices or {}).items())
    assert text == MMLU_HEADER.format("math") + f"Question: {item.prompt}\nOptions: {options}" + (
        "Answer: Let's think step by step.\n\n")  # evaluate_from_api.py's format_example, no examples


def test_mmlu_pro_zero_shot_asks_for_the_answer_format(mmlu: Task) -> None:
    text = user_text(mmlu, mmlu.items[0], ZERO_SHOT)
    assert 'Output the answer in the format of "The answer is (X)" at the end.' in text
    assert "step by step" not in text and text.endswith("Answer: ")


def test_mmlu_pro_five_shot_uses_same_category_validation_examples(mmlu: Task) -> None:
    math_item = next(it for it in mmlu.items if it.category == "math")
    text = user_text(mmlu, math_item, FIVE_SHOT)
    assert text.startswith(MMLU_HEADER.format("math"))
    # evaluate_from_api.py shows every validation example of the category (five upstream; six here)
    assert text.count("Question: ") == 7
    for k in range(6):
        assert f"[synthetic math validation {k}]" in text
    assert "law validation" not in text
    assert "Answer: Let's think step by step. 2 times 3 is 6. The answer is (A).\n\n" in text  # "A: " cut
    assert text.endswith("Answer: Let's think step by step.\n\n")
    law_item = next(it for it in mmlu.items if it.category == "law")
    law = user_text(mmlu, law_item, FIVE_SHOT)
    assert law.count("law validation") == 5 and "math validation" not in law
    cs_item = next(it for it in mmlu.items if it.category == "computer science")  # no validation examples
    assert user_text(mmlu, cs_item, FIVE_SHOT).count("Question: ") == 1
    local = user_text(mmlu, math_item, "tiger-local")  # evaluate_from_local.py: the first five (ntrain 5)
    assert local.count("Question:\n") == 6 and "[synthetic math validation 5]" not in local


def test_mmlu_pro_logprob_context(mmlu: Task) -> None:
    item = mmlu.items[0]
    ctx = mmlu.prompts.logprob_context(item)
    assert ctx.startswith(f"Question: {item.prompt}\nOptions:\nA. ") and ctx.endswith("\nAnswer:")


# --------------------------------------------------------------------------- GPQA


def test_gpqa_zero_shot_lists_the_shuffled_choices(gpqa: Task) -> None:
    item = gpqa.items[0]
    c = item.choices or {}
    assert user_text(gpqa, item, ZERO_SHOT) == (
        f"What is the correct answer to this question: {item.prompt}\n\nChoices:\n"
        f"(A) {c['A']}\n(B) {c['B']}\n(C) {c['C']}\n(D) {c['D']}\n\n"
        'Format your response as follows: "The correct answer is (insert answer here)"'
    )


def test_gpqa_zero_shot_cot(gpqa: Task) -> None:
    text = user_text(gpqa, gpqa.items[0], "zero_shot_cot")
    assert "Give step by step reasoning before you answer" in text
    assert '"The correct answer is (insert answer here)"' in text and text.endswith(
        "Let's think step by step:"
    )


def test_gpqa_five_shot_pool_uses_other_questions_deterministically(gpqa: Task) -> None:
    for item in gpqa.items:
        text = user_text(gpqa, item, "five_shot_pool")
        assert text.count("Question: ") == 6
        assert text.count(item.prompt) == 1  # the asked question is never its own example
        assert text.count("The correct answer is (") == 5 + 1  # five answered examples + the instruction
    again = load_task("gpqa-extended", data_file=UP / "gpqa" / "gpqa_extended.csv", seed=5)
    assert again.prompts.messages(again.items[2], "five_shot_pool") == gpqa.prompts.messages(
        gpqa.items[2], "five_shot_pool"
    )


def test_gpqa_five_shot_pool_examples_show_their_correct_letter(gpqa: Task) -> None:
    text = user_text(gpqa, gpqa.items[0], "five_shot_pool")
    by_prompt = {it.prompt: it for it in gpqa.items}
    for block in text.split("Question: ")[1:-1]:
        prompt = block.split("\nChoices:\n")[0]
        assert block.rstrip().endswith(f"The correct answer is ({by_prompt[prompt].best_answer})")


def test_gpqa_logprob_context(gpqa: Task) -> None:
    item = gpqa.items[0]
    ctx = gpqa.prompts.logprob_context(item)
    assert ctx.endswith(f"(D) {(item.choices or {})['D']}\nAnswer:")


# --------------------------------------------------------------------------- AIME 2025


def test_aime_prompts(aime: Task) -> None:
    item = aime.items[0]
    assert aime.prompts.kinds[0] == CHAIN_OF_THOUGHT
    cot = user_text(aime, item, CHAIN_OF_THOUGHT)
    assert cot.endswith("\n\n" + item.prompt) and cot.startswith("Please reason step by step")
    assert "\\boxed{}" in cot and "integer between 0 and 999" in cot
    assert "\\boxed{}" in user_text(aime, item, ZERO_SHOT)
    five = user_text(aime, item, FIVE_SHOT)
    assert five.count("Final answer: \\boxed{") == 5 and five.count(item.prompt) == 1
    assert aime.prompts.logprob_context(item) == f"Problem: {item.prompt}\nAnswer:"


# --------------------------------------------------------------------------- hashes, kinds, shots


def test_template_hashes(mmlu: Task, gpqa: Task, aime: Task) -> None:
    for task in (mmlu, gpqa, aime):
        hashes = {k: task.prompts.template_hash(k) for k in task.prompts.kinds}
        assert len(set(hashes.values())) == len(hashes)
        assert all(h.startswith("sha256:") for h in hashes.values())
        assert hashes == {k: task.prompts.template_hash(k) for k in task.prompts.kinds}
    other_seed = load_task("gpqa-extended", data_file=UP / "gpqa" / "gpqa_extended.csv", seed=6)
    assert other_seed.prompts.template_hash(ZERO_SHOT) == gpqa.prompts.template_hash(ZERO_SHOT)
    assert other_seed.prompts.template_hash("five_shot_pool") != gpqa.prompts.template_hash("five_shot_pool")
    g = ItemPromptBuilder()
    assert g.template_hash(ZERO_SHOT) != g.template_hash(CHAIN_OF_THOUGHT)


def test_unknown_kind_is_a_clear_error(gpqa: Task) -> None:
    with pytest.raises(UnknownPromptKind, match="gpqa offers prompts zero_shot, simple-evals, zero_shot_cot, five_shot_pool"):
        gpqa.prompts.messages(gpqa.items[0], "ten_shot")
    with pytest.raises(UnknownPromptKind):
        ItemPromptBuilder().template_hash(FIVE_SHOT)


def test_pick_shots_is_order_independent(gpqa: Task) -> None:
    pool = list(gpqa.items)
    a = pick_shots(pool, pool[0].identifier, seed=1)
    b = pick_shots(list(reversed(pool)), pool[0].identifier, seed=1)
    assert a == b and len(a) == 5 and pool[0] not in a


def test_bind_tokenizer_gives_tiger_local_the_models_token_count(mmlu: Task) -> None:
    from dataclasses import replace as copy

    from proctor.benchmarks.mmlu_pro import MmluProPrompts
    from proctor.data.prompts import bind_tokenizer
    from proctor.run.pricing import token_counter

    assert isinstance(mmlu.prompts, MmluProPrompts)
    builder = copy(mmlu.prompts, count_tokens=None)

    class HfLike:  # the hf: backend's counter (and openai: with tokenizer=DIR)
        has_tokenizer = True

        def count_prompt_tokens(self, text: str) -> int:
            return len(text)

    class OpenAIWithTokenizer(HfLike):  # openai: with tokenizer=DIR
        def count_prompt_tokens(self, text: str) -> int:
            return len(text)

    class OpenAIWithoutTokenizer(HfLike):
        has_tokenizer = False  # its count is a bound, not the model's tokenizer

    bind_tokenizer(builder, token_counter(HfLike()))
    assert builder.count_tokens is not None and builder.count_tokens("abc") == 3
    other = copy(mmlu.prompts, count_tokens=None)
    bind_tokenizer(other, token_counter(OpenAIWithTokenizer()))
    assert other.count_tokens is not None and other.count_tokens("abcd") == 4
    bound_only = copy(mmlu.prompts, count_tokens=None)
    bind_tokenizer(bound_only, token_counter(OpenAIWithoutTokenizer()))
    assert bound_only.count_tokens is None
    plain = copy(mmlu.prompts, count_tokens=None)
    bind_tokenizer(plain, None)  # no tokenizer: five shots, whatever their length
    assert plain.count_tokens is None
