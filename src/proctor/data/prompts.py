"""What a model sees: the shared prompt rendering, and the builder for CommonEval items.

Every builder implements `proctor.data.tasks.PromptBuilder`: `messages(item, kind)` for generation,
`logprob_context(item)` for log-likelihood scoring (question, listed choices, then `Answer:`; the
continuations are " " + each choice's text) and `template_hash(kind)` for the run manifest.

Each built-in benchmark keeps its authors' templates in its own file (`proctor.benchmarks.<name>`),
built on `RenderedPrompts` / `PoolShotPrompts` from here.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from ..core.model import GenerationSpec, Message
from ..util.errors import ProctorError
from .records import Item, Modality
from .tasks import text_hash

ZERO_SHOT, CHAIN_OF_THOUGHT, FIVE_SHOT = "zero_shot", "chain_of_thought", "five_shot"
N_SHOTS = 5


class UnknownPromptKind(ProctorError):
    """A prompt kind the task does not offer."""


def check_kind(kind: str, kinds: Sequence[str], name: str) -> None:
    if kind not in kinds:
        raise UnknownPromptKind(f"{name} offers prompts {', '.join(kinds)}; got {kind!r}")


def choice_lines(choices: Mapping[str, str], style: str = "{letter}) {text}") -> str:
    """One line per option, e.g. `A) text` (generic), `A. text` (MMLU-Pro), `(A) text` (GPQA)."""
    return "\n".join(style.format(letter=k, text=v) for k, v in choices.items())


def letter_list(letters: str) -> str:
    """'A, B, C or D'."""
    return letters[0] if len(letters) == 1 else ", ".join(letters[:-1]) + " or " + letters[-1]


def pick_shots(pool: Sequence[Item], exclude: str, seed: int, k: int = N_SHOTS) -> list[Item]:
    """k examples from `pool`, never the item asked: ranked by a hash of (seed, identifier), so the
    choice is deterministic and does not depend on the pool's order."""

    def rank(it: Item) -> str:
        return hashlib.sha256(f"shots:{seed}:{it.identifier}".encode()).hexdigest()

    return sorted((it for it in pool if it.identifier.lower() != exclude.lower()), key=rank)[:k]


def pool_digest(items: Sequence[Item]) -> str:
    return text_hash(*(f"{it.identifier}\x1e{it.prompt}\x1e{it.best_answer}" for it in items))


class RenderedPrompts:
    """A builder whose generation prompt is one user message, the text `render` makes."""

    def render(self, item: Item, kind: str) -> str:
        raise NotImplementedError

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("user", self.render(item, kind)),)


@dataclass
class PoolShotPrompts(RenderedPrompts):
    """Templates per kind over an item's fields; five-shot examples are other items of `pool`, picked
    deterministically from the seed (`pick_shots`) and formatted with their best answer."""

    pool: list[Item] = field(default_factory=list)
    seed: int = 0
    kinds: tuple[str, ...] = ()  # each subclass gives its own, authors' default first

    benchmark: ClassVar[str]  # named in UnknownPromptKind messages
    TEMPLATES: ClassVar[dict[str, str]]
    EXAMPLE: ClassVar[str]  # one five-shot example: the item's fields plus {answer}

    def _fields(self, item: Item) -> dict[str, str]:
        """The template fields an item (asked, or shown as an example) fills."""
        raise NotImplementedError

    @property
    def templates(self) -> dict[str, str]:
        return dict(self.TEMPLATES)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, self.benchmark)
        examples = ""
        if kind == FIVE_SHOT:
            examples = "".join(
                self.EXAMPLE.format(**self._fields(ex), answer=ex.best_answer)
                for ex in pick_shots(self.pool, item.identifier, self.seed)
            )
        return self.TEMPLATES[kind].format(**self._fields(item), examples=examples)

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, self.benchmark)
        parts = [kind, self.TEMPLATES[kind]]
        if kind == FIVE_SHOT:
            parts += [self.EXAMPLE, f"seed={self.seed}", pool_digest(self.pool)]
        return text_hash(*parts)


# --------------------------------------------------------------------------- CommonEval items

GENERIC_INSTRUCTIONS: dict[str, str] = {
    "choice": "Answer with the letter of the correct choice only: {letters}.",
    Modality.BOOLEAN.value: "Answer True or False only.",
    Modality.TERNARY.value: "Answer True, False, or I don't know only.",
    Modality.CLOZE.value: "Fill in the blank (___). Answer with only the words that fill it.",
    Modality.SINGLE_VALUE.value: "Answer with a single word or value only.",
    Modality.SHORT_PROSE.value: "Answer in a few words.",
    Modality.LONG_PROSE.value: "",
}
GENERIC_COT = (
    "Think step by step, then give your final answer on the last line in the form 'Answer: <answer>'."
)


@dataclass
class ItemPromptBuilder:
    """Generic builder for CommonEval items: taskPrompt (the item's, else the dataset's) as the system
    message; the prompt, its choices as `A) text` lines and a modality instruction as the user message."""

    task_prompt: str | None = None
    kinds: tuple[str, ...] = (ZERO_SHOT, CHAIN_OF_THOUGHT)

    def instruction(self, item: Item) -> str:
        m = item.modality
        if m.is_choice:
            return GENERIC_INSTRUCTIONS["choice"].format(letters=letter_list(m.letters))
        return GENERIC_INSTRUCTIONS[m.value]

    def body(self, item: Item) -> str:
        """The item's prompt and its choices as `A) text` lines (what both the chat and the log-prob prompt show)."""
        parts = [item.prompt]
        if item.choices:
            parts.append(choice_lines(item.choices))
        return "\n\n".join(parts)

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        check_kind(kind, self.kinds, "a CommonEval item")
        instruction = self.instruction(item)
        if kind == CHAIN_OF_THOUGHT:
            instruction = (instruction + " " + GENERIC_COT).strip()
        user = self.body(item) + (f"\n\n{instruction}" if instruction else "")
        system = item.effective_task_prompt(self.task_prompt)
        msgs = [Message("system", system)] if system else []
        return (*msgs, Message("user", user))

    logprob_kinds: ClassVar[tuple[str, ...]] = (ZERO_SHOT,)  # the log-likelihood context is the zero-shot one
    logprob_kind: ClassVar[str] = ZERO_SHOT

    def logprob_context(self, item: Item) -> str:
        system = item.effective_task_prompt(self.task_prompt)
        head = f"{system}\n\n" if system else ""
        return f"{head}{self.body(item)}\nAnswer:"

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, "a CommonEval item")
        parts = [kind, *(f"{k}={v}" for k, v in sorted(GENERIC_INSTRUCTIONS.items()))]
        if kind == CHAIN_OF_THOUGHT:
            parts.append(GENERIC_COT)
        return text_hash(*parts)


# --------------------------------------------------------------------------- per-kind request settings


@dataclass(frozen=True)
class KindDefaults:
    """What a prompt kind's upstream script sends beside the prompt: stop sequences, a token budget."""

    stop: tuple[str, ...] = ()
    max_tokens: int | None = None
    system: str | None = None  # a system message (simple-evals' chat sampler)
    # the temperature upstream sends in place of proctor's default 0 (a temperature given otherwise wins);
    # `sends_temperature` False: upstream sends none (simple-evals' o-series sampler)
    temperature: float | None = None
    sends_temperature: bool = True
    sends_max_tokens: bool = True  # False: upstream sends no token limit (the o-series sampler); --max-tokens wins


def kind_defaults(builder: object, kind: str, family: str | None = None) -> KindDefaults:
    """The builder's `request_defaults(kind)` when it declares one (and knows the kind), else none; `family`: the
    model family the builder's upstream sends per (`model_family`: GPQA's simple-evals samplers)."""
    declared = getattr(builder, "request_defaults", None)
    kinds = getattr(builder, "kinds", ())
    if not callable(declared) or kind not in kinds:
        return KindDefaults()
    found = declared(kind, family) if family is not None else declared(kind)
    return found if isinstance(found, KindDefaults) else KindDefaults()


def kind_settings(builder: object, kind: str, settings: GenerationSpec) -> GenerationSpec:
    """`settings` plus the kind's stop sequences, and its token budget where --max-tokens was not given."""
    d = kind_defaults(builder, kind)
    stop = settings.stop + tuple(s for s in d.stop if s not in settings.stop)
    max_tokens = settings.max_tokens if settings.max_tokens is not None else d.max_tokens
    return settings.model_copy(update={"stop": stop, "max_tokens": max_tokens})


def bind_tokenizer(builder: object, count: Callable[[str], int] | None) -> None:
    """Give a builder that fits its prompts to a token budget (MMLU-Pro's tiger-local) the model's token counter
    (`proctor.run.pricing.token_counter`: an `hf:` model's tokenizer, or an `openai:` model's `tokenizer=`). Without
    one (None) the builder keeps its fallback."""
    if count is not None and hasattr(builder, "count_tokens") and builder.count_tokens is None:
        builder.count_tokens = count
