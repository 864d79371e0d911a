"""Question / Dataset JSON (seed 001): `{name, questions, prompts, description?, metadata?, categories?}`.

`categories` and `questions_by_category` are derived from the questions: ignored on input, and
`categories` is written on output (`questions_by_category` is not: it would repeat every question).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ...util.errors import InputError, Problem
from ...util.textio import load_json, read_text, write_text_atomic
from ..records import Dataset, Question
from .problems import json_loc_lines, validation_problems


def read_questions(path: str | Path) -> Dataset:
    """Read a Question dataset; every problem is reported with the line of the question it is in."""
    data = load_json(path)
    if not isinstance(data, dict):
        raise InputError.at(path, "expected a JSON object with name, questions and prompts", 1)
    problems: list[Problem] = []
    try:
        ds = Dataset.model_validate(data)
    except ValidationError as e:
        problems.extend(validation_problems(e, path, line_of=json_loc_lines(read_text(path))))
        raise InputError(problems) from None
    seen: dict[int | str, int] = {}
    line_of = None
    for i, q in enumerate(ds.questions):
        key = q.id.casefold() if isinstance(q.id, str) else q.id  # string ids match case-insensitively (CommonEval)
        if key in seen:
            line_of = line_of or json_loc_lines(read_text(path))
            problems.append(Problem(str(path), line_of(("questions", i)),
                                    f"{q.id} repeats the id of questions[{seen[key]}]", f"questions[{i}].id"))
        else:
            seen[key] = i
    if problems:
        raise InputError(problems)
    return ds


def question_json(q: Question) -> dict[str, Any]:
    """One question: required fields first, unset optional ones omitted."""
    out: dict[str, Any] = {
        "id": q.id,
        "original_id": q.original_id,
        "question": q.question,
        "choices": dict(q.choices),
        "answer": q.answer,
    }
    optional = {"category": q.category, "subcategory": q.subcategory, "difficulty": q.difficulty}
    out.update({k: v for k, v in optional.items() if v is not None})
    if q.tags:
        out["tags"] = list(q.tags)
    if q.metadata:
        out["metadata"] = dict(q.metadata)
    return out


def dataset_json(ds: Dataset) -> dict[str, Any]:
    """The dataset document, with the derived `categories`."""
    out: dict[str, Any] = {"name": ds.name}
    if ds.description is not None:
        out["description"] = ds.description
    out["prompts"] = dict(ds.prompts)
    if ds.metadata:
        out["metadata"] = dict(ds.metadata)
    out["categories"] = ds.categories
    out["questions"] = [question_json(q) for q in ds.questions]
    return out


def write_questions(path: str | Path, ds: Dataset) -> None:
    """Write `ds` atomically as indented JSON."""
    write_text_atomic(path, json.dumps(dataset_json(ds), indent=2, ensure_ascii=False) + "\n")
