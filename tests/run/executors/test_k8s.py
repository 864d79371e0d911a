"""`--executor k8s`: the indexed Job manifest for the run's shards, read back by the official Kubernetes client's
models, and its pods' command run here index by index (as the Job controller would start them), then merged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import DATA, assert_same_run, env, importorskip_in_ci, run_proctor


@pytest.mark.long
def test_the_indexed_job_parses_as_a_v1_job_and_its_pods_command_runs_the_shards(tmp_path: Path) -> None:
    client = importorskip_in_ci("kubernetes.client")
    out = tmp_path / "runs" / "demo"
    made = run_proctor("run", DATA, "--model", "scripted:random", "--shards", "3", "--executor", "k8s", "--retries",
                       "2", "--gpus-per-task", "1", "--image", "ghcr.io/acme/proctor:1", "-o", str(out),
                       "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    path = tmp_path / "runs" / "demo.shards" / "job.yaml"
    assert str(path) in made.stdout
    data = yaml.safe_load(path.read_text())
    job = client.ApiClient()._ApiClient__deserialize(data, "V1Job")  # the client's own model of a Job
    assert isinstance(job, client.V1Job) and job.kind == "Job" and job.metadata.name == "proctor-demo"
    spec = job.spec
    assert (spec.completion_mode, spec.completions, spec.parallelism, spec.backoff_limit_per_index) == (
        "Indexed", 3, 3, 2)
    pod = spec.template.spec
    (container,) = pod.containers
    assert pod.restart_policy == "Never" and container.image == "ghcr.io/acme/proctor:1"
    assert container.resources.limits == {"nvidia.com/gpu": "1"}
    assert pod.volumes[0].persistent_volume_claim.claim_name == "proctor-runs"
    assert container.volume_mounts[0].mount_path == container.working_dir == str(tmp_path)  # the volume is the cwd
    assert not out.exists()
    # what each pod runs, here: the index Kubernetes gives it in JOB_COMPLETION_INDEX
    for index in range(3):
        pod_env = {**env(), **{e.name: e.value for e in container.env}, "JOB_COMPLETION_INDEX": str(index),
                   "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}  # the image's python has proctor
        done = subprocess.run(container.command, cwd=container.working_dir, env=pod_env, capture_output=True,
                              text=True, timeout=120, check=False)
        assert done.returncode == 0, done.stderr
    shown = run_proctor("status", str(out), cwd=tmp_path)
    assert "shards 3/3 done" in shown.stdout, shown.stdout
    merged = run_proctor("merge", str(out), "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    plain = run_proctor("run", DATA, "--model", "scripted:random", "-o", str(tmp_path / "plain"), "--no-history",
                        "--store", str(tmp_path / "s.db"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert_same_run(out, tmp_path / "plain")
    outside = run_proctor("run", DATA, "--model", "scripted:random", "--shards", "3", "--executor", "k8s", "-o",
                          str(tmp_path.parent / "elsewhere"), cwd=tmp_path)
    assert outside.returncode == 2 and "must lie inside this directory" in outside.stderr
