"""Print a run's results as rich tables (overall, breakdowns, and every registered metric beyond them)."""

from __future__ import annotations

import sys

from ..core.results import MetricBlock, MetricValue, Results
from ..log.runlog import RunLog
from ..metrics.accuracy import clustering_text
from ..metrics.answer_reading import levels_line
from ..metrics.judge_corrected import corrected_lines
from ..metrics.money import cost_line
from ..run.runner import accuracy_line
from ..util.termsafe import rich_safe


def _fmt(m: MetricBlock) -> tuple[str, str, str, str, str, str]:
    trunc = f"{m.truncated_rate:.1%}" if m.truncated_rate is not None else ""
    if m.accuracy is None:
        return ("n/a", "", str(m.n_scored), str(m.n_errors), "", trunc)
    return (
        f"{m.accuracy:.3f}",
        f"[{m.ci_low or 0:.3f}, {m.ci_high or 0:.3f}]",
        str(m.n_scored),
        str(m.n_errors),
        f"{m.no_answer_rate or 0:.1%}",
        trunc,
    )


def _fmt_value(v: MetricValue) -> tuple[str, str, str, str, str, str]:
    """A registered metric's row: its value, interval and n (the error and rate columns are accuracy's)."""
    if v.value is None:
        return ("n/a", "", str(v.n), "", "", "")
    ci = f"[{v.ci_low:.3f}, {v.ci_high:.3f}]" if v.ci_low is not None and v.ci_high is not None else ""
    return (f"{v.value:.3f}", ci, str(v.n), "", "", "")


def finished_line(log: RunLog) -> str:
    """`mmlu-pro: accuracy 0.429 [0.158, 0.750] n=7 · 7 of 7 requests from the cache  → runs/x`: the cache's
    share is said whenever it answered something (model or judge), so old answers are never passed off as new."""
    cache = log.cache.text() if log.cache is not None else None
    line = accuracy_line(log.results) if log.results is not None else "no results"
    return f"{log.manifest.dataset.name or 'run'}: {line}{' · ' + cache if cache else ''}  → {log.path}"


def print_results(log: RunLog) -> None:
    from rich.console import Console
    from rich.table import Table

    results = log.results or Results()
    console = Console(width=None if sys.stdout.isatty() else 110)
    title = rich_safe(f"{log.manifest.dataset.name} · {log.manifest.model.spec} · {log.manifest.mode}")
    table = Table(title=title, title_justify="left")
    for col in ("group", "accuracy", "95% CI", "scored", "errors", "no answer", "truncated"):
        table.add_column(col, justify="left" if col == "group" else "right")
    table.add_row("overall", *_fmt(results.overall), style="bold")
    if results.acc_norm is not None:
        table.add_row("acc_norm (per char)", *_fmt(results.acc_norm))
    for name, groups in (("category", results.by_category), ("modality", results.by_modality),
                         ("difficulty", results.by_difficulty)):
        if len(groups) > 1:
            for group, m in groups.items():
                table.add_row(f"{name}: {rich_safe(group)}", *_fmt(m))  # names from data: never markup
    if results.macro_accuracy is not None:
        table.add_row("macro (categories)", f"{results.macro_accuracy:.3f}", "", "", "", "", "")
    for name, value in results.metrics.items():
        table.add_row(rich_safe(name), *_fmt_value(value))
    console.print(table)
    for line in reasoning_lines(results):
        console.print(rich_safe(line))  # the cost line carries a currency name from a price file
    agreement = results.judge_agreement
    if agreement is not None and agreement.agreement is not None:
        kappa = agreement.kappa
        console.print(
            f"judge agrees with exact match on {agreement.agreement:.0%} of {agreement.n} checked items"
            + (f" (Cohen's κ {kappa:.2f})" if kappa is not None else "")
        )


def reasoning_lines(results: Results) -> list[str]:
    """Truncation (and how accuracy counted it), repeats (mean@k, pass@k, spread) and cost, one line each."""
    lines = []
    overall = results.overall
    if overall.n_truncated:
        lines.append(f"truncated: {overall.n_truncated} answers ({overall.truncated_rate or 0.0:.1%}) hit the token "
                     f"limit or never closed their thought; counted as {results.truncated_as or 'wrong'} "
                     "(--truncated-as)" + truncation_bounds_text(overall))
    if overall.agent_stops:  # trajectories (docs/agents.md): how each ended
        lines.append("trajectories: " + ", ".join(f"{stop} {n} ({overall.agent_stop_rates.get(stop, 0.0):.1%})"
                                                  for stop, n in overall.agent_stops.items()))
    lines += answer_reading_lines(results)
    lines += cluster_lines(results)
    ep = results.epochs
    if ep is not None and ep.mean_at_k is not None:
        spread = ep.item_sd_mean
        lines.append(f"{ep.k} epochs: mean@{ep.k} {ep.mean_at_k:.3f}, pass@{ep.k} {ep.pass_at_k or 0:.3f}"
                     + (f", per-item spread (sd) {spread:.3f}" if spread is not None else ""))
    if ep is not None and ep.pass_at:
        lines.append("pass@k: " + ", ".join(
            f"@{k} {v.value:.3f}" + (f" [{v.ci_low:.3f}, {v.ci_high:.3f}]" if v.ci_low is not None
                                     and v.ci_high is not None else "")
            for k, v in ep.pass_at.items() if v.value is not None))
    if results.cost is not None:
        lines.append(cost_line(results.cost))
    if results.judge_corrected is not None:
        lines += corrected_lines(results.judge_corrected)
    return lines


def cluster_lines(results: Results) -> list[str]:
    """How the overall interval was clustered (`--cluster`): the clusters, the design effect and the df, or the
    note that says why items stayed the unit (few clusters, no variance, every item its own cluster)."""
    o = results.overall
    if results.cluster is None or o.n_clusters is None:
        return []
    return [f"clustered by {results.cluster}: {clustering_text(o)}"]


def truncation_bounds_text(o: MetricBlock) -> str:
    """"; accuracy 0.400 if every truncated answer is wrong … 0.733 if every one is right" (empty: no bounds)."""
    if o.truncated_low is None or o.truncated_high is None:
        return ""
    return f"; accuracy {o.truncated_low:.3f} if every one is wrong … {o.truncated_high:.3f} if every one is right"


def answer_reading_lines(results: Results) -> list[str]:
    """The ambiguous rate (reference rule vs proctor's reader) and how unanswered items were counted."""
    overall = results.overall
    lines = []
    if overall.ambiguous_rate is not None:
        lines.append(f"ambiguous: {overall.n_ambiguous} answers ({overall.ambiguous_rate:.1%}) read "
                     f"differently by the benchmark's reference rule and proctor's reader; scored by "
                     f"{results.extract or 'reference'} (--extract)")
    if results.no_answer == "guess" and overall.n_no_answer:
        lines.append(f"no answer: {overall.n_no_answer} answers credited 1/k, the expected value of a guess "
                     "(--no-answer guess)")
    if results.answer_reading is not None:
        lines.append(levels_line(results.answer_reading))
    return lines

