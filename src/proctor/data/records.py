"""The typed records proctor reads, converts and evaluates (pydantic v2).

* `Item` — CommonEval's Item (v3.3), the most general record, plus the extras a multiple-choice item needs.
* `Question` / `Dataset` — the benchmark data layer (MMLU-Pro, GPQA, AIME 2025).
* `Prompt` / `TestSuite` / `ContextCase` — probability scoring suites (probsem layout).

Spelling: on input we accept CommonEval's code spellings (`singlevalue`, `shortprose`, `longprose`,
ternary `Unknown`, JSON `true`/`false`) and the spec's (`single-value`, `I don't know`, `"True"`); a record
read from a file remembers how it was spelled (`proctor.data.formats.dialects`), so writing it back is
byte-identical. `choiceofN` for N from 6 to 26 is proctor's documented extension (MMLU-Pro has ten options).
"""

from __future__ import annotations

import re
import string
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationInfo,
    computed_field,
    field_validator,
    model_validator,
)

LETTERS = string.ascii_uppercase
MAX_CHOICES = len(LETTERS)
IDENTIFIER_RE = re.compile(r"^[-A-Za-z0-9_.]+\Z")


class Modality(StrEnum):
    """The spec's eleven modalities, plus choiceof6..choiceof26 and choiceof1 (extensions)."""

    BOOLEAN = "boolean"
    CHOICE2 = "choiceof2"
    CHOICE3 = "choiceof3"
    CHOICE4 = "choiceof4"
    CHOICE5 = "choiceof5"
    TERNARY = "ternary"
    CLOZE = "cloze"
    SINGLE_VALUE = "single-value"
    SHORT_PROSE = "short-prose"
    LONG_PROSE = "long-prose"
    # --- extension: more than five choices ---
    CHOICE6 = "choiceof6"
    CHOICE7 = "choiceof7"
    CHOICE8 = "choiceof8"
    CHOICE9 = "choiceof9"
    CHOICE10 = "choiceof10"
    CHOICE11 = "choiceof11"
    CHOICE12 = "choiceof12"
    CHOICE13 = "choiceof13"
    CHOICE14 = "choiceof14"
    CHOICE15 = "choiceof15"
    CHOICE16 = "choiceof16"
    CHOICE17 = "choiceof17"
    CHOICE18 = "choiceof18"
    CHOICE19 = "choiceof19"
    CHOICE20 = "choiceof20"
    CHOICE21 = "choiceof21"
    CHOICE22 = "choiceof22"
    CHOICE23 = "choiceof23"
    CHOICE24 = "choiceof24"
    CHOICE25 = "choiceof25"
    CHOICE26 = "choiceof26"
    CHOICE1 = "choiceof1"  # extension: a question whose only option is its answer (MMLU-Pro has five)

    @classmethod
    def parse(cls, value: str) -> Modality:
        """Accept the spec's spelling and CommonEval's code spellings (case-insensitive)."""
        key = value.strip().lower()
        key = MODALITY_ALIASES.get(key, key)
        try:
            return cls(key)
        except ValueError:
            known = ", ".join(m.value for m in SPEC_MODALITIES) + ", choiceof1, choiceof6..choiceof26"
            raise ValueError(f"unknown modality {value!r} (expected one of {known})") from None

    @classmethod
    def choice_of(cls, n: int) -> Modality:
        if not 1 <= n <= MAX_CHOICES:
            raise ValueError(f"a choice modality needs 1..{MAX_CHOICES} options, got {n}")
        return cls(f"choiceof{n}")

    @property
    def n_choices(self) -> int | None:
        """Number of options for a choiceofN modality, else None."""
        return int(self.value[len("choiceof"):]) if self.value.startswith("choiceof") else None

    @property
    def is_choice(self) -> bool:
        return self.n_choices is not None

    @property
    def letters(self) -> str:
        n = self.n_choices
        return LETTERS[:n] if n else ""

    @property
    def is_extension(self) -> bool:
        return self not in SPEC_MODALITIES

    @property
    def needs_judge(self) -> bool:
        return self in (Modality.SHORT_PROSE, Modality.LONG_PROSE)


SPEC_MODALITIES: tuple[Modality, ...] = tuple(list(Modality)[:10])
MODALITY_ALIASES = {
    "singlevalue": "single-value",
    "single_value": "single-value",
    "shortprose": "short-prose",
    "short_prose": "short-prose",
    "longprose": "long-prose",
    "long_prose": "long-prose",
    "bool": "boolean",
}

TRUE, FALSE, DONT_KNOW = "True", "False", "I don't know"
_BOOLEAN_INPUT = {"true": TRUE, "false": FALSE}
_TERNARY_INPUT = {**_BOOLEAN_INPUT, "i don't know": DONT_KNOW, "i don’t know": DONT_KNOW, "unknown": DONT_KNOW}


def canonical_closed_answer(modality: Modality, value: Any) -> str:
    """Normalise a boolean/ternary answer to the spec's spelling; raise ValueError if outside the set."""
    table = _TERNARY_INPUT if modality is Modality.TERNARY else _BOOLEAN_INPUT
    key = str(value).strip().lower() if not isinstance(value, bool) else str(value).lower()
    if key not in table:
        allowed = "True, False or I don't know" if modality is Modality.TERNARY else "True or False"
        raise ValueError(f"{modality.value} response must be {allowed}, got {value!r}")
    return table[key]


_OPTION_MARK = re.compile(r"(?:^|(?<=\s))[(\[]?([A-Z])[).:\]]\s+")


def parse_lettered_options(prompt: str, letters: str) -> dict[str, str] | None:
    """The options a spec-style choice prompt letters itself (`A) …`, `(B) …`, `C. …`, `D: …`).

    One option per line, or inline (`A) red B) blue`). Returns `{letter: text}` for exactly `letters`
    in order, or None when the prompt does not letter its options that way (the letters alone are
    then the choices).
    """
    if not letters:
        return None
    marks = [m for m in _OPTION_MARK.finditer(prompt)]
    # the last run A, B, C… in order: the options follow the question stem
    for start in range(len(marks) - len(letters), -1, -1):
        run = marks[start:start + len(letters)]
        if "".join(m.group(1) for m in run) != letters:
            continue
        ends = [m.start() for m in run[1:]] + [len(prompt)]
        texts = [prompt[m.end():end].strip() for m, end in zip(run, ends)]
        if "\n" in prompt[run[0].start():run[-1].start()]:  # one option per line: the last ends its line
            texts[-1] = texts[-1].split("\n", 1)[0].strip()
        if all(texts):
            return dict(zip(letters, texts))
    return None


def spec_choice_options(item: Item) -> tuple[dict[str, str], dict[str, str] | None] | None:
    """A choice item written to the spec (options lettered in its prompt, no `choices`): the letters as
    the continuations to score (`{"A": "A", …}`) and the option texts parsed from the prompt (None when
    the prompt does not letter them parseably). None for items that are not spec-style choice items."""
    if item.choices or not item.modality.is_choice:
        return None
    letters = item.modality.letters
    return {letter: letter for letter in letters}, parse_lettered_options(item.prompt, letters)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=False, str_strip_whitespace=False)


class _Spelled(_Record):
    """A record that may remember how its source spelled it; equality ignores the spelling."""

    _spelling: Any = PrivateAttr(default=None)

    @property
    def spelling(self) -> Any:
        """How the source file spelled this record (`proctor.data.formats.dialects`), or None."""
        return self._spelling

    def with_spelling(self, spelling: Any) -> None:
        self._spelling = spelling

    def __eq__(self, other: object) -> bool:
        if type(self) is not type(other) or not isinstance(other, BaseModel):
            return NotImplemented
        return self.__dict__ == other.__dict__

    __hash__ = None  # type: ignore[assignment]


class GradedAnswer(_Record):
    """One accepted answer with the credit it earns (spec: 'multiple levels of correctness')."""

    answer: str
    credit: float = Field(default=1.0, ge=0.0, le=1.0)


Response = str | list[GradedAnswer]


UNSCORED = "<unscored>"
"""The response of an item with no reference answer (a suite context with `expected = -1`): never scored."""


class Item(_Spelled):
    """A CommonEval benchmark item (v3.3) with proctor's multiple-choice extras.

    Validation errors carry the offending field in their location (`prompt`, `response`, `choices`…),
    so readers can report `path:line: field: message`.
    """

    identifier: str = Field(min_length=1)
    modality: Modality
    prompt: str = Field(min_length=1)
    response: Response
    difficulty: float | None = Field(default=None, ge=0.0, le=1.0)
    support: str | list[str] | None = None
    task_prompt: str | None = Field(default=None, alias="taskPrompt")
    # extras (seed 001): options of a choice item keyed by letter, grouping, free metadata
    choices: dict[str, str] | None = None
    category: str | None = None
    subcategory: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _commoneval_otherargs(cls, data: Any) -> Any:
        """CommonEval's code keeps extras in `otherargs` (choices as a list): fold them into our fields."""
        if isinstance(data, dict) and isinstance(data.get("otherargs"), dict):
            data = dict(data)
            other = dict(data.pop("otherargs"))
            listed = other.pop("choices", None)
            if isinstance(listed, list) and "choices" not in data:
                data["choices"] = dict(zip(LETTERS, listed))
            for key, kind in (("category", str), ("subcategory", str), ("tags", list)):
                value = other.get(key)
                if key not in data and isinstance(value, kind) and (kind is str or all(
                        isinstance(t, str) for t in value)):
                    data[key] = other.pop(key)
            if other:
                data["metadata"] = {**other, **(data.get("metadata") or {})}
        return data

    @field_validator("identifier")
    @classmethod
    def _web_friendly(cls, v: str) -> str:
        if not IDENTIFIER_RE.fullmatch(v):
            raise ValueError(f"identifier {v!r} must use only letters, digits, '-', '_' and '.'")
        return v

    @field_validator("modality", mode="before")
    @classmethod
    def _parse_modality(cls, v: Any) -> Any:
        return Modality.parse(v) if isinstance(v, str) else v

    @field_validator("prompt")
    @classmethod
    def _cloze_blank(cls, v: str, info: ValidationInfo) -> str:
        if info.data.get("modality") is Modality.CLOZE and "___" not in v:
            raise ValueError("a cloze prompt must contain the blank '___'")
        return v

    @field_validator("response", mode="before")
    @classmethod
    def _json_scalars(cls, v: Any) -> Any:
        if isinstance(v, bool):
            return TRUE if v else FALSE
        if isinstance(v, (int, float)):
            return str(v)
        return v

    @field_validator("response")
    @classmethod
    def _check_response(cls, v: Response, info: ValidationInfo) -> Response:
        if v == UNSCORED:
            return v
        m = info.data.get("modality")
        graded = isinstance(v, list)
        if graded and not v:
            raise ValueError("graded response list is empty")
        answers = [g.answer for g in v] if isinstance(v, list) else [v]
        if all(not a.strip() for a in answers):
            raise ValueError("response is empty")
        if m in (Modality.BOOLEAN, Modality.TERNARY):
            canon = [canonical_closed_answer(m, a) for a in answers]
        elif isinstance(m, Modality) and m.is_choice:
            letters = m.letters
            canon = []
            for a in answers:
                letter = a.strip().upper()
                if len(letter) != 1 or letter not in letters:
                    raise ValueError(
                        f"answer {a!r} is not a choice letter of {m.value} ({letters[0]}-{letters[-1]})"
                    )
                canon.append(letter)
        else:
            return v
        if isinstance(v, list):
            return [GradedAnswer(answer=c, credit=g.credit) for c, g in zip(canon, v)]
        return canon[0]

    @field_validator("choices")
    @classmethod
    def _choices_match(cls, v: dict[str, str] | None, info: ValidationInfo) -> dict[str, str] | None:
        m = info.data.get("modality")
        if v is None or not isinstance(m, Modality):
            return v
        if not m.is_choice:
            raise ValueError(f"choices only apply to choiceofN modalities, not {m.value}")
        if list(v) != list(m.letters):
            raise ValueError(f"choice keys {''.join(v)} do not match {m.value} (expected {m.letters})")
        return v

    @property
    def is_scored(self) -> bool:
        """False for an item whose response is the `UNSCORED` marker."""
        return self.response != UNSCORED

    @property
    def accepted(self) -> list[GradedAnswer]:
        """Every accepted answer with its credit (a plain response is one answer at full credit)."""
        if isinstance(self.response, list):
            return list(self.response)
        if self.response == UNSCORED:
            return []
        return [GradedAnswer(answer=self.response, credit=1.0)]

    @property
    def best_answer(self) -> str:
        """The answer with the highest credit (`UNSCORED` for an unscored item)."""
        accepted = self.accepted
        return max(accepted, key=lambda g: g.credit).answer if accepted else UNSCORED

    def effective_task_prompt(self, dataset_task_prompt: str | None) -> str | None:
        """The spec's precedence: the item's taskPrompt wins over the dataset's."""
        return self.task_prompt if self.task_prompt is not None else dataset_task_prompt

    def to_json(self) -> dict[str, Any]:
        """The item as CommonEval JSON: spec spelling, camelCase, unset optional fields omitted."""
        out: dict[str, Any] = {
            "identifier": self.identifier,
            "modality": self.modality.value,
            "prompt": self.prompt,
            "response": (
                [g.model_dump(mode="json") for g in self.response]
                if isinstance(self.response, list)
                else self.response
            ),
        }
        optional: dict[str, Any] = {
            "difficulty": self.difficulty,
            "support": self.support,
            "taskPrompt": self.task_prompt,
            "choices": self.choices,
            "category": self.category,
            "subcategory": self.subcategory,
        }
        out.update({k: v for k, v in optional.items() if v is not None})
        if self.tags:
            out["tags"] = list(self.tags)
        if self.metadata:
            out["metadata"] = dict(self.metadata)
        return out


class ItemSet(_Spelled):
    """A CommonEval dataset: metadata from `<id>.yaml` plus its items."""

    identifier: str
    name: str | None = None
    description: str | None = None
    task_prompt: str | None = Field(default=None, alias="taskPrompt")
    version: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    items: list[Item] = Field(default_factory=list)

    def task_prompt_for(self, item: Item) -> str | None:
        return item.effective_task_prompt(self.task_prompt)


class Question(_Record):
    """A benchmark question (seed 001). `choices` is empty for open-answer benchmarks such as AIME. `id` is seed 001's
    integer, or a dataset's own string id (ARC's `Mercury_7175875`): web-friendly characters, as an Item identifier
    (CommonEval), since the item's identifier is `<dataset>.<id>`."""

    id: int | str
    original_id: str
    question: str
    choices: dict[str, str]
    answer: str
    category: str | None = None
    subcategory: str | None = None
    difficulty: str | None = None
    tags: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _web_friendly_id(cls, v: int | str) -> int | str:
        if isinstance(v, str) and not IDENTIFIER_RE.fullmatch(v):
            raise ValueError(f"id {v!r} must be an integer, or use only letters, digits, '-', '_' and '.'"
                             if v else "the id is empty")
        return v

    @field_validator("answer")
    @classmethod
    def _answer_in_choices(cls, v: str, info: ValidationInfo) -> str:
        choices = info.data.get("choices")
        if choices and v not in choices:
            raise ValueError(f"answer {v!r} is not one of the choices {''.join(choices)}")
        return v


class Dataset(_Record):
    """A named list of questions with the benchmark's default prompts (seed 001)."""

    name: str
    questions: list[Question]
    prompts: dict[str, str] = Field(default_factory=dict)
    description: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="before")
    @classmethod
    def _drop_derived(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: v for k, v in data.items() if k not in ("categories", "questions_by_category")}
        return data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def categories(self) -> list[str]:
        """Categories in order of first appearance."""
        return list(dict.fromkeys(q.category for q in self.questions if q.category is not None))

    @property
    def questions_by_category(self) -> dict[str, list[Question]]:
        out: dict[str, list[Question]] = {c: [] for c in self.categories}
        for q in self.questions:
            if q.category is not None:
                out[q.category].append(q)
        return out


class ContextCase(_Record):
    """One context of a test suite and the index of the query expected to win (-1: not scored)."""

    text: str
    expected: int = Field(ge=-1)


class TestSuite(_Record):
    """A probsem test suite: every context × query pair is scored by log-probability."""

    __test__ = False  # not a pytest class

    name: str = ""
    pretext: str = ""
    context: list[ContextCase]
    posttext: str = ""
    queries: list[str]

    @field_validator("queries")
    @classmethod
    def _queries_ok(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("queries must not be empty")
        if any(not q.strip() for q in v):
            raise ValueError("every query must be non-empty")
        dup = sorted({q for q in v if v.count(q) > 1})
        if dup:
            raise ValueError(f"queries must be distinct; repeated: {dup}")
        return v

    @model_validator(mode="after")
    def _expected_in_range(self) -> TestSuite:
        for i, c in enumerate(self.context):
            if c.expected >= len(self.queries):
                raise ValueError(
                    f"context[{i}].expected = {c.expected} is out of range for {len(self.queries)} queries"
                    " (use -1 for not scored)"
                )
        return self


class Prompt(_Record):
    """The general context prepended to every evaluation of its suites."""

    name: str
    text: str
