"""The self-contained HTML report: jinja2 with autoescape, inline CSS/JS/SVG, samples as an embedded JSON blob.

Safety: every value goes through autoescape; samples travel as JSON inside
`<script type="application/json">` with `<`, `>` and `&` written as `\\u003c`… (so no `</script>` or
`<!--` can appear) and the page script renders them with `textContent` only. A Content-Security-Policy
allows only the page's own script (by hash) and no network at all.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import math
import random
import re
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import Any, TypedDict

from jinja2 import Environment, PackageLoader, select_autoescape
from markupsafe import Markup, escape

from ..core.results import Cost
from ..log.runlog import JudgeCheck, Sample, SampleDetails
from ..metrics.money import format_amount
from ..stats.comparison import p_cell, points
from . import labels as run_labels
from . import plots
from .data import BANDS, OptionScore, ReportData, RunSummary, confusion_matrix, option_scores
from .trajectory import calls_snippet, trajectory_row

PLAIN_LIMIT = 1_500_000  # bytes of sample JSON above which the blob is gzipped (+ base64)
MAX_DIST_ROWS = 60


def _static(name: str) -> str:
    return (resources.files("proctor.report") / "templates" / name).read_text(encoding="utf-8")


def json_for_script(data: object) -> str:
    """JSON that is safe inside a <script> element (like Django's json_script)."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Interner:
    """Shares repeated paragraphs (system prompts, few-shot examples) across samples."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self._ids: dict[str, int] = {}

    def text(self, s: str) -> list[int]:
        out = []
        for part in s.split("\n\n"):
            i = self._ids.get(part)
            if i is None:
                i = self._ids[part] = len(self.table)
                self.table.append(part)
            out.append(i)
        return out


def _ref(v: object) -> str:
    if v is None:
        return ""
    return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)


SNIPPET = 220


def _verdict(d: SampleDetails) -> dict[str, str] | None:
    """A judge's verdict from sample details: grade, reasoning and (when the judge thought) its thinking."""
    grade, reason, thinking = d.get("judge_grade"), d.get("judge_reasoning"), d.get("judge_thinking")
    if reason is None and grade is None:
        reason = d.get("judge_raw")
    out = {k: str(v) for k, v in (("g", grade), ("r", reason), ("t", thinking)) if v not in (None, "")}
    return out or None


def _judge_fields(details: SampleDetails) -> dict[str, dict[str, str]]:
    """Blob fields for the judge: "j" the verdict that scored the sample, "jc" the agreement check's."""
    out: dict[str, dict[str, str]] = {}
    if v := _verdict(details):
        out["j"] = v
    check = details.get("judge_check")
    if isinstance(check, JudgeCheck):
        out["jc"] = {**(_verdict(check.details) or {}), "o": check.outcome.value}
    return out


def _snippet(s: Sample, prompt: Sequence[Mapping[str, Any]]) -> str:
    """What the row shows when there is no output (log-probability runs): the context, else the prompt."""
    ctx = s.details.get("context")
    text = ctx if isinstance(ctx, str) and ctx else (str(prompt[-1].get("content", "")) if prompt else "")
    return " ".join(text[: SNIPPET * 4].split())[:SNIPPET]


def _finite(value: float) -> float | None:
    """A number JSON can carry (None for -inf or NaN: the browser shows —)."""
    return value if math.isfinite(value) else None


def logp_text(value: float) -> str:
    """A log-probability as the report writes it: two decimals, a true minus sign."""
    return f"{value:.2f}".replace("-", "\u2212")


def chosen_text(options: Sequence[OptionScore]) -> str:
    """The "model output" of a log-likelihood sample: the option the run chose, `B (logp −1.23)`."""
    chosen = next((o for o in options if o.chosen), None)
    return f"{chosen.label} (logp {logp_text(chosen.logprob)})" if chosen else ""


MAX_SAMPLES = 10_000  # rows of the sample browser, over every run (report --max-samples)


def shown_shares(sizes: Sequence[int], limit: int) -> list[int]:
    """How many samples of each run the browser shows: all of them when the runs hold at most `limit` together,
    else `limit` shared out evenly, a run with fewer than its share giving the rest to the others."""
    if limit <= 0 or sum(sizes) <= limit:
        return list(sizes)
    shares = [0] * len(sizes)
    left, open_runs = limit, sorted(range(len(sizes)), key=lambda i: sizes[i])
    while open_runs:
        share = left // len(open_runs)
        i = open_runs.pop(0)
        shares[i] = min(sizes[i], share if open_runs else left)
        left -= shares[i]
    return shares


def _shown_positions(run_id: str, n: int, k: int) -> range | set[int]:
    """`k` of a run's `n` sample positions drawn at random, seeded by its run id (the same report shows the same
    samples); all of them when k ≥ n."""
    if k >= n:
        return range(n)
    return set(random.Random(int(hashlib.sha256(run_id.encode()).hexdigest()[:16], 16)).sample(range(n), k))


class SampleBlob(TypedDict):
    """What the report's sample browser reads (gzip + base64 in the page): the runs, the interned strings, the rows."""

    runs: list[str]
    models: list[str]
    colours: int
    strings: list[str]
    samples: list[dict[str, Any]]  # one compact row a sample: short keys, JSON values
    total: int  # samples in the runs, shown or not


def sample_blob(runs: Sequence[RunSummary], limit: int = MAX_SAMPLES) -> SampleBlob:
    """Compact sample records for the browser; prompts are lists of [role, paragraph ids]. At most `limit` samples
    over every run (0: all), a seeded random draw of each run's when they hold more, read one at a time."""
    pool = _Interner()
    rows: list[dict[str, Any]] = []
    sizes = [r.results.overall.n for r in runs]
    for r, k in zip(runs, shown_shares(sizes, limit), strict=True):
        shown = _shown_positions(r.log.manifest.run_id, r.results.overall.n, k)
        for s in (s for i, s in enumerate(r.log.iter_samples()) if i in shown):
            msgs = s.prompt if isinstance(s.prompt, list) else [{"role": "", "content": s.prompt}]
            prompt = [[str(m.get("role", "")), pool.text(str(m.get("content", "")))] for m in msgs]
            row: dict[str, Any] = {
                "r": r.index,
                "id": s.sample_id,
                "c": s.category or "",
                "o": str(s.outcome),
                "s": s.score,
                "x": s.extracted,
                "rule": s.extraction_rule,
                "ref": _ref(s.reference),
                "p": prompt,
                "out": s.raw_output or "",
                "e": s.error,
                "d": s.difficulty,
                "tok": [s.input_tokens, s.output_tokens],
                "lat": s.latency_s,
                "reason": s.reasoning,
            }
            options = option_scores(s)
            if options:
                row["lp"] = [[o.label, _finite(o.logprob), _finite(o.prob), int(o.chosen) + 2 * int(o.expected)]
                              for o in options]
                row["ch"] = chosen_text(options)
            elif s.trajectory is not None and not s.raw_output and (calls := calls_snippet(s.trajectory)):
                row["tc"] = calls
            elif not s.raw_output:
                row["q"] = _snippet(s, msgs)
            if s.trajectory is not None:
                row["t"] = trajectory_row(s.trajectory)
            row.update(_judge_fields(s.details))
            rows.append(row)
    return SampleBlob(runs=run_names(runs), models=[r.model for r in runs], colours=plots.N_COLOURS,
                      strings=pool.table, samples=rows, total=sum(sizes))


def run_names(runs: Sequence[RunSummary]) -> list[str]:
    """One unique label per run (see `labels.run_labels`): runs sharing model and dataset differ by mode,
    prompt or settings, and by run id only when nothing else tells them apart."""
    return run_labels.run_labels(runs)


class RunCard(TypedDict):
    """A run's headline card: its facets (name, value, differs from the other runs') and what sets it apart."""

    facets: list[tuple[str, str, bool]]
    distinct: str


def run_cards(runs: Sequence[RunSummary]) -> list[RunCard]:
    """Each run's facets for its headline card, those that differ between the runs marked."""
    diff = run_labels.differing(runs) if len(runs) > 1 else set()
    names = run_names(runs)
    return [
        RunCard(facets=[(f.name, f.value, f.name in diff) for f in run_labels.facets(r)],
                # what sets it apart from same model + dataset (a partial run's mark first)
                distinct=name.removeprefix(f"{r.model} · {r.dataset}").lstrip(" ·"))
        for r, name in zip(runs, names)
    ]


def encode_blob(blob: Mapping[str, Any]) -> str:
    """Plain JSON when small; otherwise {"gz": base64(gzip(json))}, inflated in the page by DecompressionStream."""
    text = json.dumps(blob, ensure_ascii=False, separators=(",", ":"))
    if len(text) <= PLAIN_LIMIT:
        return json_for_script(blob)
    packed = base64.b64encode(gzip.compress(text.encode("utf-8"), compresslevel=3, mtime=0)).decode("ascii")
    return json_for_script({"gz": packed})


def _fmt_duration(s: float | None) -> str:
    if s is None:
        return "—"
    if s < 60:
        return f"{s:.1f} s"
    m, sec = divmod(round(s), 60)
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min" if h else f"{m} min {sec:02d} s"


def _fmt_int(n: object) -> str:
    return f"{int(n):,}".replace(",", "\u2009") if isinstance(n, (int, float)) else "—"


def _fmt_pct(x: object) -> str:
    return plots._pct(float(x)) if isinstance(x, (int, float)) and not isinstance(x, bool) else "—"


def _fmt_num(x: object, digits: int = 2) -> str:
    return f"{x:.{digits}f}" if isinstance(x, (int, float)) and not isinstance(x, bool) else "—"


def _fmt_money(cost: Cost | None, key: str = "total") -> str:
    """An amount of a results.json cost block (`total`, `per_correct`, `model`, `judge`), to the cent
    ("n/a" when not given)."""
    value = getattr(cost, key) if cost is not None else None
    return "n/a" if cost is None or value is None else format_amount(value, cost.currency)


def _env() -> Environment:
    env = Environment(
        loader=PackageLoader("proctor.report", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["pct"] = _fmt_pct
    env.filters["num"] = _fmt_num
    env.filters["duration"] = _fmt_duration
    env.filters["int"] = _fmt_int
    env.filters["money"] = _fmt_money
    env.filters["breakable"] = breakable
    env.filters["points"] = points
    env.filters["ptext"] = p_cell
    return env


_SEPARATORS = re.compile(r"([/_\-,:;=&?·|@+]+)")


def breakable(value: object) -> Markup:
    """`value` escaped, with a line-break opportunity (<wbr>) after each separator (/ _ - , : = …): a long
    path, spec or JSON wraps between its parts, never inside a word or a number."""
    parts = _SEPARATORS.split(str(value))
    # a separator run that opens a token (`/tmp`, ` --flag`) belongs to it: no break right after it
    opens = [i % 2 == 1 and (not parts[i - 1] or parts[i - 1][-1] in " ([{") for i in range(len(parts))]
    return Markup("".join(str(escape(part)) + ("<wbr>" if i % 2 and not opens[i] else "")
                          for i, part in enumerate(parts)))


def render_html(data: ReportData, max_samples: int = MAX_SAMPLES) -> str:
    """Render the whole report as one HTML document (its sample browser: at most `max_samples` samples, 0: all)."""
    runs = data.runs
    labels = run_names(runs)
    by_dataset: dict[str, list[RunSummary]] = {}
    for r in runs:
        by_dataset.setdefault(r.dataset, []).append(r)
    category_charts = [
        {"dataset": ds, "runs": rs, "chart": plots.category_bars(cats, [(labels[r.index], r.results.by_category) for r in rs], [r.index for r in rs])}
        for ds, rs in by_dataset.items()
        if (cats := sorted({c for r in rs for c in r.results.by_category}))
    ]
    cats = sorted({c for r in runs for c in r.results.by_category})
    diff_series = [(labels[r.index], r.results.by_difficulty) for r in runs]
    diff_runs = [r for r in runs if any(b in r.results.by_difficulty for b in BANDS)]
    has_difficulty = bool(diff_runs)
    prob_runs = [
        {
            "run": r,
            "reliability": plots.reliability(r.calibration) if r.calibration else None,
            "dists": plots.distributions(r.dists[:MAX_DIST_ROWS]),
            "shown": min(len(r.dists), MAX_DIST_ROWS),
        }
        for r in runs
        if r.dists
    ]
    coverage = [
        {"cov": c, "cats": plots.coverage_bars(c.categories), "mods": plots.coverage_bars(c.modalities)}
        for c in data.coverage
    ]
    history = [
        {"model": k[0], "dataset": k[1], "points": pts, "chart": plots.history_line(pts)}
        for k, pts in data.history.items()
    ]
    judge_runs = [
        {"run": r, "ja": r.results.judge_agreement, "matrix": confusion_matrix(r.results.judge_agreement.confusion)}
        for r in runs
        if r.results.judge_agreement
    ]
    budget_runs = [
        {"run": r, "curve": c, "chart": plots.budget_curve(c), "chart_narrow": plots.budget_curve(c, plots.NARROW_CHART)}
        for r in runs
        if (c := r.results.budget_curve) is not None
    ]
    ks = {r.results.epochs.k for r in runs if r.results.epochs}
    script = _static("report.js")
    script_hash = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    blob = sample_blob(runs, max_samples)
    return _env().get_template("report.html.j2").render(
        runs=runs,
        names=labels,
        title=run_labels.title(runs),
        cards=run_cards(runs),
        generated_at=data.generated_at,
        legend=plots.legend(labels) if len(runs) > 1 else "",
        difficulty_legend=plots.legend([labels[r.index] for r in diff_runs], [r.index for r in diff_runs])
        if len(runs) > 1 else "",
        category_charts=category_charts,
        multi_dataset=len(by_dataset) > 1,
        has_acc_norm=any(r.results.acc_norm for r in runs),
        has_epochs=bool(ks),
        epochs_k=ks.pop() if len(ks) == 1 else "k",
        judge_runs=judge_runs,
        difficulty_chart=plots.difficulty_lines(diff_series) if has_difficulty else None,
        difficulty_chart_narrow=plots.difficulty_lines(diff_series, plots.NARROW_CHART) if has_difficulty else None,
        unknown_difficulty=sum(m.n for r in runs if (m := r.results.by_difficulty.get("unknown")) is not None),
        more_metrics=sorted({k for r in runs for k in r.results.metrics}),
        categories=cats,
        prob_runs=prob_runs,
        budget_runs=budget_runs,
        coverage=coverage,
        history=history,
        css=Markup(_static("report.css")),
        script=Markup(script),
        script_hash=script_hash,
        blob=Markup(encode_blob(blob)),
        n_samples=blob["total"],
        n_shown=len(blob["samples"]),
        n_colours=plots.N_COLOURS,
        report_warnings=data.warnings,
        aborted=data.aborted,
        comparisons=data.comparisons if data.comparisons and data.comparisons.shown else None,
    )
