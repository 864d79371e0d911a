"""A benchmark is a file: `BenchmarkSpec` is seed 001's Dataset declared in YAML (or JSON).

The spec names the Dataset (`name`, `description`, `metadata`, `categories`, the `prompts` dict) and says
where its rows come from (a Hugging Face dataset pinned to a revision, or local files), how a row maps onto
a Question, where few-shot examples come from, and how answers are scored. Everything is data: templates
use `{field}` and a closed set of named transforms (`proctor.benchmarks.spec_template`), answer rules are
names in `proctor.scoring.extract.ANSWER_RULES`. docs/benchmarks-data.md documents every field.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from ..core.spec import check_cluster
from ..data.formats.problems import validation_problems
from ..scoring.extract import ANSWER_RULES
from ..util.errors import InputError, Problem
from ..util.limits import yaml_load, yaml_load_located
from ..util.textio import load_json, read_text
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


def _check_transforms(value: tuple[str, ...]) -> tuple[str, ...]:
    try:
        check_transforms(value)
    except TemplateError as e:
        raise ValueError(str(e)) from None
    return value


def _check_cluster(value: str) -> str:
    return check_cluster(value)  # its ValueError is the field's message


Template = Annotated[str, AfterValidator(_check_template)]  # `{field}` / `{field:transform}`, checked when read
Transforms = Annotated[tuple[str, ...], AfterValidator(_check_transforms)]  # names in the closed set


class Text(_Strict):
    """A text made from a row: a template over its columns, then transforms over the whole text."""

    template: Template
    transforms: Transforms = ()


def _as_text(value: Any) -> Any:
    return {"template": value} if isinstance(value, str) else value


class Choices(_Strict):
    """The options: a list column (`list: choices.text`) or one column per option (`columns: [A, B, C, D]`),
    each option transformed; `labels` is the column of upstream labels an answer `as: label` is found in."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    from_list: str | None = Field(default=None, alias="list")
    columns: tuple[str, ...] | None = None
    labels: str | None = None
    transforms: Transforms = ()

    @model_validator(mode="after")
    def _one_source(self) -> Choices:
        if (self.from_list is None) == (self.columns is None):
            raise ValueError("give exactly one of `list` (a list column) or `columns` (one column per option)")
        return self


class Answer(_Strict):
    """The reference answer: a column read `as` an option index (0 = the first), an ordinal (1 = the first), a
    letter, an upstream label (`choices.labels`), the option's text, or (open answers, no choices) a value,
    transformed."""

    column: str
    as_: Literal["index", "ordinal", "letter", "label", "text", "value"] = Field(alias="as")
    transforms: Transforms = ()

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class Fields(_Strict):
    """How a row maps onto a Question (seed 001): each text field a template over the row's columns."""

    id: str | None = None  # a column of unique ids (integers, or web-friendly strings); default: the row's position
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
    template: Template
    shots: int = Field(default=0, ge=0, le=64)


class Scoring(_Strict):
    """How answers are scored: by each option's log-likelihood (acc, acc_norm) or by generating one."""

    mode: Literal["loglikelihood", "generation"]
    # loglikelihood: the scored continuation is target_delimiter + the option's text, or its letter (MMLU); or
    # `blank`: each option fills the question's `_` as its own context and the text after the blank is the
    # shared continuation (Winogrande's partial scoring)
    continuation: Literal["text", "letter", "blank"] = "text"
    # where a context ends and its option begins: lm-eval's `_encode_pair` (trailing whitespace moved into the
    # continuation), or proctor's own (the context as rendered); docs/scoring.md
    boundary: Literal["lm-eval", "proctor"] = "lm-eval"
    answer_rule: str | None = None  # a name in proctor.scoring.extract.ANSWER_RULES (generation)
    max_tokens: int | None = Field(default=None, ge=1)
    stop: tuple[str, ...] = ()


class BenchmarkSpec(_Strict):
    """Seed 001's Dataset as a file, plus where its rows come from and how they are asked and scored."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
    description: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    categories: tuple[str, ...] = ()
    # the natural cluster of standard errors (Task.cluster): category, subcategory or metadata.KEY
    cluster: Annotated[str, AfterValidator(_check_cluster)] | None = None
    source: Source
    fields: Fields
    prompts: dict[str, PromptKind]
    description_template: Template = ""  # lm-eval's `description`: before the examples (a system message in chat)
    choice_format: Template = "{letter}. {text}"  # each line `{choices}` renders, joined by newlines
    target: Template = "{answer_text}"  # a few-shot example's answer (lm-eval's doc_to_target)
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

    @property
    def default_kind(self) -> str:
        return next(iter(self.prompts))


def spec_problems(spec: BenchmarkSpec, path: str | Path, line_of: LineOf) -> list[Problem]:
    """What a valid shape can still get wrong across fields, each at its line: a template naming a field the
    prompt cannot see, shots with no few-shot source, log-likelihood without options, an unknown rule."""
    out: list[Problem] = []

    def problem(at: tuple[str | int, ...], message: str) -> None:
        out.append(Problem(str(path), line_of(at), message, ".".join(str(a) for a in at)))

    known = (*PROMPT_FIELDS, *spec.fields.metadata)
    templates: dict[tuple[str | int, ...], str] = {("prompts", kind): p.template for kind, p in spec.prompts.items()}
    templates |= {("target",): spec.target, ("description_template",): spec.description_template}
    for at, template in templates.items():
        unknown = [name for name, _ in fields_of(template) if name not in known]
        if unknown:
            problem(at, f"unknown field {{{unknown[0]}}}; a prompt may use {', '.join(known)}")
    unknown_choice = [n for n, _ in fields_of(spec.choice_format) if n not in ("letter", "text")]
    if unknown_choice:
        problem(("choice_format",), f"unknown field {{{unknown_choice[0]}}}; it may use letter, text")
    if spec.fewshot is None and any(p.shots for p in spec.prompts.values()):
        problem(("prompts",), "a prompt kind with shots needs `fewshot` (the split or file examples come from)")
    if spec.fewshot is not None and (spec.fewshot.split is None) == (spec.fewshot.file is None):
        problem(("fewshot",), "give exactly one of `split` or `file`")
    elif spec.fewshot is not None and spec.source.dataset is None and spec.fewshot.split not in (None, *spec.source.files):
        problem(("fewshot", "split"), f"split {spec.fewshot.split!r} is not in `source.files` "
                f"({', '.join(spec.source.files)}); add it there or give the examples as `fewshot.file`")
    if spec.scoring.mode == "loglikelihood" and spec.fields.choices is None:
        problem(("scoring", "mode"), "scoring by loglikelihood needs `fields.choices`")
    rule = spec.scoring.answer_rule
    if rule is not None and rule not in ANSWER_RULES:
        problem(("scoring", "answer_rule"), f"unknown answer rule {rule!r}; known: {', '.join(ANSWER_RULES)}")
    return out


SPEC_KEYS = ("fields", "scoring")  # a file with either is a benchmark spec (a CommonEval .yaml or a Question
# .json dataset has neither)


def is_spec_file(path: str | Path) -> bool:
    """Whether `path` is a benchmark spec file (a .yaml/.yml/.json mapping with `fields` or `scoring`);
    unreadable or malformed files raise InputError at `path:line`."""

    p = Path(path)
    if p.suffix.lower() not in SPEC_SUFFIXES or not p.is_file():
        return False
    data = load_json(p) if p.suffix.lower() == ".json" else yaml_load(read_text(p), p)
    return isinstance(data, dict) and any(k in data for k in SPEC_KEYS)


LineOf = Callable[[Sequence[int | str]], int | None]


def read_spec(path: str | Path) -> BenchmarkSpec:
    """A spec file, validated: every problem as `path:line: field: what` (InputError, exit 2)."""
    return read_spec_located(path)[0]


def read_spec_located(path: str | Path) -> tuple[BenchmarkSpec, LineOf]:
    """`read_spec`, plus the line of any field path in the file (for problems found later, in the data)."""

    text = read_text(path)
    data, line_of = yaml_load_located(text, path)  # JSON is YAML; bad syntax, depth, aliases: path:line
    if not isinstance(data, dict):
        raise InputError.at(path, "expected a benchmark spec: a mapping with name, source, fields, prompts, scoring",
                            line_of(()))
    try:
        spec = BenchmarkSpec.model_validate(data)
    except ValidationError as e:
        raise InputError(validation_problems(e, path, line_of=line_of)) from None
    problems = spec_problems(spec, path, line_of)
    if problems:
        raise InputError(problems)
    return spec, line_of
