"""`proctor run … --shards N --executor k8s -o OUT`: a Kubernetes indexed Job for the run's shards, not submitted.

It writes the plan (`OUT.shards/plan.json`, as every executor does) and `OUT.shards/job.yaml`: a Job with
`completionMode: Indexed`, N completions, each pod running shard `JOB_COMPLETION_INDEX + 1` through the same
worker as the other engines, a per-index retry budget (`backoffLimitPerIndex`, Kubernetes ≥ 1.29) of
`--retries`, and a GPU limit of `--gpus-per-task`. The pods mount the persistent volume claim `proctor-runs`
(the cluster's shared storage) at the directory the command ran in, and work there: the plan's paths, OUT
(which must lie inside it) and relative data paths are the same inside and out; the image must
have proctor installed. Then `kubectl apply -f OUT.shards/job.yaml`, and `proctor merge OUT` once it completes.
A base URL that carries a secret is redacted in plan.json; the pods read it as given from the Secret
`<job name>-secrets` (key `plan-secrets`: the value of `$PROCTOR_PLAN_SECRETS`), which the user creates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from ...core.spec import RunSpec
from ...util.errors import ProctorError
from .plan import SECRETS_ENV, Plan, Settings, has_secrets, new_plan

CLAIM = "proctor-runs"


def job_name(out: Path) -> str:
    """A DNS-1123 name from the run directory's name: `proctor-<name>`, at most 63 characters."""
    name = re.sub(r"[^a-z0-9-]+", "-", out.name.lower()).strip("-") or "run"
    return ("proctor-" + name)[:52].rstrip("-")  # room for the pods' `-<index>-<suffix>`


def job_manifest(plan: Plan, image: str) -> dict[str, Any]:
    """The indexed Job running every shard of `plan`."""
    s = plan.settings
    shard = 'python -m proctor.run.executors.worker "$PLAN" "$((JOB_COMPLETION_INDEX + 1))" 1'
    container: dict[str, Any] = {
        "name": "shard", "image": image, "command": ["sh", "-c", shard], "workingDir": plan.cwd,
        "env": [{"name": "PLAN", "value": str(plan.path)}],
        "volumeMounts": [{"name": "runs", "mountPath": plan.cwd}],
        "resources": {"requests": {"cpu": str(s.cpus_per_task)}}}
    if s.gpus_per_task:
        container["resources"]["limits"] = {"nvidia.com/gpu": str(s.gpus_per_task)}
    if has_secrets(plan.spec):  # base URLs with secrets: never in a file; the pods read them from a Secret
        container["env"].append({"name": SECRETS_ENV, "valueFrom": {"secretKeyRef": {
            "name": f"{job_name(plan.out)}-secrets", "key": "plan-secrets", "optional": True}}})
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": job_name(plan.out), "labels": {"app.kubernetes.io/name": "proctor"}},
        "spec": {"completionMode": "Indexed", "completions": s.shards, "parallelism": s.shards,
                 "backoffLimitPerIndex": s.retries, "maxFailedIndexes": s.shards,
                 "template": {"spec": {"restartPolicy": "Never", "containers": [container],
                                       "volumes": [{"name": "runs",
                                                    "persistentVolumeClaim": {"claimName": CLAIM}}]}}}}


def write_job(spec: RunSpec, settings: Settings, out: Path, *, image: str, use_cache: bool,
              command: list[str]) -> Path:
    """Write the plan and `OUT.shards/job.yaml`; the manifest's path."""
    plan = new_plan(spec, settings, out, None, use_cache, command)
    if not plan.out.is_relative_to(plan.cwd):
        raise ProctorError(f"--executor k8s: -o {out} must lie inside this directory ({plan.cwd}), which the pods "
                           "mount from the volume claim proctor-runs")
    name = job_name(plan.out)
    plan.attempts = {str(k): [f"k8s:{name}-{k - 1}"] for k in range(1, plan.count + 1)}  # attempt 1 of each index
    plan.save()
    path = plan.path / "job.yaml"
    path.write_text(yaml.safe_dump(job_manifest(plan, image), sort_keys=False), encoding="utf-8")
    return path
