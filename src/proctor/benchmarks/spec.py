"""A benchmark is a file: `BenchmarkSpec` is seed 001's Dataset declared in YAML (or JSON).

The spec names the Dataset (`name`, `description`, `metadata`, `categories`, the `prompts` dict) and says
where its rows come from (a Hugging Face dataset pinned to a revision, or local files), how a row maps onto
a Question, where few-shot examples come from, and how answers are scored. Everything is data: templates
use `{field}` and a closed set of named transforms (`proctor.benchmarks.spec_template`), answer rules are
names in `proctor.scoring.extract.ANSWER_RULES`. docs/benchmarks-data.md documents every field.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from ..errors import InputError, Problem
from ..textio import read_text
from .spec_template import TemplateError, check_transforms, fields_of

SPEC_SUFFIXES = (".yaml", ".yml", ".json")
FIVE_SHOT = "five_shot"
# what a prompt template may name: the Question's fields, `choices` as the formatted lines, and `answer_text`
PROMPT_FIELDS = ("question", "choices", "answer", "answer_text", "category", "subcategory", "difficulty", "id",
                 "original_id")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _check_template(value: str) -> str:
    try:
        fields_of(value)
    except TemplateError as e:
        raise ValueError(str(e)) from None
    return value


class Text(_Strict):
    """A text made from a row: a template over its columns, then transforms over the whole text."""

    template: str
    transforms: tuple[str, ...] = ()

    _template = field_validator("template")(_check_template)

    @field_validator("transforms")
    @classmethod
    def _known(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        try:
            check_transforms(v)
        except TemplateError as e:
            raise ValueError(str(e)) from None
        return v


def _as_text(value: Any) -> Any:
    return {"template": value} if isinstance(value, str) else value


class Choices(_Strict):
    """The options: a list column (`list: choices.text`) or one column per option (`columns: [A, B, C, D]`),
    each option transformed; `labels` is the column of upstream labels an answer `as: label` is found in."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_list: str | None = Field(default=None, alias="list")
    columns: tuple[str, ...] | None = None
    labels: str | None = None
    transforms: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_source(self) -> Choices:
        if (self.from_list is None) == (self.columns is None):
            raise ValueError("give exactly one of `list` (a list column) or `columns` (one column per option)")
        try:
            check_transforms(self.transforms)
        except TemplateError as e:
            raise ValueError(str(e)) from None
        return self


class Answer(_Strict):
    """The reference answer: a column read `as` an option index, a letter, an upstream label (`choices.labels`),
    the option's text, or (open answers, no choices) a value, transformed."""

    column: str
    as_: Literal["index", "letter", "label", "text", "value"] = Field(alias="as")
    transforms: tuple[str, ...] = ()

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    @field_validator("transforms")
    @classmethod
    def _known(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        try:
            check_transforms(v)
        except TemplateError as e:
            raise ValueError(str(e)) from None
        return v


class Fields(_Strict):
    """How a row maps onto a Question (seed 001): each text field a template over the row's columns."""

    id: str | None = None  # a column of unique integers; default: the row's position
    original_id: Text | None = None  # default: the id
    question: Text
    choices: Choices | None = None  # none: an open answer (AIME, GSM8K)
    answer: Answer
    category: Text | None = None
    subcategory: Text | None = None
    difficulty: Text | None = None
    tags: str | None = None  # a list column
    metadata: dict[str, Text] = Field(default_factory=dict)  # name → text kept on the Question (and templates)

    @model_validator(mode="before")
    @classmethod
    def _texts(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in ("original_id", "question", "category", "subcategory", "difficulty"):
            if key in out:
                out[key] = _as_text(out[key])
        if isinstance(out.get("metadata"), dict):
            out["metadata"] = {k: _as_text(v) for k, v in out["metadata"].items()}
        return out

    @model_validator(mode="after")
    def _answer_fits(self) -> Fields:
        if self.choices is None and self.answer.as_ != "value":
            raise ValueError(f"answer as {self.answer.as_!r} needs `choices`; an open answer is `as: value`")
        if self.choices is not None and self.answer.as_ == "value":
            raise ValueError("answer `as: value` is for open answers; with choices use index, letter, label or text")
        if self.answer.as_ == "label" and (self.choices is None or self.choices.labels is None):
            raise ValueError("answer `as: label` needs `choices.labels` (the column of upstream labels)")
        return self


class Source(_Strict):
    """Where rows come from: a Hugging Face dataset (id, config, revision) or local files per split (paths
    relative to the spec file; parquet, csv, jsonl or json, in the upstream schema)."""

    dataset: str | None = None
    config: str | None = None
    split: str = "test"
    revision: str | None = None
    files: dict[str, str] = Field(default_factory=dict)  # split → path

    @model_validator(mode="after")
    def _somewhere(self) -> Source:
        if self.dataset is None and self.split not in self.files:
            raise ValueError(f"give `dataset` (a Hugging Face dataset id) or `files` with the split {self.split!r}")
        return self


class FewShot(_Strict):
    """Where few-shot examples come from and which are shown.

    `first_k`: the first k rows in order; `same_category`: the first k of the asked question's category
    (MMLU's per-subject dev examples); `seeded`: lm-eval's default sampler (`random.Random(seed).sample`,
    drawn question after question in order; the asked row left out when the examples come from its own split)."""

    split: str | None = None  # a split of the source (a file in `source.files`, or the hub dataset's)
    file: str | None = None  # or a file of its own (relative to the spec)
    selection: Literal["first_k", "same_category", "seeded"] = "first_k"
    seed: int = 1234  # lm-eval's default fewshot_random_seed
    # seeded: draw k + 1 and drop the asked question, as lm-eval does whenever a task's fewshot split equals its
    # test split (always so when the examples come from the evaluated split; HellaSwag's, both unset, too)
    draw_extra: bool = False


class PromptKind(_Strict):
    template: str
    shots: int = Field(default=0, ge=0, le=64)

    _template = field_validator("template")(_check_template)


class Scoring(_Strict):
    """How answers are scored: by each option's log-likelihood (acc, acc_norm) or by generating one."""

    mode: Literal["loglikelihood", "generation"]
    # loglikelihood: the scored continuation is target_delimiter + the option's text, or its letter (MMLU)
    continuation: Literal["text", "letter"] = "text"
    answer_rule: str | None = None  # a name in proctor.scoring.extract.ANSWER_RULES (generation)
    max_tokens: int | None = Field(default=None, ge=1)
    stop: tuple[str, ...] = ()


class BenchmarkSpec(_Strict):
    """Seed 001's Dataset as a file, plus where its rows come from and how they are asked and scored."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    categories: tuple[str, ...] = ()
    cluster: str | None = None  # the natural cluster of standard errors: a Question field name (Task.cluster)
    source: Source
    fields: Fields
    prompts: dict[str, PromptKind]
    description_template: str = ""  # lm-eval's `description`: before the examples (a system message in chat)
    choice_format: str = "{letter}. {text}"  # each line `{choices}` renders, joined by newlines
    target: str = "{answer_text}"  # a few-shot example's answer (lm-eval's doc_to_target)
    target_delimiter: str = " "
    fewshot_delimiter: str = "\n\n"
    fewshot: FewShot | None = None
    scoring: Scoring

    @field_validator("prompts", mode="before")
    @classmethod
    def _kinds(cls, v: Any) -> Any:
        if not isinstance(v, dict):
            return v
        if not v:
            raise ValueError("declare at least one prompt kind (zero_shot, five_shot, …)")
        return {k: ({"template": t, "shots": 5 if k == FIVE_SHOT else 0} if isinstance(t, str) else t)
                for k, t in v.items()}

    @model_validator(mode="after")
    def _consistent(self) -> BenchmarkSpec:
        for kind, prompt in self.prompts.items():
            _check_prompt_fields(prompt.template, self.fields, f"prompts.{kind}")
        for name, template in (("target", self.target), ("description_template", self.description_template)):
            _check_prompt_fields(template, self.fields, name)
        if any(p.shots for p in self.prompts.values()) and self.fewshot is None:
            raise ValueError("a prompt kind with shots needs `fewshot` (the split or file examples come from)")
        if self.fewshot is not None and (self.fewshot.split is None) == (self.fewshot.file is None):
            raise ValueError("fewshot: give exactly one of `split` or `file`")
        if self.scoring.mode == "loglikelihood" and self.fields.choices is None:
            raise ValueError("scoring by loglikelihood needs `fields.choices`")
        _check_rule(self.scoring.answer_rule)
        return self

    @property
    def default_kind(self) -> str:
        return next(iter(self.prompts))


def _check_prompt_fields(template: str, fields: Fields, where: str) -> None:
    try:
        used = fields_of(template)
    except TemplateError as e:
        raise ValueError(f"{where}: {e}") from None
    known = (*PROMPT_FIELDS, *fields.metadata)
    for name, _ in used:
        if name not in known:
            raise ValueError(f"{where}: unknown field {{{name}}}; a prompt may use {', '.join(known)}")


def _check_rule(name: str | None) -> None:
    from ..scoring.extract import ANSWER_RULES

    if name is not None and name not in ANSWER_RULES:
        raise ValueError(f"unknown answer rule {name!r}; known: {', '.join(ANSWER_RULES)}")


def is_spec_path(spec: str | Path) -> bool:
    return Path(spec).suffix.lower() in SPEC_SUFFIXES and Path(spec).is_file()


def read_spec(path: str | Path) -> BenchmarkSpec:
    """A spec file, validated: every problem as `path:line: field: what` (InputError, exit 2)."""
    from ..formats.problems import validation_problems
    from ..limits import yaml_load_located

    text = read_text(path)
    data, line_of = yaml_load_located(text, path)  # JSON is YAML; bad syntax, depth, aliases: path:line
    if not isinstance(data, dict):
        raise InputError.at(path, "expected a benchmark spec: a mapping with name, source, fields, prompts, scoring",
                            line_of(()))
    try:
        return BenchmarkSpec.model_validate(data)
    except ValidationError as e:
        raise InputError(validation_problems(e, path, line_of=line_of)) from None


def spec_problem(path: str | Path, message: str, field: str | None = None, line: int | None = None) -> Problem:
    return Problem(str(path), line, message, field)
