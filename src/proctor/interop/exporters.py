"""Exporters: a proctor run log written in another tool's format (`proctor export RUN… --to FORMAT -o DIR`).

The core writes only proctor's run log (manifest.json, samples.jsonl, results.json). Every other layout is
an exporter: one module per format with `export(logs, out) -> written paths`, named in `FORMATS`. An export
is written into a fresh folder beside `out` and renamed into place, so a failure leaves nothing half-written;
into an `out` that holds other files (an Inspect log dir), its files are linked in, all or none, never over
a file already there.
"""

from __future__ import annotations

import errno
import importlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pydantic import ValidationError

from ..log.runlog import expand_run_dirs
from ..metrics.results import read_run
from ..run.outputs import Finished
from ..util.errors import InputError, brief
from ..util.textio import make_staging

if TYPE_CHECKING:
    from ..log.runlog import RunLog


class Exporter(Protocol):
    def __call__(self, logs: Sequence[RunLog], out: Path) -> list[Path]: ...


@dataclass(frozen=True)
class Format:
    name: str  # the `--to` value
    module: str  # the exporter's module, imported only when asked for
    blurb: str


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("llmwc", "proctor.interop.llmwc_export", "llm-wc's results directory: run.json, models/<name>/{summary,results}.json"),
    Format("probsem", "proctor.interop.probsem_export", "probsem's per-suite CSV + JSONL and summary.json (suite runs)"),
    Format("inspect", "proctor.interop.inspect_export", "an Inspect eval log (.eval) that `inspect view` opens (extra: inspect)"),
    Format("eee", "proctor.interop.eee_export", "Every Eval Ever: data/<benchmark>/<developer>/<model>/<uuid>.json + _samples.jsonl"),
)}


def get_exporter(name: str) -> Exporter:
    """The `export` function of format `name`; an unknown name is `--to: …` (exit 2)."""
    fmt = FORMATS.get(name)
    if fmt is None:
        raise InputError.at("--to", f"{name!r}: not a format (proctor exports to {', '.join(FORMATS)})")
    exporter: Exporter = importlib.import_module(fmt.module).export
    return exporter


def export(run_dirs: Sequence[str | Path], to: str, out: str | Path) -> list[Path]:
    """Read the runs, write them as `to` into the new folder `out` (all or nothing); the paths written."""
    exporter = get_exporter(to)
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise InputError.at(target, "exists and is not a folder: export writes into a folder (choose another -o)")
    adding = target.is_dir() and any(target.iterdir())
    logs = [read_run(d, samples=False) for d in expand_run_dirs(run_dirs)]  # streamed: never all held
    if not logs:
        raise InputError.at("RUN", "no run directories given")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = make_staging(target)  # named after this process (a later export removes it if we are killed)
    except OSError as e:
        raise InputError.at(target, f"cannot write here: {e.strerror or e}") from e
    try:
        written = exporter(logs, staging)
        if adding:
            _add_files(staging, target, written)
            shutil.rmtree(staging, ignore_errors=True)
        else:
            staging.replace(target)  # an empty `out` is replaced whole; nothing else exists there
    except OSError as e:  # a name too long for the file system, a full disk, another export that got there first
        shutil.rmtree(staging, ignore_errors=True)
        raise OSError(e.errno, e.strerror, str(_as_destination(e.filename, staging, target))) from None
    except ValidationError as e:  # a value the format's own models refuse (a safety net: read_run checks first)
        shutil.rmtree(staging, ignore_errors=True)
        raise InputError.at(target, f"a run holds a value {to} refuses: {brief(e)}") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return [target / p.relative_to(staging) for p in written]


@dataclass(frozen=True)
class Export:
    """A run output (`proctor.run.outputs`): the finished runs exported to format `to` in the folder `out`, as
    `proctor export RUN… --to TO -o OUT` writes them from their run directories."""

    to: str
    out: Path

    def __post_init__(self) -> None:  # an unknown format is refused before the run, not after it
        if self.to not in FORMATS:
            raise InputError.at("export", f"{self.to!r}: not a format (proctor exports to {', '.join(FORMATS)})")
        object.__setattr__(self, "out", Path(self.out))

    @property
    def name(self) -> str:
        return f"{self.to} export"

    def write(self, runs: Sequence[Finished]) -> list[Path]:
        """The runs' directories exported (all or nothing)."""
        return export([run.log.path for run in runs], self.to, self.out)


def _add_files(staging: Path, target: Path, written: Sequence[Path]) -> None:
    """Link each written file into `target`, a folder holding other files (an Inspect log dir): all or none, and
    a file already there is refused (`path: exists`), never replaced."""
    added: list[Path] = []
    try:
        for path in written:
            dest = target / path.relative_to(staging)
            dest.parent.mkdir(parents=True, exist_ok=True)
            try:
                _place(path, dest)
            except FileExistsError:
                raise InputError.at(dest, "exists: export adds files to a folder, never replaces one "
                                          "(choose another -o, or move it away)") from None
            added.append(dest)
    except BaseException:
        for dest in added:
            dest.unlink(missing_ok=True)
        raise


def _place(src: Path, dest: Path) -> None:
    """`src` at `dest`, which must not exist (FileExistsError): a hard link, else (another file system) a copy
    into a file created exclusively."""
    try:
        os.link(src, dest)
    except OSError as e:
        if e.errno != errno.EXDEV:
            raise
        with open(src, "rb") as source, open(dest, "xb") as target:
            shutil.copyfileobj(source, target)


def _as_destination(filename: object, staging: Path, target: Path) -> Path:
    """The path an OSError named, shown where it would have been under `target` (the staging folder is gone)."""
    path = Path(str(filename)) if filename else staging
    return target / path.relative_to(staging) if path.is_relative_to(staging) else target
