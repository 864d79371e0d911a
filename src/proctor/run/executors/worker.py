"""One shard, on whichever machine the engine picked: `python -m proctor.run.executors.worker OUT.shards K ATTEMPT`.

It runs shard K of the plan's spec through the one pipeline into `OUT.shards/shard-K-of-N/` (resuming what an
earlier attempt finished; SIGTERM stops it at once, whatever the engine's own handlers), with the user's store for the request cache but no history (the merged run is the one
recorded), appends what it prints to the shard's log, and writes its status file when it starts and ends.

A shard's finished status is final and one attempt runs at a time: the worker holds the shard's lock
(`OUT.shards/status/shard-K.lock`) for its whole run, and a late job (a Slurm requeue despite `--no-requeue`, an
attempt proctor has since superseded) that finds its shard finished, or a newer attempt submitted, exits 0
without touching the shard: its status, log and run directory stay as they were, before and after the merge.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path

from ...util.errors import ProctorError
from ..interruptible import terminate_as_interrupt
from ..pipeline import Events, RunOptions, run
from .plan import Plan, read_plan, read_status, write_status


def run_shard(plan_dir: str, index: int, attempt: int) -> int:
    """Run shard `index` (attempt `attempt`) of the plan in `plan_dir`, one attempt at a time; its exit status
    (0: done, or nothing to do: the shard was finished or the attempt superseded)."""
    plan = read_plan(Path(plan_dir))
    with _one_attempt_at_a_time(plan, index):
        plan = read_plan(Path(plan_dir))  # as it is now that this attempt holds the shard
        late = _late(plan, index, attempt)
        if late:
            print(f"shard {index}/{plan.count}, attempt {attempt}: {late}; nothing done", file=sys.stderr, flush=True)
            return 0
        return _run(plan, index, attempt)


@contextmanager
def _one_attempt_at_a_time(plan: Plan, index: int) -> Iterator[None]:
    """Hold shard `index`'s lock (waiting for an attempt that holds it; the kernel drops it however that ends)."""
    path = plan.status_path(index).with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _late(plan: Plan, index: int, attempt: int) -> str | None:
    """Why attempt `attempt` of shard `index` must not run (None: it must)."""
    status = read_status(plan, index)
    if status is not None and status.get("rc") == 0:
        return f"the shard is finished (attempt {status.get('attempt')})"
    if attempt < plan.attempt(index):
        return f"superseded by attempt {plan.attempt(index)}"
    return None


def _run(plan: Plan, index: int, attempt: int) -> int:
    write_status(plan, index, attempt, None)
    plan.log_path(index).parent.mkdir(parents=True, exist_ok=True)
    rc = 1
    with open(plan.log_path(index), "a", encoding="utf-8") as log, redirect_stdout(log), redirect_stderr(log):
        print(f"== shard {index}/{plan.count}, attempt {attempt}, pid {os.getpid()}", flush=True)
        try:
            if Path(plan.cwd).is_dir():
                os.chdir(plan.cwd)  # the spec's relative data paths are the submitter's
            options = RunOptions(out=plan.shard_dir(index), store=Path(plan.store) if plan.store else None,
                                 use_cache=plan.use_cache, record_history=False, progress=False, command=plan.command)
            with terminate_as_interrupt():  # a scheduler's stop (scancel, a pod deleted) ends the shard now
                run([plan.shard_spec(index)], options, Events(resuming=lambda line: print(line, flush=True)))
            rc = 0
        except KeyboardInterrupt:
            print("stopped (SIGTERM or ctrl-C): what was answered is kept for the next attempt", flush=True)
            rc = 130
        except ProctorError as e:
            print(f"shard stopped: {e}", flush=True)  # the shard's log; the engine reports the shard failed
            rc = 2
        except Exception as e:  # noqa: BLE001 - a shard's crash is its status and its log, never the engine's
            import traceback

            traceback.print_exc()
            print(f"shard crashed: {type(e).__name__}: {e}", flush=True)
        finally:
            print(f"== shard {index}/{plan.count}, attempt {attempt}: exit {rc}", flush=True)
    write_status(plan, index, attempt, rc)
    return rc


def main(argv: list[str]) -> int:
    plan_dir, index, attempt = argv
    return run_shard(plan_dir, int(index), int(attempt))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
