"""The end of a run: results computed from its samples, the manifest stamped finished, the history told."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from ..core.results import Results
from ..log.checksums import write_checksums
from ..log.provenance import utc_now
from ..log.runlog import RunLog, Sample, SamplesOnDisk, read_manifest, write_manifest, write_results
from ..metrics.results import summarize
from .store import ItemRows


def results_of(log: RunLog, rows: ItemRows | None = None) -> Results:
    """The run's results, a pure function of its samples and the manifest's counting settings: summarized in one
    pass over them (from disk, one at a time, for a run left there), never held for it. `rows`: the history's
    item rows gathered in the same pass (the samples read once for both)."""
    samples = log.iter_samples() if rows is None else _gathered(log.iter_samples(), rows)
    return summarize(samples, truncated_as=log.manifest.truncated_as, no_answer=log.manifest.no_answer,
                     extract=log.manifest.extract, manifest=log.manifest)


def _gathered(samples: Iterable[Sample], rows: ItemRows) -> Iterator[Sample]:
    for s in samples:
        rows.add(s)
        yield s


def on_disk(run_dir: Path, order: Sequence[str] | None = None) -> RunLog:
    """A run directory's log with its samples left on disk (read when used: `SamplesOnDisk`), results unread."""
    return RunLog.model_construct(path=run_dir, manifest=read_manifest(run_dir), samples=SamplesOnDisk(run_dir, order),
                                  results=None, streamed=True)


def finalize_run(run: Path | RunLog, store: Any = None, results: Results | None = None,
                 rows: ItemRows | None = None) -> RunLog:
    """Compute results.json from the samples (of a run directory, or already in memory; or take `results`
    computed from them, and `rows`, the history's item rows gathered with them), stamp the manifest as finished,
    and record the run in the history store."""
    # a directory: its samples alone, left on disk (the results.json there is about to be recomputed and replaced,
    # so reading it through read_run, which recomputes it to check it, would summarise the samples twice)
    log = run if isinstance(run, RunLog) else on_disk(Path(run))
    if results is None:
        if rows is None and store is not None:
            rows = ItemRows()
        results = results_of(log, rows)
    write_results(log.path, results)
    log.manifest.finished_at = utc_now()
    write_manifest(log.path, log.manifest)
    write_checksums(log.path, log.manifest)  # last: it hashes the files written above (proctor verify)
    log = log.model_copy(update={"results": results})
    if store is not None:
        store.record_run(log, rows)
    return log


__all__ = ["finalize_run", "on_disk", "results_of"]
