"""`checksums.json`: the content hashes a finished run holds, so that anyone can check it (`proctor verify`).

The sha256 of `manifest.json`, `samples.jsonl`, `results.json` and (where the run has one) `prompts.jsonl`, the heads
its prompts share (so a sample's prompt is checked whole), a short sha256 of every line of each (so that a
difference is found at its line), and the content hash of the data the run evaluated (the manifest's, computed
from the items). Written by `proctor.run.finalize.finalize_run` after results.json and the manifest; read by
`proctor.run.verify`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from ..util.errors import InputError
from ..util.limits import max_line_bytes
from ..util.textio import open_checked, read_json_record, write_json_atomic
from .prompts import PROMPTS
from .runlog import MANIFEST, RESULTS, SAMPLES, Manifest, read_manifest

CHECKSUMS = "checksums.json"
FORMAT = "proctor-checksums/1"
HASHED = (MANIFEST, SAMPLES, RESULTS, PROMPTS)
OPTIONAL = frozenset({PROMPTS})  # a run whose prompts share no head, or written before heads were stored, has none
LINE_HEX = 16  # a line's hash, in hex digits: enough to find the line; the file's full sha256 proves it


def line_hash(line: bytes) -> str:
    """The short sha256 checksums.json records for one line (newline included)."""
    return hashlib.sha256(line).hexdigest()[:LINE_HEX]


def digest(path: Path) -> dict[str, Any]:
    """A file's sha256 and the short sha256 of each of its lines (newline included), read in pieces of at most
    1 MiB (a line of gigabytes, a sparse file's, is never held whole)."""
    whole, lines = hashlib.sha256(), []
    line, open_line = hashlib.sha256(), False
    with open_checked(path) as f:  # a regular file: a FIFO or a device is refused, never waited on
        while piece := f.readline(1 << 20):
            whole.update(piece)
            line.update(piece)
            open_line = not piece.endswith(b"\n")
            if not open_line:
                lines.append(line.hexdigest()[:LINE_HEX])
                line = hashlib.sha256()
    if open_line:
        lines.append(line.hexdigest()[:LINE_HEX])
    return {"sha256": whole.hexdigest(), "lines": lines}


def write_checksums(run_dir: Path, manifest: Manifest | None = None) -> Path:
    """Write `checksums.json` for a finished run: its files' hashes and the data's content hash (from its
    manifest, which computed it from the items the run evaluated)."""
    manifest = manifest if manifest is not None else read_manifest(run_dir)
    record = {
        "format": FORMAT,
        "algorithm": "sha256",
        "data": {"content_hash": manifest.dataset.content_hash, "n_items": manifest.dataset.n_items},
        "files": {name: digest(run_dir / name) for name in HASHED if (run_dir / name).is_file()},
    }
    path = run_dir / CHECKSUMS
    write_json_atomic(path, record, indent=None)
    return path


def edited_sample_line(run_dir: Path) -> int | None:
    """The first line of `run_dir`'s samples.jsonl that differs from what checksums.json recorded when the run last
    finished, or None (not finished yet, or every recorded line as it was: lines appended since are a later
    attempt's, and a torn last line, killed mid-append, is cut by the next run, not edited). Lines cut from the
    end are not found: they are asked again (tests/test_attack_round6.py keeps that gap, xfail)."""
    if not (run_dir / CHECKSUMS).exists() or not (run_dir / SAMPLES).exists():  # a FIFO is there: refused below
        return None
    record = read_json_record(run_dir / CHECKSUMS)  # bounded: a FIFO, /dev/zero or deep JSON is one line, exit 2
    try:
        recorded = record["files"][SAMPLES]["lines"]
    except (KeyError, TypeError):
        return None  # no usable record: nothing to hold the samples to (`proctor verify` says so)
    if not isinstance(recorded, list):
        return None
    longest = max_line_bytes()
    with open_checked(run_dir / SAMPLES) as f:
        for i, old in enumerate(recorded, start=1):
            line = f.readline(longest + 1)
            if len(line) > longest:
                raise InputError.at(run_dir / SAMPLES, f"line longer than {longest:,} bytes (raise "
                                                       "PROCTOR_MAX_LINE_BYTES to read it)", i)
            if not line.endswith(b"\n"):
                return None  # the end (or a torn last line): lines cut from the end are asked again
            if line_hash(line) != old:
                return i
    return None


__all__ = ["CHECKSUMS", "FORMAT", "HASHED", "OPTIONAL", "digest", "edited_sample_line", "line_hash", "write_checksums"]
