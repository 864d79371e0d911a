"""lm-evaluation-harness results: `results_<date>.json` and its `--log_samples` files, one run per task.

lm-eval writes, in one folder, `results_<date>.json` (`results`, `configs`, `config`, `model_name`, `date`…)
and per task `samples_<task>_<date>.jsonl`: one line per document and filter with `doc_id`, `doc`, `target`,
`arguments`, `resps`, `filtered_resps`, `filter`, `metrics` (the names) and each metric's value. The score
of a sample is one of those metrics (`--metric NAME[,FILTER]`, lm-eval's own `acc,none` spelling; default the
task's first metric and the first filter in the file); it must lie in [0, 1] (acc, acc_norm, exact_match…).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from ..data.formats.problems import json_loc_lines
from ..log.provenance import BackendInfo, DatasetInfo, ImportOrigin
from ..log.runlog import RunSettings, Sample
from ..util.errors import InputError, Problem, first_problem
from ..util.redact import redact_args
from ..util.safepath import is_safe_component
from ..util.textio import iter_jsonl, load_json, read_text, refuse_lone_surrogate
from .imported import (
    ImportedRun,
    ImportOptions,
    check_unique_ids,
    file_digest,
    import_run_id,
    iso_time,
    item_id_from,
    item_template,
    new_manifest,
    outcome_of,
    unit_score,
)

HARNESS = "lm-eval"
DEFAULT_ITEM_ID = "{doc_id}"
_LOGPROB_TYPES = frozenset({"multiple_choice", "loglikelihood"})
_NOT_METRICS = frozenset({"alias", "name", "sample_len", "samples", " "})


class LmEvalSample(BaseModel):
    """One line of lm-eval's samples file; the metric values are its extra keys."""

    model_config = ConfigDict(extra="allow")

    doc_id: int
    doc: dict[str, Any]
    target: Any = None
    arguments: Any = None
    resps: Any = None
    filtered_resps: Any = None
    filter: str = "none"
    metrics: list[str] = []
    doc_hash: str | None = None

    def value(self, metric: str) -> Any:
        return (self.model_extra or {}).get(metric)


def looks_like(data: Any) -> bool:
    """lm-eval's results JSON: `results` and `configs` mappings."""
    return isinstance(data, dict) and isinstance(data.get("results"), dict) and isinstance(data.get("configs"), dict)


def read(path: Path, opts: ImportOptions) -> list[ImportedRun]:
    """Every task of one results file, each with its samples file found beside it."""
    data = load_json(path)
    refuse_lone_surrogate(data, path)
    if not looks_like(data):
        raise InputError.at(path, "not an lm-eval results file (no 'results' and 'configs')")
    tasks = [t for t, c in data["configs"].items() if isinstance(c, dict)]
    if not tasks:
        raise InputError.at(path, "lm-eval results list no task configs: nothing to import")
    found = {task: samples_file(path, task) for task in tasks}
    return [_read_task(path, data, task, samples_path, opts) for task, samples_path in found.items()]


def samples_file(results_path: Path, task: str) -> Path:
    """`samples_<task>_<date>.jsonl` beside `results_<date>.json` (the only one for the task, when dates differ)."""
    date = results_path.stem.removeprefix("results_")
    name = f"samples_{task}_{date}.jsonl"
    if not is_safe_component(name):
        raise InputError.at(results_path, f"task name {task!r} cannot name a samples file")
    exact = results_path.with_name(name)
    if exact.is_file():
        return exact
    prefix = f"samples_{task}_"  # then a date, which has no "_" before its "T" (so task `a` never takes `a_b`'s)
    near = sorted(p for p in results_path.parent.iterdir()
                  if p.name.startswith(prefix) and p.suffix == ".jsonl" and "_" not in p.name[len(prefix):].split("T")[0])
    if len(near) == 1:
        return near[0]
    why = f"{len(near)} candidates, none dated {date}" if near else "re-run lm-eval with --log_samples"
    raise InputError.at(results_path, f"no samples file for task {task!r} beside it ({exact.name}): {why}")


def _output_type(path: Path, data: dict[str, Any], task: str) -> str | None:
    """The task config's `output_type` (loglikelihood, multiple_choice, generate_until…); one of the wrong type
    is refused where it is (it decides how the samples are read). Only configs that are objects reach here."""
    value = data["configs"][task].get("output_type")
    if value is None or isinstance(value, str):
        return value
    where = ("configs", task, "output_type")
    raise InputError.at(path, f"{'.'.join(where)}: expected text such as generate_until, not {type(value).__name__}",
                        json_loc_lines(read_text(path))(where))


def _read_task(path: Path, data: dict[str, Any], task: str, samples_path: Path, opts: ImportOptions) -> ImportedRun:
    rows = _rows(samples_path)
    metric, filter_name = _pick_metric(opts.metric, rows, _per_task(data, "results", task), samples_path)
    chosen = [(line, r) for line, r in rows if r.filter == filter_name]
    if not chosen:
        filters = sorted({r.filter for _, r in rows})
        raise InputError.at(samples_path, f"no samples with filter {filter_name!r} (filters here: {', '.join(filters)})")
    mode = "logprob" if _output_type(path, data, task) in _LOGPROB_TYPES else "generate"
    template = item_template(opts.item_id, DEFAULT_ITEM_ID)
    model = _model(data, opts)
    dataset_name = opts.dataset or task
    samples = [_sample(line, r, task, metric, mode, template, dataset_name, samples_path) for line, r in chosen]
    check_unique_ids(samples, template, samples_path)
    files = {str(path): file_digest(path), str(samples_path): file_digest(samples_path)}
    run_id = import_run_id(HARNESS, list(files.values()), task, f"{metric},{filter_name}", template, model["spec"],
                           dataset_name)
    manifest = new_manifest(
        run_id=run_id, settings=RunSettings(mode=mode), started_at=iso_time(data.get("date")), command=opts.command,
        imported_from=ImportOrigin(harness=HARNESS, version=_text(data.get("lm_eval_version")), task=task,
                                   metric=metric, filter=filter_name, item_id=template, files=files,
                                   n_shot=_per_task(data, "n-shot", task)),
        dataset=DatasetInfo.of({"name": dataset_name, "source": f"lm-eval task {task}",
                                "content_hash": _text(_per_task(data, "task_hashes", task)),
                                "n_items": len({s.item_id for s in samples}),
                                "task_version": _per_task(data, "versions", task)}),
        model=BackendInfo.of(model),
    )
    return ImportedRun(source=path, manifest=manifest, samples=samples)


def _per_task(data: dict[str, Any], key: str, task: str) -> Any:
    """`data[key][task]` when lm-eval wrote a mapping there (it is only provenance: anything else is None)."""
    table = data.get(key)
    return table.get(task) if isinstance(table, dict) else None


def _text(value: Any) -> str | None:
    """A string or a number as text; anything else (a list, a mapping) as None."""
    if isinstance(value, str):
        return value or None
    return str(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _rows(path: Path) -> list[tuple[int, LmEvalSample]]:
    problems: list[Problem] = []
    rows: list[tuple[int, LmEvalSample]] = []
    for line, value in iter_jsonl(path, problems):
        try:
            refuse_lone_surrogate(value, path, line)
            rows.append((line, LmEvalSample.model_validate(value)))
        except InputError as e:
            problems.extend(e.problems)
        except ValidationError as e:
            field, message, count = first_problem(e)
            more = f" (+{count - 1} more)" if count > 1 else ""
            problems.append(Problem(str(path), line, f"not an lm-eval sample: {message}{more}", field))
    if problems:
        raise InputError(problems)
    return rows


def _pick_metric(given: str | None, rows: list[tuple[int, LmEvalSample]], task_results: Any,
                 where: Path) -> tuple[str, str]:
    """(metric, filter): as given (`acc` or `acc,none`), else the task's first metric and the first filter seen."""
    name, _, filter_name = (given or "").partition(",")
    if not name:
        keys = [k for k in task_results if isinstance(k, str)] if isinstance(task_results, dict) else []
        listed = rows[0][1].metrics or [k.split(",")[0] for k in keys if k not in _NOT_METRICS and "_stderr" not in k]
        if not listed:
            raise InputError.at(where, "the samples name no metric: choose one with --metric")
        name = listed[0]
    return name, filter_name or rows[0][1].filter


def _model(data: dict[str, Any], opts: ImportOptions) -> dict[str, Any]:
    """The model as lm-eval names it: `<model type>:<model_name>` (`hf:EleutherAI/pythia-70m`), or --name."""
    given = data.get("config")
    config: dict[str, Any] = given if isinstance(given, dict) else {}
    kind, name = _text(config.get("model")) or "lm-eval", _text(data.get("model_name"))
    spec = opts.name or (f"{kind}:{_as_given(name)}" if name else kind)
    return {"spec": spec, "name": spec, "harness": HARNESS, "lm_eval_model": kind,
            "model_args": _redacted_args(config.get("model_args")), "model_name": name}


def _redacted_args(value: Any) -> str | None:
    """`model_args` as text with its secrets masked (`token=hf_…`, `api_key=…`, a URL's query)."""
    text = _text(value)
    return redact_args(text) if text else None


def _as_given(name: str) -> str:
    """A model name as a user gives it to proctor: an absolute path lm-eval wrote for a local model becomes
    relative to the working directory when it lies inside it (`hf:models/tiny`, as `proctor run` records
    it); a hub id or any other path is kept."""
    path = Path(name)
    if not path.is_absolute():
        return name
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return name


def _sample(line: int, row: LmEvalSample, task: str, metric: str, mode: str, template: str, dataset: str,
            where: Path) -> Sample:
    raw = row.value(metric)
    if raw is None:
        have = ", ".join(row.metrics) or "none"
        raise InputError.at(where, f"no metric {metric!r} in this sample (metrics: {have}); choose one with --metric",
                            line)
    score = unit_score(raw)
    if score is None:
        raise InputError.at(where, f"metric {metric!r} is {raw!r}, not a score in [0, 1]; choose another with "
                                   "--metric", line)
    fields = {**row.doc, "doc_id": row.doc_id, "doc_hash": row.doc_hash, "task": task}
    item_id = item_id_from(template, fields, where, line)
    category = row.doc.get("category")
    return Sample(
        sample_id=f"{item_id}#0", item_id=item_id, epoch=0, dataset=dataset,
        category=category if isinstance(category, str) else None, mode=mode, prompt=_context(row.arguments),
        reference=_plain(row.target), score=score, outcome=outcome_of(score), **_answer(row, mode),
    )


def _arguments(arguments: Any) -> list[list[Any]]:
    """lm-eval's request arguments as lists: `{"gen_args_0": {"arg_0": …}}` (0.4.5+) or `[[…], …]` (earlier)."""
    if isinstance(arguments, dict):
        return [list(a.values()) if isinstance(a, dict) else [a] for a in arguments.values()]
    if isinstance(arguments, list):
        return [a if isinstance(a, list) else [a] for a in arguments]
    return []


def _context(arguments: Any) -> str:
    args = _arguments(arguments)
    return args[0][0] if args and args[0] and isinstance(args[0][0], str) else ""


def _answer(row: LmEvalSample, mode: str) -> dict[str, Any]:
    """What the model said and what lm-eval read from it: for a generation the raw text and the filter's
    answer; for a log-likelihood task the continuation with the highest log-likelihood (argmax, as lm-eval's acc)."""
    if mode == "generate":
        raw = _first_text(row.resps)
        return {"raw_output": raw, "extracted": _first_text(row.filtered_resps),
                "extraction_rule": f"lm-eval filter {row.filter}"}
    resps = row.filtered_resps if isinstance(row.filtered_resps, list) else []
    try:
        logprobs = [float(r[0]) for r in resps]
    except (TypeError, ValueError, IndexError):
        return {}
    args = _arguments(row.arguments)
    best = max(range(len(logprobs)), key=logprobs.__getitem__, default=None)
    if best is None or best >= len(args) or len(args[best]) < 2:
        return {}
    return {"extracted": str(args[best][1]).strip(), "extraction_rule": "argmax-logprob"}


def _first_text(value: Any) -> str | None:
    """The first string in lm-eval's (possibly nested) list of responses."""
    while isinstance(value, list) and value:
        value = value[0]
    return value if isinstance(value, str) else None


def _plain(value: Any) -> Any:
    """A reference as JSON can hold it."""
    return value if isinstance(value, str | int | float | bool | list | dict) or value is None else str(value)
