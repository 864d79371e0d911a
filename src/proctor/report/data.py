"""What a report shows, computed from run directories (and, optionally, the history store).

Everything here is a pure function of the run log: `results.json` blocks are used when present and
recomputed from `samples.jsonl` when missing, so an interrupted run still gets a report.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from itertools import chain
from pathlib import Path, PurePath
from typing import Any

from ..core.results import (
    Calibration,
    MetricValue,
    Results,
)
from ..core.spec import HumanLabels
from ..data.coverage import BANDS as COVERAGE_BANDS
from ..data.coverage import flag_categories
from ..log.runlog import Manifest, RunLog, Sample
from ..metrics import registered
from ..metrics.accuracy import clustering_text
from ..metrics.judge_corrected import corrected_of
from ..metrics.results import open_run, summarize
from ..run.store import Store, default_store_path, record_key
from ..scoring.logprob import softmax
from ..stats.intervals import calibration as stats_calibration
from ..util.errors import ProctorError
from .comparisons import ComparisonSection, comparison_section

logger = logging.getLogger("proctor.report")

BANDS = COVERAGE_BANDS[:5]  # the difficulty bands, without "unknown"


# ---------------------------------------------------------------- probability runs


@dataclass(frozen=True)
class ContextDist:
    """One context's distribution over its queries (or choices)."""

    item_id: str
    text: str
    queries: list[str]
    probs: list[float]
    expected: int | None
    predicted: int


def _labels(s: Sample, k: int) -> list[str]:
    for key in ("queries", "choices"):
        v = s.details.get(key)
        if isinstance(v, Mapping):
            v = list(v.keys())
        if isinstance(v, list) and len(v) == k:
            return [str(x) for x in v]
    return [chr(65 + i) if i < 26 else str(i) for i in range(k)]


def _expected_index(s: Sample, labels: list[str]) -> int | None:
    for v in (s.details.get("expected"), s.reference):
        if isinstance(v, bool):
            continue
        if isinstance(v, int):
            return v if 0 <= v < len(labels) else None
        if isinstance(v, str) and v in labels:
            return labels.index(v)
    return None


def distribution(s: Sample) -> ContextDist | None:
    """The distribution a probability sample carries in details["distribution"], if any."""
    raw = s.details.get("distribution")
    if not isinstance(raw, list) or not raw:
        return None
    try:
        probs = [float(p) for p in raw]
    except (TypeError, ValueError):
        return None
    labels = _labels(s, len(probs))
    text = s.details.get("context") or s.details.get("text")
    if not isinstance(text, str):
        text = s.prompt if isinstance(s.prompt, str) else s.item_id
    predicted = max(range(len(probs)), key=probs.__getitem__)
    return ContextDist(s.item_id, text, labels, probs, _expected_index(s, labels), predicted)


@dataclass(frozen=True)
class OptionScore:
    """One option of a log-likelihood sample: its log-probability and its probability (the softmax over the
    options the run recorded), and whether the run chose it or expected it."""

    label: str
    logprob: float
    prob: float
    chosen: bool
    expected: bool


def _floats(raw: object) -> dict[str, float] | None:
    """{label: number} from a mapping of finite-or-not numbers; None when it is not one."""
    if not isinstance(raw, Mapping) or not raw:
        return None
    try:
        return {str(k): float(v) for k, v in raw.items()}
    except (TypeError, ValueError):
        return None


def option_scores(s: Sample) -> list[OptionScore]:
    """Each option's log-probability and probability, for a log-likelihood sample (details["logprobs"], with the
    run's own distribution when it wrote one, else the softmax of the log-probabilities); [] for any other."""
    logps = _floats(s.details.get("logprobs"))
    if logps is None:
        return []
    labels = list(logps)
    probs = _floats(s.details.get("distribution"))
    if probs is None or set(probs) != set(labels):
        probs = dict(zip(labels, softmax([logps[k] for k in labels]), strict=True))
    chosen = s.extracted if s.extracted in logps else max(labels, key=probs.__getitem__)
    gold = s.details.get("gold", s.reference)
    return [OptionScore(k, logps[k], probs[k], k == chosen, isinstance(gold, str) and k == gold) for k in labels]


def calibration_view(dists: Sequence[ContextDist], n_bins: int = 10) -> Calibration | None:
    """Reliability bins, Brier, ECE and log loss of the contexts with a known answer (`proctor.stats.intervals.calibration`,
    results.json's `Calibration` block), its empty bins left out for plotting."""
    scored = [d for d in dists if d.expected is not None]
    if not scored:
        return None
    c = stats_calibration([d.probs for d in scored], [d.expected for d in scored if d.expected is not None], n_bins)
    return c.model_copy(update={"bins": [b for b in c.bins if b.n]})


# ---------------------------------------------------------------- coverage


@dataclass(frozen=True)
class CoverageRow:
    name: str
    count: int
    share: float
    flag: str  # "", "under", "over"


@dataclass(frozen=True)
class CoverageView:
    dataset: str
    n_items: int
    categories: list[CoverageRow]
    modalities: list[CoverageRow]
    source: str  # "proctor.data.coverage" or "local"


def _flag_rows(counts: Mapping[str, int]) -> list[CoverageRow]:
    """Rows largest first, flagged by `proctor.data.coverage`'s rule (half / double the uniform share)."""
    flags = {f.category: f.kind for f in flag_categories(dict(counts))}
    total = sum(counts.values()) or 1
    return [
        CoverageRow(name, c, c / total, flags.get(name, ""))
        for name, c in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]


def coverage_view(dataset: str, samples: Iterable[Sample]) -> CoverageView:
    """Items per category and modality (each item once, whatever its epochs), with flags."""
    cats: dict[str, str] = {}
    mods: dict[str, str] = {}
    for s in samples:
        cats[s.item_id] = s.category or "(none)"
        mods[s.item_id] = s.modality or "(none)"
    return CoverageView(dataset, len(cats), _flag_rows(Counter(cats.values())), _flag_rows(Counter(mods.values())),
                    "proctor.data.coverage")


# ---------------------------------------------------------------- history


@dataclass(frozen=True)
class HistoryPoint:
    started_at: datetime
    accuracy: float
    ci_low: float | None
    ci_high: float | None
    label: str = ""


def parse_time(value: object) -> datetime | None:
    if isinstance(value, datetime):
        return value
    if isinstance(value, str) and value:
        try:
            return datetime.fromisoformat(value)
        except ValueError:
            return None
    return None


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else getattr(obj, key, None)


def history_points(raw: Iterable[Any]) -> list[HistoryPoint]:
    """Normalise {started_at, accuracy, ci_low, ci_high} dicts or objects; skip points without both, and partial
    runs (stopped early by --stop-when-decided: not the accuracy of the whole evaluation)."""
    pts = []
    for r in raw:
        t, acc = parse_time(_get(r, "started_at")), _get(r, "accuracy")
        if t is None or not isinstance(acc, (int, float)) or _get(r, "partial"):
            continue
        lo, hi = _get(r, "ci_low"), _get(r, "ci_high")
        pts.append(HistoryPoint(t, float(acc), lo, hi, str(_get(r, "run_id") or "")))
    return sorted(pts, key=lambda p: p.started_at.timestamp())


def store_history(model: str, dataset: str, store: str | Path | None) -> list[Any] | None:
    """Past runs of `model` on `dataset` from the history store; None when there is no store yet."""
    path = Path(store) if store is not None else default_store_path()
    if not path.exists():
        return None
    with Store(path) as st:
        return list(st.history(model, dataset))


# ---------------------------------------------------------------- runs


@dataclass
class RunSummary:
    """One run as the report shows it."""

    index: int
    log: RunLog
    model: str
    dataset: str
    results: Results  # results.json, with any block it lacks worked out from the samples (`notes` names them)
    duration_s: float | None
    dists: list[ContextDist]
    calibration: Calibration | None  # the reliability plot's, from the distributions the samples carry
    notes: list[str] = field(default_factory=list)

    @property
    def clustering(self) -> str | None:
        """A sentence on the clustered interval when it differs materially from the naive one, or when a note
        says why items stayed the unit (few clusters, no variance); else None."""
        o = self.results.overall
        if self.results.cluster is None or not (o.cluster_differs or o.cluster_note):
            return None
        text = f"clustered by {self.results.cluster} ({clustering_text(o)})"
        if not o.cluster_differs:
            return text
        return (f"{text}: the interval counts clusters; treating items as independent gives "
                f"[{100 * (o.naive_ci_low or 0):.1f}, {100 * (o.naive_ci_high or 0):.1f}]")

    @property
    def truncated_as(self) -> str:
        """How accuracy counted truncated answers (stated in the report)."""
        return self.results.truncated_as or self.log.manifest.truncated_as

    @property
    def partial(self) -> str | None:
        """`partial 150/400` for a run --stop-when-decided stopped early, else None."""
        partial = self.log.manifest.partial
        return partial.label if partial is not None else None

    @property
    def label(self) -> str:
        """`model · dataset`, and a partial run's mark: every name the report gives the run carries it."""
        return " · ".join(p for p in (self.model, self.dataset, self.partial) if p)

    @property
    def dataset_key(self) -> str:
        """The dataset's name as the run log and the history store record it (`dataset` is the name shown)."""
        return self.log.manifest.dataset.name or "?"

    @property
    def started_at(self) -> str:
        return self.log.manifest.started_at


VERDICTS = ("correct", "partial", "wrong")


def confusion_matrix(confusion: Mapping[str, int]) -> tuple[list[str], list[list[int]]]:
    """{"judge/exact": count} as (labels, rows): rows are the judge's verdicts, columns exact match's."""
    cells: dict[tuple[str, str], int] = {}
    for key, n in confusion.items():
        judge, _, exact = str(key).partition("/")
        if exact:
            cells[(judge, exact)] = cells.get((judge, exact), 0) + int(n)
    seen = {x for pair in cells for x in pair}
    labels = [v for v in VERDICTS if v in seen] + sorted(seen - set(VERDICTS))
    return labels, [[cells.get((j, e), 0) for e in labels] for j in labels]


def _present(value: object) -> bool:
    """A metric's value worth showing: not None, not an empty breakdown."""
    return value is not None and value != {}


def filled_results(log: RunLog) -> tuple[Results, list[str]]:
    """results.json, with each metric block it lacks (an older proctor wrote it, or the run was interrupted
    before it was written) worked out from the samples by the same registered metric, in one streamed pass (none
    when nothing is missing); and those blocks' names."""
    m = log.manifest
    written = log.results or Results(truncated_as=m.truncated_as, no_answer=m.no_answer, extract=m.extract)
    missing = {metric.name for metric in registered() if not _present(_held(written, metric.name))}
    seen = 0

    def counting() -> Iterator[Sample]:
        nonlocal seen
        for s in log.iter_samples():
            seen += 1
            yield s

    got = Results()
    if missing or log.results is None:
        got = summarize(counting(), truncated_as=written.truncated_as or m.truncated_as, manifest=m,
                        no_answer=written.no_answer or m.no_answer, extract=m.extract, only=missing)
    if log.results is None:
        written = written.model_copy(update={"errors": got.errors})
    update: dict[str, Any] = {}
    extra = dict(written.metrics)
    notes: list[str] = []
    for metric in registered() if seen else []:
        value = _held(got, metric.name)
        if metric.name not in missing or not _present(value) or getattr(value, "error", None) is not None:
            continue
        notes.append(metric.name)
        if metric.name in Results.model_fields:
            update[metric.name] = value
        elif isinstance(value, MetricValue):
            extra[metric.name] = value
    return written.model_copy(update={**update, "metrics": extra}), notes


def _held(written: Results, name: str) -> Any:
    """What results.json holds of the metric `name` (None: nothing)."""
    if name in Results.model_fields:
        return getattr(written, name) if name in written.model_fields_set else None
    return written.metrics.get(name)


def shown_dataset(m: Manifest) -> str:
    """The dataset's name as the report shows it: probsem suites are recorded under their prompt file's name
    (`test`, which read as a split or a placeholder), so the report names the suites: `probsem suites test_A +
    test_B`."""
    name = m.dataset.name or "?"
    if m.dataset.source != "probsem":
        return name
    files = m.dataset.details.get("files") or (list(m.dataset.sha256) if isinstance(m.dataset.sha256, dict) else [])
    suites = [PurePath(str(f)).stem for f in files if str(f).endswith(".json")]  # type: ignore[union-attr]
    return f"probsem suites {' + '.join(suites)}" if suites else name


def summarize_run(index: int, log: RunLog) -> RunSummary:
    results, notes = filled_results(log)
    m = log.manifest
    t0, t1 = parse_time(m.started_at), parse_time(m.finished_at)
    duration = m.elapsed_s  # time spent running, over every session of a resumed run
    if duration is None and t0 and t1 and t1 >= t0:  # older run logs: start to finish (a clock step is not one)
        duration = (t1 - t0).total_seconds()
    dists = [d for d in (distribution(s) for s in log.iter_samples()) if d is not None]
    return RunSummary(
        index=index,
        log=log,
        model=m.model.spec or "?",
        dataset=shown_dataset(m),
        results=results,
        duration_s=duration,
        dists=dists,
        calibration=calibration_view(dists),
        notes=notes,
    )


@dataclass
class ReportData:
    runs: list[RunSummary]
    coverage: list[CoverageView]
    history: dict[tuple[str, str], list[HistoryPoint]]
    generated_at: str
    aborted: list[RunSummary] = field(default_factory=list)  # runs with nothing scored: listed apart, not charted
    warnings: list[str] = field(default_factory=list)  # directories skipped, duplicates shown once
    comparisons: ComparisonSection | None = None  # paired comparisons, when two or more runs are shown


_REPORT_HEADS = (b"# proctor report", b"<title>proctor report")


def _is_report(path: Path) -> bool:
    """A file a proctor report was written to (its title in the first KiB)."""
    try:
        if not path.is_file():
            return False
        with path.open("rb") as f:
            head = f.read(1024)
    except OSError:
        return False
    return any(mark in head for mark in _REPORT_HEADS)


def _read_all(run_dirs: Sequence[str | Path]) -> tuple[list[RunLog], list[str]]:
    """Each readable run once (by run id); a damaged directory is skipped with a warning naming it (also logged,
    so the command line says it), unless nothing at all could be read (then its error stands)."""
    logs: dict[str, RunLog] = {}
    warnings: list[str] = []
    first_error: Exception | None = None
    for d in run_dirs:
        if _is_report(Path(d)):
            continue  # `report runs/*` after `report runs/* -o runs/report.html`: not a run, and no surprise
        try:
            log = open_run(d)  # its samples left on disk, read one at a time when used
        except (ProctorError, OSError, ValueError) as e:
            first_error = first_error or e
            warnings.append(f"{d}: skipped, not a readable run directory ({e})")
            continue
        key = record_key(log.manifest.run_id, log.manifest.partial is not None)  # a partial run beside the complete
        seen = logs.get(key)
        if seen is not None:
            warnings.append(f"{d}: the same run as {seen.path} (run id {log.manifest.run_id[:12]}), shown once")
            continue
        logs[key] = log
    if not logs and first_error is not None:
        raise first_error
    for w in warnings:
        logger.warning("%s", w)
    return list(logs.values()), warnings


def with_labels(log: RunLog, labels: HumanLabels | None) -> RunLog:
    """`log` with its judge-corrected block recomputed under `labels` (`report --human-labels`; None: as it is)."""
    if labels is None or log.results is None:
        return log
    block = corrected_of(log.iter_samples(), labels)
    return log.model_copy(update={"results": log.results.model_copy(update={"judge_corrected": block})})


def _n_scored(r: RunSummary) -> int:
    return r.results.overall.n_scored


def load(
    run_dirs: Sequence[str | Path],
    *,
    store: str | Path | None = None,
    history: Sequence[Mapping[str, Any]] | None = None,
    mix_settings: bool = False,
    labels: Mapping[Path, HumanLabels] | None = None,
) -> ReportData:
    """Read every run and compute what the report shows (`mix_settings`: compare runs of the same items under
    different settings too, as `proctor.analysis.comparable` allows).

    `history` — explicit points ({started_at, accuracy, ci_low, ci_high}, optionally model/dataset; without
    them a point belongs to the first run's model and dataset). Otherwise the history store is asked.
    """
    logs, warnings = _read_all(run_dirs)
    logs = [with_labels(log, (labels or {}).get(log.path.resolve())) for log in logs]
    summaries = [summarize_run(i, log) for i, log in enumerate(logs)]
    scored = [r for r in summaries if _n_scored(r) > 0]
    aborted = [r for r in summaries if _n_scored(r) == 0] if scored else []
    runs = [dataclasses.replace(r, index=i) for i, r in enumerate(scored or summaries)]
    by_ds: dict[str, list[RunSummary]] = defaultdict(list)
    for r in runs:
        by_ds[r.dataset].append(r)
    cov = [coverage_view(ds, chain.from_iterable(r.log.iter_samples() for r in rs)) for ds, rs in by_ds.items()]

    keys = list(dict.fromkeys((r.model, r.dataset_key) for r in runs))
    raw: dict[tuple[str, str], list[Any]] = defaultdict(list)
    if history is not None:
        for p in history:
            key = (str(_get(p, "model") or keys[0][0]), str(_get(p, "dataset") or keys[0][1])) if keys else None
            if key:
                raw[key].append(p)
    else:
        for key in keys:
            got = store_history(key[0], key[1], store)
            if got:
                raw[key].extend(got)
    hist: dict[tuple[str, str], list[HistoryPoint]] = {}
    for key in keys:
        pts = history_points(raw.get(key, []))
        seen = {p.started_at for p in pts} | {p.label for p in pts if p.label}
        for r in runs:  # the runs in this report belong on their own history line, once (by start or run id)
            t = parse_time(r.started_at)
            o = r.results.overall
            if ((r.model, r.dataset_key) == key and t and t not in seen and r.log.manifest.run_id not in seen
                    and o.accuracy is not None and r.partial is None):
                pts.append(HistoryPoint(t, o.accuracy, o.ci_low, o.ci_high, r.log.manifest.run_id))
        pts.sort(key=lambda p: p.started_at.timestamp())
        if len(pts) >= 2:
            hist[key] = pts
    return ReportData(runs, cov, hist, datetime.now().astimezone().isoformat(timespec="seconds"), aborted=aborted,
                      warnings=warnings, comparisons=comparison_section(runs, mix_settings=mix_settings))
