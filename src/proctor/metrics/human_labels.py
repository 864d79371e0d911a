"""`--human-labels FILE`: human verdicts on some of a run's samples, read and checked.

Two formats, by the file's suffix:

* JSON Lines (any suffix but `.csv`): one object a line, `{"id": "q17", "correct": true}`;
* CSV (`.csv`): a header naming the columns `id` and `correct`, then one row a label.

`id` is an item id (a run of one epoch) or a sample id `ITEM#EPOCH`; `correct` is true/false, 1/0, or the words
correct/incorrect (also yes/no, right/wrong; any case). Blank lines are skipped. A bad line, a missing field, an id
given twice with two verdicts, or a file with no label is refused as `path:line: what is wrong` (exit 2).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from pathlib import Path

from ..core.spec import HumanLabels
from ..util.errors import InputError

_TRUE = frozenset({"true", "1", "correct", "yes", "right"})
_FALSE = frozenset({"false", "0", "incorrect", "no", "wrong"})


def verdict(value: object) -> bool | None:
    """A human verdict as True (correct) / False, or None when `value` is none of the accepted spellings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().lower()
        return True if word in _TRUE else False if word in _FALSE else None
    return None


def read_human_labels(path: str | Path) -> HumanLabels:
    """The labels `path` holds (format by suffix: `.csv` is CSV, anything else JSON Lines), with its hash."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise InputError.at(p, f"cannot read the labels: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError.at(p, "not UTF-8 text") from None
    rows = _csv_rows(p, text) if p.suffix.lower() == ".csv" else _jsonl_rows(p, text)
    labels: dict[str, bool] = {}
    for line, key, value in rows:
        got = verdict(value)
        if got is None:
            raise InputError.at(p, f"correct: expected true/false, 1/0 or correct/incorrect, got {value!r}", line)
        if labels.setdefault(key, got) != got:
            raise InputError.at(p, f"id {key!r} is labelled both correct and incorrect", line)
    if not labels:
        raise InputError.at(p, "no labels (give lines like {\"id\": \"q1\", \"correct\": true})")
    return HumanLabels(path=str(path), sha256=hashlib.sha256(data).hexdigest(), labels=labels)


def _id(p: Path, value: object, line: int) -> str:
    if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
        raise InputError.at(p, f"id: expected an item id (text or a whole number), got {value!r}", line)
    return str(value).strip()


def _jsonl_rows(p: Path, text: str) -> list[tuple[int, str, object]]:
    rows: list[tuple[int, str, object]] = []
    for line, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw)
        except ValueError as e:
            raise InputError.at(p, f"not JSON ({str(e).split(':')[0]})", line) from None
        if not isinstance(record, dict):
            raise InputError.at(p, 'expected an object {"id": ..., "correct": ...}', line)
        for key in ("id", "correct"):
            if key not in record:
                raise InputError.at(p, f"{key}: missing", line)
        rows.append((line, _id(p, record["id"], line), record["correct"]))
    return rows


def _csv_rows(p: Path, text: str) -> list[tuple[int, str, object]]:
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    rows: list[tuple[int, str, object]] = []
    for fields in reader:
        line = reader.line_num
        if not any(f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip().lower() for f in fields]
            missing = [k for k in ("id", "correct") if k not in header]
            if missing:
                raise InputError.at(p, f"the header names no {missing[0]!r} column (give `id,correct`)", line)
            continue
        if len(fields) != len(header):
            raise InputError.at(p, f"{len(fields)} fields, the header has {len(header)}", line)
        row = dict(zip(header, fields, strict=True))
        rows.append((line, _id(p, row["id"], line), row["correct"]))
    return rows


__all__ = ["read_human_labels", "verdict"]
