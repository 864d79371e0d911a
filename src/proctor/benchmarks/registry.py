"""The built-in benchmarks and `load_task`: DATASET is a built-in name or a path.

Each benchmark is one file: a spec file (`specs/*.yaml`, or the user's, `proctor.benchmarks.spec`) where its
behaviour is data, else a module (`mmlu_pro.py`, `gpqa.py`, `aime2025.py`: loader, prompt templates and its
`BENCHMARKS` metadata). This module only gathers them: proctor's modules, and those other packages register
under the `proctor.benchmarks` entry-point group.

A built-in loads from the Hugging Face Hub (revision recorded) or, with `data_file`, from a local
copy in the upstream schema. A path is read by `proctor.data.formats.detect.load_itemset` and prompted
with the generic CommonEval builder.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..data.fewshot import FewShotPrompts
from ..data.formats.convert import dataset_to_itemset, question_to_item
from ..data.formats.detect import load_itemset
from ..data.prompts import FIVE_SHOT, ItemPromptBuilder
from ..data.records import Dataset, Item, ItemSet, Question
from ..data.tasks import Task
from ..scoring.extract import ANSWER_RULES, AnswerRule
from ..scoring.suites import SUITE_CLUSTER, is_suite_item
from ..util.errors import InputError, ProctorError
from . import (
    aime2025,
    aime2026,
    bbh,
    bfcl,
    gpqa,
    hle,
    hmmt_feb,
    humaneval,
    ifeval,
    livecodebench,
    math500,
    mbpp,
    mmlu_pro,
    simpleqa_verified,
)
from .builtin import Builtin
from .hub import Loaded, file_sha256
from .spec import read_spec
from .spec_prompts import FORMATS
from .spec_task import BUILTIN_SPECS, builtin_specs, find_spec, load_spec_task, user_specs

PLUGIN_GROUP = "proctor.benchmarks"
log = logging.getLogger("proctor.benchmarks")


def plugin_benchmarks(entry_points: Iterable[EntryPoint] | None = None) -> list[Builtin]:
    """Benchmarks other packages register under the `proctor.benchmarks` entry-point group: each entry point
    names a module (or object) with a `BENCHMARKS` tuple of `Builtin`s, or one `Builtin`. One that fails to
    load is skipped with a warning, never fatal."""
    found: list[Builtin] = []
    for ep in entry_points if entry_points is not None else metadata.entry_points(group=PLUGIN_GROUP):
        try:
            obj = ep.load()
        except Exception as e:  # noqa: BLE001 - a third party's import error must not stop proctor
            log.warning("benchmark plugin %s (%s) not loaded: %s: %s", ep.name, ep.value, type(e).__name__, e)
            continue
        declared = obj if isinstance(obj, Builtin) else getattr(obj, "BENCHMARKS", ())
        found += [b for b in (declared if isinstance(declared, (list, tuple)) else (declared,))
                  if isinstance(b, Builtin)]
    return found


def _gather(modules: Iterable[Any], plugins: Iterable[Builtin],
            taken: Mapping[str, str] | None = None) -> dict[str, Builtin]:
    """proctor's own benchmark modules, then the plugins'. A plugin may not take a name that is already taken
    (a module's, a shipped spec's in `taken`, another plugin's): it is left out with a warning naming both, and
    the name is recorded in CLASHES so that selecting it is an error, never the other benchmark silently."""
    out: dict[str, Builtin] = {b.name: b for module in modules for b in module.BENCHMARKS}
    owners = {name.lower(): f"proctor's built-in benchmark {name!r}" for name in out}
    owners |= {name.lower(): where for name, where in (taken or {}).items()}
    for b in plugins:
        key = b.name.lower()
        if key in owners:
            if b is not out.get(b.name):
                CLASHES[key] = f"the name {b.name!r} is both {owners[key]} and a plugin's benchmark " \
                               f"({b.description}); uninstall or rename the plugin"
                log.warning("benchmark plugin %r not registered: %s", b.name, CLASHES[key])
            continue
        out[b.name] = b
        owners[key] = f"a plugin's benchmark {b.name!r}"
    return out


CLASHES: dict[str, str] = {}  # a lower-case name more than one source claims → the error that names them
BUILTINS: dict[str, Builtin] = _gather((mmlu_pro, aime2025, aime2026, hmmt_feb, math500, gpqa, humaneval, mbpp,
                                         livecodebench, ifeval, bbh, simpleqa_verified, hle, bfcl),
                                       plugin_benchmarks(),
                                       {name: f"proctor's shipped spec {path.name}"
                                        for name, (path, _) in builtin_specs().items()})


def check_name_clash(name: str, spec_path: Path | None) -> None:
    """Refuse a benchmark name that two sources claim: a plugin's that clashes (CLASHES), or a user's spec file
    whose `name` is a built-in's or a shipped spec's (it would be recorded, ranked and paired as that one)."""
    key = name.strip().lower()
    if key in CLASHES:
        raise ProctorError(CLASHES[key])
    shipped = builtin_specs()
    candidates = [*([spec_path] if spec_path is not None else []),
                  *(p for n, (p, _) in user_specs()[0].items() if n.lower() == key)]
    for path in candidates:
        if path.parent.resolve() == BUILTIN_SPECS.resolve():
            continue
        own = read_spec(path).name
        theirs = next((f"proctor's built-in benchmark {n!r}" for n in BUILTINS if n.lower() == own.lower()), None) \
            or next((f"proctor's shipped spec {p.name}" for n, (p, _) in shipped.items() if n.lower() == own.lower()),
                    None)
        if theirs is not None:
            raise ProctorError(f"{path}: the name {own!r} is already {theirs}: give your benchmark a name of its "
                               "own (`name:` in the spec), so that its runs are never ranked, paired or listed "
                               "as that one's")


def benchmark_names() -> list[str]:
    """Every name a DATASET argument may give: the module built-ins, the shipped specs, the user's specs."""
    return [*BUILTINS, *builtin_specs(), *user_specs()[0]]


def declared_kinds(datasets: list[str]) -> tuple[str, ...]:
    """The prompt kinds the benchmarks among `datasets` declare: a spec's prompts (any name), a built-in's kinds
    (its `answer_rules` lists every one)."""
    kinds: list[str] = []
    for name in datasets:
        if is_builtin(name):
            kinds += BUILTINS[name.strip().lower()].answer_rules
        path = None if is_builtin(name) else find_spec(name)
        if path is not None:
            kinds += read_spec(path).prompts
    return tuple(dict.fromkeys(kinds))


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
    loader = BUILTINS[key].loader
    taken = inspect.signature(loader).parameters
    unknown = [k for k in options if k not in taken]
    if unknown:
        raise ProctorError(f"{unknown[0]}: {key} takes no such option (its options: "
                           f"{', '.join(k for k in taken if k not in ('data_file', 'seed', 'name')) or 'none'})")
    return loader(data_file=data_file, seed=seed, **options)


def reference_rules(builtin: Builtin) -> dict[str, AnswerRule]:
    """A built-in's prompt kind → reference rule map, the names resolved (proctor's own kinds left out)."""
    return {kind: rule if isinstance(rule, AnswerRule) else ANSWER_RULES[rule]
            for kind, rule in builtin.answer_rules.items() if rule is not None}


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


def _items_of(questions: list[Question], dataset: str) -> list[Item]:
    """The questions as Items, in order, each Question let go as its Item is made (`questions` is left empty):
    the two lists side by side were the load's peak (#40)."""
    questions.reverse()
    items: list[Item] = []
    while questions:
        items.append(question_to_item(questions.pop(), dataset))
    return items


@dataclass(frozen=True)
class Prompting:
    """How items are asked, beyond the benchmark's own prompts: `shots` examples before each (--shots), as chat
    turns or one completion text (`fmt`, --format), from `fewshot_from` (--fewshot-from: item data only; default
    the data itself), for the prompt kind `prompt_kind` (--prompt; on item data five_shot asks for five)."""

    shots: int | None = None
    fmt: str | None = None
    fewshot_from: str | Path | None = None
    prompt_kind: str | None = None

    @property
    def few_shot(self) -> bool:
        """Whether --shots, --format or --fewshot-from was given (the built-ins refuse them)."""
        return self.shots is not None or self.fmt is not None or self.fewshot_from is not None


def load_task(
    spec: str,
    *,
    data_file: str | Path | None = None,
    seed: int = 0,
    limit: int | None = None,
    limit_per_category: int | None = None,
    prompt_options: Mapping[str, Any] | None = None,
    prompting: Prompting = Prompting(),
) -> Task:
    """A Task for a built-in name, a spec benchmark (a shipped or user spec's name, or a spec file's path) or a
    path (items JSONL, CommonEval directory, Question dataset). `prompting`'s shots and format (--shots, --format)
    apply to spec benchmarks and paths; a path's examples come from its `fewshot_from` (--fewshot-from), else from
    itself (its `prompt_kind` five_shot asks for five)."""
    spec_path = None if is_builtin(spec) else find_spec(spec)
    check_name_clash(spec, spec_path)
    if spec_path is not None:
        if prompting.fewshot_from is not None:
            raise ProctorError(f"{spec}: a spec benchmark names its own few-shot source (`fewshot:`); "
                               "--fewshot-from is for item files")
        task = load_spec_task(spec_path, data_file=data_file, shots=prompting.shots, fmt=prompting.fmt,
                              prompt_kind=prompting.prompt_kind)
        task.items = select(task.items, limit=limit, limit_per_category=limit_per_category)
        return task
    if is_builtin(spec) and prompting.few_shot:
        raise ProctorError(f"--shots, --format and --fewshot-from apply to spec benchmarks and item files, not to "
                           f"the built-in {spec!r} (its prompt kinds: --prompt)")
    if is_builtin(spec):
        loaded = load_builtin(spec, data_file=data_file, seed=seed, prompt_options=prompt_options)
        ds = loaded.dataset
        questions = select(ds.questions, limit=limit, limit_per_category=limit_per_category)
        return Task(
            name=ds.name,
            items=_items_of(questions, ds.name),
            prompts=loaded.prompts,
            source=dict(loaded.provenance),
            choice_order_seed=loaded.choice_order_seed,
            default_max_tokens=BUILTINS[spec.strip().lower()].max_tokens,
            answer_rules=reference_rules(BUILTINS[spec.strip().lower()]),
            cluster=BUILTINS[spec.strip().lower()].cluster,
            code=loaded.code,
        )
    if data_file is not None:
        raise ProctorError(
            f"--data-file applies to the built-in benchmarks ({', '.join(BUILTINS)}) and spec benchmarks, "
            f"not to {spec!r}"
        )
    task = _path_task(spec, limit=limit, limit_per_category=limit_per_category)
    if not prompting.few_shot and prompting.prompt_kind != FIVE_SHOT:
        return task
    return with_fewshot(task, prompting)


def with_fewshot(task: Task, prompting: Prompting) -> Task:
    """An item task with examples before each item (`proctor.data.fewshot`): from `prompting.fewshot_from` (any
    item format), else the task's own items (never the one asked)."""
    shots, fmt, fewshot_from = prompting.shots, prompting.fmt, prompting.fewshot_from
    if fmt is not None and fmt not in FORMATS:
        raise ProctorError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    assert isinstance(task.prompts, ItemPromptBuilder)
    pool = list(task.items) if fewshot_from is None else _path_task(str(fewshot_from), limit=None,
                                                                     limit_per_category=None).items
    if fewshot_from is not None:
        task.source["fewshot"] = {"path": str(Path(fewshot_from).resolve()), "sha256": file_sha256(fewshot_from)}
    task.prompts = FewShotPrompts(task.prompts, pool=pool, shots=shots, format="completion" if fmt == "completion"
                                  else "chat", kind=prompting.prompt_kind)
    return task


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
        cluster=_natural_cluster(items),
    )


def _natural_cluster(items: list[Item]) -> str | None:
    """The attribute a file's items cluster by: a probsem suite's contexts cluster by their suite."""
    return SUITE_CLUSTER if items and all(is_suite_item(it) for it in items) else None


def _as_itemset(loaded: Any, spec: str) -> ItemSet:
    if isinstance(loaded, ItemSet):
        return loaded
    if isinstance(loaded, Dataset):
        return dataset_to_itemset(loaded)
    raise ProctorError(
        f"{spec}: not an item dataset (got {type(loaded).__name__}); use it with `proctor score`"
    )
