"""How a spec benchmark is asked: lm-evaluation-harness's prompt assembly, from the spec's templates.

A prompt is `description + Σ(example question + target_delimiter + example target + fewshot_delimiter) +
question` (lm-eval's `fewshot_context` rendered as plain text); `--format chat` sends the same parts as
lm-eval's chat rendering with few-shot as turns (`--apply_chat_template --fewshot_as_multiturn`): the
description as the system message, each example a user turn and its target an assistant turn. Options
scored by log-likelihood are `target_delimiter + option text` (or `+ letter`, MMLU), and acc_norm divides
by the characters of what follows the delimiter, as lm-eval does.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.model import Message
from ..data.fewshot import shots_identity
from ..data.prompts import KindDefaults, check_kind, pool_digest
from ..data.records import Item
from ..data.tasks import text_hash
from .spec import BenchmarkSpec
from .spec_template import render

Format = Literal["completion", "chat"]
FORMATS: tuple[str, ...] = ("completion", "chat")
BLANK = "_"  # Winogrande's blank, filled by each option (scoring.continuation: blank)
_META = "question."  # proctor.data.formats.convert's prefix for Question fields kept on an Item


def item_fields(item: Item, choice_format: str, names: tuple[str, ...]) -> dict[str, Any]:
    """What a prompt template may name, for one item (seed-001 Question fields, `choices` formatted)."""
    choices = item.choices or {}
    answer = item.best_answer
    meta = item.metadata
    out: dict[str, Any] = {
        "question": item.prompt,
        "choices": "\n".join(render(choice_format, {"letter": k, "text": v}) for k, v in choices.items()),
        "answer": answer,
        "answer_text": choices.get(answer, answer),
        "category": item.category or "",
        "subcategory": item.subcategory or "",
        "difficulty": meta.get(_META + "difficulty", item.difficulty if item.difficulty is not None else ""),
        "id": meta.get(_META + "id", item.identifier),
        "original_id": meta.get(_META + "original_id", item.identifier),
    }
    out.update({name: meta.get(name, "") for name in names})
    return out


def _spaced(text: Any) -> Any:
    """Text with its runs of whitespace as one space and its ends stripped (anything else as it is)."""
    return " ".join(text.split()) if isinstance(text, str) else text


@dataclass
class SpecPrompts:
    """The prompt builder of a spec benchmark (`proctor.data.tasks.PromptBuilder`)."""

    spec: BenchmarkSpec
    pool: list[Item] = field(default_factory=list)  # few-shot examples, in upstream order
    order: list[str] = field(default_factory=list)  # every item's identifier in evaluation order (seeded draws)
    same_split: bool = False  # the examples come from the evaluated split: the asked item is never shown
    overlap: bool = False  # the pool holds some asked questions again (by content): seeded draws take k + 1
    shots: int | None = None  # --shots: overrides every kind's count
    format: Format = "completion"
    kind: str | None = None  # --prompt: the kind log-likelihood contexts are built from (None: the spec's first)
    kinds: tuple[str, ...] = field(init=False)
    _plans: dict[int, dict[str, list[int]]] = field(default_factory=dict, init=False, repr=False)
    _shown: dict[tuple[str, str], str] = field(default_factory=dict, init=False, repr=False)  # fewshot_texts

    def __post_init__(self) -> None:
        self.kinds = tuple(self.spec.prompts)

    # ------------------------------------------------------------------ pieces

    def n_shots(self, kind: str) -> int:
        return self.shots if self.shots is not None else self.spec.prompts[kind].shots

    def _fields(self, item: Item) -> dict[str, Any]:
        return item_fields(item, self.spec.choice_format, tuple(self.spec.fields.metadata))

    def question(self, item: Item, kind: str) -> str:
        return render(self.spec.prompts[kind].template, self._fields(item))

    def target(self, item: Item) -> str:
        if self.blank:
            return self._after_blank(item, self.spec.default_kind)
        return render(self.spec.target, self._fields(item))

    @property
    def blank(self) -> bool:
        return self.spec.scoring.continuation == "blank"

    def _filled(self, item: Item, kind: str) -> list[str]:
        """Blank mode: the question up to its blank, filled by each option (lm-eval winogrande's doc_to_choice)."""
        q = self.question(item, kind)
        return [q[: q.index(BLANK)] + option for option in (item.choices or {}).values()]

    def _after_blank(self, item: Item, kind: str) -> str:
        q = self.question(item, kind)
        return q[q.index(BLANK) + 1:].strip()

    def _example_question(self, item: Item, kind: str) -> str:
        """An example's question: blank mode shows it filled by its correct option."""
        if not self.blank:
            return self.question(item, kind)
        return self._filled(item, kind)[list(item.choices or {}).index(item.best_answer)]

    def description(self, item: Item) -> str:
        return render(self.spec.description_template, self._fields(item))

    def examples(self, item: Item, kind: str) -> list[Item]:
        """The few-shot examples shown before `item`, by the spec's selection; never `item` itself."""
        k = self.n_shots(kind)
        if k == 0 or self.spec.fewshot is None:
            return []
        selection = self.spec.fewshot.selection
        if selection == "seeded":
            drawn = (self.pool[i] for i in self._plan(k).get(item.identifier, []))
            return [p for p in drawn if not self._is_asked(p, item)][:k]
        pool = [p for p in self.pool if not self._is_asked(p, item)]
        if selection == "same_category":
            pool = [p for p in pool if p.category == item.category]
        return pool[:k]

    @staticmethod
    def content(item: Item) -> tuple[object, ...]:
        """What makes two rows the same question (hashable): its text, its options in any order and its answer's
        text, runs of whitespace read as one space (a shuffled or re-spaced copy is the same question)."""
        choices = item.choices or {}
        answer = choices.get(item.response, item.response) if isinstance(item.response, str) else item.response
        return _spaced(item.prompt), tuple(sorted(_spaced(c) for c in choices.values())), _spaced(answer)

    def _is_asked(self, example: Item, item: Item) -> bool:
        """`example` is the question asked: its row (the pool is the evaluated split) or its content (a pool
        file, another split name or a data folder that holds the test rows again)."""
        if self.same_split and example.identifier == item.identifier:
            return True
        return self.content(example) == self.content(item)

    def _plan(self, k: int) -> dict[str, list[int]]:
        """lm-eval's default sampler: one `Random(seed)`, `sample(pool, k)` drawn for each question in order
        (k + 1 when the pool is the evaluated split, holds asked questions again, or the spec says `draw_extra`;
        `examples` then drops the asked row and keeps k)."""
        if k not in self._plans:
            assert self.spec.fewshot is not None
            rnd = random.Random(self.spec.fewshot.seed)
            n = len(self.pool)
            extra = self.same_split or self.overlap or self.spec.fewshot.draw_extra
            self._plans[k] = {ident: rnd.sample(range(n), min(k + 1 if extra else k, n)) for ident in self.order}
        return self._plans[k]

    # ------------------------------------------------------------------ PromptBuilder

    def text(self, item: Item, kind: str) -> str:
        """The plain-text prompt (lm-eval without a chat template), byte for byte."""
        check_kind(kind, self.kinds, self.spec.name)
        return self._prefix(item, kind) + self.question(item, kind)

    def _prefix(self, item: Item, kind: str) -> str:
        """The description and the examples, each `question + target_delimiter + target + fewshot_delimiter`."""
        spec = self.spec
        shots = "".join(self._example_question(ex, kind) + spec.target_delimiter + self.target(ex)
                        + spec.fewshot_delimiter for ex in self.examples(item, kind))
        return self.description(item) + shots

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        if self.format == "completion":
            return (Message("user", self.text(item, kind)),)
        check_kind(kind, self.kinds, self.spec.name)
        description = self.description(item)
        turns = [Message("system", description)] if description else []
        for ex in self.examples(item, kind):
            turns += [Message("user", self._example_question(ex, kind)), Message("assistant", self.target(ex))]
        return (*turns, Message("user", self.question(item, kind)))

    @property
    def completion(self) -> bool:
        """Generation requests carry the plain text, sent without a chat template (`--format completion`)."""
        return self.format == "completion"

    @property
    def scoring_kind(self) -> str:
        """The prompt kind log-likelihood contexts are built from: the run's (--prompt), else the spec's first."""
        return self.kind or self.spec.default_kind

    @property
    def logprob_kinds(self) -> tuple[str, ...]:
        """Every kind can be scored by log-likelihood (its template and shots make the context)."""
        return self.kinds

    @property
    def logprob_kind(self) -> str:
        return self.scoring_kind

    def logprob_context(self, item: Item) -> str:
        """The context options are scored after (blank mode: the first option's)."""
        return self.choice_pairs(item)[0][0]

    def choice_pairs(self, item: Item) -> list[tuple[str, str]]:
        """(context, continuation) per option: the prompt and target_delimiter + the option's text (or letter);
        blank mode: the prompt with the blank filled by the option, and what follows the blank."""
        kind = self.scoring_kind
        delimiter = self.spec.target_delimiter
        if self.blank:
            prefix, rest = self._prefix(item, kind), delimiter + self._after_blank(item, kind)
            return [(prefix + filled, rest) for filled in self._filled(item, kind)]
        context = self.text(item, kind)
        by_letter = self.spec.scoring.continuation == "letter"
        return [(context, delimiter + (k if by_letter else v)) for k, v in (item.choices or {}).items()]

    @property
    def boundary(self) -> str:
        """The token-boundary rule its log-likelihood requests are sent with (`scoring.token_boundary`)."""
        return self.spec.scoring.boundary

    def continuations(self, item: Item) -> list[str]:
        return [c for _, c in self.choice_pairs(item)]

    def norm_texts(self, item: Item) -> list[str]:
        """What acc_norm divides by the length of, as lm-eval: each choice (the option's text or letter; blank
        mode: the question filled by the option)."""
        if self.blank:
            return self._filled(item, self.scoring_kind)
        return [c[len(self.spec.target_delimiter):] for c in self.continuations(item)]

    def request_defaults(self, kind: str) -> KindDefaults:
        return KindDefaults(stop=self.spec.scoring.stop, max_tokens=self.spec.scoring.max_tokens)

    def fewshot_texts(self, item: Item, kind: str) -> list[str]:
        """Each example shown before `item` under `kind`, as sent: its question, the target delimiter, its target
        (an example's text depends on it alone: rendered once per kind)."""
        out = []
        for ex in self.examples(item, kind):
            key = (kind, ex.identifier)
            if key not in self._shown:
                self._shown[key] = self._example_question(ex, kind) + self.spec.target_delimiter + self.target(ex)
            out.append(self._shown[key])
        return out

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, self.spec.name)
        s = self.spec
        parts = [kind, s.prompts[kind].template, s.description_template, s.target, s.choice_format,
                 repr(s.target_delimiter), repr(s.fewshot_delimiter), f"shots={self.n_shots(kind)}",
                 f"format={self.format}", s.scoring.continuation]
        if s.scoring.boundary != "lm-eval":  # proctor's own boundary, by name (lm-eval's is the default)
            parts.append(f"boundary={s.scoring.boundary}")
        if self.n_shots(kind) and s.fewshot is not None:
            parts += [s.fewshot.selection, f"seed={s.fewshot.seed}", pool_digest(self.pool)]
            if self.overlap:  # the pool holds asked questions again: they are never shown (main 81a90f9 showed them)
                parts.append("asked=never-shown")
            if s.fewshot.draw_extra:  # other examples drawn (#41 item 2)
                parts.append("draw_extra")
        return text_hash(*parts)

    def identity(self) -> dict[str, Any]:
        """What the run id must change with beyond the items: shots and format when chosen, the prompts' hash."""
        return shots_identity(self, default_format="completion")
