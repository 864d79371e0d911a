"""llm-wc's configs and results layout: its configs read and run, its results directories imported
(`proctor.interop.llmwc_export` writes them).

A config (`config/<benchmark>.yaml`) has a `benchmark` block (name, output_dir, seed, limit_subjects,
limit_per_subject, dataset_path, subset, split, prompt_type, cot_examples_path, hf_token_env) and a
`models` list (name, api_base, api_key or api_key_env, request_overrides). A results directory is
`<output_dir>_<stamp>/run.json` plus `models/<name>/summary.json` and `models/<name>/results.json` (the
upstream question rows plus `pred` and `model_outputs`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from ..benchmarks.registry import BUILTINS
from ..data.formats.problems import field_name, json_loc_lines, validation_problems
from ..util.errors import InputError, Problem
from ..util.limits import yaml_load_located
from ..util.redact import redact_url
from ..util.safepath import distinct_components
from ..util.textio import lone_surrogate, parse_json, read_text

# llm-wc's request defaults (its run.json `request_defaults`); `seed` is the benchmark's seed
REQUEST_DEFAULTS: dict[str, Any] = {"temperature": 0.0, "top_p": 0.95, "max_tokens": 32768,
                                    "frequency_penalty": 0.0, "presence_penalty": 0.0}
_SENT = ("temperature", "top_p", "max_tokens", "seed", "stop")
_NEUTRAL = {"frequency_penalty": 0.0, "presence_penalty": 0.0}  # accepted only at the API's own default
ID_COLUMNS = {"mmlu-pro": "question_id", "aime-2025": "problem_idx"}  # GPQA: "Record ID"


def _not_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("expected a number, not true/false")  # noqa: TRY004 (pydantic reports ValueErrors)
    return value


Number = Annotated[float, BeforeValidator(_not_bool)]
Whole = Annotated[int, BeforeValidator(_not_bool)]


class RequestParams(BaseModel):
    """Request parameters as the config gives them (`request_defaults`, a model's `request_overrides`),
    checked as the command line checks the same flags."""

    model_config = ConfigDict(extra="allow")

    temperature: Number | None = Field(default=None, ge=0, le=2)
    top_p: Number | None = Field(default=None, gt=0, le=1)
    max_tokens: Whole | None = Field(default=None, ge=1)
    seed: Whole | None = None
    stop: str | list[str] | None = None
    frequency_penalty: Number | None = Field(default=None, ge=-2, le=2)
    presence_penalty: Number | None = Field(default=None, ge=-2, le=2)

    def given(self) -> dict[str, Any]:
        """The keys the config wrote, with their values (`null` leaves the default in place)."""
        return self.model_dump(exclude_unset=True, exclude_none=True)


class BenchmarkBlock(BaseModel):
    model_config = ConfigDict(extra="allow")

    name: str
    output_dir: str | None = None
    seed: Whole = 0
    limit_subjects: Whole | list[str] | str | None = None  # llm-wc: subject names; proctor also: the first N
    limit_per_subject: Whole | None = Field(default=None, ge=1)
    dataset_path: str | None = None
    subset: str | None = None
    split: str | None = None
    prompt_type: str | None = None
    cot_examples_path: str | None = None
    hf_token_env: str | None = None
    strict_parsing: bool = False

    @model_validator(mode="after")
    def _no_misspelt_keys(self) -> BenchmarkBlock:
        """A benchmark may carry keys of its own (AIME's `instruction`), but one a letter or two from a known
        key is a typo that would silently run with the default (`limit_per_subjectt` → the whole data set)."""
        for key in self.model_extra or {}:
            close = difflib.get_close_matches(key, [*type(self).model_fields, "instruction"], n=1, cutoff=0.8)
            if close and close[0] != key:
                raise ValueError(f"unknown key {key!r}: did you mean {close[0]!r}?")
        return self

    @field_validator("limit_subjects")
    @classmethod
    def _positive_or_names(cls, value: int | list[str] | str | None) -> int | list[str] | str | None:
        if isinstance(value, int) and value < 1:
            raise ValueError("expected subject names, or a number of subjects of at least 1")
        return value

    def subjects(self) -> list[str] | int | None:
        """`limit_subjects` as llm-wc reads it: a list, a comma-separated string, or (proctor) a count."""
        value = self.limit_subjects
        if isinstance(value, str):
            return [s.strip() for s in value.split(",") if s.strip()] or None
        return value or None


class ModelEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    api_base: str | None = None
    api_key: str | None = None
    api_key_env: str | None = None
    output_name: str | None = None
    request_overrides: RequestParams = Field(default_factory=RequestParams)

    @property
    def label(self) -> str:
        """What llm-wc names the model's directory after."""
        return self.output_name or self.name

    def public(self) -> dict[str, Any]:
        """The entry as llm-wc writes it (run.json, config.yaml): every key, the key itself never, the base
        URL with any credential in it masked."""
        return {"name": self.name, "api_base": redact_url(self.api_base) if self.api_base else self.api_base,
                "api_key": None, "api_key_env": self.api_key_env, "output_name": self.output_name,
                "request_overrides": self.request_overrides.given()}


class LlmwcConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    benchmark: BenchmarkBlock
    models: list[ModelEntry] = Field(min_length=1)
    request_defaults: RequestParams = Field(default_factory=RequestParams)

    def dir_names(self) -> list[str]:
        """Each model's directory name (`models/<name>/`): llm-wc's form, distinct and never climbing."""
        return distinct_components([m.label for m in self.models], model_dir_name)


def model_dir_name(name: str) -> str:
    """llm-wc's directory for a model: `gpt-oss:latest` → `gpt-oss_latest` (see `model_dir` for a safe one)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name.replace(":", "_"))


def model_dir(name: str) -> str:
    """The directory one model's files go to: llm-wc's form when it is a harmless name (`..` never is)."""
    return distinct_components([name], model_dir_name)[0]


def read_config(path: str | Path) -> LlmwcConfig:
    """An llm-wc config, validated as the command line validates flags: `path:line: field: message`."""
    text = read_text(path)
    data, line_of = yaml_load_located(text, path)  # malformed YAML: `path:line:`, exit 2
    if not isinstance(data, dict):
        raise InputError.at(path, "expected an llm-wc config: a mapping with `benchmark` and `models`", line_of(()))
    try:
        config = LlmwcConfig.model_validate(data)
    except ValidationError as e:
        raise InputError(validation_problems(e, path, line_of=line_of)) from None
    problems = _check_sent(path, ("request_defaults",), config.request_defaults, line_of)
    for i, m in enumerate(config.models):
        problems += _check_sent(path, ("models", i, "request_overrides"), m.request_overrides, line_of)
    problems += _check_distinct(path, config, line_of)
    if problems:
        raise InputError(problems)
    return config


def _check_sent(path: str | Path, at: tuple[str | int, ...], params: RequestParams,
                line_of: Callable[[Sequence[int | str]], int | None]) -> list[Problem]:
    """Refuse a request parameter proctor would not send (a penalty only at the API's own default)."""
    out = []
    for key, value in params.given().items():
        if key not in _SENT and (key not in _NEUTRAL or (value is not None and value != _NEUTRAL[key])):
            out.append(Problem(str(path), line_of((*at, key)), f"proctor does not send {key!r} "
                               f"(it sends {', '.join(_SENT)})", field_name((*at, key))))
    return out


def _check_distinct(path: str | Path, config: LlmwcConfig,
                    line_of: Callable[[Sequence[int | str]], int | None]) -> list[Problem]:
    """Two entries with the same name and output_name would write one directory: refused."""
    seen: dict[str, int] = {}
    out = []
    for i, m in enumerate(config.models):
        if m.label in seen:
            out.append(Problem(str(path), line_of(("models", i)), f"same model as models[{seen[m.label]}]: "
                               "give one of them an `output_name`", f"models[{i}]"))
        seen.setdefault(m.label, i)
    return out


def builtin_name(block: BenchmarkBlock) -> str:
    """proctor's name for an llm-wc benchmark: mmlu_pro → mmlu-pro, gpqa (+ subset) → gpqa-<subset>, …"""
    name = block.name.strip().lower().replace("_", "-")
    if name == "gpqa":
        name = f"gpqa-{(block.subset or 'main').strip().lower()}"

    if name not in BUILTINS:
        raise InputError.at("benchmark.name", f"{block.name!r}: proctor runs {', '.join(sorted(BUILTINS))}")
    return name


def resolved_defaults(config: LlmwcConfig) -> dict[str, Any]:
    """llm-wc's `request_defaults` for a run: its defaults, the benchmark's seed, the config's own."""
    return {**REQUEST_DEFAULTS, "seed": config.benchmark.seed, **config.request_defaults.given()}


def request_params(config: LlmwcConfig, entry: ModelEntry) -> dict[str, Any]:
    """llm-wc's request parameters for one model: its defaults, the config's, the model's overrides."""
    return {**resolved_defaults(config), **entry.request_overrides.given()}


# ---------------------------------------------------------------- reading a results directory (import)


class ImportedBenchmark(BaseModel):
    """run.json's `benchmark` block, as far as import reads it."""

    model_config = ConfigDict(extra="allow")

    name: str | None = None
    seed: Whole | None = None
    prompt_type: str | None = None
    dataset_path: str | None = None
    subset: str | None = None


class RunFile(BaseModel):
    """llm-wc's `run.json`."""

    model_config = ConfigDict(extra="allow")

    benchmark: ImportedBenchmark = Field(default_factory=ImportedBenchmark)
    started_at: str | None = None


class SummaryFile(BaseModel):
    """llm-wc's `models/<name>/summary.json`."""

    model_config = ConfigDict(extra="allow")

    accuracy: Number | None = None
    model: str | None = None
    api_base: str | None = None
    seed: Whole | None = None
    dataset_path: str | None = None
    request_params: dict[str, Any] = Field(default_factory=dict)


Scalar = str | Whole


class ResultRow(BaseModel):
    """One row of llm-wc's `models/<name>/results.json`: the upstream columns plus `pred` and `model_outputs`."""

    model_config = ConfigDict(extra="allow")

    pred: Scalar | None
    model_outputs: str | None = None
    answer: Scalar | None = None
    error: str | None = None

    def column(self, name: str) -> Any:
        """An upstream column (`question_id`, `Correct Answer`, …), None when absent."""
        return (self.model_extra or {}).get(name)


ROWS = TypeAdapter(list[ResultRow])


def read_layout_file(path: Path, model: type[BaseModel] | TypeAdapter[Any]) -> Any:
    """One of llm-wc's JSON files, validated: every problem as `path:line: key: message`, never a traceback."""
    text = read_text(path)
    if not text.strip():
        raise InputError.at(path, "empty file")
    data = parse_json(text, path)
    try:
        bad = lone_surrogate(data)
    except RecursionError:
        raise InputError.at(path, "JSON nested too deeply") from None
    if bad is not None:
        raise InputError.at(path, "text with a lone surrogate (\\ud800-\\udfff escape): not valid Unicode",
                            json_loc_lines(text)(bad), field_name(bad) or None)
    try:
        return model.validate_python(data) if isinstance(model, TypeAdapter) else model.model_validate(data)
    except ValidationError as e:
        raise InputError(validation_problems(e, path, line_of=json_loc_lines(text))) from None
