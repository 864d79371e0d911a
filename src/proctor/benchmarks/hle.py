"""Humanity's Last Exam (cais/hle), text-only: the questions without an image, judged as the authors judge them.

Upstream columns (split `test`, gated): id, question, image ("" when the question has none; else a data URL),
image_preview, answer, answer_type (exactMatch, multipleChoice: the options are in the question text),
author_name, rationale, rationale_image, raw_subject, category (Math, Physics, Humanities/Social Science, ...),
canary. Only the rows whose `image` is empty are kept (the authors' `--exclude_questions_with_image` in forks,
the text-only subset model cards report); the others are dropped, counted in the provenance. A question's
category is its category, its subcategory the raw subject; the answer type is a tag. No cluster.

Asked as the authors' `run_model_predictions.py` asks (`proctor.scoring.hle.SYSTEM_PROMPT` as the system
message, the question as the user message; the authors send o1 models the system text as a user message, proctor
does not) and judged by their judge prompt and structured verdict (`proctor.scoring.hle`), so a run needs
`--judge MODEL` (the authors judge with o3-mini-2025-01-31 and `max_completion_tokens=4096`:
`--judge-max-tokens 4096`). results.json adds the authors' calibration error (`proctor.metrics.hle`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.model import Message
from ..data.prompts import ZERO_SHOT, RenderedPrompts, check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import text_hash
from ..scoring.hle import JUDGE, PROMPT_SOURCE, SYSTEM_PROMPT
from ..scoring.judge import judged_rule
from ..util.errors import InputError
from .builtin import Builtin
from .hub import HubSource, Loaded, Rows, convert_rows, fetch, require_columns

NAME = "hle"
SOURCE = HubSource("cais/hle", split="test", gated=True)
SIZE = 2500  # every question; the text-only subset is what the run keeps
COLUMNS = ("id", "question", "image", "answer", "answer_type", "category", "raw_subject")
ANSWER_TYPES = ("exactMatch", "multipleChoice")
RULE = judged_rule(JUDGE)


@dataclass
class HLEPrompts(RenderedPrompts):
    """The authors' system prompt, then the question verbatim; the run id covers the judge's prompt too."""

    kinds: tuple[str, ...] = (ZERO_SHOT,)

    def render(self, item: Item, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        raw = item.metadata.get("question_raw")
        return raw if isinstance(raw, str) else item.prompt

    def messages(self, item: Item, kind: str) -> tuple[Message, ...]:
        return (Message("system", SYSTEM_PROMPT), Message("user", self.render(item, kind)))

    def template_hash(self, kind: str) -> str:
        check_kind(kind, self.kinds, NAME)
        return text_hash(kind, SYSTEM_PROMPT, PROMPT_SOURCE, JUDGE.template, JUDGE.source)

    def identity(self) -> dict[str, Any]:
        return {"system": SYSTEM_PROMPT, **JUDGE.identity()}

    def logprob_context(self, item: Item) -> str:
        return f"Question: {item.prompt}\nAnswer:"


def load(data_file: str | Path | None = None, seed: int = 0) -> Loaded:
    """The text-only questions (hub, or a local copy in the upstream schema)."""
    rows = fetch(SOURCE, data_file)
    text_only, with_image = text_only_rows(rows)
    dataset = Dataset(name=NAME, description="Humanity's Last Exam, text-only: expert questions judged by the "
                      "authors' judge prompt (an LLM judge).", questions=convert_rows(text_only, COLUMNS, _question),
                      prompts={ZERO_SHOT: SYSTEM_PROMPT},
                      metadata={"source": SOURCE.repo, "split": SOURCE.split, "revision": rows.provenance.get("revision")})
    return Loaded(dataset=dataset, prompts=HLEPrompts(),
                  provenance={**rows.provenance, "subset": "text-only", "dropped_with_image": with_image})


def text_only_rows(rows: Rows) -> tuple[Rows, int]:
    """The rows without an image, and how many had one; refused (one line) when none is text-only."""
    require_columns(rows, COLUMNS)
    keep = [i for i, row in enumerate(rows.rows) if not _has_image(row.get("image"))]
    if not keep:
        raise InputError.at(rows.path, f"no text-only question: every one of the {len(rows.rows)} rows has an image")
    lines = [rows.lines[i] for i in keep] if rows.lines is not None else None
    kept = [dict(rows.rows[i], _index=i) for i in keep]  # the row's place upstream: its id across subsets
    return Rows(kept, rows.provenance, rows.path, lines), len(rows.rows) - len(keep)


def _has_image(value: Any) -> bool:
    return value is not None and str(value).strip() not in ("", "None")


def _question(row: dict[str, Any]) -> Question:
    ident, question, answer, answer_type, category, subject = (
        _text(row, c) for c in ("id", "question", "answer", "answer_type", "category", "raw_subject"))
    if answer_type not in ANSWER_TYPES:
        raise ValueError(f"answer_type: expected one of {', '.join(ANSWER_TYPES)}, got {answer_type!r:.40}")
    raw = {k: v for k, v in (("question_raw", question), ("answer_raw", answer)) if v != v.strip()}
    return Question(id=int(row["_index"]), original_id=ident.strip(), question=question.strip(), choices={},
                    answer=answer.strip(), category=category.strip(), subcategory=subject.strip(),
                    tags=[answer_type], metadata={"hle_id": ident.strip(), **raw})


def _text(row: dict[str, Any], column: str) -> str:
    value = row[column]
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{column}: expected text, got {value!r:.60}")
    return value


BENCHMARKS = (Builtin(NAME, load, SOURCE, SIZE, "Humanity's Last Exam, text-only, judged by the authors' judge "
                      "prompt (--judge); accuracy and calibration error", max_tokens=8192,
                      answer_rules={ZERO_SHOT: RULE}),)
