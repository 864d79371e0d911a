"""Lossless conversions through the common record, the CommonEval Item.

Question ⇄ Item

Question → Item: `identifier` is `<dataset-slug>.<id>`; the question text is the prompt stem and the
options stay in `choices` (renderers list them); the modality is `choiceofN` for N options, else
`single-value` (AIME's integer answers). What the Item has no field for — the numeric id, the
original id, a non-numeric difficulty label — travels in `metadata` under `question.*` keys, so the
reverse conversion restores the Question exactly. A dataset-level taskPrompt rides in the Dataset's
`metadata["taskPrompt"]`.

TestSuite ⇄ Item
Each context of a suite becomes one `choiceofN` item whose choices are the suite's queries (A, B, …)
and whose response is the letter of `expected`; `expected = -1` gives the response `UNSCORED`. The
prompt's text is the item's taskPrompt; category/subcategory are the prompt and suite names; the
`suite.*` metadata keys (prompt, name, pretext, posttext, index, expected) restore the suite exactly.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError

from ...util.errors import InputError, Problem
from ..records import (
    LETTERS,
    MAX_CHOICES,
    UNSCORED,
    Dataset,
    Item,
    ItemSet,
    Modality,
    Prompt,
    Question,
    TestSuite,
)
from .problems import validation_problems

_META = "question."


def slug(text: str) -> str:
    """Web-friendly slug for identifiers: letters, digits, '-', '_' and '.'."""
    s = re.sub(r"[^A-Za-z0-9_.-]+", "-", text.strip()).strip("-")
    return s or "item"


def question_to_item(q: Question, dataset: str) -> Item:
    meta: dict[str, Any] = dict(q.metadata)
    meta[_META + "id"] = q.id
    meta[_META + "original_id"] = q.original_id
    difficulty: float | None = None
    if q.difficulty is not None:
        try:
            value = float(q.difficulty)
        except ValueError:
            value = -1.0
        if 0.0 <= value <= 1.0 and str(value) == q.difficulty:
            difficulty = value
        else:
            meta[_META + "difficulty"] = q.difficulty
    modality = Modality.choice_of(len(q.choices)) if q.choices else Modality.SINGLE_VALUE
    return Item(
        identifier=f"{slug(dataset)}.{q.id}",
        modality=modality,
        prompt=q.question,
        response=q.answer,
        difficulty=difficulty,
        choices=dict(q.choices) if q.choices else None,
        category=q.category,
        subcategory=q.subcategory,
        tags=list(q.tags),
        metadata=meta,
    )


def question_id(value: Any) -> int | str:
    """A question id as recorded: an integer (also written as digits), else the dataset's own string id."""
    if isinstance(value, int) or (isinstance(value, str) and value.strip().lstrip("-").isdigit()):
        return int(value)
    return str(value)


def item_to_question(item: Item, index: int) -> Question:
    """The reverse of `question_to_item`; items that never were questions get `id=index`."""
    meta = dict(item.metadata)
    qid = meta.pop(_META + "id", index)
    original_id = meta.pop(_META + "original_id", item.identifier)
    difficulty = meta.pop(_META + "difficulty", None)
    if difficulty is None and item.difficulty is not None:
        difficulty = str(item.difficulty)
    return Question(
        id=question_id(qid),
        original_id=str(original_id),
        question=item.prompt,
        choices=dict(item.choices or {}),
        answer=item.best_answer,
        category=item.category,
        subcategory=item.subcategory,
        difficulty=difficulty,
        tags=list(item.tags),
        metadata=meta,
    )


def dataset_to_itemset(ds: Dataset) -> ItemSet:
    meta = dict(ds.metadata)
    task_prompt = meta.pop("taskPrompt", None)
    if ds.prompts:
        meta["prompts"] = dict(ds.prompts)
    return ItemSet(
        identifier=slug(ds.name),
        name=ds.name,
        description=ds.description,
        taskPrompt=task_prompt,
        metadata=meta,
        items=[question_to_item(q, ds.name) for q in ds.questions],
    )


def itemset_to_dataset(items: ItemSet) -> Dataset:
    meta = dict(items.metadata)
    prompts = meta.pop("prompts", {})
    if items.task_prompt is not None:
        meta["taskPrompt"] = items.task_prompt
    return Dataset(
        name=items.name or items.identifier,
        description=items.description,
        metadata=meta,
        prompts=dict(prompts),
        questions=[item_to_question(it, i) for i, it in enumerate(items.items)],
    )


_SUITE = "suite."


def suite_to_items(prompt: Prompt, suite: TestSuite) -> list[Item]:
    """One `choiceofN` item per context; `expected = -1` becomes the `UNSCORED` response."""
    n = len(suite.queries)
    where = f"{prompt.name}_{suite.name}.json" if suite.name else prompt.name
    if not 2 <= n <= MAX_CHOICES:
        raise InputError.at(where, f"{n} queries: an item needs 2..{MAX_CHOICES} choices", field="queries")
    choices = dict(zip(LETTERS, suite.queries))
    base = f"{slug(prompt.name)}.{slug(suite.name) if suite.name else 'suite'}"
    items = []
    for i, case in enumerate(suite.context):
        if not case.text:
            raise InputError.at(where, "empty context text cannot become an item prompt", field=f"context[{i}].text")
        items.append(
            Item(
                identifier=f"{base}.{i}",
                modality=Modality.choice_of(n),
                prompt=case.text,
                response=LETTERS[case.expected] if case.expected >= 0 else UNSCORED,
                taskPrompt=prompt.text,
                choices=dict(choices),
                category=prompt.name,
                subcategory=suite.name or None,
                metadata={
                    _SUITE + "prompt": prompt.name,
                    _SUITE + "name": suite.name,
                    _SUITE + "pretext": suite.pretext,
                    _SUITE + "posttext": suite.posttext,
                    _SUITE + "index": i,
                    _SUITE + "expected": case.expected,
                },
            )
        )
    return items


def items_to_suite(items: list[Item]) -> tuple[Prompt, TestSuite]:
    """The reverse of `suite_to_items` for the items of one suite (in any order)."""
    if not items:
        raise InputError.at("<items>", "no items to make a suite from")
    missing = [it.identifier for it in items if _SUITE + "prompt" not in it.metadata]
    if missing:
        raise InputError.at(missing[0], "not converted from a suite (no suite.* metadata)", field="metadata")
    ordered = sorted(items, key=lambda it: int(it.metadata.get(_SUITE + "index", 0)))
    first = ordered[0]
    meta = first.metadata
    queries = list((first.choices or {}).values())
    for it in ordered:
        same = (it.metadata.get(_SUITE + "prompt"), it.metadata.get(_SUITE + "name")) == (
            meta[_SUITE + "prompt"], meta.get(_SUITE + "name"))
        if not same or list((it.choices or {}).values()) != queries:
            raise InputError.at(it.identifier, "items come from different suites", field="metadata")
    context = [
        {"text": it.prompt, "expected": _expected(it)} for it in ordered
    ]
    suite = TestSuite(
        name=str(meta.get(_SUITE + "name", "")),
        pretext=str(meta.get(_SUITE + "pretext", "")),
        posttext=str(meta.get(_SUITE + "posttext", "")),
        context=context,  # type: ignore[arg-type]
        queries=queries,
    )
    return Prompt(name=str(meta[_SUITE + "prompt"]), text=first.task_prompt or ""), suite


def _expected(item: Item) -> int:
    if not item.is_scored:
        return -1
    return LETTERS.index(item.best_answer)


def items_to_suites(items: list[Item]) -> list[tuple[Prompt, TestSuite]]:
    """Group suite-derived items by (prompt, suite) in order of first appearance and rebuild each suite."""
    groups: dict[tuple[str, str], list[Item]] = {}
    for it in items:
        key = (str(it.metadata.get(_SUITE + "prompt", "")), str(it.metadata.get(_SUITE + "name", "")))
        groups.setdefault(key, []).append(it)
    return [items_to_suite(group) for group in groups.values()]


def flatten_task_prompt(items: ItemSet) -> list[Item]:
    """Items carrying the dataset's taskPrompt where they have none (for formats without dataset metadata)."""
    if items.task_prompt is None:
        return list(items.items)
    return [
        it if it.task_prompt is not None else it.model_copy(update={"task_prompt": items.task_prompt})
        for it in items.items
    ]


def itemset_to_questions(items: ItemSet, where: str = "<items>") -> Dataset:
    """`itemset_to_dataset`, reporting items that cannot be questions as `InputError` problems."""
    problems: list[Problem] = []
    for i, it in enumerate(items.items):
        if not it.is_scored:
            problems.append(Problem(where, None, f"{it.identifier}: unscored items have no answer", "response"))
            continue
        try:
            item_to_question(it, i)
        except ValidationError as e:
            problems.extend(
                Problem(where, None, f"{it.identifier}: {p.message}", p.field)
                for p in validation_problems(e, where)
            )
    if problems:
        raise InputError(problems)
    return itemset_to_dataset(items)
