"""Model options shared by every command that builds a model from a spec."""

from __future__ import annotations

from typing import Any


def model_options(
    spec: str,
    *,
    base_urls: list[str] | None = None,
    concurrency: int | None = None,
    timeout: float | None = None,
    max_retries: int | None = None,
    batch_size: int | None = None,
    device: str | None = None,
    dtype: str | None = None,
    trust_remote_code: bool = False,
) -> dict[str, Any]:
    """Keyword arguments for `get_model(spec, **kw)`, keeping only what the spec's backend understands."""
    scheme = spec.partition(":")[0]
    kw: dict[str, Any] = {}
    if scheme in ("openai", "anthropic"):
        if base_urls:
            kw["base_url"] = base_urls if len(base_urls) > 1 else base_urls[0]  # several: load is spread
        kw |= _given(concurrency=concurrency, timeout=timeout, max_retries=max_retries)
    elif scheme == "hf":
        kw |= _given(batch_size=batch_size, device=device, dtype=dtype)
        if trust_remote_code:  # off unless asked: it runs code shipped with the model
            kw["trust_remote_code"] = True
    return kw


def _given(**options: Any) -> dict[str, Any]:
    """The options that were set (not None), in order."""
    return {k: v for k, v in options.items() if v is not None}


# -- reasoning and extra sampling settings (issue 15) ----------------------------------------------------
# `run` declares one parameter per option below and passes them to `reasoning_settings`; the result goes
# into GenerationSettings(**...), so every one of them is in the cache key and the manifest.

REASONING_EFFORT_HELP = "OpenAI / vLLM / SGLang reasoning_effort (e.g. low, medium, high)."
ENABLE_THINKING_HELP = "vLLM / SGLang chat_template_kwargs.enable_thinking (Qwen3 and alike)."
THINKING_BUDGET_HELP = "Anthropic extended thinking budget_tokens (at least 1024, below --max-tokens)."
EXTRA_BODY_HELP = "A JSON object merged into every request body (anything the options above do not cover)."
SYSTEM_HELP = "System prompt put before every request's messages."


def reasoning_settings(
    spec: str,
    *,
    reasoning_effort: str | None = None,
    enable_thinking: bool | None = None,
    thinking_budget: int | None = None,
    top_k: int | None = None,
    min_p: float | None = None,
    presence_penalty: float | None = None,
    frequency_penalty: float | None = None,
    system: str | None = None,
    extra_body: str | None = None,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """GenerationSettings keyword arguments from the reasoning options; refuses (ProctorError, exit 2)
    settings the spec's backend cannot send rather than ignoring them."""
    from ..errors import ProctorError
    from ..models.base import GenerationSettings
    from ..reasoning import parse_extra_body, unsupported_settings

    kw = _given(reasoning_effort=reasoning_effort, enable_thinking=enable_thinking, thinking_budget=thinking_budget,
                top_k=top_k, min_p=min_p, presence_penalty=presence_penalty, frequency_penalty=frequency_penalty,
                system=system or None)
    body = parse_extra_body(extra_body)
    if body:
        kw["extra_body"] = body
    if kw:
        problems = unsupported_settings(spec.partition(":")[0], GenerationSettings(max_tokens=max_tokens, **kw))
        if problems:
            raise ProctorError("; ".join(problems))
    return kw
