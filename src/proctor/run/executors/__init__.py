"""Executors: one run's N shards submitted to an engine (local processes, Slurm, Ray), watched, retried, merged.

`launch(spec, settings, options, …)` writes `OUT.shards/plan.json` (proctor.run.executors.plan), submits every shard
(`--shard K/N` of the same spec: the same run id), shows their states (queued, running, done, failed) on one
progress line, resubmits a shard whose attempt failed or vanished (cancelled, killed, node lost) up to
`settings.retries` times, and merges the shards into `out` (proctor.run.shard.merge_runs) when all are done: the
unsharded run's samples and results, recorded once in the history. With `wait=False` it returns after the
submission; `proctor status OUT` shows the shards and `proctor merge OUT` merges them later.

The engine is how the shards run, never what they compute: it is not in the run id.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...core.spec import RunSpec
from ...log.runlog import SAMPLES, RunLog
from ...util.errors import ProctorError
from ...util.textio import open_checked
from ..lock import hold_submitter
from ..shard import merge_runs
from ..store import Store, default_store_path
from .local import LocalEngine
from .plan import EXECUTORS, PLAN, Plan, Settings, new_plan, plan_dir_of, read_plan, read_status
from .ray import RayEngine
from .slurm import SlurmEngine, active_jobs, job_folder

if TYPE_CHECKING:
    from ..runner import RunOptions

__all__ = ["EXECUTORS", "Settings", "ShardState", "attempt_logs", "engine_for", "finish", "launch", "new_plan", "plan_dir_of", "shard_states"]


class Engine(Protocol):
    name: str

    def submit(self, plan: Plan, indices: list[int]) -> dict[int, str]: ...
    def alive(self, job_ids: dict[int, str]) -> dict[int, bool]: ...
    def cancel(self, job: str) -> None: ...
    def close(self) -> None: ...


def engine_for(settings: Settings) -> Engine:
    """The engine `settings.executor` names; one whose library (submitit, ray) is missing is refused in one line."""
    if settings.executor == "local":
        return LocalEngine(settings)
    if settings.executor == "slurm":
        return SlurmEngine(settings)
    if settings.executor == "ray":
        return RayEngine(settings)
    raise ProctorError(f"--executor {settings.executor!r}: expected one of {', '.join(EXECUTORS)}")


@dataclass(frozen=True)
class ShardState:
    index: int
    state: str  # queued | running | done | failed
    attempt: int
    job: str | None
    samples: int  # sample lines its run directory holds so far


def shard_states(plan: Plan, alive: dict[int, bool] | None = None) -> list[ShardState]:
    """Each shard's state: from its status file, and (for one without an end) whether its job is alive."""
    states = []
    for k in range(1, plan.count + 1):
        jobs = plan.attempts.get(str(k), [])
        status = read_status(plan, k)
        if status is not None and status.get("rc") == 0:
            state = "done"
        elif status is not None and status.get("rc") is not None:
            state = "failed"
        elif alive is not None and not alive.get(k, False):
            state = "failed"  # gone without an end: cancelled, killed, its node lost
        else:
            state = "running" if status is not None else "queued"
        states.append(ShardState(k, state, len(jobs), jobs[-1] if jobs else None, _lines(plan.shard_dir(k))))
    return states


def attempt_logs(plan: Plan, index: int) -> str:
    """Where shard `index`'s attempts left their output: its log (every attempt appended, each under a `== shard
    K/N, attempt A` header) and, on Slurm, each attempt's job folder (`slurm.job_folder`)."""
    text = f"log {plan.log_path(index)}"
    jobs = plan.attempts.get(str(index), [])
    if plan.settings.executor == "slurm" and jobs:
        text += "; Slurm's own: " + ", ".join(f"attempt {a} {job_folder(plan, job)}" for a, job in enumerate(jobs, 1))
    return text


def _lines(run_dir: Path) -> int:
    try:
        with open_checked(run_dir / SAMPLES) as f:  # a FIFO there is refused, never waited on
            return sum(chunk.count(b"\n") for chunk in iter(lambda: f.read(1 << 20), b""))
    except (OSError, ProctorError):
        return 0


def progress_line(plan: Plan, states: list[ShardState]) -> str:
    """`shards 1/3 done · 1 running · 1 queued · 0 failed · 40 samples · slurm 42_0 42_1 42_2`."""
    counts = {s: sum(x.state == s for x in states) for s in ("done", "running", "queued", "failed")}
    retried = sum(max(x.attempt - 1, 0) for x in states)
    jobs = " ".join(x.job or "-" for x in states)
    return (f"shards {counts['done']}/{plan.count} done · {counts['running']} running · {counts['queued']} queued · "
            f"{counts['failed']} failed" + (f" · {retried} retried" if retried else "") +
            f" · {sum(x.samples for x in states)} samples · {plan.settings.executor} {jobs}")


def launch(spec: RunSpec, settings: Settings, options: RunOptions, *, wait: bool = True,
           say: Callable[[str], None] = lambda line: None) -> RunLog | None:
    """Submit, watch, retry and merge (see the module docstring) into `options.out`, the shards reading and
    writing `options.store` (default: the default store) as `options` say; the merged run (None: not waited
    for). One submitter per run: a second one while this one holds `OUT.shards/.lock` is refused, naming this
    one."""
    if options.out is None:
        raise ProctorError("--shards needs -o DIR: the run directory the shards are merged into")
    engine = engine_for(settings)  # a missing submitit or ray is refused here, before anything is written
    out, store, record_history = options.out.absolute(), options.store or default_store_path(), options.record_history
    with hold_submitter(plan_dir_of(out), out, PLAN):
        plan = new_plan(spec, settings, out, store, options.use_cache, options.command or [])
        submitted = False
        try:
            _refuse_running(plan, engine)
            todo = [s.index for s in shard_states(plan) if s.state != "done"]
            submitted = True
            _submit(plan, engine, todo)
            say(f"submitted {len(todo)} shard(s) to {engine.name}: "
                f"{' '.join(plan.attempts[str(k)][-1] for k in todo)}; shards in {plan.path}")
            if not wait:
                return None
            _watch(plan, engine, say)
        finally:
            if wait:
                engine.close()
                if submitted:
                    plan.drop_secrets()  # no job of this submitter is left to read them
        return _merge(read_plan(plan.path), Store(store) if record_history and store else None)


def _refuse_running(plan: Plan, engine: Engine) -> None:
    """The same command again while an earlier one's shards still run (`--no-wait`): refused, not run twice."""
    jobs = {int(k): a[-1] for k, a in plan.attempts.items() if a}
    running = [s for s in shard_states(plan, engine.alive(jobs)) if s.state in ("queued", "running") and s.job]
    if running:
        raise ProctorError(f"{plan.path}: shard(s) {', '.join(f'{s.index}/{plan.count} (job {s.job})' for s in running)}"
                           f" still {running[0].state}; `proctor status {plan.out}` shows them")


def _submit(plan: Plan, engine: Engine, indices: list[int]) -> None:
    if not indices:
        return
    plan.save()  # the workers read it
    for k, job in engine.submit(plan, indices).items():
        plan.attempts.setdefault(str(k), []).append(job)
    plan.save()


def _watch(plan: Plan, engine: Engine, say: Callable[[str], None]) -> None:
    """Poll until every shard is done; resubmit failed ones while retries last; refuse when one is out of them."""
    shown = ""
    while True:
        jobs = {k: plan.attempts[str(k)][-1] for k in range(1, plan.count + 1)}
        alive = engine.alive(jobs)
        states = shard_states(plan, alive)
        line = progress_line(plan, states)
        if line != shown:
            say(line)
            shown = line
        failed = [s for s in states if s.state == "failed"]
        spent = [s for s in failed if s.attempt > plan.settings.retries]
        if spent:
            for s in states:
                if s.state in ("queued", "running") and s.job:
                    engine.cancel(s.job)
            names = ", ".join(f"{s.index}/{plan.count} (job {s.job}, {attempt_logs(plan, s.index)})" for s in spent)
            raise ProctorError(f"shard(s) {names} failed after {plan.settings.retries + 1} attempt(s); nothing "
                               f"merged. Fix the cause, then run the same command again: finished shards are kept")
        if failed:
            say("retrying " + ", ".join(f"shard {s.index}/{plan.count} (job {s.job} failed)" for s in failed))
            _submit(plan, engine, [s.index for s in failed])
            continue
        if all(s.state == "done" for s in states):
            return
        time.sleep(plan.settings.poll_s)


def finish(out: Path, store: Any = None) -> RunLog:
    """Merge the finished shards of the executor run into `out` (`proctor merge OUT`), as its one submitter: refused
    while another proctor submits or merges the run."""
    path = plan_dir_of(out.absolute())
    read_plan(path)  # none: one clear line, and no lock taken
    with hold_submitter(path, out.absolute(), PLAN):
        return _merge(read_plan(path), store)


def _merge(plan: Plan, store: Any) -> RunLog:
    states = shard_states(plan)
    unfinished = [s for s in states if s.state != "done"]
    if unfinished:
        raise ProctorError(f"{plan.out}: shard(s) {', '.join(f'{s.index}/{plan.count} ({s.state})' for s in unfinished)}"
                           " not done; `proctor status` shows them")
    merged: RunLog = merge_runs([plan.shard_dir(k) for k in range(1, plan.count + 1)], plan.out, store)
    plan.drop_secrets()
    return merged


def status(out: Path) -> tuple[Plan, list[ShardState]]:
    """`proctor status OUT`: the plan and each shard's state (a job's liveness asked of its engine)."""
    plan = read_plan(plan_dir_of(out.absolute()))
    jobs = {k: plan.attempts[str(k)][-1] for k in range(1, plan.count + 1) if plan.attempts.get(str(k))}
    alive: dict[int, bool] | None = None
    if plan.settings.executor == "slurm":
        active = active_jobs()
        alive = {k: job in active for k, job in jobs.items()}
    elif plan.settings.executor == "local":
        alive = engine_for(plan.settings).alive(jobs)
    return plan, shard_states(plan, alive)


def print_line(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
