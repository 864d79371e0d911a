"""MathArena's final-answer competitions (AIME 2026, HMMT February 2025/2026): the shared loader and prompt.

MathArena publishes each competition on the Hugging Face Hub (`MathArena/<competition>`, split `train`) with
the columns problem_idx (int), problem (LaTeX), answer (an integer for AIME, a LaTeX expression for HMMT) and
problem_type (a list of "Algebra", "Combinatorics", "Geometry", "Number Theory"); `--data-file` also reads
their on-disk competition directory (`answers.csv` + `problems/<id>.tex`, `proctor.benchmarks.hub`). A
question's category is its first problem type, all its types are tags.

The prompt (`matharena`, the default) is MathArena's: the competition config's `instruction`
(configs/competitions/<comp>.yaml at eth-sri/matharena@e9276603), a blank line, the problem as the dataset
holds it, one user message (src/matharena/runner.py: `instruction + "\\n\\n{problem}"`, formatted).
Each competition's entry (`aime2026.py`, `hmmt_feb.py`) names its instruction and answer rule.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.prompts import RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.math_graders import MATHARENA_COMMIT
from .hub import HubSource, Loaded, Rows, convert_rows, fetch, parse_list_cell

COLUMNS = ("problem_idx", "problem", "answer")
MATHARENA = "matharena"  # the prompt kind: MathArena's own instruction
BOXED = "Put your final answer within \\boxed{}."
INTEGER_RULE = "The answer is an integer between 0 and 999 inclusive."


@dataclass(frozen=True)
class Competition:
    """One MathArena competition: its hub dataset, size, instruction and how its answers are checked."""

    name: str  # proctor's benchmark name
    repo: str  # MathArena/<competition>
    size: int
    description: str
    instruction: str  # the competition config's `instruction`, as MathArena formats it
    config: str  # the config file it comes from (documentation)
    answer: Callable[[Any], str]  # a row's answer as the gold text (raises ValueError when invalid)

    @property
    def source(self) -> HubSource:
        return HubSource(self.repo, split="train")


@dataclass
class MathArenaPrompts(RenderedPrompts):
    """`matharena`: the competition's instruction, a blank line, the problem (MathArena's runner)."""

    competition: Competition
    kinds: tuple[str, ...] = (MATHARENA,)

    @property
    def templates(self) -> dict[str, str]:
        return {MATHARENA: self.competition.instruction + "\n\n{problem}"}

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, self.competition.name)
        raw = item.metadata.get("problem_raw")
        return self.competition.instruction + "\n\n" + (raw if isinstance(raw, str) else item.prompt)

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, self.competition.name)
        return text_hash(kind, self.templates[kind], f"matharena@{MATHARENA_COMMIT}")

    def logprob_context(self, item: Item) -> str:
        return f"Problem: {item.prompt}\nAnswer:"


def load(competition: Competition, data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The competition's problems (hub, or a local copy / MathArena directory) and MathArena's prompt."""
    rows = fetch(competition.source, data_file)
    questions = to_questions(rows, competition)
    dataset = Dataset(
        name=competition.name,
        description=competition.description,
        questions=questions,
        prompts=MathArenaPrompts(competition).templates,
        metadata={"source": competition.repo, "split": "train", "revision": rows.provenance.get("revision"),
                  "matharena": MATHARENA_COMMIT},
    )
    return Loaded(dataset=dataset, prompts=MathArenaPrompts(competition), provenance=dict(rows.provenance))


def to_questions(rows: Rows, competition: Competition) -> list[Question]:
    return convert_rows(rows, COLUMNS, lambda row: _question(row, competition))


def _question(row: dict[str, Any], competition: Competition) -> Question:
    types = problem_types(row.get("problem_type"))
    idx = row["problem_idx"]
    if isinstance(idx, bool) or not str(idx).strip().isdigit():
        raise ValueError(f"problem_idx: expected an integer, got {idx!r}")
    raw = row["problem"]
    if not isinstance(raw, str) or not raw.strip():  # a null cell is no problem text (it was asked as "None")
        raise ValueError(f"problem: expected the problem's text, got {raw!r:.40}")
    return Question(
        id=int(str(idx).strip()),
        original_id=str(idx).strip(),
        question=raw.strip(),
        choices={},
        answer=competition.answer(row["answer"]),
        category=types[0] if types else None,
        tags=types,
        metadata={"problem_raw": raw} if raw != raw.strip() else {},
    )


def integer_answer(value: Any) -> str:
    """An AIME answer: an integer 0-999 (an int upstream; a digit string in csv/jsonl copies)."""
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip().isdigit():
        raise ValueError(f"answer: expected an integer 0-999, got {value!r}")
    n = int(str(value).strip())
    if not 0 <= n <= 999:
        raise ValueError(f"answer: {n} is outside 0-999")
    return str(n)


def expression_answer(value: Any) -> str:
    """An HMMT answer: a LaTeX expression (or an integer), kept as MathArena stores it."""
    if value is None or isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).strip():
        raise ValueError(f"answer: expected a LaTeX expression, got {value!r}")
    return str(value).strip()


def problem_types(value: Any) -> list[str]:
    """problem_type as a list; a csv cell holds a JSON/Python list literal or one bare type."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        value = parse_list_cell(text, "problem_type") if text.startswith("[") else [text]
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"problem_type: expected a list, got {value!r}")
    return [str(v) for v in value]
