"""Executions in parallel, up to the cores: one failing to run is its own error, never the batch's end."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from .sandbox import Execution, Limits, Program, Runner


def workers() -> int:
    """As many executions at once as this process may use cores."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


_SLOTS = threading.BoundedSemaphore(workers())


def run_one(runner: Runner, program: Program, limits: Limits) -> Execution:
    """`runner.run` once a slot is free (at most one execution per core in this process, however many chunks
    score at once), with a failure of the sandbox itself turned into the execution's error."""
    try:
        with _SLOTS:
            return runner.run(program, limits)
    except Exception as e:  # noqa: BLE001 - one execution's crash is that sample's error record
        return Execution(exit_code=None, error=f"execution failed: {type(e).__name__}: {e}", sandbox=runner.name)


def run_all(runner: Runner, jobs: Sequence[tuple[Program, Limits]], *, max_workers: int | None = None,
            on_done: Callable[[int], None] | None = None) -> list[Execution]:
    """Every program's execution under its limits, in order; `on_done(n)` after each (progress)."""
    done = 0

    def one(job: tuple[Program, Limits]) -> Execution:
        nonlocal done
        result = run_one(runner, *job)
        done += 1
        if on_done is not None:
            on_done(done)
        return result

    with ThreadPoolExecutor(max_workers=max_workers or workers()) as pool:
        return list(pool.map(one, jobs))
