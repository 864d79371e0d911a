"""Spec benchmarks as Tasks, and where spec files are found: proctor's own (`benchmarks/specs/`) and the
user's folder (`$PROCTOR_BENCHMARKS`, else `./benchmarks/`). A spec is named on the command line by its
`name` or by its path."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..data.formats.convert import question_to_item
from ..data.prompts import check_kind
from ..data.records import Dataset, Item, Question
from ..data.tasks import Task
from ..scoring.extract import ANSWER_RULES
from ..util.errors import InputError, ProctorError
from .hub import HubSource, Rows, fetch, file_sha256
from .spec import SPEC_SUFFIXES, BenchmarkSpec, LineOf, is_spec_file, read_spec, read_spec_located
from .spec_data import split_rows, to_questions
from .spec_prompts import FORMATS, Format, SpecPrompts

BUILTIN_SPECS = Path(__file__).parent / "specs"
USER_ENV = "PROCTOR_BENCHMARKS"
log = logging.getLogger("proctor.benchmarks.spec")


def user_spec_dir() -> Path:
    """The folder user specs are listed from: $PROCTOR_BENCHMARKS, else ./benchmarks."""
    return Path(os.environ.get(USER_ENV) or "benchmarks")


def _spec_files(folder: Path) -> Iterator[Path]:
    if folder.is_dir():
        yield from sorted(p for p in folder.iterdir() if p.suffix.lower() in SPEC_SUFFIXES and p.is_file())


def builtin_specs() -> dict[str, tuple[Path, BenchmarkSpec]]:
    """proctor's shipped spec benchmarks, by name."""
    return {s.name: (p, s) for p in _spec_files(BUILTIN_SPECS) for s in (read_spec(p),)}


def user_specs(folder: Path | None = None) -> tuple[dict[str, tuple[Path, BenchmarkSpec]], list[str]]:
    """The user's spec files by name, and one line per file that is not a valid spec (listed, not fatal)."""
    found: dict[str, tuple[Path, BenchmarkSpec]] = {}
    problems: list[str] = []
    for path in _spec_files(folder or user_spec_dir()):
        try:
            spec = read_spec(path)
        except InputError as e:
            problems.append(str(e.problems[0]) if e.problems else str(e))
            continue
        found.setdefault(spec.name, (path, spec))
    return found, problems


def find_spec(name: str) -> Path | None:
    """The spec file a DATASET argument names: a spec path, a shipped spec's name, or a user spec's name."""
    p = Path(name)
    if p.suffix.lower() in SPEC_SUFFIXES and p.is_file():
        return p if is_spec_file(p) else None
    key = name.strip().lower()
    shipped = next((path for n, (path, _) in builtin_specs().items() if n.lower() == key), None)
    if shipped is not None:
        return shipped
    user, _ = user_specs()
    return next((path for n, (path, _) in user.items() if n.lower() == key), None)


def load_spec_task(path: Path, *, data_file: str | Path | None = None, shots: int | None = None,
                   fmt: str | None = None, prompt_kind: str | None = None) -> Task:
    """A spec file's benchmark as a Task (every row; `select` trims it after); `prompt_kind` (--prompt) is the
    kind its log-likelihood contexts are built from, and must be one the spec declares."""
    spec, line_of = read_spec_located(path)
    if prompt_kind is not None:
        check_kind(prompt_kind, tuple(spec.prompts), spec.name)
    if fmt is not None and fmt not in FORMATS:
        raise ProctorError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if shots is not None and shots > 0 and spec.fewshot is None:
        raise ProctorError(f"{spec.name} declares no few-shot source (`fewshot:` in {path}); --shots needs one")
    data_dir = Path(data_file) if data_file is not None else None
    rows = split_rows(spec, path.parent, spec.source.split, data_dir)
    questions = to_questions(spec, rows, path, line_of)
    items = [question_to_item(q, spec.name) for q in questions]
    pool, same_split, pool_source = _pool(spec, path, data_dir, items, line_of)
    asked = {SpecPrompts.content(it) for it in items}
    prompts = SpecPrompts(spec, pool=pool, order=[it.identifier for it in items], same_split=same_split,
                          overlap=any(SpecPrompts.content(p) in asked for p in pool), shots=shots, format=_format(fmt),
                          kind=prompt_kind)
    return Task(
        name=spec.name,
        items=items,
        prompts=prompts,
        source=_provenance(spec, path, rows) | ({"fewshot": pool_source} if pool_source else {}),
        default_max_tokens=spec.scoring.max_tokens,
        default_mode="logprob" if spec.scoring.mode == "loglikelihood" else "generate",
        answer_rules=_rules(spec),
        cluster=spec.cluster,
    )


def _format(fmt: str | None) -> Format:
    return "chat" if fmt == "chat" else "completion"


def _pool(spec: BenchmarkSpec, path: Path, data_dir: Path | None, items: list[Item],
          line_of: LineOf) -> tuple[list[Item], bool, dict[str, Any]]:
    """The few-shot examples (upstream order), whether they are the evaluated split itself, and where they came
    from (split, revision or file and its sha256)."""
    fs = spec.fewshot
    if fs is None:
        return [], False, {}
    if fs.split == spec.source.split:
        return items, True, {"split": fs.split}
    if fs.file is not None:
        rows: Rows = fetch_file(path.parent / fs.file)
    else:
        assert fs.split is not None
        rows = split_rows(spec, path.parent, fs.split, data_dir)
    pool = to_questions(spec, rows, path, line_of)
    source = {k: v for k, v in rows.provenance.items() if k != "source"}
    return [question_to_item(q, f"{spec.name}-fewshot") for q in pool], False, source


def fetch_file(path: Path) -> Rows:

    return fetch(HubSource(str(path), split="fewshot"), path)


def _rules(spec: BenchmarkSpec) -> dict[str, Any]:

    rule = spec.scoring.answer_rule
    return {kind: ANSWER_RULES[rule] for kind in spec.prompts} if rule is not None else {}


def _provenance(spec: BenchmarkSpec, path: Path, rows: Rows) -> dict[str, Any]:
    return {**rows.provenance, "spec": str(path.resolve()), "spec_sha256": file_sha256(path),
            "reproduces": spec.metadata.get("reproduces")}


def spec_dataset(path: Path, data_file: str | Path | None = None) -> Dataset:
    """A spec benchmark as seed 001's Dataset (its questions, categories and `prompts`)."""
    spec, line_of = read_spec_located(path)
    rows = split_rows(spec, path.parent, spec.source.split, Path(data_file) if data_file is not None else None)
    questions: list[Question] = to_questions(spec, rows, path, line_of)
    return Dataset(name=spec.name, description=spec.description, questions=questions,
                   prompts={k: p.template for k, p in spec.prompts.items()}, metadata=dict(spec.metadata))


def spec_summary(path: Path, spec: BenchmarkSpec, origin: str) -> dict[str, Any]:
    """One `proctor datasets` row for a spec benchmark."""
    src = spec.source
    return {"name": spec.name, "source": src.dataset or "local files", "config": src.config, "split": src.split,
            "revision": src.revision, "size": spec.metadata.get("size"), "gated": False,
            "description": spec.description, "prompt_kinds": list(spec.prompts),
            "mode": spec.scoring.mode, "answer_rule": spec.scoring.answer_rule,
            "reproduces": spec.metadata.get("reproduces"), "spec": str(path), "origin": origin}


def validate_spec(path: Path) -> str:
    """Check a spec file and, where its rows are local files, every row and few-shot example against it; a
    one-line summary, or InputError with every problem (`path:line: field: what`)."""
    spec = read_spec(path)
    if spec.source.split not in spec.source.files:
        return f"OK {path}: benchmark spec {spec.name} (rows on the hub: {spec.source.dataset}; not fetched)"
    task = load_spec_task(path)
    pool = task.prompts.pool if isinstance(task.prompts, SpecPrompts) else []
    shots = f", {len(pool)} few-shot examples" if spec.fewshot is not None and pool is not task.items else ""
    return f"OK {path}: benchmark spec {spec.name}, {len(task.items)} questions{shots}, prompts {', '.join(spec.prompts)}"
