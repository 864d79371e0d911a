"""Function names as the tool-calling wires allow them, shared by every backend that sends tools.

OpenAI and Anthropic both allow names of 1 to 64 characters among `a-z A-Z 0-9 _ -` (`^[a-zA-Z0-9_-]{1,64}$`);
BFCL's and MCP's names hold `.`, `/` or spaces. `wire_names` maps each offered name to one they allow (other
characters become `_`; a name that would then clash with another, or runs past 64 characters, gets a short hash
of the original), and `named_back` maps a reply's calls back; a name the request never offered comes back as the
model wrote it (an unknown function). Call ids go through `wire_id` where a wire restricts them too (Anthropic).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace

from ..core.tools import ToolCall, ToolDef

MAX_NAME = 64
_ALLOWED = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_DISALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def wire_names(tools: Sequence[ToolDef]) -> dict[str, str]:
    """Each offered name → the name sent for it: itself when the wire allows it, else a distinct allowed one."""
    allowed = {t.name for t in tools if _ALLOWED.match(t.name)}
    out: dict[str, str] = {}
    taken = set(allowed)
    for t in tools:
        if t.name in out:
            continue
        if t.name in allowed:
            out[t.name] = t.name
            continue
        wire = _DISALLOWED.sub("_", t.name)[:MAX_NAME] or "_"
        if wire in taken:
            digest = hashlib.sha256(t.name.encode()).hexdigest()[:8]
            wire = f"{wire[: MAX_NAME - 9]}_{digest}"
        out[t.name] = wire
        taken.add(wire)
    return out


def reverse(names: Mapping[str, str]) -> dict[str, str]:
    """Name sent → name offered (the inverse of `wire_names`)."""
    return {wire: name for name, wire in names.items()}


def named_back(calls: Sequence[ToolCall], tools: Sequence[ToolDef]) -> tuple[ToolCall, ...]:
    """`calls` as read from the wire, their names mapped back to the offered ones (a batch's results, read
    without their requests)."""
    back = reverse(wire_names(tools))
    return tuple(replace(c, name=back.get(c.name, c.name)) for c in calls)


def wire_id(call_id: str) -> str:
    """A call id as a wire that allows only `a-z A-Z 0-9 _ -` takes it (others become `_`; empty: `_`)."""
    return _DISALLOWED.sub("_", call_id) or "_"


__all__ = ["MAX_NAME", "named_back", "reverse", "wire_id", "wire_names"]
