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


def rich_safe(text: object) -> str:
    """A value from data for a Rich renderable: control characters escaped and markup neutralised."""
    from rich.markup import escape

    return escape(escape_control(str(text)))


__all__ = ["escape_control", "plain", "rich_safe"]
