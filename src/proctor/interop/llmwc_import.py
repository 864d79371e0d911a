"""llm-wc's results directory (`run.json`, `models/<name>/results.json` and `summary.json`) read as proctor run logs:
each model's rows become samples graded as llm-wc grades them, with a manifest naming the source (the importer
beside the others; `proctor import` is its command, in `cli/llmwc_cmds.py`)."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..core.model import GenerationSpec
from ..data.formats.convert import slug
from ..data.formats.problems import json_loc_lines
from ..log.provenance import BackendInfo, DatasetInfo, collect_provenance
from ..log.runlog import (
    SAMPLES,
    Manifest,
    Outcome,
    RunLog,
    RunSettings,
    Sample,
    append_samples,
    check_generation,
    write_manifest,
)
from ..run.finalize import finalize_run
from ..run.store import Store
from ..util.errors import InputError
from ..util.redact import redact, redact_url
from ..util.safepath import safe_component
from ..util.textio import atomic_directory, read_text
from .llmwc import (
    ID_COLUMNS,
    ROWS,
    BenchmarkBlock,
    ImportedBenchmark,
    ResultRow,
    RunFile,
    SummaryFile,
    builtin_name,
    read_layout_file,
)


def _dataset_name(block: ImportedBenchmark) -> str:
    try:
        return builtin_name(BenchmarkBlock.model_validate(block.model_dump()))
    except (InputError, ValueError):
        return block.name or "llm-wc"


def _row_id(row: ResultRow, dataset: str, index: int) -> str:
    column = ID_COLUMNS.get(dataset)
    value = row.column(column) if column else None
    return f"{slug(dataset)}.{value if isinstance(value, (str, int)) and not isinstance(value, bool) else index}"


def _category(row: ResultRow) -> str | None:
    for key in ("category", "High-level domain", "Subject", "subject"):
        if isinstance(row.column(key), str):
            return str(row.column(key))
    types = row.column("problem_type")
    return str(types[0]) if isinstance(types, list) and types else None


_INTEGER = re.compile(r"-?[0-9]{1,4000}", re.ASCII)  # ASCII digits only ("²" is a digit to str.isdigit)


def grade(pred: Any, answer: Any) -> bool:
    """llm-wc's verdict: the prediction equals the answer (letters case-blind, integers by value)."""
    p, a = str(pred).strip(), str(answer).strip()
    if _INTEGER.fullmatch(p) and _INTEGER.fullmatch(a):
        return int(p) == int(a)
    return p.upper() == a.upper()


def imported_sample(row: ResultRow, index: int, dataset: str) -> Sample:
    answer = row.answer if row.answer is not None else row.column("Correct Answer")
    pred = row.pred
    if row.error:
        outcome, score = Outcome.ERROR, None
    elif answer is None:
        outcome, score = Outcome.UNSCORED, None
    elif pred is None or str(pred).strip() == "":
        outcome, score = Outcome.NO_ANSWER, 0.0
    else:
        outcome = Outcome.CORRECT if grade(pred, answer) else Outcome.WRONG
        score = 1.0 if outcome is Outcome.CORRECT else 0.0
    item_id = _row_id(row, dataset, index)
    question = next((q for q in (row.column(k) for k in ("question", "problem", "Question")) if isinstance(q, str)), "")
    return Sample(sample_id=f"{item_id}#0", item_id=item_id, dataset=dataset, category=_category(row),
                  prompt=question, reference=answer, raw_output=row.model_outputs,
                  extracted=None if pred is None else str(pred), extraction_rule="llm-wc",
                  score=score, outcome=outcome, error=row.error)


@dataclasses.dataclass(frozen=True)
class ImportedModel:
    """One model directory of a results directory, read and checked, ready to be written."""

    source: Path
    out: Path
    manifest: Manifest
    samples: list[Sample]
    summary: SummaryFile | None


def read_model(results_dir: Path, model_dir: Path, run: RunFile, runs_root: Path) -> ImportedModel:
    """One llm-wc model directory, validated whole (nothing is written yet)."""
    summary_path = model_dir / "summary.json"
    summary = read_layout_file(summary_path, SummaryFile) if summary_path.is_file() else None
    rows = read_layout_file(model_dir / "results.json", ROWS)
    dataset = _dataset_name(run.benchmark)
    samples = [imported_sample(r, i, dataset) for i, r in enumerate(rows)]
    _refuse_repeated_ids(model_dir / "results.json", rows, samples, dataset)
    given = summary or SummaryFile()
    check_generation(given.request_params, summary_path, "request_params")  # what the manifest records
    name = given.model or model_dir.name
    run_id = hashlib.sha256(f"llm-wc:{results_dir.resolve()}:{model_dir.name}".encode(errors="surrogatepass"))
    spec = f"openai:{name}"
    manifest = Manifest(
        run_id=run_id.hexdigest(), provenance=collect_provenance({"spec": spec}),
        settings=RunSettings(mode="generate", prompt_kind=run.benchmark.prompt_type,
                             generation=GenerationSpec.recorded(redact(given.request_params))),
        dataset=DatasetInfo(name=dataset, source=given.dataset_path or run.benchmark.dataset_path, n_items=len(rows),
                            details={"imported_from": str(results_dir)}),
        model=BackendInfo(spec=spec, model=name, base_url=redact_url(given.api_base) if given.api_base else None),
        choice_order_seed=given.seed if given.seed is not None else run.benchmark.seed,
        started_at=run.started_at or datetime.now(UTC).isoformat(), command=["proctor", "import", str(results_dir)],
    )
    # one directory per source (its resolved path hashed in): same-named results directories or models that
    # sanitise alike (`a b`, `a_b`) never share one, and a name from data never climbs out of runs_root
    leaf = f"{safe_component(results_dir.name, 'llm-wc')}__{safe_component(model_dir.name, 'model')}"
    return ImportedModel(model_dir, runs_root / "imported" / f"{leaf}-{run_id.hexdigest()[:10]}", manifest,
                         samples, summary)


def read_results_dir(results_dir: Path, runs_root: Path) -> tuple[list[ImportedModel], list[str]]:
    """Every model directory of an llm-wc results directory, read and checked before anything is written; with
    a line for each directory left out (a summary without results.json)."""
    run = read_layout_file(results_dir / "run.json", RunFile)
    if not (results_dir / "models").is_dir():
        raise InputError.at(results_dir, "no models/ directory: not an llm-wc results directory")
    model_dirs = sorted(d for d in (results_dir / "models").iterdir() if d.is_dir())
    if not model_dirs:
        raise InputError.at(results_dir, "no models/<name>/ directories: not an llm-wc results directory")
    models, left_out = [], []
    for d in model_dirs:
        if (d / "results.json").is_file():
            models.append(read_model(results_dir, d, run, runs_root))
        else:
            left_out.append(f"{d}: no results.json (summary only): not imported")
    if not models:
        raise InputError.at(results_dir, "no models/<name>/results.json: nothing to import")
    return models, left_out


def summary_disagreement(model: ImportedModel, log: RunLog) -> str | None:
    """A line when the accuracy summary.json states is not the one recomputed from results.json."""
    stated = model.summary.accuracy if model.summary is not None else None
    ours = log.results.overall.accuracy if log.results is not None else None
    if isinstance(stated, (int, float)) and isinstance(ours, (int, float)) and abs(stated - ours) > 1e-9:
        return (f"{model.source / 'summary.json'}: accuracy {stated} there, {ours} recomputed from results.json "
                "(errors and unanswered rows are counted apart here)")
    return None


def _refuse_repeated_ids(path: Path, rows: list[ResultRow], samples: list[Sample], dataset: str) -> None:
    """Each question once: a repeated id (`question_id` 1 in two rows) would keep one row and drop the other;
    which one is right (a duplicate, a re-run appended) cannot be told, so the row is refused where it is."""
    first: dict[str, int] = {}
    for index, sample in enumerate(samples):
        seen = first.setdefault(sample.item_id, index)
        if seen != index:
            column = ID_COLUMNS.get(dataset, "id")
            value = rows[index].column(column)
            line = json_loc_lines(read_text(path))((index, column))
            raise InputError.at(path, f"[{index}].{column}: {value} repeats row [{seen}]: each question once "
                                      "(remove the duplicate row)", line)


def write_imported(model: ImportedModel, store: Store | None) -> RunLog:
    """Write one imported model's run directory whole (swapped in at once), then score and record it."""
    with atomic_directory(model.out) as tmp:
        write_manifest(tmp, model.manifest)
        append_samples(tmp / SAMPLES, model.samples)
    return finalize_run(model.out, store)


__all__ = ["ImportedModel", "grade", "imported_sample", "read_model", "read_results_dir", "summary_disagreement",
           "write_imported"]
