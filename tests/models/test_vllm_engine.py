"""`vllm:` — the managed engine's command line, start, stop and identity, against a stand-in server
(fake_vllm.py: proctor's local test server behind vLLM's arguments, /health and /version, with a child
process like vLLM's engine core). The real engine is tested in tests/integration/vllm/."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from proctor.cli import main
from proctor.log.runlog import Outcome
from proctor.metrics.results import read_run
from proctor.models import Capability, GenerateRequest, Message, get_model
from proctor.models.vllm_engine import (
    EngineStartError,
    VLLMModel,
    engine_args,
    engine_launcher,
    group_members,
)
from proctor.util.errors import ProctorError

FAKE = Path(__file__).with_name("fake_vllm.py")
DEMO = Path(__file__).resolve().parents[2] / "examples" / "questions" / "demo.json"
SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def fake_python(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An executable that runs fake_vllm.py as vllm's Python would run the API server."""
    exe = tmp_path / "fake-vllm-python"
    exe.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FAKE}" "$@"\n')
    exe.chmod(0o755)
    monkeypatch.setenv("PYTHONPATH", SRC)
    monkeypatch.setenv("FAKE_VLLM_CHILD_PIDFILE", str(tmp_path / "child.pid"))
    monkeypatch.delenv("PROCTOR_VLLM_PYTHON", raising=False)
    return exe


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _assert_nothing_left(tmp_path: Path, pgid: int | None = None) -> None:
    child = int((tmp_path / "child.pid").read_text())
    assert not _alive(child), "the engine's child process survived"
    if pgid is not None:
        assert group_members(pgid) == []


def test_command_line_names_parallelism_dtype_and_passes_extra_args_through() -> None:
    args = engine_args("org/m", tensor_parallel=4, data_parallel=2, dtype="bfloat16", max_model_len=8192,
                       gpu_memory_utilization=0.85, extra=["--max-num-seqs", "256", "--enforce-eager"])
    assert args == ["--model", "org/m", "--served-model-name", "org/m", "--dtype", "bfloat16", "--seed", "0",
                    "--tensor-parallel-size", "4", "--data-parallel-size", "2", "--max-model-len", "8192",
                    "--gpu-memory-utilization", "0.85", "--max-num-seqs", "256", "--enforce-eager"]


def test_the_engine_is_the_given_python_else_vllm_on_path(fake_python: Path, monkeypatch: pytest.MonkeyPatch,
                                                          tmp_path: Path) -> None:
    assert engine_launcher(str(fake_python)) == [str(fake_python), "-m", "vllm.entrypoints.openai.api_server"]
    monkeypatch.setenv("PROCTOR_VLLM_PYTHON", str(fake_python))
    assert engine_launcher(None)[0] == str(fake_python)
    monkeypatch.delenv("PROCTOR_VLLM_PYTHON")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(ProctorError, match="no `vllm` executable on PATH"):
        engine_launcher(None)
    with pytest.raises(ProctorError, match="does not exist"):
        engine_launcher(str(tmp_path / "no-python"))


def test_options_are_typed_and_engine_args_are_shell_split(fake_python: Path) -> None:
    m = get_model("vllm:org/m", vllm_python=str(fake_python), tensor_parallel=2, engine_args="--max-num-seqs 8")
    assert isinstance(m, VLLMModel) and m.args[-2:] == ["--max-num-seqs", "8"]
    with pytest.raises(ProctorError, match="tensor_parallel"):
        get_model("vllm:org/m", vllm_python=str(fake_python), tensor_parallel=0)
    with pytest.raises(ProctorError, match="base_url"):
        get_model("vllm:org/m", vllm_python=str(fake_python), base_url="http://x")


def test_run_starts_the_engine_logs_to_the_run_dir_and_leaves_no_process(fake_python: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    common = ["--model", "vllm:tiny", "--vllm-python", str(fake_python), "--tensor-parallel", "1",
              "--store", str(tmp_path / "s.sqlite"), "--no-progress"]
    assert main(["run", str(DEMO), *common, "-o", str(tmp_path / "a")]) == 0, capsys.readouterr().err
    _assert_nothing_left(tmp_path)
    log = read_run(tmp_path / "a")
    assert "fake vllm starting with --model tiny" in (tmp_path / "a" / "engine.log").read_text()
    ident = log.manifest.model_identity.flat()
    assert ident["engine"] == "vllm 0.0.fake" and ident["device"] == "cpu" and ident["dtype"] == "float32"
    assert ident["tensor_parallel"] == 1 and ident["data_parallel"] == 1 and ident["batch_invariant"] is False
    assert "127.0.0.1" not in json.dumps(ident)  # never the port: another engine finds the same cache entries
    assert all(s.outcome is not Outcome.ERROR for s in log.samples)
    # a second engine (another port) that fails every request: everything comes from the cache
    os.environ["FAKE_VLLM_CONFIG"] = json.dumps({"fault_rate": 1.0})
    try:
        assert main(["run", str(DEMO), *common, "--max-retries", "0", "--timeout", "2", "-o", str(tmp_path / "b")]) == 0
    finally:
        del os.environ["FAKE_VLLM_CONFIG"]
    again = read_run(tmp_path / "b")
    assert again.manifest.model_identity.flat() == ident
    assert [s.raw_output for s in again.samples] == [s.raw_output for s in log.samples]
    _assert_nothing_left(tmp_path)


def test_a_failed_start_is_one_clear_error_with_the_log_tail(fake_python: Path, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FAKE_VLLM_MODE", "fail")
    code = main(["run", str(DEMO), "--model", "vllm:tiny", "--vllm-python", str(fake_python), "-o",
                 str(tmp_path / "r"), "--no-cache", "--no-history", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "exited with status 3 while starting" in err and "head size 16" in err
    assert "Traceback" not in err
    assert (tmp_path / "r" / "engine.log").exists()
    _assert_nothing_left(tmp_path)


async def test_an_engine_that_never_answers_times_out_and_is_stopped(fake_python: Path, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    m = VLLMModel("tiny", vllm_python=str(fake_python), startup_timeout=3)
    m.set_log_dir(tmp_path)
    with pytest.raises(EngineStartError, match="did not answer"):
        await m.probe({Capability.GENERATE})
    _assert_nothing_left(tmp_path)


async def test_cancelled_while_generating_stops_the_engine(fake_python: Path, tmp_path: Path) -> None:
    """ctrl-C cancels the run's task; the runner's aclose stops the group."""
    m = VLLMModel("tiny", vllm_python=str(fake_python))
    m.set_log_dir(tmp_path)
    await m.probe({Capability.GENERATE})
    assert m.engine is not None and m.engine.pgid is not None
    pgid = m.engine.pgid
    task = asyncio.ensure_future(m.generate([GenerateRequest((Message("user", "hi"),))] * 3))
    await asyncio.sleep(0)
    task.cancel()
    try:
        await m.aclose()
    finally:
        await asyncio.gather(task, return_exceptions=True)
    _assert_nothing_left(tmp_path, pgid)


def test_sigterm_to_proctor_stops_the_engine(fake_python: Path, tmp_path: Path) -> None:
    script = ("import asyncio, sys\n"
              "from proctor.models.vllm_engine import VLLMModel\n"
              "from proctor.models import Capability\n"
              f"m = VLLMModel('tiny', vllm_python={str(fake_python)!r})\n"
              f"m.set_log_dir(__import__('pathlib').Path({str(tmp_path)!r}))\n"
              "asyncio.run(m.probe({Capability.GENERATE}))\n"
              "print(m.engine.pgid, flush=True)\n"
              "import time; time.sleep(600)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, env={**os.environ})
    assert proc.stdout is not None
    pgid = int(proc.stdout.readline())
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == -signal.SIGTERM
    deadline = time.monotonic() + 10
    while group_members(pgid) and time.monotonic() < deadline:
        time.sleep(0.1)
    _assert_nothing_left(tmp_path, pgid)


def test_several_datasets_share_one_engine(fake_python: Path, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    second = DEMO.parents[1] / "items" / "multiple-choice.jsonl"
    code = main(["run", str(DEMO), str(second), "--model", "vllm:tiny", "--vllm-python", str(fake_python),
                 "-o", str(tmp_path / "out"), "--no-cache", "--no-history", "--no-progress"])
    assert code == 0, capsys.readouterr().err
    logs = sorted((tmp_path / "out").glob("*/engine.log"))
    assert len(logs) == 1 and logs[0].read_text().count("fake vllm starting") == 1  # one start, not two
    assert len(list((tmp_path / "out").glob("*/samples.jsonl"))) == 2
    _assert_nothing_left(tmp_path)


async def test_a_failed_start_reads_only_the_end_of_a_huge_log(fake_python: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.22: an engine.log with a 20 MB line gives a message of a few KB (the log's end, lines cut)."""
    monkeypatch.setenv("FAKE_VLLM_MODE", "fail")
    monkeypatch.setenv("FAKE_VLLM_LONG_LINE", str(20_000_000))
    m = VLLMModel("tiny", vllm_python=str(fake_python))
    m.set_log_dir(tmp_path)
    with pytest.raises(EngineStartError) as e:
        await m.probe({Capability.GENERATE})
    assert (tmp_path / "engine.log").stat().st_size > 20_000_000
    assert "head size 16" in str(e.value) and len(str(e.value)) < 10_000
    _assert_nothing_left(tmp_path)


async def test_a_child_that_left_the_process_group_is_stopped_too(fake_python: Path, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.23: the engine's child calls setsid (a group of its own); stopping the engine stops it as well."""
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    monkeypatch.setenv("FAKE_VLLM_SETSID", "1")
    m = VLLMModel("tiny", vllm_python=str(fake_python), startup_timeout=3)
    m.set_log_dir(tmp_path)
    with pytest.raises(EngineStartError, match="did not answer"):
        await m.probe({Capability.GENERATE})
    child = int((tmp_path / "child.pid").read_text())
    assert os.getsid(os.getpid()) != _sid(child) or not _alive(child)
    _assert_nothing_left(tmp_path)


def _sid(pid: int) -> int | None:
    try:
        return os.getsid(pid)
    except ProcessLookupError:
        return None


async def test_stopping_an_engine_that_ignores_sigterm_takes_the_grace_period_once(
        fake_python: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """#32.23: SIGTERM, then SIGKILL when STOP_GRACE_S is up — one deadline for the engine and its children
    (it was one for the server, then another for its children: ~41 s for the documented 20 s)."""
    from proctor.models import vllm_engine

    monkeypatch.setattr(vllm_engine, "STOP_GRACE_S", 2.0)
    monkeypatch.setenv("FAKE_VLLM_MODE", "hang")
    monkeypatch.setenv("FAKE_VLLM_IGNORE_TERM", "1")
    m = VLLMModel("tiny", vllm_python=str(fake_python), startup_timeout=120)
    m.set_log_dir(tmp_path)
    task = asyncio.ensure_future(m.probe({Capability.GENERATE}))
    await _until(lambda: (tmp_path / "child.pid").exists())
    assert m.engine is not None
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)  # the start's own stop, timed below by a second engine
    _assert_nothing_left(tmp_path)
    (tmp_path / "child.pid").unlink()
    m2 = VLLMModel("tiny", vllm_python=str(fake_python), startup_timeout=120)
    m2.set_log_dir(tmp_path)
    task = asyncio.ensure_future(m2.probe({Capability.GENERATE}))
    await _until(lambda: (tmp_path / "child.pid").exists())
    await asyncio.sleep(0.5)  # the child has set SIGTERM aside (inherited) and sleeps
    assert m2.engine is not None
    engine = m2.engine
    t0 = time.monotonic()
    engine.stop()
    took = time.monotonic() - t0
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    assert 1.8 <= took < 3.5, took
    _assert_nothing_left(tmp_path)


async def _until(ready: Callable[[], bool], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


def test_kill_9_of_proctor_while_a_sigterm_ignoring_engine_starts_leaves_nothing(fake_python: Path,
                                                                                 tmp_path: Path) -> None:
    """#32.23: kill -9 of proctor during the start of an engine that ignores SIGTERM and whose child left the
    group: the guard kills them all after the grace period."""
    script = ("import asyncio\n"
              "from proctor.models import vllm_engine\n"
              "from proctor.models.vllm_engine import VLLMModel\n"
              "from proctor.models import Capability\n"
              "vllm_engine.STOP_GRACE_S = 1.0\n"
              f"m = VLLMModel('tiny', vllm_python={str(fake_python)!r}, startup_timeout=600)\n"
              f"m.set_log_dir(__import__('pathlib').Path({str(tmp_path)!r}))\n"
              "asyncio.run(m.probe({Capability.GENERATE}))\n")
    env = {**os.environ, "FAKE_VLLM_MODE": "hang", "FAKE_VLLM_IGNORE_TERM": "1", "FAKE_VLLM_SETSID": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env)
    deadline = time.monotonic() + 60
    while not (tmp_path / "child.pid").exists():
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    log = (tmp_path / "engine.log").read_text()
    guard = int(re.search(r"engine (?:guard )?pid (\d+)", log).group(1))  # type: ignore[union-attr]
    members = group_members(guard)
    assert members  # the guard and the server (before: the server)
    proc.kill()
    proc.wait()
    child = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 15
    while (_alive(child) or any(_alive(p) for p in members)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(child), "the engine's child (setsid, SIGTERM ignored) outlived proctor"
    assert not any(_alive(p) for p in members), "the engine outlived proctor"
