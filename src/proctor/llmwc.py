"""Write llm-wc-style `run.json` and per-model `models/<name>/summary.json` beside proctor's own run log,
for users of that layout. Secrets are never written: llm-wc's `api_key` field is always null here."""

from __future__ import annotations

import re
from typing import Any

from .runlog import RunLog
from .textio import write_json_atomic


def _model_dir_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name.replace(":", "_"))


def write_llmwc_layout(log: RunLog) -> None:
    m = log.manifest
    model = m.model
    name = str(model.get("model") or model.get("spec", "model")).split(":", 1)[-1]
    api_base = model.get("base_url") or (model.get("base_urls") or [None])[0]
    overall = log.results.overall if log.results else {}
    n_scored = int(overall.get("n_scored", 0))
    correct = sum(1 for s in log.samples if s.score == 1.0)
    request_params: dict[str, Any] = {k: v for k, v in m.generation.items() if k != "stop" or v}
    dataset_path = m.dataset.get("source") or m.dataset.get("path")
    run: dict[str, Any] = {
        "benchmark": {
            "name": m.dataset.get("name"),
            "output_dir": str(log.path),
            "seed": m.choice_order_seed,
            "limit_subjects": None,
            "limit_per_subject": m.dataset.get("limit_per_category"),
            "dataset_path": dataset_path,
            "prompt_kind": m.prompt_kind,
            "strict_parsing": False,
        },
        "request_defaults": request_params,
        "models": [{"name": name, "api_base": api_base, "api_key": None, "api_key_env": model.get("api_key_env")}],
        "started_at": m.started_at,
    }
    summary = {
        "accuracy": overall.get("accuracy"),
        "correct": correct,
        "incorrect": n_scored - correct,
        "total": len(log.samples),
        "errors": overall.get("n_errors", 0),
        "model": name,
        "api_base": api_base,
        "request_params": request_params,
        "seed": m.choice_order_seed,
        "dataset_path": dataset_path,
        "strict_parsing": False,
    }
    write_json_atomic(log.path / "run.json", run)
    write_json_atomic(log.path / "models" / _model_dir_name(name) / "summary.json", summary)
