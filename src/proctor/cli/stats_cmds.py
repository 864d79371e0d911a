"""`proctor plan | gate | agree`: how many items a comparison needs, a release gate with exit codes, and two
backends held to each other."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from ..analysis.agree import RUN_LABELS, SHOWN_FLIPS, agreement, read_for_agreement
from ..analysis.compare import compare_scores
from ..analysis.gate import GateResult
from ..analysis.gate import gate as run_gate
from ..benchmarks.registry import BUILTINS, load_task
from ..benchmarks.spec import read_spec
from ..benchmarks.spec_task import find_spec
from ..core.results import Results
from ..log.checksums import CHECKSUMS
from ..log.runlog import MANIFEST, read_manifest
from ..run.stopwhen import check_record
from ..run.store import RunScores, load_run_scores
from ..run.verify import unchanged
from ..stats.power import Plan
from ..stats.power import plan as make_plan
from ..stats.ppi import LabelPlan, label_plan
from ..util.errors import DatasetAccessError, InputError
from ..util.termsafe import escape_control
from ..util.textio import write_json_atomic
from . import options
from .history_cmds import maybe_store
from .messages import warning
from .run_options import with_records

_RUNS = """  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:first -o runs/mmlu-first
  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:random -o runs/mmlu-random
"""
PLAN_EXAMPLES = f"""Examples (the first assumes independent errors: an upper bound):

  proctor plan --delta 2 --accuracy 70
  proctor plan --delta 2 --accuracy 70 --discordance 15 --dataset mmlu-pro
{_RUNS}  proctor plan --delta 10 --run runs/mmlu-first --run runs/mmlu-random
"""
GATE_EXAMPLES = f"""Examples (GO, exit 0, when the candidate is within --max-drop points of the baseline):

{_RUNS}  proctor gate runs/mmlu-first --baseline runs/mmlu-random --max-drop 40
  proctor gate runs/mmlu-first --baseline runs/mmlu-random --max-drop 90 --per-category --json

Exit status: 0 GO, 1 NO-GO, 3 INCONCLUSIVE, 2 bad input (docs/statistics.md shows it in a CI job).
"""


def _percent(value: float, flag: str, low: float = 0.0, high: float = 100.0) -> float:
    """A percentage given on the command line as a proportion; out of range is one line, exit 2."""
    if not low < value < high:
        raise InputError.at(flag, f"expected a percentage between {low:g} and {high:g}, got {value:g}")
    return value / 100


def _dataset_items(name: str) -> int:
    """How many items a built-in benchmark (its published size) or a dataset file holds; a spec benchmark whose
    data cannot be fetched (offline) counts the size its spec declares (`metadata.size`), warned."""
    builtin = BUILTINS.get(name.strip().lower())
    if builtin is not None:
        return builtin.size
    try:
        return len(load_task(name).items)
    except DatasetAccessError as e:
        size = _declared_size(name)
        if size is None:
            raise
        warning(f"{name}: its data cannot be fetched ({str(e).split(';')[0]}); using the size its spec declares, {size:,}")
        return size


def _declared_size(name: str) -> int | None:
    """A spec benchmark's declared item count (`metadata.size`), or None."""
    path = find_spec(name)
    size = read_spec(path).metadata.get("size") if path is not None else None
    return size if isinstance(size, int) and not isinstance(size, bool) and size > 0 else None


def _runs_discordance(refs: list[str], store: Path | None) -> tuple[float, float, str]:
    """Discordance and mean accuracy of two earlier runs on their shared items."""
    if len(refs) != 2:
        raise InputError.at("--run", f"give exactly two runs (--run A --run B), got {len(refs)}")
    with maybe_store(store) as st:
        a, b = (load_run_scores(r, st) for r in refs)
    o = compare_scores(a, b, n_boot=100).overall
    where = f"runs {a.run.run_id[:12]} and {b.run.run_id[:12]}, {o.n:,} shared items"
    return (o.b10 + o.b01) / o.n, (o.acc_a + o.acc_b) / 2, where


@dataclass(frozen=True)
class Difference:
    """The difference `plan` sizes: how many points, near which accuracy, with which discordance."""

    delta: Annotated[float | None, typer.Option(
        "--delta", metavar="POINTS", show_default=False,
        help="The difference of accuracies to detect, in points (required unless --label-width).")] = None
    accuracy: Annotated[float | None, typer.Option(
        "--accuracy", metavar="PERCENT", help="The accuracy the two models are near (default: from --run).")] = None
    discordance: Annotated[float | None, typer.Option(
        "--discordance", metavar="PERCENT",
        help="Share of items one model gets right and the other wrong (default: from --run, else independent "
             "errors, an upper bound).")] = None


@dataclass(frozen=True)
class Items:
    """The items `plan` is asked about: a dataset's, or a number of them."""

    dataset: Annotated[str | None, typer.Option(
        "--dataset", metavar="NAME|PATH", help="Say whether this dataset has enough items (default: not asked).")] = None
    items: Annotated[int | None, typer.Option(
        "--items", metavar="N", min=1, help="Say whether N items are enough (default: not asked).")] = None

    def count(self) -> int | None:
        """N, the dataset's size, or None (not asked)."""
        return self.items if self.items is not None else _dataset_items(self.dataset) if self.dataset else None


@dataclass(frozen=True)
class Significance:
    """The test `plan` sizes for: its power and its significance level."""

    power: Annotated[float, typer.Option("--power", metavar="PERCENT", help="Power wanted.")] = 80.0
    alpha: Annotated[float, typer.Option("--alpha", metavar="LEVEL", help="Two-sided significance level.")] = 0.05


@dataclass(frozen=True)
class LabelWidth:
    """`plan --label-width`: the judge-corrected interval's width, and the judge's figures when no run gives them."""

    label_width: Annotated[float | None, typer.Option(
        "--label-width", metavar="POINTS", help="Instead: how many human labels give the judge-corrected accuracy "
        "a 95% interval this wide (PPI; from --run RUN with labels, or --judge-accuracy, --disagreement and "
        "--items/--dataset; docs/statistics.md; default: not asked).")] = None
    judge_accuracy: Annotated[float | None, typer.Option(
        "--judge-accuracy", metavar="PERCENT", help="With --label-width: the judge's own accuracy (default: from --run).")] = None
    disagreement: Annotated[float | None, typer.Option(
        "--disagreement", metavar="PERCENT",
        help="With --label-width: the share of samples where judge and humans disagree (an upper bound serves; "
             "default: from --run).")
    ] = None


@with_records(in_place=True, difference=Difference, items=Items, test=Significance, labels=LabelWidth)
def plan(
    difference: Difference = Difference(),
    run: Annotated[list[str] | None, typer.Option(
        "--run", metavar="RUN",
        help="Two earlier runs (give --run twice) to take the discordance from (default: none).")] = None,
    items: Items = Items(),
    test: Significance = Significance(),
    store: options.Store = None,
    as_json: options.Json = False,
    labels: LabelWidth = LabelWidth(),
) -> None:
    """How many items a paired comparison needs to detect --delta points between two models (McNemar's test,
    Connor 1987), and whether a dataset has them; with --label-width, how many human labels a judge-corrected
    interval of that width needs."""
    if (width := labels.label_width) is not None:
        lp = _label_plan(width, labels, run, items.count(), test.alpha)
        typer.echo(json.dumps(lp.model_dump(mode="json"), indent=2) if as_json else lp.text())
        return
    got = _items_plan(difference, run, items, test, store)
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2))
        return
    for line in got.lines():
        typer.echo(line)


def _items_plan(difference: Difference, run: list[str] | None, items: Items, test: Significance,
                store: Path | None) -> Plan:
    """The items a paired comparison needs to detect the difference (its figures given, or from two runs)."""
    delta, accuracy, discordance, alpha = difference.delta, difference.accuracy, difference.discordance, test.alpha
    if delta is None:
        raise InputError.at("--delta", "give the difference to detect (--delta POINTS), or --label-width POINTS")
    source = "given"
    if run:
        psi, acc, source = _runs_discordance(run, store)
        discordance = discordance if discordance is not None else 100 * psi
        accuracy = accuracy if accuracy is not None else 100 * acc
    if accuracy is None:
        raise InputError.at("--accuracy", "give the accuracy the models are near (or two runs with --run)")
    if not 0 < alpha < 1:
        raise InputError.at("--alpha", f"expected a level between 0 and 1, got {alpha:g}")
    if 0 < accuracy <= 1 and 0 < delta < 1:  # both read as percent/points they are absurd: fractions, surely
        raise InputError.at("--accuracy", f"{accuracy:g} and --delta {delta:g} read as percent and points "
                                          f"({accuracy:g}%, {delta:g} points); for {100 * accuracy:g}% and "
                                          f"{100 * delta:g} points write --accuracy {100 * accuracy:g} "
                                          f"--delta {100 * delta:g}")
    n = items.items if items.items is not None else \
        _dataset_items(items.dataset) if items.dataset is not None else None
    try:
        return make_plan(_percent(delta, "--delta"), _percent(accuracy, "--accuracy"),
                         _percent(discordance, "--discordance", high=100.0001) if discordance is not None else None,
                         source, n, items.dataset, alpha,
                         _percent(test.power, "--power"))
    except ValueError as e:
        raise InputError.at("--delta", str(e)) from None


def _label_plan(width: float, asked: LabelWidth, runs: list[str] | None, n_items: int | None,
                alpha: float) -> LabelPlan:
    """The labels a judge-corrected interval `width` points wide needs: the spreads from a labelled run's
    judge_corrected block, or from the judge's accuracy and its disagreement (`asked`) with the humans."""
    half = _percent(width, "--label-width") / 2
    judge_accuracy, disagreement = asked.judge_accuracy, asked.disagreement
    if runs:
        if len(runs) != 1:
            raise InputError.at("--run", f"with --label-width give one run with human labels, got {len(runs)}")
        block = run_dir_results(runs[0]).judge_corrected
        if block is None or block.sd_pred is None or block.sd_resid is None:
            raise InputError.at(runs[0], "no judge-corrected accuracy here (run it with --human-labels, 2+ labels)")
        h = block.human_accuracy
        return label_plan(half, n_items or block.n, (block.sd_pred, block.sd_resid,
                                                     math.sqrt(h * (1 - h)) if h is not None else None),
                          alpha, f"run {runs[0]}")
    if judge_accuracy is None or disagreement is None or n_items is None:
        raise InputError.at("--label-width", "give --run RUN (with labels), or --judge-accuracy, --disagreement "
                                             "and --items N (or --dataset)")
    p, d = _percent(judge_accuracy, "--judge-accuracy"), _percent(disagreement, "--disagreement", high=100.0001)
    return label_plan(half, n_items, (math.sqrt(p * (1 - p)), math.sqrt(d), math.sqrt(p * (1 - p))), alpha,
                      "given (the disagreement's sd √d: an upper bound; the truth's sd taken as the judge's)")


def run_dir_results(ref: str) -> Results:
    """A run directory's results, recomputed from its samples."""
    from ..metrics.results import read_run

    if not (Path(ref) / MANIFEST).is_file():
        raise InputError.at(ref, "not a run directory")
    results = read_run(ref).results
    if results is None:
        raise InputError.at(ref, "an unfinished run (no results.json)")
    return results


@dataclass(frozen=True)
class GateRule:
    """What the gate holds the candidate to: the largest drop allowed, overall or in every category too."""

    max_drop: Annotated[float, typer.Option(
        "--max-drop", metavar="POINTS", show_default=False, help="The largest drop in accuracy allowed, in points.")]
    per_category: Annotated[bool, typer.Option(
        "--per-category", help="Gate every category too (Bonferroni over the categories).")] = False
    mix_settings: Annotated[bool, typer.Option(
        "--mix-settings", help="Gate runs of the same items under different settings (warned).")] = False


@dataclass(frozen=True)
class GateLabels:
    """Human verdicts on the candidate's and the baseline's items (default: each run's own)."""

    human_labels: Annotated[Path | None, typer.Option(
        "--human-labels", metavar="FILE", help="Human verdicts on the candidate's items (JSON Lines or CSV: "
        "docs/statistics.md); with the baseline's, the overall check is judge-corrected (default: the run's own, "
        "from `run --human-labels`).")] = None
    baseline_labels: Annotated[Path | None, typer.Option(
        "--baseline-labels", metavar="FILE", help="Human verdicts on the baseline's items (default: the run's "
        "own).")] = None


@with_records(in_place=True, rule=GateRule, resampling=options.Resampling, labels=GateLabels)
def gate(
    candidate: Annotated[str, typer.Argument(
        metavar="CANDIDATE", show_default=False, help="The candidate run: a run directory or recorded run id.")],
    baseline: Annotated[str, typer.Option(
        "--baseline", metavar="RUN", show_default=False, help="The run to hold the candidate to.")],
    rule: GateRule,
    store: options.Store = None,
    resampling: options.Resampling = options.Resampling(),
    as_json: options.Json = False,
    labels: GateLabels = GateLabels(),
) -> None:
    """GO, NO-GO or INCONCLUSIVE: is the candidate within --max-drop points of the baseline, on their shared items?
    With human labels on both runs the overall check is the judge-corrected difference (docs/statistics.md).
    Exit status 0 GO, 1 NO-GO, 3 INCONCLUSIVE."""
    if not 0 <= rule.max_drop < 100:
        raise InputError.at("--max-drop", f"expected points between 0 and 100, got {rule.max_drop:g}")
    for given in (candidate, baseline):  # a run directory is held to its checksums, as a stopped run's baseline is
        if (Path(given) / CHECKSUMS).exists() and (why := unchanged(given)) is not None:
            raise InputError.at(given, f"does not verify ({why}): a gated run is held to its checksums")
    with maybe_store(store) as st:
        cand, base = load_run_scores(candidate, st), load_run_scores(baseline, st)
    result = run_gate(cand, base, rule.max_drop / 100, rule.per_category, rule.mix_settings,
                      n_boot=resampling.n_boot, seed=resampling.boot_seed, sequential=_sequential(cand.run.path, base))
    result = _gate_corrected(result, cand, base, labels.human_labels, labels.baseline_labels)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2))
    else:
        _print_gate(result)
    raise typer.Exit(result.exit_code)


def _gate_corrected(result: GateResult, cand: RunScores, base: RunScores, cand_file: Path | None,
                    base_file: Path | None) -> GateResult:
    """The gate decided on the judge-corrected difference when both runs have human labels (not for a run its
    confidence sequence stopped: its record decides)."""
    from ..analysis.corrected import corrected_difference, run_labels, with_corrected

    la, lb = run_labels(cand, cand_file), run_labels(base, base_file)
    if la is None or lb is None:
        if cand_file is not None or base_file is not None:
            warning("human labels on one run only: the gate uses the verdicts (give --human-labels and "
                    "--baseline-labels)")
        return result
    if result.sequential is not None:
        warning("human labels: a run stopped by its confidence sequence is gated by its record, not corrected")
        return result
    return with_corrected(result, corrected_difference(cand, base, la, lb))


def _sequential(path: str, base: Any) -> Any:
    """The `run --stop-when-decided` record of the run directory at `path` (None: none, or no directory), refused
    when it does not verify (`proctor.run.stopwhen.check_record`)."""
    record = read_manifest(Path(path)).sequential if (Path(path) / MANIFEST).is_file() else None
    if record is not None and record.baseline_run_id == base.run.run_id:
        check_record(Path(path), record, base)
    return record


def _print_gate(result: Any) -> None:
    typer.echo(f"{result.decision.value}: {escape_control(result.deciding.text(result.max_drop))}")
    typer.echo(f"candidate {escape_control(result.candidate.model)} ({result.candidate.run_id[:12]}) "
               f"{result.candidate.accuracy_text()}, baseline {escape_control(result.baseline.model)} "
               f"({result.baseline.run_id[:12]}) {result.baseline.accuracy_text()}")
    if result.note is not None:
        typer.echo(result.note)
    for check in result.checks:
        if check is not result.deciding:
            typer.echo(f"  {escape_control(check.text(result.max_drop))}")
    for w in result.warnings:
        warning(w)


AGREE_EXAMPLES = f"""Examples (any two runs of the same items: hf: and vllm: on the same weights, two batch sizes…):

{_RUNS}  proctor agree runs/mmlu-first runs/mmlu-random
"""


def agree(
    run_a: Annotated[str, typer.Argument(
        metavar="RUN_A", show_default=False, help="Run directory or recorded run id.")],
    run_b: Annotated[str, typer.Argument(
        metavar="RUN_B", show_default=False, help="Run directory or recorded run id (the same items).")],
    store: options.Store = None,
    as_json: options.Json = False,
    save: Annotated[Path | None, typer.Option(
        "--save", metavar="FILE", help="Also write the agreement record (the --json figures) to FILE (default: not written).")] = None,
) -> None:
    """Hold two runs of the same items to each other (two backends, engines, dtypes, batch sizes, shards):
    per-item log-prob differences, the answers that flip (rate with a 95% interval) and identical outputs."""
    with maybe_store(store) as st:
        a, b = read_for_agreement(run_a, st), read_for_agreement(run_b, st)
    got = agreement(a, b)
    if save is not None:
        write_json_atomic(save, got.model_dump(mode="json"))
    if as_json:
        typer.echo(json.dumps(got.model_dump(mode="json"), indent=2, ensure_ascii=False))
        return
    one, two = RUN_LABELS
    typer.echo(f"{one}: {escape_control(got.a.model)} ({got.a.run_id[:12]})   {two}: {escape_control(got.b.model)} "
               f"({got.b.run_id[:12]})")
    for line in got.lines():
        typer.echo(line)
    for f in got.flips[:SHOWN_FLIPS]:
        typer.echo(f"  flip {escape_control(f.item_id)}#{f.epoch}: {one} answered {escape_control(str(f.answer_a))}, "
                   f"{two} answered {escape_control(str(f.answer_b))}")
    if len(got.flips) > SHOWN_FLIPS:
        typer.echo(f"  … and {len(got.flips) - SHOWN_FLIPS} more (--json lists them all)")
    if got.only_in_a or got.only_in_b:
        typer.echo(f"left out: {got.only_in_a} answer(s) only in {one}, {got.only_in_b} only in {two}")
    for w in got.warnings:
        warning(w)


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=PLAN_EXAMPLES)(plan)
    app.command(epilog=GATE_EXAMPLES)(gate)
    app.command(epilog=AGREE_EXAMPLES)(agree)
