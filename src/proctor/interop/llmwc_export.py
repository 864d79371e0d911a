"""llm-wc's results layout: `run.json` (+ `config.yaml` for a config run) and `models/<name>/summary.json`,
`models/<name>/results.json` (the upstream question rows plus `pred` and `model_outputs`).

Counts always add up: `total = correct + incorrect + errors + unscored`; `accuracy` is proctor's (errors
are not answers). API keys are never written: `api_key` is always null, base URLs have credentials masked.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..benchmarks.hub import file_sha256, read_rows
from ..benchmarks.registry import BUILTINS
from ..data.formats.convert import slug
from ..log.runlog import Outcome, RunLog
from ..run.outputs import Finished
from ..util.errors import InputError
from ..util.redact import redact, redact_url
from ..util.safepath import distinct_components
from ..util.textio import staged_for, write_json_atomic, write_json_list_atomic, write_text_atomic
from .export_common import dataset_name, model_name, overall_accuracy, tally
from .llmwc import ID_COLUMNS, LlmwcConfig, ModelEntry, model_dir_name, request_params, resolved_defaults


def outcome_counts(outcomes: Mapping[Outcome, int]) -> dict[str, int]:
    """correct / incorrect / errors / unscored / total, adding up (partial credit counts as incorrect)."""
    correct, errors, unscored = outcomes.get(Outcome.CORRECT, 0), outcomes.get(Outcome.ERROR, 0), \
        outcomes.get(Outcome.UNSCORED, 0)
    total = sum(outcomes.values())
    return {"correct": correct, "incorrect": total - correct - errors - unscored, "errors": errors,
            "unscored": unscored, "total": total}


def dataset_path(log: RunLog) -> str | None:
    """The data file when one was used, else the hub repository."""
    ds = log.manifest.dataset
    return ds.data_file or ds.source or ds.path


def summary(log: RunLog, name: str, api_base: str | None, params: dict[str, Any], seed: int | None) -> dict[str, Any]:
    """llm-wc's `summary.json` for one model (the base URL with any credential masked)."""
    t = tally(log)  # one streamed pass: the overall block and the outcome counts
    return {"accuracy": overall_accuracy(log, t).accuracy, **outcome_counts(t.outcomes), "model": name,
            "api_base": redact_url(api_base) if api_base else api_base, "request_params": params, "seed": seed,
            "dataset_path": dataset_path(log), "strict_parsing": False}


def result_rows(log: RunLog, upstream: dict[str, dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """One row per question (first epoch), read as written: the upstream row, `pred` and `model_outputs` (and
    `error`)."""
    for s in log.iter_samples():
        if s.epoch != 0:
            continue
        row = dict(upstream.get(s.item_id) or {"id": s.item_id, "answer": s.reference, "category": s.category})
        row["pred"] = s.extracted if s.outcome is not Outcome.ERROR else None
        row["model_outputs"] = s.raw_output or ""
        if s.error:
            row["error"] = s.error
        yield row


def upstream_rows(log: RunLog) -> dict[str, dict[str, Any]]:
    """item id → the upstream row it came from, read again from the run's data file (llm-wc's benchmarks, the
    file unchanged since the run: same sha256); empty otherwise (rows then carry id, answer and category)."""
    ds = log.manifest.dataset
    name, data_file = ds.name, ds.data_file
    if name not in (*ID_COLUMNS, *_gpqa_names()) or not data_file or not Path(data_file).is_file():
        return {}
    if ds.data_file_sha256 not in (None, file_sha256(data_file)):
        return {}
    prefix = f"{slug(name)}."
    wanted = {s.item_id.removeprefix(prefix): s.item_id for s in log.iter_samples() if s.epoch == 0}
    column = ID_COLUMNS.get(name, "Record ID")
    rows, _ = read_rows(data_file)
    out = {}
    for row in rows:
        key = str(row.get(column, "")).strip()
        if key in wanted:
            out[wanted[key]] = {k: _jsonable(v) for k, v in row.items()}
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "tolist"):
        return _jsonable(value.tolist())
    return str(value)


def write_model_dir(root: Path, dir_name: str, entry_summary: dict[str, Any], rows: Iterable[dict[str, Any]]
                    ) -> list[Path]:
    d = root / "models" / dir_name
    write_json_atomic(d / "summary.json", redact(entry_summary))
    write_json_list_atomic(d / "results.json", rows)  # a row at a time, as json.dumps(list, indent=2) writes them
    return [d / "summary.json", d / "results.json"]


# ---------------------------------------------------------------- proctor export --to llmwc


def export(logs: Sequence[RunLog], out: Path) -> list[Path]:
    """One llm-wc results directory from runs of one benchmark: run.json naming every model, models/<name>/."""
    first = logs[0]
    for log in logs[1:]:
        if dataset_name(log) != dataset_name(first):
            raise InputError.at(log.path, f"dataset {dataset_name(log)!r}, not {dataset_name(first)!r}: an llm-wc "
                                "results directory holds one benchmark (export each separately)")
    names = [model_name(log) for log in logs]
    _one_run_per_model(logs, names)
    m = first.manifest
    run = {
        "benchmark": {"name": dataset_name(first), "output_dir": str(staged_for(out)), "seed": m.choice_order_seed,
                      "limit_subjects": None, "limit_per_subject": m.dataset.details.get("limit_per_category"),
                      "dataset_path": dataset_path(first), "prompt_kind": m.prompt_kind, "strict_parsing": False},
        "request_defaults": _params(first),
        "models": [{"name": name, "api_base": _api_base(log), "api_key": None,
                    "api_key_env": log.manifest.model.api_key_env} for name, log in zip(names, logs, strict=True)],
        "started_at": m.started_at,
    }
    write_json_atomic(out / "run.json", redact(run))
    written = [out / "run.json"]
    for name, dir_name, log in zip(names, distinct_components(names, model_dir_name), logs, strict=True):
        written += write_model_dir(out, dir_name, summary(log, name, _api_base(log), _params(log),
                                                          log.manifest.choice_order_seed),
                                   result_rows(log, upstream_rows(log)))
    return written


def _one_run_per_model(logs: Sequence[RunLog], names: Sequence[str]) -> None:
    """llm-wc keys a model by its name (`models/<name>/`): refuse the same run twice, or two runs of one name."""
    seen: dict[str, RunLog] = {}
    by_run: dict[str, RunLog] = {}
    for log, name in zip(logs, names, strict=True):
        other = by_run.setdefault(log.manifest.run_id, log)
        if other is not log:
            raise InputError.at(log.path, f"the same run as another one given ({other.path}, run id "
                                          f"{log.manifest.run_id}): give it once")
        other = seen.setdefault(name, log)
        if other is not log:
            raise InputError.at(log.path, f"the same model name {name!r} as {other.path}: an llm-wc results "
                                          "directory holds one run per model (export them separately)")


def _params(log: RunLog) -> dict[str, Any]:
    generation = log.manifest.generation.as_dict() if log.manifest.generation is not None else {}
    return {k: v for k, v in generation.items() if k != "stop" or v}


def _api_base(log: RunLog) -> str | None:
    model = log.manifest.model
    return model.base_url or next(iter(model.base_urls or []), None)


# ---------------------------------------------------------------- proctor run --config


def resolved_run(root: Path, config: LlmwcConfig, entries: Sequence[ModelEntry], data_path: str | None
                 ) -> dict[str, Any]:
    """The run as llm-wc saves it (its `config.yaml`; `run.json` adds `started_at`): the benchmark block with
    the time-stamped `output_dir`, every request default, every key of each model run (keys never)."""
    block = config.benchmark.model_dump(exclude_none=False)
    block["output_dir"] = str(root)
    if data_path is not None:
        block["dataset_path"] = data_path
    run = {"benchmark": block, "request_defaults": resolved_defaults(config),
           "models": [entry.public() for entry in entries]}
    return dict(redact(run))


def write_results_dir(root: Path, config: LlmwcConfig, runs: Sequence[tuple[ModelEntry, str, RunLog]],
                      started_at: str) -> list[Path]:
    """A whole llm-wc results directory for a config run: run.json, config.yaml (keys removed), models/."""
    run = resolved_run(root, config, [entry for entry, _, _ in runs], dataset_path(runs[0][2]) if runs else None)
    write_text_atomic(root / "config.yaml", yaml.safe_dump(run, sort_keys=False, allow_unicode=True))
    write_json_atomic(root / "run.json", {**run, "started_at": started_at})
    written = [root / "config.yaml", root / "run.json"]
    for entry, dir_name, log in runs:
        params = request_params(config, entry)
        written += write_model_dir(root, dir_name, summary(log, entry.name, entry.api_base, params,
                                                           config.benchmark.seed), result_rows(log, upstream_rows(log)))
    return written


@dataclass(frozen=True, eq=False)
class LlmwcResultsDir:
    """A run output (`proctor.run.outputs`): the llm-wc results directory of a config run, written once every
    model has run (`models`: each run's config entry and directory name, in the order of the runs)."""

    root: Path
    config: LlmwcConfig
    models: tuple[tuple[ModelEntry, str], ...]
    started_at: str  # llm-wc's `started_at` (UTC, ISO 8601, `Z`)
    name: str = "llm-wc results"

    def write(self, runs: Sequence[Finished]) -> list[Path]:
        """run.json, config.yaml and models/<name>/ from the finished runs."""
        return write_results_dir(self.root, self.config, [(entry, dir_name, run.log) for (entry, dir_name), run
                                                          in zip(self.models, runs, strict=True)], self.started_at)


def _gpqa_names() -> tuple[str, ...]:
    """The GPQA subsets, from the one list of built-in benchmarks."""
    return tuple(name for name in BUILTINS if name.startswith("gpqa-"))
