"""`--executor ray`: one Ray task per shard (with its GPU request) on the cluster `RAY_ADDRESS` names.

The task runs the shard's worker command (`python -m proctor.run.executors.worker`, with the GPUs Ray gave it in
CUDA_VISIBLE_DEVICES) with this proctor's code first on the workers' PYTHONPATH
(the cluster's machines must see the same paths: a shared file system, as for Slurm). Ray's own retries are
off: a failed or cancelled shard is retried by proctor, like any engine's. Without RAY_ADDRESS, ray starts a
local instance for the run.

The base URLs plan.json holds redacted (`$PROCTOR_PLAN_SECRETS`) never enter Ray's runtime env, which Ray's agents
write to their logs: each task gets them as an argument (over Ray's own channels, in no file) and sets them in
its worker command's environment only; a local instance is started without them in its environment.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import subprocess
from typing import Any

from ...util.errors import ProctorError
from .plan import SECRETS_ENV, Plan, Settings, source_root, without_secrets, worker_command


class RayEngine:
    """Shards as Ray tasks; a job id is the task's id."""

    name = "ray"

    def __init__(self, settings: Settings) -> None:
        try:
            import ray
        except ImportError:
            raise ProctorError("--executor ray needs ray: pip install 'proctor-eval[ray]'") from None
        self.settings = settings
        self.refs: dict[str, Any] = {}
        self.module: Any = ray
        self.ray: Any = None  # once connected

    def _connect(self) -> Any:
        if self.ray is None:
            ray = self.module
            pythonpath = os.pathsep.join(p for p in (source_root(), os.environ.get("PYTHONPATH", "")) if p)
            with without_secrets():  # a local instance's daemons inherit this environment
                ray.init(address=os.environ.get("RAY_ADDRESS") or None, log_to_driver=False,
                         logging_level=logging.WARNING, runtime_env={"env_vars": {"PYTHONPATH": pythonpath}},
                         ignore_reinit_error=True)
            self.ray = ray
        return self.ray

    def submit(self, plan: Plan, indices: list[int]) -> dict[int, str]:
        ray = self._connect()
        task = ray.remote(run_command).options(num_cpus=self.settings.cpus_per_task,
                                             num_gpus=self.settings.gpus_per_task, max_retries=0)
        ids = {}
        for k in indices:
            ref = task.remote(worker_command(plan, k), plan.cwd, os.environ.get(SECRETS_ENV))
            task_id = ref.task_id().hex()  # its first bytes count tasks, its last name the driver
            ids[k] = f"ray:{task_id[:12]}-{task_id[-8:]}"
            self.refs[ids[k]] = ref
        return ids

    def alive(self, job_ids: dict[int, str]) -> dict[int, bool]:
        refs = {k: self.refs[job] for k, job in job_ids.items() if job in self.refs}
        if not refs:
            return {k: False for k in job_ids}
        ready, _ = self.ray.wait(list(refs.values()), num_returns=len(refs), timeout=0)
        over = {ref.hex() for ref in ready}
        return {k: (k in refs and refs[k].hex() not in over) for k in job_ids}

    def cancel(self, job: str) -> None:
        if job in self.refs:
            self.ray.cancel(self.refs[job], force=True)

    def close(self) -> None:
        if self.ray is not None:
            self.ray.shutdown()


def run_command(command: list[str], cwd: str, secrets: str | None = None) -> int:
    """A Ray task: run `command` (with `secrets` as `$PROCTOR_PLAN_SECRETS`) and return its exit status; it dies with
    the task's worker (a cancelled task stops its shard too: PR_SET_PDEATHSIG on Linux)."""
    env = {k: v for k, v in os.environ.items() if k != SECRETS_ENV}
    if secrets:
        env[SECRETS_ENV] = secrets
    return subprocess.run(command, cwd=cwd, env=env, preexec_fn=_die_with_parent, check=False).returncode


def _die_with_parent() -> None:
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG
    except OSError:
        pass
