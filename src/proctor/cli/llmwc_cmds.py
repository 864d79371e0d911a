"""llm-wc users' commands: `proctor run --config llmwc.yaml` (every listed model) and `proctor import DIR`."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..core.options import APPLIED, OPTIONS
from ..core.results import MetricBlock
from ..interop.llmwc_import import read_results_dir, summary_disagreement, write_imported
from ..log.runlog import RunLog
from ..run.runner import accuracy_line
from ..util.errors import DEFAULT_MAX_ERROR_RATE, ProctorError
from ..util.termsafe import plain
from . import options
from .help import plain_metavar
from .messages import note
from .outcome import error_status

# `run` options that apply to a config run, besides the chat backend's own (--concurrency, --timeout…);
# the rest are refused by name: the config says those things, or a config run does not do them
# (the run options' own rule is the table's: `Opt.config`, APPLIED or the config key to set instead)
APPLIED_WITH_CONFIG = frozenset({
    "llmwc_config", "model", "out", "store", "progress", "no_cache", "no_history", "max_error_rate",
}) | {o.name for o in OPTIONS if o.config == APPLIED}


def backend_options(given: options.ModelOptions) -> dict[str, Any]:
    """The chat backend's options given on the command line that a config run applies to every model."""
    from ..interop.llmwc_config import NOT_FROM_CALLER

    return {k: v for k, v in given.for_spec("openai:model").items() if k not in NOT_FROM_CALLER}
_INSTEAD = {"datasets": "the config's benchmark.name", "base_url": "models[].api_base",
            "api_key": "models[].api_key_env", "runs_root": "-o (the runs go inside the results)",
            **{o.name: o.config for o in OPTIONS if o.config not in ("", APPLIED)}}


def refuse_unapplied(applied: frozenset[str] = APPLIED_WITH_CONFIG) -> None:
    """Refuse every option given on the command line that a config run does not apply, by its name."""
    from typer._click import globals as click_globals  # typer vendors click (as cli.help uses it)

    ctx = click_globals.get_current_context(silent=True)
    if ctx is None:
        return
    from ..interop.llmwc_config import NOT_FROM_CALLER  # per model, or no batch
    from ..models.registry import backend_for

    backend = {o.param: o.name for o in options.model_cli_options()}
    chat = set(backend_for("openai:model")[0].options.model_fields) - NOT_FROM_CALLER
    applies = applied | {param for param, name in backend.items() if name in chat}
    refused = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if param.name in applies or source is None or source.name != "COMMANDLINE":
            continue
        name = backend.get(param.name or "", param.name or "")
        flag = param.opts[0] if param.param_type_name == "option" else plain_metavar(param)
        instead = _INSTEAD.get(name)
        refused.append(f"{flag} does not apply with --config" + (f" (set {instead} instead)" if instead else ""))
    if refused:
        raise ProctorError("; ".join(refused))


@dataclasses.dataclass(frozen=True)
class ConfigRunOptions:
    """The `run` options a config run applies (see APPLIED_WITH_CONFIG)."""

    model: str | None = None
    data_file: Path | None = None
    out: Path | None = None
    store: Path | None = None
    progress: bool | None = None
    use_cache: bool = True
    record_history: bool = True
    max_tokens: int | None = None
    prices: Path | None = None
    max_cost: str | None = None
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    http: dict[str, Any] = dataclasses.field(default_factory=dict)


def run_config(config_path: Path, given: ConfigRunOptions) -> int:
    """Run the config's models (or the one --model names); llm-wc's results directory is the pipeline's last
    output (`proctor.interop.llmwc_config.config_run`); the exit status."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from ..interop.llmwc_config import ConfigChoices, config_errors, config_run
    from ..run import pipeline
    from ..run.pipeline import Events, RunOptions

    how = RunOptions(store=given.store, progress=given.progress, use_cache=given.use_cache,
                     record_history=given.record_history, command=["proctor", *sys.argv[1:]])
    door = config_run(config_path, how, ConfigChoices(
        model=given.model, data_file=given.data_file, out=given.out, max_tokens=given.max_tokens, prices=given.prices,
        max_cost=given.max_cost, http=given.http))
    statuses: list[int] = []

    def finished(log: RunLog) -> None:
        line = accuracy_line(log.results) if log.results is not None else "no results"
        name = log.manifest.model.spec.removeprefix("openai:")
        typer.echo(plain(f"{name} on {log.manifest.dataset.name}: {line}  → {log.path}"))
        statuses.append(error_status(log, given.max_error_rate))

    with config_errors(config_path):
        pipeline.run(door.specs, door.options, Events(resuming=lambda line: note(plain(line)), finished=finished))
    typer.echo(plain(f"llm-wc results: {door.root}"))
    return max(statuses, default=0)


# ---------------------------------------------------------------- import


def import_results(
    results_dir: Annotated[Path, typer.Argument(
        metavar="RESULTS_DIR", show_default=False, help="An llm-wc results directory (run.json, models/<name>/).")],
    store: options.Store = None,
    runs_root: Annotated[Path, typer.Option(
        metavar="DIR", help="Where the imported run logs go (under imported/).")] = Path("runs"),
) -> None:
    """Import an llm-wc results directory into the history, so `compare` and `leaderboard` see its models."""
    from ..run.store import Store, default_store_path

    models, left_out = read_results_dir(results_dir, runs_root)  # every file checked before anything is written
    for line in left_out:
        note(line)
    with Store(store or default_store_path()) as st:
        for model in models:
            log = write_imported(model, st)
            disagreement = summary_disagreement(model, log)
            if disagreement is not None:
                note(disagreement)
            overall = log.results.overall if log.results is not None else MetricBlock()
            typer.echo(plain(f"imported {model.source.name}: {overall.n_scored} scored, accuracy "
                             f"{overall.accuracy}  → {log.path} (run {log.manifest.run_id[:12]})"))


__all__ = ["ProctorError", "import_results", "run_config"]
