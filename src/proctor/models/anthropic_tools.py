"""Tool calling in the Anthropic Messages wire format: a request's `tools` ({name, description, input_schema})
and `tool_choice`, its conversation as content blocks, and a reply's `tool_use` blocks read back as
`core.tools.ToolCall`s.

An assistant turn's calls become `tool_use` blocks (after its text, when it has any); each `tool` message becomes
a `tool_result` block of a user message, consecutive results (and a user message right after them) in one user
message, as the API requires. A call's arguments go out as the object they hold (`{}` when they are not one: the
agent refused that call already). Names outside `^[a-zA-Z0-9_-]{1,64}$` are mapped and mapped back as for OpenAI
(`tool_names`); so are call ids, which Anthropic restricts alike.

A reply's `tool_use` blocks are read leniently: `input` an object is written as JSON text, a string is kept as
sent, anything else as its JSON text (`call_problem` refuses what is not an object); a name that is not text
comes back empty and an id that is not text gets `toolu_N` (its index). None of that is an error record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.model import Message
from ..core.tools import ToolCall, ToolChoice, ToolDef, parsed_arguments
from .tool_names import reverse, wire_id


def uses_tools(tools: Sequence[ToolDef], messages: Sequence[Message]) -> bool:
    """Whether a request needs the block form: tools offered, or a conversation with calls or results."""
    return bool(tools) or any(m.tool_calls or m.tool_call_id is not None or m.role == "tool" for m in messages)


def tools_body(tools: Sequence[ToolDef], choice: ToolChoice | None, names: Mapping[str, str]) -> dict[str, Any]:
    """The request's `tools` and `tool_choice` (nothing when no tool is offered)."""
    if not tools:
        return {}
    sent = []
    for t in tools:
        entry: dict[str, Any] = {"name": names[t.name], "input_schema": dict(t.parameters)}
        if t.description:
            entry["description"] = t.description
        sent.append(entry)
    body: dict[str, Any] = {"tools": sent}
    if choice is not None:
        body["tool_choice"] = wire_choice(choice, names)
    return body


def wire_choice(choice: ToolChoice, names: Mapping[str, str]) -> dict[str, Any]:
    """auto → `auto`, required → `any`, none → `none`, a function → `{"type": "tool", "name"}`."""
    if choice.function is not None:
        return {"type": "tool", "name": names.get(choice.function, choice.function)}
    return {"type": {"auto": "auto", "required": "any", "none": "none"}[choice.mode]}


def wire_messages(messages: Sequence[Message], names: Mapping[str, str]) -> list[dict[str, Any]]:
    """The conversation (system messages left out: they go to `system`) as content blocks, a role's consecutive
    messages in one message."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        role = "user" if m.role == "tool" else m.role
        blocks = _blocks(m, names)
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})
    return out


def _blocks(m: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
    if m.role == "tool":
        return [{"type": "tool_result", "tool_use_id": wire_id(m.tool_call_id or ""), "content": m.content}]
    text = [{"type": "text", "text": m.content}] if m.content or not m.tool_calls else []
    return text + [{"type": "tool_use", "id": wire_id(c.id), "name": names.get(c.name, c.name), "input": _input(c)}
                   for c in m.tool_calls]


def _input(call: ToolCall) -> dict[str, Any]:
    try:
        return parsed_arguments(call)
    except ValueError:
        return {}


def read_tool_uses(blocks: Sequence[tuple[object, object, object]], names: Mapping[str, str]) -> tuple[ToolCall, ...]:
    """The (id, name, input) of a reply's `tool_use` blocks as calls, names mapped back."""
    back = reverse(names)
    calls = []
    for i, (call_id, name, given) in enumerate(blocks):
        wire = name if isinstance(name, str) else ""
        calls.append(ToolCall(call_id if isinstance(call_id, str) and call_id else f"toolu_{i}",
                              back.get(wire, wire), _arguments(given)))
    return tuple(calls)


def _arguments(given: object) -> str:
    """A block's `input` as argument text: a string as sent, None as none, anything else as JSON."""
    if isinstance(given, str) or given is None:
        return given or ""
    try:
        return json.dumps(given, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(given)[:1000]


__all__ = ["read_tool_uses", "tools_body", "uses_tools", "wire_choice", "wire_messages"]
