"""`--executor ray` against a real local Ray head (started by the `ray_head` fixture): one Ray task per shard, a
shard whose worker process is killed mid-way is retried, and the merged run equals the unsharded one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from .conftest import DATA, assert_same_run, env, proctor_cmd, run_proctor, wait_for

pytestmark = pytest.mark.xdist_group("engines")  # one worker starts the Ray head

SLOW = "scripted:random,delay=0.4"


def test_three_shards_as_ray_tasks_with_a_killed_shard_retried_equal_the_unsharded_run(
        tmp_path: Path, ray_head: str) -> None:
    out, shards = tmp_path / "out", tmp_path / "out.shards"
    run = subprocess.Popen(proctor_cmd("run", DATA, "--model", SLOW, "--shards", "3", "--executor", "ray",
                                       "-o", str(out), "--store", str(tmp_path / "s.db")),
                           cwd=tmp_path, env={**env(), "RAY_ADDRESS": ray_head}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    samples = shards / "shard-1-of-3" / "samples.jsonl"
    wait_for(lambda: samples.is_file() and samples.read_text().count("\n") >= 1, 240, "shard 1's first answer")
    status = json.loads((shards / "status" / "shard-1.json").read_text())
    os.kill(status["pid"], signal.SIGKILL)  # the Ray worker running shard 1 dies mid-way
    plain = run_proctor("run", DATA, "--model", SLOW, "-o", str(tmp_path / "plain"), "--no-history",
                        "--store", str(tmp_path / "plain.db"), cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    stdout, stderr = run.communicate(timeout=300)
    assert run.returncode == 0, stderr
    attempts = json.loads((shards / "plan.json").read_text())["attempts"]
    assert f"retrying shard 1/3 (job {attempts['1'][0]} failed)" in stderr
    assert len(attempts["1"]) == 2 and all(a[0].startswith("ray:") for a in attempts.values())
    assert_same_run(out, tmp_path / "plain")
    assert "multiple-choice: accuracy" in stdout
    done = json.loads((shards / "status" / "shard-1.json").read_text())
    assert done["attempt"] == 2 and done["rc"] == 0 and done["pid"] != status["pid"]  # another Ray worker


SECRETS = ("Pw0Secret55", "Tok0Secret33")


def test_no_secret_of_the_base_url_in_any_file_ray_or_the_shards_write(
        tmp_path: Path, ray_head: str, ray_temp: Path) -> None:
    """A base URL with a password and a token: the shards reach the server with it, and neither secret is in any
    file under Ray's temp directory (the runtime env agent's log, the session's logs, its GCS state…) nor in the
    run's own files."""
    from proctor.testing.server import serve

    with serve() as server:
        url = f"http://user:{SECRETS[0]}@{server.url.removeprefix('http://')}/v1?token={SECRETS[1]}"
        run = run_proctor("run", DATA, "--model", "openai:m", "--base-url", url, "--shards", "2", "--executor", "ray",
                          "-o", str(tmp_path / "out"), "--store", str(tmp_path / "s.db"), "--no-progress",
                          cwd=tmp_path, extra_env={"RAY_ADDRESS": ray_head, "OPENAI_API_KEY": "k-unused-123456"})
    assert run.returncode == 0, run.stderr
    assert "multiple-choice: accuracy" in run.stdout  # the shards reached the server with the URL as given
    scanned = 0
    for path in [*ray_temp.rglob("*"), *tmp_path.rglob("*")]:
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            scanned += 1
            for secret in SECRETS:
                assert secret.encode() not in data, f"{path} holds {secret}"
    assert scanned > 20 and any(p.name == "runtime_env_agent.log" for p in ray_temp.rglob("*.log"))
    for secret in SECRETS:
        assert secret not in run.stdout + run.stderr
