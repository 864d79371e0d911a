"""Inline SVG charts. Colours come from the page's CSS classes (`s0`…`s7`), so light and dark themes apply.

Every label is escaped here: category names, query texts and model names are untrusted input.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from markupsafe import Markup, escape

from ..core.results import BudgetCurve, Calibration, MetricBlock
from .data import BANDS, ContextDist, CoverageRow, HistoryPoint

N_COLOURS = 12  # run colours (report.css --c0 … --c11), distinct for up to 12 runs


def _f(x: float) -> str:
    return f"{x:.1f}"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.1f}%"


MIN_SCALE = 0.92  # an SVG chart never shrinks below this share of its size: 11 px text stays >= 10 px


def _svg(width: float, height: float, body: list[str], label: str) -> Markup:
    """An SVG chart drawn at `width` px; on narrow screens it shrinks to MIN_SCALE, then its box scrolls."""
    return Markup(
        f'<svg class="chart" viewBox="0 0 {_f(width)} {_f(height)}" width="{_f(width)}" '
        f'style="min-width:{_f(width * MIN_SCALE)}px" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _text(x: float, y: float, s: str, cls: str = "lbl", anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{_f(x)}" y="{_f(y)}" class="{cls}" text-anchor="{anchor}"{extra}>{escape(s)}</text>'


def _clip(s: str, n: int) -> str:
    s = " ".join(s.split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _whisker_v(x: float, y0: float, y1: float, cap: float = 3.5) -> str:
    return (
        f'<path class="err" d="M{_f(x)} {_f(y0)}V{_f(y1)}M{_f(x - cap)} {_f(y0)}H{_f(x + cap)}'
        f'M{_f(x - cap)} {_f(y1)}H{_f(x + cap)}"/>'
    )


def _tip(m: MetricBlock, who: str) -> str:
    return f"<title>{escape(who)}: {_pct(m.accuracy)} [{_pct(m.ci_low)}, {_pct(m.ci_high)}], n={m.n_scored}</title>"


def legend(labels: Sequence[str], colours: Sequence[int] | None = None) -> Markup:
    """A colour key for several runs (HTML, not SVG, so it wraps); run j is coloured `colours[j]`."""
    cs = list(colours) if colours is not None else list(range(len(labels)))
    items = "".join(
        f'<span class="key"><i class="sw s{c % N_COLOURS}"></i>{escape(lab)}</span>' for c, lab in zip(cs, labels)
    )
    return Markup(f'<div class="legend">{items}</div>')


def _pos(x: float) -> str:
    return f"{100 * min(1.0, max(0.0, x)):.2f}%"


def _hb_axis() -> str:
    ticks = "".join(f'<span style="left:{int(t * 100)}%">{int(t * 100)}%</span>' for t in (0, 0.25, 0.5, 0.75, 1.0))
    return f'<div class="hb-axis" aria-hidden="true"><span></span><div class="hb-ticks">{ticks}</div><span></span></div>'


def _hb_line(m: MetricBlock | None, who: str, colour: int) -> str:
    """One run's bar within a category: accuracy bar, CI whisker, value; or why there is none."""
    if m is None:
        return '<div class="hb-line"><div class="hb-track"></div><span class="hb-val">—</span></div>'
    if m.accuracy is None:
        return (f'<div class="hb-line"><div class="hb-track"><span class="hb-none">no scored samples '
                f'(n={m.n})</span></div><span class="hb-val">—</span></div>')
    acc = m.accuracy
    tip = escape(f"{who}: {_pct(acc)} [{_pct(m.ci_low)}, {_pct(m.ci_high)}], n={m.n_scored}")
    err = ""
    lo, hi = m.ci_low, m.ci_high
    if lo is not None and hi is not None:
        err = f'<i class="hb-err" style="left:{_pos(lo)};width:{_pos(hi - lo)}"></i>'
    return (f'<div class="hb-line" title="{tip}"><div class="hb-track"><i class="hb-bar s{colour % N_COLOURS}" '
            f'style="width:{_pos(acc)}"></i>{err}</div><span class="hb-val">{_pct(acc)}</span></div>')


def category_bars(
    rows: Sequence[str],
    series: Sequence[tuple[str, Mapping[str, MetricBlock]]],
    colours: Sequence[int] | None = None,
) -> Markup:
    """Horizontal bars in HTML (they take the full width and keep the page's font size at any width): one
    row per category, one bar per run (coloured `colours[j]`), with 95% CI whiskers; n on hover."""
    colours = list(colours) if colours is not None else list(range(len(series)))
    out = [f'<div class="hbars" role="img" aria-label="accuracy by category">{_hb_axis()}']
    for cat in rows:
        lines = "".join(_hb_line(data.get(cat), who, colours[j]) for j, (who, data) in enumerate(series))
        out.append(f'<div class="hb-row"><div class="hb-lbl" title="{escape(cat)}">{escape(cat)}</div>'
                   f'<div class="hb-lines">{lines}</div></div>')
    return Markup("".join(out) + "</div>")


def _vaxes(out: list[str], x0: float, x1: float, y_of: Any, ticks: Sequence[float]) -> None:
    for t in ticks:
        y = y_of(t)
        out.append(f'<line class="grid" x1="{_f(x0)}" y1="{_f(y)}" x2="{_f(x1)}" y2="{_f(y)}"/>')
        out.append(_text(x0 - 6, y + 4, f"{round(t * 100)}%", "tick", "end"))


NARROW_CHART = 340.0  # fits a phone's section (390 px screen) at full size, so it neither shrinks nor scrolls


def difficulty_lines(series: Sequence[tuple[str, Mapping[str, MetricBlock]]], width: float = 640.0) -> Markup:
    """Accuracy per difficulty band (x) for each run, with 95% CI whiskers, drawn `width` px wide."""
    w, h, l, r, t, b = width, 280.0, 48.0, 16.0, 14.0, 40.0
    pw, ph = w - l - r, h - t - b
    step = pw / len(BANDS)

    def y_of(v: float) -> float:
        return t + (1 - v) * ph

    out: list[str] = []
    _vaxes(out, l, w - r, y_of, (0, 0.25, 0.5, 0.75, 1.0))
    for i, bnd in enumerate(BANDS):
        out.append(_text(l + (i + 0.5) * step, h - b + 18, bnd, "tick", "middle"))
    title = "item difficulty (0 = easy, 1 = hard)" if w > NARROW_CHART else "difficulty (0 easy, 1 hard)"
    out.append(_text(l + pw / 2, h - 4, title, "axis", "middle"))
    k = len(series)
    for j, (who, data) in enumerate(series):
        dx = (j - (k - 1) / 2) * (6 if w > NARROW_CHART else 4)
        pts = []
        for i, bnd in enumerate(BANDS):
            m = data.get(bnd)
            if m is None or m.accuracy is None:
                continue
            x, y = l + (i + 0.5) * step + dx, y_of(m.accuracy)
            pts.append((x, y, m))
        c = f"s{j % N_COLOURS}"
        if len(pts) > 1:
            d = "M" + "L".join(f"{_f(x)} {_f(y)}" for x, y, _ in pts)
            out.append(f'<path class="line {c}" d="{d}"/>')
        for x, y, m in pts:
            if m.ci_low is not None and m.ci_high is not None:
                out.append(_whisker_v(x, y_of(m.ci_high), y_of(m.ci_low)))
            out.append(f'<circle class="dot {c}" cx="{_f(x)}" cy="{_f(y)}" r="4">{_tip(m, who)}</circle>')
    return _svg(w, h, out, "accuracy by item difficulty")


def budget_curve(curve: BudgetCurve, width: float = 640.0) -> Markup:
    """Accuracy at each budget of a ladder (x: the budgets, evenly spaced), with 95% CI whiskers and, shaded, the
    truncation bounds (every cut sample wrong … right); the budget it settles at marked."""
    w, h, l, r, t, b = width, 260.0, 48.0, 16.0, 14.0, 40.0
    pw, ph = w - l - r, h - t - b
    step = pw / len(curve.steps)

    def y_of(v: float) -> float:
        return t + (1 - v) * ph

    out: list[str] = []
    _vaxes(out, l, w - r, y_of, (0, 0.25, 0.5, 0.75, 1.0))
    pts = []
    for i, st in enumerate(curve.steps):
        m, x = st.block, l + (i + 0.5) * step
        out.append(_text(x, h - b + 18, f"{st.max_tokens:,}", "tick", "middle"))
        if m.truncated_low is not None and m.truncated_high is not None:
            top, bottom = y_of(m.truncated_high), y_of(m.truncated_low)
            out.append(f'<rect class="bound" x="{_f(x - 9)}" y="{_f(top)}" width="18" height="{_f(bottom - top)}">'
                       f"<title>if every truncated sample were wrong … right: {_pct(m.truncated_low)} – "
                       f"{_pct(m.truncated_high)}</title></rect>")
        if m.accuracy is not None:
            pts.append((x, y_of(m.accuracy), m, st))
    if len(pts) > 1:
        out.append('<path class="line s0" d="M' + "L".join(f"{_f(x)} {_f(y)}" for x, y, _, _ in pts) + '"/>')
    for x, y, m, st in pts:
        if m.ci_low is not None and m.ci_high is not None:
            out.append(_whisker_v(x, y_of(m.ci_high), y_of(m.ci_low)))
        ring = " settled" if st.max_tokens == curve.settled_at else ""
        out.append(f'<circle class="dot s0{ring}" cx="{_f(x)}" cy="{_f(y)}" r="4">'
                   f"{_tip(m, f'--max-tokens {st.max_tokens:,} ({st.asked} asked)')}</circle>")
    out.append(_text(l + pw / 2, h - 4, "token budget (--max-tokens)", "axis", "middle"))
    return _svg(w, h, out, "accuracy by token budget")


def reliability(cal: Calibration) -> Markup:
    """Reliability diagram: accuracy per confidence bin against the diagonal, with counts underneath."""
    w, l, r, t = 356.0, 60.0, 12.0, 14.0
    ps, hist_h = w - l - r, 50.0
    h = t + ps + 14 + hist_h + 30

    def y_of(v: float) -> float:
        return t + (1 - v) * ps

    out: list[str] = []
    _vaxes(out, l, l + ps, y_of, (0, 0.5, 1.0))
    out.append(f'<path class="diag" d="M{_f(l)} {_f(y_of(0))}L{_f(l + ps)} {_f(y_of(1))}"/>')
    nmax = max((b.n for b in cal.bins), default=1)
    hb = t + ps + 14 + hist_h
    for bn in cal.bins:
        x, bw = l + bn.lo * ps + 1, (bn.hi - bn.lo) * ps - 2
        confidence, accuracy = bn.confidence or 0.0, bn.accuracy or 0.0  # None only in an empty bin (not plotted)
        tip = (
            f"<title>confidence {bn.lo:.1f}–{bn.hi:.1f}: mean {_pct(confidence)}, "
            f"accuracy {_pct(accuracy)}, n={bn.n}</title>"
        )
        out.append(
            f'<rect class="bar s0" x="{_f(x)}" y="{_f(y_of(accuracy))}" width="{_f(bw)}" '
            f'height="{_f(accuracy * ps)}">{tip}</rect>'
        )
        out.append(f'<circle class="dot gapdot" cx="{_f(l + confidence * ps)}" cy="{_f(y_of(confidence))}" r="2.5"/>')
        hh = bn.n / nmax * hist_h
        out.append(f'<rect class="bar muted" x="{_f(x)}" y="{_f(hb - hh)}" width="{_f(bw)}" height="{_f(hh)}">{tip}</rect>')
        if len(cal.bins) <= 12:
            out.append(_text(x + bw / 2, hb - hh - 3, str(bn.n), "val", "middle"))
    for v in (0, 0.5, 1.0):
        out.append(_text(l + v * ps, hb + 14, f"{v:.1f}", "tick", "middle"))
    out.append(_text(l + ps / 2, h - 4, "confidence of the top choice", "axis", "middle"))
    out.append(_text(l - 6, t + ps + 14 + hist_h / 2 + 4, "contexts", "tick", "end"))
    out.append(_text(12, t + ps / 2, "accuracy", "axis", "middle", f' transform="rotate(-90 12 {_f(t + ps / 2)})"'))
    return _svg(w, h, out, "reliability diagram")


def _dist_verdict(d: ContextDist) -> tuple[str, str]:
    """The text right of a context's bar (and its class): the top query with its probability and the verdict."""
    top = f"{_clip(d.queries[d.predicted], 12)} {_pct(d.probs[d.predicted])}"
    if d.expected is None:
        return f"{top} · unscored", "val"
    if d.expected == d.predicted:
        return f"✓ {top}", "val good"
    return f"✗ {top} (expected {_clip(d.queries[d.expected], 10)})", "val bad"


def distributions(dists: Sequence[ContextDist]) -> Markup:
    """One 100% stacked bar per context: its probability over queries; the expected query is outlined."""
    label_w, plot_w, right, row = 230.0, 340.0, 200.0, 22.0
    w, h = label_w + plot_w + right, 8 + len(dists) * row
    out: list[str] = []
    for i, d in enumerate(dists):
        y = 4 + i * row
        out.append(_text(label_w - 8, y + 14, _clip(d.text, 31), "lbl", "end", f' data-full="{escape(d.item_id)}"'))
        x = label_w
        for q, (name, p) in enumerate(zip(d.queries, d.probs)):
            bw = max(0.0, p) * plot_w
            mark = " expected" if q == d.expected else ""
            tip = f"<title>{escape(_clip(d.text, 120))}\n{escape(name)}: {p:.3f}{' (expected)' if mark else ''}</title>"
            out.append(
                f'<rect class="seg s{q % N_COLOURS}{mark}" x="{_f(x)}" y="{_f(y)}" width="{_f(bw)}" '
                f'height="{_f(row - 5)}">{tip}</rect>'
            )
            if bw > 34:
                out.append(_text(x + 4, y + 12.5, _clip(name, int(bw / 7)), "seglbl"))
            x += bw
        out.append(_text(label_w + plot_w + 8, y + 13, *_dist_verdict(d)))
    return _svg(w, h, out, "distribution over queries per context")


def coverage_bars(rows: Sequence[CoverageRow]) -> Markup:
    """Items per group as HTML bars; under- and over-represented groups coloured and labelled."""
    cmax = max((r.count for r in rows), default=1) or 1
    out = ['<div class="hbars cov" role="img" aria-label="items per group">']
    for r in rows:
        cls = {"under": "warn", "over": "over"}.get(r.flag, "s0")
        note = f"{r.count} · {_pct(r.share)}" + (f" · {r.flag}" if r.flag else "")
        out.append(
            f'<div class="hb-row" title="{escape(r.name)}: {r.count} items ({_pct(r.share)})">'
            f'<div class="hb-lbl">{escape(r.name)}</div><div class="hb-lines"><div class="hb-line">'
            f'<div class="hb-track"><i class="hb-bar {cls}" style="width:{_pos(r.count / cmax)}"></i></div>'
            f'<span class="hb-val{" flag" if r.flag else ""}">{escape(note)}</span></div></div></div>'
        )
    return Markup("".join(out) + "</div>")


def history_line(points: Sequence[HistoryPoint]) -> Markup:
    """Accuracy over time with its 95% CI band."""
    w, h, l, r, t, b = 820.0, 240.0, 48.0, 20.0, 12.0, 34.0
    pw, ph = w - l - r, h - t - b
    ts = [p.started_at.timestamp() for p in points]
    t0, t1 = min(ts), max(ts)
    span = (t1 - t0) or 1.0

    def x_of(v: float) -> float:
        return l + (v - t0) / span * pw if t1 > t0 else l + pw / 2

    def y_of(v: float) -> float:
        return t + (1 - v) * ph

    out: list[str] = []
    _vaxes(out, l, w - r, y_of, (0, 0.25, 0.5, 0.75, 1.0))
    band = [(x_of(s), p) for s, p in zip(ts, points) if p.ci_low is not None and p.ci_high is not None]
    if len(band) > 1:
        up = "L".join(f"{_f(x)} {_f(y_of(float(p.ci_high or 0)))}" for x, p in band)
        down = "L".join(f"{_f(x)} {_f(y_of(float(p.ci_low or 0)))}" for x, p in reversed(band))
        out.append(f'<path class="band" d="M{up}L{down}Z"/>')
    out.append('<path class="line s0" d="M' + "L".join(f"{_f(x_of(s))} {_f(y_of(p.accuracy))}" for s, p in zip(ts, points)) + '"/>')
    for s, p in zip(ts, points):
        tip = f"<title>{escape(p.started_at.isoformat(timespec='minutes'))} {escape(p.label)}: {_pct(p.accuracy)}</title>"
        out.append(f'<circle class="dot s0" cx="{_f(x_of(s))}" cy="{_f(y_of(p.accuracy))}" r="4">{tip}</circle>')
    for v, anchor in ((t0, "start"), (t1, "end")):
        out.append(_text(x_of(v), h - 10, datetime.fromtimestamp(v).strftime("%Y-%m-%d %H:%M"), "tick", anchor))
    return _svg(w, h, out, "accuracy over time")
