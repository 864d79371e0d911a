"""`proctor plan | gate`: how many items a comparison needs, and a release gate with exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import InputError
from . import options
from .messages import warning

PLAN_EXAMPLES = """Examples:

  proctor plan --delta 2 --accuracy 70                      # independent errors: an upper bound
  proctor plan --delta 2 --accuracy 70 --discordance 15 --dataset mmlu-pro
  proctor plan --delta 1 --run runs/model-a --run runs/model-b
"""
GATE_EXAMPLES = """Examples:

  proctor gate runs/candidate --baseline runs/release --max-drop 1
  proctor gate runs/candidate --baseline runs/release --max-drop 2 --per-category --json

Exit status: 0 GO, 1 NO-GO, 3 INCONCLUSIVE, 2 bad input (docs/statistics.md shows it in a CI job).
"""


def _percent(value: float, flag: str, low: float = 0.0, high: float = 100.0) -> float:
    """A percentage given on the command line as a proportion; out of range is one line, exit 2."""
    if not low < value < high:
        raise InputError.at(flag, f"expected a percentage between {low:g} and {high:g}, got {value:g}")
    return value / 100


def _dataset_items(name: str) -> int:
    """How many items a built-in benchmark (its published size) or a dataset file holds."""
    from ..benchmarks.registry import BUILTINS, load_task

    builtin = BUILTINS.get(name.strip().lower())
    return builtin.size if builtin is not None else len(load_task(name).items)


def _runs_discordance(refs: list[str], store: Path | None) -> tuple[float, float, str]:
    """Discordance and mean accuracy of two earlier runs on their shared items."""
    from ..compare import compare_scores
    from .history_cmds import _load_scores, _maybe_store

    if len(refs) != 2:
        raise InputError.at("--run", f"give exactly two runs (--run A --run B), got {len(refs)}")
    with _maybe_store(store) as st:
        a, b = (_load_scores(r, st) for r in refs)
    o = compare_scores(a, b, n_boot=100).overall
    where = f"runs {a.run.run_id[:12]} and {b.run.run_id[:12]}, {o.n:,} shared items"
    return (o.b10 + o.b01) / o.n, (o.acc_a + o.acc_b) / 2, where


def plan(
    delta: Annotated[float, typer.Option(
        "--delta", metavar="POINTS", show_default=False, help="The difference of accuracies to detect, in points.")],
    accuracy: Annotated[float | None, typer.Option(
        "--accuracy", metavar="PERCENT", help="The accuracy the two models are near (default: from --run).")] = None,
    discordance: Annotated[float | None, typer.Option(
        "--discordance", metavar="PERCENT",
        help="Share of items one model gets right and the other wrong (default: from --run, else independent "
             "errors, an upper bound).")] = None,
    run: Annotated[list[str] | None, typer.Option(
        "--run", metavar="RUN", help="Two earlier runs (give --run twice) to take the discordance from.")] = None,
    dataset: Annotated[str | None, typer.Option(
        "--dataset", metavar="NAME|PATH", help="Say whether this dataset has enough items (default: not asked).")] = None,
    items: Annotated[int | None, typer.Option(
        "--items", metavar="N", min=1, help="Say whether N items are enough (default: not asked).")] = None,
    power: Annotated[float, typer.Option("--power", metavar="PERCENT", help="Power wanted.")] = 80.0,
    alpha: Annotated[float, typer.Option("--alpha", metavar="LEVEL", help="Two-sided significance level.")] = 0.05,
    store: options.Store = None,
    as_json: options.Json = False,
) -> None:
    """How many items a paired comparison needs to detect --delta points between two models (McNemar's test,
    Connor 1987), and whether a dataset has them."""
    from ..power import plan as make_plan

    source = "given"
    if run:
        psi, acc, source = _runs_discordance(run, store)
        discordance = discordance if discordance is not None else 100 * psi
        accuracy = accuracy if accuracy is not None else 100 * acc
    if accuracy is None:
        raise InputError.at("--accuracy", "give the accuracy the models are near (or two runs with --run)")
    if not 0 < alpha < 1:
        raise InputError.at("--alpha", f"expected a level between 0 and 1, got {alpha:g}")
    n = items if items is not None else _dataset_items(dataset) if dataset is not None else None
    try:
        got = make_plan(_percent(delta, "--delta"), _percent(accuracy, "--accuracy"),
                        _percent(discordance, "--discordance", high=100.0001) if discordance is not None else None,
                        source, n, dataset or (f"{items:,} items" if items else None), alpha,
                        _percent(power, "--power"))
    except ValueError as e:
        raise InputError.at("--delta", str(e)) from None
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2))
        return
    for line in got.lines():
        typer.echo(line)


def gate(
    candidate: Annotated[str, typer.Argument(
        metavar="CANDIDATE", show_default=False, help="The candidate run: a run directory or recorded run id.")],
    baseline: Annotated[str, typer.Option(
        "--baseline", metavar="RUN", show_default=False, help="The run to hold the candidate to.")],
    max_drop: Annotated[float, typer.Option(
        "--max-drop", metavar="POINTS", show_default=False, help="The largest drop in accuracy allowed, in points.")],
    per_category: Annotated[bool, typer.Option(
        "--per-category", help="Gate every category too (Bonferroni over the categories).")] = False,
    mix_settings: Annotated[bool, typer.Option(
        "--mix-settings", help="Gate runs of the same items under different settings (warned).")] = False,
    store: options.Store = None,
    n_boot: options.NBoot = 2000,
    boot_seed: options.BootSeed = 0,
    as_json: options.Json = False,
) -> None:
    """GO, NO-GO or INCONCLUSIVE: is the candidate within --max-drop points of the baseline, on their shared items?
    Exit status 0 GO, 1 NO-GO, 3 INCONCLUSIVE."""
    from ..gate import gate as run_gate
    from .history_cmds import _load_scores, _maybe_store

    if not 0 <= max_drop < 100:
        raise InputError.at("--max-drop", f"expected points between 0 and 100, got {max_drop:g}")
    with _maybe_store(store) as st:
        cand, base = _load_scores(candidate, st), _load_scores(baseline, st)
    result = run_gate(cand, base, max_drop / 100, per_category, mix_settings, n_boot=n_boot, seed=boot_seed)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        _print_gate(result)
    raise typer.Exit(result.exit_code)


def _print_gate(result: Any) -> None:
    from ..termsafe import escape_control

    typer.echo(f"{result.decision.value}: {escape_control(result.deciding.text(result.max_drop))}")
    typer.echo(f"candidate {escape_control(result.candidate.model)} ({result.candidate.run_id[:12]}), "
               f"baseline {escape_control(result.baseline.model)} ({result.baseline.run_id[:12]})")
    for check in result.checks:
        if check is not result.deciding:
            typer.echo(f"  {escape_control(check.text(result.max_drop))}")
    for w in result.warnings:
        warning(w)


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=PLAN_EXAMPLES)(plan)
    app.command(epilog=GATE_EXAMPLES)(gate)
