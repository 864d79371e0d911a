"""Prompts of the code benchmarks: the authors' completion prompt (the prompt's bytes, sent as plain text) and
proctor's chat prompt asking for the function in a fenced block."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ..core.model import Message
from ..data.prompts import KindDefaults
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from .hub import HubSource, Loaded, Rows, convert_rows

COMPLETION, CHAT = "completion", "chat"
CHAT_TEMPLATE = ("Complete the following Python code. Reply with the whole function in one ```python code block."
                 "\n\n```python\n{prompt}\n```")


@dataclass
class CodePrompts:
    """`completion` (the default, the authors'): the item's prompt as it is, continued by the model; `chat`
    (proctor's): the prompt inside an instruction, answered with the function in a fenced block."""

    benchmark: str
    stops: tuple[str, ...] = ()  # the authors' stop sequences of a completion
    kinds: tuple[str, ...] = (COMPLETION, CHAT)
    completion_kinds: ClassVar[frozenset[str]] = frozenset({COMPLETION})  # sent as plain text (`Task.sends_text`)

    def request_defaults(self, kind: str) -> KindDefaults:
        return KindDefaults(stop=self.stops if kind == COMPLETION else ())

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        text = item.prompt if kind == COMPLETION else CHAT_TEMPLATE.format(prompt=item.prompt.rstrip())
        return (Message("user", text),)

    def logprob_context(self, item: Item) -> str:
        return item.prompt

    def template_hash(self, kind: str) -> str:
        return text_hash(self.benchmark, kind, "" if kind == COMPLETION else CHAT_TEMPLATE)


def code_questions(rows: Rows, columns: Sequence[str], question: Callable[[dict[str, Any]], Question]) -> list[Question]:
    """A code benchmark's rows as Questions, numbered in file order (`question` checks and maps one row)."""
    return [q.model_copy(update={"id": i}) for i, q in enumerate(convert_rows(rows, tuple(columns), question))]


def code_loaded(name: str, description: str, source: HubSource, rows: Rows, questions: list[Question],
                stops: tuple[str, ...], tests: Any) -> Loaded:
    """A code benchmark as loaded: its Dataset, the completion/chat prompts and the tests its answers run."""
    dataset = Dataset(name=name, description=description, questions=questions, prompts={},
                      metadata={"source": source.repo, "split": source.split,
                                "revision": rows.provenance.get("revision")})
    return Loaded(dataset=dataset, prompts=CodePrompts(name, stops), provenance=dict(rows.provenance), code=tests)
