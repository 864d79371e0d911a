"""`proctor run … --shards N --executor local|slurm|ray` (the options and the run), and `proctor status OUT`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..core.spec import RunSpec
from ..log.runlog import RunLog
from ..run.executors import EXECUTORS, Settings, attempt_logs, launch, print_line, progress_line
from ..run.executors import status as shard_status
from ..run.executors.k8s import write_job
from ..run.runner import accuracy_line
from ..util.errors import ProctorError
from ..util.termsafe import plain
from .outcome import error_status
from .summary import print_results

if TYPE_CHECKING:
    from ..run.pipeline import RunOptions

EXECUTION = "Executors (--shards N: run the shards on an engine, then merge them)"

Shards = Annotated[int | None, typer.Option(metavar="N", min=1, max=100_000, help=(
    "Run the N shards of this run on --executor, retry failed ones, and merge them into -o (default: one "
    "process, no shards)."), rich_help_panel=EXECUTION)]
Executor = Annotated[str | None, typer.Option(metavar="local|slurm|ray|k8s", help=(
    "Where the shards run: local processes, a Slurm job array (submitit), Ray tasks on RAY_ADDRESS's cluster, "
    "or k8s (write an indexed Job manifest, submit nothing). Not part of the run id (default: local)."),
    rich_help_panel=EXECUTION, show_default=False)]
Retries = Annotated[int, typer.Option(metavar="N", min=0, max=100, help=(
    "Resubmit a failed or cancelled shard up to N times."), rich_help_panel=EXECUTION)]
NoWait = Annotated[bool, typer.Option("--no-wait", help=(
    "Return once the shards are submitted (printing their job ids); `proctor status OUT` shows them, "
    "`proctor merge OUT` merges them."), rich_help_panel=EXECUTION)]
Partition = Annotated[str | None, typer.Option(metavar="NAME", help=(
    "Slurm partition (default: the cluster's)."), rich_help_panel=EXECUTION)]
TimeMin = Annotated[int, typer.Option("--time", metavar="MINUTES", min=1, help=(
    "Slurm time limit of each shard."), rich_help_panel=EXECUTION)]
GpusPerTask = Annotated[int, typer.Option(metavar="N", min=0, help=(
    "GPUs each shard asks for (Slurm --gpus-per-task, Ray num_gpus, Kubernetes nvidia.com/gpu)."),
    rich_help_panel=EXECUTION)]
Account = Annotated[str | None, typer.Option(metavar="NAME", help=(
    "Slurm account to charge (default: yours)."), rich_help_panel=EXECUTION)]
Sbatch = Annotated[list[str] | None, typer.Option(metavar="KEY=VALUE", help=(
    "Extra sbatch option, e.g. --sbatch qos=high or --sbatch mem=16G; repeat for several (default: none)."),
    rich_help_panel=EXECUTION)]
Image = Annotated[str, typer.Option(metavar="IMAGE", help=(
    "k8s: the container image that has proctor installed."), rich_help_panel=EXECUTION)]


def settings_of(shards: int | None, executor: str | None, retries: int, partition: str | None, time_min: int,
                gpus_per_task: int, account: str | None, sbatch: list[str] | None) -> Settings | None:
    """The executor settings the flags give (None: no --shards, a plain run); a clear error for a bad flag."""
    if shards is None:
        if executor is not None:
            raise ProctorError("--executor runs shards: give --shards N too")
        return None
    name = executor or "local"
    if name not in (*EXECUTORS, "k8s"):
        raise ProctorError(f"--executor {name!r}: expected one of {', '.join((*EXECUTORS, 'k8s'))}")
    extra = {}
    for item in sbatch or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ProctorError(f"--sbatch {item!r}: expected KEY=VALUE, e.g. qos=high")
        extra[key.strip().removeprefix("--")] = value.strip()
    return Settings(executor=name, shards=shards, retries=retries, partition=partition, time_min=time_min,
                    gpus_per_task=gpus_per_task, account=account, sbatch=extra)


def run_sharded(specs: list[RunSpec], run_options: RunOptions, settings: Settings, *, wait: bool, image: str,
                max_error_rate: float) -> int:
    """Run one spec's shards on the settings' engine (or write its Kubernetes Job); the exit status."""
    if len(specs) != 1:
        raise ProctorError("--shards runs one dataset at a time: give one DATASET")
    if run_options.out is None:
        raise ProctorError("--shards needs -o DIR: the run directory the shards are merged into")
    if not wait and settings.executor == "ray":  # a driver's tasks end with it
        raise ProctorError("--no-wait works with --executor slurm, local and k8s: Ray ends a run's tasks when the "
                           "command that submitted them exits")
    if settings.executor == "k8s":
        path = write_job(specs[0], settings, run_options.out, image=image, use_cache=run_options.use_cache,
                         command=run_options.command or [])
        typer.echo(plain(f"Kubernetes indexed Job for {settings.shards} shard(s) → {path}"))
        return 0
    log: RunLog | None = launch(specs[0], settings, run_options, wait=wait, say=lambda line: print_line(plain(line)))
    if log is None:
        typer.echo(plain(f"submitted; `proctor status {run_options.out}` shows the shards, "
                         f"`proctor merge {run_options.out}` merges them when they are done"))
        return 0
    if log.results is not None:
        print_results(log)
        typer.echo(plain(f"{log.manifest.dataset.name}: {accuracy_line(log.results)}  → {log.path}"))
    return error_status(log, max_error_rate)


def status(out: Annotated[Path, typer.Argument(metavar="OUT", show_default=False, help=(
        "The -o directory of a `proctor run --shards N --executor …` run."))]) -> None:
    """Show the shards of an executor run: each one's state, attempts, job id and samples so far."""
    plan, states = shard_status(out)
    typer.echo(plain(progress_line(plan, states)))
    for s in states:
        typer.echo(plain(f"  shard {s.index}/{plan.count}: {s.state:<7} attempt {s.attempt}  job {s.job or '-'}  "
                         f"{s.samples} samples  {attempt_logs(plan, s.index)}"))
    if all(s.state == "done" for s in states) and not (out / "manifest.json").exists():
        typer.echo(plain(f"all done: `proctor merge {out}` merges them"))


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("status", epilog="Example (the shards of `proctor run … --shards 3 --executor slurm --no-wait -o "
                                 "runs/demo`):\n\n  proctor status runs/demo\n")(status)
