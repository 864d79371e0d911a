"""`proctor runs | history | compare | leaderboard | record` — the run history and honest comparisons."""

from __future__ import annotations

import json
import os
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..analysis.compare import compare_family
from ..analysis.leaderboard import leaderboards
from ..metrics.money import format_money
from ..run.store import Store, default_store_path, load_run_scores
from ..stats.comparison import p_cell, points
from ..stats.family import CORRECTION_NAMES
from ..util.errors import InputError
from ..util.termsafe import escape_control, rich_safe
from ..util.textio import write_json_atomic
from . import options
from .messages import warning
from .tables import show, whole_table

if TYPE_CHECKING:
    from ..analysis.corrected import CorrectedDifference
    from ..analysis.leaderboard import Leaderboard
    from ..core.results import MetricBlock
    from ..run.store import RunRecord, RunScores
    from ..stats.comparison import Comparison, RunRef

StoreOpt = options.Store
JsonOpt = options.Json
NBootOpt = options.NBoot
SeedOpt = options.BootSeed
OldSeed = Annotated[int | None, options.old_spelling("--seed", "N")]
HumanLabelsOpt = Annotated[list[str] | None, typer.Option(
    "--human-labels", metavar="[RUN=]FILE",
    help="Human verdicts on a run's items (JSON Lines or CSV: docs/statistics.md); RUN=FILE names the run as "
         "given, FILE alone with one run; repeatable (default: each run's own, from `run --human-labels`).")]
_RUNS = """  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:first -o runs/mmlu-first
  proctor run mmlu-pro --data-file examples/upstream/mmlu_pro --model scripted:random -o runs/mmlu-random
"""
RUNS_EXAMPLES = f"Examples (two runs on the bundled examples, then):\n\n{_RUNS}  proctor runs --dataset mmlu-pro\n"
HISTORY_EXAMPLES = f"Examples:\n\n{_RUNS}  proctor history --model scripted:first --dataset mmlu-pro --by category\n"
COMPARE_EXAMPLES = f"Examples:\n\n{_RUNS}  proctor compare runs/mmlu-first runs/mmlu-random\n"
LEADERBOARD_EXAMPLES = f"Examples:\n\n{_RUNS}  proctor leaderboard mmlu-pro --mode generate\n"
RECORD_EXAMPLES = f"Examples:\n\n{_RUNS}  proctor record runs/mmlu-first runs/mmlu-random --store out/other.sqlite\n"


def _store(path: Path | None, must_exist: bool = True) -> Any:
    """Open the store; a missing one is an error for reads (nothing recorded) rather than silently created."""
    p = path or default_store_path()
    if must_exist and not p.exists():
        raise InputError.at(p, "no run history here yet (runs are recorded when they finish)")
    return Store(p)


def _console() -> Console:
    """Rich console on stdout; piped output gets wide lines rather than truncated cells, unless $COLUMNS
    says how wide (then tables fit it, as on a terminal of that width)."""
    con = Console()
    return con if con.is_terminal or os.environ.get("COLUMNS") else Console(width=max(con.width, 160))


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _ci(lo: float | None, hi: float | None) -> str:
    return "–" if lo is None or hi is None else f"[{100 * lo:.1f}, {100 * hi:.1f}]"


def _when(iso: str) -> str:
    return iso[:16].replace("T", " ")


def _acc(acc: float | None, lo: float | None, hi: float | None) -> str:
    return _pct(acc) if lo is None or hi is None else f"{_pct(acc)} {_ci(lo, hi)}"


def _cost(r: RunRecord) -> str:
    """A run's cost and cost per correct answer, to the cent; "–" when no prices were known."""
    from decimal import Decimal


    if r.cost is None:
        return "–"
    currency = r.currency or "USD"
    per = format_money(Decimal(r.cost_per_correct), currency) if r.cost_per_correct is not None else "n/a"
    return rich_safe(f"{format_money(Decimal(r.cost), currency)} ({per})")  # a currency name from a price file


def _echo_json(data: Any) -> None:
    typer.echo(json.dumps(data, indent=2, ensure_ascii=False, default=str))


def _print_warnings(warnings: list[str]) -> None:
    for w in warnings:
        warning(w)


def runs(
    model: options.ModelFilter = None,
    dataset: options.DatasetFilter = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List recorded runs, newest first, each with its setting (mode, prompt, generation settings)."""
    with _store(store) as st:
        recs = st.list_runs(model=model, dataset=dataset)
    if as_json:
        _echo_json([r.to_dict() for r in recs])
        return
    if not recs:
        typer.echo("no recorded runs match")
        return
    con = _console()
    con.print(runs_view(recs, con))


def runs_view(recs: list[RunRecord], console: Console) -> RenderableType:
    """The runs as a table when it fits the console unwrapped, else one short block per run (run id, start,
    model; dataset, revision, setting; n, accuracy, cost): nothing cut, a run id always whole."""
    table = _runs_table(recs)
    if Measurement.get(console, console.options.update_width(1 << 16), table).maximum <= console.width:
        return table  # its natural width: a table measured at the console's width is never wider
    blocks = [Text(f"{len(recs)} run(s), newest first", style="bold")]
    for r in recs:
        revision = f" (revision {r.dataset_revision[:12]})" if r.dataset_revision else ""
        cost = f" · cost {_cost(r)}" if r.cost is not None else ""
        blocks.append(Text.assemble(
            (r.run_id[:12], "bold"), f"  {_when(r.started_at)}  ", escape_control(r.model),
            f"\n  {escape_control(r.dataset)}{escape_control(revision)} · {escape_control(r.setting_label)}",
            f"\n  n {_n(r)} · accuracy {_acc_line(r)}{cost}",
            overflow="fold"))
    return Group(*blocks)


def _n(r: RunRecord) -> str:
    """Items scored, and a partial run's mark: `150 (partial 150/400)`."""
    return f"{r.n_scored or 0}" + (f" ({r.partial_label})" if r.partial is not None else "")


def _acc_line(r: RunRecord) -> str:
    """`50.0% [9.5, 90.5]` (95% CI), or `–` when nothing was scored."""
    if r.accuracy is None:
        return "–"
    return f"{_pct(r.accuracy)}%" + (f" {_ci(r.ci_low, r.ci_high)}" if r.ci_low is not None and r.ci_high is not None else "")


def _runs_table(recs: list[RunRecord]) -> Table:
    """One row a run; the revision and cost columns only when some run has one."""
    t = Table(title=f"{len(recs)} run(s)")
    t.add_column("run id", no_wrap=True)
    t.add_column("started", no_wrap=True)
    t.add_column("model", no_wrap=True)  # a spec is one token: never cut nor broken (the setting wraps instead)
    revisions = any(r.dataset_revision for r in recs)
    costs = any(r.cost is not None for r in recs)
    for col in ("dataset", *(["revision"] if revisions else []), "setting"):
        t.add_column(col)
    t.add_column("n", justify="right", no_wrap=True)
    t.add_column("accuracy % [95% CI]", justify="right", no_wrap=True)
    if costs:
        t.add_column("cost (per correct)", justify="right", no_wrap=True)
    for r in recs:
        t.add_row(r.run_id[:12], _when(r.started_at), rich_safe(r.model), rich_safe(r.dataset),
                  *([rich_safe((r.dataset_revision or "–")[:12])] if revisions else []), rich_safe(r.setting_label),
                  _n(r), _acc(r.accuracy, r.ci_low, r.ci_high), *([_cost(r)] if costs else []))
    return t


def history(
    model: Annotated[str, typer.Option(
        "--model", "-m", metavar="SPEC", show_default=False, help="Model spec, as `proctor runs` shows it.")],
    dataset: Annotated[str, typer.Option(
        "--dataset", "-d", metavar="NAME", show_default=False, help="Dataset name, as `proctor runs` shows it.")],
    by: Annotated[str | None, typer.Option(
        "--by", metavar="category|modality", help="Break the accuracy down (default: overall only).")] = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Accuracy of one model on one dataset over time, overall or by category / modality."""
    if by not in (None, "category", "modality"):
        raise InputError.at("--by", f"expected 'category' or 'modality', got {by!r}")
    with _store(store) as st:
        recs = st.history(model, dataset)
        known = sorted({r.model for r in st.list_runs(dataset=dataset)}) if not recs else []
    if not recs:
        hint = f"; models recorded on it: {', '.join(known)}" if known else " (`proctor runs` lists them)"
        raise InputError.at(f"{model} on {dataset}", f"no recorded runs{hint}")
    if as_json:
        _echo_json([r.to_dict() for r in recs])
        return
    t = whole_table(f"{rich_safe(model)} on {rich_safe(dataset)}" + (f", by {by}" if by else ""))
    t.add_column("started", no_wrap=True)
    t.add_column("run id", no_wrap=True)
    t.add_column("revision")
    t.add_column("setting")
    t.add_column("overall %", justify="right")
    if by is None:
        t.add_column("95% CI", no_wrap=True)
        t.add_column("n", justify="right")
        t.add_column("cost (per correct)", justify="right", no_wrap=True)
        for r in recs:
            t.add_row(*_history_cells(r), _ci(r.ci_low, r.ci_high), _n(r), _cost(r))
    else:
        groups = sorted({g for r in recs for g in _breakdown(r, by)})
        for g in groups:
            t.add_column(f"{g} %", justify="right")
        for r in recs:
            table = _breakdown(r, by)
            t.add_row(*_history_cells(r, marked=True),
                      *(_pct(table[g].accuracy) if g in table else "–" for g in groups))
    show(t, [str(c.header) for c in t.columns if str(c.header) not in ("revision", "setting")], _console())


def _history_cells(r: RunRecord, marked: bool = False) -> list[str]:
    """started, run id, revision, setting (`marked`: with a partial run's mark) and overall % of one recorded run."""
    setting = " · ".join(p for p in (r.setting_label, r.partial_label if marked else None) if p)
    return [_when(r.started_at), r.run_id[:12], rich_safe((r.dataset_revision or "–")[:12]), rich_safe(setting),
            _pct(r.accuracy)]


def _breakdown(r: RunRecord, by: str) -> dict[str, MetricBlock]:
    return r.by_category if by == "category" else r.by_modality


def compare(
    runs: Annotated[list[str], typer.Argument(
        metavar="RUN...", show_default=False,
        help="Run directories or recorded run ids (a unique prefix will do): two or more.")],
    baseline: Annotated[str | None, typer.Option(
        "--baseline", metavar="RUN", help="Compare each RUN against this one (default: every pair).")] = None,
    correction: Annotated[str, typer.Option(
        "--correction", metavar="holm|bh",
        help="Multiple-comparison correction over the family: Holm (family-wise error) or Benjamini–Hochberg "
             "(false discovery rate).")] = "holm",
    mix_settings: Annotated[bool, typer.Option(
        "--mix-settings", help="Compare runs of the same items under different settings (warned).")] = False,
    store: StoreOpt = None,
    n_boot: NBootOpt = 2000,
    boot_seed: SeedOpt = 0,
    seed: OldSeed = None,
    as_json: JsonOpt = False,
    save: Annotated[Path | None, typer.Option(
        "--save", metavar="FILE", help="Also write the comparison record (the --json figures) to FILE (default: not written).")] = None,
    human_labels: HumanLabelsOpt = None,
) -> None:
    """Compare runs on their shared items: each difference with a paired 95% interval, McNemar's exact test
    (adjusted for the family of comparisons), the smallest difference the items can detect, and a verdict.
    With human labels on both runs of a pair (--human-labels, or the runs' own), also the judge-corrected
    difference with its interval."""
    seed = options.prefer(boot_seed, seed, "--seed", "--boot-seed")
    if correction not in ("holm", "bh"):
        raise InputError.at("--correction", f"expected holm or bh, got {correction!r}")
    if len(runs) + (baseline is not None) < 2:
        raise InputError.at("RUN", "give at least two runs (or one and --baseline)")
    with maybe_store(store) as st:
        loaded = [load_run_scores(r, st) for r in runs]
        base = load_run_scores(baseline, st) if baseline is not None else None
    family = compare_family(loaded, base, correction, mix_settings,  # type: ignore[arg-type]  # checked above
                            n_boot=n_boot, seed=seed)
    given = [*zip(runs, loaded), *([(baseline, base)] if baseline is not None and base is not None else [])]
    corrected = _corrected(family.comparisons, given, human_labels or [])
    single = family.comparisons[0] if len(family.comparisons) == 1 and base is None else None
    record = single.to_dict() if single is not None else family.to_dict()
    if any(c is not None for c in corrected):
        record["judge_corrected"] = (corrected[0].model_dump(mode="json") if single is not None and corrected[0]
                                     else [c.model_dump(mode="json") if c else None for c in corrected])
    if save is not None:
        write_json_atomic(save, record)
    if as_json:
        _echo_json(record)
        return
    if single is not None:
        _print_comparison(single)
    else:
        _print_family(family.comparisons, family.correction)
    for c, cd in zip(family.comparisons, corrected, strict=True):
        if cd is not None:
            who = "" if single is not None else f"{escape_control(c.a.model)} vs {escape_control(c.b.model)}: "
            _console().print(who + cd.text(), markup=False)


def _corrected(comparisons: list[Comparison], given: list[tuple[str, RunScores]],
               flags: list[str]) -> list[CorrectedDifference | None]:
    """Each comparison's judge-corrected difference when both its runs have labels (None otherwise)."""
    from ..analysis.corrected import corrected_difference, labels_by_run, run_labels

    files = labels_by_run(flags, [ref for ref, _ in given]) if flags else {}
    labels = {scores.run.run_id: got for ref, scores in given if (got := run_labels(scores, files.get(ref)))}
    by_id = {scores.run.run_id: scores for _, scores in given}
    return [corrected_difference(by_id[c.a.run_id], by_id[c.b.run_id], labels[c.a.run_id], labels[c.b.run_id])
            if c.a.run_id in labels and c.b.run_id in labels else None for c in comparisons]


def maybe_store(path: Path | None) -> Any:
    """The store when it exists (run ids resolve through it), else a stand-in that resolves directories only."""
    sp = path or default_store_path()
    return _store(sp) if sp.exists() else nullcontext(None)


def run_dir_of(ref: str, store: Path | None, flag: str = "") -> Path:
    """A run directory given as itself or as a run id recorded in the history (`flag`: the option it was given
    to, named in the error)."""
    if Path(ref).is_dir():
        return Path(ref)
    with maybe_store(store) as st:
        rec = st.find_run(ref) if st is not None else None
    if rec is None:
        raise InputError.at(ref, f"{flag + ': ' if flag else ''}not a run directory nor a run id recorded in the "
                                 "history")
    return Path(rec.path)


def _print_comparison(cmp: Comparison) -> None:
    """Two runs: who each is, the table overall and per category, the verdict, what was left out, warnings."""
    con = _console()
    for name, r in (("A", cmp.a), ("B", cmp.b)):
        con.print(f"{name}: {rich_safe(r.model)} · {rich_safe(r.shown_setting)}  ({r.run_id[:12]}, {_when(r.started_at)}): "
                  f"{r.accuracy_text()}")
    show(comparison_table(cmp), COMPARISON_WHOLE, con)
    con.print(cmp.verdict, markup=False)
    if cmp.only_in_a or cmp.only_in_b:
        con.print(f"left out: {len(cmp.only_in_a)} item(s) only in A, {len(cmp.only_in_b)} only in B")
    _print_warnings(cmp.warnings)


def family_table(comparisons: list[Comparison], correction: str) -> Table:
    """One row per pair: the overall difference, its interval, raw and adjusted p, the MDE and the verdict word."""
    t = whole_table(f"{len(comparisons)} paired comparisons ({CORRECTION_NAMES.get(correction, correction)}"
                    "-adjusted McNemar p; 95% CI; MDE at 80% power)")
    for col in ("A", "B", "n", "A − B", "95% CI", "p", "adj. p", "MDE", "verdict"):
        t.add_column(col, justify="left" if col in ("A", "B", "verdict") else "right")
    for c in comparisons:
        g = c.overall
        t.add_row(_side(c.a), _side(c.b),
                  str(g.n), points(g.diff), g.interval_text(), p_cell(g.p_value), p_cell(g.p_decisive),
                  g.mde_text(), verdict_word(g))
    return t


def _side(r: RunRef) -> str:
    """A side of a family row: its model, short run id and a partial run's mark."""
    return rich_safe(r.model) + f"\n({r.run_id[:8]}{', ' + r.partial if r.partial else ''})"


def verdict_word(g: Any) -> str:
    """detected / borderline / underpowered / no difference: the verdict of a paired difference in one word."""
    if g.detected:
        return "A ahead" if g.diff > 0 else "B ahead"
    return "borderline" if g.borderline else "underpowered" if g.underpowered else "no difference"


def _print_family(comparisons: list[Comparison], correction: str) -> None:
    """Many runs: one row per pair, then each pair's verdict and the per-category differences detected."""
    con = _console()
    table = family_table(comparisons, correction)
    show(table, [str(c.header) for c in table.columns], con)  # model names, ids, numbers: all whole
    for c in comparisons:
        con.print(escape_control(c.verdict), markup=False)
        for g in c.by_category:
            if g.detected:
                con.print(f"  {escape_control(g.group)}: {escape_control(g.verdict(c.a.model, c.b.model))}",
                          markup=False)
    _print_warnings(sorted({w for c in comparisons for w in c.warnings}))


COMPARISON_WHOLE = ("n", "A %", "B %", "A − B", "95% CI", "A✗B✓", "A✓B✗", "p", "adj. p", "MDE")  # the group folds


def comparison_table(cmp: Comparison) -> Table:
    """A − B overall and per category: the figures of the typed record, as every output shows them."""
    adjusted = any(g.family_size > 1 for g in cmp.by_category)
    t = whole_table(f"A − B on {cmp.overall.n:,} shared item(s) (paired 95% CI, McNemar's exact test"
                    + (", categories Holm-adjusted" if adjusted and cmp.by_category[0].correction == "holm" else
                       ", categories BH-adjusted" if adjusted else "") + "; MDE: detectable at 80% power)")
    cols = ("group", "n", "A %", "B %", "A − B", "95% CI", "A✗B✓", "A✓B✗", "p", *(("adj. p",) if adjusted else ()),
            "MDE")
    for col in cols:
        t.add_column(col, justify="left" if col == "group" else "right")
    for g in [cmp.overall, *cmp.by_category]:
        t.add_row(rich_safe(g.group), str(g.n), _pct(g.acc_a), _pct(g.acc_b), points(g.diff), g.interval_text(),
                  str(g.b01), str(g.b10), p_cell(g.p_value), *((p_cell(g.p_decisive),) if adjusted else ()),
                  g.mde_text(), style="bold" if g.group == "overall" else None)
    return t


def leaderboard(
    dataset: Annotated[str, typer.Argument(
        metavar="DATASET", show_default=False, help="Dataset name, as `proctor runs` shows it.")],
    mode: Annotated[str | None, typer.Option(
        metavar="generate|logprob", help="Only runs of this mode (default: every mode, one board each).")] = None,
    prompt: Annotated[str | None, typer.Option(
        metavar="KIND", help="Only runs with this prompt kind (default: every kind, one board each).")] = None,
    mix_settings: Annotated[bool, typer.Option(
        "--mix-settings", help="Rank each model's latest run together whatever its setting (warned).")] = False,
    store: StoreOpt = None,
    n_boot: NBootOpt = 2000,
    boot_seed: SeedOpt = 0,
    seed: OldSeed = None,
    as_json: JsonOpt = False,
) -> None:
    """Rank models on DATASET, one board per setting, with the winner's selection-adjusted score.

    A board ranks each model's latest run of one setting (mode, prompt, epochs, generation settings):
    runs of different settings are never ranked together unless --mix-settings asks for it."""
    seed = options.prefer(boot_seed, seed, "--seed", "--boot-seed")
    with _store(store) as st:
        boards = leaderboards(st, dataset, n_boot=n_boot, seed=seed, mix_settings=mix_settings, mode=mode,
                              prompt=prompt)
    if as_json:
        _echo_json([b.to_dict() for b in boards])
        return
    for board in boards:
        _print_board(board)


def _print_board(lb: Leaderboard) -> None:
    """One setting's ranking, its winner's adjusted score, and its warnings."""
    con = _console()
    mixed = len({e.setting for e in lb.entries}) > 1
    t = whole_table(f"{rich_safe(lb.dataset)} · {rich_safe(lb.setting)}: {len(lb.entries)} model(s) on "
                    f"{lb.n_items} shared item(s)")
    cols = ("#", "model", *(("setting",) if mixed else ()), "score %", "95% CI", "run id", "started")
    for col in cols:
        t.add_column(col, justify="right" if col in ("#", "score %") else "left")
    for e in lb.entries:
        t.add_row(str(e.rank), rich_safe(e.model), *((rich_safe(e.setting),) if mixed else ()), _pct(e.score),
                  _ci(e.ci_low, e.ci_high), e.run_id[:12], _when(e.started_at))
    show(t, [c for c in cols if c != "setting"], con)
    con.print(winner_line(lb), markup=False)
    if lb.top_vs_next is not None:
        con.print(f"#1 vs #2: {escape_control(lb.top_vs_next.verdict)}", markup=False)
    for c in lb.comparisons[1:]:  # the rest of the board's family, Holm-adjusted with #1 vs #2
        con.print(f"{escape_control(c.a.model)} vs {escape_control(c.b.model)}: {escape_control(c.verdict)}",
                  markup=False)
    _print_warnings(lb.warnings)


def winner_line(lb: Leaderboard) -> str:
    """The winner's observed and selection-adjusted score; no correction where nothing was selected."""
    top = escape_control(lb.top)  # a model name from data
    if not lb.selected:
        why = "one model" if len(lb.entries) == 1 else "every model tied"
        return f"top: {top} — observed {_pct(lb.observed)}% (no winner's-curse correction: {why})"
    return (f"top: {top} — observed {_pct(lb.observed)}%, selection-adjusted {_pct(lb.adjusted)}% "
            f"(winner's-curse correction {points(-lb.bias)} points); P(stays on top) = {lb.p_top_stays_top:.2f}")


def record(
    run_dirs: Annotated[list[Path], typer.Argument(
        metavar="RUN_DIR...", show_default=False, help="Finished run directories.")],
    store: StoreOpt = None,
) -> None:
    """Record finished run directories in the history (runs record themselves; this imports old or copied ones)."""
    with _store(store, must_exist=False) as st:
        for d in run_dirs:
            rec = st.record_run(d)
            typer.echo(f"recorded {rec.run_id[:12]}  {rec.model} on {rec.dataset} · {rec.setting_label}: "
                       f"accuracy {_pct(rec.accuracy)}%")


def register(app: typer.Typer) -> None:
    """Add this module's commands to `app`."""
    app.command(epilog=RUNS_EXAMPLES)(runs)
    app.command(epilog=HISTORY_EXAMPLES)(history)
    app.command(epilog=COMPARE_EXAMPLES)(compare)
    app.command(epilog=LEADERBOARD_EXAMPLES)(leaderboard)
    app.command(epilog=RECORD_EXAMPLES)(record)
