"""Data commands: `proctor validate`, `proctor stats`, `proctor convert`."""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer

from ..benchmarks.registry import load_task
from ..benchmarks.spec import is_spec_file
from ..benchmarks.spec_task import validate_spec
from ..data.coverage import Coverage, coverage
from ..data.formats.collection import dataset_folder, dataset_yamls, subject_coverage
from ..data.formats.commoneval import complete_metadata, dataset_warnings, write_commoneval
from ..data.formats.convert import flatten_task_prompt, items_to_suites, itemset_to_questions, slug
from ..data.formats.detect import load_itemset, validate_path
from ..data.formats.dialects import Dialect
from ..data.formats.items import write_items
from ..data.formats.questions import write_questions
from ..data.formats.suites import write_prompt_suites
from ..data.records import ItemSet
from ..util.errors import InputError, Problem, ProctorError
from ..util.termsafe import plain
from . import options
from .messages import error, note, warning
from .run_options import with_records

DataFileOption = options.DataFile
SeedOption = options.ChoiceSeed


class Target(StrEnum):
    ITEMS = "items"
    QUESTIONS = "questions"
    COMMONEVAL = "commoneval"
    SUITES = "suites"


class DialectChoice(StrEnum):
    SPEC = "spec"
    COMMONEVAL = "commoneval"


@dataclass(frozen=True)
class BenchmarkData:
    """How a built-in or spec benchmark is read: from a local copy (`--data-file`; default: the Hub), its choice
    order shuffled with `--seed`."""

    data_file: DataFileOption = None
    seed: SeedOption = 0


def resolve_dataset(spec: str, data: BenchmarkData = BenchmarkData()) -> ItemSet:
    """DATASET: a path in any item-bearing format, else a built-in benchmark or a benchmark spec (its name or
    file; hub or `data.data_file`)."""
    if data.data_file is None and Path(spec).exists() and not is_spec_file(spec):
        return load_itemset(spec)
    task = load_task(spec, data_file=data.data_file, seed=data.seed)
    return ItemSet(
        identifier=slug(task.name),
        name=task.name,
        taskPrompt=task.task_prompt,
        metadata={"source": dict(task.source)} if task.source else {},
        items=list(task.items),
    )

VALIDATE_EXAMPLES = """Example:

  proctor validate examples/items/demo.jsonl examples/commoneval examples/questions/demo.json examples/suites
"""
STATS_EXAMPLES = """Examples:

  proctor stats examples/items/demo.jsonl
  proctor stats mmlu-pro --data-file examples/upstream/mmlu_pro --json
"""
CONVERT_EXAMPLES = """Examples:

  proctor convert examples/questions/demo.json --to commoneval -o out/demo-commoneval
  proctor convert mmlu-pro --data-file examples/upstream/mmlu_pro --to items -o out/mmlu-pro.jsonl
"""


def _print_coverage(cov: Coverage, title: str) -> None:
    typer.echo(f"{plain(title)}: {cov.total} items")

    def block(name: str, counts: dict[str, int], indent: str = "  ") -> None:
        if not counts:
            return
        typer.echo(f"{name}:")
        width = max(len(k) for k in counts)
        for key, n in counts.items():
            share = f"{100 * n / cov.total:5.1f}%" if cov.total else ""
            typer.echo(f"{indent}{plain(key):<{width}}  {n:>6}  {share}")  # names from data: escaped

    block("categories", cov.categories)
    for cat, subs in cov.subcategories.items():
        block(f"subcategories of {plain(cat)}", subs)
    block("modalities", cov.modalities)
    block("difficulty", cov.difficulty)
    if cov.few_options:
        note(f"{cov.few_options} choice items have only one or two options (scored like any other; "
             "a guess is right 1/k of the time)")
    if cov.flags:
        typer.echo("representation (flagged when a share is < half or > double the uniform share):")
        for f in cov.flags:
            typer.echo(f"  {f.kind}-represented: {plain(f.category)} ({f.count} items, {100 * f.share:.1f}% vs "
                       f"{100 * f.uniform_share:.1f}% uniform)")
    elif len(cov.categories) > 1:
        typer.echo("representation: no category under- or over-represented")


def validate(paths: Annotated[list[Path], typer.Argument(
        metavar="PATH...", show_default=False,
        help="Items .jsonl, CommonEval directories, Question .json, suites (.json, .txt or directories), "
             "benchmark spec files (.yaml).")]) -> None:
    """Check files in any proctor format and list every problem as `error: path:line: field: message`."""
    problems: list[Problem] = []
    expanded = [y for p in paths for y in (dataset_yamls(p) or [p])]  # a folder of datasets: each one
    for path in expanded:
        try:
            if is_spec_file(path):
                typer.echo(validate_spec(path))
                continue
            checked = validate_path(path)
            typer.echo(str(checked))
            for w in checked.warnings:
                warning(str(w))
        except InputError as e:
            problems.extend(e.problems)
    for p in problems:
        error(str(p))
    if problems:
        bad = len({p.path for p in problems})
        error(f"{len(problems)} problem(s) found in {bad} file(s)")
        raise typer.Exit(2)


@with_records(data=BenchmarkData)
def stats(
    dataset: Annotated[str, typer.Argument(
        metavar="DATASET", show_default=False,
        help="A path (any item-bearing format, or a folder of CommonEval datasets) or a built-in name.")],
    as_json: options.Json = False,
    data: BenchmarkData = BenchmarkData(),
) -> None:
    """Counts per category, subcategory, modality and difficulty band; flags under/over-represented categories.

    Over a folder of several CommonEval datasets: counts per dataset `subject` (the Dataset spec's
    under- or over-represented subject areas), then the pooled items.
    """
    folder = dataset_folder(Path(dataset)) if data.data_file is None else None
    if folder:
        _stats_by_subject(folder, subject_coverage(folder), as_json)
        return
    itemset = resolve_dataset(dataset, data)
    _echo_warnings(itemset)
    cov = coverage(itemset.items)
    if as_json:
        typer.echo(json.dumps({"dataset": itemset.name or itemset.identifier, **cov.to_json()}, indent=2,
                              ensure_ascii=False))
    else:
        _print_coverage(cov, itemset.name or itemset.identifier)


def _stats_by_subject(folder: list[ItemSet], subjects: Any, as_json: bool) -> None:
    pooled = coverage([it for ds in folder for it in ds.items])
    for ds in folder:
        _echo_warnings(ds)
    if as_json:
        typer.echo(json.dumps({"datasets": len(folder), "subjects": subjects.to_json(), **pooled.to_json()},
                              indent=2, ensure_ascii=False))
        return
    typer.echo(f"{len(folder)} datasets, {pooled.total} items")
    typer.echo(subjects.render())
    _print_coverage(pooled, "all datasets")


def _echo_warnings(itemset: ItemSet) -> None:
    for w in dataset_warnings(itemset):
        warning(str(w))


@with_records(data=BenchmarkData)
def convert(
    src: Annotated[str, typer.Argument(
        metavar="DATASET", show_default=False, help="A path in any item-bearing format or a built-in name.")],
    to: Annotated[Target, typer.Option("--to", show_default=False, help="Output format.")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", metavar="PATH", show_default=False,
        help="Output file (items, questions) or directory (commoneval, suites); required.")] = None,
    output: Annotated[Path | None, options.old_spelling("--output", "PATH")] = None,
    shard_size: Annotated[int | None, typer.Option(
        "--shard-size", metavar="N", min=1, help="commoneval: items per shard file (default: one shard).")] = None,
    dialect: Annotated[DialectChoice | None, typer.Option(
        "--dialect", help="items/commoneval: spell items as seed 000's spec or as CommonEval's code (what the "
                          "commoneval package reads). Default: as the source spells them (spec if it cannot tell)."
    )] = None,
    meta: Annotated[list[str] | None, typer.Option(
        "--meta", metavar="KEY=VALUE", help=(
            "commoneval: a dataset attribute (created, creator, subject, …); repeatable (default: none)."))] = None,
    data: BenchmarkData = BenchmarkData(),
) -> None:
    """Convert between items JSONL, Question JSON, CommonEval directories and probsem suites (atomic)."""
    out = options.prefer(out, output, "--output", "--out")
    if out is None:
        raise ProctorError("convert needs --out PATH (the file or directory to write)")
    itemset = resolve_dataset(src, data)
    _echo_warnings(itemset)
    chosen = Dialect(dialect.value) if dialect is not None else None
    notes: list[str] = []
    n = _write_converted(itemset, to, out, shard_size, chosen, _parse_meta(meta or []), src, notes)
    for text in notes:
        note(text)
    typer.echo(f"wrote {out}: {n} items as {to.value}" + (f" ({chosen.value} dialect)" if chosen else ""))


def _parse_meta(pairs: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError.at("--meta", f"{pair!r}: expected KEY=VALUE")
        out[key.strip()] = value
    return out


def _write_converted(itemset: ItemSet, to: Target, out: Path, shard_size: int | None, dialect: Any,
                     meta: dict[str, str], src: str, notes: list[str]) -> int:
    if to is Target.ITEMS:
        write_items(out, flatten_task_prompt(itemset), dialect)
    elif to is Target.QUESTIONS:
        write_questions(out, itemset_to_questions(itemset, src))
    elif to is Target.SUITES:
        pairs = items_to_suites(list(itemset.items))
        write_prompt_suites(out, [(prompt, [suite]) for prompt, suite in pairs])
    else:
        write_commoneval(out, complete_metadata(itemset, meta, src, notes), shard_size, dialect, notes)
    return len(itemset.items)


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=VALIDATE_EXAMPLES)(validate)
    app.command(epilog=STATS_EXAMPLES)(stats)
    app.command(epilog=CONVERT_EXAMPLES)(convert)
