"""`proctor.eval`: one evaluation in one call, from Python, as the command line would run it.

    import proctor
    log = proctor.eval("aime-2025", "openai:Qwen/Qwen3-8B", base_url="http://localhost:8000/v1", limit=5)
    print(log.results.overall.accuracy, log.path)

The keywords are `proctor run`'s options without their dashes (`max_tokens=`, `no_answer=`, `judge=`,
`judge_base_url=`…) plus the model backend's own (`dtype=`, `base_url=`, `concurrency=`…); the call builds the
same RunSpec as the command line, so the same run id, the same directory, the same samples. It works inside a
running event loop too (Jupyter): the run gets a loop of its own in a worker thread; `eval_async` awaits it.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypedDict, Unpack

from .core.keywords import BackendKeywords, Keywords
from .core.model import Model
from .core.spec import RunSpec
from .interop.llmwc_config import ConfigChoices, config_errors, config_run
from .interop.probsem_export import ProbsemFiles
from .log.runlog import RunLog
from .models.registry import backend_for
from .run.build import build_spec, eval_options, split_options, suite_spec
from .run.outputs import RunOutput
from .run.pipeline import RunOptions, run
from .run.resolve import resolve
from .util.errors import ProctorError


class Where(TypedDict, total=False):
    """Where a run is written and what it reads and records (every door's)."""

    out: str | Path | None
    store: str | Path | None
    use_cache: bool  # True
    record_history: bool  # True
    progress: bool | None  # False


class EvalKeywords(Keywords, Where, total=False):
    """`eval`'s keywords: the run options and the backend's (`proctor.core.keywords`), and where the run goes."""

    runs_root: str | Path  # "runs"
    outputs: Sequence[RunOutput]  # ()


class ScoreKeywords(BackendKeywords, Where, total=False):
    """`score`'s keywords: the suites' scoring, the backend's options, and where the run goes."""

    norm: str  # "sum"
    softmax_temperature: float  # 1.0
    join: str  # "newline"
    runs_root: str | Path  # "runs"


class ConfigKeywords(BackendKeywords, Where, total=False):
    """`eval_config`'s keywords: what the command line applies to a config run, and the chat backend's options."""

    model: str | None
    data_file: str | Path | None
    max_tokens: int | None
    prices: str | Path | None
    max_cost: str | None


def _own(given: dict[str, Any], keywords: type) -> dict[str, Any]:
    """The keywords `keywords` declares beyond the backend's and the run options, taken out of `given`."""
    names = set(keywords.__annotations__) - set(Keywords.__annotations__)
    return {k: given.pop(k) for k in list(given) if k in names}


def eval_spec(dataset: str | Path, model: str | Model, *, resolved: bool = True,
              **options: Unpack[Keywords]) -> RunSpec:
    """The RunSpec `eval` runs: what the command line builds from the same options, resolved (the benchmark's
    defaults applied; its data is loaded for that), so its `run_id()` is the id the run gets. `resolved=False`:
    the spec as given, before the benchmark's defaults (nothing loaded; its `run_id()` is not the run's)."""
    spec_text = model.name if isinstance(model, Model) else model
    fields = list(backend_for(spec_text)[0].options.model_fields)
    evaluation, backend = split_options(options, fields)
    spec = build_spec(str(dataset), spec_text, eval_options(**evaluation), _backend_options(backend))
    return resolve(spec) if resolved else spec


def _backend_options(given: Mapping[str, Any]) -> dict[str, Any]:
    """Backend options as the spec records them (a tuple of base URLs as a list)."""
    return {k: list(v) if isinstance(v, tuple) else v for k, v in given.items() if v is not None}


def eval(dataset: str | Path, model: str | Model, **options: Unpack[EvalKeywords]) -> RunLog:
    """Evaluate `model` (a spec such as "hf:out/tiny", or a Model) on `dataset` (a built-in benchmark name
    or a file/directory); the run log, also written to its run directory (resumed when it exists). The keywords are
    the run options (`proctor.core.options`), the backend's, and where the run goes: `out`, `runs_root` ("runs"),
    `store`, `use_cache`, `record_history`, `progress` (False), `outputs` (files written besides it once it is
    done: `proctor.interop.exporters.Export("inspect", "out/x")`…)."""
    given: dict[str, Any] = dict(options)
    where = _own(given, EvalKeywords)
    spec = eval_spec(dataset, model, resolved=False, **given)  # the pipeline resolves it with the data it loads
    (log,) = run([spec], _run_options(where), models={model.name: model} if isinstance(model, Model) else None)
    return log


def _run_options(where: Mapping[str, Any]) -> RunOptions:
    """Where `eval`'s run goes (its keywords `out`, `runs_root`…) as the pipeline's RunOptions."""
    return RunOptions(out=_path(where.get("out")), runs_root=Path(where.get("runs_root", "runs")),
                      store=_path(where.get("store")), use_cache=where.get("use_cache", True),
                      record_history=where.get("record_history", True), progress=where.get("progress", False),
                      outputs=tuple(where.get("outputs", ())))


def _backend_only(given: Mapping[str, Any], spec: str) -> dict[str, Any]:
    """The keywords as the backend's options; any other name is refused (these doors take no run settings)."""
    fields = list(backend_for(spec)[0].options.model_fields)
    unknown = sorted(set(given) - set(fields))
    if unknown:
        raise ProctorError(f"{', '.join(unknown)}: no such option here (the model's backend takes: "
                           f"{', '.join(fields) or 'none'})")
    return dict(given)


def score(paths: str | Path | Sequence[str | Path], model: str | Model, **options: Unpack[ScoreKeywords]) -> RunLog:
    """`proctor score`: probsem suites (a directory, or a prompt file and its suite files) scored by
    log-probability; the same spec, run directory and probsem files (CSV + JSONL per suite in `out`, default
    the run directory; summary.json in the run directory) as the command line. Keywords: `norm` ("sum"),
    `softmax_temperature` (1.0), `join` ("newline"), where the run goes (as `eval`'s), and the model's options."""
    backend: dict[str, Any] = dict(options)
    own = _own(backend, ScoreKeywords)
    spec_text = model.name if isinstance(model, Model) else model
    given = [paths] if isinstance(paths, str | Path) else list(paths)
    spec = suite_spec(given, spec_text, norm=own.get("norm", "sum"),
                      softmax_temperature=own.get("softmax_temperature", 1.0), join=own.get("join", "newline"),
                      model_options=_backend_options(_backend_only(backend, spec_text)))
    where = Path(own["out"]) if own.get("out") is not None else None
    run_options = dataclasses.replace(_run_options(own), runs_root=where or Path(own.get("runs_root", "runs")),
                                      out=None, outputs=(ProbsemFiles(where),))
    (log,) = run([spec], run_options, models={model.name: model} if isinstance(model, Model) else None)
    return log


def eval_config(config: str | Path, **options: Unpack[ConfigKeywords]) -> list[RunLog]:
    """`proctor run --config`: every model an llm-wc config lists (or the one `model` names), each run log in
    order; llm-wc's results directory (`<out or benchmark.output_dir>_<UTC time>`) written as the command line
    writes it. Keywords: `model`, `data_file`, `max_tokens`, `prices`, `max_cost`, where the runs go (as `eval`'s),
    and the chat backend's options for every model (`concurrency=`, `timeout=`…)."""
    backend: dict[str, Any] = dict(options)
    own = _own(backend, ConfigKeywords)
    path = Path(config)
    http = _backend_only(backend, "openai:model")
    how = RunOptions(store=_path(own.get("store")), use_cache=own.get("use_cache", True),
                     record_history=own.get("record_history", True), progress=own.get("progress", False))
    door = config_run(path, how, ConfigChoices(
        model=own.get("model"), data_file=_path(own.get("data_file")), out=_path(own.get("out")),
        max_tokens=own.get("max_tokens"), prices=_path(own.get("prices")), max_cost=own.get("max_cost"), http=http))
    with config_errors(path):
        return run(door.specs, door.options)


def _path(value: str | Path | None) -> Path | None:
    return Path(value) if value is not None else None


async def eval_async(dataset: str | Path, model: str | Model, **kwargs: Unpack[EvalKeywords]) -> RunLog:
    """`eval`, awaited: the run goes on in a worker thread with its own event loop; this one stays free."""
    return await asyncio.to_thread(eval, dataset, model, **kwargs)


__all__ = ["eval", "eval_async", "eval_config", "eval_spec", "score"]
