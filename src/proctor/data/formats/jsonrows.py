"""JSON records from a file: JSON Lines, or one JSON array of records (as TIGER-Lab dumps MMLU-Pro).

Either way each record comes with the line it starts on and its source text, so errors read
`path:line: …` and writers can reproduce the record exactly.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...util.errors import InputError, Problem
from ...util.limits import MAX_JSON_DEPTH, check_json_depth
from ...util.textio import iter_jsonl, read_text

_DECODER = json.JSONDecoder()
_WS = " \t\n\r"


@dataclass(frozen=True)
class Record:
    line: int
    value: Any
    text: str


def is_json_array(text: str) -> bool:
    return text.lstrip(_WS).startswith("[")


def iter_records(path: str | Path, problems: list[Problem]) -> Iterator[Record]:
    """Each record of a JSONL file or a JSON-array file; malformed input lands in `problems`."""
    text = read_text(path)
    if is_json_array(text):
        yield from _array_records(path, text, problems)
        return
    lines = text.split("\n")
    for lineno, value in iter_jsonl(path, problems):
        yield Record(lineno, value, lines[lineno - 1])


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _array_records(path: str | Path, text: str, problems: list[Problem]) -> Iterator[Record]:
    pos = _skip(text, text.index("[") + 1)
    if pos < len(text) and text[pos] == "]":
        problems.append(Problem(str(path), 1, "empty JSON array: no records"))
        return
    while pos < len(text):
        line = text.count("\n", 0, pos) + 1
        try:
            value, end = _DECODER.raw_decode(text, pos)
            check_json_depth(text[pos:end], path, line)  # one record: cheap unless it has many brackets
        except json.JSONDecodeError as e:
            problems.append(Problem(str(path), e.lineno, f"malformed JSON: {e.msg} (column {e.colno})"))
            return
        except RecursionError:
            problems.append(Problem(str(path), line, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"))
            return
        except InputError as e:
            problems.extend(e.problems)
            return
        except ValueError as e:  # an integer of more than 4300 digits
            problems.append(Problem(str(path), line, f"unreadable JSON: {e}"))
            return
        yield Record(line, value, text[pos:end])
        pos = _skip(text, end)
        if pos < len(text) and text[pos] == ",":
            pos = _skip(text, pos + 1)
            continue
        if pos < len(text) and text[pos] == "]" and not text[pos + 1:].strip(_WS):
            return
        if pos >= len(text):
            break
        where = text.count("\n", 0, pos) + 1
        problems.append(Problem(str(path), where, "malformed JSON array: expected ',' or a final ']'"))
        return
    problems.append(Problem(str(path), text.count("\n") + 1, "malformed JSON array: missing the closing ']'"))
