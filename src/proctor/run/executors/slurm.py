"""`--executor slurm`: the shards as one Slurm job array, submitted through submitit (no job script to write).

Each array task runs the shard's worker command (`python -m proctor.run.executors.worker`) with this proctor's code first on PYTHONPATH; submitit
keeps each job's own logs in `OUT.shards/slurm/JOB/` (`job_folder`), every attempt's kept. Whether a job is alive comes from `squeue` (a cluster without
accounting has no `sacct`); whether it succeeded, from the shard's own status file.

A lost attempt (a node down, a preemption, a cancel) is resubmitted by proctor, as on every engine, never requeued by
Slurm: the jobs are submitted with `--no-requeue`, which stops both Slurm's requeue of a failed node's jobs and
submitit's requeue of a preempted job (its `scontrol requeue` is refused), so a shard's job never runs beside
its resubmission. Should a job run late all the same, the worker finds its shard finished or superseded and
exits without touching it (proctor.run.executors.worker).
"""

from __future__ import annotations

import getpass
import shlex
import subprocess
from pathlib import Path
from typing import Any

from ...util.errors import ProctorError
from .plan import Plan, Settings, source_root, without_secrets, worker_command

_ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "SUSPENDED", "REQUEUED", "RESIZING", "SIGNALING",
           "STAGE_OUT", "REQUEUE_HOLD", "REQUEUE_FED"}


class SlurmEngine:
    """Shards as Slurm array tasks; a job id is Slurm's, e.g. `42_1`."""

    name = "slurm"

    def __init__(self, settings: Settings) -> None:
        try:
            import submitit
            import submitit.helpers
        except ImportError:
            raise ProctorError("--executor slurm needs submitit: pip install 'proctor-eval[slurm]'") from None
        self.settings = settings
        self.submitit: Any = submitit

    def executor(self, plan: Plan) -> Any:
        s = self.settings
        ex = self.submitit.SlurmExecutor(folder=plan.path / "slurm" / "%j")  # one folder per job: job_folder
        params: dict[str, Any] = {
            "job_name": f"proctor-{plan.out.name}"[:60], "time": s.time_min, "cpus_per_task": s.cpus_per_task,
            "ntasks_per_node": 1, "array_parallelism": s.shards,
            "additional_parameters": {"no_requeue": True, **s.sbatch},  # proctor resubmits: see the module docstring
            "setup": [f"export PYTHONPATH={shlex.quote(source_root())}${{PYTHONPATH:+:$PYTHONPATH}}",
                      f"cd {shlex.quote(plan.cwd)}"]}
        if s.partition:
            params["partition"] = s.partition
        if s.account:
            params["account"] = s.account
        if s.gpus_per_task:
            params["gpus_per_task"] = s.gpus_per_task
        ex.update_parameters(**params)
        return ex

    def submit(self, plan: Plan, indices: list[int]) -> dict[int, str]:
        ex = self.executor(plan)
        plan.write_secrets()  # the jobs read them there: sbatch would store its environment in Slurm's state
        try:
            with without_secrets(), ex.batch():
                jobs = [ex.submit(self.submitit.helpers.CommandFunction(worker_command(plan, k), verbose=False))
                        for k in indices]
        except subprocess.CalledProcessError as e:
            out = (e.stderr or e.output or b"")
            text = out.decode(errors="replace") if isinstance(out, bytes) else str(out)
            raise ProctorError(f"sbatch refused the shards: {text.strip()[:500]}") from None
        except FileNotFoundError:
            raise ProctorError("--executor slurm: no `sbatch` on this machine (is Slurm installed?)") from None
        return {k: str(job.job_id) for k, job in zip(indices, jobs)}

    def alive(self, job_ids: dict[int, str]) -> dict[int, bool]:
        active = active_jobs()
        return {k: job in active for k, job in job_ids.items()}

    def cancel(self, job: str) -> None:
        subprocess.run(["scancel", job], check=False, capture_output=True)

    def close(self) -> None:
        pass


def job_folder(plan: Plan, job: str) -> Path:
    """Where Slurm job `job` (an array task `42_1` or a job `45`) left its own output: submitit's
    `JOB_0_log.out` and `JOB_0_log.err`, with Slurm's messages (a cancel, a time limit, a lost node). Each
    attempt is a job of its own, so an attempt's folder is never reused by the next."""
    return plan.path / "slurm" / job


def active_jobs() -> dict[str, str]:
    """This user's jobs Slurm still holds (pending, running…), by job id (array tasks one by one): their state."""
    try:
        done = subprocess.run(["squeue", "-h", "-r", "-u", getpass.getuser(), "-o", "%i|%T"], capture_output=True,
                              text=True, timeout=60, check=True)
    except (OSError, subprocess.SubprocessError) as e:
        raise ProctorError(f"squeue failed ({e}); is Slurm up?") from None
    jobs = {}
    for line in done.stdout.splitlines():
        job, _sep, state = line.strip().partition("|")
        if state in _ACTIVE:
            jobs[job] = state
    return jobs
