"""The one library pipeline: RunSpecs in, run logs out, whatever door the specs came through.

`run(specs)` loads every dataset and resolves every spec first (a missing file or a bad setting is refused
before any model loads), plans each run (its directory, how much is already done), then evaluates them in
order: a model is loaded once for every dataset it runs on (only when a run has something left to ask), a
managed vLLM engine serves all of them and stops at the end, and a run with nothing left is finalised from
its samples. Last, the call's `RunOptions.outputs` write what it asked for besides the run directories
(probsem's files, llm-wc's results directory, exports: `proctor.run.outputs`). The CLI and `proctor.eval` only
build specs (`proctor.run.build`) and outputs, and show what comes back.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..core.model import Model
from ..core.spec import DatasetRef, JudgeSpec, ModelSpec, RunSpec
from ..data.prompts import bind_tokenizer
from ..data.tasks import Task
from ..log.runlog import RunLog
from ..models import registry
from ..models.vllm_engine import kept_running
from ..scoring.suites import is_suite_item
from ..util.errors import InputError, MissingKey, ProctorError, brief
from ..util.safepath import safe_component
from .estimate import Estimate, estimate_run
from .interruptible import run as run_sync
from .outputs import Finished, RunOutput, write_outputs
from .pricing import token_counter
from .resolve import load_spec_task, resolve
from .runner import RunOptions, RunState, evaluate_async, finish_done_run, plan_run


@dataclass(frozen=True)
class Events:
    """What a run says while it goes (the CLI prints it; the library prints nothing)."""

    resuming: Callable[[str], None] = lambda line: None  # `resuming DIR: 10/16 done, 6 to ask`
    hint: Callable[[Task, RunSpec], None] = lambda task, spec: None  # generating on probsem suites
    finished: Callable[[RunLog], None] = lambda log: None
    wrote: Callable[[RunOutput, list[Path]], None] = lambda output, paths: None  # an output's files (after all runs)


@dataclass(frozen=True)
class Planned:
    """One spec, resolved, with its data, how to run it (its own directory in `options.out`) and how much of it
    is done."""

    spec: RunSpec
    task: Task
    options: RunOptions
    state: RunState


# what load_spec_task reads from the scorer: specs that differ in these load their own Task (few-shot prompts
# are built for their shots, format and prompt kind)
_SHAPES_THE_TASK = {"answer_rule", "norm", "join", "softmax_temperature", "shots", "format", "prompt_kind"}


def plan(specs: Sequence[RunSpec], options: RunOptions = RunOptions(),
         tasks: Mapping[str, Task] | None = None) -> list[Planned]:
    """Load every dataset (once each), resolve every spec, find each run's directory and progress. `tasks`:
    already-built Tasks by dataset name (a Python caller's own `Task`)."""
    loaded: dict[str, Task] = {}
    planned = []
    for index, spec in enumerate(specs):
        key = spec.dataset.model_dump_json() + spec.scorer.model_dump_json(include=_SHAPES_THE_TASK)
        given = (tasks or {}).get(spec.dataset.name)
        task = given or (loaded[key] if key in loaded else loaded.setdefault(key, load_spec_task(spec)))
        resolved = resolve(spec, task)
        own = replace(options, out=_out_dir(index, task, specs, options), out_dirs=(), outputs=())
        planned.append(Planned(resolved, task, own, plan_run(task, resolved, own)))
    return planned


def _out_dir(index: int, task: Task, specs: Sequence[RunSpec], options: RunOptions) -> Path | None:
    if options.out_dirs:
        return options.out_dirs[index]
    if options.out is None:
        return None
    return options.out if len(specs) == 1 else options.out / safe_component(task.name)  # a name from data stays inside


DRY_RUN_KEY = "dry-run: no request is sent"  # what a keyless backend is built with for `--dry-run`


@dataclass
class _Models:
    """Models loaded the first time a run needs them, each once (by its spec and options)."""

    given: dict[str, Model] = field(default_factory=dict)  # already-built models, by spec string
    engines: ExitStack = field(default_factory=ExitStack)
    loaded: dict[str, Model] = field(default_factory=dict)
    asks: bool = True  # False for a dry run: a model is built for its tokenizer and asked nothing

    def model(self, spec: ModelSpec) -> Model:
        key = spec.model_dump_json()
        if key not in self.loaded:
            built = self.given.get(spec.spec) or self._build(spec)
            self.engines.enter_context(kept_running(built))  # a vLLM engine serves every dataset, then stops
            self.loaded[key] = built
        return self.loaded[key]

    def _build(self, spec: ModelSpec) -> Model:
        kwargs = _backend_kwargs(spec)
        try:
            return registry.get_model(spec.spec, **kwargs)
        except MissingKey:
            if self.asks:
                raise
            return registry.get_model(spec.spec, **kwargs, api_key=DRY_RUN_KEY)  # a dry run sends nothing

    def judge(self, spec: JudgeSpec | None) -> Model | None:
        if spec is None:
            return None
        key = "judge:" + spec.model_dump_json()
        if key not in self.loaded:
            try:
                self.loaded[key] = self.given.get(spec.model) or registry.get_model(spec.model, **judge_kwargs(spec))
            except MissingKey as e:  # the judge's own endpoint and key, named as such
                raise ProctorError(f"judge.api_key_env: the judge {spec.model} has no API key: set {e.env}, or "
                                   "name the variable that holds it with judge_api_key_env (or give a "
                                   "judge_base_url of a server that needs none)") from None
        return self.loaded[key]


def _backend_kwargs(spec: ModelSpec) -> dict[str, Any]:
    kwargs: dict[str, Any] = dict(spec.options)
    key = _key(spec.api_key_env, spec.api_key.get_secret_value() if spec.api_key else None, "model.api_key_env")
    if key is not None:
        kwargs["api_key"] = key
    return kwargs


def judge_kwargs(spec: JudgeSpec) -> dict[str, Any]:
    """The judge's own backend options: its base URL(s) and key, never the candidate model's."""
    kwargs: dict[str, Any] = dict(spec.options)
    if spec.base_url:
        kwargs["base_url"] = spec.base_url[0] if len(spec.base_url) == 1 else list(spec.base_url)
    key = _key(spec.api_key_env, spec.api_key.get_secret_value() if spec.api_key else None, "judge.api_key_env")
    if key is not None:
        kwargs["api_key"] = key
    return kwargs


def _key(env_name: str | None, given: str | None, field_name: str) -> str | None:
    if env_name:
        value = os.environ.get(env_name)
        if not value:
            raise InputError.at(field_name, f"environment variable {env_name} is not set")
        return value
    return given


async def execute_async(planned: Sequence[Planned], events: Events = Events(),
                        models: dict[str, Model] | None = None, outputs: Sequence[RunOutput] = ()) -> list[RunLog]:
    """Evaluate planned runs in order; each model loads once, when a run first has something to ask. Then
    `outputs` write their files from all of them (`proctor.run.outputs`)."""
    loader = _Models(given=dict(models or {}))
    logs = []
    with loader.engines:
        for p in planned:
            _say(p, events)
            if p.state.left == 0 and p.state.total:  # a shard whose bucket is empty still writes its (empty) run
                log = finish_done_run(p.state, p.options, p.spec.human_labels)
            else:
                model = loader.model(p.spec.model)
                log = await evaluate_async(p.task, model, p.spec, p.options, loader.judge(p.spec.judge))
            events.finished(log)
            logs.append(log)
    write_outputs(outputs, [Finished(p.spec, p.task, log) for p, log in zip(planned, logs, strict=True)],
                  events.wrote)
    return logs


def _say(p: Planned, events: Events) -> None:
    line = p.state.resume_line()
    if line is not None:
        events.resuming(line)
    if p.spec.scorer.mode == "generate" and p.task.items and all(is_suite_item(it) for it in p.task.items):
        events.hint(p.task, p.spec)


def execute(planned: Sequence[Planned], events: Events = Events(), models: dict[str, Model] | None = None,
            outputs: Sequence[RunOutput] = ()) -> list[RunLog]:
    """`execute_async`, synchronously (inside a running event loop too)."""
    return run_sync(execute_async(planned, events, models, outputs))


async def run_async(specs: Sequence[RunSpec], options: RunOptions = RunOptions(), events: Events = Events(),
                    models: dict[str, Model] | None = None, tasks: Mapping[str, Task] | None = None) -> list[RunLog]:
    """Plan and evaluate `specs`, then write `options.outputs`; their run logs, in order. `models`: already-built
    models by spec string; `tasks`: already-built Tasks by dataset name."""
    try:
        planned = plan(specs, options, tasks)
    except BaseException:  # refused before any run: the models the caller built are closed as a run closes them
        for given in (models or {}).values():
            await given.aclose()
        raise
    return await execute_async(planned, events, models, options.outputs)


def run(specs: Sequence[RunSpec], options: RunOptions = RunOptions(), events: Events = Events(),
        models: dict[str, Model] | None = None, tasks: Mapping[str, Task] | None = None) -> list[RunLog]:
    """`run_async`, synchronously (inside a running event loop too)."""
    return run_sync(run_async(specs, options, events, models, tasks))


def spec_for(task: Task | str | Path, model: Model | str, **parts: Any) -> RunSpec:
    """The RunSpec of running `task` (a Task, a built-in name or a path) with `model` (a Model or a spec string);
    `parts`: the spec's other fields (`scorer=ScorerSpec(...)`, `generation=GenerationSpec(...)`, `epochs`…)."""
    name = task.name if isinstance(task, Task) else str(task)
    try:
        return RunSpec(dataset=DatasetRef(name=name),
                       model=ModelSpec(spec=model if isinstance(model, str) else model.name), **parts)
    except ValidationError as e:
        raise InputError.at("run settings", brief(e)) from None


def evaluate(task: Task | str | Path, model: Model | str, options: RunOptions = RunOptions(),
             judge: Model | None = None, **parts: Any) -> RunLog:
    """Run `task` (a Task, a built-in name or a path) with `model` (a Model or a spec string) through the one
    pipeline: a thin door that builds the RunSpec (`parts`: its other fields, `scorer=ScorerSpec(...)`,
    `generation=GenerationSpec(...)`, `epochs=2`…); `judge`: an already-built judge model."""
    spec = spec_for(task, model, **parts)
    if spec.judge is None and judge is not None:
        spec = spec.model_copy(update={"judge": JudgeSpec(model=judge.name)})
    models = {m.name: m for m in (model, judge) if m is not None and not isinstance(m, str)}
    tasks = {task.name: task} if isinstance(task, Task) else None
    return run([spec], options, models=models, tasks=tasks)[0]


def estimate(specs: Sequence[RunSpec], options: RunOptions = RunOptions(),
             models: dict[str, Model] | None = None) -> list[Estimate]:
    """What each spec's run would ask and cost (`run --dry-run`), from the resolved specs: their requests, with
    the prompt tokens counted by the model's tokenizer where proctor has it. Nothing is sent or written."""
    loader = _Models(given=dict(models or {}), asks=False)
    estimates = []
    with loader.engines:
        for p in plan(specs, options):
            model = loader.model(p.spec.model)  # for its tokenizer: it is asked nothing
            bind_tokenizer(p.task.prompts, token_counter(model))  # prompts fitted to a budget, as the run fits them
            estimates.append(estimate_run(p.task, model, p.spec))
    return estimates


__all__ = ["Events", "Planned", "RunOptions", "estimate", "evaluate", "execute", "execute_async", "judge_kwargs", "plan",
           "run", "run_async", "spec_for"]
