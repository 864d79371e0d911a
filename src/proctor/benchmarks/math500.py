"""MATH-500 (HuggingFaceH4/MATH-500): OpenAI's 500-problem subset of MATH ("Let's Verify Step by Step").

Upstream columns (test split): problem, solution, answer (LaTeX), subject (Algebra, Counting & Probability,
Geometry, Intermediate Algebra, Number Theory, Prealgebra, Precalculus), level (1-5), unique_id
(`test/<subject>/<n>.json`). A question's category is its subject, its difficulty the level (also a tag,
`level N`). Problems are independent: no cluster.

Graded as open-r1 and lighteval >= 0.11 grade it, by math-verify against the `answer` column (`math-verify` rule,
`proctor.scoring.math_graders`): `parse` of the reply, `parse` of the gold, `verify`. Not lighteval 0.10.0's own
`math_500` metric (the `solution` column, its own extraction): 861 of 920 verdicts agree, the reason and the
figures in docs/benchmarks-data.md (`bench/compare_lighteval_math500.py`).

Prompts (one user message, lighteval's):
* `lighteval` (default): lighteval 0.10.0 `tasks/default_prompts.py` `math_500` (adapted from simple-evals'
  MATH template; asks for `$\\boxed{ANSWER}$`, "important … for math-verify"), the prompt open-r1's README
  evaluates MATH-500 with (`lighteval … "lighteval|math_500|0|0"`);
* `lighteval-0.13`: lighteval 0.13.0 `tasks/tasks/math_500.py` `MATH_QUERY_TEMPLATE` (a final `ANSWER: …` line;
  lighteval 0.13 reads it with its own `answer:`-anchored extraction, math-verify's `parse` reads it only as a
  plain expression or inside `$…$`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.prompts import RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch

NAME = "math-500"
SOURCE = HubSource("HuggingFaceH4/MATH-500", split="test")
SIZE = 500
COLUMNS = ("problem", "answer", "subject", "level", "unique_id")
LIGHTEVAL, LIGHTEVAL_013 = "lighteval", "lighteval-0.13"
TEMPLATES: dict[str, str] = {
    LIGHTEVAL: "Solve the following math problem efficiently and clearly.  The last line of your response should "
    "be of the following format: 'Therefore, the final answer is: $\\boxed{{ANSWER}}$. I hope it is correct' "
    "(without quotes) where ANSWER is just the final number or expression that solves the problem. Think step by "
    "step before answering.\n\n{problem}",
    LIGHTEVAL_013: "Solve the following problem. The final line of your response MUST be of the following format:\n"
    '"ANSWER: $ANSWER" (without quotes) where $ANSWER is the final answer. Think step by step before answering.'
    "\n\n{problem}",
}
SOURCES = {LIGHTEVAL: "lighteval 0.10.0 src/lighteval/tasks/default_prompts.py math_500",
           LIGHTEVAL_013: "lighteval 0.13.0 src/lighteval/tasks/tasks/math_500.py MATH_QUERY_TEMPLATE"}


@dataclass
class Math500Prompts(RenderedPrompts):
    """lighteval's MATH-500 prompts (`SOURCES`): the template with the problem as the dataset holds it."""

    kinds: tuple[str, ...] = (LIGHTEVAL, LIGHTEVAL_013)

    @property
    def templates(self) -> dict[str, str]:
        return dict(TEMPLATES)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        raw = item.metadata.get("problem_raw")
        return TEMPLATES[kind].format(problem=raw if isinstance(raw, str) else item.prompt)

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return text_hash(kind, TEMPLATES[kind], SOURCES[kind])

    def logprob_context(self, item: Item) -> str:
        return f"Problem: {item.prompt}\nAnswer:"


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The 500 problems (hub, or a local copy in the upstream schema)."""
    rows = fetch(SOURCE, data_file)
    questions = to_questions(rows)
    dataset = Dataset(
        name=NAME,
        description="MATH-500: 500 competition problems of MATH (OpenAI's PRM800K test subset), LaTeX answers.",
        questions=questions,
        prompts=dict(TEMPLATES),
        metadata={"source": SOURCE.repo, "split": SOURCE.split, "revision": rows.provenance.get("revision")},
    )
    return Loaded(dataset=dataset, prompts=Math500Prompts(), provenance=dict(rows.provenance))


def to_questions(rows: Rows) -> list[Question]:
    numbered = [dict(row, _index=i) for i, row in enumerate(rows.rows)]
    return convert_rows(Rows(numbered, rows.provenance, rows.path, rows.lines), COLUMNS, _question)


def _question(row: dict[str, Any]) -> Question:
    raw, answer, subject = (str(row[c]) if row[c] is not None else "" for c in ("problem", "answer", "subject"))
    for column, text in (("problem", raw), ("answer", answer), ("subject", subject), ("unique_id", row["unique_id"])):
        if not str(text or "").strip():
            raise ValueError(f"{column}: empty")
    level = _level(row["level"])
    return Question(
        id=int(row["_index"]),
        original_id=str(row["unique_id"]),
        question=raw.strip(),
        choices={},
        answer=answer.strip(),
        category=subject.strip(),
        difficulty=str(level),
        tags=[f"level {level}"],
        metadata={"problem_raw": raw} if raw != raw.strip() else {},
    )


def _level(value: Any) -> int:
    """level: an integer 1-5 (an int upstream; a digit string in csv copies)."""
    if isinstance(value, bool) or not str(value).strip().isdigit() or not 1 <= int(str(value).strip()) <= 5:
        raise ValueError(f"level: expected an integer 1-5, got {value!r}")
    return int(str(value).strip())


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "MATH-500 (OpenAI's MATH subset), graded by math-verify",
                      max_tokens=32_768, answer_rules={LIGHTEVAL: "math-verify", LIGHTEVAL_013: "math-verify"}),)
