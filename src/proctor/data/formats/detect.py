"""Recognise what a path holds and load any item-bearing path as an `ItemSet`.

| format       | path                                                        |
|--------------|-------------------------------------------------------------|
| `items`      | `*.jsonl`: one Item per line (or a `.json` array of Items)  |
| `commoneval` | a directory holding `<id>.yaml`, or that `.yaml` file       |
| `questions`  | `*.json` whose object has `questions` (seed 001 Dataset)    |
| `suite`      | `*.json` whose object has `context` / `queries` (probsem)   |
| `prompt`     | `*.txt`: a probsem prompt (its suites are `<P>_<T>.json`)   |
| `suites`     | a directory of probsem prompts and suites (no `.yaml`)      |
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from types import ModuleType
from typing import Any

from pydantic import ValidationError

from ...util.errors import InputError, Problem
from ...util.textio import load_json
from ..records import Dataset, Item, ItemSet, Prompt, TestSuite
from .commoneval import dataset_warnings, read_commoneval
from .convert import dataset_to_itemset, question_to_item, slug, suite_to_items
from .items import read_items
from .problems import validation_problems
from .questions import read_questions


class Format(StrEnum):
    ITEMS = "items"
    COMMONEVAL = "commoneval"
    QUESTIONS = "questions"
    SUITE = "suite"
    PROMPT = "prompt"
    SUITES = "suites"


def detect_format(path: str | Path) -> Format:
    """The format of `path`, from its kind, suffix and (for `.json`) its top-level keys."""
    p = Path(path)
    if p.is_dir():
        if any(p.glob("*.yaml")):
            return Format.COMMONEVAL
        if any(p.glob("*.txt")):
            return Format.SUITES
        if any(p.glob("*.jsonl")):
            files = sorted(str(f) for f in p.glob("*.jsonl"))
            shown = " ".join(files[:3]) + (" …" if len(files) > 3 else "")
            raise InputError.at(p, f"a directory of .jsonl files but no <id>.yaml: to run CommonEval item files, name "
                                   f"the files ({shown}); a CommonEval dataset directory needs its <id>.yaml")
        raise InputError.at(p, "not a CommonEval dataset (no <id>.yaml) nor a suites directory (no <P>.txt)")
    if not p.exists():
        raise InputError.at(p, "no such file or directory")
    suffix = p.suffix.lower()
    if suffix == ".jsonl":
        return Format.ITEMS
    if suffix == ".yaml":
        return Format.COMMONEVAL
    if suffix == ".txt":
        return Format.PROMPT
    if suffix == ".json":
        data = load_json(p)
        if isinstance(data, dict) and "questions" in data:
            return Format.QUESTIONS
        if isinstance(data, dict) and ("queries" in data or "context" in data):
            return Format.SUITE
        if isinstance(data, list):  # a JSON array of items, read like JSON Lines
            return Format.ITEMS
        raise InputError.at(p, "unrecognised JSON: expected a Question dataset (name, prompts, questions)"
                               " or a test suite (pretext, context, posttext, queries)", 1)
    raise InputError.at(p, "unknown format: expected .jsonl items, a CommonEval dir/.yaml, a .json dataset"
                           " or suite, or a suite prompt .txt")


def suites_module(path: str | Path) -> ModuleType:
    """`proctor.data.formats.suites`, imported lazily (it is optional for everything but suites)."""
    try:
        return importlib.import_module("proctor.data.formats.suites")
    except ModuleNotFoundError as e:
        if e.name != "proctor.data.formats.suites":
            raise
        raise InputError.at(path, "test suites are not supported in this build (proctor.data.formats.suites missing)") \
            from None


def questions_itemset(ds: Dataset, path: str | Path) -> ItemSet:
    """`dataset_to_itemset`, reporting questions that have no Item form as problems."""
    problems: list[Problem] = []
    for i, q in enumerate(ds.questions):
        try:
            question_to_item(q, ds.name)
        except ValidationError as e:
            problems.extend(validation_problems(e, path, prefix=("questions", i)))
        except ValueError as e:
            problems.append(Problem(str(path), None, str(e), f"questions[{i}].choices"))
    if problems:
        raise InputError(problems)
    return dataset_to_itemset(ds)


def read_suite_file(path: str | Path) -> tuple[Prompt, TestSuite]:
    """A suite `<P>_<T>.json` with its prompt `<P>.txt` (the longest `P` present) from the same directory."""
    p = Path(path)
    mod = suites_module(p)
    stem = p.stem
    found = [p.parent / f"{stem[:i]}.txt" for i in range(len(stem) - 1, 0, -1) if stem[i] == "_"]
    found = [c for c in found if c.is_file()]
    suite: TestSuite = mod.read_suite(p)
    if not found:
        raise InputError.at(p, "no prompt for this suite: expected <P>.txt beside <P>_<T>.json")
    prompt: Prompt = mod.read_prompt(found[0])
    return prompt, suite.model_copy(update={"name": stem[len(prompt.name) + 1:]})


def read_prompt_suites(path: str | Path) -> list[tuple[Prompt, list[TestSuite]]]:
    """Every prompt and its suites, for a suites directory or a single prompt `.txt`."""
    p = Path(path)
    mod = suites_module(p)
    pairs: list[tuple[Prompt, list[TestSuite]]] = mod.read_prompt_dir(p if p.is_dir() else p.parent)
    if p.is_file():
        pairs = [(pr, ss) for pr, ss in pairs if pr.name == p.stem]
    return pairs


def load_itemset(path: str | Path) -> ItemSet:
    """Any item-bearing path as an ItemSet (suites become one `choiceofN` item per context)."""
    p = Path(path)
    fmt = detect_format(p)
    if fmt is Format.ITEMS:
        return ItemSet(identifier=slug(p.stem), items=read_items(p))
    if fmt is Format.COMMONEVAL:
        return read_commoneval(p)
    if fmt is Format.QUESTIONS:
        return questions_itemset(read_questions(p), p)
    if fmt is Format.SUITE:
        prompt, suite = read_suite_file(p)
        return ItemSet(identifier=slug(p.stem), name=p.stem, items=suite_to_items(prompt, suite))
    items: list[Item] = []
    for prompt, suites in read_prompt_suites(p):
        for suite in suites:
            items.extend(suite_to_items(prompt, suite))
    name = p.name if p.is_dir() else p.stem
    return ItemSet(identifier=slug(name), name=name, items=items)


@dataclass(frozen=True)
class Checked:
    """What `validate_path` found in a clean input."""

    path: str
    format: Format
    counts: dict[str, int]
    warnings: tuple[Problem, ...] = ()

    def __str__(self) -> str:
        what = ", ".join(f"{n} {k}" for k, n in self.counts.items())
        return f"OK {self.path}: {self.format.value}, {what}"


def validate_path(path: str | Path) -> Checked:
    """Read `path` in its own format; raise `InputError` with every problem, else summarise it."""
    p = Path(path)
    fmt = detect_format(p)
    counts: dict[str, Any]
    if fmt is Format.QUESTIONS:
        ds = read_questions(p)
        questions_itemset(ds, p)
        counts = {"questions": len(ds.questions), "categories": len(ds.categories)}
    elif fmt is Format.SUITE:
        _, suite = read_suite_file(p)
        counts = {"contexts": len(suite.context), "queries": len(suite.queries)}
    elif fmt in (Format.PROMPT, Format.SUITES):
        pairs = read_prompt_suites(p)
        if not pairs:
            raise InputError.at(p, "no prompt with suites found (<P>.txt and <P>_<T>.json)")
        suites = [s for _, ss in pairs for s in ss]
        counts = {"prompts": len(pairs), "suites": len(suites), "contexts": sum(len(s.context) for s in suites)}
    else:
        itemset = load_itemset(p)
        counts = {"items": len(itemset.items)}
        return Checked(str(p), fmt, counts, tuple(dataset_warnings(itemset)))
    return Checked(str(p), fmt, counts)
