"""`proctor datasets`: the built-in benchmarks, where they come from and how big they are."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer

from ..benchmarks.registry import BUILTINS


def datasets(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the built-in benchmarks with their source, config, split and expected size."""
    rows = [b.as_dict() for b in BUILTINS.values()]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Built-in benchmarks (DATASET names)")
    for col in ("name", "source", "config", "split", "size", "access"):
        table.add_column(col, justify="right" if col == "size" else "left")
    for r in rows:
        table.add_row(
            r["name"],
            r["source"],
            r["config"] or "-",
            r["split"],
            f"{r['size']:,}",
            "gated" if r["gated"] else "open",
        )
    console = Console(width=None if sys.stdout.isatty() else 110)
    console.print(table)
    console.print(
        "Loaded from the Hugging Face Hub (revision recorded), or offline with --data-file PATH "
        "(parquet, csv or jsonl in the upstream schema). GPQA is gated: accept its terms on the dataset page "
        "and set HF_TOKEN."
    )


def register(app: typer.Typer) -> None:
    """Add `datasets` to `app`."""
    app.command("datasets", epilog="Example:\n\n  proctor datasets --json\n")(datasets)
