"""The model seam: a batch-first protocol every backend implements.

A backend sees every request of a run at once, so it can sort, batch, share prefixes or fan out
concurrently as it sees fit. Per-request failures come back as records with `error` set — never as
exceptions that would lose the rest of the batch, and never as a wrong answer.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..util.errors import CapabilityError
from .tools import ToolCall, ToolChoice, ToolDef


class Capability(StrEnum):
    GENERATE = "generate"
    LOGLIKELIHOOD = "loglikelihood"
    TOOLS = "tools"  # reads a request's tools and returns the reply's calls (GenerateRequest.tools)


@dataclass(frozen=True)
class Message:
    role: str  # "system" | "user" | "assistant" | "tool"
    content: str
    tool_calls: tuple[ToolCall, ...] = ()  # an assistant turn's calls (core.tools)
    tool_call_id: str | None = None  # a "tool" message: the call it answers

    def as_dict(self) -> dict[str, Any]:
        """Role and content, and the tool fields only when set (a plain message's key is what it always was)."""
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.as_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        return d


class GenerationSpec(BaseModel):
    """The generation settings, declared once: a RunSpec's `generation`, what a backend's request carries (part of
    every cache key), and what a manifest records, an imported run's too. Each has its type and range here alone.

    `max_tokens` None: the benchmark's budget (filled by resolve; a request without one: the backend's own limit).
    `temperature` None: none sent, the server's default (an imported run that recorded none; greedy on hf:)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)  # every float finite

    temperature: float | None = Field(default=0.0, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    stop: tuple[str, ...] = ()
    seed: int | None = None
    # Reasoning-model and extra sampling settings (issue 15). Each backend maps them to its wire format
    # (see `proctor.models.openai` / `proctor.models.anthropic`); `as_dict` lists them only when set, so
    # cache keys of runs made before they existed stay valid.
    reasoning_effort: str | None = None  # OpenAI / vLLM / SGLang `reasoning_effort` (low, medium, high…)
    enable_thinking: bool | None = None  # vLLM / SGLang `chat_template_kwargs.enable_thinking` (Qwen3…)
    thinking_budget: int | None = Field(default=None, ge=1)  # Anthropic extended thinking `budget_tokens`
    top_k: int | None = Field(default=None, ge=1)
    min_p: float | None = Field(default=None, ge=0, le=1)
    presence_penalty: float | None = None
    frequency_penalty: float | None = None
    system: str | None = None  # a system prompt put before the request's own messages
    extra_body: dict[str, Any] = Field(default_factory=dict)  # JSON merged into the request body

    @field_validator("stop", mode="before")
    @classmethod
    def _one_stop(cls, value: Any) -> Any:
        """One stop sequence given as text (an OpenAI request's `stop: "###"`) is a tuple of one."""
        return (value,) if isinstance(value, str) else value

    def __hash__(self) -> int:  # `extra_body` (a dict) left out, as equal settings still hash alike
        return hash(tuple(v for k, v in self.__dict__.items() if k != "extra_body"))

    def as_dict(self) -> dict[str, Any]:
        """The cache key's shape: the five base settings always, the others only when set."""
        d: dict[str, Any] = {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "stop": list(self.stop),
            "seed": self.seed,
        }
        for name in _OPTIONAL_SETTINGS:
            value = getattr(self, name)
            if value is not None:
                d[name] = value
        if self.extra_body:
            d["extra_body"] = dict(self.extra_body)
        return d

    @classmethod
    def fields_of(cls, flat: Mapping[str, Any]) -> dict[str, Any]:
        """Another harness's request parameters (llm-wc's, Inspect's, an old manifest's) as this record's fields:
        a key proctor has no name for goes to `extra_body`; a temperature not recorded is None (the server's)."""
        known = {k: v for k, v in flat.items() if k in cls.model_fields and k != "extra_body"}
        rest = {k: v for k, v in flat.items() if k not in cls.model_fields}
        return {"temperature": None, **known, "extra_body": {**dict(flat.get("extra_body") or {}), **rest}}

    @classmethod
    def recorded(cls, flat: Mapping[str, Any]) -> GenerationSpec:
        """The settings another harness recorded (`fields_of`), checked: a wrong type or range names the key."""
        return cls.model_validate(cls.fields_of(flat))


GenerationSettings = GenerationSpec  # the name the Python API has always exported


_OPTIONAL_SETTINGS = ("reasoning_effort", "enable_thinking", "thinking_budget", "top_k", "min_p",
                      "presence_penalty", "frequency_penalty", "system")


@dataclass(frozen=True)
class GenerateRequest:
    messages: tuple[Message, ...]
    settings: GenerationSpec = field(default_factory=GenerationSpec)
    # a plain-text prompt (`--format completion`): the messages' contents sent as they are, no chat template
    # (hf: the text's tokens; openai/vllm: /v1/completions); only backends with `text_completion` take it
    completion: bool = False
    tools: tuple[ToolDef, ...] = ()  # functions the model may call (core.tools); none: a plain request
    tool_choice: ToolChoice | None = None  # None: the server's default (auto when tools are offered)

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "messages": [m.as_dict() for m in self.messages],
            "settings": self.settings.as_dict(),
        }
        if self.completion:  # only when set: cache keys of chat requests stay what they were
            d["completion"] = True
        if self.tools:  # likewise: a request without tools keeps its key
            d["tools"] = [t.as_dict() for t in self.tools]
        if self.tool_choice is not None:
            d["tool_choice"] = self.tool_choice.as_dict()
        return d


SentPrompt = list[dict[str, str]] | str  # chat messages (role, content) or one plain text, as a sample records them


def with_system(r: GenerateRequest) -> list[Message]:
    """The request's messages, after the settings' system prompt when one is set."""
    system = r.settings.system
    return ([Message("system", system)] if system else []) + list(r.messages)


def completion_text(r: GenerateRequest) -> str:
    """The one text a request sent as a plain-text completion carries: its messages' contents (the system prompt
    first), joined by blank lines."""
    return "\n\n".join(m.content for m in with_system(r))


def chat_messages(messages: Sequence[Message]) -> list[dict[str, str]]:
    """Messages as a chat request (and a sample) carries them: role and content."""
    return [{"role": m.role, "content": m.content} for m in messages]


def request_prompt(r: GenerateRequest) -> SentPrompt:
    """What a request asks to send: a completion request's text, any other's chat messages (`Model.sent_prompt`,
    unless a backend sends otherwise; `proctor prompt` shows it)."""
    return completion_text(r) if r.completion else chat_messages(with_system(r))


@dataclass(frozen=True)
class Generation:
    text: str = ""
    finish_reason: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    reasoning: str | None = None
    latency_s: float | None = None
    error: str | None = None  # set when the request failed after every retry
    cached: bool = field(default=False, compare=False)  # answered by the request cache (run.cache), not the model
    tool_calls: tuple[ToolCall, ...] = ()  # the calls the reply makes, names mapped back, arguments as sent


@dataclass(frozen=True)
class LoglikelihoodRequest:
    """Score `continuation` given `context`. The continuation's tokens are those of
    tokenize(context + continuation) beyond tokenize(context)."""

    context: str
    continuation: str

    def as_dict(self) -> dict[str, Any]:
        return {"context": self.context, "continuation": self.continuation}


@dataclass(frozen=True)
class Loglikelihood:
    logprob: float = 0.0  # sum over the continuation's tokens (natural log)
    n_tokens: int = 0  # the continuation's tokens (those scored)
    is_greedy: bool = False  # every continuation token was the argmax
    input_tokens: int | None = None  # every token the model read for it, context included (None: not known)
    error: str | None = None
    cached: bool = field(default=False, compare=False)  # answered by the request cache (run.cache), not the model


@runtime_checkable
class Model(Protocol):
    """What the runner needs from a backend."""

    name: str  # the spec string it was built from, e.g. "hf:gpt2"
    capabilities: frozenset[Capability]
    preferred_chunk_size: int  # items the runner hands over per call: 1 makes every answer durable at once
    context_length: int | None  # the context window in tokens, when known (hf's max_length; a server's after probe)

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]: ...

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]: ...

    def describe(self) -> dict[str, Any]:
        """Provenance for the run manifest (never secrets)."""
        ...

    def identity(self) -> dict[str, Any]:
        """What determines the answers (model name, weights revision or hash, dtype, chat template): the
        cache key. Never URLs, keys, concurrency or timeouts: the same model behind another URL is the same."""
        ...

    async def probe(self, needed: Iterable[Capability]) -> None:
        """The capability check, called once before a run starts: raise CapabilityError when the model cannot
        do what the run needs. It starts with `require` (the declared capabilities); a backend that must ask
        its server (an echo+logprobs request, the served context window) asks it after."""
        ...

    async def aclose(self) -> None:
        """Release connections or memory; the runner calls it at the end of every run."""
        ...

    # Optional hooks: `ModelBase` gives every one a default that does nothing or knows nothing.

    @property
    def generation_chunk_size(self) -> int | None:
        """Items per runner call in a generation run, for a local backend that batches (each batch is logged as
        soon as it is done); None: `preferred_chunk_size`."""
        ...

    @property
    def in_flight_limit(self) -> int | None:
        """Requests an HTTP backend allows in flight now (lowered after 429s); None for other backends."""
        ...

    def prompt_tokens(self, request: GenerateRequest) -> int | None:
        """The exact token count of `request`'s prompt (own tokenizer and chat template); None when unknown."""
        ...

    def sent_prompt(self, request: GenerateRequest) -> SentPrompt:
        """What the backend sends as `request`'s prompt: one text (a completion: /v1/completions, the text's tokens)
        or chat messages. The backend sends it and the runner records it (samples.jsonl): one decision."""
        ...

    @property
    def has_tokenizer(self) -> bool:
        """Whether `count_prompt_tokens` counts with the model's own tokenizer (hf:, openai: with tokenizer=DIR)."""
        ...

    def count_prompt_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer (only when `has_tokenizer`; see proctor.run.pricing.token_counter)."""
        ...

    def set_log_dir(self, run_dir: Path) -> None:
        """Before `probe`: where a model that starts its own server (vllm:) writes the server's log."""
        ...

    def use_run_dir(self, run_dir: Path) -> None:
        """Once the run directory is open: where a batch-API model keeps its batch state (a killed run resumes)."""
        ...


_WHAT_IT_TAKES = {
    Capability.GENERATE: "a generation run or a judge asks the model for text",
    Capability.LOGLIKELIHOOD: "a log-likelihood run scores each option's log-probability",
    Capability.TOOLS: "an agent offers the model tools and runs the calls it makes",
}


def require(model: Model, needed: Iterable[Capability]) -> None:
    """The static part of `Model.probe`, with nothing started and nothing sent: raise CapabilityError when
    the model's declared `capabilities` lack what is needed (the runner checks a judge with it too)."""
    missing = [c for c in Capability if c in set(needed) - model.capabilities]
    if missing:
        have = ", ".join(sorted(c.value for c in model.capabilities)) or "nothing"
        why = "; ".join(_WHAT_IT_TAKES[c] for c in missing)
        raise CapabilityError(f"{model.name} cannot {', '.join(c.value for c in missing)} ({why}); it supports: {have}")


class ModelBase:
    """Convenience base: unsupported operations raise clearly; `describe` reports the spec."""

    name: str = "model"
    capabilities: frozenset[Capability] = frozenset()
    text_completion: bool = False  # takes a plain-text prompt (GenerateRequest.completion), no chat template
    preferred_chunk_size: int = 256  # requests the runner hands over per call (local backends batch them)
    context_length: int | None = None

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        raise NotImplementedError(f"{self.name} cannot generate text")

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        raise NotImplementedError(f"{self.name} cannot score log-likelihoods")

    def describe(self) -> dict[str, Any]:
        return {"spec": self.name, "capabilities": sorted(c.value for c in self.capabilities)}

    def identity(self) -> dict[str, Any]:
        """The spec alone; backends add what else determines their answers (weights hash, dtype…)."""
        return {"spec": self.name}

    async def probe(self, needed: Iterable[Capability]) -> None:
        """The declared `capabilities` (`require`); backends that must ask a server extend it."""
        require(self, needed)

    async def aclose(self) -> None:
        """Release connections or memory; optional."""

    @property
    def generation_chunk_size(self) -> int | None:
        return None

    @property
    def in_flight_limit(self) -> int | None:
        return None

    def prompt_tokens(self, request: GenerateRequest) -> int | None:
        return None

    def sent_prompt(self, request: GenerateRequest) -> SentPrompt:
        """As the request asks (`request_prompt`); a backend that sends otherwise says so."""
        return request_prompt(request)

    @property
    def has_tokenizer(self) -> bool:
        return False

    def count_prompt_tokens(self, text: str) -> int:
        raise NotImplementedError(f"{self.name} has no tokenizer proctor can count with")

    def set_log_dir(self, run_dir: Path) -> None:
        """Nothing to log: the model starts no server."""

    def use_run_dir(self, run_dir: Path) -> None:
        """Nothing to keep: the model has no state of its own between runs."""


class ModelWrapper(ModelBase):
    """A model around another (the request cache, the `--max-cost` guard): the same protocol, with everything
    but what the wrapper changes passed through to `inner`."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self.capabilities = inner.capabilities
        self.text_completion = getattr(inner, "text_completion", False)
        self.preferred_chunk_size = inner.preferred_chunk_size
        self.context_length = inner.context_length

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await self.inner.generate(requests)

    async def loglikelihood(self, requests: Sequence[LoglikelihoodRequest]) -> list[Loglikelihood]:
        return await self.inner.loglikelihood(requests)

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    async def probe(self, needed: Iterable[Capability]) -> None:
        await self.inner.probe(needed)
        self.context_length = self.inner.context_length  # learnt by the probe (a server's max_model_len)

    async def aclose(self) -> None:
        await self.inner.aclose()

    @property
    def generation_chunk_size(self) -> int | None:
        return self.inner.generation_chunk_size

    @property
    def in_flight_limit(self) -> int | None:
        return self.inner.in_flight_limit

    def prompt_tokens(self, request: GenerateRequest) -> int | None:
        return self.inner.prompt_tokens(request)

    def sent_prompt(self, request: GenerateRequest) -> SentPrompt:
        return self.inner.sent_prompt(request)

    @property
    def has_tokenizer(self) -> bool:
        return self.inner.has_tokenizer

    def count_prompt_tokens(self, text: str) -> int:
        return self.inner.count_prompt_tokens(text)

    def set_log_dir(self, run_dir: Path) -> None:
        self.inner.set_log_dir(run_dir)

    def use_run_dir(self, run_dir: Path) -> None:
        self.inner.use_run_dir(run_dir)


_WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".msgpack", ".h5")


def weights_fingerprint(path: str | Path) -> str | None:
    """A cheap content identity for a local model directory (None when `path` is not one).

    Config, tokenizer and chat-template files are hashed in full; weight files by name, size and
    modification time (hashing tens of GB on every run would cost minutes): rewriting the weights in
    place changes the fingerprint, so a cache never answers for a retrained model."""
    root = Path(path)
    if not root.is_dir():
        return None
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file() and not p.name.startswith(".")):
        st = f.stat()
        h.update(str(f.relative_to(root)).encode() + b"\0")
        if f.suffix in _WEIGHT_SUFFIXES:
            h.update(f"{st.st_size}:{st.st_mtime_ns}".encode())
        elif st.st_size <= 64 << 20:
            h.update(hashlib.sha256(f.read_bytes()).digest())
    return "files-sha256:" + h.hexdigest()[:32]
