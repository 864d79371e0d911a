"""`proctor import`: another harness's results as proctor runs, so `report`, `compare`, `history` and
`leaderboard` read them as they read proctor's own (docs/import.md).

One module per source, each with `looks_like(json)` and `read(path, options) -> [ImportedRun]`:
`lmeval` (lm-evaluation-harness results + `--log_samples` files) and `inspect` (Inspect eval logs).
Everything is read and checked before anything is written.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..util.errors import InputError
from ..util.textio import load_json
from . import inspect_import as inspect
from . import lmeval_import as lmeval
from .imported import ImportedRun, ImportOptions, run_dir_for, write_run

Reader = Callable[[Path, ImportOptions], list[ImportedRun]]
READERS: dict[str, Reader] = {lmeval.HARNESS: lmeval.read, inspect.HARNESS: inspect.read}


def is_llmwc_results(path: Path) -> bool:
    """An llm-wc results directory (`run.json`, `models/<name>/`): `proctor.interop.llmwc_import` reads it (`proctor import`)."""
    return path.is_dir() and (path / "run.json").is_file()


def expand(paths: Sequence[str | Path]) -> list[Path]:
    """Files as given; a folder as the lm-eval `results_*.json` files and Inspect `.eval` logs under it."""
    found: list[Path] = []
    for given in map(Path, paths):
        if not given.is_dir():
            found.append(given)
            continue
        inside = sorted({*given.rglob("results_*.json"), *given.rglob("*.eval")})
        if not inside:
            raise InputError.at(given, "no lm-eval results_*.json nor Inspect .eval log in this folder")
        found += inside
    return list(dict.fromkeys(found))


def detect(path: Path) -> str:
    """Which harness wrote `path`: "lm-eval" or "inspect" (an error saying what it is not, otherwise)."""
    if not path.is_file():
        raise InputError.at(path, "no such file" if not path.exists() else "not a file")
    if path.suffix == ".eval":
        return inspect.HARNESS
    if path.name.startswith("samples_") and path.suffix == ".jsonl":
        raise InputError.at(path, "an lm-eval samples file: give the results_<date>.json beside it "
                                  "(its samples are found from it)")
    if path.suffix == ".json":
        data = load_json(path)
        if lmeval.looks_like(data):
            return lmeval.HARNESS
        if inspect.looks_like(data):
            return inspect.HARNESS
    raise InputError.at(path, "neither an lm-eval results file (results_<date>.json) nor an Inspect log "
                              "(.eval or .json)")


def read_all(paths: Sequence[str | Path], opts: ImportOptions) -> list[ImportedRun]:
    """Every run the paths hold, each read whole and checked; a run given twice is read once."""
    runs: dict[str, ImportedRun] = {}
    for path in expand(paths):
        for run in READERS[detect(path)](path, opts):
            runs.setdefault(run.manifest.run_id, run)
    return list(runs.values())


__all__ = ["READERS", "ImportOptions", "ImportedRun", "detect", "expand", "is_llmwc_results", "read_all", "run_dir_for", "write_run"]
