"""`--shard K/N` and `proctor merge`: one run split over N jobs, then put back together.

Shard K of N takes the items whose id hashes to bucket K-1 (sha256 of the item id, mod N): stable (the
same item always lands in the same shard, whatever the job array's order or a re-run), disjoint, and
together complete. Each shard is a run directory of its own, with the same run id as the unsharded run,
and a `shard.json` naming its shard and the whole run's sample order. `merge_runs` checks the shards
belong to one run (same run id, dataset, model identity and settings), that each of 1..N is there once
and that every sample of the whole run is finished, then writes one run directory whose samples, in the
unsharded order, and results (a pure function of them) equal the unsharded run's.
"""

from __future__ import annotations

import hashlib
import json
import re
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any

from ..log.checksums import edited_sample_line
from ..log.runlog import (
    SAMPLES,
    EpochMajor,
    RunLog,
    Sample,
    SamplesOnDisk,
    append_samples,
    iter_run_samples,
    write_manifest,
)
from ..log.sampleindex import item_order
from ..util.errors import InputError, ProctorError
from ..util.textio import atomic_directory, read_json_record
from .finalize import finalize_run, on_disk

SHARD_FILE = "shard.json"
MAX_SHARDS = 1_000_000  # more jobs than items is possible (empty shards), but not without bound
_SHARD = re.compile(r"\s*([0-9]{1,7})\s*/\s*([0-9]{1,7})\s*", re.ASCII)
# manifest fields that differ between the shards of one run without changing its results
# `spec` too: its identity is the run id (compared), the rest is per job (the shard, the model's base URL)
_WRITE_BATCH = 256  # samples per append when a merge writes its run (the staging folder is swapped in whole)
PER_JOB_FIELDS = frozenset({"model", "command", "started_at", "finished_at", "elapsed_s", "shard", "spec"})


@dataclass(frozen=True)
class Shard:
    """Shard `index` (1-based) of `count`."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        """`K/N` with 1 ≤ K ≤ N; a clear error otherwise."""
        shown = repr(text if len(text) <= 40 else text[:40] + "…")
        found = _SHARD.fullmatch(text)
        if not found:  # ASCII digits only: `²` is a digit to str.isdigit, and int() refuses it
            raise ProctorError(f"--shard {shown}: expected K/N, e.g. 1/4 (shard 1 of 4), N at most {MAX_SHARDS}")
        shard = cls(int(found.group(1)), int(found.group(2)))
        if not 1 <= shard.index <= shard.count <= MAX_SHARDS:
            raise ProctorError(f"--shard {shown}: K must be between 1 and N, N at most {MAX_SHARDS}")
        return shard

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @property
    def suffix(self) -> str:
        """What a default run directory's name gets: `shard-K-of-N`."""
        return f"shard-{self.index}-of-{self.count}"

    def holds(self, item_id: str) -> bool:
        return bucket(item_id, self.count) == self.index - 1


def bucket(item_id: str, count: int) -> int:
    """The 0-based shard of an item: sha256 of its id, mod `count`."""
    return int.from_bytes(hashlib.sha256(item_id.encode()).digest()[:8], "big") % count


def write_shard_file(run_dir: Path, shard: Shard, run_id: str, order: Sequence[str]) -> None:
    """`shard.json`: which shard this directory is, and the whole run's sample ids in order."""
    data = {"shard": str(shard), "run_id": run_id, "order": list(order)}
    tmp = run_dir / (SHARD_FILE + ".tmp")
    tmp.write_text(json.dumps(data), encoding="utf-8")
    tmp.replace(run_dir / SHARD_FILE)


def manifest_shard(run_dir: Path) -> str | None:
    """The shard a run directory's shard.json names (None: none yet)."""
    try:
        return str(read_json_record(run_dir / SHARD_FILE)["shard"])
    except (OSError, ValueError, KeyError, TypeError, ProctorError):
        return None


@dataclass(frozen=True)
class ShardDir:
    path: Path
    shard: Shard
    order: Sequence[str]  # the whole run's sample ids (`compact_order`: items × epochs when it is that)
    order_digest: str  # the order's sha256: what two shards' orders are compared by
    log: Any  # proctor.log.runlog.RunLog


def compact_order(ids: list[str]) -> Sequence[str]:
    """`ids` as `EpochMajor` (each item id once, the epochs counted) when they are every item of epoch 0, then of
    epoch 1, …, as a run's plan is; else `ids` themselves. A shard of 120k samples held 120k id strings (#40)."""
    n = next((i for i, sid in enumerate(ids) if sid.endswith("#1")), len(ids))  # where epoch 1 starts
    if n == 0 or len(ids) % n:
        return ids
    compact = EpochMajor([sid.rpartition("#")[0] for sid in ids[:n]], len(ids) // n)
    return compact if all(a == b for a, b in zip(compact, ids, strict=True)) else ids


def _read_shard(path: Path) -> ShardDir:
    file = path / SHARD_FILE
    if not file.exists():  # a FIFO or a device there is refused by the read below, never waited on
        raise ProctorError(f"{path}: not a shard (no {SHARD_FILE}; was it run with --shard K/N?)")
    data = read_json_record(file)  # bounded (a FIFO, a huge or deep file): one line, never a hang or a traceback
    try:
        shard, order = Shard.parse(str(data["shard"])), [str(x) for x in data["order"]]
        del data
    except (ValueError, KeyError, TypeError, ProctorError) as e:
        raise ProctorError(f"{file}: unreadable shard file ({e})") from None
    if (line := edited_sample_line(path)) is not None:  # merged, the edit would be checksummed as the run's
        raise InputError.at(path / SAMPLES, "differs from the line checksums.json recorded when the shard finished: "
                            "the file was edited; merge refused (re-run the shard, or restore the file)", line)
    # its samples left on disk (read one at a time when used): read_run would also recompute the shard's results to
    # check them, which the merge recomputes for the whole run anyway (memory and time past 100k samples)
    digest = hashlib.sha256("\n".join(order).encode()).hexdigest()
    return ShardDir(path, shard, compact_order(order), digest, on_disk(path))


def _comparable(manifest: Any) -> dict[str, Any]:
    """The manifest as JSON with its provenance reduced to the resolved backend (`model_identity`): the host, the
    commit and the package versions are each job's own."""
    data: dict[str, Any] = manifest.model_dump(mode="json")
    data["model_identity"] = data.pop("provenance")["backend"]
    return data


def _same_run(first: ShardDir, other: ShardDir) -> None:
    """Refuse a shard of another run, naming the first setting that differs."""
    a, b = _comparable(first.log.manifest), _comparable(other.log.manifest)
    for key in sorted(set(a) | set(b)):
        if key not in PER_JOB_FIELDS and a.get(key) != b.get(key):
            raise ProctorError(f"{other.path} is a shard of another run than {first.path}: their {key} differ "
                               f"({json.dumps(a.get(key))[:200]} vs {json.dumps(b.get(key))[:200]})")
    if first.shard.count != other.shard.count or first.order_digest != other.order_digest:
        raise ProctorError(f"{other.path} splits the run otherwise than {first.path} (shard {other.shard} vs "
                           f"{first.shard})")


class _Owners:
    """Which shard (its position in `shards`) gives each sample of the run's `order`: four bytes a sample, at the
    sample's position in the order (found from its item and epoch when the order is `EpochMajor`: no id held; a dict
    of positions for any other order). A sample outside the order is not the run's, and has no owner."""

    def __init__(self, order: Sequence[str]) -> None:
        self.order = order
        self._items = {item: i for i, item in enumerate(order.item_ids)} if isinstance(order, EpochMajor) else None
        self._ids = None if self._items is not None else {sid: i for i, sid in enumerate(order)}
        self._codes = array("i", [-1]) * len(order)  # up to MAX_SHARDS

    def _position(self, sid: str) -> int | None:
        if self._ids is not None:
            return self._ids.get(sid)
        assert self._items is not None
        item, epoch = item_order(sid)
        i = self._items.get(item)
        if i is None:
            return None
        k = epoch * len(self._items) + i
        return k if k < len(self.order) and self.order[k] == sid else None

    def get(self, sid: str) -> int | None:
        k = self._position(sid)
        return None if k is None or self._codes[k] < 0 else self._codes[k]

    def give(self, sid: str, pos: int) -> None:
        if (k := self._position(sid)) is not None:
            self._codes[k] = pos


def _owners(shards: Sequence[ShardDir], order: Sequence[str]) -> _Owners:
    """Which shard gives each sample, read one at a time. A sample two shards hold with different outcomes or scores
    is refused, naming it and both shards; an identical copy is kept once (the lower shard's, whatever the argument
    order)."""
    owners = _Owners(order)
    for pos, shard in sorted(enumerate(shards), key=lambda p: p[1].shard.index):
        for x in shard.log.iter_samples():
            had = owners.get(x.sample_id)
            if had is None:
                owners.give(x.sample_id, pos)
                continue
            first = next(iter_run_samples(shards[had].path, order=[x.sample_id]))  # a copy: rare, read again
            if (first.outcome, first.score) != (x.outcome, x.score):
                raise ProctorError(f"merge: sample {x.sample_id} is in {shards[had].path} ({first.outcome}, score "
                                   f"{first.score}) and in {shard.path} ({x.outcome}, score {x.score}): "
                                   "which is right cannot be told; re-run that item's shard")
    return owners


def _in_order(shards: Sequence[ShardDir], owners: _Owners, order: Sequence[str]) -> Iterator[Sample]:
    """The run's samples in `order`, each from the shard that gives it, read one at a time (an index a shard)."""
    def given_by(pos: int) -> Iterator[str]:
        return (sid for sid in order if owners.get(sid) == pos)

    streams = [iter_run_samples(s.path, order=given_by(pos)) for pos, s in enumerate(shards)]
    for sid in order:
        owner = owners.get(sid)
        assert owner is not None  # merge_runs refused an unfinished run
        yield next(streams[owner])


def merge_runs(dirs: Iterable[Path], out: Path, store: Any = None) -> Any:
    """Merge the shard directories `dirs` into the run directory `out`; return its RunLog."""
    shards = [_read_shard(Path(d)) for d in dirs]
    if not shards:
        raise ProctorError("merge: give the shard run directories")
    for s in shards[1:]:
        _same_run(shards[0], s)
    count = shards[0].shard.count
    seen: dict[int, Path] = {}
    for s in shards:
        if s.shard.index in seen:
            raise ProctorError(f"merge: shard {s.shard} is given twice ({seen[s.shard.index]} and {s.path})")
        seen[s.shard.index] = s.path
    missing = sorted(set(range(1, count + 1)) - set(seen))
    if missing:
        raise ProctorError(f"merge: shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing")
    owners = _owners(shards, shards[0].order)
    unfinished = [sid for sid in shards[0].order if owners.get(sid) is None]
    if unfinished:
        raise ProctorError(f"merge: {len(unfinished)} sample(s) of the run are not in any shard (e.g. "
                           f"{unfinished[0]}): finish the shards first (re-run the same command)")
    if out.exists() and any(out.iterdir()):
        raise ProctorError(f"merge: {out} exists and is not empty; choose another -o directory")
    manifest = shards[0].log.manifest.model_copy(deep=True)
    manifest.shard = None
    manifest.spec = manifest.spec.model_copy(update={"shard": None}) if manifest.spec is not None else None
    manifest.merged_from = [str(s.path) for s in sorted(shards, key=lambda s: s.shard.index)]
    manifest.elapsed_s = sum(s.log.manifest.elapsed_s or 0.0 for s in shards)
    with atomic_directory(out) as staging:  # whole or nothing: a kill or a failure leaves `out` as it was
        write_manifest(staging, manifest)
        samples = _in_order(shards, owners, shards[0].order)
        while batch := list(islice(samples, _WRITE_BATCH)):  # streamed: a batch held at a time
            append_samples(staging / SAMPLES, batch)
            del batch  # not held while the next is read (two batches at once were the merge's peak)
        log = finalize_run(RunLog.model_construct(path=staging, manifest=manifest, samples=SamplesOnDisk(staging),
                                                  results=None, streamed=True))
    log = log.model_copy(update={"path": out, "samples": SamplesOnDisk(out)})
    if store is not None:
        store.record_run(log)
    return log
