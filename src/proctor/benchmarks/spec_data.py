"""A spec's rows: fetched (hub pinned to the spec's revision, or local files in the upstream schema) and mapped
onto seed-001 Questions as its `fields` declare; every row that cannot be mapped is refused at `path:line`."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..data.formats.problems import field_name
from ..data.records import IDENTIFIER_RE, LETTERS, Question
from ..util.errors import InputError, Problem
from .hub import FILE_SUFFIXES, HubSource, Rows, fetch, parse_list_cell
from .spec import Answer, BenchmarkSpec, Choices, Fields, LineOf, Text
from .spec_prompts import BLANK
from .spec_template import apply_transforms, fields_of, lookup, render


def split_rows(spec: BenchmarkSpec, spec_dir: Path, split: str, data: Path | None = None) -> Rows:
    """One split's rows: from `data` (`--data-file`: a folder of `<split>*` files, or a file holding the evaluated
    split), the spec's `files`, or the hub."""
    src = spec.source
    hub = HubSource(src.dataset or spec.name, split=split, config=src.config, revision=src.revision)
    local = _local_split(spec, spec_dir, split, data)
    rows = fetch(hub, local)
    if src.revision is not None and local is None:
        rows.provenance["revision"] = src.revision
    return rows


def _local_split(spec: BenchmarkSpec, spec_dir: Path, split: str, data: Path | None) -> Path | None:
    """Where `split` is read from: a data file is the evaluated split whatever its name (as a built-in's file is),
    and another split is the file beside it named with that split instead (`test.jsonl` → `dev.jsonl`), else the
    spec's own; a data folder holds every split; without either, the spec's `files` (None: the hub)."""
    own = spec_dir / spec.source.files[split] if split in spec.source.files else None
    if data is None:
        return own
    if data.is_file():
        if split == spec.source.split:
            return data
        beside = data.with_name(data.name.replace(spec.source.split, split, 1))
        return beside if spec.source.split in data.name and beside.is_file() else own
    found = find_split_file(data, split)
    if found is None:
        raise InputError.at(data, f"no {split}*.parquet/.csv/.jsonl/.json file here (or in data/)")
    return found


def find_split_file(directory: Path, split: str) -> Path | None:
    """The first `<split>*` data file in `directory` or its `data/` (a Hugging Face snapshot's layout)."""
    if directory.is_file():
        return directory if split in directory.name else None
    for folder in (directory, directory / "data"):
        found = sorted(f for f in folder.glob(f"{split}*") if f.suffix.lower() in FILE_SUFFIXES and f.is_file())
        if found:
            return found[0]
    return None


def columns_by_field(fields: Fields) -> dict[tuple[str | int, ...], list[str]]:
    """The top-level columns each mapped field reads, by its location in the spec (`("fields", "question")`)."""
    out: dict[tuple[str | int, ...], list[str]] = {("fields", "answer"): [fields.answer.column]}
    texts: dict[tuple[str | int, ...], Text | None] = {
        ("fields", name): getattr(fields, name) for name in ("original_id", "question", "category", "subcategory",
                                                              "difficulty")}
    texts.update({("fields", "metadata", name): t for name, t in fields.metadata.items()})
    for at, t in texts.items():
        if t is not None:
            out[at] = [name for name, _ in fields_of(t.template)]
    if fields.choices is not None:
        c = fields.choices
        out[("fields", "choices")] = [p for p in (c.from_list, c.labels) if p is not None] + list(c.columns or ())
    out.update({("fields", name): [p] for name, p in (("id", fields.id), ("tags", fields.tags)) if p is not None})
    return {at: [p.split(".")[0] for p in paths] for at, paths in out.items()}


def check_columns(spec: BenchmarkSpec, rows: Rows, where: Path, line_of: LineOf | None) -> None:
    """Every column the mapping names is in the data, else `spec:line: fields.X: column 'c' is not in …`."""
    if not rows.rows:
        raise InputError.at(rows.path, "no rows")
    present = set(rows.rows[0])
    problems = [Problem(str(where), line_of(at) if line_of else None,
                        f"column {c!r} is not in {rows.path} (its columns: {', '.join(sorted(present))})",
                        field_name(at))
                for at, columns in columns_by_field(spec.fields).items() for c in columns if c not in present]
    if problems:
        raise InputError(problems)


def to_questions(spec: BenchmarkSpec, rows: Rows, where: Path | None = None,
                 line_of: LineOf | None = None) -> list[Question]:
    """Every row as a Question, or InputError listing every row that does not map (`path:line: why`); a
    column the spec names but the data lacks is reported at the spec's line (`where`)."""
    check_columns(spec, rows, where or Path(rows.path), line_of)
    out: list[Question] = []
    problems = []
    seen: set[int | str] = set()
    for i, row in enumerate(rows.rows):
        try:
            question = row_question(spec.fields, row, i)
            _check_texts(question)
            if spec.scoring.continuation == "blank" and BLANK not in question.question:
                raise ValueError(f"the question has no blank {BLANK!r} for the options to fill")
            key = question.id.casefold() if isinstance(question.id, str) else question.id
            if key in seen:  # string ids are matched case-insensitively, as CommonEval identifiers are
                raise ValueError(f"id {question.id} is repeated (fields.id must name a column of unique ids)")
            seen.add(key)
            out.append(question)
        except (KeyError, ValueError, TypeError, IndexError) as e:
            field = e.args[0] if isinstance(e, KeyError) else None
            why = f"no column {field!r}" if field is not None else str(e).splitlines()[0]
            problems.append(rows.error(i, why))
    if problems:
        raise InputError(fold_problems(problems))
    return out


MAX_PROBLEM_KINDS = 5
_VARYING = re.compile(r"'[^']*'|\"[^\"]*\"|\bid \S+|-?\d+(?:\.\d+)?")


def fold_problems(problems: list[Problem]) -> list[Problem]:
    """One line per kind of problem (the same message but for its values): its first row, and how many more rows
    have it; at most MAX_PROBLEM_KINDS kinds, the rest counted on the last line."""
    kinds: dict[str, list[Problem]] = {}
    for p in problems:
        kinds.setdefault(_VARYING.sub("…", p.message), []).append(p)
    out = []
    for same in list(kinds.values())[:MAX_PROBLEM_KINDS]:
        first, more = same[0], len(same) - 1
        out.append(Problem(first.path, first.line, first.message + (f" (+{more} more rows)" if more else ""),
                           first.field))
    if len(kinds) > MAX_PROBLEM_KINDS:
        rest = sum(len(v) for v in list(kinds.values())[MAX_PROBLEM_KINDS:])
        last = out[-1]
        out[-1] = Problem(last.path, last.line, f"{last.message}; and {rest} more rows with "
                                                f"{len(kinds) - MAX_PROBLEM_KINDS} other kinds of problem", last.field)
    return out


def _check_texts(q: Question) -> None:
    """What an Item cannot hold, said of the row: an empty question or open answer, text that is not Unicode
    (a lone surrogate from a JSON `\\ud800` escape)."""
    if not q.question.strip():
        raise ValueError("the question is empty")
    if not q.choices and not q.answer.strip():
        raise ValueError("the answer is empty")
    for name, text in (("question", q.question), ("answer", q.answer), *q.choices.items()):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            where = name if name in ("question", "answer") else f"option {name}"
            raise ValueError(f"the {where} is not valid Unicode (a lone surrogate)") from None


def _text(t: Text | None, row: dict[str, Any]) -> str | None:
    return None if t is None else apply_transforms(render(t.template, row), t.transforms)


def row_question(fields: Fields, row: dict[str, Any], index: int) -> Question:
    """One row as a Question (seed 001), by the spec's mapping."""
    choices = _choices(fields.choices, row) if fields.choices is not None else {}
    answer = _answer(fields.answer, fields.choices, row, choices)
    qid = _row_id(lookup(row, fields.id), fields.id) if fields.id is not None else index
    metadata = {name: _text(t, row) for name, t in fields.metadata.items()}
    tags = lookup(row, fields.tags) if fields.tags is not None else []
    return Question(
        id=qid,
        original_id=_text(fields.original_id, row) or str(qid),
        question=_text(fields.question, row) or "",
        choices=choices,
        answer=answer,
        category=_text(fields.category, row),
        subcategory=_text(fields.subcategory, row),
        difficulty=_text(fields.difficulty, row),
        tags=[str(t) for t in tags] if isinstance(tags, list) else [str(tags)],
        metadata=metadata,
    )


def _row_id(value: Any, column: str) -> int | str:
    """A row's id: an integer (a number or digits), else its text (ARC's `Mercury_7175875`), which must be
    web-friendly as an item identifier is (letters, digits, '-', '_', '.')."""
    text = str(value).strip() if value is not None else ""
    if text.lstrip("-").isdigit():
        return int(text)
    if not text:
        raise ValueError(f"{column}: the id is empty")
    if not IDENTIFIER_RE.fullmatch(text):
        raise ValueError(f"{column}: id {text[:40]!r} must be an integer, or use only letters, digits, '-', '_' "
                         "and '.'")
    return text


def _list(value: Any, path: str) -> list[Any]:
    if isinstance(value, str):
        value = parse_list_cell(value, path)  # a CSV cell holding a list
    if not isinstance(value, (list, tuple)):
        raise TypeError(f"{path}: expected a list, got {type(value).__name__}")
    return list(value)


def _choices(c: Choices, row: dict[str, Any]) -> dict[str, str]:
    values = _list(lookup(row, c.from_list), c.from_list) if c.from_list else [lookup(row, k) for k in c.columns or ()]
    if not values:
        raise ValueError("no options")
    if len(values) > len(LETTERS):
        raise ValueError(f"{len(values)} options; at most {len(LETTERS)}")
    return {LETTERS[i]: apply_transforms(str(v), c.transforms) for i, v in enumerate(values)}


def _answer(a: Answer, c: Choices | None, row: dict[str, Any], choices: dict[str, str]) -> str:
    raw = lookup(row, a.column)
    if a.as_ == "value":
        return apply_transforms(str(raw), a.transforms)
    text = apply_transforms(str(raw), a.transforms)
    letters = list(choices)
    if a.as_ in ("index", "ordinal"):
        index = int(text) if text.strip().lstrip("-").isdigit() else -1
        index -= a.as_ == "ordinal"
    elif a.as_ == "letter":
        index = letters.index(text.strip().upper()) if text.strip().upper() in letters else -1
    elif a.as_ == "label":
        labels = [str(x) for x in _list(lookup(row, c.labels), c.labels)] if c is not None and c.labels else []
        index = labels.index(text) if text in labels else -1
    else:
        index = list(choices.values()).index(text) if text in choices.values() else -1
    if not 0 <= index < len(letters):
        raise ValueError(f"{a.column}: answer {text!r} ({a.as_}) is not one of the {len(letters)} options")
    return letters[index]
