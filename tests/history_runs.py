"""Synthetic run directories with known per-item scores, written with proctor.log.runlog (history tests)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from proctor.core.results import Results
from proctor.log.runlog import SAMPLES, Manifest, Outcome, Sample, write_manifest, write_results


def _metrics(scores: list[float], n_errors: int = 0) -> dict[str, Any]:
    n = len(scores)
    acc = sum(scores) / n if n else float("nan")
    z = 1.959964
    if n:
        centre = (acc + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(acc * (1 - acc) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    else:
        centre = half = float("nan")
    return {"n": n + n_errors, "n_scored": n, "n_errors": n_errors, "accuracy": acc,
            "ci_low": centre - half, "ci_high": centre + half, "ci_method": "wilson"}


def write_run(
    root: Path,
    run_id: str,
    model: str,
    scores: Mapping[str, float | list[float] | None],
    *,
    dataset: str = "synth",
    revision: str = "rev1",
    content_hash: str = "hash1",
    prompt_kind: str = "zero_shot",
    template_hash: str = "tmpl1",
    extractor_version: str = "1",
    started_at: str = "2025-01-01T00:00:00+00:00",
    category: Callable[[str], str] = lambda item: "law" if int(item.split("-")[1]) % 2 else "math",
    modality: str = "choiceof4",
    mode: str = "generate",
    generation: dict[str, Any] | None = None,
    epochs: int = 1,
) -> Path:
    """One run: `scores[item]` is a score, a list of per-epoch scores, or None (an errored sample)."""
    d = root / run_id
    d.mkdir(parents=True)
    write_manifest(d, Manifest(
        run_id=run_id, proctor_version="0.1.0", mode=mode, started_at=started_at, generation=generation or {},
        epochs=epochs,
        dataset={"name": dataset, "revision": revision, "content_hash": content_hash},
        model={"spec": model}, prompt_kind=prompt_kind, prompt_template_hash=template_hash,
        extractor_version=extractor_version,
    ))
    by_cat: dict[str, list[float]] = {}
    overall: list[float] = []
    n_errors = 0
    lines: list[str] = []
    for item, value in scores.items():
        epochs = value if isinstance(value, list) else [value]
        for epoch, s in enumerate(epochs):
            if s is None:
                outcome, n_errors = Outcome.ERROR, n_errors + 1
            else:
                outcome = Outcome.CORRECT if s == 1 else Outcome.WRONG if s == 0 else Outcome.PARTIAL
                overall.append(s)
                by_cat.setdefault(category(item), []).append(s)
            lines.append(Sample(
                sample_id=f"{item}#{epoch}", item_id=item, epoch=epoch, dataset=dataset, category=category(item),
                modality=modality, score=s, outcome=outcome, error="boom" if s is None else None,
            ).model_dump_json() + "\n")
    (d / SAMPLES).write_text("".join(lines), encoding="utf-8")  # append_samples' format, without an fsync per line
    write_results(d, Results.model_validate({
        "overall": _metrics(overall, n_errors),
        "by_category": {c: _metrics(v) for c, v in sorted(by_cat.items())},
        "by_modality": {modality: _metrics(overall)},
    }))
    return d


def items(n: int) -> list[str]:
    return [f"q-{i:03d}" for i in range(n)]


def binary(n: int, correct: set[int] | range) -> dict[str, float | list[float] | None]:
    """n items, 1.0 for the indices in `correct`, else 0.0."""
    return {item: 1.0 if i in correct else 0.0 for i, item in enumerate(items(n))}
