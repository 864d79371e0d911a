"""Data commands: `proctor validate`, `proctor stats`, `proctor convert`."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from ..coverage import Coverage, coverage
from ..errors import InputError, Problem
from ..records import ItemSet


class Target(StrEnum):
    ITEMS = "items"
    QUESTIONS = "questions"
    COMMONEVAL = "commoneval"


def resolve_dataset(spec: str, data_file: Path | None = None, seed: int = 0) -> ItemSet:
    """DATASET: a path in any item-bearing format, else a built-in benchmark name (hub or `data_file`)."""
    from ..benchmarks.registry import load_task
    from ..formats.convert import slug
    from ..formats.detect import load_itemset

    if data_file is None and Path(spec).exists():
        return load_itemset(spec)
    task = load_task(spec, data_file=data_file, seed=seed)
    return ItemSet(
        identifier=slug(task.name),
        name=task.name,
        taskPrompt=task.task_prompt,
        metadata={"source": dict(task.source)} if task.source else {},
        items=list(task.items),
    )


DataFileOption = Annotated[
    Path | None, typer.Option("--data-file", help="Built-in benchmark: local file in the upstream schema.")
]
SeedOption = Annotated[int, typer.Option(help="Built-in benchmark: choice-order seed (GPQA shuffling).")]


def _print_coverage(cov: Coverage, title: str) -> None:
    from ..termsafe import plain

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
    if cov.flags:
        typer.echo("representation (flagged when a share is < half or > double the uniform share):")
        for f in cov.flags:
            typer.echo(f"  {f.kind}-represented: {plain(f.category)} ({f.count} items, {100 * f.share:.1f}% vs "
                       f"{100 * f.uniform_share:.1f}% uniform)")
    elif len(cov.categories) > 1:
        typer.echo("representation: no category under- or over-represented")


def validate(paths: Annotated[list[Path], typer.Argument(help="Items .jsonl, CommonEval dirs, "
                                                         "Question .json, suites (.json/.txt/dirs).")]) -> None:
    """Check files in any proctor format and list every problem as path:line: field: message."""
    from ..formats.detect import validate_path

    problems: list[Problem] = []
    for path in paths:
        try:
            typer.echo(str(validate_path(path)))
        except InputError as e:
            problems.extend(e.problems)
    for p in problems:
        typer.echo(str(p), err=True)
    if problems:
        bad = len({p.path for p in problems})
        typer.echo(f"{len(problems)} problem(s) found in {bad} file(s)", err=True)
        raise typer.Exit(2)


def stats(
    dataset: Annotated[str, typer.Argument(help="A path (any item-bearing format) or a built-in name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the counts as JSON.")] = False,
    data_file: DataFileOption = None,
    seed: SeedOption = 0,
) -> None:
    """Counts per category, subcategory, modality and difficulty band; flags under/over-represented categories."""
    itemset = resolve_dataset(dataset, data_file, seed)
    cov = coverage(itemset.items)
    if as_json:
        typer.echo(json.dumps({"dataset": itemset.name or itemset.identifier, **cov.to_json()}, indent=2,
                              ensure_ascii=False))
    else:
        _print_coverage(cov, itemset.name or itemset.identifier)


def convert(
    src: Annotated[str, typer.Argument(help="A path in any item-bearing format or a built-in name.")],
    to: Annotated[Target, typer.Option("--to", help="Output format.")],
    out: Annotated[Path, typer.Option("-o", "--output", help="Output file (items, questions) or directory.")],
    shard_size: Annotated[int | None, typer.Option("--shard-size", min=1,
                                                   help="commoneval: items per shard file.")] = None,
    data_file: DataFileOption = None,
    seed: SeedOption = 0,
) -> None:
    """Convert between items JSONL, Question JSON and CommonEval directories (written atomically)."""
    from ..formats.commoneval import write_commoneval
    from ..formats.convert import flatten_task_prompt, itemset_to_questions
    from ..formats.items import write_items
    from ..formats.questions import write_questions

    itemset = resolve_dataset(src, data_file, seed)
    if to is Target.ITEMS:
        write_items(out, flatten_task_prompt(itemset))
    elif to is Target.QUESTIONS:
        write_questions(out, itemset_to_questions(itemset, src))
    else:
        write_commoneval(out, itemset, shard_size)
    typer.echo(f"wrote {out}: {len(itemset.items)} items as {to.value}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command()(validate)
    app.command()(stats)
    app.command()(convert)
