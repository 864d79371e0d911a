"""The real engines the executor tests submit to: the machine's Slurm (`.ci/run` installs and starts one, see
../shared/tools/slurm-local) and a Ray head this fixture starts (3 CPUs) and stops. Without them the tests skip,
saying why; under `CI=true` they fail instead."""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from system_tools import in_ci, require

import proctor

SRC = str(Path(proctor.__file__).resolve().parents[1])
DATA = str(Path(__file__).resolve().parents[3] / "examples" / "items" / "multiple-choice.jsonl")


def importorskip_in_ci(name: str) -> Any:
    """The module `name`; without it, skip (fail under CI=true)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if in_ci():
            pytest.fail(f"CI=true and {name} is not installed (pip install -e '.[dev]')", pytrace=False)
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
        raise


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1"}


def proctor_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "proctor", *args]


def run_proctor(*args: str, cwd: Path, extra_env: dict[str, str] | None = None,
                timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(proctor_cmd(*args), cwd=cwd, env={**env(), **(extra_env or {})}, capture_output=True,
                          text=True, timeout=timeout, check=False)


def read_run(run_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
    """A run directory's manifest, samples and results."""
    samples = [json.loads(line) for line in (run_dir / "samples.jsonl").read_text().splitlines()]
    return (json.loads((run_dir / "manifest.json").read_text()), samples,
            json.loads((run_dir / "results.json").read_text()))


def assert_same_run(merged: Path, plain: Path) -> None:
    """The merged shards equal the unsharded run: run id, samples item for item (answers, outcomes, scores) and
    the results' overall figures."""
    m1, s1, r1 = read_run(merged)
    m2, s2, r2 = read_run(plain)
    assert m1["run_id"] == m2["run_id"]
    keys = ("sample_id", "raw_output", "extracted", "outcome", "score", "prompt")
    assert [[x[k] for k in keys] for x in s1] == [[x[k] for k in keys] for x in s2]
    assert r1["overall"] == r2["overall"]


def wait_for(check: Any, timeout: float, what: str) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="session")
def slurm() -> None:
    """The machine's Slurm, answering `sinfo`, and submitit (skip or, under CI=true, fail without them)."""
    require("slurm")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def ray_temp() -> Iterator[Path]:
    """The Ray head's temp directory: every file Ray writes for the head, its drivers and its workers (session
    logs, the runtime env agent's…) lies under it. Short: Ray's socket paths must fit in 107 characters."""
    path = Path(tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def ray_head(tmp_path_factory: pytest.TempPathFactory, ray_temp: Path) -> Iterator[str]:
    """A Ray head on this machine (3 CPUs, a small object store, its files under `ray_temp`), its address; stopped
    after the module that uses it (its own process group, by id), not at the session's end: its idle daemons would
    take CPU from the rest of the suite, and its stop (up to 15 s) would fall on the suite's last test."""
    require("ray")
    ray_bin = Path(sys.executable).parent / "ray"
    port = _free_port()
    tmp = tmp_path_factory.mktemp("ray")
    log = open(tmp / "ray-start.log", "w")  # noqa: SIM115 - the head's output, for as long as the head lives
    proc = subprocess.Popen(
        [str(ray_bin), "start", "--head", "--block", f"--port={port}", "--num-cpus=3", "--num-gpus=0",
         "--include-dashboard=false", "--disable-usage-stats", "--object-store-memory=100000000",
         f"--temp-dir={ray_temp}"],
        stdout=log, stderr=subprocess.STDOUT, env=env(), start_new_session=True)
    address = f"127.0.0.1:{port}"
    try:
        wait_for(lambda: "Ray runtime started" in (tmp / "ray-start.log").read_text() or proc.poll() is not None, 120,
                 "the Ray head")
        if proc.poll() is not None:
            require("ray", f"ray start failed: {(tmp / 'ray-start.log').read_text()[-2000:]}")
        yield address
    finally:
        for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 5)):  # some of Ray's daemons outlive a SIGTERM
            try:
                os.killpg(proc.pid, sig)
            except ProcessLookupError:
                break
            try:
                proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                pass
        log.close()
