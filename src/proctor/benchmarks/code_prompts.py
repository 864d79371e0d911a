"""Prompts of the code benchmarks: the authors' completion prompt (the prompt's bytes, sent as plain text) and
proctor's chat prompt asking for the function in a fenced block."""

from __future__ import annotations

from dataclasses import dataclass

from ..data.prompts import KindDefaults
from ..data.records import Item
from ..data.tasks import text_hash
from ..models.base import Message

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

    def request_defaults(self, kind: str) -> KindDefaults:
        return KindDefaults(stop=self.stops if kind == COMPLETION else ())

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        text = item.prompt if kind == COMPLETION else CHAT_TEMPLATE.format(prompt=item.prompt.rstrip())
        return (Message("user", text),)

    def logprob_context(self, item: Item) -> str:
        return item.prompt

    def template_hash(self, kind: str) -> str:
        return text_hash(self.benchmark, kind, "" if kind == COMPLETION else CHAT_TEMPLATE)
