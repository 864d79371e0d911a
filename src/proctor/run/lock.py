"""One writer per run directory: a run holds an advisory lock on `<run_dir>/.lock` while it writes.

The lock is `flock(2)`, so the kernel drops it when the holder exits, however it exits (kill -9
included): a stale lock never blocks a resume. The file records who holds it (pid, host, start time)
so a second run on the same `-o` can say so instead of sending every request a second time. An executor
run's submitter holds `OUT.shards/.lock` the same way (`hold_submitter`): one submitter per run.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from ..core.rundir import PAID_STATE
from ..log.runlog import SAMPLES, repair_torn_tail
from ..util.errors import ProctorError

LOCK_NAME = ".lock"


class RunDirBusy(ProctorError):
    """Another process is writing this run directory."""


def _holder(fd: int) -> str:
    try:
        info = json.loads(os.pread(fd, 4096, 0) or b"{}")
        return f"pid {info['pid']} on {info['host']}, started {info['started_at']}"
    except (ValueError, KeyError, TypeError, OSError):
        return "another process (no details recorded)"


def _acquire(path: Path, busy: str) -> int:
    """An fd holding `flock(path)` with this process recorded in it; RunDirBusy(`busy` + who holds it) if taken."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = _holder(fd)
        os.close(fd)
        if e.errno not in (errno.EWOULDBLOCK, errno.EACCES):
            raise
        raise RunDirBusy(busy.replace("{holder}", holder)) from None
    me = {"pid": os.getpid(), "host": socket.gethostname(),
          "started_at": datetime.now(UTC).isoformat(timespec="seconds")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(me).encode(), 0)
    return fd


@contextmanager
def hold_run_dir(run_dir: Path) -> Iterator[None]:
    """Lock `run_dir` for this process while the block runs; refuse clearly if another run holds it.

    A directory this call created is removed again if the block fails before any sample was written,
    so a refused or failed start leaves nothing half-made behind, unless it holds batch state
    (`batches.json`): those batches are paid for, and the resume command must find them. A torn last line left in the sample
    log by a killed run is cut off (and reported) before anything is appended to it.
    """
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    lock_path = run_dir / LOCK_NAME
    fd = _acquire(lock_path, f"{run_dir} is being written by another run ({{holder}}): wait for it to finish or "
                             "choose another -o directory")
    try:
        repair_torn_tail(run_dir / SAMPLES)
        try:
            yield
        except BaseException:
            if created and not _has_samples(run_dir) and not (run_dir / PAID_STATE).exists():
                shutil.rmtree(run_dir, ignore_errors=True)
            raise
        finally:
            if lock_path.exists():
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


@contextmanager
def hold_submitter(shards_dir: Path, out: Path, keep: str) -> Iterator[None]:
    """One submitter per executor run: lock `shards_dir/.lock` (OUT.shards) while the block submits, watches and
    merges; a second submitter is refused at once, naming the holder, before it reads or writes anything. A
    directory this call created is removed again if the block fails before it wrote `keep` (plan.json)."""
    created = not shards_dir.exists()
    shards_dir.mkdir(parents=True, exist_ok=True)
    fd = _acquire(shards_dir / LOCK_NAME, f"{shards_dir}: this run's shards are being submitted by another proctor "
                                          f"({{holder}}); wait for it, or `proctor status {out}` shows them")
    try:
        yield
    except BaseException:
        if created and not (shards_dir / keep).exists():
            shutil.rmtree(shards_dir, ignore_errors=True)
        raise
    finally:
        os.close(fd)


def _has_samples(run_dir: Path) -> bool:
    p = run_dir / SAMPLES
    return p.is_file() and p.stat().st_size > 0


__all__ = ["LOCK_NAME", "RunDirBusy", "hold_run_dir", "hold_submitter"]
