"""`vllm:<model path or hub id>` — proctor starts vLLM's OpenAI-compatible server, uses it, and stops it.

The engine is the Python given by `vllm_python=` (or PROCTOR_VLLM_PYTHON) running
`-m vllm.entrypoints.openai.api_server`, else the `vllm` executable on PATH (`vllm serve`). It listens on a
free localhost port, in a process group of its own; proctor waits for `/health`, then every request goes
through the `openai:` backend (`OpenAIModel`, the same HTTP path, verified against a real vLLM), and the
whole tree is stopped at the end: on success, an error, ctrl-C (the run's `aclose`), SIGTERM (a handler
stops it, then the process dies as it would have), and kill -9 of proctor. A guard process
(`_engine_guard.py`) stands between: a child subreaper, so even a process that left the group with `setsid`
stays under it, and it stops them all (SIGTERM, SIGKILL after STOP_GRACE_S) when told, when the engine
exits, or when proctor dies (PR_SET_PDEATHSIG). Its output goes to `engine.log` in the run directory. A
start that fails or outlasts `startup_timeout` is one `ProctorError` with the log's last lines (read from
its end only).

The identity (the cache key) names what changes the answers: weights, dtype, max_model_len, TP/DP, the
engine's version, the GPUs (model, count; none on a CPU build) and vLLM's batch-invariant mode
(`batch_invariant=True` sets VLLM_BATCH_INVARIANT=1) — never the port, so answers cached from one engine
are found by the next.

Tool calling goes through the `openai:` path too: when a run needs it (`probe` with `Capability.TOOLS`) the engine
is started with `--enable-auto-tool-choice --tool-call-parser P`, P from `tool_call_parser=` or else the
checkpoint's model family (`TOOL_PARSERS`, config.json's `model_type`); a family without a default and no
parser named is refused before the engine starts. The parser is then in the identity (it reads the calls).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypedDict, Unpack

from ..core.model import (
    Capability,
    GenerateRequest,
    Generation,
    Loglikelihood,
    LoglikelihoodRequest,
    ModelBase,
    SentPrompt,
    require,
    weights_fingerprint,
)
from ..util.errors import CapabilityError, ProctorError
from ._http import RequestFailed, get_once
from .dtype import check_dtype, checkpoint_dtype, checkpoint_model_type, nvidia_bf16_supported, resolve_dtype
from .openai import OpenAIModel, openai_prompt

ENGINE_LOG = "engine.log"
PYTHON_ENV = "PROCTOR_VLLM_PYTHON"
API_SERVER_MODULE = "vllm.entrypoints.openai.api_server"
STOP_GRACE_S = 20.0  # SIGTERM, then SIGKILL the group after this long
LOG_TAIL_LINES = 25
LOG_TAIL_BYTES = 64 << 10  # what a failed start reads of engine.log: its end only
LOG_LINE_CHARS = 2000
GUARD = Path(__file__).with_name("_engine_guard.py")
# vLLM's --tool-call-parser per model family (config.json's model_type), as vLLM's tool-calling docs pair them;
# any other family must name its parser (`tool_call_parser=`, `--tool-call-parser`)
TOOL_PARSERS = {"qwen2": "hermes", "qwen2_moe": "hermes", "qwen3": "hermes", "qwen3_moe": "hermes",
                "llama": "llama3_json", "llama4": "llama4_pythonic", "mistral": "mistral", "mixtral": "mistral",
                "granite": "granite", "gpt_oss": "openai", "deepseek_v3": "deepseek_v3", "internlm2": "internlm"}
CLIENT_DEFAULTS = {"concurrency": 64, "timeout": 600.0, "max_retries": 2, "backoff_base": 0.5, "seed": 0,
                   "chat": True, "echo_max_tokens": 0}


class ClientKeywords(TypedDict, total=False):
    """The options of the `openai:` client that talks to the engine (`CLIENT_DEFAULTS` where not given)."""

    concurrency: int
    timeout: float
    max_retries: int
    backoff_base: float
    seed: int
    chat: bool
    echo_max_tokens: int


class EngineStartError(ProctorError):
    """The engine exited or did not answer /health in time (the message ends with its log's last lines)."""


def free_port() -> int:
    """A localhost TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def engine_launcher(vllm_python: str | None) -> list[str]:
    """The command that runs the server: `PY -m vllm.entrypoints.openai.api_server`, else `vllm serve`."""
    python = vllm_python or os.environ.get(PYTHON_ENV) or None
    if python is not None:
        if shutil.which(python) is None:
            raise ProctorError(f"vllm: the Python {python!r} (--vllm-python / ${PYTHON_ENV}) does not exist")
        return [python, "-m", API_SERVER_MODULE]
    exe = shutil.which("vllm")
    if exe is None:
        raise ProctorError(f"vllm: no `vllm` executable on PATH; install vLLM, or point --vllm-python / ${PYTHON_ENV} "
                           "at the Python of an environment that has it")
    return [exe, "serve"]


def engine_args(model: str, *, tensor_parallel: int = 1, data_parallel: int = 1, dtype: str = "auto",
                max_model_len: int | None = None, gpu_memory_utilization: float | None = None,
                seed: int = 0, extra: Sequence[str] = ()) -> list[str]:
    """The server's arguments, the port aside (what the manifest records of the command)."""
    args = ["--model", model, "--served-model-name", model, "--dtype", dtype, "--seed", str(seed),
            "--tensor-parallel-size", str(tensor_parallel), "--data-parallel-size", str(data_parallel)]
    if max_model_len is not None:
        args += ["--max-model-len", str(max_model_len)]
    if gpu_memory_utilization is not None:
        args += ["--gpu-memory-utilization", str(gpu_memory_utilization)]
    return args + list(extra)


def tool_args(parser: str | None) -> list[str]:
    """The server arguments that turn tool calling on with `parser` (none: off)."""
    return [] if parser is None else ["--enable-auto-tool-choice", "--tool-call-parser", parser]


def tool_parser(model: str, given: str | None) -> str:
    """The --tool-call-parser for `model`: the one given, else its family's; CapabilityError when neither."""
    if given:
        return given
    family = checkpoint_model_type(model)
    if family in TOOL_PARSERS:
        return TOOL_PARSERS[family]
    raise CapabilityError(
        f"vllm:{model} cannot call tools without a --tool-call-parser: its model family "
        f"({family or 'unknown: no config.json found'}) has no default here ({', '.join(sorted(TOOL_PARSERS))} do); "
        "name the parser vLLM should read its calls with (--tool-call-parser hermes, llama3_json, mistral, …)")


def group_members(pgid: int) -> list[int]:
    """Live processes of process group `pgid` (a /proc scan; zombies excluded)."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rpartition(")")[2].split()  # after "pid (comm)": state ppid pgrp …
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != "Z":
            members.append(int(entry.name))
    return members


class EngineProcess:
    """One server process group: start it, wait for /health, stop the whole group."""

    def __init__(self, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.argv, self.env, self.log = argv, env, log
        self.proc: subprocess.Popen[bytes] | None = None
        self._previous_sigterm: Any = None
        self._stopped = False

    @property
    def pgid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def start(self) -> None:
        """Start the guard (`_engine_guard.py`) in a session of its own; it starts the engine and stops every
        process under it, however proctor ends (kill -9 included) and wherever they moved (`setsid`)."""
        self.log.parent.mkdir(parents=True, exist_ok=True)
        guard = [sys.executable, "-I", str(GUARD), str(STOP_GRACE_S), str(os.getpid()), "--", *self.argv]
        with self.log.open("ab") as out:
            out.write(f"$ {shlex.join(self.argv)}\n".encode())
            out.flush()
            self.proc = subprocess.Popen(guard, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         env=self.env, start_new_session=True)
            out.write(f"[proctor] engine guard pid {self.proc.pid} (process group {self.proc.pid})\n".encode())
        _LIVE.add(self)
        self._stop_on_sigterm()

    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def log_tail(self, n: int = LOG_TAIL_LINES) -> str:
        """The log's last `n` lines, from its last LOG_TAIL_BYTES only (a 300 MB line is not read whole), each
        line cut to LOG_LINE_CHARS."""
        try:
            with self.log.open("rb") as f:
                f.seek(max(0, f.seek(0, os.SEEK_END) - LOG_TAIL_BYTES))
                tail = f.read(LOG_TAIL_BYTES)
        except OSError:
            return "(no log)"
        lines = tail.decode(errors="replace").splitlines()[-n:]
        return "\n".join(line if len(line) <= LOG_LINE_CHARS else line[:LOG_LINE_CHARS] + " …" for line in lines)

    async def wait_healthy(self, url: str, timeout: float) -> None:
        """Return once GET `url` answers 200; EngineStartError (group stopped) when it exits or times out."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self.stop()
                raise EngineStartError(self._failure(f"exited with status {self.proc.returncode} while starting"))
            try:
                if (await get_once(url, timeout=5.0, local=True))[0] == 200:
                    return
            except RequestFailed:
                pass
            await asyncio.sleep(0.5)
        self.stop()
        raise EngineStartError(self._failure(f"did not answer {url} within {timeout:.0f} s (--startup-timeout)"))

    def _failure(self, what: str) -> str:
        return f"vllm: the engine {what}; the last lines of {self.log}:\n{self.log_tail()}"

    def stop(self) -> None:
        """Stop the engine and everything it started: the guard SIGTERMs them and SIGKILLs what is left after
        STOP_GRACE_S (one deadline); idempotent."""
        _LIVE.discard(self)
        self._restore_sigterm()
        if self.proc is None or self._stopped:
            return  # never signal the group id again once stopped: the id may be reused
        self._stopped = True
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(STOP_GRACE_S + 5.0)  # the guard's own deadline, and time to reap
            except subprocess.TimeoutExpired:  # a guard that cannot run (never seen): the group, at once
                _signal_group(self.proc.pid, signal.SIGKILL)
                self.proc.wait()

    def _stop_on_sigterm(self) -> None:
        """While the engine runs, SIGTERM to proctor stops it first, then ends proctor as SIGTERM would."""
        if threading.current_thread() is not threading.main_thread():
            return
        previous = signal.getsignal(signal.SIGTERM)
        if previous not in (signal.SIG_DFL, None):
            return  # someone else handles SIGTERM; atexit and PDEATHSIG still stop the engine

        def handler(signum: int, frame: Any) -> None:
            for engine in list(_LIVE):
                engine.stop()
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)

        signal.signal(signal.SIGTERM, handler)
        self._previous_sigterm = previous

    def _restore_sigterm(self) -> None:
        if self._previous_sigterm is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, self._previous_sigterm)
            self._previous_sigterm = None


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


_LIVE: set[EngineProcess] = set()


@atexit.register
def _stop_all() -> None:
    for engine in list(_LIVE):
        engine.stop()


def gpu_inventory() -> dict[str, Any]:
    """The GPUs the engine can see (nvidia-smi, CUDA_VISIBLE_DEVICES respected); `{"device": "cpu"}` without."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return {"device": "cpu"}
    try:
        out = subprocess.run([smi, "--query-gpu=name", "--format=csv,noheader"], capture_output=True, text=True,
                             timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return {"device": "unknown (nvidia-smi failed)"}
    names = [line.strip() for line in out.splitlines() if line.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        wanted = [int(v) for v in visible.split(",") if v.strip().isdigit()]
        names = [names[i] for i in wanted if i < len(names)]
    return {"device": "cuda", "gpus": sorted(set(names)), "gpu_count": len(names)} if names else {"device": "cpu"}


class VLLMModel(ModelBase):
    """A vLLM server proctor starts and stops, used through the `openai:` backend."""

    capabilities = frozenset({Capability.GENERATE, Capability.LOGLIKELIHOOD, Capability.TOOLS})
    text_completion = True  # its OpenAI client sends a completion request to /v1/completions
    preferred_chunk_size = 1  # as openai: every answer is cached and logged the moment it arrives

    def __init__(
        self,
        model: str,
        *,
        tensor_parallel: int = 1,
        data_parallel: int = 1,
        gpu_memory_utilization: float | None = None,
        max_model_len: int | None = None,
        dtype: str = "auto",
        engine_args: Sequence[str] | str = (),
        vllm_python: str | None = None,
        startup_timeout: float = 900.0,
        batch_invariant: bool = False,
        engine_seed: int = 0,
        tool_call_parser: str | None = None,
        **client: Unpack[ClientKeywords],
    ) -> None:
        self.model, self.name = model, f"vllm:{model}"
        given = [engine_args] if isinstance(engine_args, str) else list(engine_args)
        self.extra_args = [a for arg in given for a in shlex.split(arg)]
        self.settings = {"tensor_parallel": tensor_parallel, "data_parallel": data_parallel,
                         "dtype": engine_dtype(model, dtype),
                         "max_model_len": max_model_len, "batch_invariant": batch_invariant, "engine_seed": engine_seed}
        self.args = engine_args_for(model, self.settings, gpu_memory_utilization, self.extra_args)
        self.launcher = engine_launcher(vllm_python)
        self.startup_timeout = startup_timeout
        self.client_options: dict[str, Any] = {**CLIENT_DEFAULTS, **client}
        self.tool_call_parser = tool_call_parser  # given; the one serving is `tools_parser` (probe with TOOLS)
        self.tools_parser: str | None = None
        self.log_dir: Path | None = None
        self.engine: EngineProcess | None = None
        self.port = 0
        self.keep_running = False  # kept_running(): one engine across several runs
        self.inner: Any = None  # the OpenAIModel talking to the running engine
        self.version: str | None = None
        self.gpus: dict[str, Any] | None = None
        self.context_length: int | None = None

    # ------------------------------------------------------------------ the engine's life
    def set_log_dir(self, run_dir: Path) -> None:
        """Where the next start writes `engine.log` (the runner passes the run directory)."""
        self.log_dir = Path(run_dir)

    @property
    def log_path(self) -> Path:
        if self.log_dir is None:
            self.log_dir = Path(tempfile.mkdtemp(prefix="proctor-vllm-"))
        return self.log_dir / ENGINE_LOG

    def _env(self) -> dict[str, str]:
        env = {**os.environ, "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1"}
        if self.settings["batch_invariant"]:
            env["VLLM_BATCH_INVARIANT"] = "1"
        return env

    async def start(self) -> None:
        """Start the engine (unless it runs), wait for /health, connect the openai client, read the version."""
        if self.inner is not None:
            return

        if self.engine is None or not self.engine.running():
            self.port = free_port()
            argv = [*self.command, "--host", "127.0.0.1", "--port", str(self.port)]
            self.engine = EngineProcess(argv, self._env(), self.log_path)
            self.engine.start()
            try:
                await self.engine.wait_healthy(f"http://127.0.0.1:{self.port}/health", self.startup_timeout)
                self.version = await _served_version(self.port)
                self.gpus = gpu_inventory()
            except BaseException:
                self.engine.stop()  # ctrl-C while waiting included
                raise
        self.inner = OpenAIModel(self.model, f"http://127.0.0.1:{self.port}/v1", api_key="", **self.client_options)
        self.inner.name = self.name

    async def aclose(self) -> None:
        """Close the client and stop the engine's whole process group (unless `kept_running` holds it)."""
        inner, self.inner = self.inner, None
        try:
            if inner is not None:
                await inner.aclose()
        finally:
            if not self.keep_running:
                self.stop_engine()

    def stop_engine(self) -> None:
        engine, self.engine = self.engine, None
        if engine is not None:
            engine.stop()  # in this thread: a second ctrl-C or the exit cannot cut it short

    @property
    def command(self) -> list[str]:
        """The engine's command, the port aside: the launcher, its arguments and tool calling's when it is on."""
        return [*self.launcher, *self.args, *tool_args(self.tools_parser)]

    async def serve_tools(self) -> None:
        """Turn tool calling on for the next start (a running engine without it is stopped to be started again);
        CapabilityError, before anything starts, when no parser is known."""
        parser = tool_parser(self.model, self.tool_call_parser)
        if parser == self.tools_parser:
            return
        self.tools_parser = parser
        inner, self.inner = self.inner, None
        if inner is not None:
            await inner.aclose()
        self.stop_engine()

    # ------------------------------------------------------------------ the model seam, through openai:
    async def probe(self, needed: Iterable[Capability]) -> None:
        """`require` before the engine starts (minutes of GPU time), tool calling's parser when it is needed,
        then the served model's own probe."""
        needed = set(needed)
        require(self, needed)
        if Capability.TOOLS in needed:
            await self.serve_tools()
        await self.start()
        await self.inner.probe(needed)
        self.context_length = self.inner.context_length

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        """Through the engine. Requests with tools to an engine started without them (a direct caller's: a run
        probes with TOOLS) start it again with its parser first; without a parser they are error records."""
        if self.tools_parser is None and any(r.tools for r in requests):
            try:
                await self.serve_tools()
            except CapabilityError as e:
                plain = [r for r in requests if not r.tools]
                answers = iter(await self._generate(plain) if plain else [])
                return [Generation(error=str(e)) if r.tools else next(answers) for r in requests]
        return await self._generate(requests)

    async def _generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        await self.start()
        return list(await self.inner.generate(requests))

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        await self.start()
        return list(await self.inner.loglikelihood(requests))

    def sent_prompt(self, request: GenerateRequest) -> SentPrompt:
        """As its OpenAI client sends it (`chat`: /v1/chat/completions, else /v1/completions)."""
        return openai_prompt(request, bool(self.client_options["chat"]))

    @property
    def in_flight_limit(self) -> int | None:
        return self.inner.in_flight_limit if self.inner is not None else None

    def identity(self) -> dict[str, Any]:
        """Weights, engine settings, version and GPUs: the same for every port and process that serves them."""
        if self.version is None:
            raise ProctorError(f"{self.name}: the identity is known once the engine runs (call probe() first)")
        return {"spec": self.name, "weights": weights_fingerprint(self.model), **self.settings,
                "engine": f"vllm {self.version}", **(self.gpus or {}), "chat": self.client_options["chat"],
                "engine_args": self.extra_args} | ({"tool_call_parser": self.tools_parser} if self.tools_parser else {})

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), "model": self.model, **self.settings, "engine_version": self.version,
                **(self.gpus or {}), "engine_command": self.command,
                "engine_log": str(self.log_dir / ENGINE_LOG) if self.log_dir else None, **{k: v for k, v in self.client_options.items() if k != "seed"}}


def engine_dtype(model: str, requested: str) -> str:
    """The concrete dtype the engine is started with (`--dtype`): proctor's one policy (models/dtype.py), on the
    device the engine will see (a GPU when nvidia-smi lists one, else the CPU) — never vLLM's own `auto`."""
    if requested != "auto":
        return check_dtype(requested)
    device = gpu_inventory()["device"]
    bf16 = device == "cuda" and nvidia_bf16_supported()
    return resolve_dtype(requested, device=device, checkpoint=checkpoint_dtype(model), bf16_supported=bf16)


@contextmanager
def kept_running(model: object) -> Iterator[None]:
    """Within it, a `vllm:` model keeps its engine between runs (`proctor run A B`: one start, not two);
    stopped at the end. Any other model: nothing."""
    if not isinstance(model, VLLMModel):
        yield
        return
    model.keep_running = True
    try:
        yield
    finally:
        model.keep_running = False
        model.stop_engine()


def engine_args_for(model: str, settings: dict[str, Any], gpu_memory_utilization: float | None,
                    extra: Sequence[str]) -> list[str]:
    """`engine_args` from the model's settings."""
    return engine_args(model, tensor_parallel=settings["tensor_parallel"], data_parallel=settings["data_parallel"],
                       dtype=settings["dtype"], max_model_len=settings["max_model_len"],
                       gpu_memory_utilization=gpu_memory_utilization, seed=settings["engine_seed"], extra=extra)


async def _served_version(port: int) -> str:
    """The engine's version from its GET /version ("unknown" when it has none)."""
    try:
        _, content = await get_once(f"http://127.0.0.1:{port}/version", local=True)
        return str(json.loads(content).get("version") or "unknown")
    except (RequestFailed, ValueError, AttributeError, RecursionError):
        return "unknown"
