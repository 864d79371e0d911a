"""probsem's per-suite results from a suite run's samples: each context as probsem showed it (`context_result`),
grouped by prompt and suite (`suite_results`), and summary.json's numbers for each (`suite_summary`: accuracy with its
95% Wilson interval, ties, Brier, ECE and log-loss) — the metrics results.json reports (`accuracy`, `calibration`),
over the same samples. `proctor.interop.probsem_export` writes them as CSV + JSONL + summary.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.results import Calibration, MetricBlock
from ..data.records import Item
from ..log.runlog import Outcome, Sample, SuiteDetails
from ..scoring.suites import ContextResult, suite_of, verdict
from .accuracy import group_block
from .calibration import calibration_of


@dataclass(frozen=True)
class SuiteSummary:
    """A suite's numbers (or all of them pooled): results.json's accuracy block and calibration over its contexts,
    and what only a suite has (correct answers, ties). `proctor.interop.probsem_export.summary_json` writes them."""

    block: MetricBlock  # accuracy with its 95% interval and the counts (n: contexts)
    calibration: Calibration | None  # None: no context with a known answer and a distribution
    n_correct: int
    n_ties: int


@dataclass
class SuiteResult:
    prompt: str
    suite: str
    contexts: list[ContextResult]
    summary: SuiteSummary


def _context_sample(c: ContextResult) -> Sample:
    """A context as the run log's sample of it, with what the metrics read (outcome, score, distribution)."""
    outcome, score = verdict(c)
    details = SuiteDetails(expected=c.expected, index=c.index, tie_indexes=c.ties,
                           distribution=c.probabilities if c.error is None else None)
    return Sample(sample_id=f"{c.index}#0", item_id=str(c.index), outcome=outcome, score=score, details=details)


def suite_summary(contexts: Sequence[ContextResult]) -> SuiteSummary:
    """Accuracy (95% Wilson CI), ties, Brier, ECE and mean log-loss over contexts with expected >= 0: the
    metrics results.json reports (`proctor.metrics`: accuracy and calibration), over the same samples."""
    samples = [_context_sample(c) for c in contexts]
    return SuiteSummary(group_block(samples), calibration_of(samples),
                        n_correct=sum(s.outcome is Outcome.CORRECT for s in samples),
                        n_ties=sum(1 for c in contexts if c.ties))


def context_result(sample: Sample) -> ContextResult:
    """One suite sample of a run log as probsem's context result (the rows the CSV/JSONL show)."""
    d = sample.details
    rows = [dict(r) for r in d.get("rows", [])]
    queries = [r["query"] for r in rows]
    predicted = queries.index(sample.extracted) if sample.extracted in queries else None
    correct = None if sample.outcome in (Outcome.ERROR, Outcome.UNSCORED) else sample.outcome is Outcome.CORRECT
    return ContextResult(int(d.get("index", 0)), str(d.get("text", "")), int(d.get("expected", -1)), rows,
                         predicted=predicted, ties=list(d.get("tie_indexes", [])), correct=correct, error=sample.error,
                         prefix=sample.prompt if isinstance(sample.prompt, str) else "", case_text=str(d.get("context", "")))


def suite_results(items: Sequence[Item], samples: Sequence[Sample]) -> list[SuiteResult]:
    """Group a suite run's samples back into one `SuiteResult` per (prompt, suite), in item order."""
    by_id = {s.sample_id: s for s in samples if s.epoch == 0}
    groups: dict[tuple[str, str], list[ContextResult]] = {}
    for item in items:
        sample = by_id.get(f"{item.identifier}#0")
        if sample is not None:
            groups.setdefault(suite_of(item), []).append(context_result(sample))
    return [SuiteResult(p, t, ctxs, suite_summary(ctxs)) for (p, t), ctxs in groups.items()]
