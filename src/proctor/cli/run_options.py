"""`proctor run`'s options drawn from the one table (`proctor.core.options.OPTIONS`), and its other options as
records (`Output`, `Sharding`): a command takes them as a few parameters, never one per flag.

`with_run_options` gives a command one option per run option, with the table's flag, metavar, help (its default
named), panel and default; the command receives their values by option name as `flags`. `with_records` gives it one
option per field of a record of options and receives the record. Both reuse `cli.options.expand`, as the backends'
options do (`with_model_options`).
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from ..core.options import OPTIONS, SWITCHES, Opt
from ..run.executors import Settings
from ..util.errors import DEFAULT_MAX_ERROR_RATE
from . import executor_cmds as ex
from . import options

F = TypeVar("F", bound=Callable[..., Any])
_CLI_TYPES: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool, "path": Path, "money": str,
                              "texts": list[str], "json": str}


def cli_default(o: Opt) -> Any:
    """The flag's default: the table's, or None where the value is "not given" (a list, a JSON object)."""
    return None if o.kind in ("texts", "json") else o.default


def cli_help(o: Opt) -> str:
    """The table's help, its default named where typer shows none."""
    if cli_default(o) is not None:
        return o.help
    if o.help.endswith(")."):  # the default inside the help's own parentheses
        return o.help[:-2] + f"; default: {o.default_from})."
    return o.help.rstrip(".") + f" (default: {o.default_from})."


def annotation(o: Opt) -> Any:
    """`Annotated[type, typer.Option(...)]` of a run option."""
    kind = _CLI_TYPES[o.kind]
    flag = o.cli_flag or ""
    if o.kind == "bool" and o.default is None:
        flag = f"{flag}/--disable-{flag[2:].split('-', 1)[1]}" if flag.startswith("--enable-") else \
            f"{flag}/--no-{flag[2:]}"
    info = typer.Option(flag, metavar=o.metavar or None, help=cli_help(o), rich_help_panel=o.panel,
                        show_default=cli_default(o) is not None and o.kind != "bool")
    return Annotated[kind if cli_default(o) is not None else kind | None, info]


def _parameter(o: Opt) -> inspect.Parameter:
    return inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=cli_default(o), annotation=annotation(o))


def cli_options(only: Sequence[str] | None = None) -> tuple[Opt, ...]:
    """The run options the command line offers (all, or the named ones), in table order."""
    return tuple(o for o in OPTIONS if o.cli_flag is not None and (only is None or o.name in only))


def with_run_options(only: Sequence[str] | None = None) -> Callable[[F], F]:
    """Give the command one option per run option (all, or `only` these); it receives their values as `flags`
    (a dict by option name)."""

    def decorate(func: F) -> F:
        chosen = cli_options(only)
        return options.expand(func, "flags", [_parameter(o) for o in chosen],
                              lambda kwargs: {o.name: kwargs.pop(o.name) for o in chosen})

    return decorate


def with_records(**records: type) -> Callable[[F], F]:
    """Give the command one option per field of each record (`output=Output`); it receives the records."""

    def decorate(func: F) -> F:
        for target, record in records.items():
            hints = typing.get_type_hints(record, include_extras=True)
            fields = dataclasses.fields(record)
            added = [inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                                       annotation=hints[f.name]) for f in fields]
            func = options.expand(func, target, added, _collector(record, [f.name for f in fields]))
        return func

    return decorate


def _collector(record: type, names: list[str]) -> Callable[[dict[str, object]], object]:
    return lambda kwargs: record(**{name: kwargs.pop(name) for name in names})


ExportTo = Annotated[list[str] | None, typer.Option(
    "--export", metavar="FORMAT:DIR", show_default=False,
    help="Also write the finished runs as FORMAT into DIR, as `proctor export` would (llmwc, probsem, inspect, "
         "eee; repeatable; default: none).")]


ClaimFile = Annotated[Path | None, typer.Option(
    "--claim", metavar="CLAIM.json", show_default=False,
    help="Run under CLAIM.json (default: none).")]


@dataclass(frozen=True)
class Output:
    """Where a run is written and what it prints: the run directory, the store, the exit rule, the exports."""

    out: options.Out = None
    runs_root: options.RunsRoot = Path("runs")
    store: options.Store = None
    no_cache: options.NoCache = False
    no_history: options.NoHistory = False
    progress: options.ShowProgress = None
    max_error_rate: options.MaxErrorRate = DEFAULT_MAX_ERROR_RATE
    dry_run: options.DryRun = False
    export: ExportTo = None
    claim: ClaimFile = None


@dataclass(frozen=True)
class Sharding:
    """`--shards N` on an executor: how many, where, and the engine's own settings."""

    shards: ex.Shards = None
    executor: ex.Executor = None
    retries: ex.Retries = 1
    no_wait: ex.NoWait = False
    partition: ex.Partition = None
    time_min: ex.TimeMin = 60
    gpus_per_task: ex.GpusPerTask = 0
    account: ex.Account = None
    sbatch: ex.Sbatch = None
    image: ex.Image = "proctor:latest"

    def settings(self) -> Settings | None:
        """The executor settings (None: no --shards, a plain run)."""
        return ex.settings_of(self.shards, self.executor, self.retries, self.partition, self.time_min,
                              self.gpus_per_task, self.account, self.sbatch)


__all__ = ["SWITCHES", "Output", "Sharding", "annotation", "cli_options", "with_records", "with_run_options"]
