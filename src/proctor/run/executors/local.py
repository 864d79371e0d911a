"""`--executor local`: each shard a process on this machine (`python -m proctor.run.executors.worker`)."""

from __future__ import annotations

import os
import subprocess

from .plan import Plan, Settings, child_env, worker_command


class LocalEngine:
    """Shards as child processes; a job id is `local:PID`."""

    name = "local"

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.procs: dict[str, subprocess.Popen[bytes]] = {}

    def submit(self, plan: Plan, indices: list[int]) -> dict[int, str]:
        ids = {}
        for k in indices:
            plan.log_path(k).parent.mkdir(parents=True, exist_ok=True)
            cmd = worker_command(plan, k)
            with open(plan.log_path(k), "ab") as log:  # what the worker prints before its own redirect
                proc = subprocess.Popen(cmd, stdout=log, stderr=log, stdin=subprocess.DEVNULL, env=child_env(),
                                        cwd=plan.cwd, start_new_session=True)
            ids[k] = f"local:{proc.pid}"
            self.procs[ids[k]] = proc
        return ids

    def alive(self, job_ids: dict[int, str]) -> dict[int, bool]:
        return {k: self._alive(job) for k, job in job_ids.items()}

    def _alive(self, job: str) -> bool:
        proc = self.procs.get(job)
        if proc is not None:
            return proc.poll() is None
        try:  # a job of an earlier `proctor` process (`proctor status`): is its pid still there?
            os.kill(int(job.removeprefix("local:")), 0)
        except (ValueError, OSError):
            return False
        return True

    def cancel(self, job: str) -> None:
        proc = self.procs.get(job)
        if proc is not None and proc.poll() is None:
            proc.terminate()
            proc.wait()

    def close(self) -> None:
        for job in list(self.procs):
            self.cancel(job)
