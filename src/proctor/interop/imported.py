"""What every importer shares: the options, the imported run, item ids, outcomes, and writing the run directory.

An importer turns another harness's log into an `ImportedRun` (a proctor `Manifest` and `Sample`s) without
writing anything; `write_run` then writes it through proctor's own run-log functions, in a temporary
directory renamed into place at the end, so an import that fails leaves nothing behind.
"""

from __future__ import annotations

import hashlib
import math
import string
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..log.provenance import (
    BackendInfo,
    DatasetInfo,
    ImportOrigin,
    ScorerInfo,
    collect_provenance,
    utc_now,
)
from ..log.runlog import (
    SAMPLES,
    Manifest,
    Outcome,
    RunLog,
    RunSettings,
    Sample,
    append_samples,
    write_manifest,
)
from ..run.finalize import finalize_run
from ..util.errors import InputError
from ..util.safepath import safe_component
from ..util.textio import atomic_directory


class ImportOptions(BaseModel):
    """What `proctor import` was told: names to record and how to read the other harness's log."""

    model_config = ConfigDict(frozen=True)

    name: str | None = None  # the model name to record (default: the harness's own)
    dataset: str | None = None  # the dataset name to record (default: the task's name)
    item_id: str | None = None  # a field ("doc_id") or a template over the fields ("mmlu-pro.{question_id}")
    metric: str | None = None  # which of the harness's per-sample metrics is the score
    command: list[str] | None = None  # the command line that asked for the import


class ImportedRun(BaseModel):
    """One run read from another harness, not yet written."""

    source: Path
    manifest: Manifest
    samples: list[Sample]

    @property
    def label(self) -> str:
        """`harness task (model, metric)` for messages."""
        origin = self.manifest.imported_from
        harness, task, metric = (origin.harness, origin.task, origin.metric) if origin else (None, None, None)
        return f"{harness} {task} ({self.manifest.model.spec}, {metric})"


def file_digest(path: Path) -> str:
    """sha256 of a file's bytes (what was imported, recorded in the manifest)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return "sha256:" + h.hexdigest()


def import_run_id(harness: str, digests: Sequence[str], task: str, metric: str, item_id: str, name: str,
                  dataset: str) -> str:
    """Deterministic per (source files, task, metric, item ids, names): importing again replaces the same run."""
    key = "\x1f".join([harness, *digests, task, metric, item_id, name, dataset])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def iso_time(value: Any) -> str | None:
    """A Unix time (lm-eval's `date`) or an ISO string as an ISO-8601 UTC string; None when neither."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        try:
            return datetime.fromtimestamp(value, UTC).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):  # 1e300: no such time
            return None
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value).astimezone(UTC).isoformat(timespec="seconds")
        except ValueError:
            return None
    return None


_PLAIN_FIELD = frozenset(string.ascii_letters + string.digits + "_-")


def item_template(given: str | None, default: str) -> str:
    """The `--item-id` template: a bare field name (`question_id`) is that field alone (`{question_id}`)."""
    if not given:
        return default
    return given if "{" in given or "}" in given else f"{{{given}}}"


def check_item_template(template: str, where: str | Path) -> list[str]:
    """The field names of an `--item-id` template; only plain `{name}` fields (no attribute or index access)."""
    names: list[str] = []
    try:
        parts = list(string.Formatter().parse(template))
    except ValueError as e:
        raise InputError.at(where, f"--item-id {template!r}: {e}") from None
    for _, name, spec, conversion in parts:
        if name is None:
            continue
        if not name or set(name) - _PLAIN_FIELD or spec or conversion:
            raise InputError.at(where, f"--item-id {template!r}: use plain fields such as {{doc_id}}, got {{{name}}}")
        names.append(name)
    if not names:
        raise InputError.at(where, f"--item-id {template!r} names no field: every item would get the same id")
    return names


def item_id_from(template: str, fields: Mapping[str, Any], where: str | Path, line: int | None = None) -> str:
    """The item id `template` gives for one sample's fields; a field it lacks is an error naming the known ones."""
    values: dict[str, str] = {}
    for name in check_item_template(template, where):
        value = fields.get(name)
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            known = ", ".join(sorted(k for k, v in fields.items() if isinstance(v, str | int)
                                     and not isinstance(v, bool)))
            raise InputError.at(where, f"--item-id {template!r}: this sample has no text or number field "
                                       f"{name!r} (fields: {known})", line)
        values[name] = str(value)
    return template.format_map(values)


def check_unique_ids(samples: Sequence[Sample], template: str, where: str | Path) -> None:
    """Two samples of one epoch with the same item id cannot be paired: refuse, naming the id."""
    seen: set[str] = set()
    for s in samples:
        if s.sample_id in seen:
            raise InputError.at(where, f"--item-id {template!r} gives item id {s.item_id!r} to more than one sample"
                                       " of one epoch; choose a template that is unique per item")
        seen.add(s.sample_id)


def outcome_of(score: float) -> Outcome:
    """1 is correct, 0 wrong, anything between partial credit."""
    if score >= 1.0:
        return Outcome.CORRECT
    return Outcome.WRONG if score <= 0.0 else Outcome.PARTIAL


def unit_score(value: Any) -> float | None:
    """A per-sample metric as a score in [0, 1] (a bool counts as 1/0); None when it is not one."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None


def new_manifest(*, run_id: str, dataset: DatasetInfo, model: BackendInfo, settings: RunSettings,
                 started_at: str | None, imported_from: ImportOrigin, command: list[str] | None = None) -> Manifest:
    """The manifest of an imported run: the other harness's provenance and the settings it recorded (mode,
    epochs, generation), and `imported_from` naming the source."""
    return Manifest(
        run_id=run_id, provenance=collect_provenance({"spec": model.spec}), dataset=dataset, model=model,
        scorer=ScorerInfo(scorer="imported", harness=imported_from.harness, metric=imported_from.metric),
        settings=settings, command=command, started_at=started_at or utc_now(), imported_from=imported_from,
    )


def run_dir_for(run: ImportedRun, runs_root: Path) -> Path:
    """`RUNS_ROOT/<dataset>__<model>__<run id>`, as `proctor run` names its directories."""
    man = run.manifest
    name = safe_component(f"{man.dataset.name}__{man.model.spec}".replace(":", "-"), fallback="run")
    return runs_root / f"{name}__{man.run_id}"


def write_run(run: ImportedRun, run_dir: Path) -> RunLog:
    """Write the run directory whole (manifest, samples, results computed by proctor) or not at all."""
    with atomic_directory(run_dir) as tmp:
        write_manifest(tmp, run.manifest)
        append_samples(tmp / SAMPLES, run.samples)
        log = finalize_run(RunLog(path=tmp, manifest=run.manifest, samples=run.samples))
    return log.model_copy(update={"path": run_dir})
