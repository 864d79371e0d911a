"""How CommonEval items are spelled, remembered on reading and reproduced on writing.

Two dialects write the same Item:

| dialect      | boolean        | ternary unknown  | open modalities                      | extras            |
|--------------|----------------|------------------|--------------------------------------|-------------------|
| `spec`       | `"True"`       | `"I don't know"` | `single-value`, `short-prose`, …     | top-level keys    |
| `commoneval` | JSON `true`    | `"Unknown"`      | `singlevalue`, `shortprose`, …       | under `otherargs` |

`commoneval` is what the `commoneval` package (CommonEval's own code) writes and reads back: its
key order, `json.dump` spacing, ASCII escapes, choice options as `otherargs.choices`.

Each item read from a file keeps a `Spelling` (its source line and what it meant); each file keeps a
`SourceFile` (its exact bytes). Writing items back: an unchanged file is its own bytes, an unchanged
item is its own line, and a changed item is rendered in the dialect it was read in.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ...util.errors import InputError, Problem
from ..records import UNSCORED, Item, Modality, parse_lettered_options


class Dialect(StrEnum):
    SPEC = "spec"
    COMMONEVAL = "commoneval"


@dataclass(eq=False)
class SourceFile:
    """A file as read: its exact bytes and, once parsed, its items in order."""

    raw: bytes
    items: list[Item] = field(default_factory=list)


@dataclass(frozen=True, eq=False)
class Spelling:
    """How one item was written: its line, what that line meant, and its dialect (None: no telling)."""

    line: str | None  # None: the record spanned lines (a JSON array), so it is rendered, not copied
    meaning: dict[str, Any]
    dialect: Dialect | None
    source: SourceFile | None = None


_CODE_MODALITIES = {"singlevalue", "shortprose", "longprose"}
_SPEC_MODALITIES = {"single-value", "short-prose", "long-prose"}
_SPEC_EXTRAS = {"choices", "category", "subcategory", "tags", "metadata"}
COMMONEVAL_MODALITIES = {
    Modality.BOOLEAN: "boolean", Modality.CHOICE2: "choiceof2", Modality.CHOICE3: "choiceof3",
    Modality.CHOICE4: "choiceof4", Modality.CHOICE5: "choiceof5", Modality.TERNARY: "ternary",
    Modality.CLOZE: "cloze", Modality.SINGLE_VALUE: "singlevalue", Modality.SHORT_PROSE: "shortprose",
    Modality.LONG_PROSE: "longprose",
}


def detect_dialect(raw: dict[str, Any]) -> Dialect | None:
    """The dialect a raw item object is written in, or None when it reads the same in both."""
    modality = str(raw.get("modality", "")).strip().lower()
    response = raw.get("response")
    if modality in _CODE_MODALITIES or "otherargs" in raw or isinstance(response, bool):
        return Dialect.COMMONEVAL
    if modality == "ternary" and isinstance(response, str) and response.strip().lower() == "unknown":
        return Dialect.COMMONEVAL
    if modality in _SPEC_MODALITIES or _SPEC_EXTRAS & set(raw) or "difficulty" in raw:
        return Dialect.SPEC
    if modality.startswith("choiceof"):  # options in the prompt: CommonEval's reader needs otherargs.choices
        return Dialect.SPEC
    if modality in ("boolean", "ternary") and isinstance(response, str):
        return Dialect.SPEC
    return None


def remember(item: Item, line: str | None, raw: dict[str, Any], source: SourceFile | None) -> Item:
    """Attach the spelling of `line` to `item` (and the item to its file); returns `item`."""
    if line is not None and "\n" in line:
        line = None
    item.with_spelling(Spelling(line, item.to_json(), detect_dialect(raw), source))
    if source is not None:
        source.items.append(item)
    return item


def item_dialect(item: Item, default: Dialect) -> Dialect:
    spelling = item.spelling
    if isinstance(spelling, Spelling) and spelling.dialect is not None:
        return spelling.dialect
    return default


def _unchanged(item: Item, dialect: Dialect | None) -> Spelling | None:
    """The item's spelling when writing it in `dialect` (None: its own) reproduces its line."""
    spelling = item.spelling
    if not isinstance(spelling, Spelling) or spelling.meaning != item.to_json():
        return None
    if dialect is not None and spelling.dialect not in (None, dialect):
        return None
    return spelling


def verbatim_file(items: Sequence[Item], dialect: Dialect | None = None) -> bytes | None:
    """The source file's bytes when `items` are exactly its items, unchanged and in order."""
    if not items:
        return None
    spellings = [_unchanged(it, dialect) for it in items]
    first = spellings[0]
    if first is None or first.source is None:
        return None
    source = first.source
    if len(source.items) != len(items) or any(a is not b for a, b in zip(source.items, items)):
        return None
    if any(s is None for s in spellings):
        return None
    return source.raw


def render_line(item: Item, dialect: Dialect | None = None, default: Dialect = Dialect.SPEC) -> str:
    """One JSONL line (without newline) for `item`: its own line when unchanged, else rendered.

    `dialect` None keeps each item's own dialect (`default` for items that have none).
    """
    spelling = _unchanged(item, dialect)
    if spelling is not None and spelling.line is not None:
        return spelling.line
    chosen = dialect or item_dialect(item, default)
    if chosen is Dialect.COMMONEVAL:
        return json.dumps(commoneval_item(item))
    return json.dumps(item.to_json(), ensure_ascii=False)


def render_lines(items: Sequence[Item], dialect: Dialect | None = None,
                 default: Dialect = Dialect.SPEC) -> bytes:
    """The JSONL bytes for `items`: the source file itself when nothing changed."""
    same = verbatim_file(items, dialect)
    if same is not None:
        return same
    problems: list[Problem] = []
    lines: list[str] = []
    for it in items:
        try:
            lines.append(render_line(it, dialect, default) + "\n")
        except InputError as e:
            problems.extend(e.problems)
    if problems:
        raise InputError(problems)
    return "".join(lines).encode("utf-8")


def _commoneval_response(item: Item) -> Any:
    if isinstance(item.response, list):
        raise InputError.at(item.identifier, "graded responses have no CommonEval-code spelling "
                                             "(write --dialect spec)", field="response")
    if item.response == UNSCORED:
        raise InputError.at(item.identifier, "an unscored item has no CommonEval-code spelling", field="response")
    if item.modality is Modality.BOOLEAN:
        return item.response == "True"
    if item.modality is Modality.TERNARY:
        return "Unknown" if item.response == "I don't know" else item.response
    return item.response


def commoneval_choices(item: Item) -> list[str]:
    """A choice item's options as CommonEval's code lists them (from `choices`, else from the prompt)."""
    options = item.choices or parse_lettered_options(item.prompt, item.modality.letters)
    if options is None:
        raise InputError.at(item.identifier, "CommonEval's reader needs the options (otherargs.choices): give the "
                                             "item `choices` or letter them in the prompt (A) …)", field="choices")
    return list(options.values())


def commoneval_item(item: Item) -> dict[str, Any]:
    """The item as the `commoneval` package writes it (`BaseItem.as_dict` order; extras in `otherargs`)."""
    modality = COMMONEVAL_MODALITIES.get(item.modality)
    if modality is None:
        raise InputError.at(item.identifier, f"CommonEval's code has no {item.modality.value} (choiceof2..5 only): "
                                             "write --dialect spec", field="modality")
    out: dict[str, Any] = {"identifier": item.identifier, "prompt": item.prompt,
                           "response": _commoneval_response(item), "modality": modality}
    if item.task_prompt:
        out["taskPrompt"] = item.task_prompt
    if item.support:
        out["support"] = item.support
    if item.difficulty is not None:
        out["difficulty"] = item.difficulty
    other: dict[str, Any] = {}
    if item.modality.is_choice:
        other["choices"] = commoneval_choices(item)
    for key, value in (("category", item.category), ("subcategory", item.subcategory), ("tags", item.tags)):
        if value:
            other[key] = value
    clash = sorted(set(item.metadata) & set(other))
    if clash:
        raise InputError.at(item.identifier, f"metadata keys {clash} clash with otherargs fields", field="metadata")
    other.update(item.metadata)
    if other:
        out["otherargs"] = other
    return out
