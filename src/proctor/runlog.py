"""The run log — the product of every run, readable without a model.

A run directory holds:
* `manifest.json` — what produced the run (never a secret);
* `samples.jsonl` — one `Sample` per line, appended as each finishes;
* `results.json` — the metrics, a pure function of the samples (`proctor.stats.summarize`).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Sequence
from enum import StrEnum
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from .errors import InputError, ProctorError
from .textio import read_bytes, read_text, write_json_atomic

MANIFEST, SAMPLES, RESULTS = "manifest.json", "samples.jsonl", "results.json"
RUNLOG_VERSION = 1
log = logging.getLogger("proctor.runlog")


class Outcome(StrEnum):
    CORRECT = "correct"  # full credit
    PARTIAL = "partial"  # some credit (graded responses, judge grades)
    WRONG = "wrong"  # an answer was found and earned nothing
    NO_ANSWER = "no_answer"  # the extractor found no answer: scored 0, reported on its own
    ERROR = "error"  # the model/API failed: not scored, retried by a re-run
    UNSCORED = "unscored"  # no reference answer (e.g. suite context with expected = -1)


SCORED_OUTCOMES = frozenset({Outcome.CORRECT, Outcome.PARTIAL, Outcome.WRONG, Outcome.NO_ANSWER})


class _Log(BaseModel):
    model_config = ConfigDict(extra="allow")


class Sample(_Log):
    """One item answered once (one epoch) by one model."""

    sample_id: str  # f"{item_id}#{epoch}"
    item_id: str
    epoch: int = 0
    dataset: str = ""
    category: str | None = None
    subcategory: str | None = None
    modality: str | None = None
    difficulty: float | None = None
    mode: str = "generate"  # "generate" | "logprob"
    prompt: list[dict[str, str]] | str = ""  # chat messages, or the scored context
    reference: Any = None  # the gold answer(s)
    raw_output: str | None = None
    extracted: str | None = None
    extraction_rule: str | None = None  # which rule found the answer ("none" when none did)
    score: float | None = None  # in [0, 1]; None when unscored or errored
    outcome: Outcome
    error: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    latency_s: float | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)  # mode-specific: choice log-probs, judge verdict…

    @property
    def scored(self) -> bool:
        return self.outcome in SCORED_OUTCOMES


class Manifest(_Log):
    """Provenance: everything that produced the run."""

    runlog_version: int = RUNLOG_VERSION
    run_id: str
    proctor_version: str
    git_sha: str | None = None
    dataset: dict[str, Any]  # name, source, revision, content_hash, n_items…
    model: dict[str, Any]  # spec + describe() of the backend
    mode: str
    prompt_kind: str | None = None
    prompt_template_hash: str | None = None
    extractor_version: str | None = None
    choice_order_seed: int | None = None
    generation: dict[str, Any] = Field(default_factory=dict)
    epochs: int = 1
    judge: dict[str, Any] | None = None
    command: list[str] | None = None
    identity: dict[str, Any] = Field(default_factory=dict)  # the settings that make this run this run
    host: dict[str, Any] = Field(default_factory=dict)
    started_at: str
    finished_at: str | None = None
    elapsed_s: float | None = None  # wall time spent running, summed over every session (a resumed run too)


class RunLog(BaseModel):
    """A run read back from its directory."""

    path: Path
    manifest: Manifest
    samples: list[Sample] = Field(repr=False)  # a repr of 12k samples costs seconds (asyncio.run prints it)
    results: dict[str, Any] | None = Field(default=None, repr=False)


def append_samples(path: Path, samples: Sequence[Sample]) -> None:
    """Append finished samples durably as whole, newline-framed records (one write, flush + fsync).

    A write that fails (a full disk, a read-only directory) is undone, so the log never ends in a
    partial record, and reported as one line with the path; a kill mid-write leaves a torn tail that
    `repair_torn_tail` cuts off before the next append.
    """
    if not samples:
        return
    data = "".join(s.model_dump_json() + "\n" for s in samples).encode("utf-8")
    try:
        with open(path, "ab") as f:
            start = os.fstat(f.fileno()).st_size
            try:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            except OSError:
                f.truncate(start)
                raise
    except OSError as e:
        raise ProctorError(f"{path}: cannot write: {e.strerror or e}") from None


def append_sample(path: Path, sample: Sample) -> None:
    """Append one finished sample durably."""
    append_samples(path, [sample])


def repair_torn_tail(path: Path) -> int:
    """Cut off a last line with no newline (a write interrupted by a kill); return the bytes removed.

    Only whole, newline-ended records are ever built upon; what was cut is reported on stderr.
    """
    try:
        with open(path, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            f.seek(size - 1)
            if f.read(1) == b"\n":
                return 0
            keep = _last_newline_end(f, size)
            f.truncate(keep)
            f.flush()
            os.fsync(f.fileno())
    except FileNotFoundError:
        return 0
    except OSError as e:
        raise ProctorError(f"{path}: cannot repair: {e.strerror or e}") from None
    log.warning("%s: dropped a torn last record (%d bytes) left by an interrupted run; it will be redone",
                path, size - keep)
    return size - keep


def _last_newline_end(f: BinaryIO, size: int) -> int:
    """The offset just past the last newline of the open file (0 when there is none)."""
    pos = size
    while pos > 0:
        step = min(65536, pos)
        pos -= step
        f.seek(pos)
        block = f.read(step)
        at = block.rfind(b"\n")
        if at >= 0:
            return pos + at + 1
    return 0


def iter_samples(path: Path) -> Iterator[Sample]:
    """Read samples back; a torn last line (no newline: a kill mid-write) is skipped, any other bad line is an error."""
    if not path.exists():
        return
    raw = read_bytes(path)
    lines = raw.split(b"\n")
    if lines and lines[-1].strip():
        log.warning("%s: ignoring a torn last record (%d bytes) left by an interrupted run", path, len(lines[-1]))
    for lineno, line in enumerate(lines[:-1], start=1):
        if not line.strip():
            continue
        try:
            yield Sample.model_validate_json(line)
        except ValueError as e:  # pydantic's ValidationError (bad JSON, bad UTF-8 included) is a ValueError
            raise InputError.at(path, f"bad sample: {e}", lineno) from None


def write_manifest(run_dir: Path, manifest: Manifest) -> None:
    """Write the manifest; every string in it is redacted first (a key in a URL or a command line never lands)."""
    from .redact import redact

    write_json_atomic(run_dir / MANIFEST, redact(manifest.model_dump(mode="json")))


def write_results(run_dir: Path, results: dict[str, Any]) -> None:
    write_json_atomic(run_dir / RESULTS, results)


def read_manifest(run_dir: str | Path) -> Manifest:
    d = Path(run_dir)
    mpath = d / MANIFEST
    if not mpath.exists():
        raise InputError.at(d, f"not a run directory (no {MANIFEST})")
    try:
        return Manifest.model_validate(json.loads(read_text(mpath)))
    except (json.JSONDecodeError, ValueError) as e:
        raise InputError.at(mpath, f"bad manifest: {e}") from None


def read_run(run_dir: str | Path) -> RunLog:
    """Load a run directory; later samples of the same sample_id replace earlier ones (retried errors)."""
    d = Path(run_dir)
    manifest = read_manifest(d)
    latest: dict[str, Sample] = {}
    for s in iter_samples(d / SAMPLES):
        latest[s.sample_id] = s
    results = json.loads(read_text(d / RESULTS)) if (d / RESULTS).exists() else None
    return RunLog(path=d, manifest=manifest, samples=list(latest.values()), results=results)
