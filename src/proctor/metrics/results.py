"""results.json from a run's samples: every registered metric (`proctor.metrics`) over them, under the run's
policies for truncated and unanswered samples (`proctor.metrics.counting`), and each distinct error with its count.
`read_run` reads a run back with its results recomputed so (a results.json is never trusted); the files themselves
are read and written by `proctor.log.runlog`."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..core.results import Results
from ..log.runlog import (
    RESULTS,
    SAMPLES,
    Manifest,
    Outcome,
    RunLog,
    Sample,
    SamplesOnDisk,
    iter_samples,
    read_manifest,
    read_results,
)
from . import RunContext, compute_metrics
from .counting import check_no_answer, check_truncated_as, no_answer_counted, truncated_as_counted

log = logging.getLogger("proctor.log.runlog")


def summarize(
    samples: Iterable[Sample], seed: int = 0, truncated_as: str = "wrong", no_answer: str = "wrong",
    extract: str | None = None, manifest: Manifest | None = None, only: Collection[str] | None = None,
) -> Results:
    """results.json from samples (see docs/runlog.md), in one pass over them (held in memory, or read one at a
    time: `RunLog.iter_samples`): every registered metric (`proctor.metrics`), and each distinct error with its
    count. Memory holds what each metric keeps of a sample (its `tally`: a score, codes for its item and cluster),
    never the samples. Truncated samples count as wrong, or leave accuracy with `truncated_as="excluded"` (rates
    kept either way); unanswered ones count as wrong, or as the expected value of a guess with
    `no_answer="guess"`. `manifest` gives the metrics that need it their prices and judge. `only`: the metrics of
    these names alone (the report's, for what an older results.json lacks)."""
    check_truncated_as(truncated_as)
    check_no_answer(no_answer)
    errors: Counter[str] = Counter()

    def counted() -> Iterator[Sample]:
        for s in samples:
            if s.outcome is Outcome.ERROR:
                errors[s.error or "unknown error"] += 1
            yield no_answer_counted(truncated_as_counted(s, truncated_as), no_answer)

    builtin, extra = compute_metrics(counted(), RunContext(manifest=manifest, seed=seed, no_answer=no_answer), only)
    return Results.model_validate({**builtin, "metrics": extra, "truncated_as": truncated_as,
                                   "no_answer": no_answer, "extract": extract,
                                   "errors": dict(sorted(errors.items(), key=lambda kv: (-kv[1], kv[0]))),
                                   "cluster": manifest.cluster if manifest is not None else None})


def read_run(run_dir: str | Path, samples: bool = True) -> RunLog:
    """Load a run directory; later samples of the same sample_id replace earlier ones (retried errors).
    `samples=False`: the manifest and results.json as written (unchecked: whoever uses a number of it recomputes
    it from the streamed samples, as `exporters._common.overall_accuracy` does); `RunLog.iter_samples` streams
    the samples from disk. Else the results are recomputed from the samples (`checked_results`)."""
    d = Path(run_dir)
    manifest = read_manifest(d)
    if not samples:
        return RunLog.model_construct(path=d, manifest=manifest, samples=SamplesOnDisk(d), results=read_results(d),
                                      streamed=True)
    held = latest_samples(d)
    return RunLog(path=d, manifest=manifest, samples=held, results=checked_results(d, manifest, held))


def open_run(run_dir: str | Path) -> RunLog:
    """A run directory with its samples left on disk (`SamplesOnDisk`: read one at a time when used) and its
    results recomputed from them in one streamed pass, checked against results.json as `read_run` checks them:
    what a report of a run of any size reads, in memory that does not grow with it."""
    d = Path(run_dir)
    manifest = read_manifest(d)
    on_disk = SamplesOnDisk(d)
    return RunLog.model_construct(path=d, manifest=manifest, samples=on_disk,
                                  results=checked_results(d, manifest, on_disk), streamed=True)


def latest_samples(run_dir: Path) -> list[Sample]:
    """A run's samples, a later record of a sample_id replacing an earlier one (retried errors)."""
    latest: dict[str, Sample] = {}
    for s in iter_samples(run_dir / SAMPLES):
        latest[s.sample_id] = s
    return list(latest.values())


def checked_results(run_dir: str | Path, manifest: Manifest, samples: Iterable[Sample]) -> Results | None:
    """The run's results recomputed from its samples (the truth; results are a pure function of them) in one
    pass, or None when the run wrote no results.json (unfinished). A results.json that disagrees with them (a hand
    edit, a copy from another run) is named on stderr and never used."""
    written = read_results(run_dir)
    if written is None:
        return None
    truth = summarize(samples, truncated_as=manifest.truncated_as, no_answer=manifest.no_answer,
                      extract=manifest.extract, manifest=manifest)
    warn_if_disagrees(run_dir, written.as_dict(), truth.as_dict())
    # the blocks the file holds, recomputed (a block it lacks stays absent: the report says it worked it out)
    held = {k for k in written.model_fields_set if getattr(written, k) not in (None, {})} | {"schema_version"}
    kept = {k: v for k, v in truth.as_dict().items() if k in held}
    kept["metrics"] = {k: v for k, v in truth.as_dict()["metrics"].items() if k in written.metrics}
    return Results.model_validate(kept)


def warn_if_disagrees(run_dir: str | Path, written: Any, truth: Any, where: str = "") -> None:
    """Name on stderr a results.json (or its block `where`) that disagrees with the numbers recomputed from the
    samples, with the first value that differs."""
    differ = _first_difference(written, truth, where)
    if differ:
        log.warning("%s: disagrees with its samples (%s); using the numbers recomputed from %s",
                    Path(run_dir) / RESULTS, differ, SAMPLES)


def _same_float(a: Any, b: Any) -> bool:
    """Two numbers equal to float noise (a sum taken in another order: 1.885000000000001 vs 1.8850000000000005)."""
    numbers = (int, float)
    return (isinstance(a, numbers) and isinstance(b, numbers) and not isinstance(a, bool) and not isinstance(b, bool)
            and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


def _first_difference(written: Any, truth: Any, where: str = "") -> str | None:
    """The first value `written` holds that `truth` does not ("overall.accuracy: 7.5, not 0.0"); keys that only
    one side has (an older schema, a metric not registered here) are not compared."""
    if isinstance(written, dict) and isinstance(truth, dict):
        for key in written.keys() & truth.keys():
            found = _first_difference(written[key], truth[key], f"{where}.{key}" if where else str(key))
            if found:
                return found
        return None
    if isinstance(written, list) and isinstance(truth, list) and len(written) == len(truth):
        return next((found for i, (w, t) in enumerate(zip(written, truth, strict=True))
                     if (found := _first_difference(w, t, f"{where}[{i}]"))), None)
    if written == truth or _same_float(written, truth):
        return None
    return f"{where or 'results'}: {repr(written)[:80]}, not {repr(truth)[:80]}"  # a list of bins stays short
