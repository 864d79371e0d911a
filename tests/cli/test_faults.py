"""Items 6, 11 and 13 of issue 13 through the real command line (subprocesses): a read-only output
directory, a non-searchable input directory and a damaged store are one line with the path and exit 2;
ctrl-C stops at once, keeps what finished and prints the command that resumes."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import proctor

SRC = str(Path(proctor.__file__).resolve().parents[1])
GOOD = Path(__file__).parents[1] / "fixtures" / "items" / "good.jsonl"
ENV = {**os.environ, "PYTHONPATH": SRC, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}


def proctor_cli(*args: str, user: str | None = None, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "proctor", *args]
    if user is not None:
        cmd = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *cmd]
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout, check=False)


def one_line(done: subprocess.CompletedProcess[str], *needles: str) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in done.stderr, done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture
def read_only_dir(tmp_path: Path) -> Iterator[Path]:
    """A read-only file system (a tmpfs mounted ro) as root; a mode-555 directory otherwise."""
    d = tmp_path / "ro"
    d.mkdir()
    if os.geteuid() == 0:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", str(d)], capture_output=True, check=False)
        if done.returncode != 0:
            pytest.skip("root cannot be kept out of a directory by its mode, and mount failed")
        try:
            yield d
        finally:
            subprocess.run(["umount", "-l", str(d)], check=False)
    else:
        d.chmod(0o555)
        yield d
        d.chmod(0o755)


@pytest.mark.parametrize("command", [
    ["run", str(GOOD), "-m", "scripted:first", "-o", "{ro}/run", "--no-progress", "--store", "{tmp}/s.sqlite"],
    ["convert", str(GOOD), "--to", "commoneval", "-o", "{ro}/ce"],
    ["convert", str(GOOD), "--to", "items", "-o", "{ro}/items.jsonl"],
    ["report", "{tmp}/done", "-o", "{ro}/report.md"],
    ["score", str(Path(__file__).parents[1] / "fixtures" / "suites"), "-m", "scripted:first", "-o", "{ro}/scores",
     "--no-history"],
    ["run", str(GOOD), "-m", "scripted:first", "-o", "{tmp}/r2", "--no-progress", "--store", "{ro}/s.sqlite"],
])
def test_read_only_output_is_one_line_with_the_path(read_only_dir: Path, tmp_path: Path, command: list[str]) -> None:
    if "{tmp}/done" in command:
        assert proctor_cli("run", str(GOOD), "-m", "scripted:first", "-o", str(tmp_path / "done"), "--no-progress",
                           "--store", str(tmp_path / "s.sqlite")).returncode == 0
    args = [a.format(ro=read_only_dir, tmp=tmp_path) for a in command]
    one_line(proctor_cli(*args), str(read_only_dir))


def test_tiny_model_into_a_read_only_dir(read_only_dir: Path) -> None:
    one_line(proctor_cli("tiny-model", str(read_only_dir / "tiny")), str(read_only_dir))


def test_non_searchable_input_directory(tmp_path: Path) -> None:
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root to run the command as another user")
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    shutil.copy(GOOD, hidden / "items.jsonl")
    tmp_path.chmod(0o755)
    hidden.chmod(0o600)  # readable listing, not searchable
    out = Path(f"/tmp/proctor-nobody-{os.getpid()}")
    try:
        done = proctor_cli("run", str(hidden / "items.jsonl"), "-m", "scripted:first", "-o", str(out / "run"),
                           "--store", str(out / "s.sqlite"), "--no-progress", user="65534")
        one_line(done, str(hidden / "items.jsonl"))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def test_damaged_store_is_one_line_and_no_run_dir_is_left(tmp_path: Path) -> None:
    store = tmp_path / "s.sqlite"
    for i in range(3):  # enough pages that the damage lands mid-file, past the header
        assert proctor_cli("run", str(GOOD), "-m", f"scripted:fixed=The answer is {i}", "-o", str(tmp_path / f"r{i}"),
                           "--store", str(store), "--no-progress").returncode == 0
    raw = bytearray(store.read_bytes())
    assert len(raw) > 3 * 4096
    raw[4096:] = os.urandom(len(raw) - 4096)  # everything past the first page is garbage
    store.write_bytes(bytes(raw))
    for wal in tmp_path.glob("s.sqlite-*"):
        wal.unlink()
    done = proctor_cli("run", str(GOOD), "-m", "scripted:first", "-o", str(tmp_path / "new"), "--store", str(store),
                       "--no-progress")
    one_line(done, str(store))
    assert not (tmp_path / "new").exists()


def test_ctrl_c_stops_at_once_keeps_samples_and_prints_the_resume_command(tmp_path: Path) -> None:
    pytest.importorskip("uvicorn")
    from proctor.testing import serve

    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"identifier": f"t.{i}", "modality": "choiceof3", "prompt": f"Pick {i}.",
                                        "response": "B", "choices": {"A": "a", "B": "b", "C": "c"}}) + "\n"
                            for i in range(300)))
    out = tmp_path / "run"
    with serve(responder="random", latency=0.3) as srv:
        cmd = [sys.executable, "-m", "proctor", "run", str(data), "--model", "openai:scripted", "--base-url",
               srv.base_url, "--concurrency", "4", "-o", str(out), "--store", str(tmp_path / "s.sqlite"),
               "--no-progress"]
        proc = subprocess.Popen(cmd, env={**ENV, "OPENAI_API_KEY": "sk-test"}, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (out / "samples.jsonl").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.0)
        t0 = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - t0
    assert proc.returncode == 130, err
    assert took < 3, took
    assert "interrupted: finished samples are saved; resume with:" in err and f"-o {out}" in err
    kept = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert kept and all(s["outcome"] != "error" for s in kept)


def test_ctrl_c_mid_batch_of_a_local_model_stops_at_once(tmp_path: Path, tiny_model_dir: Path) -> None:
    """A local model generating in a worker thread no longer holds the process until its batch ends."""
    data = tmp_path / "items.jsonl"
    data.write_text("".join(json.dumps({"identifier": f"t.{i}", "modality": "choiceof3", "prompt": f"Pick {i}. " * 20,
                                        "response": "B", "choices": {"A": "a", "B": "b", "C": "c"}}) + "\n"
                            for i in range(1000)))
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "proctor", "run", str(data), "-m", f"hf:{tiny_model_dir}", "--max-tokens", "64",
           "-o", str(out), "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (out / "manifest.json").exists() and time.monotonic() < deadline:  # the model is loaded, running
        time.sleep(0.1)
    time.sleep(1.5)
    assert proc.poll() is None
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 3
    assert "resume with:" in err
