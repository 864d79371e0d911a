"""Resume never trusts a hand-edited manifest: the run directory's manifest.json must agree with the run the
same command resolves, field by field, or the run is refused naming the first field that differs.

The run id alone does not catch an edit: it is read from the manifest, not recomputed from it, and the values a
run is finished with (its no-answer and truncation policies) are read back from the manifest too. So a
manifest whose spec, policies, data content hash or item count disagree with the resolved spec and the loaded
data — or whose runlog version is newer than this proctor writes — is refused (exit 2) before anything is asked
or rewritten. So is a finished run whose samples.jsonl no longer holds the lines checksums.json recorded: resuming
would print the edited numbers and write a new checksum over them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ..core.spec import RunSpec
from ..data.tasks import Task
from ..log.checksums import edited_sample_line
from ..log.runlog import MANIFEST, RUNLOG_VERSION, SAMPLES, Manifest
from ..util.errors import InputError


def _leaves(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(data, Mapping) and data:
        for key in sorted(data):
            yield from _leaves(data[key], f"{prefix}{key}.")
    else:
        yield prefix.rstrip("."), data


def spec_difference(recorded: RunSpec, asked: RunSpec) -> str | None:
    """The first field of the run id's identity where `recorded` and `asked` differ (`scorer.no_answer`), or None."""
    mine, theirs = dict(_leaves(recorded.identity())), dict(_leaves(asked.identity()))
    for path in sorted(mine.keys() | theirs.keys()):
        if mine.get(path) != theirs.get(path):
            return f"{path} is {mine.get(path)!r} in manifest.json's spec, {theirs.get(path)!r} for this command"
    return None


def _recorded(found: Manifest, name: str) -> Any:
    """What the manifest records for a policy it keeps beside the spec (a manifest without that copy: None)."""
    return getattr(found, name, None)


def disagreement(found: Manifest, spec: RunSpec, task: Task) -> str | None:
    """Why `found` (a run directory's manifest with this run's id) is not this run's record, or None."""
    if found.runlog_version > RUNLOG_VERSION:
        return f"runlog_version {found.runlog_version} is newer than this proctor writes ({RUNLOG_VERSION})"
    if found.spec is not None and (why := spec_difference(found.spec, spec)) is not None:
        return why
    for name, value in (("no_answer", spec.scorer.no_answer or "wrong"), ("truncated_as", spec.scorer.truncated_as)):
        recorded = _recorded(found, name)
        if recorded is not None and recorded != value:
            return f"{name} is {recorded!r} in manifest.json, {value!r} for this command"
    if found.dataset.content_hash is not None and found.dataset.content_hash != task.content_hash:
        return (f"dataset.content_hash is {found.dataset.content_hash!r} in manifest.json, the data's is "
                f"{task.content_hash!r}")
    if found.dataset.n_items is not None and found.dataset.n_items != len(task.items):
        return f"dataset.n_items is {found.dataset.n_items} in manifest.json, the data has {len(task.items)}"
    return None


def check_resumable(run_dir: Path, found: Manifest, spec: RunSpec | None, task: Task) -> None:
    """Refuse to resume into `run_dir` when its manifest disagrees with this run, or a finished run's samples were
    edited since (InputError at the file; nothing is rewritten, checksums.json least of all)."""
    if (line := edited_sample_line(run_dir)) is not None:
        raise InputError.at(run_dir / SAMPLES, "differs from the line checksums.json recorded when the run finished: "
                            "the file was edited; resume refused (choose another -o directory, or restore the file)",
                            line)
    if spec is None:
        return
    why = disagreement(found, spec, task)
    if why is not None:
        raise InputError.at(run_dir / MANIFEST, f"{why}: the file was edited, or another proctor wrote it; "
                            "resume refused (choose another -o directory, or restore the file)")


__all__ = ["check_resumable", "disagreement", "spec_difference"]
