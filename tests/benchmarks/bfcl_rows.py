"""Synthetic files in BFCL v4's layout (question JSON Lines, possible_answer/ beside it) for any category."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def fn(name: str, props: dict[str, dict[str, Any]], required: list[str]) -> dict[str, Any]:
    """A function doc in BFCL's shape."""
    return {"name": name, "description": f"Does {name}.",
            "parameters": {"type": "dict", "properties": props, "required": required}}


AREA = fn("geo.area", {"base": {"type": "integer", "description": "The base."},
                       "unit": {"type": "string", "description": "The unit.", "default": "m"}}, ["base"])
WEATHER = fn("weather", {"city": {"type": "string", "description": "The city, é."}}, ["city"])


def write(folder: Path, category: str, questions: list[dict[str, Any]],
          answers: list[dict[str, Any]] | None) -> Path:
    """BFCL's layout: the question file, JSON Lines, with possible_answer/ beside it."""
    path = folder / f"BFCL_v4_{category}.json"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(q) + "\n" for q in questions))
    if answers is not None:
        (folder / "possible_answer").mkdir(exist_ok=True)
        (folder / "possible_answer" / path.name).write_text("".join(json.dumps(a) + "\n" for a in answers))
    return path


def category_file(folder: Path, category: str, n: int = 2) -> Path:
    """n weather questions of one category; possible answers beside them unless it is a relevance category."""
    questions = [{"id": f"{category}_{i}", "question": [[{"role": "user", "content": f"Weather in city {i}?"}]],
                  "function": [WEATHER]} for i in range(n)]
    answers = None if "relevance" in category else [
        {"id": f"{category}_{i}", "ground_truth": [{"weather": {"city": [f"city {i}"]}}]} for i in range(n)]
    return write(folder, category, questions, answers)
