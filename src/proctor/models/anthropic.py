"""`anthropic:<model>` — the Messages API (`POST /v1/messages`).

System messages are joined into the `system` field; text blocks make the output and thinking blocks
are kept as reasoning. `seed` has no Messages-API equivalent and is not sent. Retries, concurrency and
error records are those of every HTTP backend (`proctor.models._http`). Tools go out as `tools` and `tool_choice`,
the conversation's calls and results as `tool_use` / `tool_result` blocks, and a reply's `tool_use` blocks come
back as the Generation's calls (`anthropic_tools`). The key comes from `api_key=`
or ANTHROPIC_API_KEY and is never logged or described. There is no log-likelihood capability.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from ..core.model import Capability, GenerateRequest, Generation
from ._http import HTTPModel, api_key, generate_all
from .anthropic_tools import tools_body, uses_tools, wire_messages
from .openai import merge_extra_body
from .replies import anthropic_generation
from .tool_names import wire_names

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"


class AnthropicModel(HTTPModel):
    """Generation through Anthropic's Messages API."""

    capabilities = frozenset({Capability.GENERATE, Capability.TOOLS})
    prefix = "anthropic"
    base_url_env = "ANTHROPIC_BASE_URL"
    default_base_url = DEFAULT_BASE_URL
    api_key_env = "ANTHROPIC_API_KEY"

    def __init__(
        self,
        model: str,
        base_url: str | Sequence[str] | None = None,
        *,
        api_key: str | None = None,
        concurrency: int = 16,
        timeout: float = 300.0,
        max_retries: int = 5,
        backoff_base: float = 0.5,
        default_max_tokens: int = 4096,
        seed: int = 0,
        **_: Any,
    ) -> None:
        self.default_max_tokens = default_max_tokens
        super().__init__(model, base_url, api_key=api_key, concurrency=concurrency, timeout=timeout,
                         max_retries=max_retries, backoff_base=backoff_base, seed=seed)

    def _headers(self, explicit_key: str | None) -> dict[str, str]:
        headers = {"anthropic-version": API_VERSION}
        key = _key(explicit_key)
        if key:
            headers["x-api-key"] = key
        return headers

    async def generate(self, requests: Sequence[GenerateRequest]) -> list[Generation]:
        return await generate_all(requests, self._generate_one)

    def body(self, r: GenerateRequest) -> dict[str, Any]:
        """The Messages API request for `r`.

        `thinking_budget` turns on extended thinking (`thinking.budget_tokens`); the API then accepts no
        temperature or top_k, so neither is sent. `reasoning_effort`, `enable_thinking` and the penalties
        have no Messages-API field (`reasoning.unsupported_settings` names them before a run). A request with
        tools, or a conversation with calls, sends its messages as content blocks (`anthropic_tools`)."""
        s = r.settings
        names = wire_names(r.tools)
        system = "\n\n".join(([s.system] if s.system else []) + [m.content for m in r.messages if m.role == "system"])
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": s.max_tokens if s.max_tokens is not None else self.default_max_tokens,
            "messages": (wire_messages(r.messages, names) if uses_tools(r.tools, r.messages)
                         else [{"role": m.role, "content": m.content} for m in r.messages if m.role != "system"]),
        }
        body |= tools_body(r.tools, r.tool_choice, names)
        if s.thinking_budget is not None:
            body["thinking"] = {"type": "enabled", "budget_tokens": s.thinking_budget}
        else:
            if s.temperature is not None:  # None: the API's default
                body["temperature"] = s.temperature
            if s.top_k is not None:
                body["top_k"] = s.top_k
        if system:
            body["system"] = system
        if s.top_p is not None:
            body["top_p"] = s.top_p
        if s.stop:
            body["stop_sequences"] = list(s.stop)
        return merge_extra_body(body, s.extra_body)

    async def _generate_one(self, r: GenerateRequest) -> Generation:
        data, latency = await self.http.post("/v1/messages", self.body(r))
        return anthropic_generation(data, latency, wire_names(r.tools))  # validated: a bad shape is an error record


def parse_message(data: dict[str, Any], latency: float | None = None) -> Generation:
    """A Generation from a Messages API response (a batch result): text blocks are the answer, thinking
    blocks the reasoning, tool_use blocks the calls (their names as sent: the batch maps them back, knowing the
    request); `InvalidReply` (a ValueError) when the shape is not one."""
    gen = anthropic_generation(data, 0.0)
    return replace(gen, latency_s=latency)


def _key(explicit: str | None) -> str | None:
    return api_key(explicit, "ANTHROPIC_API_KEY")
