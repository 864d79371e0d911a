"""`proctor merge SHARD_DIR... -o DIR`: the shards of one `--shard K/N` run, combined into one run."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..run.executors import finish
from ..run.runner import accuracy_line
from ..run.shard import merge_runs
from ..run.store import Store, default_store_path
from ..util.errors import ProctorError
from ..util.termsafe import plain
from . import options

MERGE_EXAMPLES = """Example (three jobs, e.g. a Slurm array or a Kubernetes indexed job, then one merge):

  proctor run examples/items/multiple-choice.jsonl --model scripted:first --shard 1/3 -o runs/demo-1
  proctor run examples/items/multiple-choice.jsonl --model scripted:first --shard 2/3 -o runs/demo-2
  proctor run examples/items/multiple-choice.jsonl --model scripted:first --shard 3/3 -o runs/demo-3
  proctor merge runs/demo-1 runs/demo-2 runs/demo-3 -o runs/demo

The shards of `proctor run … --shards N --executor slurm --no-wait -o runs/demo`, once done:

  proctor merge runs/demo
"""


def merge(
    shard_dirs: Annotated[list[Path], typer.Argument(
        metavar="SHARD_DIR...", show_default=False, help="The run directories of every shard (1/N … N/N).")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="DIR", show_default=False, help=(
            "Run directory to write (new or empty). Default: none, and then the one SHARD_DIR is an executor "
            "run's -o directory (`run --shards N`), merged from its OUT.shards/."))] = None,
    store: options.Store = None,
    no_history: options.NoHistory = False,
) -> None:
    """Combine the shards of one run into one run directory: the samples and results of the unsharded run.

    Refuses shards of different runs (dataset, model or settings differ), a missing or repeated shard,
    and unfinished samples."""
    history = None
    if not no_history:
        history = Store(store or default_store_path())
    if out is None:  # `proctor merge OUT`: the shards of `proctor run --shards N -o OUT` (proctor.run.executors)
        if len(shard_dirs) != 1:
            raise ProctorError("merge: give -o DIR (or one executor run's OUT, whose shards are in OUT.shards/)")
        log = finish(shard_dirs[0], history)
    else:
        log = merge_runs(shard_dirs, out, history)
    if log.results is not None:
        typer.echo(plain(f"{log.manifest.dataset.name or 'run'}: {accuracy_line(log.results)}  → {log.path}"))


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("merge", epilog=MERGE_EXAMPLES)(merge)
