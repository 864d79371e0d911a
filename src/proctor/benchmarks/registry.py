"""The built-in benchmarks and `load_task`: DATASET is a built-in name or a path.

Each benchmark is one file (`mmlu_pro.py`, `gpqa.py`, `aime2025.py`): loader, prompt templates and its
`BENCHMARKS` metadata; this module only gathers them. Adding a benchmark is adding a file and its name
to the tuple below.

A built-in loads from the Hugging Face Hub (revision recorded) or, with `data_file`, from a local
copy in the upstream schema. A path is read by `proctor.formats.detect.load_itemset` and prompted
with the generic CommonEval builder.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import InputError, ProctorError
from ..formats.convert import dataset_to_itemset, question_to_item
from ..formats.detect import load_itemset
from ..prompts import ItemPromptBuilder
from ..records import Dataset, ItemSet
from ..scoring.extract import ANSWER_RULES, AnswerRule
from ..tasks import Task
from . import aime2025, gpqa, mmlu_pro
from .builtin import Builtin
from .hub import Loaded, file_sha256

BUILTINS: dict[str, Builtin] = {b.name: b for module in (mmlu_pro, aime2025, gpqa) for b in module.BENCHMARKS}


def is_builtin(spec: str) -> bool:
    return spec.strip().lower() in BUILTINS


def load_builtin(name: str, *, data_file: str | Path | None = None, seed: int = 0,
                 prompt_options: Mapping[str, Any] | None = None) -> Loaded:
    """A built-in benchmark as a seed-001 Dataset plus its prompt builder and provenance. `prompt_options`
    are what its prompts take besides the data (GPQA: `cot_examples`, AIME: `instruction`)."""
    key = name.strip().lower()
    if key not in BUILTINS:
        raise ProctorError(f"unknown benchmark {name!r}; built-ins: {', '.join(BUILTINS)}")
    options = {k: v for k, v in (prompt_options or {}).items() if v is not None}
    return BUILTINS[key].loader(data_file=data_file, seed=seed, **options)


def reference_rules(builtin: Builtin) -> dict[str, AnswerRule]:
    """A built-in's prompt kind → reference rule map, the names resolved (proctor's own kinds left out)."""
    return {kind: ANSWER_RULES[rule] for kind, rule in builtin.answer_rules.items() if rule is not None}


def load_dataset(name: str, *, data_file: str | Path | None = None, seed: int = 0) -> Dataset:
    """A built-in benchmark as a seed-001 Dataset (questions, categories and default `prompts`)."""
    return load_builtin(name, data_file=data_file, seed=seed).dataset


class _Categorised(Protocol):
    category: str | None


T = TypeVar("T", bound=_Categorised)


def select(records: list[T], *, limit: int | None = None, limit_per_category: int | None = None) -> list[T]:
    """The first `limit_per_category` of each category (in order), then the first `limit` overall."""
    for n, flag in ((limit, "--limit"), (limit_per_category, "--limit-per-category")):
        if n is not None and n < 1:
            raise ProctorError(f"{flag} must be at least 1, got {n}")
    kept = records
    if limit_per_category is not None:
        seen: dict[str | None, int] = {}
        kept = []
        for r in records:
            seen[r.category] = seen.get(r.category, 0) + 1
            if seen[r.category] <= limit_per_category:
                kept.append(r)
    return kept[:limit] if limit is not None else kept


def load_task(
    spec: str,
    *,
    data_file: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    limit_per_category: int | None = None,
    prompt_options: Mapping[str, Any] | None = None,
) -> Task:
    """A Task for a built-in name or a path (items JSONL, CommonEval directory, Question dataset)."""
    if is_builtin(spec):
        loaded = load_builtin(spec, data_file=data_file, seed=seed, prompt_options=prompt_options)
        ds = loaded.dataset
        questions = select(ds.questions, limit=limit, limit_per_category=limit_per_category)
        return Task(
            name=ds.name,
            items=[question_to_item(q, ds.name) for q in questions],
            prompts=loaded.prompts,
            source=dict(loaded.provenance),
            choice_order_seed=loaded.choice_order_seed,
            default_max_tokens=BUILTINS[spec.strip().lower()].max_tokens,
            answer_rules=reference_rules(BUILTINS[spec.strip().lower()]),
        )
    if data_file is not None:
        raise ProctorError(
            f"--data-file applies to the built-in benchmarks ({', '.join(BUILTINS)}), not to {spec!r}"
        )
    return _path_task(spec, limit=limit, limit_per_category=limit_per_category)


def _path_task(spec: str, *, limit: int | None, limit_per_category: int | None) -> Task:
    path = Path(spec)
    if not path.exists():
        raise InputError.at(
            spec, f"no such file or directory, and not a built-in benchmark ({', '.join(BUILTINS)})"
        )
    loaded: Any = load_itemset(path)
    itemset = _as_itemset(loaded, spec)
    items = select(list(itemset.items), limit=limit, limit_per_category=limit_per_category)
    source: dict[str, Any] = {"source": "file", "path": str(path.resolve())}
    if path.is_file():
        source["sha256"] = file_sha256(path)
    return Task(
        name=itemset.name or itemset.identifier,
        items=list(items),
        prompts=ItemPromptBuilder(task_prompt=itemset.task_prompt),
        source=source,
        task_prompt=itemset.task_prompt,
    )


def _as_itemset(loaded: Any, spec: str) -> ItemSet:
    if isinstance(loaded, ItemSet):
        return loaded
    if isinstance(loaded, Dataset):
        return dataset_to_itemset(loaded)
    raise ProctorError(
        f"{spec}: not an item dataset (got {type(loaded).__name__}); use it with `proctor score`"
    )
