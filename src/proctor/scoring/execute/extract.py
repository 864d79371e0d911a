"""The code in a model's reply: a completion continues the prompt; a chat reply gives a fenced block, a full
function, or a function body."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass

FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
PYTHON_TAGS = ("", "python", "py", "python3")


@dataclass(frozen=True)
class Code:
    """The program text to run and how it was taken (`ExecutionDetails.code_from`)."""

    text: str
    source: str  # "completion", "fenced", "function", "body", "none"


def fenced_blocks(reply: str) -> list[str]:
    """The Python (or untagged) fenced blocks of a reply, in order."""
    return [m.group(2) for m in FENCE.finditer(reply) if m.group(1).lower() in PYTHON_TAGS]


def defines(code: str, name: str) -> bool:
    """`code` defines function `name` at its top level."""
    return re.search(rf"^(?:async\s+)?def\s+{re.escape(name)}\s*\(", code, re.MULTILINE) is not None


def from_completion(prompt: str, completion: str) -> Code:
    """A completion: the prompt and the text that continues it, as the authors' harnesses join them."""
    return Code(prompt + completion, "completion")


def from_chat(reply: str, prompt: str, entry_point: str | None) -> Code:
    """A chat reply's program. The fenced block that defines `entry_point` (else the last Python block, else the
    reply itself); when it defines the function, it is the program after the prompt's imports; when it does not
    (a body), it continues the prompt, indented as a body."""
    blocks = fenced_blocks(reply)
    if blocks:
        chosen = next((b for b in reversed(blocks) if entry_point and defines(b, entry_point)), blocks[-1])
        source = "fenced"
    else:
        chosen, source = reply, "function"
    if not chosen.strip():
        return Code("", "none")
    if entry_point is None or defines(chosen, entry_point):
        return Code(_header(prompt, entry_point) + chosen, source)
    body = textwrap.indent(textwrap.dedent(chosen), "    ")
    return Code(prompt.rstrip("\n") + "\n" + body, "body")


def _header(prompt: str, entry_point: str | None) -> str:
    """What comes before the function in the prompt (imports, helpers): kept, so that a reply defining the
    function alone finds `List` and the prompt's helpers."""
    if entry_point is None:
        return ""
    match = re.search(rf"^(?:async\s+)?def\s+{re.escape(entry_point)}\s*\(", prompt, re.MULTILINE)
    return prompt[: match.start()] if match else ""
