"""Items JSONL: one CommonEval Item per line (a JSON array of items is read too).

The reader collects every problem in the file (malformed lines, field errors, identifiers repeated
case-insensitively) before raising one `InputError`, and remembers how each item was spelled; the
writer is atomic and writes a file read unchanged byte for byte, a changed item in its own dialect,
and an item that has none in the dialect asked for (`proctor.data.formats.dialects`; spec by default).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from pydantic import ValidationError

from ...util.errors import InputError, Problem
from ...util.textio import atomic_writer
from ..records import Item
from .dialects import Dialect, SourceFile, remember, render_lines
from .jsonrows import is_json_array, iter_records
from .problems import validation_problems


def parse_item_lines(path: str | Path, problems: list[Problem]) -> list[tuple[int, Item]]:
    """Parse `path` into (line number, Item) pairs; append each problem found to `problems`."""
    out: list[tuple[int, Item]] = []
    source = SourceFile(Path(path).read_bytes()) if Path(path).is_file() else None
    if source is not None and is_json_array(source.raw.decode("utf-8", "replace").lstrip("\ufeff")):
        source = None  # a JSON array is read, but written back as JSON Lines
    for record in iter_records(path, problems):
        value = record.value
        if not isinstance(value, dict):
            problems.append(Problem(str(path), record.line, f"expected a JSON object, got {type(value).__name__}"))
            continue
        try:
            item = Item.model_validate(value)
        except ValidationError as e:
            problems.extend(validation_problems(e, path, record.line))
            continue
        out.append((record.line, remember(item, record.text, value, source)))
    return out


def check_unique_identifiers(located: Iterable[tuple[str | Path, int | None, Item]]) -> list[Problem]:
    """Identifiers must be unique case-insensitively; each repeat names both places."""
    seen: dict[str, tuple[str, int | None, str]] = {}
    problems: list[Problem] = []
    for path, line, item in located:
        key = item.identifier.casefold()
        if key in seen:
            first_path, first_line, first_id = seen[key]
            where = f"line {first_line}" if str(path) == first_path else f"{first_path}:{first_line}"
            problems.append(
                Problem(
                    str(path),
                    line,
                    f"{item.identifier!r} repeats {first_id!r} from {where}"
                    " (identifiers are matched case-insensitively)",
                    "identifier",
                )
            )
        else:
            seen[key] = (str(path), line, item.identifier)
    return problems


def read_items(path: str | Path) -> list[Item]:
    """Read an items JSONL file; raise `InputError` listing every problem."""
    problems: list[Problem] = []
    located = parse_item_lines(path, problems)
    problems.extend(check_unique_identifiers((path, line, item) for line, item in located))
    if problems:
        raise InputError(problems)
    return [item for _, item in located]


def item_lines(items: Sequence[Item], dialect: Dialect | None = None) -> bytes:
    """The JSONL bytes of `items`: as read when unchanged, else one object per line in `dialect`
    (None: each item's own dialect, spec for items that have none)."""
    return render_lines(items, dialect)


def write_items(path: str | Path, items: Sequence[Item], dialect: Dialect | None = None) -> None:
    """Write `items` to `path` atomically, refusing repeated identifiers."""
    dup = check_unique_identifiers((path, i + 1, it) for i, it in enumerate(items))
    if dup:
        raise InputError(dup)
    data = item_lines(items, dialect)
    with atomic_writer(path, "wb") as f:
        f.write(data)

