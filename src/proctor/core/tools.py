"""Tool calling's records, whatever the backend's wire format: the functions a request offers (`ToolDef`), how the
model may use them (`ToolChoice`), the calls a reply makes (`ToolCall`, its arguments kept as the model sent them)
and what `call_problem` finds wrong with one. The backends map them to and from their wire (`proctor.models`);
the agent loop (`proctor.scoring.agent`) runs the calls.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..util.limits import MAX_JSON_DEPTH, json_depth_exceeds

ToolMode = Literal["auto", "none", "required"]


@dataclass(frozen=True)
class ToolDef:
    """One function the model may call: its name, what it does and its parameters as a JSON schema (an object)."""

    name: str
    description: str = ""
    parameters: Mapping[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}}, hash=False)

    def as_dict(self) -> dict[str, Any]:
        """The definition as a cache key and a trajectory record it (wire-neutral)."""
        return {"name": self.name, "description": self.description, "parameters": dict(self.parameters)}


@dataclass(frozen=True)
class ToolChoice:
    """How the model may use the tools: `mode` auto (it decides), none (no call), required (at least one call);
    `function` set: it must call that one function (OpenAI's named `tool_choice`, vLLM's guided decoding)."""

    mode: ToolMode = "auto"
    function: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"function": self.function} if self.function is not None else {"mode": self.mode}


@dataclass(frozen=True)
class ToolCall:
    """One call a reply makes: the server's id for it, the function's name and its arguments exactly as sent (a
    JSON text when the model behaved; anything else when it did not: `call_problem` says what)."""

    id: str
    name: str
    arguments: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


def parsed_arguments(call: ToolCall) -> dict[str, Any]:
    """The call's arguments as a JSON object (empty text: no arguments); ValueError saying why when they are not."""
    text = call.arguments.strip()
    if not text:
        return {}
    if json_depth_exceeds(text):
        raise ValueError(f"arguments are JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError) as e:
        raise ValueError(f"arguments are not JSON: {str(e)[:120]}") from None
    if not isinstance(value, dict):
        raise ValueError(f"arguments are JSON {type(value).__name__}, not an object")  # noqa: TRY004 - one error kind
    return value


def call_problem(call: ToolCall, known: Iterable[str]) -> str | None:
    """Why `call` cannot be run (an empty or unknown name, arguments that are not a JSON object); None: it can."""
    if not call.name.strip():
        return "the call names no function"
    names = set(known)
    if call.name not in names:
        return f"no function {call.name[:80]!r} was offered (offered: {', '.join(sorted(names))[:200] or 'none'})"
    try:
        parsed_arguments(call)
    except ValueError as e:
        return str(e)
    return None


__all__ = ["ToolCall", "ToolChoice", "ToolDef", "ToolMode", "call_problem", "parsed_arguments"]
