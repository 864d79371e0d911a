"""Text from data, made safe for a terminal: control characters shown escaped, Rich markup shown literally.

A category named `\\x1b[2J`, an OSC-8 hyperlink or `[bold red]` prints as those characters, never as a
terminal command or a style.
"""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def escape_control(text: str) -> str:
    """Control and bidi-override characters as visible escapes (`\\x1b`, `\\u202e`)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def plain(text: object) -> str:
    """A value from data for a plain-text line (typer.echo, print): control characters escaped."""
    return escape_control(str(text))


_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")


def plain_text(text: object) -> str:
    """Multi-line text from data (a prompt) for the terminal: line breaks and tabs kept, every other control
    or bidi-override character escaped (`\\x1b`, `\\x07`, `\\u202e`)."""
    return _CONTROL_BUT_LINES.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(text))


def json_safe(text: str) -> str:
    """JSON text (from `json.dumps`) with every control or bidi-override character but its layout's line breaks
    as a `\\uXXXX` escape: the same JSON value, nothing a terminal acts on (json.dumps leaves DEL, C1 controls
    and U+202E raw)."""
    return _CONTROL_BUT_LINES.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)  # JSON's own layout kept


def rich_safe(text: object) -> str:
    """A value from data for a Rich renderable: control characters escaped and markup neutralised."""
    from rich.markup import escape

    return escape(escape_control(str(text)))


__all__ = ["escape_control", "json_safe", "plain", "plain_text", "rich_safe"]
