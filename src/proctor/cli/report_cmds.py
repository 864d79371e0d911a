"""`proctor report RUN_DIR... -o report.html [--format html|md] [--store PATH]`."""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..core.spec import HumanLabels
from ..log.runlog import expand_run_dirs
from ..report import MAX_SAMPLES, write_report
from . import options


class ReportFormat(StrEnum):
    HTML = "html"
    MD = "md"


REPORT_EXAMPLES = """Examples (after `proctor run … -o runs/NAME` on the bundled examples):

  proctor report runs/* -o out/report.html
  proctor report runs/* -o out/report.md
"""


def report(
    run_dirs: Annotated[list[Path], typer.Argument(
        metavar="RUN_DIR...", show_default=False,
        help="Run directories (manifest.json + samples.jsonl), or folders of them (e.g. runs/, score's -o).")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="FILE", help=(
            "File to write (default: report.html, or report.md with --format md, in the run directory; for several "
            "runs, in the folder that holds them)."))
    ] = None,
    output: Annotated[Path | None, options.old_spelling("--output", "FILE")] = None,
    fmt: Annotated[ReportFormat | None, typer.Option(
        "--format", "-f", metavar="html|md",
        help="html (a self-contained page) or md (default: from the --out suffix, else html).")] = None,
    store: options.Store = None,
    mix_settings: Annotated[bool, typer.Option(
        "--mix-settings", help="Compare runs of the same items under different settings too (as compare does).")
    ] = False,
    max_samples: Annotated[int, typer.Option(
        "--max-samples", metavar="N", min=0, help=(
            "At most N samples in the HTML sample browser, over every run; runs holding more show a random sample "
            "(seeded by each run id) and the page says so. 0: all. (default: 10000)"))
    ] = MAX_SAMPLES,
    human_labels: Annotated[list[str] | None, typer.Option(
        "--human-labels", metavar="[RUN_DIR=]FILE", help=(
            "Human verdicts on a run's items (JSON Lines or CSV: docs/statistics.md): the report shows the "
            "judge-corrected accuracy; RUN_DIR=FILE names the run, FILE alone with one run; repeatable (default: "
            "each run's own, from `run --human-labels`)."))
    ] = None,
) -> None:
    """Write a report of one or more runs and print its path."""
    output = options.prefer(out, output, "--output", "--out")
    if fmt is None:
        fmt = ReportFormat.MD if output is not None and output.suffix.lower() in (".md", ".markdown") else ReportFormat.HTML

    runs = expand_run_dirs(run_dirs)
    out = output or beside(runs) / ("report.md" if fmt == ReportFormat.MD else "report.html")
    path = write_report(runs, out, fmt="md" if fmt == ReportFormat.MD else "html", store=store,
                        mix_settings=mix_settings, max_samples=max_samples,
                        labels=_labels(human_labels or [], runs))
    typer.echo(str(path))


def _labels(given: list[str], runs: list[Path]) -> dict[Path, HumanLabels]:
    """`--human-labels` by run directory (resolved): each file read and checked."""
    from ..analysis.corrected import labels_by_run
    from ..metrics.human_labels import read_human_labels

    files = labels_by_run(given, [str(r) for r in runs]) if given else {}
    return {Path(run).resolve(): read_human_labels(file) for run, file in files.items()}


def beside(runs: list[Path]) -> Path:
    """Where a report goes without -o: in the run directory, or the deepest folder holding every run."""
    if len(runs) == 1:
        return runs[0]
    try:
        return Path(os.path.commonpath([str(r) for r in runs]))
    except ValueError:  # relative and absolute paths mixed
        return Path(os.path.commonpath([os.path.abspath(r) for r in runs]))


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("report", epilog=REPORT_EXAMPLES)(report)
