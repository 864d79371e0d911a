"""The report tests' fixtures; their helpers live in report_runs.py, imported by name (never `from conftest`,
which resolves to whichever test directory's conftest was imported first)."""

from report_runs import judged_run, logprob_run, runs, write_run_fn

__all__ = ["judged_run", "logprob_run", "runs", "write_run_fn"]
