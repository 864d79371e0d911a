"""Reports: one self-contained HTML file (inline SVG plots, a sample browser) or Markdown tables.

Both are pure functions of run directories (and, optionally, the history store).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from ..core.spec import HumanLabels
from ..util.textio import write_text_atomic
from .data import ReportData, load
from .html import MAX_SAMPLES, render_html
from .markdown import render_markdown

__all__ = ["MAX_SAMPLES", "ReportData", "load", "render_html", "render_markdown", "write_report"]


def write_report(
    run_dirs: Sequence[str | Path],
    out: str | Path,
    *,
    fmt: Literal["html", "md"] = "html",
    store: str | Path | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    mix_settings: bool = False,
    max_samples: int = MAX_SAMPLES,
    labels: Mapping[Path, HumanLabels] | None = None,
) -> Path:
    """Read the runs, render the report and write it atomically to `out`; returns the path written. The HTML sample
    browser holds at most `max_samples` samples (a seeded random draw when the runs hold more; 0: all). `labels`:
    human labels by run directory (resolved), for the judge-corrected accuracy (`report --human-labels`)."""
    data = load(run_dirs, store=store, history=history, mix_settings=mix_settings, labels=labels)
    write_text_atomic(out, render_html(data, max_samples) if fmt == "html" else render_markdown(data))
    return Path(out)
