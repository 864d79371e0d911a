"""Every Eval Ever (EEE) records of proctor runs, built and checked with the `every_eval_ever` package's own
models: per run `data/<benchmark>/<developer>/<model>/<uuid>.json` (the aggregate: proctor's accuracy with
its standard error and confidence interval) and `<uuid>_samples.jsonl` (one instance-level record per scored
sample), as the EEE datastore lays them out.

Only scored samples become instance records: EEE's instance schema requires a score, and an errored or
unscored sample has none (proctor never counts it as wrong). Their counts are in the aggregate's details.
The model's developer is the part of its name before `/` (`Qwen/Qwen3-8B`), else the backend (`openai`).

Needs the `every_eval_ever` package (`pip install 'proctor-eval[eee]'` on Python ≥ 3.12; on 3.11
`pip install --no-deps --ignore-requires-python every-eval-ever==0.3.0`, as `make setup-dev` does).
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..log.runlog import Outcome, RunLog, Sample
from ..metrics.accuracy import counted
from ..util.errors import InputError, ProctorError
from ..util.redact import redact
from ..util.textio import write_lines_atomic, write_text_atomic
from .export_common import RunTally, dataset_name, model_name, model_spec, overall_accuracy, stderr_of, tally

_LOCAL = ("hf", "vllm", "scripted")  # backends whose weights proctor runs itself
INSTALL = ("pip install 'proctor-eval[eee]' (Python 3.12+), or on 3.11: "
           "pip install --no-deps --ignore-requires-python every-eval-ever==0.3.0")


def require_eee() -> None:
    """Refuse clearly when every_eval_ever is not installed (exit 2)."""
    try:
        import every_eval_ever  # noqa: F401
    except ImportError:
        raise ProctorError(f"--to eee needs the every_eval_ever package: {INSTALL}") from None


def export(logs: Sequence[RunLog], out: Path) -> list[Path]:
    """Each run's aggregate and samples file under `out/data/…`, validated by the EEE models before writing."""
    require_eee()
    from every_eval_ever.eval_types import EvaluationLog
    from every_eval_ever.helpers.io import datastore_path_components
    from every_eval_ever.instance_level_types import InstanceLevelEvaluationLog

    written: list[Path] = []
    for log in logs:
        ident = _identity(log)
        try:
            parts = datastore_path_components(_slug(dataset_name(log)), ident["id"], ident["developer"])
        except ValueError as e:
            raise InputError.at(log.path, f"no EEE datastore path for this run: {e}") from None
        folder = "/".join(("data", *parts))
        file_id = _uuid4(log)
        path = out / folder / f"{file_id}.json"
        if path in written:
            raise InputError.at(log.path, f"the same run as another one given (run id {log.manifest.run_id}): give it once")
        samples = out / folder / f"{file_id}_samples.jsonl"
        t = tally(log)  # one instance row per counted sample
        aggregate = EvaluationLog.model_validate(
            aggregate_record(log, ident, f"{folder}/{file_id}_samples.jsonl" if t.n_scored else None, t.n_scored, t))
        write_text_atomic(path, aggregate.model_dump_json(indent=2, exclude_none=True) + "\n")
        written.append(path)
        if t.n_scored:
            rows = (json.dumps(InstanceLevelEvaluationLog.model_validate(r).model_dump(mode="json", exclude_none=True),
                               ensure_ascii=False) for r in instance_rows(log, ident["id"]))
            write_lines_atomic(samples, rows)  # streamed: one row in memory at a time
            written.append(samples)
    return written


def _slug(name: str) -> str:
    return name.replace("/", "_").replace(":", "_") or "dataset"


def _uuid4(log: RunLog) -> str:
    """A UUID4-shaped name that is the same for the same run (exporting twice names the files alike)."""
    digest = hashlib.sha256(f"proctor-eee\x1f{log.manifest.run_id}\x1f{model_spec(log)}".encode()).digest()
    return str(uuid.UUID(bytes=digest[:16], version=4))


def evaluation_id(log: RunLog, model_id: str) -> str:
    return f"{dataset_name(log)}/{model_id}/{log.manifest.run_id}"


def _identity(log: RunLog) -> dict[str, Any]:
    """EEE's `model_info`: the model's name, id (`developer/name`), developer and how it was deployed."""
    spec = model_spec(log)
    backend = spec.split(":", 1)[0] if ":" in spec else "unknown"
    name = model_name(log)
    developer = name.split("/", 1)[0] if "/" in name else backend
    base_url = log.manifest.model.base_url or ""
    local = backend in _LOCAL or any(h in base_url for h in ("localhost", "127.0.0.1", "[::1]"))
    deployment = "self_deployed" if local else ("externally_managed" if backend in ("openai", "anthropic") else "unknown")
    details = {"deployment_type": deployment,
               "model_availability": "open_weights" if backend in ("hf", "vllm") else "unknown",
               "proctor_spec": spec}
    return {"name": name, "id": name if "/" in name else f"{developer}/{name}", "developer": developer,
            "inference_platform": backend, "additional_details": details}


def aggregate_record(log: RunLog, ident: dict[str, Any], samples_path: str | None, n_rows: int,
                     t: RunTally | None = None) -> dict[str, Any]:
    """The aggregate EEE record of one run (a plain mapping, validated by the caller with EEE's model); `t`: its
    samples tallied (default: tallied here)."""
    from every_eval_ever.converters import SCHEMA_VERSION

    m = log.manifest
    t = t or tally(log)
    overall = overall_accuracy(log, t)
    if overall.accuracy is None:
        raise InputError.at(log.path, "no scored sample: EEE records a score, and this run has none")
    uncertainty: dict[str, Any] = {"num_samples": overall.n_scored}
    se = stderr_of(t.scores)
    if se is not None:
        uncertainty["standard_error"] = {"value": se, "method": "sample standard deviation / sqrt(n)"}
    if overall.ci_low is not None and overall.ci_high is not None:
        uncertainty["confidence_interval"] = {"lower": overall.ci_low, "upper": overall.ci_high,
                                              "confidence_level": 0.95, "method": overall.ci_method or "unknown"}
    g = m.generation.as_dict() if m.generation is not None else {}
    args = {k: g[k] for k in ("temperature", "top_p", "max_tokens") if g.get(k) is not None}
    if m.command:
        import shlex

        args["execution_command"] = shlex.join(redact(m.command))  # a hand-edited manifest too
    counts: dict[str, Any] = {"n_samples": overall.n, "n_scored": t.n_scored, "n_errors": overall.n_errors,
                              "n_unscored": t.n_unscored}
    if overall.truncated_low is not None and overall.truncated_high is not None:  # EEE has no field for bounds
        counts |= {"n_truncated": overall.n_truncated, "truncated_as": m.truncated_as,
                   "accuracy_if_truncated_wrong": overall.truncated_low,
                   "accuracy_if_truncated_right": overall.truncated_high}
    record: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": evaluation_id(log, ident["id"]),
        "evaluation_timestamp": m.started_at,
        "retrieved_timestamp": str(int(time.time())),
        "source_metadata": {"source_name": "proctor", "source_type": "evaluation_run",
                            "source_organization_name": "proctor", "evaluator_relationship": "third_party"},
        "eval_library": {"name": "proctor", "version": m.proctor_version,
                         "additional_details": {"run_id": m.run_id, **({"git_sha": m.git_sha} if m.git_sha else {})}},
        "model_info": ident,
        "evaluation_results": [{
            "evaluation_result_id": f"{dataset_name(log)}/accuracy",
            "evaluation_name": dataset_name(log),
            "source_data": _source_data(log, sorted(t.item_ids)),
            "evaluation_timestamp": m.started_at,
            "metric_config": {"evaluation_description": f"proctor accuracy on {dataset_name(log)}: the mean score over "
                              "scored samples (errors and unscored samples excluded)",
                              "metric_id": "accuracy", "metric_name": "Accuracy", "metric_kind": "accuracy",
                              "metric_unit": "proportion", "lower_is_better": False, "score_type": "continuous",
                              "min_score": 0.0, "max_score": 1.0},
            "score_details": {"score": overall.accuracy, "uncertainty": uncertainty,
                              "details": {k: str(v) for k, v in counts.items()}},
            "generation_config": {"generation_args": args,
                                  "additional_details": {k: str(v) for k, v in _settings(log).items()}},
        }],
    }
    record["evaluation_results"] += _pass_at(log, record["evaluation_results"][0])
    if samples_path is not None:
        record["detailed_evaluation_results"] = {"format": "jsonl", "file_path": samples_path, "total_rows": n_rows}
    return record


def _pass_at(log: RunLog, accuracy: dict[str, Any]) -> list[dict[str, Any]]:
    """pass@k for every k of a run with several epochs (results.json's `epochs.pass_at`), beside its accuracy."""
    ep = log.results.epochs if log.results is not None else None
    out = []
    for k, v in (ep.pass_at.items() if ep is not None else ()):
        if v.value is None:
            continue
        uncertainty: dict[str, Any] = {"num_samples": v.n}
        if v.ci_low is not None and v.ci_high is not None:
            uncertainty["confidence_interval"] = {"lower": v.ci_low, "upper": v.ci_high, "confidence_level": 0.95,
                                                  "method": "bootstrap over items"}
        out.append({**accuracy, "evaluation_result_id": f"{dataset_name(log)}/pass@{k}",
                    "metric_config": {"evaluation_description": f"pass@{k} on {dataset_name(log)}: Chen et al. "
                                      "(2021)'s unbiased estimator, averaged over items", "metric_id": f"pass@{k}",
                                      "metric_name": f"pass@{k}", "metric_kind": "pass_rate",
                                      "metric_parameters": {"k": int(k)}, "metric_unit": "proportion",
                                      "lower_is_better": False, "score_type": "continuous", "min_score": 0.0,
                                      "max_score": 1.0},
                    "score_details": {"score": v.value, "uncertainty": uncertainty}})
    return out


def _settings(log: RunLog) -> dict[str, Any]:
    m = log.manifest
    out = {"mode": m.mode, "prompt_kind": m.prompt_kind, "prompt_template_hash": m.prompt_template_hash,
           "extractor_version": m.extractor_version, "answer_rule": m.answer_rule, "epochs": m.epochs,
           "truncated_as": m.truncated_as, "no_answer": m.no_answer, "dataset_content_hash": m.dataset.content_hash}
    return {k: v for k, v in out.items() if v is not None}


def _source_data(log: RunLog, ids: list[str]) -> dict[str, Any]:
    """EEE's `source_data`: the hub dataset when the run's data came from one, else a private dataset."""
    ds = log.manifest.dataset
    source = ds.source or ""
    if "/" in source and source != "file":
        return {"dataset_name": dataset_name(log), "source_type": "hf_dataset", "hf_repo": source,
                "hf_split": ds.split, "samples_number": len(ids), "sample_ids": ids}
    given = {"path": ds.path, "data_file": ds.data_file, "sha256": ds.sha256, "content_hash": ds.content_hash}
    details = {k: str(v) for k, v in given.items() if v}
    return {"dataset_name": dataset_name(log), "source_type": "other", "additional_details": details}


def instance_rows(log: RunLog, model_id: str) -> Iterator[dict[str, Any]]:
    """One EEE instance record per scored sample (plain mappings, validated by the caller), streamed."""
    from every_eval_ever.converters import SCHEMA_VERSION

    for s in log.iter_samples(by_item=True):
        if not counted([s]):
            continue
        row: dict[str, Any] = {
            "schema_version": SCHEMA_VERSION, "evaluation_id": evaluation_id(log, model_id), "model_id": model_id,
            "evaluation_name": dataset_name(log), "evaluation_result_id": f"{dataset_name(log)}/accuracy",
            "sample_id": s.sample_id, "interaction_type": "single_turn",
            "input": {"raw": _question(s), "formatted": _conversation(s), "reference": _references(s.reference)},
            "output": {"raw": [s.raw_output or ""], **({"reasoning_trace": [s.reasoning]} if s.reasoning else {})},
            "answer_attribution": [{"turn_idx": 0, "source": "output.raw", "extracted_value": s.extracted or "",
                                    "extraction_method": s.extraction_rule or "none", "is_terminal": True}],
            "evaluation": {"score": float(s.score or 0.0), "is_correct": s.outcome is Outcome.CORRECT},
            "metadata": {k: v for k, v in {"outcome": s.outcome.value, "epoch": s.epoch, "category": s.category,
                                           "subcategory": s.subcategory}.items() if v is not None},
        }
        if s.input_tokens is not None and s.output_tokens is not None:
            row["token_usage"] = {"input_tokens": s.input_tokens, "output_tokens": s.output_tokens,
                                  "total_tokens": s.input_tokens + s.output_tokens}
        if s.latency_s is not None:
            row["performance"] = {"latency_ms": s.latency_s * 1000}
        yield row


def _question(s: Sample) -> str:
    """What the model was asked: the last user message (a scored context as it is)."""
    if isinstance(s.prompt, str):
        return s.prompt
    users = [m.get("content", "") for m in s.prompt if m.get("role", "user") == "user"]
    return users[-1] if users else ""


def _conversation(s: Sample) -> str:
    """The whole prompt as the model saw it, one `role: content` block per message."""
    if isinstance(s.prompt, str):
        return s.prompt
    return "\n\n".join(f"{m.get('role', 'user')}: {m.get('content', '')}" for m in s.prompt)


def _references(reference: Any) -> list[str]:
    if reference is None:
        return []
    if isinstance(reference, list):
        return [str(r) for r in reference]
    return [str(reference)]
