"""probsem's outputs from a suite run: per suite `<P>_<T>_<model>_results.csv` and `.jsonl` (probsem's
naming, so several models accumulate in one folder) and the summary (each suite's and the pooled one).

A run writes them as its last step when its `RunOptions.outputs` holds `ProbsemFiles` (`proctor score` and
`proctor.score` do); `proctor export --to probsem` writes them from any suite run log (`proctor score`, or
`proctor run --mode logprob` on suites).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..data.formats.suites import model_slug, results_stem, sanitize_filename
from ..log.runlog import RunLog, Sample, SuiteDetails
from ..metrics.suites import SuiteResult, SuiteSummary, context_result, suite_results, suite_summary
from ..run.outputs import Finished
from ..run.resolve import suite_options
from ..scoring.logprob import Norm
from ..scoring.suites import ContextResult, ScoreOptions
from ..util.errors import InputError
from ..util.textio import dumps_jsonl, write_json_atomic, write_text_atomic
from .export_common import model_spec


def csv_text(result: SuiteResult) -> str:
    """probsem-compatible table: text, query, logp (the normalized, tempered score), score (probability)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["text", "query", "logp", "score"])
    for c in result.contexts:
        for q in c.queries:
            w.writerow([c.text, q["query"], _num(q["score"]), _num(q["probability"])])
    return buf.getvalue()


def _num(x: float | None) -> str:
    return "" if x is None else repr(float(x))


def write_outputs(out_dir: str | Path, result: SuiteResult, options: ScoreOptions,
                  model: str | None = None) -> dict[str, Path]:
    """Write `<P>_<T>_<model>_results.csv` and `.jsonl` atomically (probsem's naming, so several models
    accumulate in one directory; `proctor.data.formats.suites.results_stem`); return their paths."""
    d = Path(out_dir)
    stem = results_stem(result.prompt, result.suite, model)
    csv_path, jsonl_path = d / f"{stem}.csv", d / f"{stem}.jsonl"
    write_text_atomic(csv_path, csv_text(result))
    rows = [
        {"prompt": result.prompt, "suite": result.suite, "norm": options.norm.value,
         "temperature": options.temperature, "join": options.join, **c.as_dict()}
        for c in result.contexts
    ]
    write_text_atomic(jsonl_path, dumps_jsonl(rows))
    return {"csv": csv_path, "jsonl": jsonl_path}


SummaryValue = int | float | str | None


def summary_json(s: SuiteSummary) -> dict[str, SummaryValue]:
    """One suite's entry in the summary file, flat as it has always been: the counts, accuracy with its interval,
    ties, Brier, ECE and log-loss."""
    b, cal = s.block, s.calibration
    return {"n_contexts": b.n, "n_scored": b.n_scored, "n_unscored": b.n_unscored, "n_errors": b.n_errors,
            "n_correct": s.n_correct, "n_ties": s.n_ties, "accuracy": b.accuracy, "ci_low": b.ci_low,
            "ci_high": b.ci_high, "ci_method": b.ci_method, "brier": cal.brier if cal else None,
            "ece": cal.ece if cal else None, "log_loss": cal.log_loss if cal else None}


def write_summary(path: str | Path, results: Sequence[SuiteResult]) -> Path:
    """The summary file: each suite's summary and the pooled one."""
    pooled = suite_summary([c for r in results for c in r.contexts])
    write_json_atomic(path, {"suites": {f"{r.prompt}_{r.suite}": summary_json(r.summary) for r in results},
                             "overall": summary_json(pooled)})
    return Path(path)


def write_probsem_outputs(out_dir: str | Path, run_dir: str | Path, model_slug: str, results: Sequence[SuiteResult],
                          options: ScoreOptions) -> list[Path]:
    """probsem's files: per suite a CSV and a JSONL in `out_dir`, named with the model as probsem names them
    (so several models' files accumulate there), and summary.json beside the run log in `run_dir`; return
    their paths. `model_slug` names the model (`proctor.data.formats` decides the naming)."""
    written: list[Path] = []
    for r in results:
        written += write_outputs(out_dir, r, options, model_slug).values()
    written.append(write_summary(Path(run_dir) / "summary.json", results))
    return written


@dataclass(frozen=True)
class ProbsemFiles:
    """A run output (`proctor.run.outputs`): each suite run's probsem files, the CSV + JSONL per suite in `out`
    (default: the run directory; several models accumulate in one `out`), summary.json in the run directory."""

    out: Path | None = None
    name: str = "probsem"

    def write(self, runs: Sequence[Finished]) -> list[Path]:
        """Every run's files, from its samples in item order and the options its resolved spec scored with."""
        written: list[Path] = []
        for run in runs:
            results = suite_results(run.task.items, run.log.samples)
            written += write_probsem_outputs(self.out or run.log.path, run.log.path,
                                             run.spec.model.spec.replace("/", "-"), results,
                                             suite_options(run.spec.scorer))
        return written


# ---------------------------------------------------------------- proctor export --to probsem


def run_suites(log: RunLog) -> tuple[list[SuiteResult], ScoreOptions]:
    """A suite run's samples (first epoch) grouped back into one result per (prompt, suite), contexts in
    order, with the options they were scored with; a run that did not score suites is refused."""
    samples = [s for s in log.iter_samples() if s.epoch == 0]
    if not samples or not all(isinstance(s.details, SuiteDetails) for s in samples):
        raise InputError.at(log.path, "not a suite run: probsem's outputs come from `proctor score` (or `proctor "
                            "run --mode logprob` on suites)")
    groups: dict[tuple[str, str], list[ContextResult]] = {}
    for s in samples:
        groups.setdefault((s.category or s.dataset, s.subcategory or ""), []).append(context_result(s))
    results = [SuiteResult(p, t, sorted(ctxs, key=lambda c: c.index), suite_summary(ctxs))
               for (p, t), ctxs in groups.items()]
    return results, _options(samples[0])


def _options(sample: Sample) -> ScoreOptions:
    """The normalisation, softmax temperature and join a suite sample was scored with."""
    d = sample.details
    assert isinstance(d, SuiteDetails)  # run_suites checked every sample
    return ScoreOptions(norm=Norm(d.norm or "sum"), temperature=1.0 if d.temperature is None else d.temperature,
                        join="space" if d.join == "space" else "newline")


def export(logs: Sequence[RunLog], out: Path) -> list[Path]:
    """Each suite run's CSV + JSONL per suite and `<model>_summary.json`, all in `out`."""
    written: list[Path] = []
    owner: dict[str, Path] = {}
    for log in logs:
        slug = model_spec(log).replace("/", "-")
        results, options = run_suites(log)
        for r in results:
            key = f"{r.prompt}\x1f{r.suite}\x1f{model_slug(slug)}"
            if key in owner:
                raise InputError.at(log.path, f"suite {r.prompt}_{r.suite} of model {slug} is also in {owner[key]}: "
                                    "export one of them")
            owner[key] = log.path
            written += write_outputs(out, r, options, slug).values()
        written.append(write_summary(out / f"{sanitize_filename(model_slug(slug))}_summary.json", results))
    return written
