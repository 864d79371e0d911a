"""Turning pydantic errors and JSON positions into `path:line: field: message` problems."""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...util.errors import Problem

Loc = tuple[int | str, ...]
_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none", "null"}


def _is_union_tag(part: int | str) -> bool:
    """pydantic names union members in error locations (`str`, `list[GradedAnswer]`): not field names."""
    return isinstance(part, str) and ("[" in part or part in _TYPE_TAGS or part.startswith("function-"))


def field_name(loc: Sequence[int | str]) -> str:
    """`("response", "list[GradedAnswer]", 0, "credit")` → `response[0].credit`."""
    out = ""
    for part in loc:
        if _is_union_tag(part):
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _message(err: dict[str, Any]) -> str:
    if err["type"] == "extra_forbidden":
        return "unknown field"
    if err["type"] == "missing":
        return "required field is missing"
    msg = str(err["msg"])
    return msg.removeprefix("Value error, ").removeprefix("Assertion failed, ")


def _drop_union_noise(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Within one field, a branch that failed deeper (inside the list) explains more than a type mismatch."""
    depth: dict[str, int] = {}
    for e in errors:
        key = field_name(e["loc"][:1])
        depth[key] = max(depth.get(key, 0), len(e["loc"]))
    out = []
    for e in errors:
        loc = e["loc"]
        shallow_tag = len(loc) >= 2 and _is_union_tag(loc[-1]) and len(loc) < depth[field_name(loc[:1])]
        if not shallow_tag:
            out.append(e)
    return out


def validation_problems(
    exc: ValidationError,
    path: str | Path,
    line: int | None = None,
    prefix: Loc = (),
    line_of: Callable[[Loc], int | None] | None = None,
) -> list[Problem]:
    """One Problem per distinct field error; union alternatives for one field are merged."""
    merged: dict[str, list[str]] = {}
    lines: dict[str, int | None] = {}
    errors: list[dict[str, Any]] = [dict(e) for e in exc.errors()]
    for err in _drop_union_noise(errors):
        loc = prefix + tuple(err["loc"])
        name = field_name(loc)
        msg = _message(err)
        if msg not in merged.setdefault(name, []):
            merged[name].append(msg)
        lines.setdefault(name, line_of(loc) if line_of else line)
    return [
        Problem(str(path), lines[name], " or ".join(msgs), name or None) for name, msgs in merged.items()
    ]


def parse_json_with_lines(text: str) -> tuple[Any, dict[int, int]]:
    """Parse JSON and remember the line where each object and array starts (keyed by `id()`).

    Uses the pure-Python scanner, so call it only on the error path.
    """
    starts: dict[int, int] = {}
    decoder: Any = json.JSONDecoder()
    internals: Any = json.decoder  # the pure-Python parsers: undocumented, unchanged since Python 2.7
    json_object, json_array = internals.JSONObject, internals.JSONArray

    def parse_object(s_and_end: tuple[str, int], *args: Any) -> tuple[Any, int]:
        s, end = s_and_end
        value, new_end = json_object(s_and_end, *args)
        starts[id(value)] = s.count("\n", 0, end - 1) + 1
        return value, int(new_end)

    def parse_array(s_and_end: tuple[str, int], scan_once: Any) -> tuple[Any, int]:
        s, end = s_and_end
        value, new_end = json_array(s_and_end, scan_once)
        starts[id(value)] = s.count("\n", 0, end - 1) + 1
        return value, int(new_end)

    decoder.parse_object = parse_object
    decoder.parse_array = parse_array
    scanner: Any = json.scanner
    decoder.scan_once = scanner.py_make_scanner(decoder)
    return decoder.decode(text), starts


def line_locator(data: Any, starts: dict[int, int]) -> Callable[[Loc], int | None]:
    """A function giving the line of the deepest object or array on a location path."""

    def line_of(loc: Loc) -> int | None:
        node: Any = data
        best = starts.get(id(data))
        for part in loc:
            if _is_union_tag(part):
                continue
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                break
            best = starts.get(id(node), best)
        return best

    return line_of


def json_loc_lines(text: str) -> Callable[[Loc], int | None]:
    """Line locator for a JSON document (re-parsed with position tracking)."""
    data, starts = parse_json_with_lines(text)
    return line_locator(data, starts)
