"""Hypothesis strategies for valid records (shared by the formats tests)."""

from __future__ import annotations

import datetime as dt
import os
from typing import Any

from hypothesis import strategies as st

from proctor.data.records import (
    LETTERS,
    SPEC_MODALITIES,
    ContextCase,
    Dataset,
    GradedAnswer,
    Item,
    ItemSet,
    Modality,
    Prompt,
    Question,
    TestSuite,
)

# any text JSON and YAML can carry: no surrogates
text = st.text(st.characters(exclude_categories=("Cs",)), max_size=20)
word = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12).filter(lambda s: s.strip() != "")
identifiers = st.text("-_.aAbBqQzZ09", min_size=1, max_size=8)
keys = st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**9), 10**9)
    | st.floats(allow_nan=False, allow_infinity=False) | text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=4,
)
# PROCTOR_HYPOTHESIS_EXAMPLES raises the number of examples for a deeper run (default 30)
FAST: dict[str, Any] = {"max_examples": int(os.environ.get("PROCTOR_HYPOTHESIS_EXAMPLES", "30")), "deadline": None,
                        "database": None}
metadata = st.dictionaries(keys.filter(lambda k: not k.startswith(("question.", "suite."))), json_values,
                           max_size=2)
modalities = st.sampled_from([*SPEC_MODALITIES, Modality.CHOICE10, Modality.CHOICE26])


def _graded(answers: st.SearchStrategy[str]) -> st.SearchStrategy[list[GradedAnswer]]:
    return st.lists(
        st.builds(GradedAnswer, answer=answers, credit=st.floats(0.0, 1.0)), min_size=1, max_size=3
    )


@st.composite
def items(draw: st.DrawFn) -> Item:
    m: Modality = draw(modalities)
    prompt = draw(word)
    choices: dict[str, str] | None = None
    if m is Modality.BOOLEAN:
        answers: st.SearchStrategy[str] = st.sampled_from(["True", "False"])
    elif m is Modality.TERNARY:
        answers = st.sampled_from(["True", "False", "I don't know"])
    elif m.is_choice:
        answers = st.sampled_from(list(m.letters))
        if draw(st.booleans()):
            choices = {letter: draw(text) for letter in m.letters}
    else:
        answers = word
        if m is Modality.CLOZE:
            prompt += " ___"
    response: Any = draw(answers | _graded(answers))
    return Item(
        identifier=draw(identifiers),
        modality=m,
        prompt=prompt,
        response=response,
        difficulty=draw(st.none() | st.floats(0.0, 1.0)),
        support=draw(st.none() | text | st.lists(text, max_size=2)),
        task_prompt=draw(st.none() | text),
        choices=choices,
        category=draw(st.none() | st.sampled_from(["alpha", "beta", "gamma"])),
        subcategory=draw(st.none() | word),
        tags=draw(st.lists(word, max_size=2)),
        metadata=draw(metadata),
    )


item_lists = st.lists(items(), max_size=5, unique_by=lambda it: it.identifier.casefold())


STANDARD_ATTRIBUTES = {"identifier", "contributor", "created", "creator", "datepublished", "description", "haspart",
                       "language", "license", "licensenotes", "metadataversion", "publisher", "source",
                       "sourceprocess", "subject", "taskprompt", "title", "version"}


@st.composite
def dataset_attributes(draw: st.DrawFn) -> dict[str, Any]:
    """The CommonEval Dataset attributes an ItemSet keeps in metadata: the required ones, maybe more."""
    created = draw(st.dates(dt.date(1990, 1, 1), dt.date.today()))
    out: dict[str, Any] = {"created": created.isoformat(), "creator": draw(word), "source": draw(word),
                           "subject": draw(word)}
    if draw(st.booleans()):
        out["datePublished"] = draw(st.dates(created, dt.date.today())).isoformat()
    if draw(st.booleans()):
        out.update(language="eng", license="CC-BY-4.0")
    extra = draw(st.dictionaries(keys.filter(lambda k: k.lower() not in STANDARD_ATTRIBUTES), json_values,
                                 max_size=2))
    return out | extra


@st.composite
def itemsets(draw: st.DrawFn) -> ItemSet:
    return ItemSet(
        identifier=draw(identifiers),
        name=draw(st.none() | text),
        description=draw(word),
        task_prompt=draw(st.none() | text),
        version=draw(st.none() | text),
        metadata=draw(dataset_attributes()),
        items=draw(st.lists(items(), min_size=1, max_size=5, unique_by=lambda it: it.identifier.casefold())),
    )


@st.composite
def questions(draw: st.DrawFn, qid: int) -> Question:
    n = draw(st.sampled_from([0, 2, 4, 5, 10]))
    choices = {LETTERS[i]: draw(text) for i in range(n)}
    answer = draw(st.sampled_from(list(choices))) if choices else draw(word)
    return Question(
        id=qid,
        original_id=draw(text),
        question=draw(word),
        choices=choices,
        answer=answer,
        category=draw(st.none() | st.sampled_from(["physics", "law", "math"])),
        subcategory=draw(st.none() | text),
        difficulty=draw(st.none() | st.sampled_from(["easy", "hard", "0.25", "1e-1"]) | text),
        tags=draw(st.lists(text, max_size=2)),
        metadata=draw(metadata),
    )


@st.composite
def datasets(draw: st.DrawFn) -> Dataset:
    ids = draw(st.lists(st.integers(-5, 10**6), max_size=6, unique=True))
    return Dataset(
        name=draw(word),
        questions=[draw(questions(i)) for i in ids],
        prompts=draw(st.dictionaries(word, text, max_size=2)),
        description=draw(st.none() | text),
        metadata=draw(metadata),
    )


@st.composite
def suites(draw: st.DrawFn) -> tuple[Prompt, TestSuite]:
    queries = draw(st.lists(word, min_size=2, max_size=6, unique=True))
    context = draw(st.lists(
        st.builds(ContextCase, text=word, expected=st.integers(-1, len(queries) - 1)), min_size=1, max_size=4
    ))
    prompt = Prompt(name=draw(word), text=draw(text))
    suite = TestSuite(name=draw(text), pretext=draw(text), posttext=draw(text), context=context, queries=queries)
    return prompt, suite
