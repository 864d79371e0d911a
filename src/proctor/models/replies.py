"""The reply shapes proctor accepts from HTTP servers, validated into typed records at the boundary.

Every 200 reply passes through one of `chat_generation`, `completion_generation` or
`anthropic_generation` before anything else reads it. Real variants are accepted (`content` as a list
of text parts, `null` content, missing usage, extra fields); anything else (content an int, `message` a
string, usage a string or NaN, `finish_reason: 7`, text with a lone surrogate) raises `InvalidReply`,
which the backends turn into an error record: never cached, retried by the next run.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import replace
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..core.model import Generation
from ..core.tools import ToolCall
from ..util.errors import first_problem
from .anthropic_tools import read_tool_uses
from .openai_tools import read_calls

_STRICT = ConfigDict(extra="ignore", strict=True, frozen=True)
TokenCount = Annotated[int, Field(ge=0)]


class InvalidReply(ValueError):
    """A 200 reply whose body is not a shape proctor accepts."""


class _Part(BaseModel):
    model_config = _STRICT
    type: str = "text"
    text: str | None = None


class _ChatMessage(BaseModel):
    model_config = _STRICT
    content: str | list[_Part] | None = None
    reasoning_content: str | None = None
    reasoning: str | None = None
    tool_calls: list[Any] | None = None  # read leniently (openai_tools.read_calls): a bad call is the sample's


class _ChatChoice(BaseModel):
    model_config = _STRICT
    message: _ChatMessage
    finish_reason: str | None = None


class _CompletionChoice(BaseModel):
    model_config = _STRICT
    text: str | None = None
    finish_reason: str | None = None


class _OpenAIUsage(BaseModel):
    model_config = _STRICT
    prompt_tokens: TokenCount | None = None
    completion_tokens: TokenCount | None = None


class ChatReply(BaseModel):
    """`POST /v1/chat/completions`."""

    model_config = _STRICT
    choices: list[_ChatChoice] = Field(min_length=1)
    usage: _OpenAIUsage | None = None


class CompletionReply(BaseModel):
    """`POST /v1/completions` (generation; echo log-probs are read by `proctor.models._echo`)."""

    model_config = _STRICT
    choices: list[_CompletionChoice] = Field(min_length=1)
    usage: _OpenAIUsage | None = None


class _Block(BaseModel):
    model_config = _STRICT
    type: str
    text: str | None = None
    thinking: str | None = None
    id: Any = None  # a tool_use block's: read leniently (anthropic_tools.read_tool_uses), a bad call is the sample's
    name: Any = None
    input: Any = None


class _AnthropicUsage(BaseModel):
    model_config = _STRICT
    input_tokens: TokenCount | None = None
    output_tokens: TokenCount | None = None


class AnthropicReply(BaseModel):
    """`POST /v1/messages`."""

    model_config = _STRICT
    content: list[_Block]
    stop_reason: str | None = None
    usage: _AnthropicUsage | None = None


def _validate(kind: type[BaseModel], data: Any) -> Any:
    try:
        return kind.model_validate(data)
    except ValidationError as e:
        where, message, count = first_problem(e)
        raise InvalidReply(f"invalid reply: {where or 'body'}: {message} ({count} problem(s))") from None
    except RecursionError:
        raise InvalidReply("invalid reply: nested too deeply") from None


def _text(value: str | None, field: str) -> str | None:
    """The string itself, refused if it cannot be written as UTF-8 (a lone surrogate such as \\ud800)."""
    if value is None:
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise InvalidReply(f"invalid reply: {field}: lone surrogate U+{ord(value[e.start]):04X} at {e.start}") from None
    return value


def _joined(parts: list[_Part], field: str) -> str:
    return _text("".join(p.text or "" for p in parts if p.type in ("text", "output_text")), field) or ""


def chat_generation(data: Any, latency: float, names: Mapping[str, str] | None = None) -> Generation:
    """A chat completion as a Generation, its tool calls' names mapped back through `names` (offered name → name
    sent); `InvalidReply` when the body is not one."""
    reply: ChatReply = _validate(ChatReply, data)
    choice = reply.choices[0]
    content = choice.message.content
    text = _joined(content, "content") if isinstance(content, list) else _text(content, "content") or ""
    reasoning = _text(choice.message.reasoning_content or choice.message.reasoning, "reasoning")
    calls = read_calls(choice.message.tool_calls, names or {})
    _check_calls(calls)
    generation = _generation(text, choice.finish_reason, reply.usage, reasoning or None, latency)
    return replace(generation, tool_calls=calls) if calls else generation


def _check_calls(calls: tuple[ToolCall, ...]) -> None:
    for i, call in enumerate(calls):
        _text(call.id + call.name + call.arguments, f"tool_calls.{i}")


def completion_generation(data: Any, latency: float) -> Generation:
    """A text completion as a Generation; `InvalidReply` when the body is not one."""
    reply: CompletionReply = _validate(CompletionReply, data)
    choice = reply.choices[0]
    return _generation(_text(choice.text, "text") or "", choice.finish_reason, reply.usage, None, latency)


def _generation(text: str, finish: str | None, usage: _OpenAIUsage | None, reasoning: str | None,
                latency: float) -> Generation:
    return Generation(
        text=text,
        finish_reason=_text(finish, "finish_reason"),
        input_tokens=usage.prompt_tokens if usage else None,
        output_tokens=usage.completion_tokens if usage else None,
        reasoning=reasoning,
        latency_s=latency if math.isfinite(latency) else None,
    )


def anthropic_generation(data: Any, latency: float, names: Mapping[str, str] | None = None) -> Generation:
    """A Messages API reply as a Generation (text blocks the output, thinking blocks the reasoning, tool_use
    blocks the calls, their names mapped back through `names`)."""
    reply: AnthropicReply = _validate(AnthropicReply, data)
    calls = read_tool_uses([(b.id, b.name, b.input) for b in reply.content if b.type == "tool_use"], names or {})
    _check_calls(calls)
    text = _text("".join(b.text or "" for b in reply.content if b.type == "text"), "content") or ""
    thinking = _text("".join(b.thinking or "" for b in reply.content if b.type == "thinking"), "thinking")
    if any(b.type == "redacted_thinking" for b in reply.content):  # noted; its encrypted content is not kept
        thinking = f"{thinking}\n[redacted thinking]" if thinking else "[redacted thinking]"
    usage = reply.usage
    return Generation(
        text=text,
        tool_calls=calls,
        finish_reason=_text(reply.stop_reason, "stop_reason"),
        input_tokens=usage.input_tokens if usage else None,
        output_tokens=usage.output_tokens if usage else None,
        reasoning=thinking or None,
        latency_s=latency,
    )


__all__ = ["AnthropicReply", "ChatReply", "CompletionReply", "InvalidReply", "anthropic_generation",
           "chat_generation", "completion_generation"]
