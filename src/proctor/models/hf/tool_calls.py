"""Tool calling for `hf:` models: the tools go to the chat template (`apply_chat_template(..., tools=[...])`, the
JSON-schema form transformers documents) and the calls are read back from the generated text in the model
family's own format.

Read today (`call_format` tells them apart by the template's text):
* `hermes`: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one block per call — Qwen2.5, Qwen3, QwQ,
  Hermes 2 Pro / Hermes 3 and their fine-tunes;
* `llama3_json`: the reply is the call, a bare `{"name": ..., "parameters": {...}}` (several separated by `;`) —
  Llama 3.1, 3.2 and 3.3, whose template asks for exactly that.
A model is offered tools only when its chat template takes `tools` and writes one of them; any other (Mistral's
`[TOOL_CALLS]`, a special token `skip_special_tokens` drops; pythonic lists) declares no tool calling, and the
agent refuses it before anything runs. `tool_choice` cannot be enforced on a local model (the template has no such input): `none`
leaves the tools out of the prompt and reads no call; `required` and a named function are not forced.

A block that cannot be read (not JSON, not an object, no name, or cut off by the token limit) is still a call: its
name empty or as written, its arguments the text as generated, and `call_problem` says what is wrong — an outcome
of the sample, never an error record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from ...core.model import Message
from ...core.tools import ToolCall, ToolChoice, ToolDef, parsed_arguments
from ...util.limits import json_depth_exceeds

CallFormat = Literal["hermes", "llama3_json"]
_HERMES = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_LLAMA3 = '"parameters": dictionary of argument name'  # Llama 3.1-3.3's templates: "Respond in the format {...}"


def call_format(template: object) -> CallFormat | None:
    """The call format a chat template writes, when it takes `tools` and proctor reads that format; else None."""
    if not isinstance(template, str) or "tools" not in template:
        return None
    if "<tool_call>" in template:
        return "hermes"
    return "llama3_json" if _LLAMA3 in template else None


def offers_tools(tools: Sequence[ToolDef], choice: ToolChoice | None) -> bool:
    """Whether the prompt carries the tools and the reply is read for calls (`tool_choice` none: neither)."""
    return bool(tools) and not (choice is not None and choice.function is None and choice.mode == "none")


def template_tools(tools: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """The tools as chat templates take them (transformers' JSON-schema form: OpenAI's `function` objects)."""
    return [{"type": "function", "function": {"name": t.name, "description": t.description,
                                              "parameters": dict(t.parameters)}} for t in tools]


def template_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Messages as chat templates take them: an assistant turn's `tool_calls` (arguments an object when they hold
    one, else the text as sent), a tool message's `tool_call_id` and the `name` of the function it answers."""
    called = {c.id: c.name for m in messages for c in m.tool_calls}
    out: list[dict[str, Any]] = []
    for m in messages:
        d: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            d["tool_calls"] = [{"id": c.id, "type": "function",
                                "function": {"name": c.name, "arguments": _arguments(c)}} for c in m.tool_calls]
        if m.tool_call_id is not None:
            d |= {"tool_call_id": m.tool_call_id, "name": called.get(m.tool_call_id, "")}
        out.append(d)
    return out


def _arguments(call: ToolCall) -> dict[str, Any] | str:
    try:
        return parsed_arguments(call)
    except ValueError:
        return call.arguments


def read_calls(text: str, fmt: CallFormat) -> tuple[str, tuple[ToolCall, ...]]:
    """(the text outside the call blocks, the calls) of a generated reply in format `fmt`."""
    if fmt == "llama3_json":
        return _llama3_calls(text)
    blocks = [m.group(1).strip() for m in _HERMES.finditer(text)]
    if not blocks:
        return text, ()
    return _HERMES.sub("", text).strip(), tuple(_call(body, i) for i, body in enumerate(blocks))


def _llama3_calls(text: str) -> tuple[str, tuple[ToolCall, ...]]:
    """A reply that is one or more JSON objects naming a function (`;` between them) is its calls; a reply that
    starts as one and then cannot be read is one unreadable call; any other reply is text."""
    body = text.strip().removeprefix("<|python_tag|>").strip()
    if not body.startswith("{"):
        return text, ()
    calls: list[ToolCall] = []
    at = 0
    while at < len(body):
        end = _object_end(body, at)
        calls.append(_call(body[at:end], len(calls)))
        at = end
        while at < len(body) and body[at] in " \t\r\n;":
            at += 1
    if not calls or (calls[0].name == "" and '"name"' not in body[:200]):
        return text, ()
    return "", tuple(calls)


def _object_end(text: str, start: int) -> int:
    """Where the JSON value starting at `start` ends; the text's end when it cannot be read (the rest is one
    unreadable call)."""
    if json_depth_exceeds(text[start:]):
        return len(text)
    try:
        return int(json.JSONDecoder().raw_decode(text, start)[1])
    except (ValueError, RecursionError):
        return len(text)


def _call(body: str, index: int) -> ToolCall:
    """One `<tool_call>` block: {"name", "arguments"} (or "parameters"); anything else kept as generated."""
    call_id = f"call_{index}"
    try:
        value = None if json_depth_exceeds(body) else json.loads(body)
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        return ToolCall(call_id, "", body)
    args = value.get("arguments", value.get("parameters"))
    if isinstance(args, str) or args is None:
        return ToolCall(call_id, value["name"], args or "")
    return ToolCall(call_id, value["name"], json.dumps(args, ensure_ascii=False))


__all__ = ["CallFormat", "call_format", "offers_tools", "read_calls", "template_messages", "template_tools"]
