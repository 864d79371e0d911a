"""How the report names runs: the facets that tell two runs apart, and a title that says what is compared.

Two runs of one model on one dataset used to read identically ("hf:out/demo/tiny · mmlu-pro" twice); each
run now carries its mode, prompt, settings and run id, and labels that would collide are extended with the
first facets that differ.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..core.model import GenerationSpec
from ..log.setting import label_parts, run_setting
from .data import RunSummary


@dataclass(frozen=True)
class Facet:
    """One fact about a run (`mode`, `prompt`, `settings`, `judge`, `run`) as the report prints it."""

    name: str
    value: str


def _num(x: Any) -> str:
    return f"{x:g}" if isinstance(x, (int, float)) and not isinstance(x, bool) else str(x)


def settings_text(generation: GenerationSpec | None, epochs: int) -> str:
    """The sampling settings that change results, shortest form: "T=0.7 · top_p=0.9 · 512 tok · 4 epochs"."""
    parts = []
    g = generation or GenerationSpec(temperature=None)  # none recorded: no sampling setting to show
    if g.temperature is not None:
        parts.append(f"T={_num(g.temperature)}")
    if g.top_p is not None:
        parts.append(f"top_p={_num(g.top_p)}")
    if g.max_tokens is not None:
        parts.append(f"{_num(g.max_tokens)} tok")
    if g.seed is not None:
        parts.append(f"seed {_num(g.seed)}")
    if epochs > 1:
        parts.append(f"{epochs} epochs")
    return " · ".join(parts)


def facets(r: RunSummary) -> list[Facet]:
    """What produced the run, in the order a reader tells runs apart by: mode, prompt (its kind, shots, format,
    few-shot pool), settings, scoring (answer rule, policies), judge, id — the parts of its setting label
    (`proctor.log.setting`), so two runs the comparability rule sets apart never have the same card."""
    m = r.log.manifest
    parts = label_parts(run_setting(m))
    out = [Facet("mode", parts["mode"][0]), Facet("prompt", " · ".join(parts["prompt"]))]
    generation = m.generation if m.spec is None else (m.spec.generation if parts["mode"] == ["generate"] else None)
    if (parts["mode"] != ["logprob"] or generation) and (text := settings_text(generation, m.epochs)):
        out.append(Facet("settings", text))
    if parts["scoring"]:
        out.append(Facet("scoring", " · ".join(parts["scoring"])))
    if parts["judge"]:
        out.append(Facet("judge", " · ".join(parts["judge"])))
    if r.partial is not None:
        out.append(Facet("partial", f"{r.partial} (stopped early by --stop-when-decided)"))
    out.append(Facet("run", m.run_id))
    return out


def differing(runs: Sequence[RunSummary]) -> set[str]:
    """The facet names whose values are not all the same across `runs` (a facet one run lacks differs)."""
    rows = [{f.name: f.value for f in facets(r)} for r in runs]
    names = {n for row in rows for n in row}
    return {n for n in names if len({row.get(n, "") for row in rows}) > 1}


def run_labels(runs: Sequence[RunSummary]) -> list[str]:
    """One label per run, unique: "model · dataset", extended by the facets that differ among the runs sharing
    it (mode, then prompt, settings, judge), and by the run id only when nothing else tells them apart."""
    base = [r.label for r in runs]
    counts = Counter(base)
    out = []
    for r, label in zip(runs, base):
        if counts[label] == 1:
            out.append(label)
            continue
        peers = [p for p, b in zip(runs, base) if b == label]
        diff = differing(peers) - {"run", "model", "dataset", "partial"}  # a partial run's label carries its mark
        extra = [f.value for f in facets(r) if f.name in diff]
        out.append(" · ".join([label, *extra]))
    counts = Counter(out)
    return [f"{lab} · {r.log.manifest.run_id}" if counts[lab] > 1 else lab for r, lab in zip(runs, out)]


def title(runs: Sequence[RunSummary]) -> str:
    """The report's heading: what is compared, and never "N runs compared" across different datasets."""
    models = list(dict.fromkeys(r.model for r in runs))
    datasets = list(dict.fromkeys(r.dataset for r in runs))
    if len(runs) == 1:
        return f"{runs[0].model} on {runs[0].dataset}"
    if len(datasets) == 1:
        who = models[0] if len(models) == 1 else f"{len(models)} models"
        return f"{len(runs)} runs of {who} compared on {datasets[0]}"
    if len(models) == 1:
        return f"{models[0]} on {len(datasets)} datasets: {', '.join(datasets)}"
    return f"{len(runs)} runs: {len(models)} models on {len(datasets)} datasets ({', '.join(datasets)})"
