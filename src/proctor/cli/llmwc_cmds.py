"""llm-wc users' commands: `proctor run --config llmwc.yaml` (every listed model) and `proctor import DIR`."""

from __future__ import annotations

import dataclasses
import hashlib
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import DEFAULT_MAX_ERROR_RATE, InputError, ProctorError
from ..llmwc import (
    ID_COLUMNS,
    ROWS,
    BenchmarkBlock,
    ImportedBenchmark,
    ResultRow,
    RunFile,
    SummaryFile,
    builtin_name,
    read_config,
    read_layout_file,
)
from ..redact import redact, redact_url
from ..runlog import MetricBlock, RunLog, check_generation
from ..runner import accuracy_line
from ..safepath import safe_component
from ..termsafe import plain
from . import options
from .help import plain_metavar
from .messages import note
from .outcome import error_status

# `run` options that apply to a config run, besides the chat backend's own (--concurrency, --timeout…);
# the rest are refused by name: the config says those things, or a config run does not do them
APPLIED_WITH_CONFIG = frozenset({
    "llmwc_config", "model", "data_file", "out", "store", "progress", "no_cache", "no_history", "max_tokens",
    "prices", "max_cost", "max_error_rate",
})
_NOT_FROM_FLAGS = frozenset({"base_url", "api_key", "batch", "batch_poll_interval"})  # per model, or no batch


def backend_options(given: options.ModelOptions) -> dict[str, Any]:
    """The chat backend's options given on the command line that a config run applies to every model."""
    return {k: v for k, v in given.for_spec("openai:model").items() if k not in _NOT_FROM_FLAGS}
_INSTEAD = {"datasets": "the config's benchmark.name", "temperature": "request_defaults.temperature",
            "top_p": "request_defaults.top_p", "stop": "request_defaults.stop", "gen_seed": "request_defaults.seed",
            "seed": "benchmark.seed", "prompt": "benchmark.prompt_type", "limit_per_category":
            "benchmark.limit_per_subject", "base_url": "models[].api_base", "api_key": "models[].api_key_env",
            "price_in": "--prices", "price_out": "--prices", "runs_root": "-o (the runs go inside the results)"}


def refuse_unapplied(applied: frozenset[str] = APPLIED_WITH_CONFIG) -> None:
    """Refuse every option given on the command line that a config run does not apply, by its name."""
    from typer._click import globals as click_globals  # typer vendors click (as cli.help uses it)

    ctx = click_globals.get_current_context(silent=True)
    if ctx is None:
        return
    from ..models.registry import backend_for

    backend = {o.param: o.name for o in options.model_cli_options()}
    chat = set(backend_for("openai:model")[0].options.model_fields) - _NOT_FROM_FLAGS
    applies = applied | {param for param, name in backend.items() if name in chat}
    refused = []
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name or "")
        if param.name in applies or source is None or source.name != "COMMANDLINE":
            continue
        name = backend.get(param.name or "", param.name or "")
        flag = param.opts[0] if param.param_type_name == "option" else plain_metavar(param)
        instead = _INSTEAD.get(name)
        refused.append(f"{flag} does not apply with --config" + (f" (set {instead} instead)" if instead else ""))
    if refused:
        raise ProctorError("; ".join(refused))


@dataclasses.dataclass(frozen=True)
class ConfigRunOptions:
    """The `run` options a config run applies (see APPLIED_WITH_CONFIG)."""

    model: str | None = None
    data_file: Path | None = None
    out: Path | None = None
    store: Path | None = None
    progress: bool | None = None
    use_cache: bool = True
    record_history: bool = True
    max_tokens: int | None = None
    prices: Path | None = None
    max_cost: str | None = None
    max_error_rate: float = DEFAULT_MAX_ERROR_RATE
    http: dict[str, Any] = dataclasses.field(default_factory=dict)


def run_config(config_path: Path, given: ConfigRunOptions) -> int:
    """Run the config's models (or the one --model names); write llm-wc's results directory; the exit status."""
    # the library's run entry points load when a run starts, not when any command starts (start-up time)
    from .. import pipeline
    from ..build import eval_options, with_prices
    from ..exporters.llmwc import write_results_dir
    from ..importers.llmwc_config import config_errors, config_specs
    from ..pipeline import Events, RunOptions

    config = read_config(config_path)
    models = config_specs(config, config_path, model=given.model, data_file=given.data_file,
                          max_tokens=given.max_tokens, http=given.http)
    opts = eval_options(prices=given.prices, max_cost=given.max_cost)
    specs = [with_prices(m.spec, opts) for m in models]
    stamp = datetime.now(UTC)
    base = given.out or Path(config.benchmark.output_dir or f"results/{config.benchmark.name}")
    root = Path(f"{base}_{stamp.strftime('%Y%m%dT%H%M%SZ')}")
    run_options = RunOptions(out_dirs=tuple(root / "runs" / m.dir_name for m in models), store=given.store,
                             progress=given.progress, use_cache=given.use_cache, record_history=given.record_history,
                             command=["proctor", *sys.argv[1:]])
    statuses: list[int] = []

    def finished(log: RunLog) -> None:
        line = accuracy_line(log.results) if log.results is not None else "no results"
        name = log.manifest.model.spec.removeprefix("openai:")
        typer.echo(plain(f"{name} on {log.manifest.dataset.name}: {line}  → {log.path}"))
        statuses.append(error_status(log, given.max_error_rate))

    with config_errors(config_path):
        logs = pipeline.run(specs, run_options, Events(resuming=lambda line: note(plain(line)), finished=finished))
    runs = [(m.entry, m.dir_name, log) for m, log in zip(models, logs, strict=True)]
    write_results_dir(root, config, runs, stamp.isoformat(timespec="seconds").replace("+00:00", "Z"))
    typer.echo(plain(f"llm-wc results: {root}"))
    return max(statuses, default=0)


# ---------------------------------------------------------------- import


def _dataset_name(block: ImportedBenchmark) -> str:
    try:
        return builtin_name(BenchmarkBlock.model_validate(block.model_dump()))
    except (InputError, ValueError):
        return block.name or "llm-wc"


def _row_id(row: ResultRow, dataset: str, index: int) -> str:
    from ..formats.convert import slug

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


def imported_sample(row: ResultRow, index: int, dataset: str) -> Any:
    from ..runlog import Outcome, Sample

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
    manifest: Any
    samples: list[Any]
    summary: SummaryFile | None


def read_model(results_dir: Path, model_dir: Path, run: RunFile, runs_root: Path) -> ImportedModel:
    """One llm-wc model directory, validated whole (nothing is written yet)."""
    from ..provenance import BackendInfo, DatasetInfo, GenerationRecord, collect_provenance
    from ..runlog import Manifest, RunSettings

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
                             generation=GenerationRecord.of(redact(given.request_params))),
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


def _refuse_repeated_ids(path: Path, rows: list[ResultRow], samples: list[Any], dataset: str) -> None:
    """Each question once: a repeated id (`question_id` 1 in two rows) would keep one row and drop the other;
    which one is right (a duplicate, a re-run appended) cannot be told, so the row is refused where it is."""
    from ..formats.problems import json_loc_lines
    from ..textio import read_text

    first: dict[str, int] = {}
    for index, sample in enumerate(samples):
        seen = first.setdefault(sample.item_id, index)
        if seen != index:
            column = ID_COLUMNS.get(dataset, "id")
            value = rows[index].column(column)
            line = json_loc_lines(read_text(path))((index, column))
            raise InputError.at(path, f"[{index}].{column}: {value} repeats row [{seen}]: each question once "
                                      "(remove the duplicate row)", line)


def write_imported(model: ImportedModel, store: Any) -> Any:
    """Write one imported model's run directory whole (swapped in at once), then score and record it."""
    from ..runlog import SAMPLES, append_samples, write_manifest
    from ..runner import finalize_run
    from ..textio import atomic_directory

    with atomic_directory(model.out) as tmp:
        write_manifest(tmp, model.manifest)
        append_samples(tmp / SAMPLES, model.samples)
    return finalize_run(model.out, store)


def import_results(
    results_dir: Annotated[Path, typer.Argument(
        metavar="RESULTS_DIR", show_default=False, help="An llm-wc results directory (run.json, models/<name>/).")],
    store: options.Store = None,
    runs_root: Annotated[Path, typer.Option(
        metavar="DIR", help="Where the imported run logs go (under imported/).")] = Path("runs"),
) -> None:
    """Import an llm-wc results directory into the history, so `compare` and `leaderboard` see its models."""
    from ..store import Store, default_store_path

    run = read_layout_file(results_dir / "run.json", RunFile)
    if not (results_dir / "models").is_dir():
        raise InputError.at(results_dir, "no models/ directory: not an llm-wc results directory")
    model_dirs = sorted(d for d in (results_dir / "models").iterdir() if d.is_dir())
    if not model_dirs:
        raise InputError.at(results_dir, "no models/<name>/ directories: not an llm-wc results directory")
    models = []
    for d in model_dirs:  # every file checked before anything is written
        if (d / "results.json").is_file():
            models.append(read_model(results_dir, d, run, runs_root))
        else:
            note(f"{d}: no results.json (summary only): not imported")
    if not models:
        raise InputError.at(results_dir, "no models/<name>/results.json: nothing to import")
    with Store(store or default_store_path()) as st:
        for model in models:
            log = write_imported(model, st)
            _check_summary(model, log)
            overall = log.results.overall if log.results is not None else MetricBlock()
            typer.echo(plain(f"imported {model.source.name}: {overall.n_scored} scored, accuracy "
                             f"{overall.accuracy}  → {log.path} (run {log.manifest.run_id[:12]})"))


def _check_summary(model: ImportedModel, log: Any) -> None:
    stated = model.summary.accuracy if model.summary is not None else None
    ours = log.results.overall.accuracy if log.results is not None else None
    if isinstance(stated, (int, float)) and isinstance(ours, (int, float)) and abs(stated - ours) > 1e-9:
        note(f"{model.source / 'summary.json'}: accuracy {stated} there, {ours} recomputed from results.json "
             "(errors and unanswered rows are counted apart here)")


__all__ = ["ProctorError", "import_results", "run_config"]
