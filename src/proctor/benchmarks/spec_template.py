"""The template language of benchmark spec files: `{name}` fields and a closed set of named transforms.

A template is Python's format syntax with no code in it: `{question}` inserts a field, `{choices.text}`
follows keys into nested rows, `{ctx_b:capitalize}` applies named transforms (`|`-separated, left to right).
Conversions (`!r`), attribute calls and format specs other than transform names are refused when the spec
is read, never when a row is rendered.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from typing import Any


def hellaswag_preprocess(text: str) -> str:
    """lm-evaluation-harness tasks/hellaswag/utils.py `preprocess`: strip, " [title]" → ". ", bracketed
    WikiHow artefacts removed, then each pair of spaces made one (one pass, as `str.replace` does)."""
    text = text.strip().replace(" [title]", ". ")
    text = re.sub(r"\[.*?\]", "", text)
    return text.replace("  ", " ")


def after_hashes(text: str) -> str:
    """GSM8K's final answer: the text after the last `####`, stripped (lm-eval gsm8k-cot's `doc_to_target`)."""
    return text.split("####")[-1].strip()


# The closed set: every name a spec may use, and what it does to a text.
TRANSFORMS: dict[str, Callable[[str], str]] = {
    "strip": str.strip,
    "lower": str.lower,
    "upper": str.upper,
    "capitalize": str.capitalize,  # Python's: first letter upper, the rest lower (what lm-eval calls)
    "underscores_to_spaces": lambda s: s.replace("_", " "),
    "hellaswag_preprocess": hellaswag_preprocess,
    "after_hashes": after_hashes,
}


class TemplateError(ValueError):
    """A template a spec may not use (unknown field or transform, a conversion, a bad brace)."""


def apply_transforms(text: str, names: Iterable[str]) -> str:
    for name in names:
        text = TRANSFORMS[name](text)
    return text


def check_transforms(names: Iterable[str]) -> None:
    unknown = [n for n in names if n not in TRANSFORMS]
    if unknown:
        raise TemplateError(f"unknown transform {unknown[0]!r}; known: {', '.join(TRANSFORMS)}")


def fields_of(template: str) -> list[tuple[str, list[str]]]:
    """The (field path, transforms) a template uses, checked: no conversion, no nested braces, known transforms."""
    out: list[tuple[str, list[str]]] = []
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as e:
        raise TemplateError(f"bad template {template!r}: {e}") from None
    for _, name, spec, conversion in parsed:
        if name is None:
            continue
        if not name or conversion or "{" in (spec or "") or "[" in name or any(
                part.startswith("_") for part in name.split(".")):
            raise TemplateError(f"bad field {{{name}}} in {template!r}: use {{name}} or {{name:transform}}")
        transforms = [t for t in (spec or "").split("|") if t]
        check_transforms(transforms)
        out.append((name, transforms))
    return out


def lookup(row: Mapping[str, Any], path: str) -> Any:
    """`choices.text` → row["choices"]["text"]; a list index as a number (`options.0`)."""
    value: Any = row
    for part in path.split("."):
        if isinstance(value, Mapping) and part in value:
            value = value[part]
        elif isinstance(value, (list, tuple)) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(path)
    return value


def render(template: str, row: Mapping[str, Any]) -> str:
    """The template filled from `row`; a missing field raises KeyError(path)."""
    out: list[str] = []
    for literal, name, spec, _ in string.Formatter().parse(template):
        out.append(literal)
        if name is None:
            continue
        value = lookup(row, name)
        text = "" if value is None else str(value)
        out.append(apply_transforms(text, [t for t in (spec or "").split("|") if t]))
    return "".join(out)
