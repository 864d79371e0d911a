"""probsem's per-suite results from a suite run's samples: each context as probsem showed it (`context_result`),
grouped by prompt and suite (`suite_results`), and summary.json's numbers for each (`suite_summary`: accuracy with its
95% Wilson interval, ties, Brier, ECE and log-loss) — the metrics results.json reports (`accuracy`, `calibration`),
over the same samples. `proctor.interop.probsem_export` writes them as CSV + JSONL + summary.json."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel

from ..data.records import Item
from ..log.runlog import Outcome, Sample, SuiteDetails
from ..scoring.suites import ContextResult, suite_of, verdict
from .accuracy import group_block
from .calibration import calibration_of


class SuiteSummary(BaseModel):
    """summary.json's numbers for a suite (or all of them): accuracy with its 95% interval, ties, calibration."""

    n_contexts: int
    n_scored: int
    n_unscored: int
    n_errors: int
    n_correct: int
    n_ties: int
    accuracy: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    ci_method: str | None = None
    brier: float | None = None
    ece: float | None = None
    log_loss: float | None = None


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
    block, cal = group_block(samples), calibration_of(samples)
    return SuiteSummary(
        n_contexts=block.n, n_scored=block.n_scored, n_unscored=block.n_unscored, n_errors=block.n_errors,
        n_correct=sum(s.outcome is Outcome.CORRECT for s in samples), n_ties=sum(1 for c in contexts if c.ties),
        accuracy=block.accuracy, ci_low=block.ci_low, ci_high=block.ci_high, ci_method=block.ci_method,
        brier=cal.brier if cal else None, ece=cal.ece if cal else None, log_loss=cal.log_loss if cal else None,
    )


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
