"""Every backend registers here, once: spec prefix → class (imported only when used) + typed options.

    hf:<path-or-hub-id>   openai:<model>   anthropic:<model>   scripted:<rule>

`get_model(spec, **options)` validates the options against the backend's pydantic model: an unknown
or inapplicable option, or a bad value, is an error naming the option, never silently dropped. The
CLI builds its model options from these models too (`proctor.cli.options`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import CapabilityError, ProctorError
from .base import Capability, Model


class BackendOptions(BaseModel):
    """Options every backend refuses unless it declares them; unset ones keep the class's default."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class HTTPOptions(BackendOptions):
    base_url: str | list[str] | None = None  # several: load is spread over them
    api_key: str | None = None  # else from the backend's environment variable; never logged
    concurrency: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    backoff_base: float | None = Field(default=None, ge=0)
    seed: int | None = None
    transport: Literal["auto", "httpx"] | None = None


class BatchableOptions(HTTPOptions):
    batch: bool | None = None  # through the provider's batch API (models/batch*.py), half price, within 24 h
    batch_poll_interval: float | None = Field(default=None, gt=0)  # seconds between batch status requests


class OpenAIOptions(BatchableOptions):
    chat: bool | None = None
    echo_max_tokens: int | None = Field(default=None, ge=0)


class AnthropicOptions(BatchableOptions):
    default_max_tokens: int | None = Field(default=None, ge=1)


class HFOptions(BackendOptions):
    dtype: Literal["auto", "float32", "bfloat16", "float16"] | None = None
    device: str | None = None  # cpu | cuda | cuda:N | auto
    batch_size: int | None = Field(default=None, ge=1)
    trust_remote_code: bool | None = None
    max_length: int | None = Field(default=None, ge=1)
    share_prefixes: bool | None = None
    pack_siblings: bool | None = None
    max_batch_tokens: int | None = Field(default=None, ge=1)  # log-likelihood tokens per forward pass


class ScriptedOptions(BackendOptions):
    """The scripted backend takes everything from its spec (`scripted:random,seed=7`)."""


@dataclass(frozen=True)
class Backend:
    prefix: str
    target: str  # "module:Class", imported on first use (torch only for hf)
    options: type[BackendOptions]
    summary: str
    # GenerationSettings reasoning/sampling fields it can send (issue 15); any other one set is refused
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


def require(model: Model, needed: Capability, why: str) -> None:
    """Refuse, before a run starts, a model that cannot do what the run needs."""
    if needed not in model.capabilities:
        have = ", ".join(sorted(c.value for c in model.capabilities)) or "nothing"
        raise CapabilityError(f"{model.name} cannot {needed.value} ({why}); it supports: {have}")
