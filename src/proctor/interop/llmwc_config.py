"""An llm-wc config (`config/<benchmark>.yaml`) as RunSpecs: one per model it lists (or the one asked for).

The benchmark block becomes the dataset reference (data file, seed, subjects, per-subject limit, AIME's
`instruction`, GPQA's `cot_examples_path`, `hf_token_env`); llm-wc's `prompt_type` the prompt kind; llm-wc's
own answer rule reads every kind; request defaults and a model's overrides the generation settings; a
model's `api_base`, `api_key_env` (or literal `api_key`, never written anywhere) its endpoint. The same
evaluation given as `proctor run … --answer-rule llm-wc-mcqa` builds the same spec.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import SecretStr

from ..core.spec import DatasetRef, GenerationSpec, ModelSpec, RunSpec, ScorerSpec
from ..data.tasks import Task
from ..run.build import eval_options, with_prices
from ..run.resolve import load_spec_task
from ..run.runner import RunOptions
from ..scoring.extract import llmwc_rule
from ..util.errors import InputError, Problem, ProctorError
from ..util.termsafe import plain
from .llmwc import BenchmarkBlock, LlmwcConfig, ModelEntry, builtin_name, read_config, request_params
from .llmwc_export import LlmwcResultsDir

LLMWC_KINDS = {"5_shot": "five_shot", "default": None, "cot": None}  # llm-wc's prompt_type → proctor's kind
# a dataset problem the library names by field, shown as the config's own key
CONFIG_FIELDS = {"dataset.subjects": "benchmark.limit_subjects", "dataset.name": "benchmark.name"}


def prompt_kind(block: BenchmarkBlock) -> str | None:
    """The proctor kind of an llm-wc `prompt_type` (None: the benchmark's default, llm-wc's own)."""
    kind = block.prompt_type
    return LLMWC_KINDS.get(kind, kind) if kind is not None else None


def prompt_options(block: BenchmarkBlock, name: str, config_path: Path) -> dict[str, str]:
    """What llm-wc's config says about prompts: AIME's `instruction`, GPQA's `cot_examples_path` (relative to
    the working directory, else to the config; llm-wc reads it only for chain_of_thought and 5_shot)."""
    if name == "aime-2025":
        instruction = (block.model_extra or {}).get("instruction", getattr(block, "instruction", None))
        return {"instruction": instruction} if isinstance(instruction, str) else {}
    if not name.startswith("gpqa-") or not block.cot_examples_path:
        return {}
    for candidate in (Path(block.cot_examples_path), config_path.parent / block.cot_examples_path):
        if candidate.is_file():
            return {"cot_examples": str(candidate)}
    if prompt_kind(block) in ("chain_of_thought", "five_shot"):
        raise InputError.at(config_path, f"cot_examples_path {block.cot_examples_path!r}: no such file (the "
                            f"{block.prompt_type} prompt shows its examples)", field="benchmark.cot_examples_path")
    return {}


def dataset_ref(config: LlmwcConfig, config_path: Path, data_file: Path | None) -> DatasetRef:
    """The config's benchmark block as a dataset reference (dataset_path a local file → the data file)."""
    block = config.benchmark
    try:
        name = builtin_name(block)
    except InputError as e:
        raise InputError.at(config_path, plain(e.problems[0].message), field="benchmark.name") from None
    if data_file is None and block.dataset_path:
        data_file = next((c for c in (Path(block.dataset_path), config_path.parent / block.dataset_path)
                          if c.exists()), None)
    subjects = block.subjects()
    return DatasetRef(name=name, data_file=str(data_file) if data_file is not None else None, seed=block.seed,
                      limit_per_category=block.limit_per_subject,
                      subjects=tuple(subjects) if isinstance(subjects, list) else subjects,
                      prompt_options=prompt_options(block, name, config_path), hf_token_env=block.hf_token_env)


def generation(params: Mapping[str, Any], max_tokens: int | None) -> GenerationSpec:
    """llm-wc's request parameters as generation settings (`max_tokens`: the command line's, when given)."""
    return GenerationSpec(temperature=float(params.get("temperature", 0.0)), top_p=params.get("top_p"),
                          max_tokens=max_tokens or params.get("max_tokens"), seed=params.get("seed"),
                          stop=params.get("stop") or ())  # one stop given as text: a tuple of one (GenerationSpec)


@dataclass(frozen=True)
class ConfigModel:
    """One model of a config: its entry, its directory name in llm-wc's layout, its spec."""

    index: int
    entry: ModelEntry
    dir_name: str
    spec: RunSpec


def config_specs(config: LlmwcConfig, config_path: Path, *, model: str | None = None, data_file: Path | None = None,
                 max_tokens: int | None = None, http: Mapping[str, Any] | None = None) -> list[ConfigModel]:
    """A spec per model of the config (or the one `model` names), in the config's order."""
    chosen = selected_models(config, model)
    for index, entry, _ in chosen:  # a key variable not set: refused before any data loads
        if entry.api_key_env and not os.environ.get(entry.api_key_env):
            raise InputError.at("config", f"environment variable {entry.api_key_env} is not set",
                                field=f"models[{index}].api_key_env")
    dataset = dataset_ref(config, config_path, data_file)
    scorer = ScorerSpec(prompt_kind=prompt_kind(config.benchmark), answer_rule=llmwc_rule(dataset.name).name)
    out = []
    for index, entry, dir_name in chosen:
        options: dict[str, Any] = {k: v for k, v in (http or {}).items() if v is not None}
        if entry.api_base:
            options["base_url"] = entry.api_base
        spec = RunSpec(dataset=dataset, scorer=scorer, generation=generation(request_params(config, entry), max_tokens),
                       model=ModelSpec(spec=f"openai:{entry.name}", options=options, api_key_env=entry.api_key_env,
                                       api_key=SecretStr(entry.api_key) if entry.api_key else None))
        out.append(ConfigModel(index, entry, dir_name, spec))
    return out


def selected_models(config: LlmwcConfig, model: str | None) -> list[tuple[int, ModelEntry, str]]:
    """(index, entry, directory name) of the models to run: all, or the one `model` names."""
    chosen = [(i, m, d) for i, (m, d) in enumerate(zip(config.models, config.dir_names(), strict=True))]
    if model is None:
        return chosen
    wanted = model.removeprefix("openai:")
    picked = [c for c in chosen if wanted in (c[1].name, c[1].label)]
    if not picked:
        names = ", ".join(plain(m.name) for m in config.models)
        raise ProctorError(f"model {plain(model)}: not a model of the config (it lists {names})")
    return picked


# the chat backend's options a config run takes from the caller for every model; these are per model in the config
NOT_FROM_CALLER = frozenset({"base_url", "api_key", "batch", "batch_poll_interval"})


@dataclass(frozen=True)
class ConfigRun:
    """What `proctor run --config` and `proctor.eval_config` run: a spec per model, how to run them (each in
    llm-wc's `<root>/runs/<model>`, the results directory written at the end as a run output) and the root."""

    specs: list[RunSpec]
    options: RunOptions
    root: Path


@dataclass(frozen=True)
class ConfigChoices:
    """What the caller sets on a config run (`run --config`'s flags, `eval_config`'s keywords): the one model to
    run (None: every model), a local copy of the data, the base of the results directory (None: the config's
    `benchmark.output_dir`), the token budget, the prices and the cost cap, the chat backend's options for every
    model."""

    model: str | None = None
    data_file: Path | None = None
    out: Path | None = None
    max_tokens: int | None = None
    prices: Path | None = None
    max_cost: str | None = None
    http: Mapping[str, Any] = field(default_factory=dict)


def config_run(config_path: Path, options: RunOptions = RunOptions(), choices: ConfigChoices = ConfigChoices(), *,
               now: datetime | None = None) -> ConfigRun:
    """The config's models (or the one `choices.model` names) as specs, priced; their run directories and
    llm-wc's results directory `<out or benchmark.output_dir>_<UTC time>` (`now`: that time, default the clock's).
    `options`: how to run (store, cache, progress…); its directories are set here."""
    unknown = sorted(set(choices.http) & NOT_FROM_CALLER)
    if unknown:
        raise ProctorError(f"{', '.join(unknown)}: set per model in the config (models[].api_base, api_key_env)")
    config = read_config(config_path)
    models = config_specs(config, config_path, model=choices.model, data_file=choices.data_file,
                          max_tokens=choices.max_tokens, http=choices.http)
    price_options = eval_options(prices=choices.prices, max_cost=choices.max_cost)
    stamp = now or datetime.now(UTC)
    base = choices.out or Path(config.benchmark.output_dir or f"results/{config.benchmark.name}")
    root = Path(f"{base}_{stamp.strftime('%Y%m%dT%H%M%SZ')}")
    results = LlmwcResultsDir(root, config, tuple((m.entry, m.dir_name) for m in models),
                              stamp.isoformat(timespec="seconds").replace("+00:00", "Z"))
    run_options = replace(options, out=None, out_dirs=tuple(root / "runs" / m.dir_name for m in models),
                          outputs=(*options.outputs, results))
    return ConfigRun([with_prices(m.spec, price_options) for m in models], run_options, root)


@contextmanager
def config_errors(config_path: Path) -> Iterator[None]:
    """A dataset problem the library names by field, re-located at the config's own key."""
    try:
        yield
    except InputError as e:
        raise InputError([Problem(str(config_path), p.line, p.message, CONFIG_FIELDS[p.path])
                          if p.path in CONFIG_FIELDS else p for p in e.problems]) from None


def load_config_task(config: LlmwcConfig, config_path: Path, data_file: Path | None) -> Task:
    """The benchmark of a config as a proctor Task, its answers read by llm-wc's own rule whatever the kind."""
    dataset = dataset_ref(config, config_path, data_file)
    spec = RunSpec(dataset=dataset, model=ModelSpec(spec="openai:llm-wc"),
                   scorer=ScorerSpec(prompt_kind=prompt_kind(config.benchmark),
                                     answer_rule=llmwc_rule(dataset.name).name))
    with config_errors(config_path):
        return load_spec_task(spec)


__all__ = ["ConfigChoices", "ConfigModel", "ConfigRun", "config_errors", "config_run", "config_specs", "dataset_ref", "load_config_task", "prompt_kind",
           "prompt_options", "selected_models"]
