"""`proctor export RUN… --to FORMAT -o DIR`: proctor runs in another tool's format (proctor.exporters)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..exporters import FORMATS

EXPORT_EXAMPLES = """Examples (after `proctor run … -o runs/NAME`, `proctor score … -o out/scores`):

  proctor export runs/mmlu-pro-qwen3 --to llmwc -o out/llmwc
  proctor export out/scores --to probsem -o out/probsem
  proctor export runs/mmlu-pro-qwen3 --to inspect -o out/inspect     # then: inspect view --log-dir out/inspect
  proctor export runs/* --to eee -o out/eee

Formats:
""" + "\n".join(f"  {f.name:8} {f.blurb}" for f in FORMATS.values()) + "\n"


def export(
    run_dirs: Annotated[list[Path], typer.Argument(
        metavar="RUN...", show_default=False,
        help="Run directories (manifest.json + samples.jsonl), or folders of them (e.g. runs/, score's -o).")],
    to: Annotated[str, typer.Option(
        "--to", "-t", metavar="|".join(FORMATS), show_default=False, help="The format to write.")],
    out: Annotated[Path, typer.Option(
        "--out", "-o", metavar="DIR", show_default=False,
        help="A new (or empty) folder to write into; it appears whole or not at all.")],
) -> None:
    """Write runs in another tool's format (llm-wc, probsem, Inspect, Every Eval Ever)."""
    from ..exporters import export as write

    written = write(run_dirs, to, out)
    typer.echo(f"wrote {len(written)} {to} files to {out}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("export", epilog=EXPORT_EXAMPLES)(export)
