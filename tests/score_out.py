"""Where `proctor score -o OUT` put its run log: a run directory of its own inside OUT."""

from __future__ import annotations

from pathlib import Path


def run_dirs(out: Path) -> list[Path]:
    """The run directories `score -o out` made, sorted by name."""
    return sorted(p.parent for p in out.glob("*/manifest.json"))


def the_run_dir(out: Path) -> Path:
    """The one run directory inside `out` (a test that scored one model there)."""
    (only,) = run_dirs(out)
    return only
