"""`proctor import PATH...`: lm-eval results, Inspect logs and llm-wc results directories as proctor runs, recorded
in the history."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..interop.importers import ImportOptions, is_llmwc_results, read_all, run_dir_for, write_run
from ..run.runner import accuracy_line
from ..run.store import Store, default_store_path
from ..util.errors import InputError
from ..util.termsafe import plain
from . import options
from .llmwc_cmds import import_results

if TYPE_CHECKING:
    from ..interop.importers import ImportedRun

IMPORT_EXAMPLES = """Examples (lm-eval run with --output_path out/lm --log_samples; Inspect logs in logs/;
an llm-wc results directory):

  proctor import out/lm/EleutherAI__pythia-70m/results_2026-01-01T00-00-00.json
  proctor import logs/2026-01-01T00-00-00_gpqa_abc.eval --name openai:gpt-4o
  proctor import out/lm --item-id identifier --dataset demo
  proctor import results/mmlu_pro

Item ids decide which items `compare` pairs: see docs/import.md.
"""


def import_runs(
    paths: Annotated[list[Path], typer.Argument(
        metavar="PATH...", show_default=False,
        help="lm-eval results_<date>.json (its samples_*.jsonl beside it), Inspect .eval/.json logs, folders of them, "
             "or llm-wc results directories.")],
    name: Annotated[str | None, typer.Option(
        "--name", metavar="NAME", help="Model name to record (default: the harness's, e.g. hf:EleutherAI/pythia-70m).")] = None,
    dataset: Annotated[str | None, typer.Option(
        "--dataset", "-d", metavar="NAME", help="Dataset name to record (default: the task's name).")] = None,
    item_id: Annotated[str | None, typer.Option(
        "--item-id", metavar="FIELD",
        help="The sample's field that names its item, e.g. identifier or question_id, or a template over the "
             "fields (docs/import.md) (default: doc_id for lm-eval, id for Inspect).")] = None,
    metric: Annotated[str | None, typer.Option(
        "--metric", metavar="NAME", help="The per-sample score: an lm-eval metric (acc, acc_norm, exact_match,flexible-extract) "
                                         "or an Inspect scorer (default: the task's first).")] = None,
    runs_root: Annotated[Path, typer.Option(
        "--runs-root", metavar="DIR",
        help="Where the run directories go: DIR/<dataset>__<model>__<run id> (llm-wc's under DIR/imported/).")] = Path("runs"),
    store: options.Store = None,
    no_history: options.NoHistory = False,
) -> None:
    """Read another harness's results into proctor run directories and the history, so that report, compare,
    history and leaderboard read them. Everything is checked before anything is written."""
    llmwc = [p for p in paths if is_llmwc_results(p)]
    others = [p for p in paths if p not in llmwc]
    opts = ImportOptions(name=name, dataset=dataset, item_id=item_id, metric=metric,
                         command=["proctor", *sys.argv[1:]])
    if llmwc:
        _llmwc_takes_no_options(llmwc[0], opts, no_history)
    runs = read_all(others, opts) if others else []  # every lm-eval and Inspect file checked before any write
    for results_dir in llmwc:
        import_results(results_dir, store, runs_root)
    if runs:
        _write_and_record(runs, runs_root, None if no_history else store or _default_store())


def _llmwc_takes_no_options(results_dir: Path, opts: ImportOptions, no_history: bool) -> None:
    """llm-wc results name their models, datasets and item ids themselves: options that would rename them are refused."""
    given = [flag for flag, value in (("--name", opts.name), ("--dataset", opts.dataset), ("--item-id", opts.item_id),
                                      ("--metric", opts.metric), ("--no-history", no_history)) if value]
    if given:
        raise InputError.at(results_dir, f"an llm-wc results directory: {', '.join(given)} apply only to lm-eval "
                                         "results and Inspect logs")


def _default_store() -> Path:
    return default_store_path()


def _write_and_record(runs: list[ImportedRun], runs_root: Path, store: Path | None) -> None:
    """Write each run directory whole, record it in the history (unless `store` is None), and say so."""
    history = Store(store) if store is not None else None
    try:
        for run in runs:
            log = write_run(run, run_dir_for(run, runs_root))
            if history is not None:
                history.record_run(log.path)
            line = accuracy_line(log.results) if log.results is not None else "no results"
            typer.echo(plain(f"{run.label}: {line}  → {log.path}"))
    finally:
        if history is not None:
            history.close()


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command("import", epilog=IMPORT_EXAMPLES)(import_runs)
