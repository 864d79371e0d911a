"""MBPP, sanitized (google-research-datasets/mbpp, config `sanitized`): 257 test problems, each with asserts.

Upstream columns (test split): source_file, task_id, prompt, code, test_imports, test_list. The program is the
code, then each assert of `test_list`, as bigcode-evaluation-harness runs it (its reference is the asserts joined:
it never runs `test_imports`; `--test-imports` runs them before each assert, as EvalPlus does); proctor runs each
assert as its own test, so the record says which passed, under bigcode's limits by default (`--exec-limits`). The prompt is
bigcode-evaluation-harness's MBPP prompt: the description and the first test in a docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..data.records import Item, Question
from ..scoring.execute.extract import Code, from_chat, from_completion
from ..scoring.execute.scorer import RunsTests
from .builtin import Builtin
from .code_prompts import code_loaded, code_questions
from .hub import HubSource, Loaded, Rows, fetch

NAME = "mbpp"
SOURCE = HubSource("google-research-datasets/mbpp", split="test", config="sanitized")
SIZE = 257
COLUMNS = ("task_id", "prompt", "code", "test_list")
DESCRIPTION = "MBPP (sanitized): Python problems checked by three asserts."
STOPS = ("\nclass", "\nassert", '\n"""', "\nprint", "\nif", "\n<|/", "\n```")  # bigcode-evaluation-harness's


@dataclass(frozen=True)
class MbppTests(RunsTests):
    """The item's asserts, one test each (`scoring.execute.scorer.CodeTests`), run as bigcode-evaluation-harness's
    `compute_code_eval` runs them (human-eval's execution, 3 s for the program and every assert: `RunsTests`);
    `test_imports` (`--test-imports`): the split's imports run before each assert, which bigcode never does."""

    test_imports: bool = False

    def code(self, item: Item, reply: str, completion: bool) -> Code:
        entry = item.metadata.get("entry_point")
        if completion:
            return from_completion("", reply)
        return from_chat(reply, "", entry if isinstance(entry, str) else None)

    def tests(self, item: Item) -> list[tuple[str, str]]:
        imports = "\n".join(item.metadata.get("test_imports") or []) if self.test_imports else ""
        return [(f"test {i + 1}", f"{imports}\n{t}" if imports else t)
                for i, t in enumerate(item.metadata["test_list"])]


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    rows = fetch(SOURCE, data_file)
    return code_loaded(NAME, DESCRIPTION, SOURCE, rows, to_questions(rows), STOPS, MbppTests())


def to_questions(rows: Rows) -> list[Question]:
    return code_questions(rows, COLUMNS, _question)


def _question(row: dict[str, Any]) -> Question:
    tests = row["test_list"]
    if isinstance(tests, str) or not tests or not all(isinstance(t, str) for t in tests):
        raise ValueError(f"test_list: expected a list of asserts, got {tests!r}")
    if not isinstance(row["prompt"], str) or not row["prompt"].strip():  # a null cell was asked as "None"
        raise ValueError(f"prompt: expected the problem's text, got {row['prompt']!r:.40}")
    imports = row.get("test_imports") or []
    if isinstance(imports, str) or not all(isinstance(i, str) for i in imports):
        raise ValueError(f"test_imports: expected a list of import lines, got {imports!r:.60}")
    prompt = f'"""\n{row["prompt"]}\n{tests[0]}\n"""\n'
    called = re.search(r"assert\s+(?:not\s+)?\(?\s*(?:set\(|math\.isclose\()?\s*([A-Za-z_]\w*)\s*\(", tests[0])
    return Question(id=0, original_id=str(row["task_id"]), question=prompt, choices={}, answer=str(row["code"]),
                    metadata={"task_id": row["task_id"], "test_list": list(tests), "test_imports": list(imports),
                              "entry_point": called.group(1) if called else None})


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "MBPP sanitized (Google): Python problems executed against three "
                      "asserts in the sandbox (pass@k)", max_tokens=512,
                      answer_rules={"completion": None, "chat": None}),)
