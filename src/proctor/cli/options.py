"""Model options shared by every command that builds a model from a spec, from the backend registry.

A command-line option set by the user (not None, not a False flag) must apply to at least one of the
models the command builds (the model, or its judge); otherwise it is an error naming the option.
"""

from __future__ import annotations

from typing import Any

from ..errors import ProctorError

# command-line option name -> backend option name
_FLAG_TO_FIELD = {"base_urls": "base_url"}


def _fields(spec: str) -> set[str]:
    from ..models.registry import backend_for

    backend, _ = backend_for(spec)
    return set(backend.options.model_fields)


def _given(options: dict[str, Any]) -> dict[str, Any]:
    """The options that were set, under their backend names (several base URLs: a list)."""
    out: dict[str, Any] = {}
    for flag, value in options.items():
        if value is None or value is False or value == []:
            continue
        if flag == "base_urls":
            value = value if len(value) > 1 else value[0]
        out[_FLAG_TO_FIELD.get(flag, flag)] = value
    return out


def model_options(spec: str, **options: Any) -> dict[str, Any]:
    """Keyword arguments for `get_model(spec, **kw)`: the given options that the spec's backend declares."""
    fields = _fields(spec)
    return {k: v for k, v in _given(options).items() if k in fields}


def check_applicable(specs: list[str | None], **options: Any) -> None:
    """Refuse an option set on the command line that none of `specs`' backends takes."""
    fields = set().union(*(_fields(s) for s in specs if s))
    for name in _given(options):
        if name not in fields:
            models = ", ".join(s for s in specs if s)
            raise ProctorError(f"--{name.replace('_', '-')} does not apply to {models}")


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
    from ..models.base import GenerationSettings
    from ..reasoning import parse_extra_body, unsupported_settings

    given: dict[str, Any] = {
        "reasoning_effort": reasoning_effort, "enable_thinking": enable_thinking, "thinking_budget": thinking_budget,
        "top_k": top_k, "min_p": min_p, "presence_penalty": presence_penalty, "frequency_penalty": frequency_penalty,
        "system": system or None,
    }
    kw = {k: v for k, v in given.items() if v is not None}
    body = parse_extra_body(extra_body)
    if body:
        kw["extra_body"] = body
    if kw:
        problems = unsupported_settings(spec.partition(":")[0], GenerationSettings(max_tokens=max_tokens, **kw))
        if problems:
            raise ProctorError("; ".join(problems))
    return kw
