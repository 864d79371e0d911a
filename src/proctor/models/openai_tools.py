"""Tool calling in the OpenAI wire format: the `tools` and `tool_choice` of a chat request, its tool messages, and
the `tool_calls` of a reply read back into `core.tools.ToolCall`s.

Names OpenAI refuses are mapped to ones it allows and a reply's names mapped back (`tool_names`, shared with
the other backends); a name the request never offered comes back as the model wrote it (an unknown function).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..core.model import Message
from ..core.tools import ToolCall, ToolChoice, ToolDef
from .tool_names import reverse, wire_names


def tools_body(tools: Sequence[ToolDef], choice: ToolChoice | None, names: Mapping[str, str]) -> dict[str, Any]:
    """The request's `tools` and `tool_choice` (none when no tool is offered)."""
    if not tools:
        return {}
    body: dict[str, Any] = {"tools": [
        {"type": "function", "function": {"name": names[t.name], "description": t.description,
                                          "parameters": dict(t.parameters)}} for t in tools]}
    if choice is not None:
        body["tool_choice"] = ({"type": "function", "function": {"name": names.get(choice.function, choice.function)}}
                               if choice.function is not None else choice.mode)
    return body


def wire_message(m: Message, names: Mapping[str, str]) -> dict[str, Any]:
    """One message as the chat request carries it: an assistant turn's calls and a tool message's call id too."""
    d: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        d["tool_calls"] = [{"id": c.id, "type": "function",
                            "function": {"name": names.get(c.name, c.name), "arguments": c.arguments}}
                           for c in m.tool_calls]
    if m.tool_call_id is not None:
        d["tool_call_id"] = m.tool_call_id
    return d


def read_calls(raw: Sequence[Any] | None, names: Mapping[str, str]) -> tuple[ToolCall, ...]:
    """A reply's `tool_calls`, names mapped back, arguments kept as sent (an object some servers send is written
    as JSON; anything else as its JSON text: `call_problem` refuses it); a call without an id gets its index's."""
    back = reverse(names)
    calls = []
    for i, entry in enumerate(raw or ()):
        call: dict[str, Any] = entry if isinstance(entry, dict) else {}
        inner = call.get("function")
        function: dict[str, Any] = inner if isinstance(inner, dict) else {}
        name = function.get("name")
        args = function.get("arguments")
        text = args if isinstance(args, str) else "" if args is None else json.dumps(args, ensure_ascii=False)
        call_id = call.get("id")
        wire = name if isinstance(name, str) else ""
        calls.append(ToolCall(call_id if isinstance(call_id, str) and call_id else f"call_{i}",
                              back.get(wire, wire), text))
    return tuple(calls)


__all__ = ["read_calls", "tools_body", "wire_message", "wire_names"]
