"""Few-shot examples for any item data (`--shots K`, `--fewshot-from PATH`, `--prompt five_shot`).

`FewShotPrompts` wraps the generic CommonEval builder (`prompts.ItemPromptBuilder`): before the asked item
come the first K items of the pool (a file the user names, else the dataset itself, never the item asked),
each with its reference answer. In chat format (the default for item data) each example is a user turn (the
same text the item gets) and its answer an assistant turn; in completion format everything is one text, each
example followed by `Answer: <answer>` and a blank line. Log-likelihood contexts carry the examples as
`…\\nAnswer: <option text>\\n\\n` before the asked item's `…\\nAnswer:`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ..core.model import Message
from .prompts import CHAIN_OF_THOUGHT, FIVE_SHOT, N_SHOTS, ItemPromptBuilder, check_kind, pool_digest
from .records import Item
from .tasks import text_hash


class _WithShots(Protocol):
    @property
    def kinds(self) -> tuple[str, ...]: ...
    @property
    def shots(self) -> int | None: ...
    @property
    def format(self) -> str: ...

    def template_hash(self, kind: str) -> str: ...


def shots_identity(builder: _WithShots, default_format: str) -> dict[str, Any]:
    """What a few-shot builder adds to a run's identity: a hash over every kind's prompts, and the shots and
    format when they differ from the defaults (so runs made without them keep their ids)."""
    out: dict[str, Any] = {"prompt_hash": text_hash(*(builder.template_hash(k) for k in builder.kinds))}
    if builder.shots is not None:
        out["shots"] = builder.shots
    if builder.format != default_format:
        out["format"] = builder.format
    return out


def fewshot_hash(prompts: object, items: Iterable[Item], kind: str | None) -> str | None:
    """sha256 over the few-shot examples shown before each item under prompt `kind`, item by item, as the builder
    renders them (its `fewshot_texts(item, kind)`): what a run's id must change with when an example's text does
    (#41 item 2). None when no item is shown an example (a zero-shot kind, a builder without examples), so a
    zero-shot run's id is what it was."""
    shown = getattr(prompts, "fewshot_texts", None)
    if kind is None or not callable(shown):
        return None
    h, seen = hashlib.sha256(), False
    digests: dict[str, bytes] = {}
    for item in items:
        texts: Sequence[str] = shown(item, kind)
        if not texts:
            continue
        seen = True
        h.update(item.identifier.encode() + b"\x1f")
        for text in texts:  # one digest per distinct text: MMLU-Pro shows a category's examples to all its items
            if text not in digests:
                digests[text] = hashlib.sha256(text.encode()).digest()
            h.update(digests[text])
        h.update(b"\n")
    return "sha256:" + h.hexdigest() if seen else None


def example_answer(item: Item, as_text: bool) -> str:
    """An example's answer: a choice item's letter (what the generic prompt asks for) or option text
    (`as_text`, a log-likelihood continuation); any other item's reference answer."""
    answer = item.best_answer
    if as_text and item.choices and answer in item.choices:
        return item.choices[answer]
    return answer


@dataclass
class FewShotPrompts:
    """`ItemPromptBuilder` with K examples before each item (`proctor.data.tasks.PromptBuilder`)."""

    base: ItemPromptBuilder
    pool: list[Item] = field(default_factory=list)
    shots: int | None = None  # --shots; None: the kind's own (five_shot: 5, the others 0)
    format: Literal["completion", "chat"] = "chat"
    kind: str | None = None  # --prompt: the kind log-likelihood contexts are built from (None: the first)
    kinds: tuple[str, ...] = field(init=False)
    _shown: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)  # fewshot_texts

    def __post_init__(self) -> None:
        self.kinds = (*self.base.kinds, *((FIVE_SHOT,) if FIVE_SHOT not in self.base.kinds else ()))

    def n_shots(self, kind: str) -> int:
        return self.shots if self.shots is not None else (N_SHOTS if kind == FIVE_SHOT else 0)

    def examples(self, item: Item, kind: str) -> list[Item]:
        return [p for p in self.pool if p.identifier != item.identifier][: self.n_shots(kind)]

    def _base_kind(self, kind: str) -> str:
        return self.base.kinds[0] if kind == FIVE_SHOT and FIVE_SHOT not in self.base.kinds else kind

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        check_kind(kind, self.kinds, "item data")
        asked = self.base.messages(item, self._base_kind(kind))
        system, last = [m for m in asked if m.role == "system"], asked[-1]
        turns: list[Message] = []
        for ex in self.examples(item, kind):
            turns += [Message("user", self.base.messages(ex, self._base_kind(kind))[-1].content),
                      Message("assistant", example_answer(ex, as_text=False))]
        if self.format == "chat":
            return (*system, *turns, last)
        text = "".join(f"{u.content}\nAnswer: {a.content}\n\n" for u, a in zip(turns[::2], turns[1::2]))
        return (*system, Message("user", text + last.content))

    @property
    def completion(self) -> bool:
        return self.format == "completion"

    @property
    def logprob_kinds(self) -> tuple[str, ...]:
        """The kinds a log-likelihood context can carry: all but chain of thought (nothing is generated)."""
        return tuple(k for k in self.kinds if k != CHAIN_OF_THOUGHT)

    @property
    def logprob_kind(self) -> str:
        return self.kind or self.kinds[0]

    def logprob_context(self, item: Item) -> str:
        system = item.effective_task_prompt(self.base.task_prompt)
        head = f"{system}\n\n" if system else ""
        shots = "".join(f"{self.base.body(ex)}\nAnswer: {example_answer(ex, as_text=True)}\n\n"
                        for ex in self.examples(item, self.logprob_kind))
        return head + shots + self.base.body(item) + "\nAnswer:"

    def fewshot_texts(self, item: Item, kind: str) -> list[str]:
        """Each example shown before `item`: its text, and its answer as a letter and as option text (rendered
        once per example and kind)."""
        base, out = self._base_kind(kind), []
        for ex in self.examples(item, kind):
            key = (kind, ex.identifier)
            if key not in self._shown:
                self._shown[key] = (f"{self.base.messages(ex, base)[-1].content}\x1f{self.base.body(ex)}\x1f"
                                    f"{example_answer(ex, as_text=False)}\x1f{example_answer(ex, as_text=True)}")
            out.append(self._shown[key])
        return out

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, "item data")
        return text_hash(self.base.template_hash(self._base_kind(kind)), f"shots={self.n_shots(kind)}",
                         f"format={self.format}", pool_digest(self.pool))

    def identity(self) -> dict[str, Any]:
        """Shots and format (when chosen) and a hash of every kind's prompts: part of the run's identity."""
        return shots_identity(self, default_format="chat")
