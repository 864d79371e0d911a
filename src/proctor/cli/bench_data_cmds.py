"""`proctor datasets`: the built-in benchmarks (modules and shipped spec files) and the user's spec files, where
they come from and how big they are."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..benchmarks.registry import BUILTINS
from ..benchmarks.spec_task import builtin_specs, spec_summary, user_spec_dir, user_specs
from ..util.termsafe import plain
from .messages import warning
from .tables import console, fit, whole_table


def datasets(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """List the built-in benchmarks and the user's spec files ($PROCTOR_BENCHMARKS, else ./benchmarks) with
    their source, config, split and expected size."""
    rows = [{**b.as_dict(), "origin": "built-in"} for b in BUILTINS.values()]
    rows += [spec_summary(path, spec, "built-in spec") for path, spec in builtin_specs().values()]
    users, problems = user_specs()
    rows += [{**spec_summary(path, spec, "user spec"), "folder": str(user_spec_dir())} for path, spec in users.values()]
    for problem in problems:
        warning(f"not listed: {problem}")
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return

    table = whole_table("Benchmarks (DATASET names)")
    for col in ("name", "source", "config", "split", "size", "access", "origin"):
        table.add_column(col, justify="right" if col == "size" else "left")
    for r in rows:
        table.add_row(
            plain(r["name"]),
            plain(r["source"]),
            plain(r["config"] or "-"),
            plain(r["split"]),
            f"{r['size']:,}" if isinstance(r["size"], int) else "-",
            "gated" if r["gated"] else "open",
            plain(r["origin"]),
        )
    out = console()
    out.print(fit(table, ("name", "size", "access")))
    out.print(
        "Loaded from the Hugging Face Hub (revision recorded), or offline with --data-file PATH "
        "(parquet, csv or jsonl in the upstream schema). GPQA is gated: accept its terms on the dataset page "
        "and set HF_TOKEN. A benchmark spec file (docs/benchmarks-data.md) runs by its path or, in "
        "$PROCTOR_BENCHMARKS or ./benchmarks, by its name."
    )


def register(app: typer.Typer) -> None:
    """Add `datasets` to `app`."""
    app.command("datasets", epilog="Example:\n\n  proctor datasets --json\n")(datasets)
