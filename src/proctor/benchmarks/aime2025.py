"""AIME 2025 (MathArena/aime_2025): the 30 problems of AIME I and II 2025, integer answers 0-999.

Upstream columns (train split): problem_idx (int), problem (LaTeX), answer (int), problem_type
(list of "Algebra", "Combinatorics", "Geometry", "Number Theory"). A question's category is its
first problem type; all its types are kept as tags. Answers are open (no choices): the Item
modality is single-value and scoring compares integers numerically.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.formats.convert import question_to_item
from ..data.prompts import CHAIN_OF_THOUGHT, FIVE_SHOT, ZERO_SHOT, PoolShotPrompts
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch
from .matharena import integer_answer, problem_types

NAME = "aime-2025"
SOURCE = HubSource("MathArena/aime_2025", split="train")
SIZE = 30
COLUMNS = ("problem_idx", "problem", "answer")



# --------------------------------------------------------------------------- AIME 2025

# llm-wc's AIME prompt (adapted from MathArena): iamsikun/llm-wc@ef7cb496cd62f394fc1ab2ec24e5951b609f3053,
# src/llm_wc/aime_2025.py `AIME_2025_PROMPT` and `prompt_aime_2025`: instruction + "\n\n" + problem.
LLMWC_COMMIT = "ef7cb496cd62f394fc1ab2ec24e5951b609f3053"
LLMWC_INSTRUCTION = (
    "Please reason step by step, and put your final answer within \\boxed{}.\n"
    "The answer is an integer between 0 and 999 inclusive."
)
AIME_RULE = "The answer is an integer between 0 and 999 inclusive."
AIME_TEMPLATES: dict[str, str] = {
    CHAIN_OF_THOUGHT: "{instruction}\n\n{problem}",
    ZERO_SHOT: "{problem}\n\nGive only your final answer, within \\boxed{{}}. " + AIME_RULE,
    FIVE_SHOT: "Here are some example problems with their final answers.\n\n{examples}"
    "Problem: {problem}\n\nPlease reason step by step, and put your final answer within \\boxed{{}}. "
    + AIME_RULE,
}
AIME_EXAMPLE = "Problem: {problem}\nFinal answer: \\boxed{{{answer}}}\n\n"


@dataclass
class AimePrompts(PoolShotPrompts):
    """`chain_of_thought` (the default) is what llm-wc sends (llm-wc@ef7cb496 src/llm_wc/aime_2025.py
    `prompt_aime_2025`): the instruction — llm-wc's, or a config's `instruction` — a blank line, the problem
    as the dataset holds it. proctor's own: `zero_shot` (answer only) and `five_shot` (other problems of the
    set with their answers)."""

    instruction: str = LLMWC_INSTRUCTION
    kinds: tuple[str, ...] = (CHAIN_OF_THOUGHT, ZERO_SHOT, FIVE_SHOT)

    benchmark = "aime-2025"
    TEMPLATES = AIME_TEMPLATES
    EXAMPLE = AIME_EXAMPLE

    def _fields(self, item: Item) -> dict[str, str]:
        raw = item.metadata.get("problem_raw")
        return {"problem": raw if isinstance(raw, str) else item.prompt, "instruction": self.instruction}

    def template_hash(self, kind: str) -> str:
        base = super().template_hash(kind)
        return text_hash(base, self.instruction) if kind == CHAIN_OF_THOUGHT else base

    def logprob_context(self, item: Item) -> str:
        return f"Problem: {item.prompt}\nAnswer:"


def load(data_file: str | Path | None = None, seed: int = 0, instruction: str | None = None) -> Loaded:
    """The 30 problems; `instruction` (an llm-wc config's) replaces llm-wc's default one."""
    rows = fetch(SOURCE, data_file)
    questions = to_questions(rows)
    prompts = AimePrompts(pool=[question_to_item(q, NAME) for q in questions], seed=seed,
                          instruction=LLMWC_INSTRUCTION if instruction is None else instruction)
    dataset = Dataset(
        name=NAME,
        description="AIME 2025 (I and II) as published by MathArena: 30 problems with integer answers 0-999.",
        questions=questions,
        prompts=prompts.templates,
        metadata={"source": SOURCE.repo, "split": SOURCE.split, "revision": rows.provenance.get("revision")},
    )
    return Loaded(dataset=dataset, prompts=prompts, provenance=dict(rows.provenance))


def to_questions(rows: Rows) -> list[Question]:
    return convert_rows(rows, COLUMNS, _question)


def _question(row: dict[str, Any]) -> Question:
    types = problem_types(row.get("problem_type"))
    if not isinstance(row["problem"], str) or not row["problem"].strip():  # a null cell was asked as "None"
        raise ValueError(f"problem: expected the problem's text, got {row['problem']!r:.40}")
    return Question(
        id=int(row["problem_idx"]),
        original_id=str(row["problem_idx"]),
        question=str(row["problem"]).strip(),
        choices={},
        answer=integer_answer(row["answer"]),
        category=types[0] if types else None,
        tags=types,
        metadata={"problem_raw": raw} if (raw := str(row["problem"])) != raw.strip() else {},
    )


# 32,768 output tokens: the setting reasoning models report AIME at (Qwen3, DeepSeek-R1 distills use more)
# llm-wc's (MathArena's) rule reads the replies to llm-wc's prompt; proctor's own kinds, proctor's reader
ANSWER_RULES_BY_KIND: dict[str, str | None] = {CHAIN_OF_THOUGHT: "matharena-aime", ZERO_SHOT: None, FIVE_SHOT: None}
BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "AIME I+II 2025, integer answers 0-999", max_tokens=32_768,
                      answer_rules=ANSWER_RULES_BY_KIND),)
