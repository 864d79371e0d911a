"""How a run command ends: its errors summed up on stderr, and its exit status."""

from __future__ import annotations

import typer

from ..log.runlog import RunLog
from ..run.runner import error_groups
from .messages import count, error, note, warning


def error_status(log: RunLog, max_error_rate: float) -> int:
    """Print each distinct error message with its count (stderr); 1 when the run must not pass as fine."""
    if log.results is None:
        return 1
    errors, overall = log.results.errors, log.results.overall
    n, n_errors = overall.n, sum(errors.values())
    if errors:
        groups = error_groups(errors)  # one line per kind: the same message but for its numbers
        lines = [f"{g.count:>6} × {_printable(g.describe())[:300]}" for g in groups[:10]]
        if len(groups) > 10:
            lines.append(f"… and {len(groups) - 10} other kinds of error (see {log.path}/samples.jsonl)")
        warning("\n".join([f"{log.path}: {count(n_errors, 'errored sample')} (a re-run retries them):", *lines]))
    if not n and log.manifest.shard:  # hash buckets can be empty: `merge` still needs this shard's directory
        note(f"{log.path}: shard {log.manifest.shard} holds none of the items; it is complete (merge it with the others)")
        return 0
    if not overall.n_scored and not overall.n_unscored:
        error(f"{log.path}: nothing was scored")
        return 1
    if overall.truncated_rate == 1.0:  # of the answers that could be scored (metrics.accuracy)
        error(f"{log.path}: every answer ({count(overall.n_truncated, 'sample')}) was cut at the token limit, so the score "
              "measures the budget, not the model; raise --max-tokens (or --retry-truncated) and run again")
        return 1
    if n and n_errors / n > max_error_rate:
        error(f"{log.path}: {n_errors} of {n} samples errored ({n_errors / n:.0%} > --max-error-rate "
              f"{max_error_rate:.0%}); run the same command again to retry them")
        return 1
    return 0


def finish(log: RunLog, max_error_rate: float) -> None:
    """End a one-run command: the error summary, and exit 1 when `error_status` says so."""
    status = error_status(log, max_error_rate)
    if status:
        raise typer.Exit(status)


def _printable(text: str) -> str:
    """Control characters from a server's message shown escaped, never sent raw to the terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
