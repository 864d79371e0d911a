"""SimpleQA Verified (google/simpleqa-verified): Google DeepMind's 1,000-question cleaned subset of OpenAI's SimpleQA.

Upstream columns (split `eval`): original_index (int, the row of OpenAI's SimpleQA), problem, answer, topic
(Art, Geography, History, ...), answer_type (Person, Date, Number, Place, Other), multi_step and
requires_reasoning (bools), urls (the sources, comma-separated). codelion/SimpleQA-Verified (the copy Inspect
reads, split `train`) has the same columns. A question's category is its topic, its subcategory the answer type;
`multi-step` and `requires reasoning` are tags. Questions are independent: no cluster.

Asked as openai/simple-evals asks SimpleQA (`simpleqa_eval.py`: the problem as the one user message) and graded
by its grader (`proctor.scoring.simpleqa`: the GRADER_TEMPLATE, the first A/B/C of the judge's reply, C when
none), so a run needs `--judge MODEL` (simple-evals grades with gpt-4.1-2025-04-14 at temperature 0.5 and 2048
tokens, system message "You are a helpful assistant."). results.json adds simple-evals' five numbers
(`proctor.metrics.simpleqa`). The SimpleQA Verified paper's own revised grader prompt is not offered.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.prompts import ZERO_SHOT, RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.judge import judged_rule
from ..scoring.simpleqa import JUDGE, SOURCE
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch

NAME = "simpleqa-verified"
SOURCE_HUB = HubSource("google/simpleqa-verified", split="eval")
SIZE = 1000
COLUMNS = ("original_index", "problem", "answer", "topic", "answer_type")
TEMPLATE = "{problem}"  # simple-evals: `sampler._pack_message(content=row.get("problem", ""), role="user")`
PROMPT_SOURCE = "openai/simple-evals simpleqa_eval.py@ee3b0318d8d1d9d72755a4120879be65f7c07e9e SimpleQAEval.__call__"
RULE = judged_rule(JUDGE)


@dataclass
class SimpleQAPrompts(RenderedPrompts):
    """The problem, verbatim, as the one user message; the run id covers the grader's template too."""

    kinds: tuple[str, ...] = (ZERO_SHOT,)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        raw = item.metadata.get("problem_raw")
        return raw if isinstance(raw, str) else item.prompt

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return text_hash(kind, TEMPLATE, PROMPT_SOURCE, JUDGE.template, SOURCE)

    def identity(self) -> dict[str, Any]:
        return {"template": TEMPLATE, **JUDGE.identity()}

    def logprob_context(self, item: Item) -> str:
        return f"Question: {item.prompt}\nAnswer:"


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The 1,000 questions (hub, or a local copy in the upstream schema)."""
    rows = fetch(SOURCE_HUB, data_file)
    dataset = Dataset(name=NAME, description="SimpleQA Verified: short fact-seeking questions, graded by "
                      "simple-evals' SimpleQA grader (an LLM judge).", questions=to_questions(rows),
                      prompts={ZERO_SHOT: TEMPLATE},
                      metadata={"source": SOURCE_HUB.repo, "split": SOURCE_HUB.split,
                                "revision": rows.provenance.get("revision")})
    return Loaded(dataset=dataset, prompts=SimpleQAPrompts(), provenance=dict(rows.provenance))


def to_questions(rows: Rows) -> list[Question]:
    return convert_rows(rows, COLUMNS, _question)


def _question(row: dict[str, Any]) -> Question:
    problem, answer, topic, answer_type = (_text(row, c) for c in ("problem", "answer", "topic", "answer_type"))
    index = row["original_index"]
    if isinstance(index, bool) or not str(index).strip().isdigit():
        raise ValueError(f"original_index: expected a whole number, got {index!r}")
    tags = [name.replace("_", " ") for name in ("multi_step", "requires_reasoning") if _flag(row.get(name), name)]
    raw = {k: v for k, v in (("problem_raw", problem), ("answer_raw", answer)) if v != v.strip()}
    urls = row.get("urls")
    return Question(id=int(str(index).strip()), original_id=str(index).strip(), question=problem.strip(), choices={},
                    answer=answer.strip(), category=topic.strip(), subcategory=answer_type.strip(), tags=tags,
                    metadata={**raw, **({"urls": urls} if isinstance(urls, str) and urls.strip() else {})})


def _text(row: dict[str, Any], column: str) -> str:
    value = row[column]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{column}: expected text, got {value!r:.60}")
    return value


def _flag(value: Any, column: str) -> bool:
    """A bool column (a bool upstream; True/False text in csv copies; absent: False)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    text = str(value).strip().lower()
    if text not in ("true", "false", "1", "0", ""):
        raise ValueError(f"{column}: expected true or false, got {value!r:.40}")
    return text in ("true", "1")


BENCHMARKS = (Builtin(NAME, load, SOURCE_HUB, SIZE, "SimpleQA Verified, graded by simple-evals' SimpleQA grader "
                      "(--judge)", max_tokens=2048, answer_rules={ZERO_SHOT: RULE}),)
