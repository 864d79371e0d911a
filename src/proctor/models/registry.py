"""Every backend registers here, once: spec prefix → class (imported only when used) + typed options.

    hf:<path-or-hub-id>   openai:<model>   anthropic:<model>   vllm:<path-or-hub-id>   scripted:<rule>

`get_model(spec, **options)` validates the options against the backend's pydantic model: an unknown
or inapplicable option, or a bad value, is an error naming the option, never silently dropped. The
CLI builds its model options from these models too (`proctor.cli.options`).
"""

from __future__ import annotations

import importlib
import shlex
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..core.model import Model
from ..util.errors import ProctorError


class BackendOptions(BaseModel):
    """Options every backend refuses unless it declares them; unset ones keep the class's default.

    Each field's `description` is its command-line help: `proctor.cli.options` turns every field of
    every backend into one `--field-name` option of the commands that build models (`cli_name` in
    `json_schema_extra` renames it there, `cli: False` keeps it off the command line)."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class ClientOptions(BackendOptions):
    """How proctor talks to a server over HTTP (a given one, or an engine it starts)."""

    concurrency: int | None = Field(
        default=None, ge=1, description="Requests in flight at once (default: 32 openai, 16 anthropic, 64 vllm).")
    timeout: float | None = Field(
        default=None, gt=0, description="Seconds to wait for one response (default: 120 openai, 300 anthropic, 600 vllm).")
    max_retries: int | None = Field(
        default=None, ge=0, description="Retries on 429, 5xx and timeouts before the sample is an error (default: 5; vllm 2).")
    backoff_base: float | None = Field(
        default=None, ge=0, description="First retry delay in seconds, doubled on each retry (default: 0.5).")
    seed: int | None = Field(
        default=None, description="Seed of the retry delays' jitter (default: 0).",
        json_schema_extra={"cli_name": "retry-seed"})


class HTTPOptions(ClientOptions):
    base_url: str | list[str] | None = Field(
        default=None, description=("Server base URL; repeat it to spread the load over several servers "
                                   "(default: $OPENAI_BASE_URL / $ANTHROPIC_BASE_URL, else the vendor's API)."))
    api_key: str | None = Field(  # never on a command line (shell history, ps): environment variables only
        default=None, description="API key (default: the backend's environment variable).",
        json_schema_extra={"cli": False})


class BatchableOptions(HTTPOptions):
    batch: bool | None = Field(  # models/batch*.py
        default=None, description="Send the run through the provider's batch API: half price, within 24 h "
                                  "(default: off).")
    batch_poll_interval: float | None = Field(
        default=None, gt=0, description="Seconds between batch status requests (default: the backend's).")


class CompletionsOptions(BackendOptions):
    chat: bool | None = Field(
        default=None, description="Generate through /chat/completions; --no-chat: /completions (default: chat).")
    echo_max_tokens: int | None = Field(
        default=None, ge=0, description="max_tokens sent with echo log-likelihood requests (default: 0).")


class OpenAIOptions(BatchableOptions, CompletionsOptions):
    pass


class AnthropicOptions(BatchableOptions):
    default_max_tokens: int | None = Field(
        default=None, ge=1, description="max_tokens when --max-tokens is not set (Anthropic requires one; default: 4096).")


class HFOptions(BackendOptions):
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        default=None, description="Weights' dtype: auto, float32, bfloat16 or float16 (default: auto: float32 on a CPU; "
                                  "on a GPU the checkpoint's half precision, else bfloat16 where supported).")
    device: str | None = Field(default=None, description="cpu, cuda, cuda:N or auto (default: cpu).")
    batch_size: int | None = Field(default=None, ge=1, description="Sequences per forward pass (default: 32).")
    trust_remote_code: bool | None = Field(
        default=None, description="Run code shipped with the model's files (default: off).")
    max_length: int | None = Field(
        default=None, ge=1, description="Longest sequence in tokens (default: the model's context length).")
    share_prefixes: bool | None = Field(
        default=None, description="Run a prompt shared by several choices once (default: on).")
    pack_siblings: bool | None = Field(
        default=None, description="Pack the choices of one prompt into one row (default: on).")
    max_batch_tokens: int | None = Field(
        default=None, ge=1, description="Log-likelihood tokens per forward pass (default: from the device's memory).")
    threads: int | None = Field(
        default=None, ge=1, description="CPU threads torch computes with (default: OMP_NUM_THREADS when set, else 1 on "
                                        "a busy machine, else one per core).")


class VLLMOptions(ClientOptions, CompletionsOptions):
    """A vLLM server proctor starts itself (models/vllm_engine.py); the client options apply to it."""

    tensor_parallel: int | None = Field(
        default=None, ge=1, description="GPUs one model replica is split over (vLLM --tensor-parallel-size; default: 1).")
    data_parallel: int | None = Field(
        default=None, ge=1, description="Model replicas behind the one server (vLLM --data-parallel-size; default: 1).")
    gpu_memory_utilization: float | None = Field(
        default=None, gt=0, le=1, description="Share of each GPU's memory vLLM may take (default: vLLM's, 0.9).")
    max_model_len: int | None = Field(
        default=None, ge=1, description="Context window the engine serves, in tokens (default: the model's).")
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = Field(
        default=None, description="Weights' dtype: auto, float32, bfloat16 or float16 (default: auto: float32 on a CPU; "
                                  "on a GPU the checkpoint's half precision, else bfloat16 where supported).")
    engine_args: str | list[str] | None = Field(
        default=None, description="More vLLM server arguments, passed through (repeatable; shell-quoted, e.g. "
                                  "'--max-num-seqs 128'; default: none).", json_schema_extra={"cli_name": "engine-arg"})
    @field_validator("engine_args")
    @classmethod
    def _shell_quoted(cls, value: str | list[str] | None) -> str | list[str] | None:
        """Each argument must split as a shell would (`--foo 'bar` has no closing quote)."""
        for arg in [value] if isinstance(value, str) else value or []:
            try:
                shlex.split(arg)
            except ValueError as e:
                raise ValueError(f"{arg!r} is not shell-quoted correctly ({str(e).lower()})") from None
        return value

    vllm_python: str | None = Field(
        default=None, description="Python of an environment with vLLM (default: $PROCTOR_VLLM_PYTHON, else "
                                  "the vllm executable on PATH).")
    startup_timeout: float | None = Field(
        default=None, gt=0, description="Seconds the engine may take to start (default: 900).")
    batch_invariant: bool | None = Field(
        default=None, description="VLLM_BATCH_INVARIANT=1: answers independent of batching, "
                                  "at some speed (default: off).")
    engine_seed: int | None = Field(default=None, description="vLLM --seed (default: 0).")
    tool_call_parser: str | None = Field(
        default=None, description="vLLM --tool-call-parser (default: the model family's).")


class ScriptedOptions(BackendOptions):
    """The scripted backend takes everything from its spec (`scripted:random,seed=7`)."""


@dataclass(frozen=True)
class Backend:
    prefix: str
    target: str  # "module:Class", imported on first use (torch only for hf)
    options: type[BackendOptions]
    summary: str
    # GenerationSpec reasoning/sampling fields it can send (issue 15); any other one set is refused
    settings: frozenset[str] = frozenset()
    batch_target: str | None = None  # "module:Class" of its batch-API variant (`batch` option)

    def load(self, batch: bool = False) -> type[Any]:
        target = self.batch_target if batch and self.batch_target else self.target
        module, _, cls = target.partition(":")
        return getattr(importlib.import_module(module, __package__), cls)  # type: ignore[no-any-return]


BACKENDS: dict[str, Backend] = {
    b.prefix: b
    for b in (
        Backend("hf", ".hf:HFModel", HFOptions, "a local transformers causal LM (path or hub id)"),
        Backend("openai", ".openai:OpenAIModel", OpenAIOptions, "an OpenAI-compatible server (vLLM, SGLang…)",
                frozenset({"reasoning_effort", "enable_thinking", "top_k", "min_p", "presence_penalty",
                           "frequency_penalty", "system", "extra_body"}), ".batch_openai:OpenAIBatchModel"),
        Backend("anthropic", ".anthropic:AnthropicModel", AnthropicOptions, "the Anthropic Messages API",
                frozenset({"thinking_budget", "top_k", "system", "extra_body"}), ".batch_anthropic:AnthropicBatchModel"),
        Backend("vllm", ".vllm_engine:VLLMModel", VLLMOptions, "a vLLM server proctor starts and stops (path or hub id)",
                frozenset({"reasoning_effort", "enable_thinking", "top_k", "min_p", "presence_penalty",
                           "frequency_penalty", "system", "extra_body"})),
        Backend("scripted", ".scripted:ScriptedModel", ScriptedOptions, "rule-based answers, for tests"),
    )
}
SCHEMES = tuple(BACKENDS)


def backend_for(spec: str) -> tuple[Backend, str]:
    """The backend a spec names and the rest of the spec; a clear error for a malformed or unknown one."""
    scheme, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise ProctorError(f"model spec {spec!r} must look like SCHEME:NAME, with SCHEME one of {', '.join(SCHEMES)}")
    if scheme not in BACKENDS:
        raise ProctorError(f"unknown model scheme {scheme!r} in {spec!r} (expected one of {', '.join(SCHEMES)})")
    return BACKENDS[scheme], rest


def parse_options(backend: Backend, options: dict[str, Any]) -> dict[str, Any]:
    """Validate options against the backend's model; return the ones set (the class defaults the rest)."""
    try:
        typed = backend.options.model_validate(options)
    except ValidationError as e:
        err = e.errors()[0]
        name = ".".join(str(p) for p in err["loc"]) or "options"
        if err["type"] == "extra_forbidden":
            known = ", ".join(backend.options.model_fields) or "none"
            raise ProctorError(f"{backend.prefix}: models take no option {name!r} (they take: {known})") from None
        raise ProctorError(f"{backend.prefix}: option {name!r}: {err['msg']} (got {err.get('input')!r})") from None
    return typed.model_dump(exclude_unset=True, exclude_none=True)


def get_model(spec: str, **options: Any) -> Model:
    """Return the backend for `spec`; heavy libraries are imported only for the backend asked for."""
    backend, rest = backend_for(spec)
    kwargs = parse_options(backend, options)
    batch = bool(kwargs.pop("batch", False))
    poll = kwargs.pop("batch_poll_interval", None)
    if batch and poll is not None:
        kwargs["poll_interval"] = poll
    model: Model = backend.load(batch)(rest, **kwargs)
    return model

