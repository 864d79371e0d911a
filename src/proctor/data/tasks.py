"""A Task is what the runner evaluates: items, how to prompt for them, how to score them, and where they came from."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..core.model import Message
from .records import Item

if TYPE_CHECKING:
    from ..scoring.base import Scorer
    from ..scoring.execute.scorer import CodeTests
    from ..scoring.extract import AnswerRule


class PromptBuilder(Protocol):
    """Turns an item into what a model sees, for each prompt kind a benchmark offers."""

    kinds: tuple[str, ...]  # e.g. ("zero_shot", "chain_of_thought", "five_shot"); the first is the default

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        """Chat messages for generation."""
        ...

    def logprob_context(self, item: Item) -> str:
        """Plain-text context for scoring each choice by log-likelihood (ends just before the answer)."""
        ...

    def template_hash(self, kind: str) -> str:
        """A stable hash of the template text, recorded in the manifest."""
        ...


@dataclass
class Task:
    name: str
    items: list[Item]
    prompts: PromptBuilder
    source: dict[str, Any] = field(default_factory=dict)  # source, config, split, revision, path…
    choice_order_seed: int | None = None
    task_prompt: str | None = None  # dataset-level taskPrompt (CommonEval)
    scorer: Scorer | None = None  # None: the runner picks by mode (generation, choice or suite log-likelihood)
    default_max_tokens: int | None = None  # the benchmark's generation budget, used when --max-tokens is not given
    # prompt kind → the reference answer rule that scores it (proctor.scoring.extract); a kind not here is
    # read by proctor's reader alone
    answer_rules: dict[str, AnswerRule] = field(default_factory=dict)
    default_mode: Literal["generate", "logprob"] | None = None  # the benchmark's scoring mode when --mode is not given
    # the item attribute whose items share errors (a passage, a source, a subject): accuracy intervals count
    # these clusters, not items (proctor.stats.intervals.clustered_accuracy); "category", "subcategory" or "metadata.KEY"
    cluster: str | None = None
    code: CodeTests | None = None  # a code benchmark: its answers are programs run against its tests (sandboxed)

    def answer_rule(self, kind: str) -> AnswerRule | None:
        """The reference rule that reads answers to prompt `kind` (None: proctor's reader alone)."""
        return self.answer_rules.get(kind)

    def sends_text(self, kind: str) -> bool:
        """Whether prompts of `kind` are asked as one plain text (a completion, no chat template): the builder's
        `--format completion` (spec benchmarks, few-shot item prompts), or a kind that is one (`completion_kinds`:
        the code benchmarks' authors' prompt). Requests carry it (`GenerateRequest.completion`)."""
        prompts = self.prompts
        return bool(getattr(prompts, "completion", False)) or kind in getattr(prompts, "completion_kinds", ())

    @cached_property
    def content_hash(self) -> str:
        """sha256 over the items' canonical JSON: identifies exactly what was evaluated."""
        h = hashlib.sha256()
        for item in self.items:
            h.update(json.dumps(item.model_dump(mode="json", by_alias=True), sort_keys=True).encode())
            h.update(b"\n")
        return "sha256:" + h.hexdigest()

    def prompt_identity(self) -> dict[str, Any]:
        """What the prompts add to a run's identity beyond the items (a spec benchmark: shots, format, the
        templates' hash); empty for builders that declare nothing."""
        declared = getattr(self.prompts, "identity", None)
        return dict(declared()) if callable(declared) else {}

    def provenance(self) -> dict[str, Any]:
        return {"name": self.name, **self.source, "n_items": len(self.items), "content_hash": self.content_hash}


def default_no_answer(task: Task, kind: str | None, extract: str = "reference") -> str:
    """How results count a reply no rule could read, unless --no-answer says: as the reference rule of prompt
    `kind` counts it (TIGER-Lab's MMLU-Pro kinds: "guess", 1/k), else "wrong" (proctor's own kinds, and any
    run scored by proctor's robust reader)."""
    rule = task.answer_rule(kind) if kind is not None and extract == "reference" else None
    return rule.no_answer if rule is not None else "wrong"


def cluster_value(item: Item, attribute: str | None) -> str | None:
    """The item's value of the cluster attribute (None: it has none, or no attribute is chosen)."""
    if attribute is None:
        return None
    if attribute in ("category", "subcategory"):
        value = getattr(item, attribute)
    else:
        value = item.metadata.get(attribute.removeprefix("metadata."))
    return None if value is None or value == "" else str(value)


def text_hash(*parts: str) -> str:
    """Short stable hash of template text."""
    return "sha256:" + hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:16]
