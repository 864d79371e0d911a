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
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .log.runlog import RunLog
from .models.base import Model
from .models.registry import backend_for
from .run.build import build_spec, eval_options, split_options
from .run.pipeline import RunOptions, run
from .run.resolve import resolve
from .run.spec import RunSpec


def eval_spec(dataset: str | Path, model: str | Model, *, resolved: bool = True, **options: Any) -> RunSpec:
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


def eval(
    dataset: str | Path,
    model: str | Model,
    *,
    out: str | Path | None = None,
    runs_root: str | Path = "runs",
    store: str | Path | None = None,
    use_cache: bool = True,
    record_history: bool = True,
    progress: bool | None = False,
    **options: Any,
) -> RunLog:
    """Evaluate `model` (a spec such as "hf:out/tiny", or a Model) on `dataset` (a built-in benchmark name
    or a file/directory); the run log, also written to its run directory (resumed when it exists)."""
    spec = eval_spec(dataset, model, resolved=False, **options)  # the pipeline resolves it with the data it loads
    run_options = RunOptions(out=Path(out) if out is not None else None, runs_root=Path(runs_root),
                             store=Path(store) if store is not None else None, use_cache=use_cache,
                             record_history=record_history, progress=progress)
    models = {model.name: model} if isinstance(model, Model) else None
    (log,) = run([spec], run_options, models=models)
    return log


async def eval_async(dataset: str | Path, model: str | Model, **kwargs: Any) -> RunLog:
    """`eval`, awaited: the run goes on in a worker thread with its own event loop; this one stays free."""
    return await asyncio.to_thread(eval, dataset, model, **kwargs)


__all__ = ["eval", "eval_async", "eval_spec"]
