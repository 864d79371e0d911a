"""The report as Markdown: the headline and breakdown tables, for terminals and pull requests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.results import MetricBlock, MetricValue
from ..metrics.answer_reading import levels_line
from ..metrics.money import cost_line
from ..stats.comparison import p_cell, points
from .data import BANDS, ReportData, RunSummary, confusion_matrix
from .html import _fmt_duration, _fmt_int, run_names
from .labels import facets, title
from .plots import _pct


def _cell(v: object) -> str:
    """Escape what would break a table cell or render as markup."""
    s = " ".join(str(v).split()).replace("&", "&amp;")
    for ch in "\\|`*_[]<>":
        s = s.replace(ch, "\\" + ch)
    return s


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], right: set[int]) -> list[str]:
    out = ["| " + " | ".join(header) + " |"]
    out.append("|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|")
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _acc_ci(m: MetricBlock | None) -> str:
    if m is None or m.accuracy is None:
        return "—"
    return f"{_pct(m.accuracy)} [{_pct(m.ci_low)}, {_pct(m.ci_high)}] n={m.n_scored}"


def _value_ci(v: MetricValue | None) -> str:
    """A registered metric's value with its interval and n: `0.610 [0.520, 0.690] n=118`; — when there is none."""
    if v is None or v.value is None:
        return "—"
    ci = f" [{v.ci_low:.3f}, {v.ci_high:.3f}]" if v.ci_low is not None and v.ci_high is not None else ""
    return f"{v.value:.3f}{ci} n={v.n}"


def _breakdown(title: str, keys: Sequence[str], runs: Sequence[RunSummary], attr: str) -> list[str]:
    rows = [[_cell(k)] + [_acc_ci(getattr(r.results, attr).get(k)) for r in runs] for k in keys]
    if not rows:
        return []
    names = [_cell(n) for n in run_names(runs)]
    return ["", f"## {title}", ""] + _table([title.split()[-1].capitalize(), *names], rows, set(range(1, len(runs) + 1)))


def _num(x: object) -> str:
    return f"{x:.2f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "—"


def _epochs_and_judge(runs: Sequence[RunSummary]) -> list[str]:
    """One line per run for mean@k / pass@k and judge agreement, then each judge's confusion table."""
    out: list[str] = []
    names = dict(zip((r.index for r in runs), run_names(runs)))
    for r in runs:
        if ep := r.results.epochs:
            spread = ep.items_by_correct
            out.append(f"- {_cell(names[r.index])}: mean@{ep.k} {_pct(ep.mean_at_k)}, pass@{ep.k} {_pct(ep.pass_at_k)}"
                       + (f"; per-item sd {_num(ep.item_sd_mean)}; items right in 0…{ep.k} epochs: "
                          + " / ".join(str(n) for n in spread.values()) if spread else ""))
            if ep.pass_at:
                out.append(f"- {_cell(names[r.index])}: " + ", ".join(
                    f"pass@{k} {_pct(v.value)} [{_pct(v.ci_low)}, {_pct(v.ci_high)}]" for k, v in ep.pass_at.items()))
        if ja := r.results.judge_agreement:
            out.append(f"- {_cell(names[r.index])}: judge agrees with exact match on {_pct(ja.agreement)} "
                       f"of {_fmt_int(ja.n)} items, Cohen's κ {_num(ja.kappa)} ({_fmt_int(ja.n_skipped)} skipped)")
    if out:
        out = [""] + out
    for r in runs:
        labels, rows = confusion_matrix(r.results.judge_agreement.confusion if r.results.judge_agreement else {})
        if labels:
            out += ["", f"### Judge vs exact match: {_cell(names[r.index])}", ""]
            out += _table(["judge ↓ / exact →", *labels], [[lab, *map(str, row)] for lab, row in zip(labels, rows)],
                          set(range(1, len(labels) + 1)))
    return out


def _judge_corrected(runs: Sequence[RunSummary]) -> list[str]:
    """The judge-corrected accuracy (human labels, prediction-powered inference) beside the judge's, per run."""
    labelled = [r for r in runs if r.results.judge_corrected is not None]
    if not labelled:
        return []
    names = dict(zip((r.index for r in runs), run_names(runs)))
    rows = []
    for r in labelled:
        jc = r.results.judge_corrected
        assert jc is not None
        a = jc.agreement
        rows.append([_cell(names[r.index]), _pct(jc.judge_accuracy), _pct(jc.accuracy),
                     f"[{_pct(jc.ci_low)}, {_pct(jc.ci_high)}]", f"{_fmt_int(jc.n_labelled)} / {_fmt_int(jc.n)}",
                     _pct(a.agreement), _num(a.kappa), _num(a.alpha),
                     " · ".join(f"{k} {v}" for k, v in a.confusion.items()) or "—"])
    out = ["", "## Judge-corrected accuracy (human labels)", "",
           ("Prediction-powered inference (PPI++, Angelopoulos et al. 2023): the run's verdicts on every sample, "
           "corrected by human labels on some (docs/statistics.md)."), ""]
    out += _table(["Run", "Judge", "Corrected", "95% CI", "Labelled / scored", "Agreement", "Cohen's κ",
                   "Krippendorff's α", "judge/human"], rows, {1, 2, 4, 5, 6, 7})
    notes = [f"- {_cell(names[r.index])}: {_cell(r.results.judge_corrected.note)}" for r in labelled
             if r.results.judge_corrected is not None and r.results.judge_corrected.note]
    return out + ([""] + notes if notes else [])


def _truncation_and_cost(runs: Sequence[RunSummary]) -> list[str]:
    """Truncated answers (overall and per category, and how accuracy counted them) and cost, per run."""
    names = dict(zip((r.index for r in runs), run_names(runs)))
    out: list[str] = []
    for r in runs:
        o = r.results.overall
        if o.n_truncated:
            cats = ", ".join(f"{_cell(c)} {_pct(m.truncated_rate)}" for c, m in r.results.by_category.items() if m.n_truncated)
            out.append(f"- {_cell(names[r.index])}: {_pct(o.truncated_rate)} of answers truncated "
                       f"({_fmt_int(o.n_truncated)}; token limit or unclosed thought), counted as "
                       f"{r.truncated_as} in accuracy" + (f"; by category: {cats}" if cats else "")
                       + (f"; accuracy {_pct(o.truncated_low)} if every one is wrong … {_pct(o.truncated_high)} if "
                          "every one is right" if o.truncated_low is not None else ""))
        if r.results.cost:
            out.append(f"- {_cell(names[r.index])}: {cost_line(r.results.cost)}")
    return ["", "## Truncation and cost", "", *out] if out else []


def _answer_reading(runs: Sequence[RunSummary]) -> list[str]:
    """Each run's ambiguous rate: answers its benchmark's reference rule and proctor's reader read apart."""
    names = dict(zip((r.index for r in runs), run_names(runs)))
    out = [f"- {_cell(names[r.index])}: {_pct(r.results.overall.ambiguous_rate)} of answers ambiguous "
           f"({_fmt_int(r.results.overall.n_ambiguous)}; the benchmark's reference rule and proctor's reader disagree), "
           f"scored by {r.log.manifest.extract or 'reference'}"
           for r in runs if r.results.overall.ambiguous_rate is not None]
    out += [f"- {_cell(names[r.index])}: {_cell(levels_line(r.results.answer_reading))}"
            for r in runs if r.results.answer_reading is not None]
    return ["", "## Answer reading", "", *out] if out else []


def _more_metrics(runs: Sequence[RunSummary]) -> list[str]:
    """The registered metrics beyond the built-ins (`results.json`'s `metrics`), one row each."""
    names = sorted({k for r in runs for k in r.results.metrics})
    rows = [[_cell(k)] + [_value_ci(r.results.metrics.get(k)) for r in runs] for k in names]
    if not rows:
        return []
    return ["", "## More metrics", ""] + _table(["Metric", *(_cell(n) for n in run_names(runs))], rows,
                                               set(range(1, len(runs) + 1)))


def _notices(data: ReportData) -> list[str]:
    """Directories skipped, duplicates shown once, and the runs that scored nothing (listed, not tabled)."""
    out = [f"- ⚠ {_cell(w)}" for w in data.warnings]
    out += [f"- scored nothing: {_cell(r.model)} · {_cell(r.dataset)} (run {r.log.manifest.run_id[:12]}, "
            f"{r.results.overall.n} samples, none scored)" for r in data.aborted]
    return [*out, ""] if out else []


def _agreements(pairs: Sequence[Any], names: Sequence[str]) -> list[str]:
    """How often each compared pair's answers agree (`proctor agree`): flips, identical outputs, log-prob deltas."""
    rows = []
    for p in pairs:
        ag = p.agreement
        if ag is None:
            continue
        lp = ag.logprob
        rows.append([_cell(names[p.a]), _cell(names[p.b]), _fmt_int(ag.n_paired),
                     f"{_fmt_int(ag.n_flips)} ({_pct(ag.flip_rate)} [{_pct(ag.flip_ci_low)}, {_pct(ag.flip_ci_high)}])",
                     _pct(ag.identical_share) if ag.identical_share is not None else "—",
                     f"{lp.max:.2e} / {lp.p99:.2e}" if lp is not None else "—"])
    if not rows:
        return []
    notes = [f"- {_cell(names[p.a])} / {_cell(names[p.b])}: {_cell(w)}" for p in pairs if p.agreement is not None
             for w in p.agreement.warnings]  # a side answered from the request cache measures nothing
    return ["", "#### Agreement", "", *_table(["A", "B", "Paired", "Answers that flip", "Identical outputs",
                                               "max / p99 Δ log p"], rows, {2, 3, 4, 5}), *([""] + notes if notes else [])]


def _comparison(data: ReportData) -> list[str]:
    """Each comparable group's paired comparisons (the records' figures and verdicts), then the runs set apart."""
    cmp = data.comparisons
    if cmp is None or not cmp.shown:
        return []
    names = run_names(data.runs)
    out = ["", "## Comparison", "",
           ("Paired, on the items both runs scored: A − B in points, 95% interval (Tango's score interval for 0/1 "
            "scores; a paired bootstrap with a Wilson floor for graded scores), McNemar's exact test, Holm-adjusted over "
            "each group's pairs; MDE: the smallest difference the shared items detect at 80% power.")]
    for g in cmp.groups:
        out += ["", f"### {_cell(g.label)}" + (" (the best against each of the rest)" if g.best_vs_rest else ""), ""]
        rows = [[_cell(names[p.a]), _cell(names[p.b]), _fmt_int(o.n), points(o.diff), o.interval_text(),
                 p_cell(o.p_value), p_cell(o.p_decisive), o.mde_text()] for p in g.pairs for o in [p.record.overall]]
        out += _table(["A", "B", "Shared", "A − B", "95% CI", "p", "Holm p", "MDE"], rows, {2, 3, 4, 5, 6, 7})
        out += [""] + [f"- {_cell(p.record.overall.verdict(names[p.a], names[p.b]))}" for p in g.pairs]
        out += [f"- {_cell(n)}" for n in g.notes]
        out += _agreements(g.pairs, names)
    if not cmp.groups:
        out += ["", "No two runs here can be compared: the runs that share a dataset differ in how they were run (below)."]
    if cmp.apart:
        out += ["", "### Not comparable", ""] + [f"- {_cell(names[a.run])}: {_cell(a.reason)}" for a in cmp.apart]
    if cmp.alone:
        out += ["", "Alone on their dataset, so compared with nothing: "
                + ", ".join(_cell(names[i]) for i in cmp.alone) + "."]
    return out


def render_markdown(data: ReportData) -> str:
    runs = data.runs
    head = ["Model", "Dataset", "Mode", "Prompt", "Settings", "Scored", "Accuracy", "95% CI", "Macro", "Errors", "No answer", "Tokens in / out", "Duration"]
    rows = []
    for r in runs:
        o = r.results.overall
        fs = {f.name: f.value for f in facets(r)}
        rows.append([
            _cell(r.model),
            _cell(r.dataset),
            *(_cell(fs.get(k, "—")) for k in ("mode", "prompt", "settings")),
            f"{_fmt_int(o.n_scored)} / {_fmt_int(o.n)}",
            _pct(o.accuracy),
            f"[{_pct(o.ci_low)}, {_pct(o.ci_high)}]" + (
                f" (naive [{_pct(o.naive_ci_low)}, {_pct(o.naive_ci_high)}])" if r.clustering and o.cluster_differs else ""),
            _pct(r.results.macro_accuracy),
            _fmt_int(o.n_errors),
            f"{_pct(o.no_answer_rate)} ({_fmt_int(o.n_no_answer)})",
            f"{_fmt_int(o.input_tokens)} / {_fmt_int(o.output_tokens)}",
            _fmt_duration(r.duration_s),
        ])
    counted = " / ".join(sorted({r.truncated_as for r in runs})) or "wrong"
    out = ["# proctor report", "", f"**{_cell(title(runs))}**", "",
           (f"Generated {data.generated_at}. Accuracy with 95% confidence intervals; "
            f"truncated answers count as {counted} (--truncated-as)."), ""]
    out += _notices(data)
    out += _table(head, rows, {5, 6, 8, 9, 10, 11, 12})
    clustered = [f"- {_cell(r.model)}: {_cell(r.clustering)}." for r in runs if r.clustering]
    out += ["", *clustered, ""] if clustered else []
    out += _comparison(data)
    out += _epochs_and_judge(runs)
    out += _judge_corrected(runs)
    out += _truncation_and_cost(runs)
    out += _answer_reading(runs)
    out += _more_metrics(runs)
    cats = sorted({c for r in runs for c in r.results.by_category})
    out += _breakdown("Accuracy by category", cats, runs, "by_category")
    bands = [b for b in (*BANDS, "unknown") if any(b in r.results.by_difficulty for r in runs)]
    out += _breakdown("Accuracy by difficulty", bands, runs, "by_difficulty")
    mods = sorted({m for r in runs for m in r.results.by_modality})
    if len(mods) > 1:
        out += _breakdown("Accuracy by modality", mods, runs, "by_modality")
    cal = [r for r in runs if r.calibration]
    if cal:
        out += ["", "## Calibration", ""]
        out += _table(
            ["Run", "Contexts", "Brier", "ECE", "Log loss"],
            [[_cell(run_names(runs)[r.index]), str(c.n), f"{c.brier:.3f}", f"{c.ece:.3f}", f"{c.log_loss:.3f}"]
             for r in cal if (c := r.calibration)],
            {1, 2, 3, 4},
        )
    for cov in data.coverage:
        flagged = [("category", x) for x in cov.categories if x.flag] + [("modality", x) for x in cov.modalities if x.flag]
        if flagged:
            out += ["", f"## Coverage: {_cell(cov.dataset)}", "", f"{cov.n_items} items; under- and over-represented groups:", ""]
            out += _table(["Group", "Kind", "Items", "Share", "Flag"],
                          [[_cell(x.name), kind, str(x.count), _pct(x.share), x.flag] for kind, x in flagged], {2, 3})
    return "\n".join(out) + "\n"
