"""`proctor export RUN… --to FORMAT -o DIR`: proctor runs in another tool's format (proctor.interop.exporters)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..interop.exporters import FORMATS
from ..interop.exporters import export as write
from ..run.interruptible import terminate_as_interrupt
from .messages import count

EXPORT_EXAMPLES = """Examples (on the bundled examples, offline; open an Inspect log with `inspect view --log-dir DIR`):

  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:first -o runs/mmlu-first
  proctor export runs/mmlu-first --to llmwc -o out/mmlu-llmwc
  proctor export runs/mmlu-first --to inspect -o out/mmlu-inspect
  proctor export runs/mmlu-first --to eee -o out/mmlu-eee
  proctor score examples/suites --model scripted:random -o out/suites
  proctor export out/suites --to probsem -o out/suites-probsem

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
    with terminate_as_interrupt():  # SIGTERM cleans the staging folder up as ctrl-C does
        written = write(run_dirs, to, out)
    typer.echo(f"wrote {count(len(written), f'{to} file')} to {out}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("export", epilog=EXPORT_EXAMPLES)(export)
